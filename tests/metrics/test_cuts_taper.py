"""The last rounds of batches cut smaller, the costliest batches started first (issue 26).

``fastbleu.metrics.cuts`` cuts ``LINEAR`` work (BLEU, chrF) into equal shares
but for the last rounds, which shrink (:func:`cuts._tapered_shares`), and
names the batches its floor of segments kept over a share
(:func:`cuts.costliest`) for the pool to start first.  Only which thread
scores which segments moves: the bounds still hold every segment once within
the batch limits, and the numbers are those of one batch at every thread count.
"""

from __future__ import annotations

import numba
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import fastbleu
from fastbleu.inputs.text import as_text_column
from fastbleu.metrics import cuts
from fastbleu.statistics.tokens import even_bounds
from testkit.data import sorted_mix


@settings(max_examples=300, deadline=None)
@given(st.integers(1, 5000), st.integers(1, 700), st.data())
def test_placed_bounds_hold_every_segment_once_within_their_limits(n, batch_size, data):
    floor = data.draw(st.integers(1, max(1, batch_size // 2)))
    wanted = sorted(data.draw(st.lists(st.integers(-5, n + 5), max_size=60)))
    bounds = cuts.placed_bounds(np.array(wanted, dtype=np.int64), n, batch_size, floor)
    sizes = np.diff(bounds)
    assert bounds[0] == 0 and bounds[-1] == n
    assert (sizes > 0).all() and sizes.max() <= batch_size
    if len(sizes) > 1:
        assert sizes.min() >= floor
    # a wanted cut the limits allow is kept where it is
    for cut in wanted:
        if floor <= cut <= n - floor and all(abs(cut - b) >= floor for b in bounds if b != cut):
            assert cut in bounds or cut - max(b for b in bounds if b < cut) < floor


@settings(max_examples=200, deadline=None)
@given(st.floats(1.0, 1e12), st.integers(1, 2000), st.integers(1, 64))
def test_tapered_shares_shrink_only_in_the_last_rounds(total, pieces, threads):
    targets = cuts._tapered_shares(total, pieces, threads)
    steps = np.diff(np.concatenate([[0.0], targets, [total]]))
    share = total / pieces
    assert (steps > 0).all() and np.isclose(steps.sum(), total)
    assert steps[:-1].max() <= share * (1 + 1e-9)
    assert steps.min() >= share / cuts.LEAST / 2 * (1 - 1e-9)
    assert (np.diff(steps[:-1]) <= share * 1e-9).all()  # never larger again before the last
    # the equal shares of the body, then at most about TAPER * threads * ln(LEAST) + the least
    assert len(steps) <= pieces + cuts.TAPER * threads * (np.log(cuts.LEAST) + 1) + 2


def test_costliest_batches_are_those_over_their_share_the_costliest_first():
    costs = np.array([1.0, 5.0, 1.0, 1.3, 9.0, 5.0, 1.2])
    assert cuts.costliest(costs, 1.0, 8) == [4, 1, 5, 3]
    assert cuts.costliest(costs, 1.0, 2) == [4, 1]
    assert cuts.costliest(costs, 10.0, 8) == []


@pytest.mark.parametrize("threads", [2, 4, 16])
def test_a_sorted_input_ends_in_smaller_batches_its_long_end_started_first(threads):
    hyps, refs = sorted_mix(20_000)
    h, r = as_text_column(hyps, "h"), [as_text_column(refs, "r")]
    bounds, early = cuts.text_plan(cuts.LINEAR, h, r, 1024, threads)
    assert bounds == cuts.text_bounds(cuts.LINEAR, h, r, 1024, threads)
    sizes = np.diff(bounds)
    assert bounds[0] == 0 and bounds[-1] == 20_000
    assert sizes.max() <= 1024 and sizes.min() >= 512
    # the long end keeps its floor of 512 segments, over a share: started first
    assert 0 < len(early) <= threads and early[0] == len(sizes) - 1
    at = np.asarray(bounds)
    costs = np.diff(cuts.SEGMENT_BYTES * at + h.offsets[at] + r[0].offsets[at])
    assert list(costs[early]) == sorted(costs[early], reverse=True)
    assert costs[-1] <= 1.05 * costs[:-1].max()  # the floor's batches even to the end
    # an even input ends in batches smaller than its body's, and none is started early
    even = as_text_column(["a b c d"] * 200_000, "e")
    bounds, early = cuts.text_plan(cuts.LINEAR, even, [even], 1024, threads)
    sizes = np.diff(bounds)
    assert early == [] and sizes[-1] < sizes[0] and sizes.min() >= 512


def test_one_thread_keeps_even_batches_in_order():
    hyps, refs = sorted_mix(6000)
    h, r = as_text_column(hyps, "h"), [as_text_column(refs, "r")]
    for model in (cuts.LINEAR, cuts.ALIGNMENT):
        assert cuts.text_plan(model, h, r, 1024, 1) == (even_bounds(6000, 1024, 1), [])


METRICS = {"bleu": fastbleu.BLEU, "chrf": lambda: fastbleu.CHRF(word_order=2),
           "ter": fastbleu.TER}


@pytest.mark.parametrize("name", sorted(METRICS))
@pytest.mark.parametrize("threads", [3, 16])
def test_tapered_and_early_batches_give_the_rows_of_one_batch(name, threads, monkeypatch):
    """Arrow input sorted by length (long segments last, so started first) and a second
    reference stream with gaps: rows in order, identical to one batch, at every cut."""
    n = 300 if name == "ter" else 3000
    hyps, refs = sorted_mix(n, seed=len(name) + threads, longest=6 if name == "ter" else 11)
    second = [None if i % 3 == 1 else refs[(i * 7) % n] for i in range(n)]
    streams = [pa.array(refs, pa.string()), pa.array(second, pa.string())]
    metric = METRICS[name]()
    monkeypatch.setattr(type(metric), "batch_segments", 1 << 30)
    expected = metric.segment_statistics(pa.array(hyps, pa.string()), streams)
    score = metric.corpus_score(pa.array(hyps, pa.string()), streams)
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", threads)
    h, r = as_text_column(hyps, "h"), [as_text_column(refs, "r"), as_text_column(
        second, "r2", allow_null=True)]
    early = []
    for size in (9, 40, 257):
        monkeypatch.setattr(type(metric), "batch_segments", size)
        early.append(cuts.text_plan(metric.batch_cost, h, r, size, threads)[1])
        rows = metric.segment_statistics(pa.array(hyps, pa.string()), streams)
        np.testing.assert_array_equal(rows, expected)
        again = metric.corpus_score(pa.array(hyps, pa.string()), streams)
        assert again.score == score.score and str(again) == str(score)
    assert any(early)  # some batches were started before their turn
