"""Bootstrap resamples on the GPU against the same draws summed and scored on the CPU."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import SIMULATED, host, skip_without_device

import fastbleu
from fastbleu import gpu

pytestmark = skip_without_device
MASK = (1 << 64) - 1


def mix(h: int) -> int:
    h ^= h >> 30
    h = (h * 0xBF58476D1CE4E5B9) & MASK
    h ^= h >> 27
    h = (h * 0x94D049BB133111EB) & MASK
    return h ^ (h >> 31)


def draws(seed: int, resample: int, n: int) -> np.ndarray:
    """The device's draws, in Python integers: ``mulhi(mix(mix(seed + b) + j), n)``."""
    base = mix((seed + resample) & MASK)
    return np.array([(mix((base + j) & MASK) * n) >> 64 for j in range(n)])


def test_bootstrap_scores_equal_cpu_sums_of_the_same_draws():
    rng = np.random.default_rng(3)
    hyp = rng.integers(1, 5, size=(9, 6))
    refs = [np.where(rng.random((9, 6)) < 0.5, hyp, rng.integers(1, 5, size=(9, 6)))]
    other = rng.integers(1, 5, size=(9, 6))
    bleu = fastbleu.BLEU()
    a = gpu.bleu_statistics(hyp, refs)
    b = gpu.bleu_statistics(other, refs)
    scores = host(gpu.bootstrap_scores([a, b], bleu.formula, n_samples=5, seed=11))
    assert scores.shape == (2, 5)
    for k, rows in enumerate((host(a), host(b))):
        sums = np.stack([rows[draws(11, r, 9)].sum(axis=0) for r in range(5)])
        expected = bleu.formula.scores(sums, check=False)
        if SIMULATED:
            np.testing.assert_array_equal(scores[k], expected)
        else:
            np.testing.assert_allclose(scores[k], expected, rtol=1e-14)


def test_bootstrap_refuses():
    rows = gpu.bleu_statistics(np.array([[1, 2]]), np.array([[1, 2]]))
    with pytest.raises(ValueError, match="n_samples"):
        gpu.bootstrap_scores([rows], n_samples=0)
    with pytest.raises(ValueError, match="seed"):
        gpu.bootstrap_scores([rows], seed=-1)
    with pytest.raises(TypeError, match="non-empty list"):
        gpu.bootstrap_scores(rows)
    with pytest.raises(ValueError, match="int64 rows"):
        gpu.bootstrap_scores([rows], fastbleu.BLEU(max_ngram_order=2).formula)


def test_high_word_short_and_long_multipliers():
    # The draws' 128-bit product: the two-product path for n < 2**32 and the general one.
    from hypothesis import given, settings, strategies as st

    from fastbleu._kernels.cuda.bootstrap import high_word

    @settings(max_examples=200, deadline=None)
    @given(st.integers(0, MASK), st.one_of(st.integers(1, 2 ** 32 - 1),
                                           st.integers(2 ** 32, MASK)))
    def check(a, b):
        assert int(high_word.py_func(np.uint64(a), np.uint64(b))) == (a * b) >> 64

    with np.errstate(over="ignore"):
        check()


def test_bootstrap_is_three_launches():
    from launches import DeviceCalls

    rng = np.random.default_rng(4)
    hyp, ref = rng.integers(1, 5, size=(7, 5)), rng.integers(1, 5, size=(7, 5))
    systems = [gpu.bleu_statistics(hyp, ref), gpu.bleu_statistics(ref, hyp)]
    gpu.bootstrap_scores(systems, n_samples=3, seed=1)
    with DeviceCalls() as calls:
        scores = gpu.bootstrap_scores(systems, n_samples=3, seed=1)
    assert dict(calls.kernels) == {"lay_out": 1, "resample_sums": 1, "score_resamples": 1}
    assert (calls.readbacks, calls.waits) == (0, 0)
    rows = host(systems[0])
    expected = fastbleu.BLEU().formula.scores(
        np.stack([rows[draws(1, r, 7)].sum(axis=0) for r in range(3)]), check=False)
    if SIMULATED:
        np.testing.assert_array_equal(host(scores)[0], expected)
    else:
        np.testing.assert_allclose(host(scores)[0], expected, rtol=1e-14)


@pytest.mark.parametrize("case", ["long", "totals", "average", "strided"])
def test_rows_that_do_not_fit_the_compact_form(case):
    # The bootstrap reads int16 lengths and matches and adds BLEU's totals from the
    # hypothesis lengths; rows with larger values, other totals or the scaled average
    # reference length take the full rows, with the same sums.
    from numba import cuda

    rng = np.random.default_rng(8)
    hyp = rng.integers(1, 4000, 6)
    if case == "long":
        hyp[2] = 40_000
    matches = np.minimum(hyp[:, None] - np.arange(4), rng.integers(0, 3000, (6, 4)))
    totals = np.maximum(hyp[:, None] - np.arange(4), 0)
    if case == "totals":
        totals[3, 1] += 1
    rows = np.column_stack([hyp, hyp + 3, np.maximum(matches, 0), totals]).astype(np.int64)
    formula = fastbleu.BLEU(ref_length="average" if case == "average" else "closest").formula
    if case == "average":
        rows[:, 1] *= 720720
    systems = [cuda.to_device(rows), cuda.to_device(rows[::-1].copy())]
    if case == "strided":
        systems[0] = cuda.to_device(np.column_stack([rows, rows]))[:, :10]
    scores = host(gpu.bootstrap_scores(systems, formula, n_samples=4, seed=5))
    for k, r in enumerate((rows, rows[::-1])):
        sums = np.stack([r[draws(5, b, 6)].sum(axis=0) for b in range(4)])
        expected = formula.scores(sums, check=False)
        if SIMULATED:
            np.testing.assert_array_equal(scores[k], expected)
        else:
            np.testing.assert_allclose(scores[k], expected, rtol=1e-14)


def test_a_malformed_row_makes_every_resample_nan():
    from numba import cuda

    good = gpu.bleu_statistics(np.array([[1, 2, 3], [1, 2, 2]]), np.array([[1, 2, 3]] * 2))
    bad = gpu.bleu_statistics(cuda.to_device(np.array([[1, -100, 3], [1, 2, 2]])),
                              cuda.to_device(np.array([[1, 2, 3]] * 2)))
    scores = host(gpu.bootstrap_scores([good, bad], n_samples=3, seed=2))
    assert np.isnan(scores).all()
    assert not np.isnan(host(gpu.bootstrap_scores([good, good], n_samples=3, seed=2))).any()


def test_bootstrap_refuses_what_it_cannot_hold():
    """Too many resamples are refused before anything is allocated (the CPU's limit), and
    rows that are not 2-D say what they should be (not a tuple-unpacking error)."""
    from fastbleu._limits import MAX_SAMPLES

    rows = gpu.bleu_statistics(np.array([[1, 2]]), np.array([[1, 2]]))
    for huge in (MAX_SAMPLES + 1, 10 ** 12, 2 ** 62):
        with pytest.raises(ValueError, match="n_samples must be at most"):
            gpu.bootstrap_scores([rows], n_samples=huge)
    flat = host(rows)
    for shape in (flat[0], flat[None]):
        with pytest.raises(ValueError, match="int64 rows"):
            gpu.bootstrap_scores([shape], n_samples=2)
