"""Token ids on the GPU through the metric seam: ``BLEU().segment_statistics``,
``sentence_scores``, ``corpus_score`` and the accumulator take device arrays, leave
rows and scores on the device, and equal the CPU path's numbers."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import SIMULATED, host, skip_without_device

import fastbleu
from fastbleu import gpu

pytestmark = skip_without_device

RNG = np.random.default_rng(11)
HYP = RNG.integers(1, 7, size=(40, 12))
HYP[:, 9:] = 0  # padding
HYP[5, :] = 0  # an empty hypothesis
REFS = [np.where(RNG.random((40, 12)) < 0.3, RNG.integers(1, 7, size=(40, 12)), HYP),
        RNG.integers(1, 7, size=(40, 12))]


def _device():
    from numba import cuda

    return (gpu.DeviceIds(cuda.to_device(HYP), pad_id=0),
            [gpu.DeviceIds(cuda.to_device(r), pad_id=0) for r in REFS])


def _cpu():
    return (fastbleu.TokenIds(HYP, pad_id=0), [fastbleu.TokenIds(r, pad_id=0) for r in REFS])


@pytest.mark.parametrize("options", [{}, {"effective_order": True},
                                     {"ref_length": "shortest", "max_ngram_order": 3}])
def test_bleu_takes_device_ids_and_equals_the_cpu(options):
    on_gpu, on_cpu = fastbleu.BLEU(**options), fastbleu.BLEU(**options)
    rows = on_gpu.segment_statistics(*_device())
    assert not isinstance(rows, np.ndarray)  # left on the device
    expected = on_cpu.segment_statistics(*_cpu())
    np.testing.assert_array_equal(host(rows), expected)
    scores = host(on_gpu.sentence_scores(*_device()))
    expected_scores = on_cpu.sentence_scores(*_cpu())
    if SIMULATED:
        np.testing.assert_array_equal(scores, expected_scores)
    else:  # CUDA's log and exp: within a few units in the last place
        np.testing.assert_allclose(scores, expected_scores, rtol=1e-14, atol=0)
    assert on_gpu.corpus_score(*_device()).score == on_cpu.corpus_score(*_cpu()).score
    assert on_gpu.get_signature().format() == on_cpu.get_signature().format()
    assert "tok:ids" in on_gpu.get_signature().format()


def test_an_accumulator_sums_device_ids_on_the_device():
    acc = fastbleu.BLEU().accumulator().update(*_device()).update(*_device())
    cpu = fastbleu.BLEU().accumulator().update(*_cpu()).update(*_cpu())
    np.testing.assert_array_equal(acc.statistics, cpu.statistics)
    assert acc.n_segments == 2 * len(HYP) and acc.score().score == cpu.score().score
    assert acc.signature().format() == cpu.signature().format()


def test_lowercase_and_other_metrics_refuse_device_ids():
    with pytest.raises(ValueError, match="lowercase"):
        fastbleu.BLEU(lowercase=True).segment_statistics(*_device())
    with pytest.raises(TypeError, match="BLEU only"):
        gpu.metric_statistics(fastbleu.CHRF(), *_device())
