"""BLEU-1..N (cumulative) and the individual n-gram scores, from one statistics pass.

Cumulative BLEU-k is checked bit for bit against sacrebleu's
``BLEU(max_ngram_order=k)`` on the nasty text of :mod:`test_properties`
(every smoothing method, effective order on and off, corpus and sentence
level); individual k-gram scores against their definition (brevity penalty
times sacrebleu's k-gram precision) and against NLTK's ``corpus_bleu`` /
``sentence_bleu`` with one-hot weights on whitespace-tokenized text.
"""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from nltk.translate.bleu_score import corpus_bleu, sentence_bleu
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU
from fastbleu.metrics.bleu.formula import BLEUFormula

from testkit.text import configs, corpora, examples

logging.getLogger("sacrebleu").setLevel(logging.CRITICAL)
logging.getLogger("fastbleu").setLevel(logging.CRITICAL)

HYPS = ["the cat sat on the mat", "a b c d e", "x", "", "one two three four five six"]
REFS = [["the cat is on the mat", "a b c d f", "y z", "nothing", "one two three four five"]]


def _sacre(cfg, k):
    return SacreBLEU(**{**cfg, "max_ngram_order": k})


@examples(40)
@given(cfg=configs, corpus=corpora())
def test_cumulative_equals_sacrebleu_with_each_max_order(cfg, corpus):
    """BLEU-k of one pass == sacrebleu BLEU(max_ngram_order=k), corpus and every sentence."""
    hyps, refs = corpus
    fast = BLEU(**cfg)
    order = cfg["max_ngram_order"]
    corpus_scores = fast.cumulative_scores(hyps, refs)
    sentence_scores = fast.cumulative_scores(hyps, refs, sentence=True)
    assert corpus_scores.shape == (order,)
    assert sentence_scores.shape == (len(hyps), order)
    for k in range(1, order + 1):
        sacre = _sacre(cfg, k)
        assert corpus_scores[k - 1] == sacre.corpus_score(hyps, refs).score, k
        for i, hyp in enumerate(hyps):
            want = sacre.sentence_score(hyp, [r[i] for r in refs if r[i] is not None]).score
            assert sentence_scores[i, k - 1] == want, (k, i)


@examples(40)
@given(cfg=configs, corpus=corpora())
def test_individual_matches_definition_and_zero_weights(cfg, corpus):
    """individual k == BLEU(weights=e_k) exactly, and == BP * sacrebleu's p_k (its BLEU-N)."""
    hyps, refs = corpus
    fast = BLEU(**cfg)
    order = cfg["max_ngram_order"]
    got = fast.individual_scores(hyps, refs)
    full = _sacre(cfg, order).corpus_score(hyps, refs)
    for k in range(1, order + 1):
        onehot = [0.0] * order
        onehot[k - 1] = 1.0
        assert got[k - 1] == BLEU(**cfg, weights=onehot).corpus_score(hyps, refs).score
        p = full.precisions[k - 1]
        want = 0.0 if not any(full.counts) or p == 0 else full.bp * p
        assert got[k - 1] == pytest.approx(want, rel=1e-12, abs=1e-300), k
    rows = fast.segment_statistics(hyps, refs)
    sentence = fast.individual_scores(hyps, refs, sentence=True)
    np.testing.assert_array_equal(sentence, fast.formula.individual_scores(rows))


# -- NLTK, whitespace tokens, no smoothing -----------------------------------------------------

_words = st.sampled_from("a b c d e the cat sat on mat".split())
_sentence = st.lists(_words, min_size=0, max_size=9).map(" ".join)


@examples(30)
@given(data=st.data(), n_refs=st.integers(1, 3), order=st.integers(1, 5))
def test_individual_equals_nltk_one_hot_weights(data, n_refs, order):
    """NLTK's corpus_bleu/sentence_bleu with weights (0, .., 1, .., 0), method0 smoothing."""
    # NLTK counts max(1, total) k-grams for a hypothesis shorter than k (a quirk of its
    # modified_precision); the definitions agree for hypotheses of at least k tokens.
    n = data.draw(st.integers(1, 5))
    long_enough = st.lists(_words, min_size=order, max_size=9).map(" ".join)
    hyps = [data.draw(long_enough) for _ in range(n)]
    refs = [[data.draw(_sentence.filter(bool)) for _ in range(n)] for _ in range(n_refs)]
    fast = BLEU(tokenize="none", smooth_method="none", max_ngram_order=order)
    corpus = fast.individual_scores(hyps, refs)
    sentence = fast.individual_scores(hyps, refs, sentence=True)
    split_refs = [[r[i].split() for r in refs] for i in range(n)]
    split_hyps = [h.split() for h in hyps]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # NLTK warns about zero n-gram counts
        for k in range(1, order + 1):
            weights = tuple(1.0 if m == k else 0.0 for m in range(1, order + 1))
            want = 100 * corpus_bleu(split_refs, split_hyps, weights=weights)
            assert corpus[k - 1] == pytest.approx(want, rel=1e-9, abs=1e-250), k
            for i in range(n):
                want = 100 * sentence_bleu(split_refs[i], split_hyps[i], weights=weights)
                assert sentence[i, k - 1] == pytest.approx(want, rel=1e-9, abs=1e-250), (k, i)


# -- zero weights, by hand -------------------------------------------------------------------------


def test_zero_weights_are_allowed_and_leave_their_order_out():
    refs = [["a b c d e f"]]
    hyps = ["a b c x e f"]  # trigrams and 4-grams: no match; bigrams: 3 of 5
    plain = BLEU(smooth_method="none")
    assert plain.corpus_score(hyps, refs).score == 0.0
    # weight 0 on the zero-precision orders: they do not drag the score to 0
    two = BLEU(smooth_method="none", weights=(1, 1, 0, 0)).corpus_score(hyps, refs).score
    assert two == pytest.approx(math.sqrt(5 / 6 * 3 / 5) * 100, rel=1e-14)
    assert two == pytest.approx(BLEU(smooth_method="none").cumulative_scores(hyps, refs)[1],
                                rel=1e-14)
    bigram = BLEU(smooth_method="none", weights=(0, 1, 0, 0)).corpus_score(hyps, refs)
    assert bigram.score == pytest.approx(60.0, rel=1e-14)
    assert bigram.bp == 1.0
    assert BLEU(weights=(0, 0, 0, 1), smooth_method="none").corpus_score(hyps, refs).score == 0
    # weight 1 on order 1 alone is sacrebleu's BLEU-1, bit for bit
    assert BLEU(weights=(1, 0, 0, 0)).corpus_score(HYPS, REFS).score == \
        SacreBLEU(max_ngram_order=1).corpus_score(HYPS, REFS).score


def test_effective_order_before_every_weighted_order_scores_zero():
    metric = BLEU(effective_order=True, weights=(0, 0, 1, 0))
    assert metric.sentence_score("a b", ["a b"]).score == 0.0  # no trigram in the hypothesis
    scores = BLEU(effective_order=True).individual_scores(["a b", "a b c"], [["a b", "a b c"]],
                                                          sentence=True)
    np.testing.assert_allclose(scores, [[100, 100, 0, 0], [100, 100, 100, 0]], rtol=1e-14)


def test_brevity_penalty_is_shared_by_every_order():
    hyps, refs = ["a b c"], [["a b c d e f"]]
    bp = math.exp(1 - 6 / 3)
    np.testing.assert_allclose(BLEU(effective_order=True).individual_scores(hyps, refs),
                               [100 * bp] * 3 + [0.0], rtol=1e-13)
    np.testing.assert_allclose(BLEU(effective_order=True).cumulative_scores(hyps, refs),
                               [100 * bp] * 3 + [100 * bp], rtol=1e-13)


@pytest.mark.parametrize("weights, message", [
    ((0, 0, 0, 0), "at least one of them positive"),
    ((0.0, -1, 1, 1), "non-negative"),
    ((1, float("nan"), 1, 1), "finite"),
    ((1, float("inf"), 1, 1), "finite"),
    ((1, 1, 1), "max_ngram_order is 4"),
])
def test_bad_weights_refused(weights, message):
    with pytest.raises(ValueError, match=message):
        BLEU(weights=weights)


def test_shapes_empty_input_and_cached_references():
    metric = BLEU(references=REFS)
    assert metric.cumulative_scores(HYPS).tolist() == \
        BLEU().cumulative_scores(HYPS, REFS).tolist()
    assert metric.individual_scores(HYPS, sentence=True).shape == (len(HYPS), 4)
    assert BLEU().cumulative_scores([], [[]]).tolist() == [0.0] * 4
    assert BLEU(max_ngram_order=2).individual_scores([], [[]], sentence=True).shape == (0, 2)


def test_formula_order_scores_check_a_callers_rows():
    formula = BLEUFormula(max_order=2)
    with pytest.raises(ValueError, match="exceeds total_1"):
        formula.cumulative_scores([3, 3, 4, 2, 3, 2])
    with pytest.raises(ValueError, match="columns"):
        formula.individual_scores([[3, 3, 1, 1]])
    for k in (0, 3, 1.0, True):
        with pytest.raises(ValueError, match="from 1 to 2"):
            formula.order_formula(k)
    row = np.array([3, 3, 3, 2, 3, 2])
    np.testing.assert_allclose(formula.cumulative_scores(row), [100.0, 100.0], rtol=1e-14)
    assert formula.order_rows(row, 1).tolist() == [3, 3, 3, 3]
