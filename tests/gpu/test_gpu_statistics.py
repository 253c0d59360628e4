"""GPU BLEU statistics of token ids against the CPU path's, value for value.

Runs on a GPU, or on numba's CUDA simulator through ``test_gpu_simulator.py``.
Every kernel (short segments, shared-memory tables, global-memory tables
with every probe forced to collide) gets random batches with ragged lengths,
padding anywhere, end-of-sequence ids, repeated n-grams, empty and missing
segments.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import LIMITS, host, skip_without_device
from hypothesis import HealthCheck, given, settings, strategies as st

import fastbleu
from fastbleu import gpu

pytestmark = skip_without_device


def cpu_rows(hyp, refs, max_order=4, ref_length="closest", **ids):
    bleu = fastbleu.BLEU(max_ngram_order=max_order, ref_length=ref_length)
    return bleu.segment_statistics(hyp, refs)


@st.composite
def batches(draw):
    n = draw(st.integers(0, 5))
    n_refs = draw(st.integers(1, 2))
    vocab = draw(st.integers(1, 4))  # few ids: repeated n-grams
    width = draw(st.integers(0, 9))
    pad = draw(st.sampled_from([None, 0]))
    eos = draw(st.sampled_from([None, 0, 1]))
    ragged = draw(st.booleans())
    dtype = draw(st.sampled_from([np.int64, np.int32]))
    streams = []
    for s in range(1 + n_refs):
        lengths = [draw(st.integers(0, width)) for _ in range(n)]
        rows = [draw(st.lists(st.integers(0, vocab), min_size=k, max_size=k)) for k in lengths]
        valid = None
        if s > 0 and n and draw(st.booleans()):
            valid = np.array([draw(st.booleans()) for _ in range(n)])
        streams.append((rows, valid))
    # Every segment keeps at least one reference.
    for i in range(n):
        if all(v is not None and not v[i] for _, v in streams[1:]):
            streams[1][1][i] = True
    return streams, dict(pad_id=pad, eos_id=eos), ragged, dtype


def as_inputs(streams, ids, ragged, dtype):
    """The same segments as CPU TokenIds and as GPU DeviceIds (numpy, copied over)."""
    cpu, dev = [], []
    for rows, valid in streams:
        if ragged:
            offsets = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
            values = np.array([x for r in rows for x in r], dtype=dtype)
            cpu.append(fastbleu.TokenIds(values, offsets, valid=valid, **ids))
            dev.append(gpu.DeviceIds(values, offsets, valid=valid, **ids))
        else:  # padded to a rectangle with ids that pad_id drops (or 2-D rows of equal width)
            width = max([len(r) for r in rows], default=0)
            fill = ids["pad_id"]
            if fill is None:
                width = min([len(r) for r in rows], default=0)
                rows = [r[:width] for r in rows]
                fill = 0
            values = np.full((len(rows), width), fill, dtype=dtype)
            for i, r in enumerate(rows):
                values[i, :len(r)] = r
            cpu.append(fastbleu.TokenIds(values, valid=valid, **ids))
            dev.append(gpu.DeviceIds(values, valid=valid, **ids))
    return cpu, dev


@settings(max_examples=24, deadline=None, suppress_health_check=list(HealthCheck))
@given(batches(), st.integers(1, 5), st.sampled_from(["closest", "shortest", "average"]),
       st.sampled_from(range(len(LIMITS))))
def test_statistics_equal_cpu(batch, max_order, ref_length, which):
    streams, ids, ragged, dtype = batch
    cpu, dev = as_inputs(streams, ids, ragged, dtype)
    expected = cpu_rows(cpu[0], cpu[1:], max_order, ref_length)
    rows = gpu.bleu_statistics(dev[0], dev[1:], max_order=max_order, ref_length=ref_length,
                               limits=LIMITS[which])
    np.testing.assert_array_equal(host(rows), expected)


@pytest.mark.parametrize("which", range(len(LIMITS)))
def test_repeated_ngrams_and_clipping(which):
    # "the the the ..." against references holding at most two: clipped to two (Papineni).
    hyp = np.array([[7] * 9, [1, 2, 1, 2, 1, 2, 1, 2, 3]])
    refs = [np.array([[7, 7, 3, 3, 3, 3, 3, 3, 3], [1, 2, 1, 3, 3, 3, 3, 3, 3]]),
            np.array([[3, 7, 3, 3, 3, 3, 3, 3, 3], [2, 1, 2, 1, 2, 1, 9, 9, 9]])]
    rows = gpu.bleu_statistics(hyp, refs, limits=LIMITS[which])
    expected = cpu_rows(fastbleu.TokenIds(hyp), [fastbleu.TokenIds(r) for r in refs])
    np.testing.assert_array_equal(host(rows), expected)
    assert host(rows)[0, 2] == 2


def test_long_segment_in_global_memory():
    # 300 tokens: past the short and shared kernels with the default limits.
    rng = np.random.default_rng(1)
    hyp = rng.integers(0, 6, size=(2, 300))
    ref = np.where(rng.random((2, 300)) < 0.3, rng.integers(0, 6, size=(2, 300)), hyp)
    limits = gpu.KernelLimits(short_tokens=0, shared_slots=64, group=2, block=8, grid=1)
    rows = gpu.bleu_statistics(hyp, ref, limits=limits)
    np.testing.assert_array_equal(host(rows), cpu_rows(fastbleu.TokenIds(hyp),
                                                       [fastbleu.TokenIds(ref)]))


def test_left_padding_with_eos_equal_to_pad():
    # GPT-2's convention: pad_id == eos_id, batches padded on the left.
    hyp = np.array([[0, 0, 5, 6, 7, 0, 0], [5, 6, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 0]])
    ref = np.array([[5, 6, 7, 8, 0, 0, 0], [0, 5, 6, 0, 9, 9, 9], [4, 0, 0, 0, 0, 0, 0]])
    rows = gpu.bleu_statistics(hyp, ref, pad_id=0, eos_id=0, limits=LIMITS[0])
    expected = cpu_rows(fastbleu.TokenIds(hyp, pad_id=0, eos_id=0),
                        [fastbleu.TokenIds(ref, pad_id=0, eos_id=0)])
    np.testing.assert_array_equal(host(rows), expected)
    assert host(rows)[:, 0].tolist() == [3, 2, 0]


def test_empty_batch_and_wide_rows():
    assert host(gpu.bleu_statistics(np.zeros((0, 4), np.int64), np.zeros((0, 4), np.int64),
                                    max_order=2)).shape == (0, 6)
    empty = gpu.DeviceIds(np.zeros(0, np.int64), np.zeros(3, np.int64))
    rows = host(gpu.bleu_statistics(empty, empty, limits=LIMITS[0]))
    assert rows.tolist() == [[0] * 10, [0] * 10]


@pytest.mark.parametrize("hyp, refs, kwargs, message", [
    (np.array([[1, -100, 2]]), np.array([[1, 2, 3]]), {}, "negative token id"),
    (np.array([[1, 2]]), gpu.DeviceIds(np.array([[1, 2]]), valid=np.array([False])), {},
     "segment 0 has no reference"),
    (gpu.DeviceIds(np.array([1, 2, 3]), np.array([0, 2, 1])), np.array([[1], [2]]), {},
     "offsets must be non-decreasing"),
    (np.array([[1, 2]]), np.array([[1, 2], [3, 4]]), {}, "references\\[0\\] has 2 segments"),
    (np.array([1, 2, 3]), np.array([[1]]), {}, "2-D"),
    (np.array([[1.5]]), np.array([[1]]), {}, "integer token ids"),
    (np.array([[1]]), [], {}, "references is empty"),
    (np.array([[1]]), np.array([[1]]), {"max_order": 0}, "max_order"),
    (np.array([[1]]), np.array([[1]]), {"ref_length": "longest"}, "ref_length"),
    (np.array([[1]]), np.array([[1]]), {"pad_id": 1.5}, "pad_id"),
])
def test_refused_inputs(hyp, refs, kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        gpu.bleu_statistics(hyp, refs, **kwargs)


def test_device_arrays_in_and_out():
    # Arrays already on the device (numba's here; torch/CuPy the same way) are read in place.
    from numba import cuda

    hyp = np.array([5, 6, 7, 5, 6, 9, 9], dtype=np.int32)
    offsets = np.array([0, 3, 5, 7])
    ref = np.array([[5, 6, 7, 8], [5, 6, 0, 0], [9, 0, 0, 0]])
    ids = gpu.DeviceIds(cuda.to_device(hyp), cuda.to_device(offsets))
    rows = gpu.bleu_statistics(ids, gpu.DeviceIds(cuda.to_device(ref), pad_id=0),
                               limits=LIMITS[0])
    assert hasattr(rows, "copy_to_host")  # a device array, not a host copy
    expected = cpu_rows(fastbleu.TokenIds(hyp, offsets), [fastbleu.TokenIds(ref, pad_id=0)])
    np.testing.assert_array_equal(host(rows), expected)
