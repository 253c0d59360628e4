"""Scores and sums of statistics rows on the GPU against the CPU formulas.

In the simulator the kernels' ``math.log``/``math.exp`` are Python's, so the
scores are the CPU path's bit for bit; on a GPU they are CUDA's, within a few
units in the last place.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gpu_device import LIMITS, SIMULATED, host, skip_without_device

import fastbleu
from fastbleu import gpu
from fastbleu.nltk import SmoothingFunction, sentence_bleu

pytestmark = skip_without_device

RNG = np.random.default_rng(7)
HYP = RNG.integers(0, 6, size=(12, 8))
HYP[:, 5:] = 0  # padding
HYP[3, :] = 0  # an empty hypothesis
HYP[4, 1:] = 0  # one token
REFS = [np.where(RNG.random((12, 8)) < 0.4, RNG.integers(0, 6, size=(12, 8)), HYP),
        RNG.integers(0, 6, size=(12, 8))]
REFS[0][5] = [9, 9, 9, 9, 9, 9, 9, 9]  # nothing in common


def close(actual, expected):
    if SIMULATED:
        np.testing.assert_array_equal(actual, expected)
    else:
        np.testing.assert_allclose(actual, expected, rtol=1e-14, atol=0)


def rows_of(max_order=4, ref_length="closest"):
    return gpu.bleu_statistics(HYP, REFS, pad_id=0, max_order=max_order, ref_length=ref_length,
                               limits=LIMITS[0])


@pytest.mark.parametrize("options", [
    {}, {"effective_order": True}, {"smooth_method": "floor"},
    {"smooth_method": "add-k", "smooth_value": 2}, {"smooth_method": "none"},
    {"weights": (0.5, 0.0, 0.3, 0.2)}, {"ref_length": "average", "effective_order": True},
    {"max_ngram_order": 2},
])
def test_sentence_scores_equal_cpu(options):
    bleu = fastbleu.BLEU(**options)
    rows = rows_of(bleu.formula.max_order, bleu.ref_length)
    close(host(gpu.sentence_scores(rows, bleu.formula)),
          bleu.formula.scores(host(rows), check=False))


def test_corpus_statistics_and_score():
    rows = rows_of()
    np.testing.assert_array_equal(host(gpu.corpus_statistics(rows)), host(rows).sum(axis=0))
    bleu = fastbleu.BLEU()
    cpu = bleu.corpus_score(fastbleu.TokenIds(HYP, pad_id=0),
                            [fastbleu.TokenIds(r, pad_id=0) for r in REFS])
    on_gpu = fastbleu.BLEU()
    score = gpu.corpus_score(on_gpu, gpu.DeviceIds(HYP, pad_id=0),
                             [gpu.DeviceIds(r, pad_id=0) for r in REFS])
    assert score.score == cpu.score and str(on_gpu.get_signature()) == str(bleu.get_signature())


def test_metric_statistics_records_the_signature():
    bleu = fastbleu.BLEU()
    refs = [gpu.DeviceIds(REFS[0], pad_id=0),
            gpu.DeviceIds(REFS[1], pad_id=0, valid=np.arange(12) % 2 == 0)]
    rows = gpu.metric_statistics(bleu, gpu.DeviceIds(HYP, pad_id=0), refs)
    assert host(rows).shape == (12, 10)
    assert bleu.num_refs == -1 and "tok:ids" in bleu.get_signature().format()
    with pytest.raises(ValueError, match="lowercase"):
        gpu.metric_statistics(fastbleu.BLEU(lowercase=True), HYP, REFS)
    with pytest.raises(TypeError, match="BLEU only"):
        gpu.metric_statistics(fastbleu.CHRF(), HYP, REFS)


def _nltk(method, weights, auto_reweigh):
    smoothing = getattr(SmoothingFunction(), f"method{method}")
    scores = []
    for i in range(HYP.shape[0]):
        hyp = [str(x) for x in HYP[i] if x]
        refs = [[str(x) for x in r[i] if x] for r in REFS]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                scores.append(float(sentence_bleu(refs, hyp, weights, smoothing, auto_reweigh)))
        except AssertionError:  # method 6 without trigram matches
            scores.append(np.nan)
    return np.array(scores)


@pytest.mark.parametrize("method", range(8))
@pytest.mark.parametrize("weights, auto_reweigh", [((0.25,) * 4, False), ((0.25,) * 4, True),
                                                   ((0.5, 0.3, 0.2), False)])
def test_nltk_sentence_bleu_equals_nltk(method, weights, auto_reweigh):
    smoothing = getattr(SmoothingFunction(), f"method{method}")
    scores = host(gpu.nltk_sentence_bleu(HYP, REFS, weights, smoothing, auto_reweigh,
                                         pad_id=0))
    # NLTK keeps exact fractions for some methods (5, 6, 7); floats here: a few ulps.
    np.testing.assert_allclose(scores, _nltk(method, weights, auto_reweigh), rtol=1e-13,
                               atol=0)


def test_nltk_scores_refuse_short_rows_and_custom_smoothing():
    rows = rows_of(max_order=4)
    with pytest.raises(ValueError, match="need 5"):
        gpu.nltk_scores(rows, smoothing_function=SmoothingFunction().method5)
    with pytest.raises(TypeError, match="custom callable"):
        gpu.nltk_scores(rows, smoothing_function=lambda p_n, **kw: p_n)
