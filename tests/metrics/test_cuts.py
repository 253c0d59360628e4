"""Batches of about equal cost (``fastbleu.metrics.cuts``, issue 26).

The cuts only decide which pool thread scores which segments: every number
must be the same to the last bit at every thread count and every cut, and
the rows must come back in input order.  These tests hold the bounds'
invariants (every segment once, batch sizes within their limits), that the
cuts follow the cost (a sorted input's long end gets fewer segments a
batch), and the results of BLEU, chrF and TER on inputs whose long segments
sit together, cut many ways, against one batch.
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
def test_bounds_hold_every_segment_once_within_their_limits(n, batch_size, data):
    floor = data.draw(st.integers(1, max(1, batch_size // 2)))
    wanted = sorted(data.draw(st.lists(st.integers(-5, n + 5), max_size=40)))
    bounds = cuts.cost_bounds(np.array(wanted, dtype=np.int64), n, batch_size, floor)
    sizes = np.diff(bounds)
    assert bounds[0] == 0 and bounds[-1] == n
    assert (sizes > 0).all() and sizes.max() <= batch_size
    if len(sizes) > 1:
        assert sizes.min() >= floor


@pytest.mark.parametrize("threads", [2, 4, 16])
def test_a_sorted_input_gets_fewer_segments_a_batch_at_its_long_end(threads):
    hyps, refs = sorted_mix(6000)
    h, r = as_text_column(hyps, "h"), [as_text_column(refs, "r")]
    even = even_bounds(6000, 1024, threads)
    aligned = cuts.text_bounds(cuts.ALIGNMENT, h, r, 1024, threads)
    sizes = np.diff(aligned)
    assert aligned[0] == 0 and aligned[-1] == 6000 and sizes.max() <= 1024
    assert len(aligned) >= len(even) and sizes[0] > 4 * sizes[-1]
    # every batch but the capped ones (and a lone segment) holds about an equal share
    costs = cuts._alignment_costs(np.diff(h.offsets), [np.diff(r[0].offsets)])
    shares = np.diff(costs[aligned])
    full = (sizes < 1024) & (sizes > 1)
    assert shares[full].max() < 2.5 * shares[full].mean()
    linear = cuts.text_bounds(cuts.LINEAR, h, r, 1024, threads)
    sizes = np.diff(linear)
    assert linear[-1] == 6000 and sizes.max() <= 1024 and sizes.min() >= 512
    assert sizes[0] >= sizes[-1]
    # the same cuts from the Python lists (ASCII-free text: characters, not bytes)
    ascii_hyps = [x.replace("über", "ueber").replace("东京", "tokyo") for x in hyps]
    ascii_refs = [x.replace("über", "ueber").replace("东京", "tokyo") for x in refs]
    assert cuts.list_bounds(cuts.ALIGNMENT, ascii_hyps, [ascii_refs], 1024, threads) == \
        cuts.text_bounds(cuts.ALIGNMENT, as_text_column(ascii_hyps, "h"),
                         [as_text_column(ascii_refs, "r")], 1024, threads)


def test_one_thread_takes_even_batches_and_measures_nothing():
    """One pool thread takes the batches in turn, whatever their costs: no pass over a
    list's strings for it."""
    hyps, refs = sorted_mix(6000)
    h, r = as_text_column(hyps, "h"), [as_text_column(refs, "r")]
    for model in (cuts.LINEAR, cuts.ALIGNMENT):
        assert cuts.text_bounds(model, h, r, 1024, 1) == even_bounds(6000, 1024, 1)
    assert cuts.list_bounds(cuts.ALIGNMENT, hyps, [refs], 1024, 1) is None


def test_lists_are_measured_only_for_a_shift_search():
    hyps, refs = sorted_mix(3000)
    assert cuts.list_bounds(cuts.LINEAR, hyps, [refs], 1024, 2) is None
    assert cuts.list_bounds(None, hyps, [refs], 1024, 2) is None
    assert cuts.list_bounds(cuts.ALIGNMENT, hyps, [refs], 1024, 2) is not None
    # what the conversion refuses is left to it, with its own message
    assert cuts.list_bounds(cuts.ALIGNMENT, hyps[:-1] + [5], [refs], 1024, 2) is None
    assert cuts.list_bounds(cuts.ALIGNMENT, hyps, [refs[:-1]], 1024, 2) is None
    short = [x[:20] for x in hyps[:2100]]
    with pytest.raises(TypeError, match="2099"):
        fastbleu.TER().corpus_score(short[:-1] + [5], [short])


def test_missing_references_and_cached_ones_are_measured_as_empty_or_not_at_all():
    hyps, refs = sorted_mix(3000)
    second = [None if i % 2 else x for i, x in enumerate(refs)]
    h = as_text_column(hyps, "h")
    both = [as_text_column(refs, "r"), as_text_column(second, "r2", allow_null=True)]
    for model in (cuts.LINEAR, cuts.ALIGNMENT):
        for references in (both, object()):  # a metric's cache: the hypotheses alone
            bounds = cuts.text_bounds(model, h, references, 1024, 2)
            assert bounds[0] == 0 and bounds[-1] == 3000
    assert cuts.list_bounds(cuts.ALIGNMENT, hyps, [refs, second], 1024, 2)[-1] == 3000


METRICS = {"bleu": fastbleu.BLEU, "chrf": lambda: fastbleu.CHRF(word_order=2),
           "ter": fastbleu.TER}


@pytest.mark.parametrize("kind", ["list", "arrow"])
@pytest.mark.parametrize("name", sorted(METRICS))
def test_every_cut_and_thread_count_gives_the_rows_of_one_batch(name, kind, monkeypatch):
    """Long segments together at the end, a second reference stream with gaps: rows in
    input order, identical to the whole input scored as one batch, whatever the batch
    size (so the cuts) and the pool's thread count (so the number of batches)."""
    n = 400 if name == "ter" else 2500  # TER's shift search on this word soup is slow
    hyps, refs = sorted_mix(n, seed=len(name), longest=6 if name == "ter" else 11)
    second = [None if i % 3 == 1 else refs[(i * 7) % n] for i in range(n)]

    def given(values, nullable=False):
        return values if kind == "list" else pa.array(values, pa.string())

    metric = METRICS[name]()
    whole_size = 1 << 30
    monkeypatch.setattr(type(metric), "batch_segments", whole_size)
    expected = metric.segment_statistics(given(hyps), [given(refs), given(second)])
    score = metric.corpus_score(given(hyps), [given(refs), given(second)])
    for threads in (1, 2, 5):
        monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", threads)
        for size in (7, 64, 301):
            monkeypatch.setattr(type(metric), "batch_segments", size)
            rows = metric.segment_statistics(given(hyps), [given(refs), given(second)])
            np.testing.assert_array_equal(rows, expected)
            again = metric.corpus_score(given(hyps), [given(refs), given(second)])
            assert again.score == score.score and str(again) == str(score)


def test_uneven_work_gets_a_wider_window_and_more_batches(monkeypatch):
    """TER: at least four batches a thread, and twice the threads + 1 handed out before
    the oldest is taken back, so that one batch longer than its estimate does not hold
    the next ones back; the other metrics keep the pool's default window."""
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 4)
    assert fastbleu.TER()._window() == 9
    assert fastbleu.BLEU()._window() is None and fastbleu.CHRF()._window() is None
    monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 1)
    assert fastbleu.TER()._window() is None  # one thread: the default
    hyps, refs = sorted_mix(25_000)
    h, r = as_text_column(hyps, "h"), [as_text_column(refs, "r")]
    for threads in (2, 16):
        bounds = cuts.text_bounds(cuts.ALIGNMENT, h, r, 1024, threads)
        assert len(bounds) - 1 >= max(4 * threads, len(even_bounds(25_000, 1024, threads)) - 1)
