"""The branch-free 13a/none scanner (``tokenize_flat``) at the edges of its fast path.

``_scan_flat`` decides token boundaries from a window of four byte classes and
hands a segment back (-1) when it holds a 13a trigger, a ``.``/``,`` after a
``.``/``,``, or a lead byte of Unicode whitespace.  These tests hold it against
the branchy scanner it replaces (``split_tokens``) byte for byte, check that it
stays inside its segment and its slots, that plain text does take the fast path,
and compare whole columns with sacrebleu's tokenizers.
"""

from __future__ import annotations

import numpy as np
import pytest
from testkit.text import scan_between, assert_same_slots
from hypothesis import example, given, settings
from hypothesis import strategies as st

from fastbleu._kernels.text.tokenize import tokens_char
from fastbleu._kernels.text.tokenize_13a import CLASS_13A_RAW, CLASS_SPLIT, split_tokens
from fastbleu._kernels.text.tokenize_flat import _scan_char_flat, _scan_flat
from testkit.text import assert_same_tokens

CLASSES = {"13a": CLASS_13A_RAW, "none": CLASS_SPLIT}

#: What the fast path handles: digits next to '.', ',' and '-', rule-1 punctuation,
#: ASCII whitespace, non-ASCII letters, and E2/C2/E3 lead bytes that are not whitespace.
PLAIN = ["1", "9", "0", ".", ",", "-", "a", "Z", "x1", "1x", "(", "!", "'", '"', "/", "$", " ",
         " ", "\t", "é", "ß", "“", "—", "…", "«", "»", "€", "中", "、", "1.5", "1,5", "5-",
         "-5", "a.b", "x" * 70, "1" * 40]
#: What sends a segment back to the branchy scanner (or may): triggers, '.'/',' runs,
#: Unicode whitespace, and a lone lead byte at the very end (cut-off UTF-8 is not
#: possible from str, but an Arrow column may hold it).
RARE = ["<", "&", "\n", "..", ".,", ",,", "1..2", "\u00a0", "\u0085", "\u2009", "\u3000",
        "\u1680", "\u2028", "\u205f"]

plain_text = st.lists(st.sampled_from(PLAIN), max_size=30).map("".join)
any_text = st.lists(st.sampled_from(PLAIN + RARE), max_size=30).map("".join)






def scan_both(raw: bytes, kind: str):
    """``_scan_flat`` and ``split_tokens`` on ``raw`` between digits and dots."""
    return scan_between((_scan_flat, split_tokens), raw, b"9.", b"9", CLASSES[kind])


@settings(max_examples=300, deadline=None)
@given(text=any_text, kind=st.sampled_from(sorted(CLASSES)))
@example(text="", kind="13a")
@example(text="   ", kind="13a")
@example(text="1-", kind="13a")
@example(text="-1", kind="13a")
@example(text="1-x", kind="13a")
@example(text=",5", kind="13a")
@example(text="5,", kind="13a")
@example(text="x" * 500, kind="13a")
@example(text=". , -", kind="13a")
def test_flat_scanner_equals_branchy_scanner(text, kind):
    raw = text.encode()
    results = scan_both(raw, kind)
    assert_same_slots(results, len(raw))
    (flat, _), (branchy, _) = results
    if branchy < 0:  # a 13a trigger: the caller preprocesses, and so must the fast path
        assert flat < 0


@settings(max_examples=200, deadline=None)
@given(text=plain_text, kind=st.sampled_from(sorted(CLASSES)))
def test_plain_text_takes_the_fast_path(text, kind):
    if ".." in text or ".," in text or ",." in text or ",," in text:
        return  # rule 2 depends on the whole run: handed back by design
    raw = text.encode()
    (flat, _), (branchy, _) = scan_both(raw, kind)
    assert flat == branchy >= 0


@pytest.mark.parametrize("raw", [b"a\xe2", b"a\xe2\x80", b"\xc2", b"a \xe2\x80 b", b"\xe2.9",
                                 b"\xc2\xa0", b"1\xe2\x80\x891"])
@pytest.mark.parametrize("kind", sorted(CLASSES))
def test_broken_or_space_code_points_are_handed_back(raw, kind):
    (flat, _), _ = scan_both(raw, kind)
    assert flat < 0


@settings(max_examples=60, deadline=None)
@given(lines=st.lists(any_text, min_size=1, max_size=40), kind=st.sampled_from(sorted(CLASSES)))
def test_columns_match_sacrebleu(lines, kind):
    # Many segments in one column: the stores a segment does not count must not
    # overwrite its neighbours' hashes, whichever scanner each segment takes.
    assert_same_tokens(lines, kind, False)


CHAR_TEXT = st.lists(st.sampled_from(PLAIN + RARE + ["😀", "𝔘", "ﬁ", "\u200b", "ä", "\r"]),
                     max_size=30).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=CHAR_TEXT)
@example(text="")
@example(text=" a b ")
@example(text="中文 \u3000字")
def test_flat_char_scanner_equals_branchy_char_scanner(text):
    """``_scan_char_flat`` against ``tokens_char``, the per-code-point scanner it replaces,
    inside a buffer whose neighbouring bytes are letters."""
    raw = text.encode()
    results = scan_between((_scan_char_flat, tokens_char), raw, b"ab", b"c")
    assert_same_slots(results, len(raw))
    (flat, _), _ = results
    has_space = any(c.isspace() and ord(c) > 127 for c in text)
    assert (flat < 0) == has_space  # handed back exactly for Unicode whitespace
    if flat >= 0:
        assert flat == len("".join(text.split()))


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(CHAR_TEXT, min_size=1, max_size=40))
def test_char_columns_match_sacrebleu(lines):
    assert_same_tokens(lines, "char", False)


@pytest.mark.parametrize("kind", ["13a", "none", "char", "intl", "zh"])
def test_whitespace_at_the_end_of_a_segment(kind):
    # The flat scanners of 13a, none and char read a segment up to its last byte, not up
    # to str.rstrip()'s end: trailing ASCII whitespace must make no token, and trailing
    # Unicode whitespace (or 13a's "-\n") must reach the branchy scanners rstripped.
    # intl and zh skip the strip when the last byte is printable ASCII: "1." must keep
    # its "." unseparated however much whitespace follows it.
    from testkit.text import WHITESPACE

    lines = [body + space * repeat for body in ("a b.", "1-", "x-\n", "", "1.", "中.", "1,")
             for space in WHITESPACE for repeat in (1, 2)]
    assert_same_tokens(lines, kind, False)
