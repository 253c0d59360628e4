"""BLEU against a shared pool and Self-BLEU (issue 15): equal to sacrebleu 2.6's naive loops.

``BLEU(...).pool_scores(hyps, pool)`` must equal ``sentence_score(h, pool)`` for
every hypothesis, and ``self_scores(sents)`` must equal ``sentence_score(s_i,
others_i)``, on random small corpora built to hit the hard cases: duplicated
sentences (two sentences holding the top count of an n-gram), empty and
whitespace-only sentences, ties in length, punctuation and case, under
several tokenizers and options.
"""

from __future__ import annotations

from collections import Counter

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastbleu import BLEU
from fastbleu._kernels.bleu.counting import REF_SHORTEST
from fastbleu._kernels.text.hashing import finish_keys
from fastbleu._kernels.bleu.pool import PART_RECORDS
from fastbleu.metrics.bleu.pool import (closest_lengths, closest_other_lengths, pool_rows,
                                        self_rows, text_tokens)
from fastbleu.statistics.tokens import Tokens

sacrebleu = pytest.importorskip("sacrebleu")
from sacrebleu.metrics import BLEU as SacreBLEU  # noqa: E402

WORDS = ["a", "b", "A", "b.", "c,", "", " ", "Ü", "d-e"]
sentence = st.lists(st.sampled_from(WORDS), min_size=0, max_size=7).map(" ".join)
options = st.fixed_dictionaries({
    "tokenize": st.sampled_from(["13a", "none", "char", "intl"]),
    "lowercase": st.booleans(),
    "smooth_method": st.sampled_from(["exp", "floor", "add-k", "none"]),
    "effective_order": st.booleans(),
    "max_ngram_order": st.integers(1, 5),
})


def corpus(min_size: int):
    """Sentences drawn partly as copies of earlier ones (duplicates share top counts)."""
    return st.lists(st.tuples(sentence, st.integers(0, 9)), min_size=min_size, max_size=8).map(
        lambda pairs: [s if k < 6 or i == 0 else pairs[k % i][0]
                       for i, (s, k) in enumerate(pairs)])


@settings(max_examples=60, deadline=None)
@given(options, corpus(2))
def test_self_scores_equal_sacrebleu_loop(opts, sentences):
    ours = BLEU(**opts).self_scores(sentences)
    reference = SacreBLEU(**opts)
    expected = [reference.sentence_score(s, sentences[:i] + sentences[i + 1:]).score
                for i, s in enumerate(sentences)]
    assert ours.tolist() == expected


@settings(max_examples=60, deadline=None)
@given(options, corpus(0), corpus(1))
def test_pool_scores_equal_sacrebleu_loop(opts, hypotheses, pool):
    bleu = BLEU(**opts)
    reference = SacreBLEU(**opts)
    assert bleu.pool_scores(hypotheses, pool).tolist() == \
        [reference.sentence_score(h, pool).score for h in hypotheses]
    if hypotheses:
        expected = reference.corpus_score(hypotheses, [[r] * len(hypotheses) for r in pool])
        score = bleu.pool_score(hypotheses, pool)
        assert (score.score, score.sys_len, score.ref_len) == \
            (expected.score, expected.sys_len, expected.ref_len)


@settings(max_examples=40, deadline=None)
@given(options, corpus(2), corpus(1), st.sampled_from([1, 2, 5]))
def test_many_small_partitions(opts, sentences, pool, part_records):
    """The kernel cut into many partitions (of 1-5 n-grams) still equals sacrebleu."""
    bleu = BLEU(**opts)
    reference = SacreBLEU(**opts)
    order = bleu.max_ngram_order
    tokens, _ = text_tokens(bleu, sentences, "sentences")
    rows = self_rows(tokens, order, part_records=part_records)
    assert bleu.formula.scores(rows).tolist() == \
        [reference.sentence_score(s, sentences[:i] + sentences[i + 1:]).score
         for i, s in enumerate(sentences)]
    rows = pool_rows(tokens, text_tokens(bleu, pool, "pool")[0], order, part_records=part_records)
    assert bleu.formula.scores(rows).tolist() == \
        [reference.sentence_score(h, pool).score for h in sentences]


def test_statistics_rows_go_through_the_formula():
    bleu = BLEU(effective_order=True)
    pool = ["the cat sat on the mat", "a cat sat", "the the the"]
    hyps = ["the cat", "the the the the mat", ""]
    rows = bleu.pool_statistics(hyps, pool)
    assert rows.dtype == np.int64 and rows.shape == (3, 10)
    # 'the' x4 clipped to 3 ('the the the'), 'the the' x3 to 2 plus 'the mat',
    # 'the the the' x2 to 1; against 'the cat sat on the mat' (6, the closest length).
    assert rows[1].tolist() == [5, 6, 4, 3, 1, 0, 5, 4, 3, 2]
    assert bleu.formula.scores(rows).tolist() == bleu.pool_scores(hyps, pool).tolist()
    rows = bleu.self_statistics(pool)
    assert rows[:, 1].tolist() == [3, 3, 3]
    assert rows[2, 2] == 2  # 'the' x3 clipped by the 2 of the first sentence


def test_shortest_reference_length():
    bleu = BLEU(ref_length="shortest")
    rows = bleu.pool_statistics(["a b c d"], ["a", "a b c d", "a b"])
    assert rows[0, 1] == 1
    rows = bleu.self_statistics(["a", "a b c d", "a b", "x"])
    assert rows[:, 1].tolist() == [1, 1, 1, 1]
    rows = bleu.self_statistics(["a", "a b c d", "a b"])
    assert rows[:, 1].tolist() == [2, 1, 1]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 6), min_size=2, max_size=9), st.integers(0, 8))
def test_closest_lengths_tie_to_the_shorter(lengths, hyp_len):
    def closest(candidates, h):
        return min(candidates, key=lambda r: (abs(r - h), r))

    assert closest_lengths(np.array(lengths), np.array([hyp_len]))[0] == closest(lengths, hyp_len)
    others = closest_other_lengths(np.array(lengths))
    assert others.tolist() == [closest(lengths[:i] + lengths[i + 1:], h)
                               for i, h in enumerate(lengths)]
    shortest = closest_other_lengths(np.array(lengths), REF_SHORTEST)
    assert shortest.tolist() == [min(lengths[:i] + lengths[i + 1:]) for i in range(len(lengths))]


def test_errors():
    bleu = BLEU()
    with pytest.raises(ValueError, match="at least two sentences"):
        bleu.self_scores(["only one"])
    assert bleu.self_scores([]).shape == (0,)
    with pytest.raises(ValueError, match="pool is empty"):
        bleu.pool_scores(["a"], [])
    with pytest.raises(TypeError, match="single str"):
        bleu.pool_scores(["a"], "a b")
    with pytest.raises(TypeError, match=r"pool\[1\] is None"):
        bleu.pool_scores(["a"], ["a", None])
    with pytest.raises(TypeError, match=r"sentences\[0\]"):
        bleu.self_scores([3, "a"])
    with pytest.raises(ValueError, match="ref_length"):
        BLEU(ref_length="average").self_scores(["a", "b"])


def test_a_large_pool_grows_the_table():
    """Thousands of distinct n-grams: the table doubles many times and still clips right."""
    rng = np.random.default_rng(0)
    pool = [" ".join(f"w{x}" for x in rng.integers(0, 400, size=12)) for _ in range(600)]
    hyps = pool[:5] + [" ".join(f"w{x}" for x in rng.integers(0, 400, size=9))
                       for _ in range(5)]
    reference = SacreBLEU(effective_order=True)
    bleu = BLEU(effective_order=True)
    assert bleu.pool_scores(hyps, pool).tolist() == \
        [reference.sentence_score(h, pool).score for h in hyps]
    some = pool[:40]
    assert bleu.self_scores(some).tolist() == \
        [reference.sentence_score(s, some[:i] + some[i + 1:]).score for i, s in enumerate(some)]


# -- leave-one-out pruning: only n-grams whose (n-1)-grams are in two sentences are counted --


def naive_self_matches(sents: list[list[int]], max_order: int) -> list[list[int]]:
    """Per sentence and order, sum over its n-grams of min(count, max count in any other)."""
    grams = [[Counter(tuple(s[p:p + n]) for p in range(len(s) - n + 1))
              for n in range(1, max_order + 1)] for s in sents]
    return [[sum(min(c, max((grams[j][n][g] for j in range(len(sents)) if j != i), default=0))
                 for g, c in grams[i][n].items()) for n in range(max_order)]
            for i in range(len(sents))]


def id_tokens(sents: list[list[int]], gap: int) -> Tokens:
    """Token keys of integer tokens, each sentence stored ``gap`` slots after the previous one."""
    count = np.array([len(s) for s in sents], dtype=np.int64)
    start = np.zeros(len(sents), dtype=np.int64)
    start[1:] = np.cumsum(count[:-1] + gap)
    hashes = np.full(int(start[-1] + count[-1] + gap), 7, dtype=np.uint64)
    for s, b in zip(sents, start):
        hashes[b:b + len(s)] = finish_keys(np.array(s, dtype=np.int64))
    return Tokens(hashes, start, count)


def derived(pairs):
    """Sentences made from earlier ones: copies, prefixes, suffixes, one token changed, a
    piece repeated, so that n-grams share their (n-1)-grams without being shared."""
    out = []
    for s, (kind, k, t) in pairs:
        if out and kind:
            e = out[k % len(out)]
            s = [e, e[:t], e[t:], e[:t] + [9] + e[t + 1:], e[:t] * 2 + e, e[::-1]][kind - 1]
        out.append(list(s))
    return out


prune_corpus = st.lists(st.tuples(st.lists(st.integers(0, 3), max_size=8),
                                  st.tuples(st.integers(0, 6), st.integers(0, 9),
                                            st.integers(0, 6))),
                        min_size=2, max_size=9).map(derived)


@settings(max_examples=150, deadline=None)
@given(prune_corpus, st.integers(1, 6), st.sampled_from([1, 3, PART_RECORDS]),
       st.integers(0, 2))
def test_self_matches_equal_the_naive_count(sents, max_order, part_records, gap):
    rows = self_rows(id_tokens(sents, gap), max_order, part_records=part_records)
    assert rows[:, 2:2 + max_order].tolist() == naive_self_matches(sents, max_order)


@pytest.mark.parametrize("sents", [
    [[0, 1, 2, 3], [0, 1, 2, 4], [5, 1, 2, 3]],  # 3-grams share both 2-grams, none shared
    [[0, 1, 2], [0, 1, 2], [3, 4]],  # shared only by a duplicate
    [[0, 1, 2, 3]] * 3 + [[0, 1]],  # three copies
    [[0, 1, 0, 1, 0, 1], [0, 1, 5], [0, 1, 0, 1]],  # shared by two sentences, other counts
    [[0, 1], [1, 2], [2, 0], [0, 1, 2, 0, 1, 2]],  # every 2-gram shared, no 3-gram
    [[], [0], [0, 0, 0, 0], [0, 0]],
])
@pytest.mark.parametrize("part_records", [1, PART_RECORDS])
def test_self_matches_at_the_pruning_edges(sents, part_records):
    rows = self_rows(id_tokens(sents, 1), 5, part_records=part_records)
    assert rows[:, 2:7].tolist() == naive_self_matches(sents, 5)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_self_matches_split_between_threads(monkeypatch, threads):
    """Each thread keeps and scatters the candidates of its own sentences; the partitions
    must come out in position order whatever the split (3 pieces on 2 workers too)."""
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", threads)
    rng = np.random.default_rng(5)
    sents = [list(rng.integers(0, 4, size=rng.integers(0, 9))) for _ in range(60)]
    sents += [sents[3], sents[3][:4] + [7], sents[40] * 2]
    rows = self_rows(id_tokens(sents, 2), 4, part_records=2)
    assert rows[:, 2:6].tolist() == naive_self_matches(sents, 4)
