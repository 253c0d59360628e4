"""What one call does on the device: launches, read-backs and waits, counted for real.

The statistics of ids already on the device take one launch of the fused
kernel and nothing is read back or waited for (the sizes are decided on the
host from shapes); sentence scores take one more launch.  Counted by
:class:`launches.DeviceCalls` at numba's launch and copy points while the
kernels run; the rows are checked against the CPU path's as well.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import LIMITS, host, skip_without_device
from hypothesis import HealthCheck, given, settings, strategies as st
from launches import DeviceCalls

import fastbleu
from fastbleu import gpu

pytestmark = skip_without_device


def device(array):
    from numba import cuda

    return cuda.to_device(np.ascontiguousarray(array))


def cpu_rows(hyp, refs, max_order=4):
    return fastbleu.BLEU(max_ngram_order=max_order).segment_statistics(hyp, refs)


def ragged(rows, dtype=np.int64):
    offsets = np.cumsum([0] + [len(r) for r in rows]).astype(np.int64)
    values = np.array([x for r in rows for x in r], dtype=dtype)
    return values, offsets


def test_statistics_of_device_ids_one_launch_nothing_read_back():
    hyp = np.array([[0, 5, 6, 7, 5, 6], [5, 5, 5, 0, 0, 0], [0, 0, 0, 0, 0, 0]])
    ref = np.array([[5, 6, 7, 8, 0, 0], [5, 5, 0, 0, 0, 0], [4, 0, 0, 0, 0, 0]])
    gpu.bleu_statistics(device(hyp), device(ref), pad_id=0)  # compiled outside the count
    with DeviceCalls() as calls:
        rows = gpu.bleu_statistics(device(hyp), device(ref), pad_id=0)
    assert dict(calls.kernels) == {"bleu_rows": 1}
    assert (calls.readbacks, calls.waits) == (0, 0)
    expected = cpu_rows(fastbleu.TokenIds(hyp, pad_id=0), [fastbleu.TokenIds(ref, pad_id=0)])
    np.testing.assert_array_equal(host(rows), expected)


@pytest.mark.parametrize("which", range(len(LIMITS)))
def test_ragged_masked_and_long_segments_one_launch(which):
    # Two reference streams, device offsets and a device mask, a segment long enough for
    # the global-memory table (with the small tables of the test limits), an empty one.
    rng = np.random.default_rng(which)
    hyps = [list(rng.integers(1, 4, 40)), [1, 2, 3], [], list(rng.integers(1, 4, 7))]
    refs1 = [list(rng.integers(1, 4, 45)), [1, 2], [1], list(rng.integers(1, 4, 9))]
    refs2 = [list(rng.integers(1, 4, 30)), [3, 2, 1], [2], []]
    mask = np.array([True, False, True, True])
    streams = [ragged(r) for r in (hyps, refs1, refs2)]
    dev = [gpu.DeviceIds(device(v), device(o)) for v, o in streams]
    dev[2] = gpu.DeviceIds(dev[2], valid=device(mask))
    with DeviceCalls() as calls:
        rows = gpu.bleu_statistics(dev[0], dev[1:], limits=LIMITS[which])
    assert dict(calls.kernels) == {"bleu_rows": 1}
    assert (calls.readbacks, calls.waits) == (0, 0)
    cpu = [fastbleu.TokenIds(v, o) for v, o in streams]
    cpu[2] = fastbleu.TokenIds(*streams[2], valid=mask)
    np.testing.assert_array_equal(host(rows), cpu_rows(cpu[0], cpu[1:]))


def test_sentence_scores_two_launches():
    hyp = np.array([[5, 6, 7, 8, 9], [5, 5, 6, 6, 1]])
    ref = np.array([[5, 6, 7, 8, 1], [5, 6, 6, 1, 1]])
    bleu = fastbleu.BLEU(effective_order=True)
    ids = gpu.DeviceIds(device(hyp)), [gpu.DeviceIds(device(ref))]  # the GPU path's seam
    bleu.sentence_scores(*ids)
    with DeviceCalls() as calls:
        scores = bleu.sentence_scores(*ids)
    assert dict(calls.kernels) == {"bleu_rows": 1, "bleu_scores": 1}
    assert (calls.readbacks, calls.waits) == (0, 0)
    expected = fastbleu.BLEU(effective_order=True).sentence_scores(
        fastbleu.TokenIds(hyp), [fastbleu.TokenIds(ref)])
    np.testing.assert_allclose(host(scores), expected, rtol=1e-13)


def test_streams_of_two_dtypes_one_more_launch():
    hyp = np.array([[1, 2, 3, 4]], dtype=np.int32)
    ref = np.array([[1, 2, 3, 5]], dtype=np.int64)
    with DeviceCalls() as calls:
        rows = gpu.bleu_statistics(device(hyp), device(ref))
    assert dict(calls.kernels) == {"widen_rows": 1, "bleu_rows": 1}
    assert calls.readbacks == 0
    np.testing.assert_array_equal(host(rows), cpu_rows(fastbleu.TokenIds(hyp),
                                                       [fastbleu.TokenIds(ref)]))
    # Offsets of two dtypes (int32 from one library, int64 from another): the int32 widened.
    values, offsets = ragged([[1, 2, 3], [4, 4]])
    with DeviceCalls() as calls:
        rows = gpu.bleu_statistics(gpu.DeviceIds(device(values), device(offsets.astype(np.int32))),
                                   gpu.DeviceIds(device(values), device(offsets)))
    assert dict(calls.kernels) == {"widen": 1, "bleu_rows": 1}
    np.testing.assert_array_equal(host(rows), cpu_rows(fastbleu.TokenIds(values, offsets),
                                                       [fastbleu.TokenIds(values, offsets)]))


def test_a_strided_stream_among_contiguous_ones_is_copied_once():
    ids = np.arange(24).reshape(4, 6) % 5
    ref = np.ascontiguousarray(ids[:, 1:5])
    with DeviceCalls() as calls:
        rows = gpu.bleu_statistics(device(ids)[:, :4], device(ref))
    assert dict(calls.kernels) == {"widen_rows": 1, "bleu_rows": 1}
    np.testing.assert_array_equal(host(rows), cpu_rows(fastbleu.TokenIds(ids[:, :4]),
                                                       [fastbleu.TokenIds(ref)]))


def test_empty_batch_launches_nothing():
    with DeviceCalls() as calls:
        rows = gpu.bleu_statistics(device(np.zeros((0, 3), np.int64)),
                                   device(np.zeros((0, 3), np.int64)))
    assert host(rows).shape == (0, 10)
    assert (calls.launches, calls.readbacks) == (0, 0)


def test_malformed_device_input_marked_or_raised_when_checked():
    # A negative id left after padding (e.g. -100 labels): the row is -1 without a check;
    # check=True reads the kernel's report back (once) and raises.
    hyp = device(np.array([[1, -100, 2], [1, 2, 3]]))
    ref = device(np.array([[1, 2, 3], [1, 2, 3]]))
    with DeviceCalls() as calls:
        rows = gpu.bleu_statistics(hyp, ref)
    assert calls.readbacks == 0
    rows = host(rows)
    assert rows[0].tolist() == [-1] * 10
    assert rows[1].tolist() == cpu_rows(fastbleu.TokenIds(np.array([[1, 2, 3]])),
                                        [fastbleu.TokenIds(np.array([[1, 2, 3]]))])[0].tolist()
    with DeviceCalls() as calls, pytest.raises(ValueError, match="segment 0 holds a negative"):
        gpu.bleu_statistics(hyp, ref, check=True)
    assert calls.readbacks == 1
    # Scored, the row is NaN (not the 100 a row of -1 would give); summed, it raises.
    bleu = fastbleu.BLEU(effective_order=True)
    scores = host(gpu.sentence_scores(gpu.bleu_statistics(hyp, ref), bleu.formula))
    assert np.isnan(scores[0]) and scores[1] == pytest.approx(100.0)
    assert np.isnan(host(gpu.nltk_scores(gpu.bleu_statistics(hyp, ref)))[0])
    ids = gpu.DeviceIds(hyp), [gpu.DeviceIds(ref)]
    assert np.isnan(host(fastbleu.BLEU().sentence_scores(*ids))[0])
    with pytest.raises(ValueError, match="1 of 2 segments have malformed ids"):
        fastbleu.BLEU().corpus_score(*ids)
    with DeviceCalls() as calls:
        sums = gpu.corpus_statistics(gpu.bleu_statistics(hyp, ref), check=False)
    assert calls.readbacks == 0
    assert host(sums).tolist() == (rows[0] + rows[1]).tolist()
    missing = gpu.DeviceIds(ref, valid=device(np.array([True, False])))
    assert host(gpu.bleu_statistics(hyp, missing))[1].tolist() == [-1] * 10
    with pytest.raises(ValueError, match="segment 1 has no reference"):
        gpu.bleu_statistics(ref, missing, check=True)
    bad = gpu.DeviceIds(device(np.array([1, 2, 3])), device(np.array([0, 3, 1])))
    assert host(gpu.bleu_statistics(bad, gpu.DeviceIds(bad, valid=None)))[1].tolist() == \
        [-1] * 10
    with pytest.raises(ValueError, match="offsets must be non-decreasing"):
        gpu.bleu_statistics(bad, bad, check=True)


@st.composite
def device_batches(draw):
    """Ragged or padded ids, long and short segments, padding, empty rows."""
    n = draw(st.integers(1, 5))
    n_refs = draw(st.integers(1, 2))
    vocab = draw(st.integers(1, 5))
    pad = draw(st.sampled_from([None, 0]))
    streams = []
    for _ in range(1 + n_refs):
        lengths = [draw(st.sampled_from([0, 1, 3, 8, 20, 70])) for _ in range(n)]
        streams.append([draw(st.lists(st.integers(0 if pad is None else 1, vocab),
                                      min_size=k, max_size=k)) for k in lengths])
    return streams, pad, draw(st.booleans())


@settings(max_examples=20, deadline=None, suppress_health_check=list(HealthCheck))
@given(device_batches(), st.integers(1, 4), st.sampled_from(range(len(LIMITS))))
def test_device_statistics_equal_cpu_in_one_launch(batch, max_order, which):
    streams, pad, is_ragged = batch
    cpu, dev = [], []
    for rows in streams:
        if is_ragged:
            values, offsets = ragged(rows, np.int32)
            cpu.append(fastbleu.TokenIds(values, offsets))
            dev.append(gpu.DeviceIds(device(values), device(offsets)))
        else:  # padded on the right with pad_id (or cut to the shortest without one)
            width = max(len(r) for r in rows) if pad is not None else min(len(r) for r in rows)
            values = np.full((len(rows), width), 0, dtype=np.int32)
            for i, r in enumerate(rows):
                values[i, :min(len(r), width)] = r[:width]
            cpu.append(fastbleu.TokenIds(values, pad_id=pad))
            dev.append(gpu.DeviceIds(device(values), pad_id=pad))
    with DeviceCalls() as calls:
        rows = gpu.bleu_statistics(dev[0], dev[1:], max_order=max_order, limits=LIMITS[which])
    assert dict(calls.kernels) == {"bleu_rows": 1}
    assert calls.readbacks == 0
    np.testing.assert_array_equal(host(rows), cpu_rows(cpu[0], cpu[1:], max_order))


@settings(max_examples=30, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3000), min_size=3, max_size=3), min_size=1,
                max_size=8))
def test_global_table_regions_are_disjoint_and_inside_the_allocation(lengths):
    # Blocks count their long segments at once, each in its own region of the global
    # tables; the simulator runs one block at a time, so the layout is checked here.
    from fastbleu._kernels.cuda import counting
    from fastbleu.gpu.statistics import KernelLimits, global_slots

    lengths = np.array(lengths)  # segments x (hypothesis, reference 1, reference 2)
    n = len(lengths)
    views, start, params = [], np.zeros((3, n), np.int64), []
    base = 0
    for s in range(3):
        offsets = np.concatenate([[0], np.cumsum(lengths[:, s])])
        start[s] = base + offsets[:-1]
        views.append((np.zeros((1, max(int(offsets[-1]), 1))), offsets, None, 0, False))
        params += [1, 0, 0, 0, 0, 0, 0, base]
        base += max(int(offsets[-1]), 1)
    slots = global_slots(views, KernelLimits(short_tokens=0, shared_slots=64), 64)
    regions = []
    for i in range(n):
        first = counting.region_base.py_func(start, tuple(params), i)
        size = counting.table_size.py_func(int(lengths[i, 1:].sum())) + 1
        regions.append((first, first + size))
    for (a, b), (c, d) in zip(regions, regions[1:]):
        assert b <= c
    for i in range(n):  # segments whose references exceed the shared table use theirs
        if 2 * lengths[i, 1:].sum() > 64:
            assert regions[i][1] <= slots


@pytest.mark.parametrize("length, slots", [(150, 512), (20, 0), (700, 2048), (1100, 2048)])
def test_shared_memory_sized_from_the_shapes(length, slots):
    # 2-D ids of known width: all short (no shared table), a table cut to the references'
    # size, the largest table, references past it (global tables). Rows equal the CPU's
    # whatever the plan (the simulator checks every index against the memory given).
    from fastbleu.gpu.statistics import _stream_views, id_streams, shared_plan
    from fastbleu.gpu.arrays import Context
    from numba import cuda

    rng = np.random.default_rng(length)
    hyp = rng.integers(1, 6, size=(2, length))
    ref = np.where(rng.random((2, length)) < 0.3, rng.integers(1, 6, size=(2, length)), hyp)
    limits = gpu.KernelLimits(short_tokens=64, group=2, block=8, grid=2)
    context = Context(cuda)
    views = _stream_views(context, id_streams(device(hyp), device(ref), None, None))
    groups = 1 if 2 * length > 64 else 4
    assert shared_plan(views, limits, groups, 8)[0] == slots
    rows = gpu.bleu_statistics(device(hyp), device(ref), limits=limits)
    np.testing.assert_array_equal(host(rows), cpu_rows(fastbleu.TokenIds(hyp),
                                                       [fastbleu.TokenIds(ref)]))


def test_host_ids_keep_their_values_beside_narrower_device_ids():
    # int32 ids on the device, int64 ids from the host past int32's range: the host's are
    # not narrowed (the device stream is widened instead, one launch more).
    hyp = np.array([[1, 2, 3, 4]], dtype=np.int32)
    ref = np.array([[1, 2, 3_000_000_003, 4]], dtype=np.int64)
    rows = gpu.bleu_statistics(device(hyp), ref)
    np.testing.assert_array_equal(host(rows), cpu_rows(fastbleu.TokenIds(hyp),
                                                       [fastbleu.TokenIds(ref)]))
    assert host(rows)[0, 2:6].tolist() == [3, 1, 0, 0]
    with DeviceCalls() as calls:  # ids that fit int32 are copied as int32: one launch
        gpu.bleu_statistics(device(hyp), ref % 1000)
    assert dict(calls.kernels) == {"bleu_rows": 1}


@pytest.mark.parametrize("masked", [False, True])
@pytest.mark.parametrize("call", ["segment_statistics", "sentence_scores"])
def test_metric_id_paths_read_nothing_back(call, masked):
    # BLEU's own methods on device ids, references missing by a mask on the device or not:
    # nothing comes back and nothing waits; num_refs (counted by the same launch where a mask
    # is on the device) is read back once, when the signature asks for it.
    hyp = np.array([[5, 6, 7, 8, 9], [5, 5, 6, 6, 1], [1, 2, 3, 4, 5]])
    ref = np.array([[5, 6, 7, 8, 1], [5, 6, 6, 1, 1], [1, 2, 3, 4, 4]])
    mask = np.array([True, False, True])
    other = gpu.DeviceIds(device(ref[::-1]), valid=device(mask) if masked else None)
    ids = gpu.DeviceIds(device(hyp)), [gpu.DeviceIds(device(ref)), other]
    bleu = fastbleu.BLEU(effective_order=True)
    getattr(bleu, call)(*ids)  # compiled outside the count
    with DeviceCalls() as calls:
        result = getattr(bleu, call)(*ids)
    assert (calls.readbacks, calls.waits) == (0, 0)
    assert calls.kernels["bleu_rows"] == 1
    with DeviceCalls() as calls:
        signature = str(bleu.get_signature())
    assert (calls.readbacks, calls.waits) == ((1, 1) if masked else (0, 0))
    with DeviceCalls() as calls:
        assert str(bleu.get_signature()) == signature  # read once
    assert calls.readbacks == 0
    cpu = fastbleu.BLEU(effective_order=True)
    expected = getattr(cpu, call)(fastbleu.TokenIds(hyp), [
        fastbleu.TokenIds(ref), fastbleu.TokenIds(ref[::-1], valid=mask if masked else None)])
    np.testing.assert_allclose(host(result), expected, rtol=1e-13)
    assert signature == str(cpu.get_signature()) and ("nrefs:var" in signature) == masked


def test_metric_corpus_score_reads_back_the_sums_only():
    # The summed row and the count of malformed rows: no read-back of the masks.
    hyp = np.array([[5, 6, 7, 8, 9], [5, 5, 6, 6, 1]])
    ref = np.array([[5, 6, 7, 8, 1], [5, 6, 6, 1, 1]])
    mask = np.array([True, True])  # every reference present: num_refs is 2
    ids = gpu.DeviceIds(device(hyp)), [gpu.DeviceIds(device(ref)),
                                       gpu.DeviceIds(device(ref), valid=device(mask))]
    bleu = fastbleu.BLEU()
    bleu.corpus_score(*ids)
    with DeviceCalls() as calls:
        score = bleu.corpus_score(*ids)
    assert calls.readbacks == 1  # the summed row and the malformed rows' count, together
    cpu = fastbleu.BLEU()
    expected = cpu.corpus_score(fastbleu.TokenIds(hyp), [fastbleu.TokenIds(ref)] * 2)
    assert score.score == expected.score
    assert bleu.num_refs == 2 and str(bleu.get_signature()) == str(cpu.get_signature())


def test_pending_num_refs_stands_for_its_int():
    import pickle

    from fastbleu.gpu.statistics import statistics_and_num_refs

    ref = device(np.array([[1, 2], [3, 4]]))
    masks = {(True, True): 2, (True, False): -1}
    for mask, expected in masks.items():
        _, refs = statistics_and_num_refs(ref, [ref, gpu.DeviceIds(ref, valid=device(
            np.array(mask)))])
        assert type(refs).__name__ == "PendingNumRefs"
        assert refs == expected and int(refs) == expected and hash(refs) == hash(expected)
        assert f"{refs}" == str(expected) and pickle.loads(pickle.dumps(refs)) == expected
        assert type(pickle.loads(pickle.dumps(refs))) is int
    # Host masks and no masks are counted on the host: a plain int.
    _, refs = statistics_and_num_refs(ref, [ref, gpu.DeviceIds(ref, valid=np.array([1, 0],
                                                                                   bool))])
    assert type(refs) is int and refs == -1
    _, refs = statistics_and_num_refs(device(np.zeros((0, 2), np.int64)), [gpu.DeviceIds(
        device(np.zeros((0, 2), np.int64)), valid=device(np.zeros(0, bool)))] * 3)
    assert type(refs) is int and refs == 3


@pytest.mark.parametrize("mask, expected", [((True, True, True), 2), ((True, False, True), -1)])
def test_num_refs_is_a_plain_int_wherever_it_is_read(mask, expected):
    """The count stays on the device until used, but whatever reads it (the metric's and the
    accumulator's ``num_refs``, a signature's dict) gets the plain int: ``isinstance``,
    ``json``, ``<`` and arithmetic work as on the CPU."""
    import copy
    import json

    from fastbleu.gpu.statistics import statistics_and_num_refs

    hyp = np.array([[5, 6, 7, 8, 9], [5, 5, 6, 6, 1], [1, 2, 3, 4, 5]])
    ref = np.array([[5, 6, 7, 8, 1], [5, 6, 6, 1, 1], [1, 2, 3, 4, 4]])

    def ids():
        return gpu.DeviceIds(device(hyp)), [gpu.DeviceIds(device(ref)), gpu.DeviceIds(
            device(ref[::-1]), valid=device(np.array(mask)))]

    nrefs = "var" if expected == -1 else expected
    bleu = fastbleu.BLEU()
    bleu.segment_statistics(*ids())
    copied = copy.copy(bleu)  # before anything read it
    for metric in (bleu, copied):
        assert type(metric.num_refs) is int and metric.num_refs == expected
        assert metric.num_refs < 3 and metric.num_refs + 1 == expected + 1
        assert json.loads(json.dumps(metric.get_signature().info))["nrefs"] == nrefs
    _, pending = statistics_and_num_refs(device(hyp), ids()[1])
    assert type(pending).__name__ == "PendingNumRefs"
    info = fastbleu.BLEU().signature(pending).info
    assert type(info["nrefs"]) is type(nrefs) and info["nrefs"] == nrefs
    plain = fastbleu.BLEU().accumulator().update(fastbleu.TokenIds(hyp), [
        fastbleu.TokenIds(ref), fastbleu.TokenIds(ref[::-1], valid=np.array(mask))])
    for first_pending in (True, False):
        on_device = fastbleu.BLEU().accumulator().update(*ids())
        assert type(on_device.num_refs) is int and on_device.num_refs == expected
        on_device = fastbleu.BLEU().accumulator().update(*ids())
        other = copy.deepcopy(plain)
        merged = on_device.merge(other) if first_pending else other.merge(on_device)
        assert type(merged.num_refs) is int and merged.num_refs == expected
        assert json.loads(json.dumps(merged.signature().info))["nrefs"] == nrefs


def test_summed_row_reads_the_sums_and_the_check_back_in_one_copy():
    from fastbleu.gpu.scores import summed_row

    hyp = device(np.array([[1, 2, 3, 4], [1, -100, 2, 3], [4, 3, 2, 1]]))
    ref = device(np.array([[1, 2, 3, 5], [1, 2, 3, 4], [4, 3, 2, 2]]))
    rows = gpu.bleu_statistics(hyp, ref)
    good = gpu.bleu_statistics(hyp[::2], ref[::2])
    summed_row(good)
    with DeviceCalls() as calls:
        summed = summed_row(good)
    assert (calls.readbacks, calls.waits) == (1, 1)
    assert isinstance(summed, np.ndarray) and summed.dtype == np.int64
    assert summed.tolist() == host(good).sum(axis=0).tolist()
    assert summed.tolist() == host(gpu.corpus_statistics(good)).tolist()
    with pytest.raises(ValueError, match="1 of 3 segments have malformed ids"):
        summed_row(rows)
    with DeviceCalls() as calls:
        empty = summed_row(device(np.zeros((0, 10), np.int64)))
    assert empty.tolist() == [0] * 10 and calls.readbacks == 0
