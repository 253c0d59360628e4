"""The branch-free intl/zh scanner (``tokenize_flat_unicode``) at the edges of its fast path.

``_scan_unicode_flat`` decides token boundaries from a window of four code-point
roles and hands a segment back (-1) when a ``PUNCT`` stands between a ``PUNCT``
and a ``NUMBER`` (the one place where ``intl``'s pass 1 depends on a whole run of
marks) or when a code point runs past the segment's end.  These tests hold it
against the branchy scanner it replaces (``_split_unicode``) hash for hash,
check that it stays inside its segment and its slots, that it hands back exactly
the segments it should, and compare columns with sacrebleu's ``intl`` and ``zh``.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fastbleu._kernels.text.tokenize_flat_unicode import _scan_unicode_flat
from fastbleu._kernels.text.tokenize_unicode import _split_unicode
from fastbleu._kernels.text.unicode_classes import (ROLE_NUMBER, ROLE_PUNCT, intl_roles, zh_roles)
from testkit.text import SURROGATES, WHITESPACE, assert_same_tokens
from testkit.text import assert_same_slots, scan_between

ROLES = {"intl": intl_roles, "zh": zh_roles}

#: Every role of both tables, in one, two, three and four bytes: letters, digits of
#: several scripts, punctuation and symbols (ASCII and not), zh's Chinese ranges and
#: its '-', ASCII and Unicode whitespace, astral characters, combining marks.
PIECES = ["a", "Z", "é", "ß", "1", "9", "٣", "१", "²", "½", "\U0001D7D8", ".", ",", "-", "!",
          "(", ")", '"', "'", "/", "$", "&", "<", "«", "»", "“", "”", "—", "…", "、", "。",
          "，", "¿", "€", "©", "→", "∑", "\U0001F600", "\U00020000", "中", "文", "ア",
          "\u0301", "\u200d", " ", "\t", "\n", "\u00a0", "\u2009", "\u3000", "\u2028",
          "1.5", "1,000.5", ".5", "5.", "a.b", "x" * 40]
SURROGATE_PIECES = ["\ud800", "\udfff", "\ud83d"]

text = st.lists(st.sampled_from(PIECES + SURROGATE_PIECES), max_size=25).map("".join)


def encode(line: str) -> bytes:
    return line.encode("utf-8", "surrogatepass")


def scan_both(raw: bytes, name: str):
    """``_scan_unicode_flat`` and ``_split_unicode`` on ``raw`` between a digit and marks."""
    return scan_between((_scan_unicode_flat, _split_unicode), raw, b"9.,", b".9",
                        ROLES[name]())


def needs_fallback(line: str, name: str) -> bool:
    """Whether a PUNCT stands between a PUNCT and a NUMBER (code points, by the table)."""
    roles = ROLES[name]()
    seq = [int(roles[ord(c)]) for c in line]
    return any(seq[i - 1] == ROLE_PUNCT == seq[i] and seq[i + 1] == ROLE_NUMBER
               for i in range(1, len(seq) - 1))


def check(line: str, name: str) -> int:
    raw = encode(line)
    results = scan_both(raw, name)
    assert_same_slots(results, len(raw))
    flat = results[0][0]
    assert (flat < 0) == needs_fallback(line, name), (line, flat)
    return flat


@settings(max_examples=400, deadline=None)
@given(line=text, name=st.sampled_from(sorted(ROLES)))
@example(line="", name="intl")
@example(line="   ", name="zh")
@example(line=".", name="intl")
@example(line="..", name="intl")
@example(line="x..5", name="intl")  # the fallback: pass 1's parity decides the second '.'
@example(line="1..5", name="intl")
@example(line="...5", name="zh")
@example(line="“.5", name="intl")
@example(line="a.”", name="intl")
@example(line="5.", name="zh")
@example(line=".5", name="zh")
@example(line="1-", name="zh")
@example(line="-1", name="zh")
@example(line="中.5", name="zh")
@example(line="\U0001F600.1", name="intl")
def test_flat_scanner_equals_branchy_scanner(line, name):
    check(line, name)


@pytest.mark.parametrize("name, alphabet", [
    # one of every intl role (GLUE, NUMBER, SPACE, ISOLATE, PUNCT), ASCII and not
    ("intl", ["a", "1", " ", "$", ".", "٣", "«"]),
    # one of every zh role (GLUE, NUMBER, SPACE, ISOLATE, PUNCT, DASH)
    ("zh", ["a", "1", " ", "!", ".", "-", "中"]),
])
def test_every_short_sequence_of_roles(name, alphabet):
    """All strings of up to five characters over one character of each role: every
    window of four roles and the segment's edges, against ``_split_unicode``."""
    fallbacks = 0
    for size in range(6):
        for chars in itertools.product(alphabet, repeat=size):
            fallbacks += check("".join(chars), name) < 0
    assert fallbacks > 0  # the hand-back is exercised, and check() found it expected


@pytest.mark.parametrize("name", sorted(ROLES))
@pytest.mark.parametrize("line", ["a中", "a€", "é", "\U0001F600", "x\U00020000"])
def test_a_code_point_cut_off_at_the_end_is_handed_back(name, line):
    raw = encode(line)
    buf = np.frombuffer(raw + b"abc", dtype=np.uint8).copy()
    out = np.full(len(raw) + 4, 7, dtype=np.uint64)
    assert _scan_unicode_flat(buf, 0, len(raw) - 1, out, 0, ROLES[name]()) == -1
    assert (out[len(raw) - 1:] == 7).all()


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(st.one_of(text, st.sampled_from(WHITESPACE + SURROGATES + [""])),
                      min_size=1, max_size=30),
       name=st.sampled_from(sorted(ROLES)), lowercase=st.booleans())
@example(lines=["x..5", "1,000.5", " .5", "“5”", "（中文）。", "a -1", "\u3000.5\u3000"],
         name="intl", lowercase=False)
@example(lines=["x..5", "1,000.5", " .5", "“5”", "（中文）。", "a -1", "\u3000.5\u3000"],
         name="zh", lowercase=False)
def test_columns_match_sacrebleu(lines, name, lowercase):
    """The whole path (rstrip, zh's lstrip, fast scanner or its fallback) against sacrebleu."""
    assert_same_tokens(lines, name, lowercase)
