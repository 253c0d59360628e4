"""Each kernel against a plain-Python reference implementation."""

from __future__ import annotations

import math
import subprocess
import sys
import textwrap
from collections import Counter

import numpy as np
import pytest
from testkit.reference import reference_statistics, kernel_statistics
from testkit.marks import quick_and_full
from hypothesis import given, settings, strategies as st

from fastbleu._kernels.bleu.counting import (AVERAGE_SCALE, LARGE_ABOVE, REF_AVERAGE, REF_CLOSEST,
                                             REF_SHORTEST, segment_statistics)
from fastbleu._kernels.bleu.formula import SMOOTH_EXP, SMOOTH_NONE, bleu_from_row
from fastbleu._kernels.text.hashing import hash_bytes
from fastbleu._kernels.text.tokenize_13a import _replace
from fastbleu.statistics.tokens import tokenize
from fastbleu.inputs.text import as_text_column
from fastbleu.tokenizers import get_tokenizer
from sacrebleu.metrics import BLEU as SacreBLEU

PYTHON_WHITESPACE = [c for c in range(0x110000) if chr(c).isspace()]
NO_WEIGHTS = np.zeros(0, dtype=np.float64)


def token_hash(token: str) -> int:
    raw = np.frombuffer(token.encode("utf-8", "surrogatepass"), dtype=np.uint8)
    return int(hash_bytes(raw, 0, raw.size))


def hashes_of(tokens) -> list[int]:
    return [token_hash(t) for t in tokens]


def kernel_tokens(lines, name="13a", lowercase=False) -> list[list[int]]:
    tokens = tokenize(as_text_column(lines, "lines"), get_tokenizer(name), lowercase)
    return [tokens.hashes[s:s + c].tolist() for s, c in zip(tokens.start, tokens.count)]


def test_python_whitespace_is_what_the_kernels_split_on():
    # Every code point, each between two letters: whitespace splits, nothing else does.
    lines = [f"a{chr(c)}b" for c in range(0x110000)]
    counts = tokenize(as_text_column(lines, "lines"), get_tokenizer("none"), False).count
    assert np.flatnonzero(counts == 2).tolist() == PYTHON_WHITESPACE
    assert set(np.unique(counts).tolist()) == {1, 2}
    # str.split() agrees with str.isspace() on what whitespace is.
    assert all(len(f"a{chr(c)}b".split()) == 2 for c in PYTHON_WHITESPACE)


def test_right_strip_uses_python_whitespace():
    # 13a removes "-\n" after str.rstrip(): a trailing whitespace character
    # is stripped first and so keeps the "-" of "a-\n".
    lines = [f"a-\n{chr(c)}" for c in PYTHON_WHITESPACE] + ["a-\nx", "a-\n\u200b"]
    expected = [hashes_of(["a-"])] * len(PYTHON_WHITESPACE) + [hashes_of(["ax"]),
                                                               hashes_of(["a\u200b"])]
    assert kernel_tokens(lines) == expected


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("<skiped>-\n&quotamplgt;x")), max_size=60),
       st.sampled_from([("<skipped>", ""), ("-\n", ""), ("&quot;", '"'), ("&amp;", "&"),
                        ("&lt;", "<"), ("&gt;", ">")]))
def test_replace_is_str_replace(text, rule):
    pattern, replacement = rule
    buf = np.frombuffer(text.encode(), dtype=np.uint8).copy()
    length = _replace(buf, buf.size, np.frombuffer(pattern.encode(), dtype=np.uint8),
                      np.frombuffer(replacement.encode(), dtype=np.uint8))
    assert buf[:length].tobytes().decode() == text.replace(pattern, replacement)






def _ref_ngrams(refs, max_order):
    """How many n-grams the kernel counts for a segment's references (its table choice)."""
    return sum(max(len(r) - m, 0) for r in refs if r is not None for m in range(max_order))


token_lists = st.lists(st.integers(0, 6), max_size=40)


#: 1-8 segments of tokens, each with 1-4 references (None: missing; one at least present).
SEGMENTS = st.lists(st.tuples(token_lists, st.lists(st.one_of(st.none(), token_lists),
                                                    min_size=1, max_size=4)),
                    min_size=1, max_size=8).filter(
    lambda segs: all(any(r is not None for r in refs) for _, refs in segs))


def _counting_kernel_equals_counters(segments, max_order, long_lines):
    if long_lines:  # grow the n-gram table past its first size
        segments = [(hyp * 40, [None if r is None else r * 40 for r in refs])
                    for hyp, refs in segments]
    out = kernel_statistics(segments, max_order)
    expected = [reference_statistics(hyp, refs, max_order) for hyp, refs in segments]
    assert out.tolist() == expected


def _counting_kernel_at(size):
    drawn = given(SEGMENTS, st.integers(1, 6), st.booleans())
    return settings(max_examples=size, deadline=None)(drawn(_counting_kernel_equals_counters))


# 60 examples in the quick run, 200 with -m slow (issue 28).
test_counting_kernel_equals_counters, test_counting_kernel_equals_counters_full = \
    quick_and_full(_counting_kernel_at, 60, 200)


def _neumaier_sum(values):
    """CPython >= 3.12's sum() of floats (Objects/bltinmodule.c), starting from int 0."""
    total, compensation = 0 + values[0], 0.0
    for x in values[1:]:
        t = total + x
        if abs(total) >= abs(x):
            compensation += (total - t) + x
        else:
            compensation += (x - t) + total
        total = t
    if compensation and math.isfinite(compensation):
        total += compensation
    return total


def _naive_sum(values):
    total = 0
    for x in values:
        total = total + x
    return total


@pytest.mark.parametrize("compensated", [False, True])
def test_formula_sums_logs_as_python_does(compensated):
    rng = np.random.default_rng(3)
    python_sum = _neumaier_sum if compensated else _naive_sum
    builtin_matches = compensated == (sys.version_info >= (3, 12))
    precisions = np.empty(8)
    differs_from_naive = 0
    for _ in range(3000):
        order = int(rng.integers(2, 9))
        totals = np.sort(rng.integers(1, 10**6, order))[::-1]
        correct = (totals * rng.random(order)).astype(np.int64) + 1
        row = np.concatenate(([totals[0], int(totals[0] * rng.uniform(0.5, 1.5))],
                              correct, totals)).astype(np.int64)
        score, bp = bleu_from_row(row, order, SMOOTH_NONE, 0.0, False, compensated, precisions,
                                  NO_WEIGHTS, 1)
        logs = [math.log(100.0 * c / t) for c, t in zip(correct, totals)]
        if builtin_matches:
            assert python_sum(logs) == sum(logs)
        assert score == bp * math.exp(python_sum(logs) / order)
        differs_from_naive += _neumaier_sum(logs) != _naive_sum(logs)
    assert differs_from_naive > 0  # the two modes are really different


def test_zero_precision_scores_zero_whatever_the_sum():
    precisions = np.empty(4)
    row = np.array([10, 10, 5, 0, 0, 0, 10, 9, 8, 7], dtype=np.int64)
    for compensated in (False, True):
        args = (False, compensated, precisions, NO_WEIGHTS, 1)
        assert bleu_from_row(row, 4, SMOOTH_NONE, 0.0, *args)[0] == 0.0
        assert bleu_from_row(row, 4, SMOOTH_EXP, 0.0, *args)[0] > 0.0


# -- The compact table of large segments -------------------------------------------------------

def _large_segment_table_equals_counters(segments, max_order, repeat, large_above):
    # A low threshold sends some segments of one call to each table, so the
    # compact table is reused, grown and re-stamped within a chunk.
    segments = [(hyp * repeat, [None if r is None else r * repeat for r in refs])
                for hyp, refs in segments]
    out = kernel_statistics(segments, max_order, large_above=large_above)
    expected = [reference_statistics(hyp, refs, max_order) for hyp, refs in segments]
    assert out.tolist() == expected


def _large_segment_table_at(size):
    drawn = given(SEGMENTS, st.integers(1, 6), st.integers(1, 30), st.integers(0, 400))
    return settings(max_examples=size, deadline=None)(drawn(_large_segment_table_equals_counters))


# 60 examples in the quick run, 200 with -m slow (issue 28).
test_large_segment_table_equals_counters, test_large_segment_table_equals_counters_full = \
    quick_and_full(_large_segment_table_at, 60, 200)


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 6), st.lists(st.integers(0, 30), max_size=2), st.integers(0, 2),
       st.integers(0, 2), st.integers(2, 40), st.integers(0, 2**32 - 1))
def test_segments_around_the_large_threshold_equal_counters(max_order, other_lengths, below,
                                                            above, vocab_size, seed):
    # Two segments with the default threshold: one whose references have at
    # most LARGE_ABOVE n-grams (the all-orders table), one with just more (the
    # compact table), each within a few n-grams of it; then a small one.
    rng = np.random.default_rng(seed)
    others = [rng.integers(0, vocab_size, n).tolist() for n in other_lengths]
    room = LARGE_ABOVE - _ref_ngrams(others, max_order)
    longest = (room + max_order * (max_order - 1) // 2) // max_order  # at most `room` n-grams
    phrase = rng.integers(0, vocab_size, 3).tolist()
    segments = []
    for length in (longest - below, longest + 1 + above):
        first = rng.integers(0, vocab_size, length).tolist()
        # The hypothesis repeats a short phrase and copies reference spans, so counts clip.
        hyp = phrase * (length // 6) + first[length // 3:length // 3 + length // 2]
        segments.append((hyp, [first] + others))
    segments.append((phrase * 2, [phrase]))
    ngrams = [_ref_ngrams(refs, max_order) for _, refs in segments[:2]]
    assert ngrams[0] <= LARGE_ABOVE < ngrams[1] <= LARGE_ABOVE + 3 * max_order
    out = kernel_statistics(segments, max_order, vocab_size=vocab_size)
    assert out.tolist() == [reference_statistics(h, r, max_order) for h, r in segments]


def test_huge_segment_with_several_references_equals_counters():
    # 200k tokens of repeated phrases (counts clip at every order), references
    # of different lengths, an empty one and a missing one, then small segments
    # after it in the same chunk.
    rng = np.random.default_rng(11)
    phrases = [rng.integers(0, 50, int(rng.integers(2, 9))).tolist() for _ in range(300)]

    def text(n_phrases):
        return [t for k in rng.integers(0, len(phrases), n_phrases) for t in phrases[k]]

    hyp = text(40_000)[:200_000]
    refs = [text(40_000)[:210_000], [], None, text(5_000)]
    small = [(text(3), [text(3), [], None, None]) for _ in range(50)]
    segments = [(hyp, refs)] + small
    assert _ref_ngrams(refs, 4) > 50 * LARGE_ABOVE
    out = kernel_statistics(segments, 4, vocab_size=50)
    expected = [reference_statistics(h, r, 4) for h, r in segments]
    assert out.tolist() == expected
    matches, totals = out[0, 2:6], out[0, 6:10]
    assert (0 < matches).all() and (matches < totals).all()


def test_huge_segment_among_small_ones_equals_sacrebleu():
    # Through the tokenizer and the batch code: one 200k-token segment between
    # WMT-size ones, two references (one empty), against sacrebleu's statistics.
    rng = np.random.default_rng(5)
    words = np.array([f"w{k}" for k in range(2000)] + [".", ",", "&amp;", "-", "'s"])
    phrases = [" ".join(words[rng.integers(0, words.size, int(rng.integers(2, 8)))])
               for _ in range(500)]

    def line(n_phrases):
        return " ".join(phrases[k] for k in rng.integers(0, len(phrases), n_phrases))

    hyps = [line(4) for _ in range(300)]
    refs_a = [line(4) for _ in range(300)]
    refs_b = [line(4) for _ in range(300)]
    hyps[150], refs_a[150], refs_b[150] = line(45_000), line(45_000), ""
    assert len(hyps[150].split()) > 180_000
    from fastbleu import BLEU

    ours = BLEU().segment_statistics(hyps, [refs_a, refs_b])
    theirs = np.array(SacreBLEU()._extract_corpus_statistics(hyps, [refs_a, refs_b]),
                      dtype=np.int64)
    np.testing.assert_array_equal(ours, theirs)


_PEAK_SCRIPT = textwrap.dedent("""
    import resource, sys
    import numpy as np
    from fastbleu._kernels.bleu.counting import segment_statistics

    def run(n):
        rng = np.random.default_rng(1)
        hashes = rng.integers(0, 2**63, 2 * n, dtype=np.int64).astype(np.uint64)
        start, count = np.array([0]), np.array([n])
        out = np.empty((1, 10), dtype=np.int64)
        segment_statistics(hashes, start, count, hashes, start[None] + n, count[None], 4, out)

    run(100)  # load the kernels
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    run(int(sys.argv[1]))
    print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
""")


def test_huge_segment_memory_is_bounded():
    # One segment of 500k distinct tokens, hypothesis and reference: sacrebleu
    # needs several hundred bytes per token; the all-orders table needed 1.6 KB,
    # the compact one about 100 (8 MB of the input hashes included).
    tokens = 500_000
    kernel_statistics([([1, 2], [[1, 2, 3]])], 4)  # compiled or loaded here, not in the child
    grown = int(subprocess.run([sys.executable, "-c", _PEAK_SCRIPT, str(tokens)], check=True,
                               capture_output=True, text=True).stdout)
    assert grown < 250 * tokens, grown
