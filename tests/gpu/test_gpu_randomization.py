"""Approximate randomization on the GPU against the CPU's, on numpy's own coins."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import SIMULATED, host, skip_without_device

import fastbleu
from fastbleu import gpu
from fastbleu.significance.resampling import randomization_scores as cpu_randomization

pytestmark = skip_without_device


def statistics(seed: int, n: int, n_systems: int, length: int = 7, **options):
    """The rows (on the device) of a baseline and ``n_systems`` systems of ``n`` segments."""
    rng = np.random.default_rng(seed)
    refs = [rng.integers(1, 6, size=(n, length)) for _ in range(2)]
    rows = []
    for _ in range(n_systems + 1):
        hyp = np.where(rng.random((n, length)) < 0.5, refs[0], rng.integers(1, 6, (n, length)))
        rows.append(gpu.bleu_statistics(hyp, refs, **options))
    return rows


def check_equal(rows, formula, n_trials, seed):
    a, b = gpu.randomization_scores(rows[0], rows[1:], formula, n_trials=n_trials, seed=seed)
    a, b = host(a), host(b)
    rows = [host(r) for r in rows]
    expected_a, expected_b = cpu_randomization(rows[0], rows[1:], formula, n_trials,
                                               np.random.default_rng(seed))
    assert a.shape == b.shape == (len(rows) - 1, n_trials)
    if SIMULATED:  # Python's log and exp: the CPU's, to the bit
        np.testing.assert_array_equal(a, expected_a)
        np.testing.assert_array_equal(b, expected_b)
    else:  # CUDA's log and exp (libdevice)
        np.testing.assert_allclose(a, expected_a, rtol=1e-14)
        np.testing.assert_allclose(b, expected_b, rtol=1e-14)
    return a, b


@pytest.mark.parametrize("seed, n, n_trials, n_systems", [
    (12345, 45, 37, 2),   # n not a multiple of 32, trials not a multiple of a word
    (0, 7, 50, 1),        # n < 32: a word spans several trials, an output nine
    (3, 64, 9, 3),        # n a multiple of 64: an output is one trial's
    (2 ** 40 + 7, 33, 5, 1),
    (7, 1, 70, 2),        # one segment
    (11, 130, 3, 1),      # a trial spans several outputs and both blocks
])
def test_randomization_equals_the_cpu(seed, n, n_trials, n_systems):
    check_equal(statistics(seed, n, n_systems), fastbleu.BLEU().formula, n_trials, seed)


def test_the_trials_differ():
    a, b = check_equal(statistics(1, 40, 1), fastbleu.BLEU().formula, 20, 5)
    assert len(set(a[0].tolist())) > 5 and len(set(b[0].tolist())) > 5


@pytest.mark.parametrize("options", [
    dict(smooth_method="none"),
    dict(smooth_method="floor", smooth_value=0.1),
    dict(smooth_method="add-k", smooth_value=1),
    dict(smooth_method="exp", effective_order=True),
    dict(max_ngram_order=2),
    dict(ref_length="average"),
    dict(ref_length="shortest", smooth_method="floor"),
])
def test_bleu_options(options):
    bleu = fastbleu.BLEU(**options)
    rows = statistics(4, 21, 2, length=3, max_order=options.get("max_ngram_order", 4),
                      ref_length=options.get("ref_length", "closest"))
    check_equal(rows, bleu.formula, 13, 9)


def test_strided_rows():
    from numba import cuda

    rows = [host(r) for r in statistics(6, 20, 2)]
    wide = [cuda.to_device(np.column_stack([r, r])) for r in rows]
    views = [w[:, :10] for w in wide]
    a, b = gpu.randomization_scores(views[0], views[1:], n_trials=11, seed=3)
    expected = cpu_randomization(rows[0], rows[1:], fastbleu.BLEU().formula, 11,
                                 np.random.default_rng(3))
    np.testing.assert_allclose(host(a), expected[0], rtol=0 if SIMULATED else 1e-14)
    np.testing.assert_allclose(host(b), expected[1], rtol=0 if SIMULATED else 1e-14)


def test_a_malformed_row_makes_every_trial_nan():
    from numba import cuda

    good = statistics(2, 6, 1)
    bad_rows = host(good[1]).copy()
    bad_rows[3] = -1
    for rows in ([good[0], cuda.to_device(bad_rows)], [cuda.to_device(bad_rows), good[1]]):
        a, b = gpu.randomization_scores(rows[0], rows[1:], n_trials=5, seed=1)
        assert np.isnan(host(a)).all() and np.isnan(host(b)).all()
    a, b = gpu.randomization_scores(good[0], good[1:], n_trials=5, seed=1)
    assert not np.isnan(host(a)).any() and not np.isnan(host(b)).any()


def test_randomization_refuses():
    rows = gpu.bleu_statistics(np.array([[1, 2, 3]]), np.array([[1, 2, 3]]))
    with pytest.raises(TypeError, match="non-empty list"):
        gpu.randomization_scores(rows, rows)
    with pytest.raises(TypeError, match="non-empty list"):
        gpu.randomization_scores(rows, [])
    with pytest.raises(ValueError, match="n_trials"):
        gpu.randomization_scores(rows, [rows], n_trials=0)
    with pytest.raises(ValueError, match="n_trials"):
        gpu.randomization_scores(rows, [rows], n_trials=True)
    with pytest.raises(ValueError, match="n_trials"):
        gpu.randomization_scores(rows, [rows], n_trials=2.0)
    with pytest.raises(ValueError, match="seed"):
        gpu.randomization_scores(rows, [rows], seed=-1)
    with pytest.raises(ValueError, match="seed"):
        gpu.randomization_scores(rows, [rows], seed="12345")
    with pytest.raises(TypeError, match="BLEU formula"):
        gpu.randomization_scores(rows, [rows], fastbleu.CHRF().formula)
    with pytest.raises(ValueError, match="int64 rows"):
        gpu.randomization_scores(rows, [rows], fastbleu.BLEU(max_ngram_order=2).formula)
    with pytest.raises(ValueError, match=r"systems\[1\] must be int64 rows"):
        gpu.randomization_scores(rows, [rows, np.zeros((2, 10), np.int64)])
    with pytest.raises(ValueError, match="baseline must be int64 rows"):
        gpu.randomization_scores(np.zeros((1, 10), np.int32), [rows])
    with pytest.raises(TypeError, match="baseline must be a CUDA array"):
        gpu.randomization_scores([[1] * 10], [rows])
    with pytest.raises(ValueError, match="at least one segment"):
        empty = np.zeros((0, 10), np.int64)
        gpu.randomization_scores(empty, [empty])
    with pytest.raises(ValueError, match="at most 6 systems"):
        gpu.randomization_scores(rows, [rows] * 7)


def test_randomization_is_four_launches_and_no_read_back():
    from launches import DeviceCalls

    rows = statistics(5, 9, 2)
    gpu.randomization_scores(rows[0], rows[1:], n_trials=4, seed=2)
    with DeviceCalls() as calls:
        a, _ = gpu.randomization_scores(rows[0], rows[1:], n_trials=4, seed=2)
    assert dict(calls.kernels) == {"fill": 1, "lay_out_pairs": 1, "randomization_sums": 1,
                                   "score_trials": 1}
    assert (calls.readbacks, calls.waits) == (0, 0)
    assert host(a).shape == (2, 4)


def test_the_device_jump_is_numpy_s_stream():
    # The device's PCG64 jumped to output o (o + 1 steps from the seeded state) and its
    # XSL-RR output, against numpy's own generator advanced there.
    from numba import cuda

    from fastbleu._kernels.cuda.randomization import jump_table, stream_outputs

    positions = np.array([0, 1, 2, 31, 64, 1000, 123456789, 2 ** 40 + 3, 2 ** 63 + 5,
                          2 ** 64 - 2], dtype=np.uint64)
    for seed in (0, 12345, 2 ** 70 + 1):
        state = np.random.PCG64(seed).state["state"]
        value = int(state["state"])
        out = cuda.to_device(np.zeros(positions.shape[0], np.uint64))
        stream_outputs[1, 4](cuda.to_device(jump_table(state["inc"])),
                         np.uint64(value >> 64), np.uint64(value & (2 ** 64 - 1)),
                         cuda.to_device(positions), out)
        expected = []
        for p in positions.tolist():
            generator = np.random.PCG64(seed)
            generator.advance(p)
            expected.append(int(generator.random_raw()))
        assert host(out).tolist() == expected


def test_the_coins_are_numpy_s_one_call():
    # An oracle of its own: sacrebleu's selection with numpy's coins, summed and scored here.
    device_rows = statistics(13, 29, 2)
    rows = [host(r) for r in device_rows]
    formula = fastbleu.BLEU().formula
    n_trials = 23
    a, b = gpu.randomization_scores(device_rows[0], device_rows[1:], formula,
                                    n_trials=n_trials, seed=77)
    coins = np.random.default_rng(77).integers(2, size=(n_trials, 29), dtype=bool)
    for s, system in enumerate(rows[1:]):
        sums_a = np.where(coins[:, :, None], rows[0][None], system[None]).sum(axis=1)
        sums_b = np.where(coins[:, :, None], system[None], rows[0][None]).sum(axis=1)
        for got, sums in ((host(a)[s], sums_a), (host(b)[s], sums_b)):
            expected = formula.scores(sums, check=False)
            if SIMULATED:
                np.testing.assert_array_equal(got, expected)
            else:
                np.testing.assert_allclose(got, expected, rtol=1e-14)


def test_randomization_refuses_too_many_trials():
    """Refused before the (n_trials, columns) sums are allocated, at the CPU's limit."""
    from fastbleu._limits import MAX_SAMPLES

    rows = gpu.bleu_statistics(np.array([[1, 2, 3]]), np.array([[1, 2, 3]]))
    for huge in (MAX_SAMPLES + 1, 10 ** 12, 2 ** 62):
        with pytest.raises(ValueError, match="n_trials must be at most"):
            gpu.randomization_scores(rows, [rows], n_trials=huge)
