"""TER's tokenizer: Tercom's normalization as sacrebleu 2.6's ``TercomTokenizer`` applies it.

By default TER only lowercases (unless case-sensitive) and splits on
whitespace, which the byte kernels do (the ``none`` kernel behind a
``tercom`` signature).  ``normalized`` and ``no_punct`` rewrite each line
with regular expressions, as Tercom's ``Normalizer.java`` does, so those run
in Python through :class:`~fastbleu.tokenizers.lines.LineTransform` (each
distinct line once), and the ``none`` kernel splits the result.  Lowercasing
happens first, on the whole column, as sacrebleu lowercases before it
normalizes.

The rules below are sacrebleu's, step for step and in its order; several
are odd (a rule that can never match once the line is padded with spaces,
kana patterns that only match a line made of nothing else) and are kept
because they decide which tokens TER compares.
"""

from __future__ import annotations

import re

from .._native.codes import TOKENIZE_NONE
from .base import Tokenizer
from .lines import LineTransform

# -- Western (general) normalization -----------------------------------------------------
_ENTITIES = (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">"))  # in this order
# ASCII punctuation set apart by spaces: everything in ' '..'/', ':'..'@', '['..'`' and
# '{'..'~' except the apostrophe, comma, hyphen and period (handled below).
_SPLIT_PUNCT = "".join(chr(c) for c in (*range(0x20, 0x30), *range(0x3A, 0x41),
                                        *range(0x5B, 0x61), *range(0x7B, 0x7F))
                       if chr(c) not in "',-.")
_WESTERN = (
    (re.compile(f"([{re.escape(_SPLIT_PUNCT)}])"), r" \1 "),
    (re.compile(r"'s "), r" 's "),       # possessives
    (re.compile(r"'s$"), r" 's"),
    (re.compile(r"([^0-9])([.,])"), r"\1 \2 "),  # period/comma not after a digit
    (re.compile(r"([.,])([^0-9])"), r" \1 \2"),  # ... nor before one
    (re.compile(r"([0-9])(-)"), r"\1 \2 "),      # a hyphen after a digit
)

# -- Asian (CJK) normalization -----------------------------------------------------------
_ASIAN_PUNCT = "([\u3001\u3002\u3008-\u3011\u3014-\u301f\uff61-\uff65\u30fb])"
_FULL_WIDTH_PUNCT = "([\uff0e\uff0c\uff1f\uff1a\uff1b\uff01\uff02\uff08\uff09])"


def _kana(low: str, high: str) -> re.Pattern:
    """sacrebleu's kana rule for the block ``low..high`` (it only fires on a line that is
    one run of that block, or that block's character followed by such a run)."""
    block = f"[{low}-{high}]"
    return re.compile(f"(^|^{block})({block}+)(?=$|^{block})")


_ASIAN = (
    (re.compile("([\u4e00-\u9fff\u3400-\u4dbf])"), r" \1 "),  # CJK ideographs, ext. A
    (re.compile("([\u31c0-\u31ef\u2e80-\u2eff])"), r" \1 "),  # strokes, radicals
    (re.compile("([\u3300-\u33ff\uf900-\ufaff\ufe30-\ufe4f])"), r" \1 "),  # compatibility
    (re.compile("([\u3200-\u3f22])"), r" \1 "),               # enclosed letters and on
    (_kana("\u3040", "\u309f"), r"\1 \2 "),                    # hiragana
    (_kana("\u30a0", "\u30ff"), r"\1 \2 "),                    # katakana
    (_kana("\u31f0", "\u31ff"), r"\1 \2 "),                    # katakana extensions
    (re.compile(_ASIAN_PUNCT), r" \1 "),
    (re.compile(_FULL_WIDTH_PUNCT), r" \1 "),
)

# -- punctuation removal -----------------------------------------------------------------
_PUNCT = re.compile(r"[.,?:;!\"()]")
_ASIAN_PUNCT_REMOVED = (re.compile(_ASIAN_PUNCT), re.compile(_FULL_WIDTH_PUNCT))


def _rewrite(line: str, rules) -> str:
    for pattern, replacement in rules:
        line = pattern.sub(replacement, line)
    return line


def tercom_line(line: str, normalized: bool, no_punct: bool, asian_support: bool) -> str:
    """One (right-stripped, already lowercased if need be) line as sacrebleu's
    ``TercomTokenizer`` leaves it: tokens joined by single spaces."""
    if not line:
        return ""
    if normalized:
        line = line.replace("\n-", "").replace("\n", " ")
        for entity, character in _ENTITIES:
            line = line.replace(entity, character)
        line = _rewrite(f" {line} ", _WESTERN)
        if asian_support:
            line = _rewrite(line, _ASIAN)
    if no_punct:
        line = _PUNCT.sub("", line)
        if asian_support:
            for pattern in _ASIAN_PUNCT_REMOVED:
                line = pattern.sub("", line)
    return " ".join(line.split())


def tercom_tokenizer(normalized: bool = False, no_punct: bool = False,
                     asian_support: bool = False, passes: int = 1) -> Tokenizer:
    """TER's tokenizer for these options (signature ``tercom``; lowercasing is the
    pipeline's, before it).

    Without ``normalized`` and ``no_punct`` it is the ``none`` kernel
    (``asian_support`` alone changes nothing, as in sacrebleu).  ``passes=2``
    is the tokenizer of references: sacrebleu's TER tokenizes a reference once
    when it caches the references and again when it splits it into words, and
    the normalization is not idempotent (``it's "`` becomes ``it 's "``).
    """
    if not (normalized or no_punct):
        return Tokenizer("tercom", "tercom", TOKENIZE_NONE)

    def tokenize_lines(lines: list[str]) -> list[str]:
        out = []
        for line in lines:
            for _ in range(passes):
                line = tercom_line(line.rstrip(), normalized, no_punct, asian_support)
            out.append(line)
        return out

    return Tokenizer("tercom", "tercom", TOKENIZE_NONE, LineTransform(tokenize_lines))
