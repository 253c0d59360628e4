"""Property-based differential tests: fastbleu against sacrebleu 2.6.

Every test draws adversarial text (the whole ASCII punctuation set, numbers
with ``.``/``,``/``-`` around them, HTML entities, ``<skipped>``, ``-\\n``,
every Unicode whitespace character and near-misses, non-Latin scripts,
combining marks, astral characters, lone surrogates, characters whose
lowercase changes length ...) and checks that fastbleu's numbers are
*identical* to sacrebleu's: tokens (compared as 64-bit token hashes),
per-segment statistics, corpus and sentence scores, every ``BLEUScore``
field, the printed score and the signature (apart from ``version``).

Run more examples while hunting for bugs::

    FASTBLEU_HYPOTHESIS_EXAMPLES=2000 python -m pytest tests/metrics/bleu/test_properties.py -x -q

The variable sets ``max_examples`` of the main corpus test (default 400); the
other tests scale with it.  These sizes run with ``-m slow`` (the ``_full`` twins,
issue 28); the quick run (``-m "not slow"``) runs each property at a fraction of them.
"""

from __future__ import annotations

import logging
import math
import os
import string

import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from sacrebleu.metrics import BLEU as SacreBLEU

import fastbleu
from fastbleu import BLEU as FastBLEU
from fastbleu._kernels.text.hashing import hash_bytes
from fastbleu.statistics.tokens import References, iter_statistics
from fastbleu.statistics.tokens import tokenize as fb_tokenize
from fastbleu.inputs.text import as_text_column
from fastbleu.tokenizers import get_tokenizer
from testkit.text import (NEAR_SPACE, TOKENIZERS, WHITESPACE, _ALL_OPTIONS, _DEFAULT_MAIN_EXAMPLES,
                          _same_float, assert_same_score, assert_same_statistics,
                          assert_same_tokens, check_everything, configs, corpora, examples,
                          fast_hashes, line, piece, sacre_statistics, sacre_tokens, token_hash,
                          token_report)
from testkit.marks import quick_and_full, slow

# sacrebleu warns on every sentence_score without effective_order.
for _name in ("sacrebleu", "fastbleu"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)

# -- settings ------------------------------------------------------------------------------







# -- the nasty alphabet --------------------------------------------------------------------

#: Every character Python's str.isspace() accepts (what str.split() and rstrip() use).
assert WHITESPACE == list("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680") + \
    [chr(c) for c in range(0x2000, 0x200B)] + list("\u2028\u2029\u202f\u205f\u3000")

#: Look like whitespace (or are invisible) but are not str.isspace().























# -- tokens: sacrebleu's strings vs fastbleu's hashes -------------------------------------
















# -- scores ----------------------------------------------------------------------------------


















# -- the main differential property ----------------------------------------------------------



@example(cfg=_ALL_OPTIONS,
         corpus=(["The cat&amp;lt;sat 1,000.5 -\non the mat.", "İ ΣΑΣ K"],
                 [["the cat<sat 1,000.5 on the mat .", None],
                  [None, "i̇ σας k"], ["", "İ ΣΑΣ K"]]),
         cached=True)
@example(cfg={"tokenize": "char", "lowercase": False, "smooth_method": "floor",
              "smooth_value": None, "effective_order": False, "max_ngram_order": 1},
         corpus=(["a\u3000b\u200bc 😀"], [["ab\u200bc"]]), cached=False)
@example(cfg={"tokenize": "none", "lowercase": False, "smooth_method": "exp",
              "smooth_value": None, "effective_order": False, "max_ngram_order": 4},
         corpus=(["", " \t"], [["", "x"], [None, ""]]), cached=False)
def _differential_corpus(cfg, corpus, cached):
    hyps, refs = corpus
    check_everything(cfg, hyps, refs, cached)


def _differential_corpus_at(size):
    drawn = given(cfg=configs, corpus=corpora(), cached=st.booleans())
    return examples(size)(drawn(_differential_corpus))


# 40 examples in the quick run, _DEFAULT_MAIN_EXAMPLES with -m slow (issue 28).
test_differential_corpus, test_differential_corpus_full = \
    quick_and_full(_differential_corpus_at, 40, _DEFAULT_MAIN_EXAMPLES)


# -- the formula alone, on random statistics ------------------------------------------------


@st.composite
def statistics_rows(draw, max_order: int):
    """A consistent row [hyp_len, ref_len, correct_1..N, total_1..N], small or huge."""
    scale = draw(st.sampled_from([10, 100, 10**4, 10**7, 10**11]))
    hyp_len = draw(st.integers(0, scale))
    ref_len = draw(st.one_of(st.integers(0, scale), st.just(hyp_len),
                             st.integers(max(hyp_len - 2, 0), hyp_len + 2)))
    segments = draw(st.integers(1, 1000))
    totals = [max(hyp_len - (n * segments if hyp_len > n * segments else n), 0)
              for n in range(max_order)]
    correct = []
    for total in totals:
        correct.append(draw(st.one_of(st.just(0), st.just(total), st.integers(0, total))))
    return [hyp_len, ref_len, *correct, *totals]


def _formula_on_random_statistics(cfg, data):
    """score/bp/precisions from statistics rows, one by one and vectorized, bit for bit."""
    from fastbleu.metrics.bleu.formula import BLEUFormula

    order = cfg["max_ngram_order"]
    rows = data.draw(st.lists(statistics_rows(order), min_size=1, max_size=20), "rows")
    sacre = SacreBLEU(**cfg)
    kwargs = dict(smooth_method=cfg["smooth_method"], smooth_value=cfg["smooth_value"],
                  effective_order=cfg["effective_order"], max_ngram_order=order)
    expected = []
    for row in rows:
        want = sacre._compute_score_from_stats(list(row))
        expected.append(want.score)
        got = FastBLEU.compute_bleu(row[2:2 + order], row[2 + order:], row[0], row[1], **kwargs)
        assert_same_score(got, want, f"compute_bleu{tuple(row)}")
    formula = BLEUFormula(order, cfg["smooth_method"], cfg["smooth_value"],
                          cfg["effective_order"])
    vector = formula.scores(formula.check_rows(np.array(rows, dtype=np.int64)))
    bad = [i for i in range(len(rows)) if not _same_float(float(vector[i]), expected[i])]
    assert not bad, [(rows[i], float(vector[i]), expected[i]) for i in bad[:3]]


def _formula_on_random_statistics_at(size):
    drawn = given(cfg=configs, data=st.data())
    return examples(size)(drawn(_formula_on_random_statistics))


# 100 examples in the quick run, 300 with -m slow (issue 28).
test_formula_on_random_statistics, test_formula_on_random_statistics_full = \
    quick_and_full(_formula_on_random_statistics_at, 100, 300)


# -- tokenizers --------------------------------------------------------------------------------


def _tokens_match_sacrebleu(lines, tokenize, lowercase):
    assert_same_tokens(lines, tokenize, lowercase)


def _tokens_match_sacrebleu_at(size):
    drawn = given(lines=st.lists(line, min_size=1, max_size=20),
                  tokenize=st.sampled_from(TOKENIZERS), lowercase=st.booleans())
    return examples(size)(drawn(_tokens_match_sacrebleu))


# 100 examples in the quick run, 1000 with -m slow (issue 28).
test_tokens_match_sacrebleu, test_tokens_match_sacrebleu_full = \
    quick_and_full(_tokens_match_sacrebleu_at, 100, 1000)


REGRESSION_13A = [
    # numbers and the .,- rules
    "a.,5", "..", "1..2", "1.5", "1,000", "3-4", "3--4", "1-2-3", "x.y", "...", "a...5", "5.,x",
    "U.S.A.", "$1,000.00", "(1.5)", "1.5.", ".5", ",5", "5,", "5.", "-5", "5-", ". 5", "5 .",
    "1.,2", "1,.2", ".,.,5", "a.5.b", "٣.٤", "１.５", "²-", "1²-", "1-a", "a-1", "1 -", "1.-",
    "1,-", "'5", "5'", "0.0.0", ",.,", "a.,.b",
    # entities, in str.replace order
    "&amp;lt;", "&amp;quot;", "&amp;amp;", "&quot;hi&quot;", "AT&amp;T", "&lt;skipped&gt;",
    "&amp;amp;lt;", "&&lt;;", "&quot", "&lt", "&AMP;", "&amp;&amp;", "a&b;c",
    # <skipped>, -\n and newlines
    "<skip<skipped>ped>", "<skipped>", "a<skipped>b", "a <skipped> b", "<<skipped>>",
    "a-\nb", "a-\n\nb", "a\n-b", "1-\n2", "a--\nb", "end-\n", "x -\n", "-\n", "-\n-\n1",
    "a-<skipped>\nb", "a\rb", "1-\r\n2", "<skipped>-\nb",
    # whitespace and its near-misses
    "a\x1cb", "a\x85b", "a\xa0b", "a\u200bb", "a\u3000b", "a\u2028b", "a\x0bb", "a\u180eb",
    "a\ufeffb", " ", "", "\t\n", "\u3000", "a\u2009.\u20095", "1.\u200a5",
    # scripts, case and astral characters
    "İ", "ΣΑΣ ΣΑΣ.", "K", "😀.5", "a\u0301.", "中文,中文", "नमस्ते।", "\U0010FFFF-1",
    "\ud800.5", "ǅ,ǈ",
    # rule-1 punctuation
    "{|}~[\\]^_`", " !\"#$%&()*+:;<=>?@/", "it's", "a'b", "1/2", "<b>", "x@y.z", "€5",
]


@pytest.mark.parametrize("tokenize", TOKENIZERS)
@pytest.mark.parametrize("lowercase", [False, True])
def test_regression_tokens(tokenize, lowercase):
    assert_same_tokens(REGRESSION_13A, tokenize, lowercase)


@pytest.mark.parametrize("lowercase", [False, True])
def test_regression_corpus(lowercase):
    hyps = REGRESSION_13A
    refs = [list(reversed(REGRESSION_13A)), [t.upper() for t in REGRESSION_13A],
            [None if i % 3 else "" for i in range(len(hyps))]]
    for tokenize in TOKENIZERS:
        cfg = dict(_ALL_OPTIONS, tokenize=tokenize, lowercase=lowercase)
        check_everything(cfg, hyps, refs, cached=True)


def _exhaustive_13a(alphabet: list[str], max_len: int) -> None:
    lines = [""]
    frontier = [""]
    for _ in range(max_len):
        frontier = [p + a for p in frontier for a in alphabet]
        lines += frontier
    got = fast_hashes(lines, "13a", False)
    # sacrebleu's tokens, hashed by fastbleu's 'none' tokenizer (checked against str.split
    # in test_none_tokenizer_whitespace_exhaustive), which is much faster than hashing here.
    joined = [" ".join(sacre_tokens(t, "13a", False)) for t in lines]
    expected = fast_hashes(joined, "none", False)
    bad = [i for i in range(len(lines)) if got[i] != expected[i]]
    if bad:
        shortest = sorted(bad, key=lambda i: len(lines[i]))[:5]
        pytest.fail(f"13a differs on {len(bad)} of {len(lines)} lines; shortest:\n"
                    + "\n".join(token_report(lines[i], "13a", False) for i in shortest))


# Up to 4 characters (11,111 strings) in the quick run, up to 5 with -m slow (issue 28).
@pytest.mark.parametrize("length", [4, slow(5)])
def test_13a_exhaustive_short_strings(length):
    """Every string of up to ``length`` characters over the classes that decide 13a's rules."""
    _exhaustive_13a(["1", ".", ",", "-", "a", " ", "!", "\n", "\u00e9", "\u3000"], length)


# Up to 3 pieces in the quick run, up to 4 with -m slow (issue 28).
@pytest.mark.parametrize("length", [3, slow(4)])
def test_13a_exhaustive_preprocessing(length):
    """Every sequence of up to ``length`` pieces that the replacements can interact on."""
    _exhaustive_13a(["&amp;", "&lt;", "lt;", "&", "<skipped>", "<skip", "ped>", "-\n", "\n",
                     "-", "1", ".", " ", "quot;"], length)


# -- whitespace and lowercase, over every code point ------------------------------------------

_ALL_CHARS = [chr(c) for c in range(0x110000)]


def test_none_tokenizer_whitespace_exhaustive():
    """'none' splits exactly where str.split() does, for every code point (surrogates too)."""
    lines = [f"a{c}b" for c in _ALL_CHARS]
    got = fb_tokenize(as_text_column(lines, "lines"), get_tokenizer("none"), False)
    expected_count = np.array([2 if c.isspace() else 1 for c in _ALL_CHARS])
    bad = np.flatnonzero(got.count != expected_count)
    assert bad.size == 0, [hex(int(i)) for i in bad[:20]]
    # And the hashes are those of str.split()'s tokens.
    for c in WHITESPACE + NEAR_SPACE + ["x", "\ud800", "\U0010FFFF"]:
        assert fast_hashes([f"a{c}b"], "none", False)[0] == \
            [token_hash(t) for t in f"a{c}b".split()], repr(c)


@pytest.mark.parametrize("tokenize", ["13a", "char"])
def test_whitespace_exhaustive_other_tokenizers(tokenize):
    """13a and char treat every non-ASCII code point as a letter or as whitespace, as Python."""
    chars = _ALL_CHARS[0x80:]
    lines = [f"a{c}b" for c in chars]
    got = fb_tokenize(as_text_column(lines, "lines"), get_tokenizer(tokenize), False)
    if tokenize == "13a":
        expected_count = np.array([2 if c.isspace() else 1 for c in chars])
    else:
        expected_count = np.array([2 if c.isspace() else 3 for c in chars])
    bad = np.flatnonzero(got.count != expected_count)
    assert bad.size == 0, [hex(int(i) + 0x80) for i in bad[:20]]


# The Basic Multilingual Plane (surrogates included) in the quick run; every code point with
# -m slow (issue 28).
@pytest.mark.parametrize("end", [0x10000, slow(0x110000)], ids=hex)
def test_char_tokenizer_every_code_point(end):
    """'char' of a line holding every code point below ``end`` once: one token per non-space
    code point."""
    text = "".join(_ALL_CHARS[:end])
    got = fast_hashes([text], "char", False)[0]
    expected = [token_hash(c) for c in " ".join(text).split()]
    assert len(got) == len(expected)
    bad = [i for i, (a, b) in enumerate(zip(got, expected)) if a != b]
    assert not bad, [hex(ord(" ".join(text).split()[i])) for i in bad[:20]]


def _flat(tokens) -> tuple[np.ndarray, np.ndarray]:
    """All token hashes in segment order, and the segment of each."""
    count = np.maximum(tokens.count, 0)
    segment = np.repeat(np.arange(count.size), count)
    first = np.cumsum(count) - count
    return tokens.hashes[tokens.start[segment] + np.arange(segment.size) - first[segment]], segment


# The Basic Multilingual Plane in the quick run; every code point (minutes of CPU) with
# -m slow (issue 28).
@pytest.mark.parametrize("end", [0x10000, slow(0x110000)], ids=hex)
def test_lowercase_every_code_point(end):
    """lowercase=True equals str.lower() for every code point below ``end``, alone and after
    a letter."""
    none = get_tokenizer("none")
    for prefix in ("", "A", "\u0391"):  # final sigma: 'Σ' after a cased letter is 'ς'
        lines = [prefix + c for c in _ALL_CHARS[:end]]
        got = fb_tokenize(as_text_column(lines, "lines"), none, True)
        want = fb_tokenize(as_text_column([t.lower() for t in lines], "lines"), none, False)
        bad = np.flatnonzero(got.count != want.count)
        if bad.size == 0:
            got_hashes, segment = _flat(got)
            bad = np.unique(segment[got_hashes != _flat(want)[0]])
        assert bad.size == 0, [(lines[i], lines[i].lower()) for i in bad[:20]]


# Bare and between digits in the quick run; the other two with -m slow (issue 28).
@pytest.mark.parametrize("p, q", [("", ""), ("1", "1"), slow("a", "a"), slow(".", "5")])
def test_13a_exhaustive_ascii_pairs(p, q):
    """Every pair of ASCII characters, bare and between digits and letters."""
    pairs = [chr(a) + chr(b) for a in range(128) for b in range(128)]
    lines = [p + x + q for x in pairs]
    got = fast_hashes(lines, "13a", False)
    expected = fast_hashes([" ".join(sacre_tokens(t, "13a", False)) for t in lines], "none",
                           False)
    bad = [i for i in range(len(lines)) if got[i] != expected[i]]
    assert not bad, "\n".join(token_report(lines[i], "13a", False) for i in bad[:5])


# -- long lines, long corpora, batching, containers, warnings --------------------------------


@st.composite
def long_lines(draw):
    unit = draw(st.lists(piece, min_size=1, max_size=5))
    sep = draw(st.sampled_from([" ", "", "\u3000", "&amp; "]))
    reps = draw(st.integers(100, 2500))
    tail = draw(line)
    return sep.join(unit * reps) + tail


@examples(12)
@given(cfg=configs, data=st.data())
def test_long_lines(cfg, data):
    """Thousands of (repeated) tokens per line: table growth and scratch buffers."""
    hyp = data.draw(long_lines(), "hyp")
    kind = data.draw(st.sampled_from(["self", "long", "short", "reversed"]), "kind")
    ref = {"self": hyp, "short": data.draw(line, "short ref"), "reversed": hyp[::-1],
           "long": data.draw(long_lines(), "long ref")}[kind]
    other = data.draw(long_lines(), "second ref")
    check_everything(cfg, [hyp, "x"], [[ref, "x"], [other, None]])


def _check_sampled_corpus(cfg, templates, seed, n, cached):
    """n segments drawn from a few template segments: statistics, corpus score and
    every sentence score equal sacrebleu's (and, with ``cached``, via BLEU(references=))."""
    import random

    t_hyps, t_refs = templates
    rnd = random.Random(seed)
    picks = [rnd.randrange(len(t_hyps)) for _ in range(n)]
    hyps = [t_hyps[i] for i in picks]
    refs = [[s[i] for i in picks] for s in t_refs]
    note(f"cfg={cfg!r} n={n}")
    sacre, fast = SacreBLEU(**cfg), FastBLEU(**cfg)
    sacre_stats = sacre_statistics(sacre, hyps, refs)
    assert_same_statistics(fast.segment_statistics(hyps, refs), sacre_stats, hyps, refs, cfg)
    if cached:
        assert_same_statistics(FastBLEU(references=refs, **cfg).segment_statistics(hyps),
                               sacre_stats, hyps, refs, cfg)
    else:
        assert_same_score(fast.corpus_score(hyps, refs), sacre.corpus_score(hyps, refs),
                          "corpus_score")
    expected = np.array([sacre._compute_score_from_stats(list(map(int, row))).score
                         for row in sacre_stats])
    got = fast.sentence_scores(hyps, refs)
    bad = np.flatnonzero(got != expected)
    assert bad.size == 0, (bad[:5], got[bad[:5]], expected[bad[:5]])


def _long_corpus(cfg, templates, seed, n):
    """Hundreds of segments: tables and scratch buffers reused from segment to segment."""
    _check_sampled_corpus(cfg, templates, seed, n, cached=False)


def _long_corpus_at(size):
    drawn = given(cfg=configs, templates=corpora(min_segments=3, max_segments=8),
                  seed=st.integers(0, 2**32 - 1), n=st.integers(500, 1400))
    return examples(size)(drawn(_long_corpus))


# 10 examples in the quick run, 30 with -m slow (issue 28).
test_long_corpus, test_long_corpus_full = quick_and_full(_long_corpus_at, 10, 30)


@examples(3)
@given(cfg=configs, templates=corpora(min_segments=3, max_segments=8),
       seed=st.integers(0, 2**32 - 1), n=st.integers(8200, 13000))
def test_corpus_across_threads(cfg, templates, seed, n):
    """Enough segments (8192+) for the kernels to split the work over threads."""
    _check_sampled_corpus(cfg, templates, seed, n, cached=True)


def _small_batches(cfg, corpus, batch_size):
    """The batch loop (internal API): tiny batches give the same statistics as sacrebleu."""
    hyps, refs = corpus
    sacre = SacreBLEU(**cfg)
    expected = sacre_statistics(sacre, hyps, refs)
    tok = get_tokenizer(cfg["tokenize"])
    hyp_col = as_text_column(hyps, "hypotheses")
    streams = [as_text_column(s, "references", allow_null=True) for s in refs]
    for references in (streams,
                       References.cached(streams, tok, cfg["lowercase"], batch_size=batch_size)):
        batches = list(iter_statistics(hyp_col, references, tok, cfg["lowercase"],
                                       cfg["max_ngram_order"], batch_size=batch_size))
        assert_same_statistics(np.concatenate(batches), expected, hyps, refs, cfg)


def _small_batches_at(size):
    drawn = given(cfg=configs, corpus=corpora(min_segments=1, max_segments=12),
                  batch_size=st.integers(1, 5))
    return examples(size)(drawn(_small_batches))


# 40 examples in the quick run, 100 with -m slow (issue 28).
test_small_batches, test_small_batches_full = quick_and_full(_small_batches_at, 40, 100)


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= c <= "\udfff" for c in text)


def _containers(values: list) -> dict:
    """The same column as every container type fastbleu accepts (that can hold it)."""
    import pandas as pd
    import polars as pl
    import pyarrow as pa
    import pyarrow.compute as pc

    out = {"tuple": tuple(values), "numpy object": np.array(values, dtype=object),
           "pandas object": pd.Series(values, dtype=object),
           "pandas reindexed": pd.Series(values, index=range(len(values), 0, -1), dtype=object)}
    if any(_has_surrogate(v) for v in values if v is not None):
        return out  # Arrow, polars and pandas' string dtypes hold valid UTF-8 only
    if None not in values and not any("\x00" in v for v in values):
        # numpy's fixed-width str drops trailing NULs; inner NULs: test_numpy_str_with_nul
        out["numpy str"] = np.array(values, dtype=str)
    out.update({
        "pyarrow": pa.array(values, type=pa.string()),
        "pyarrow large": pa.array(values, type=pa.large_string()),
        "pyarrow view": pa.array(values, type=pa.string_view()),
        "pyarrow sliced": pa.array(["pad", *values, "pad"], type=pa.string())[1:-1],
        "pyarrow chunked": pa.chunked_array([pa.array(values[:1], type=pa.string()),
                                             pa.array(values[1:], type=pa.string())]),
        "pyarrow dictionary": pa.array(values, type=pa.string()).dictionary_encode(),
        # pc.if_else leaves the replaced text in the data buffer under each null
        "pyarrow null slots with data": pc.if_else(
            pa.array([v is not None for v in values]),
            pa.array(["JUNK İ the cat." if v is None else v for v in values], type=pa.string()),
            pa.scalar(None, pa.string())),
        "pandas string": pd.Series(values, dtype="string"),
        "pandas string[pyarrow]": pd.Series(values, dtype="string[pyarrow]"),
        # (an all-None category column: test_all_missing_pandas_category_stream)
        **({"pandas category": pd.Series(values, dtype="category")}
           if any(v is not None for v in values) else {}),
        "polars": pl.Series(values, dtype=pl.String),
        "polars categorical": pl.Series(values, dtype=pl.Categorical),
        "polars sliced": pl.Series(["pad", *values, "pad"], dtype=pl.String)[1:-1],
    })
    return out


def _input_containers(cfg, corpus, clean):
    """Arrow, numpy, pandas and polars columns give sacrebleu's numbers for the same lists."""
    hyps, refs = corpus
    if clean:  # without lone surrogates, so that every container type can hold the text
        strip = lambda t: None if t is None else "".join(c for c in t if not _has_surrogate(c))
        hyps = [strip(h) for h in hyps]
        refs = [[strip(r) for r in stream] for stream in refs]
    expected = sacre_statistics(SacreBLEU(**cfg), hyps, refs)
    fast = FastBLEU(**cfg)
    for name, container in _containers(hyps).items():
        stats = fast.segment_statistics(container, refs)
        assert np.array_equal(stats, expected), f"hypotheses as {name}"
    ref_containers = [_containers(stream) for stream in refs]
    for name in set.intersection(*(set(c) for c in ref_containers)):
        stats = fast.segment_statistics(hyps, [c[name] for c in ref_containers])
        assert np.array_equal(stats, expected), f"references as {name}"
        cached = FastBLEU(references=[c[name] for c in ref_containers], **cfg)
        assert np.array_equal(cached.segment_statistics(hyps), expected), \
            f"cached references as {name}"


def _input_containers_at(size):
    drawn = given(cfg=configs, corpus=corpora(min_segments=2, max_segments=6),
                  clean=st.booleans())
    return examples(size)(drawn(_input_containers))


# 15 examples in the quick run, 40 with -m slow (issue 28).
test_input_containers, test_input_containers_full = quick_and_full(_input_containers_at, 15, 40)


class _Collect(logging.Handler):
    """Collects the messages of warnings and worse."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        self.messages.append(record.getMessage())


def _tokenized_period_warning(n, data, force):
    """Both warn about 100+ hypotheses ending in ' .' (raw text, not stripped) alike."""
    dotted = data.draw(st.integers(90, n), "dotted")
    others = st.sampled_from([".", " . ", " .\n", "", " .\ud800", " . x", "\u3000."])
    hyps = [data.draw(line, f"hyp{i}") + (" ." if i < dotted else data.draw(others, f"end{i}"))
            for i in range(n)]
    if data.draw(st.booleans(), "surrogate"):  # a lone surrogate in a warned-about corpus
        hyps[-1] = "\ud800 " + hyps[-1]
    hyps = data.draw(st.permutations(hyps), "order")
    refs = [["ref ." for _ in range(n)]]
    fast = _warnings_of("fastbleu", lambda: FastBLEU(force=force).corpus_score(hyps, refs).score)
    sacre = _warnings_of("sacrebleu",
                         lambda: SacreBLEU(force=force).corpus_score(hyps, refs).score)
    note(f"{sum(h.endswith(' .') for h in hyps)} of {n} end in ' .'; sacrebleu: {sacre}")
    assert fast == sacre


def _tokenized_period_warning_at(size):
    drawn = given(n=st.integers(98, 130), data=st.data(), force=st.booleans())
    return examples(size)(drawn(_tokenized_period_warning))


# 5 examples in the quick run, 15 with -m slow (issue 28).
test_tokenized_period_warning, test_tokenized_period_warning_full = \
    quick_and_full(_tokenized_period_warning_at, 5, 15)


def _warnings_of(name: str, action) -> tuple[object, list[str]]:
    logger = logging.getLogger(name)
    handler = _Collect()
    level = logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.WARNING)
    try:
        result = action()
    finally:
        logger.setLevel(level)
        logger.removeHandler(handler)
    return result, handler.messages


@pytest.mark.parametrize("trg_lang", ["", "en", "zh", "ja", "ko"])
@pytest.mark.parametrize("tokenize", TOKENIZERS)
@pytest.mark.parametrize("effective_order", [False, True])
def test_warnings_match(trg_lang, tokenize, effective_order):
    """trg_lang advice and the sentence-BLEU effective_order advice, message for message."""
    def run(cls):
        metric = cls(tokenize=tokenize, trg_lang=trg_lang, effective_order=effective_order)
        return metric.sentence_score("the cat .", ["the cat ."]).score

    assert _warnings_of("fastbleu", lambda: run(FastBLEU)) == \
        _warnings_of("sacrebleu", lambda: run(SacreBLEU))


@pytest.mark.parametrize("smooth_method, smooth_value", [
    ("add-k", np.float32(0.1)), ("floor", np.float16(0.1)), ("floor", np.float32(0.3)),
])
def test_reduced_precision_smooth_value_is_refused(smooth_method, smooth_value):
    """sacrebleu computes in a float32/float16 scalar's precision (NEP 50); fastbleu
    computes in float64, so it refuses such a value instead of giving other digits."""
    with pytest.raises(TypeError, match="pass a Python float"):
        FastBLEU(smooth_method=smooth_method, smooth_value=smooth_value)


@pytest.mark.parametrize("smooth_method, smooth_value", [
    ("add-k", np.float64(0.1)), ("add-k", np.int64(2)), ("floor", np.int32(1)),
])
def test_numpy_scalar_smooth_value(smooth_method, smooth_value):
    """numpy float64 and integer scalars as smooth_value give sacrebleu's numbers."""
    hyps = ["the cat sat on the mat the cat", "a b c d e f", "x", "a x b y c"]
    refs = [["the cat sat on a mat the cat", "a b c d e f", "y", "a b c"],
            ["the the cat", None, "x x", None]]
    cfg = dict(smooth_method=smooth_method, smooth_value=smooth_value)
    assert_same_score(FastBLEU(**cfg).corpus_score(hyps, refs),
                      SacreBLEU(**cfg).corpus_score(hyps, refs), "corpus_score")
    for i, hyp in enumerate(hyps):
        refs_i = [s[i] for s in refs]
        assert_same_score(FastBLEU(**cfg).sentence_score(hyp, refs_i),
                          SacreBLEU(**cfg).sentence_score(hyp, refs_i), f"sentence_score[{i}]")


def test_negative_smooth_value_is_refused():
    # sacrebleu fails with "math domain error" (or returns NaN at sentence level).
    with pytest.raises(ValueError, match="smooth_value must be a finite number >= 0"):
        FastBLEU(smooth_method="floor", smooth_value=-0.1)


def test_numpy_str_with_nul():
    """A NUL inside a numpy str array is an ordinary character, as in the same list of str."""
    hyps = np.array(["a\x00b c", "\x000"], dtype=str)
    assert hyps.tolist() == ["a\x00b c", "\x000"]  # numpy keeps inner NULs
    refs = [["a\x00b c", "\x000"]]
    expected = sacre_statistics(SacreBLEU(), hyps.tolist(), refs)
    assert FastBLEU().segment_statistics(hyps, refs).tolist() == expected.tolist()


def test_all_missing_pandas_category_stream():
    """A reference stream that is entirely None is fine as a pandas category Series too."""
    import pandas as pd

    hyps, refs = ["a b", "c"], [["a b", "c"], [None, None]]
    expected = sacre_statistics(SacreBLEU(), hyps, refs)
    streams = [pd.Series(s, dtype="category") for s in refs]  # the second: categories float64
    assert FastBLEU().segment_statistics(hyps, streams).tolist() == expected.tolist()
