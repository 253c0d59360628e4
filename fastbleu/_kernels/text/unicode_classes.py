"""Code-point role tables for the ``intl`` and ``zh`` tokenizers.

The two tokenizers decide everything from one small "role" per code point,
looked up in a ``uint8`` table with one entry for each of the 0x110000 code
points (surrogates included: Python text may hold lone surrogates, which
fastbleu stores in UTF-8's three-byte form).  The roles:

``ROLE_GLUE``
    stays inside a token and is not a number;
``ROLE_NUMBER``
    stays inside a token and is a number for the punctuation rules
    (``intl``: Unicode category N, ``\\p{N}``; ``zh``: ASCII ``0-9``);
``ROLE_SPACE``
    Python whitespace (``str.isspace()``, what ``str.split()`` uses);
``ROLE_ISOLATE``
    always a token of its own (``intl``: symbols, ``\\p{S}``; ``zh``: the
    characters its range table calls Chinese and 13a's rule-1 punctuation);
``ROLE_PUNCT``
    a token of its own unless numbers hold it in place (``intl``:
    punctuation, ``\\p{P}``; ``zh``: ``.`` and ``,``);
``ROLE_DASH``
    ``zh`` only: ``-``, a token of its own after an ASCII digit.

**intl.** sacrebleu runs its ``intl`` rules with the ``regex`` module, whose
Unicode database may be newer than Python's ``unicodedata``.  The table is
therefore derived from the installed ``regex`` itself, over every code
point, never written by hand; :func:`regex_unicode_version` says which
Unicode version that is.  Deriving takes 0.4-0.8 s, so the table is kept
(1.1 MB, keyed by ``regex``'s version) in the folder of fastbleu's numba
cache (:func:`fastbleu._kernels.cache.cache_dir`: ``$NUMBA_CACHE_DIR/...``
or ``~/.cache/fastbleu/numba/...``, never inside the package); when no
folder can be written, it is derived in every process.  The file carries a
SHA-256 of the regex version and the table, and its Latin-1 part must equal
a fresh derivation: a damaged or edited file is derived again and replaced.

**zh.** sacrebleu's ``zh`` tokenizer tests ``start <= ch <= end`` on a
table of string pairs.  Three of its pairs are written with five hex digits
after ``\\u`` (``'\\u20000'``, ``'\\u2a6d6'``, ``'\\u2f800'``, ``'\\u2fa1d'``),
which Python reads as a four-digit character followed by a digit: the pair
meant for CJK Extension B (U+20000-U+2A6D6) compares as U+2001-U+2A6D, and
the pair meant for the Compatibility Supplement as U+2F81-U+2FA1.  So
sacrebleu spaces out general punctuation, arrows, mathematical operators,
dingbats ... (everything in U+2001-U+2A6D) as if it were Chinese, and no
character beyond the BMP at all.  :data:`ZH_RANGES` is that effective
behaviour, and a test compares it with sacrebleu over all code points.
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache
from pathlib import Path

import numpy as np

from .. import cache

ROLE_GLUE = 0
ROLE_NUMBER = 1
ROLE_SPACE = 2
ROLE_ISOLATE = 3
ROLE_PUNCT = 4
ROLE_DASH = 5

N_CODE_POINTS = 0x110000

#: Python's ``str.isspace()`` code points (checked against Python by a test).
PYTHON_WHITESPACE = (*range(0x09, 0x0E), *range(0x1C, 0x21), 0x85, 0xA0, 0x1680,
                     *range(0x2000, 0x200B), 0x2028, 0x2029, 0x202F, 0x205F, 0x3000)

#: The code points sacrebleu's ``zh`` tokenizer treats as Chinese, as its range
#: checks actually behave (inclusive ranges; see the module docstring).
ZH_RANGES = (
    (0x2001, 0x2A6D),  # written as U+20000-U+2A6D6 (CJK Extension B)
    (0x2E80, 0x2EFF), (0x2F00, 0x2FDF), (0x2FF0, 0x2FFF),  # the written U+2F800-U+2FA1D
    (0x3000, 0x303F), (0x3100, 0x312F), (0x31A0, 0x31BF), (0x31C0, 0x31EF),  # falls in here
    (0x3200, 0x32FF), (0x3300, 0x33FF), (0x3400, 0x4DB5), (0x4E00, 0x9FBB),
    (0xF900, 0xFA2D), (0xFA30, 0xFA6A), (0xFA70, 0xFAD9), (0xFE10, 0xFE1F),
    (0xFE30, 0xFE4F), (0xFF00, 0xFFEF),
)

# 13a's rule 1 (``TokenizerRegexp``): ASCII characters that become tokens of their own.
_RULE1_ASCII = "{|}~[\\]^_`!\"#$%&()*+:;<=>?@/"

#: Assigned characters (all but Cc, Cn, Co, Cs) per Unicode version, to name
#: the version of ``regex``'s database.
_CHARACTERS_PER_VERSION = {144697: "14.0", 149186: "15.0", 149813: "15.1", 154998: "16.0",
                           159801: "17.0"}


def _every_code_point() -> str:
    return "".join(map(chr, range(N_CODE_POINTS)))


def _positions(pattern, text: str) -> np.ndarray:
    return np.fromiter((m.start() for m in pattern.finditer(text)), dtype=np.int64)


_TABLE_MAGIC = b"fastbleu intl roles 1\n"


def _cache_file(regex_version: str) -> Path | None:
    folder = cache.cache_dir()
    if folder is None:
        return None
    return folder / f"intl-roles-regex-{re.sub(r'[^0-9A-Za-z._-]', '_', regex_version)}.bin"


def _digest(regex_version: str, table: bytes) -> str:
    return hashlib.sha256(b"regex " + regex_version.encode() + b"\n" + table).hexdigest()


def _read_table(path: Path, regex_version: str) -> np.ndarray | None:
    """The table stored at ``path`` if it is intact and plausible, else None."""
    header = _TABLE_MAGIC + f"regex {regex_version}\nsha256 ".encode()
    start = len(header) + 64 + 1
    try:  # a regular file of ours only: never a FIFO (which would block for good)
        data = cache.read_regular_file(path, limit=start + N_CODE_POINTS)
    except OSError:
        return None
    if data is None or not data.startswith(header) or len(data) != start + N_CODE_POINTS:
        return None
    table = data[start:]
    if data[len(header):start] != _digest(regex_version, table).encode() + b"\n":
        return None
    roles = np.frombuffer(table, dtype=np.uint8)
    # The checksum catches damage; these catch a hand-made file with a matching one.
    latin1 = np.arange(256)
    if (roles.max() > ROLE_PUNCT or (roles[list(PYTHON_WHITESPACE)] != ROLE_SPACE).any()
            or not np.array_equal(roles[latin1], _derive(latin1))):
        return None
    return roles


def _write_table(path: Path, regex_version: str, roles: np.ndarray) -> None:
    """Write the table atomically (a temporary file renamed over the old one)."""
    table = roles.tobytes()
    content = (_TABLE_MAGIC + f"regex {regex_version}\nsha256 ".encode()
               + _digest(regex_version, table).encode() + b"\n" + table)
    cache.write_whole(path, content, mode=0o644)


@lru_cache(maxsize=1)
def intl_roles() -> np.ndarray:
    """The ``intl`` role of every code point, from the installed ``regex`` module.

    Read from the cache file when there is an intact one for this ``regex``
    version, else derived and written there.

    Raises
    ------
    ImportError
        If ``regex`` is not installed.
    """
    try:
        import regex
    except ImportError:
        raise ImportError("the 'intl' tokenizer needs the 'regex' package "
                          "(pip install regex), whose Unicode classes sacrebleu uses") from None
    path = _cache_file(regex.__version__)
    if path is not None:
        roles = _read_table(path, regex.__version__)
        if roles is not None:
            roles.setflags(write=False)
            return roles
    roles = derive_intl_roles()
    if path is not None:
        try:
            _write_table(path, regex.__version__, roles)
        except OSError:
            pass  # not writable after all: derive it again next time
    return roles


def _derive(code_points: np.ndarray) -> np.ndarray:
    """The ``intl`` roles of the given code points, from ``regex``."""
    import regex

    text = "".join(map(chr, code_points.tolist()))
    # One pass finds the few thousand candidates; each class is then decided on them alone.
    candidates = _positions(regex.compile(r"[\p{N}\p{P}\p{S}]"), text)
    sample = "".join(text[c] for c in candidates.tolist())
    roles = np.full(len(code_points), ROLE_GLUE, dtype=np.uint8)
    for role, pattern in ((ROLE_NUMBER, r"\p{N}"), (ROLE_PUNCT, r"\p{P}"),
                          (ROLE_ISOLATE, r"\p{S}")):
        roles[candidates[_positions(regex.compile(pattern), sample)]] = role
    roles[np.isin(code_points, PYTHON_WHITESPACE)] = ROLE_SPACE
    return roles


def derive_intl_roles() -> np.ndarray:
    """The ``intl`` roles, derived from ``regex`` over every code point (no cache)."""
    roles = _derive(np.arange(N_CODE_POINTS))
    roles.setflags(write=False)
    return roles


@lru_cache(maxsize=1)
def zh_roles() -> np.ndarray:
    """The ``zh`` role of every code point (sacrebleu's ranges as they behave, then 13a)."""
    roles = np.full(N_CODE_POINTS, ROLE_GLUE, dtype=np.uint8)
    for first, last in ZH_RANGES:
        roles[first:last + 1] = ROLE_ISOLATE
    roles[[ord(c) for c in _RULE1_ASCII]] = ROLE_ISOLATE
    roles[ord("0"):ord("9") + 1] = ROLE_NUMBER
    roles[[ord("."), ord(",")]] = ROLE_PUNCT
    roles[ord("-")] = ROLE_DASH
    # Whitespace inside the ranges (U+2001-U+200A, U+3000 ...) is spaced out and
    # then split away: it stays whitespace.
    roles[list(PYTHON_WHITESPACE)] = ROLE_SPACE
    roles.setflags(write=False)
    return roles


@lru_cache(maxsize=1)
def regex_unicode_version() -> str:
    """The Unicode version of the installed ``regex`` module's database.

    ``regex`` does not say it, so it is recognised by the number of assigned
    characters it knows (``'17.0'`` for regex 2026.5.9).  A count above the
    newest version listed here (a ``regex`` released after this table) gives
    ``'newer than 17.0 (N assigned characters)'``; the classes still come
    from that ``regex``, so ``intl`` keeps matching sacrebleu's tokens.
    """
    import regex

    count = len(regex.findall(r"[^\p{Cc}\p{Cn}\p{Co}\p{Cs}]", _every_code_point()))
    if count in _CHARACTERS_PER_VERSION:
        return _CHARACTERS_PER_VERSION[count]
    newest = max(_CHARACTERS_PER_VERSION)
    if count > newest:
        return f"newer than {_CHARACTERS_PER_VERSION[newest]} ({count} assigned characters)"
    return f"unknown ({count} assigned characters)"
