"""Bootstrap resamples on the GPU against the CPU's, on numpy's own draws (sacrebleu's)."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import SIMULATED, host, skip_without_device

import fastbleu
from fastbleu import gpu
from fastbleu.significance.resampling import bootstrap_scores as cpu_bootstrap

pytestmark = skip_without_device
MASK = (1 << 64) - 1


def statistics(seed: int, n: int, n_systems: int, length: int = 6):
    """The rows (on the device) of ``n_systems`` systems of ``n`` segments."""
    rng = np.random.default_rng(seed)
    refs = [rng.integers(1, 5, size=(n, length)) for _ in range(2)]
    return [gpu.bleu_statistics(np.where(rng.random((n, length)) < 0.5, refs[0],
                                         rng.integers(1, 5, (n, length))), refs)
            for _ in range(n_systems)]


def sacrebleu_sums(rows: np.ndarray, n_samples: int, seed: int) -> np.ndarray:
    """The resamples' summed rows as sacrebleu draws them: one ``choice`` call."""
    n = rows.shape[0]
    indices = np.random.default_rng(seed).choice(n, size=(n_samples, n), replace=True)
    return rows[indices].sum(axis=1)


def assert_scores(got, expected):
    if SIMULATED:  # Python's log and exp: the CPU's, to the bit
        np.testing.assert_array_equal(got, expected)
    else:  # CUDA's log and exp (libdevice)
        np.testing.assert_allclose(got, expected, rtol=1e-14)


@pytest.mark.parametrize("seed, n, n_samples, n_systems", [
    (12345, 31, 7, 2),     # sacrebleu's seed; a resample crosses threads and blocks
    (0, 1, 5, 1),          # one segment: every draw is 0
    (3, 2, 37, 3),         # a thread's words span several resamples
    (2 ** 40 + 7, 33, 5, 1),
    (11, 130, 3, 2),       # a resample spans most threads
    (2 ** 70 + 1, 9, 11, 1),  # numpy takes seeds beyond 64 bits
])
def test_bootstrap_equals_the_cpu(seed, n, n_samples, n_systems):
    formula = fastbleu.BLEU().formula
    rows = statistics(seed % 1000, n, n_systems)
    scores = host(gpu.bootstrap_scores(rows, formula, n_samples=n_samples, seed=seed))
    assert scores.shape == (n_systems, n_samples)
    stats = [host(r) for r in rows]
    assert_scores(scores, cpu_bootstrap(stats, formula, n_samples, np.random.default_rng(seed)))
    for k, r in enumerate(stats):  # and sacrebleu's own call
        assert_scores(scores[k], formula.scores(sacrebleu_sums(r, n_samples, seed), check=False))


def test_the_resamples_differ_and_follow_the_seed():
    rows = statistics(1, 40, 1)
    a = host(gpu.bootstrap_scores(rows, n_samples=20, seed=5))[0]
    b = host(gpu.bootstrap_scores(rows, n_samples=20, seed=6))[0]
    assert len(set(a.tolist())) > 5 and not np.array_equal(a, b)


def test_p_values_and_intervals_are_the_cpu_paired_bootstraps():
    # sacrebleu's paired bootstrap (as fastbleu.significance computes it) from the
    # device's resampled scores: the same p-value, mean and interval as the CPU's test.
    from fastbleu.significance import paired_bootstrap
    from fastbleu.significance.estimates import paired_mean_ci
    from fastbleu.significance.tests import p_value

    bleu = fastbleu.BLEU()
    rows = statistics(7, 45, 3)
    stats = [host(r) for r in rows]
    scores = host(gpu.bootstrap_scores(rows, bleu.formula, n_samples=41, seed=12345))
    results = paired_bootstrap(stats, bleu=bleu, n_samples=41, seed=12345)
    real = [bleu.formula.score(s.sum(axis=0), check=False).score for s in stats]
    for s, result in enumerate(results):
        mean, ci = paired_mean_ci(scores[s])
        if SIMULATED:
            assert (mean, ci) == (result.mean, result.ci)
        else:
            assert mean == pytest.approx(result.mean, rel=1e-13)
            assert ci == pytest.approx(result.ci, rel=1e-12, abs=1e-12)
        if s:
            differences = np.abs(scores[s] - scores[0])
            centred = differences - differences.mean()
            assert p_value(centred, abs(real[0] - real[s])) == result.p_value


def device_draws(seed: int, n: int, size: int, margin=None, threads: int = 8,
                 max_blocks: int = 2):
    """``size`` draws of ``0..n-1`` made on the device as the bootstrap makes them (the
    rejected words counted, then each thread's draws from its first word), and the
    rejected words counted among the words scanned."""
    from numba import cuda

    from fastbleu._kernels.cuda import randomization, resamples

    state = np.random.default_rng(seed).bit_generator.state["state"]
    value, inc = int(state["state"]), int(state["inc"])
    table = cuda.to_device(randomization.jump_table(inc))
    words, stretch, grid = resamples.plan(size, n, threads, max_blocks, 2, margin)
    counts = cuda.device_array(grid * threads, np.int64)
    block_counts = cuda.device_array(grid, np.int64)
    sums = cuda.to_device(np.ones((1, 1), np.int64))
    hi, lo = np.uint64(value >> 64), np.uint64(value & MASK)
    resamples.count_rejected[grid, threads](table, hi, lo, n, words, stretch, counts,
                                            block_counts, sums)
    out = cuda.to_device(np.full(size, -1, np.int64))
    resamples.draw_indices[grid, threads](table, hi, lo, n, words, stretch, counts,
                                          block_counts, out)
    assert host(sums)[0, 0] == 0  # the sums are zeroed on the way
    assert host(block_counts).sum() == host(counts).sum()
    return host(out), int(host(counts).sum()), words - size


@pytest.mark.parametrize("seed, n, size, margin, threads, max_blocks", [
    (1, 2 ** 31 + 1, 200, None, 8, 2),  # half the words rejected: 2**32 mod n = 2**31 - 1
    (2, 2 ** 31 + 1, 150, 0, 8, 2),  # no margin: the last thread draws what others could not
    (3, 3 * 10 ** 9, 101, 5, 8, 2),  # n above 2**31 (2**32 - n rejected), a margin too small
    (4, 2 ** 32, 64, None, 8, 2),    # the largest n: no word rejected, the index is the word
    (5, 2 ** 32 - 1, 66, 0, 8, 2),
    (6, 7, 100, 0, 8, 2),
    (7, 2 ** 31 + 1, 1, 0, 8, 2),    # one draw
    (8, 2 ** 31 + 1, 120, None, 5, 3),  # blocks of 5 threads (the prefix sum), three blocks
])
def test_the_draws_are_numpys_with_rejected_words(seed, n, size, margin, threads, max_blocks):
    got, rejected, scanned_margin = device_draws(seed, n, size, margin, threads, max_blocks)
    np.testing.assert_array_equal(got, np.random.default_rng(seed).integers(0, n, size))
    np.testing.assert_array_equal(got, np.random.default_rng(seed).choice(n, size))
    if n in (2 ** 31 + 1, 3 * 10 ** 9) and size > 1:
        assert rejected > 0  # the skip of rejected words was needed
        if margin is not None:
            assert rejected > scanned_margin  # and the last thread went past the scan


def test_the_margin_covers_the_expected_rejections():
    from fastbleu._kernels.cuda.resamples import plan

    for n in (2, 33, 10 ** 6, 2 ** 31 + 1, 3 * 10 ** 9):
        p = (((1 << 32) - n) % n) / 2 ** 32
        for draws in (1, 1000, 10 ** 9):
            words, stretch, blocks = plan(draws, n, 256, 1024, 256)
            expected = draws * p / (1 - p)
            assert words - draws >= expected + 8 * np.sqrt(expected)
            assert stretch % 2 == 0 and stretch >= 256 and blocks <= 1024
            assert (blocks - 1) * 256 * stretch < words <= blocks * 256 * stretch


def test_bootstrap_refuses():
    rows = gpu.bleu_statistics(np.array([[1, 2]]), np.array([[1, 2]]))
    with pytest.raises(ValueError, match="n_samples"):
        gpu.bootstrap_scores([rows], n_samples=0)
    with pytest.raises(ValueError, match="seed must be a non-negative int"):
        gpu.bootstrap_scores([rows], seed=-1)
    with pytest.raises(ValueError, match="seed"):
        gpu.bootstrap_scores([rows], seed="12345")
    with pytest.raises(ValueError, match="seed"):
        gpu.bootstrap_scores([rows], seed=True)
    with pytest.raises(TypeError, match="non-empty list"):
        gpu.bootstrap_scores(rows)
    with pytest.raises(ValueError, match="int64 rows"):
        gpu.bootstrap_scores([rows], fastbleu.BLEU(max_ngram_order=2).formula)
    for formula in ("bleu", fastbleu.CHRF().formula):  # as randomization_scores says
        with pytest.raises(TypeError, match="formula must be a BLEU formula"):
            gpu.bootstrap_scores([rows], formula, n_samples=2)


def test_high_word_short_and_long_multipliers():
    # The stream's 128-bit products (randomization.mul128): the two-product path for a
    # factor below 2**32 and the general one.
    from hypothesis import given, settings, strategies as st

    from fastbleu._kernels.cuda.bootstrap import high_word

    @settings(max_examples=200, deadline=None)
    @given(st.integers(0, MASK), st.one_of(st.integers(1, 2 ** 32 - 1),
                                           st.integers(2 ** 32, MASK)))
    def check(a, b):
        assert int(high_word.py_func(np.uint64(a), np.uint64(b))) == (a * b) >> 64

    with np.errstate(over="ignore"):
        check()


def test_bootstrap_is_four_launches_and_no_read_back():
    from launches import DeviceCalls

    systems = statistics(4, 7, 2, length=5)
    gpu.bootstrap_scores(systems, n_samples=3, seed=1)
    with DeviceCalls() as calls:
        scores = gpu.bootstrap_scores(systems, n_samples=3, seed=1)
    assert dict(calls.kernels) == {"lay_out": 1, "count_rejected": 1, "resample_sums": 1,
                                   "score_resamples": 1}
    assert (calls.readbacks, calls.waits) == (0, 0)
    rows = host(systems[0])
    assert_scores(host(scores)[0],
                  fastbleu.BLEU().formula.scores(sacrebleu_sums(rows, 3, 1), check=False))


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
        assert_scores(scores[k], formula.scores(sacrebleu_sums(r, 4, 5), check=False))


def test_a_malformed_row_makes_every_resample_nan():
    from numba import cuda

    good = gpu.bleu_statistics(np.array([[1, 2, 3], [1, 2, 2]]), np.array([[1, 2, 3]] * 2))
    bad = gpu.bleu_statistics(cuda.to_device(np.array([[1, -100, 3], [1, 2, 2]])),
                              cuda.to_device(np.array([[1, 2, 3]] * 2)))
    scores = host(gpu.bootstrap_scores([good, bad], n_samples=3, seed=2))
    assert np.isnan(scores).all()
    assert not np.isnan(host(gpu.bootstrap_scores([good, good], n_samples=3, seed=2))).any()


@pytest.mark.parametrize("value", [2 ** 31, 2 ** 40, -2 ** 31 - 1, 2 ** 63 - 1])
def test_values_beyond_int32_are_nan_not_truncated(value):
    """The rows are laid out as int32 (but for the scaled average length): a value that
    does not fit (only rows made by hand have one) makes every resample NaN, where it was
    truncated into wrong sums (and an OverflowError on the simulator); rows that fit and
    int64 layouts keep the CPU's scores."""
    from numba import cuda

    formula = fastbleu.BLEU().formula
    rows = host(statistics(3, 8, 1)[0])
    fits = rows.copy()
    fits[2, :2] = 2 ** 31 - 1
    big = rows.copy()
    big[2, 1] = value
    scores = host(gpu.bootstrap_scores([cuda.to_device(fits), cuda.to_device(big)], formula,
                                       n_samples=3, seed=4))
    assert np.isnan(scores).all()
    scores = host(gpu.bootstrap_scores([cuda.to_device(fits)], formula, n_samples=3, seed=4))
    assert_scores(scores[0], formula.scores(sacrebleu_sums(fits, 3, 4), check=False))
    average = fastbleu.BLEU(ref_length="average").formula  # int64 layout: exact
    if value > 0:
        wide = rows.copy()
        wide[:, 1] *= 720720
        wide[2, 0] = wide[2, 1] = 2 ** 40
        scores = host(gpu.bootstrap_scores([cuda.to_device(wide)], average, n_samples=3,
                                           seed=4))
        assert_scores(scores[0], average.scores(sacrebleu_sums(wide, 3, 4), check=False))


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
