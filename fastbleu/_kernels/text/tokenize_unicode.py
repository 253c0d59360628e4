"""UTF-8 decoding, Python's whitespace, and the ``intl`` and ``zh`` tokenizers.

The helpers here read one UTF-8 code point at a time from a ``uint8`` buffer
(its length from the lead byte, its code point, its role) and decide
whether it is Python whitespace; every tokenizer of
:mod:`fastbleu._kernels.tokenize` uses them.

Whitespace is Python's ``str.isspace()`` set, which ``str.split()`` and
``str.rstrip()`` use: U+0009-U+000D, U+001C-U+0020, U+0085, U+00A0, U+1680,
U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 (a test derives it
from Python).

``intl`` and ``zh`` are decided per code point from a role table (see
:mod:`fastbleu._kernels.unicode_classes`) by :func:`_split_unicode`:

    ``intl`` (``TokenizerV14International``) applies, with the ``regex``
    module, ``(\\P{N})(\\p{P})`` -> ``\\1 \\2 ``, then ``(\\p{P})(\\P{N})``
    -> `` \\1 \\2``, then spaces around every ``\\p{S}``, then splits.  Only
    spaces are inserted, and working through the non-overlapping matches
    gives: a symbol is a token of its own; a punctuation mark is one if
    (pass 1) it has a left neighbour that is not a number and is not itself
    a mark matched by pass 1, or (pass 2) it has a right neighbour that is
    not a number.  (A mark that pass 2 could skip because the previous
    match consumed it always matched pass 1 already.)  There is no padding,
    so the first character has no left neighbour and the last no right one.

    ``zh`` (``TokenizerZh``) strips the line, spaces out every character of
    its range table and applies 13a's four rules without 13a's replacements
    and without padding: the same boundary rules as ``13a`` with the
    spaced-out characters acting like rule-1 punctuation, except at the
    ends of the line (a ``.``/``,`` first on the line cannot match rule 2,
    one last on the line cannot match rule 3).
"""

import numpy as np
from numba import njit

from .hashing import FNV_OFFSET, finish, fnv_step
from .unicode_classes import ROLE_DASH, ROLE_NUMBER, ROLE_PUNCT, ROLE_SPACE


@njit(cache=True, nogil=True)
def utf8_length(lead):
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


@njit(cache=True, nogil=True)
def is_space_at(buf, j, length):
    """Whether the ``length``-byte code point at ``buf[j]`` is Python whitespace."""
    b0 = buf[np.uint64(j)]
    if length == 1:
        return (0x09 <= b0 <= 0x0D) or (0x1C <= b0 <= 0x20)
    if length == 2:
        # U+0085, U+00A0
        return b0 == 0xC2 and (buf[np.uint64(j + 1)] == 0x85 or buf[np.uint64(j + 1)] == 0xA0)
    if length != 3:
        return False
    b1 = buf[np.uint64(j + 1)]
    b2 = buf[np.uint64(j + 2)]
    if b0 == 0xE2:
        if b1 == 0x80:
            # U+2000-U+200A, U+2028, U+2029, U+202F
            return b2 <= 0x8A or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF
        return b1 == 0x81 and b2 == 0x9F  # U+205F
    if b0 == 0xE1:
        return b1 == 0x9A and b2 == 0x80  # U+1680
    return b0 == 0xE3 and b1 == 0x80 and b2 == 0x80  # U+3000


@njit(cache=True, nogil=True)
def rstrip_end(buf, start, end):
    """End of ``buf[start:end]`` after ``str.rstrip()``."""
    while end > start:
        j = end - 1
        while j > start and (buf[np.uint64(j)] & 0xC0) == 0x80:
            j -= 1
        if not is_space_at(buf, j, end - j):
            break
        end = j
    return end


@njit(cache=True, nogil=True)
def _lstrip_start(buf, start, end):
    """Start of ``buf[start:end]`` after ``str.lstrip()``."""
    while start < end:
        length = utf8_length(buf[np.uint64(start)])
        if not is_space_at(buf, start, length):
            break
        start += length
    return start


@njit(cache=True, nogil=True)
def _code_point3(b0, b1, b2):
    """The code point (``uint64``) of the three-byte UTF-8 sequence ``b0 b1 b2``.

    Scalars, not the buffer: a helper taking an array costs numba a reference
    count at every call, and the flat ``intl``/``zh`` scanner calls this one
    for every CJK character.
    """
    return (((np.uint64(b0) & np.uint64(0x0F)) << np.uint64(12))
            | ((np.uint64(b1) & np.uint64(0x3F)) << np.uint64(6))
            | (np.uint64(b2) & np.uint64(0x3F)))


@njit(cache=True, nogil=True)
def _code_point(buf, j, length):
    """The code point of the ``length``-byte UTF-8 sequence at ``buf[j]``."""
    b0 = np.int64(buf[np.uint64(j)])
    if length == 1:
        return b0
    if length == 3:
        return np.int64(_code_point3(b0, buf[np.uint64(j + 1)], buf[np.uint64(j + 2)]))
    b1 = np.int64(buf[np.uint64(j + 1)]) & 0x3F
    if length == 2:
        return ((b0 & 0x1F) << 6) | b1
    b2 = np.int64(buf[np.uint64(j + 2)]) & 0x3F
    return ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | (np.int64(buf[np.uint64(j + 3)]) & 0x3F)


@njit(cache=True, nogil=True)
def _role_at(buf, j, length, roles):
    cp = _code_point(buf, j, length)
    return roles[cp] if cp < roles.size else np.uint8(0)


@njit(cache=True, nogil=True)
def _split_unicode(buf, start, end, out, pos, roles):
    """``intl`` or ``zh`` tokens of ``buf[start:end]`` at ``out[pos:]``; their number.

    ``roles`` (one ``uint8`` per code point) decides which of the two it is.
    """
    count = 0
    in_token = False
    h = FNV_OFFSET
    prev_number = False  # left neighbour is a number
    prev_matched = True  # left neighbour is a mark matched from the left (or there is none)
    j = start
    while j < end:
        b = buf[np.uint64(j)]
        length = 1 if b < 0x80 else utf8_length(b)
        role = roles[b] if b < 0x80 else _role_at(buf, j, length, roles)
        if role <= ROLE_NUMBER:  # inside a token
            if not in_token:
                h = FNV_OFFSET
                in_token = True
            for k in range(j, j + length):
                h = fnv_step(h, buf[np.uint64(k)])
            prev_number = role == ROLE_NUMBER
            prev_matched = False
            j += length
            continue
        if role == ROLE_SPACE:
            if in_token:
                out[np.uint64(pos + count)] = finish(h)
                count += 1
                in_token = False
            prev_number = False
            prev_matched = False
            j += length
            continue
        if role == ROLE_PUNCT:
            matched = not prev_number and not prev_matched
            isolated = matched
            if not matched:
                nxt = j + length
                if nxt < end:
                    nb = buf[np.uint64(nxt)]
                    nlength = 1 if nb < 0x80 else utf8_length(nb)
                    isolated = _role_at(buf, nxt, nlength, roles) != ROLE_NUMBER
            prev_matched = matched
        elif role == ROLE_DASH:
            isolated = prev_number
            prev_matched = False
        else:  # ROLE_ISOLATE
            isolated = True
            prev_matched = False
        prev_number = False
        if isolated:
            if in_token:
                out[np.uint64(pos + count)] = finish(h)
                count += 1
                in_token = False
            t = FNV_OFFSET
            for k in range(j, j + length):
                t = fnv_step(t, buf[np.uint64(k)])
            out[np.uint64(pos + count)] = finish(t)
            count += 1
        else:
            if not in_token:
                h = FNV_OFFSET
                in_token = True
            for k in range(j, j + length):
                h = fnv_step(h, buf[np.uint64(k)])
        j += length
    if in_token:
        out[np.uint64(pos + count)] = finish(h)
        count += 1
    return count
