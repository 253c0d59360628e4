"""The counting kernel's pruning and probing, aimed at where they could go wrong.

The small table skips reference n-grams with a token the hypothesis lacks (a
1,024-bit set), walks each reference by its last token, indexes rows by a
key's top bits, counts later references' runs under a (segment, reference)
id, and lets the hypothesis count ``_REF_MAX`` down (fastbleu/_kernels/counting.py).
These tests give it hypotheses made of the references' own tokens in other
orders and with repeats, several references with missing ones, and token
hashes forged to collide in the bit set and in the table's first row.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings, strategies as st
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU
from fastbleu._kernels.bleu.counting import REF_AVERAGE, REF_CLOSEST, REF_SHORTEST
from testkit.reference import kernel_statistics, reference_statistics
from testkit.marks import quick_and_full

# Frequent short words: a hypothesis drawn from them has every token of the
# reference, but mostly not its n-grams.
WORDS = ["the", ",", "of", "a", "cat", ".", "the cat", "of the"]


@st.composite
def shuffled_corpora(draw):
    """``(hyps, ref_streams)`` whose hypotheses reorder and repeat their references' words."""
    n = draw(st.integers(1, 5))
    n_refs = draw(st.integers(1, 4))
    streams = [[None] * n for _ in range(n_refs)]
    hyps = []
    for i in range(n):
        present = draw(st.lists(st.booleans(), min_size=n_refs, max_size=n_refs))
        if not any(present):
            present[draw(st.integers(0, n_refs - 1))] = True
        pool = []
        for r in range(n_refs):
            if present[r]:
                words = draw(st.lists(st.sampled_from(WORDS), max_size=30))
                streams[r][i] = " ".join(words)
                pool.extend(words)
        if pool and draw(st.booleans()):
            hyp = draw(st.permutations(pool))[:draw(st.integers(0, len(pool)))]
            hyp = hyp + draw(st.lists(st.sampled_from(pool), max_size=10))  # repeats
        else:
            hyp = draw(st.lists(st.sampled_from(WORDS), max_size=30))
        hyps.append(" ".join(hyp))
    return hyps, streams


def _reordered_and_repeated_tokens(corpus, order):
    hyps, streams = corpus
    ours = BLEU(max_ngram_order=order).segment_statistics(hyps, streams)
    theirs = SacreBLEU(max_ngram_order=order)._extract_corpus_statistics(hyps, streams)
    assert ours.tolist() == [list(map(int, row)) for row in theirs]


def _reordered_and_repeated_tokens_at(size):
    drawn = given(shuffled_corpora(), st.integers(1, 6))
    return settings(max_examples=size, deadline=None, database=None)(
        drawn(_reordered_and_repeated_tokens))


# 40 examples in the quick run, 120 with -m slow (issue 28).
(test_reordered_and_repeated_tokens_give_sacrebleu_statistics,
 test_reordered_and_repeated_tokens_give_sacrebleu_statistics_full) = \
    quick_and_full(_reordered_and_repeated_tokens_at, 40, 120)


def _forged_vocabulary(seed, size, top_bits):
    """Distinct token hashes that share their top ``top_bits`` bits, and in pairs their low
    6 bits: every unigram starts its probe at the same table row (the last one when the
    shared bits are all ones, so probes wrap around), and the bit set, which looks at the
    top 4 and low 6 bits, takes each pair for one token."""
    rng = np.random.default_rng(seed)
    middle = rng.choice(1 << 20, size, replace=False).astype(np.uint64)
    low = rng.integers(0, 64, size).astype(np.uint64)
    low[1::2] = low[0::2]
    top = (1 << top_bits) - 1 if seed % 2 else seed
    return (np.uint64(top) << np.uint64(64 - top_bits)) | (middle << np.uint64(6)) | low


@settings(max_examples=60, deadline=None, database=None)
@given(st.lists(st.tuples(st.lists(st.integers(0, 11), max_size=40),
                          st.lists(st.one_of(st.none(), st.lists(st.integers(0, 11), max_size=40)),
                                   min_size=1, max_size=4)),
                min_size=1, max_size=6).filter(
    lambda segs: all(any(r is not None for r in refs) for _, refs in segs)),
       st.integers(1, 5), st.integers(0, 7), st.sampled_from([12, 20, 30]),
       st.sampled_from([REF_CLOSEST, REF_SHORTEST, REF_AVERAGE]))
def test_forged_colliding_hashes_give_counter_statistics(segments, max_order, seed, top_bits,
                                                          ref_length):
    vocab = _forged_vocabulary(seed, 12, top_bits)
    out = kernel_statistics(segments, max_order, vocab=vocab, ref_length=ref_length)
    expected = [reference_statistics(hyp, refs, max_order, ref_length) for hyp, refs in segments]
    assert out.tolist() == expected
