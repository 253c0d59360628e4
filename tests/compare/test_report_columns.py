"""The bootstrap sums fewer columns (ColumnPlan) and runs its products on the pool: the
sums stay exact, segment for segment and resample for resample."""

from __future__ import annotations

import numpy as np
import pytest

import fastbleu
from fastbleu.compare.columns import ColumnPlan, plan_columns
from fastbleu.compare.resampled import COUNT_TYPE, Layout, bootstrap_scores


class _Formula:
    """A stand-in with a row width, for plans of arbitrary columns."""

    def __init__(self, width):
        self.row_width = width


def _counts(rng, n, rows):
    idx = rng.integers(0, n, size=(rows, n))
    return np.stack([np.bincount(r, minlength=n) for r in idx]).astype(COUNT_TYPE)


def _check(plan, stats, counts):
    """plan.sums from the kept columns equals the direct int64 product."""
    direct = counts.astype(np.int64) @ stats.astype(np.int64)
    kept = counts.astype(np.int64) @ stats[:, plan.keep].astype(np.int64)
    assert np.array_equal(plan.sums(kept, counts, stats.shape[0]), direct)


def test_columns_off_by_a_constant_except_on_few_rows_are_derived_exactly():
    rng = np.random.default_rng(3)
    n = 3000
    length = rng.integers(0, 90, size=n)
    other = rng.integers(0, 50, size=n)
    # [length, max(length-1, 0), max(length-2, 0), other, other again]: like BLEU's totals
    stats = np.stack([length, np.maximum(length - 1, 0), np.maximum(length - 2, 0), other,
                      other], axis=1).astype(np.uint16)
    plan = plan_columns(stats, Layout([_Formula(5)], 1))
    assert plan.keep.tolist() == [0, 3] and plan.derived.tolist() == [1, 2, 4]
    assert plan.offset.tolist() == [0, 1, 2, 0, 0]
    short = np.flatnonzero(length < 2)
    assert plan.rows.tolist() == short.tolist()  # the exceptions: the short segments
    _check(plan, stats, _counts(rng, n, 5))
    # a group's segments: exceptions renumbered, the others dropped
    segments = np.flatnonzero(rng.random(n) < 0.3)
    _check(plan.subset(segments), stats[segments], _counts(rng, segments.size, 3))


def test_the_reference_side_of_every_system_is_summed_once():
    rng = np.random.default_rng(4)
    n, systems = 2000, 3
    ref = rng.integers(1, 60, size=n)
    columns = []
    for _ in range(systems):
        columns += [rng.integers(0, 60, size=n), ref, rng.integers(0, 9, size=n)]
    stats = np.stack(columns, axis=1).astype(np.int32)
    plan = plan_columns(stats, Layout([_Formula(3)], systems))
    assert plan.keep.tolist() == [0, 1, 2, 3, 5, 6, 8] and plan.rows.size == 0
    _check(plan, stats, _counts(rng, n, 4))


def test_a_column_with_many_exceptions_is_kept():
    rng = np.random.default_rng(5)
    n = 4000
    base = rng.integers(0, 100, size=n)
    near = base - 3
    near[rng.random(n) < 0.1] += 1  # one segment in ten off: summing it is cheaper
    stats = np.stack([base + 3, near + 3], axis=1).astype(np.int64)
    plan = plan_columns(stats, Layout([_Formula(2)], 1))
    assert plan.keep.tolist() == [0, 1]
    assert plan_columns(stats[:10], Layout([_Formula(2)], 1)).keep.tolist() == [0, 1]


def test_bootstrap_scores_with_and_without_a_plan_are_identical(tools):
    lines, SAMPLE = tools.lines, tools.SAMPLE
    refs = [lines(SAMPLE["ref-A"])]
    short = lines(SAMPLE["sys-B"])
    short[::40] = ["", "a", "ab c", "x y z"] * (len(short[::40]) // 4) + \
        [""] * (len(short[::40]) % 4)  # short segments: exceptions to the plan
    hyps = [lines(SAMPLE["sys-A"]), short, tools.damaged(lines(SAMPLE["sys-A"]), 0.2, 1)]
    metrics = [fastbleu.BLEU(references=refs), fastbleu.CHRF(references=refs)]
    stats = np.ascontiguousarray(np.concatenate(
        [np.concatenate([m.segment_statistics(h) for h in hyps], axis=1) for m in metrics],
        axis=1).astype(np.uint16))
    layout = Layout([m.formula for m in metrics], len(hyps))
    plan = plan_columns(stats, layout)
    assert plan.keep.size < stats.shape[1] // 2 and plan.rows.size > 0
    planned = bootstrap_scores(stats, layout, 300, 7, plan)
    every = bootstrap_scores(stats, layout, 300, 7, ColumnPlan.identity(stats.shape[1]))
    for a, b in zip(planned, every):
        assert np.array_equal(a, b)


def test_a_count_that_wraps_is_summed_exactly():
    from fastbleu.compare.kernels import count_draws
    from fastbleu.compare.resampled import _counted

    n = 300
    stats = np.arange(2 * n, dtype=np.int64).reshape(n, 2)
    idx = np.zeros((2, n), dtype=np.int64)  # resample 0: segment 0 drawn 300 times
    idx[1] = np.arange(n)
    counts = np.empty((2, n), dtype=COUNT_TYPE)
    exact = {}
    job = (type("Done", (), {"result": lambda self: count_draws(idx, counts, 0, 2)})(),
           idx, 0)
    largest = _counted(job, counts, stats, exact, 0)
    assert list(exact) == [0] and exact[0].tolist() == (n * stats[0]).tolist()
    assert counts[0].sum() == 0 and counts[1].tolist() == [1] * n and largest == 1


@pytest.mark.parametrize("dtype", [np.uint16, np.int32])
def test_plans_hold_for_every_storage_type(dtype):
    rng = np.random.default_rng(6)
    n = 1500
    a = rng.integers(0, 400, size=n)  # 5 in 400 below the offset: exceptions
    stats = np.stack([a, np.maximum(a - 5, 0), rng.integers(0, 9, size=n)],
                     axis=1).astype(dtype)
    plan = plan_columns(stats, Layout([_Formula(3)], 1))
    assert plan.derived.tolist() == [1]
    _check(plan, stats, _counts(rng, n, 3))


def test_without_threadpoolctl_the_products_run_one_at_a_time_with_the_same_sums(
        monkeypatch, tools):
    from fastbleu.compare import resampled

    refs = [tools.lines(tools.SAMPLE["ref-A"])]
    metric = fastbleu.CHRF(references=refs)
    hyps = [tools.lines(tools.SAMPLE["sys-A"]), tools.lines(tools.SAMPLE["sys-B"])]
    stats = np.ascontiguousarray(np.concatenate([metric.segment_statistics(h) for h in hyps],
                                                axis=1).astype(np.uint16))
    layout = Layout([metric.formula], 2)
    found = bootstrap_scores(stats, layout, 200, 3)
    monkeypatch.setattr(resampled, "_blas_controller", lambda: None)
    assert np.array_equal(bootstrap_scores(stats, layout, 200, 3)[0], found[0])


def test_the_blas_threads_are_given_back_after_the_bootstrap(tools):
    threadpoolctl = pytest.importorskip("threadpoolctl")

    def blas_threads():
        return [pool["num_threads"] for pool in threadpoolctl.threadpool_info()
                if pool["user_api"] == "blas"]

    before = blas_threads()
    metric = fastbleu.BLEU(references=[tools.lines(tools.SAMPLE["ref-A"])])
    stats = np.ascontiguousarray(metric.segment_statistics(
        tools.lines(tools.SAMPLE["sys-A"])).astype(np.uint16))
    bootstrap_scores(stats, Layout([metric.formula], 1), 50, 1)
    assert blas_threads() == before
