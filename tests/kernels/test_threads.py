"""Whole batches on the kernels' thread pool (``fastbleu._kernels.threads.ordered_map``).

Issue 17: a batch runs whole on one pool thread, as many at once as the pool
has threads, while the calling thread prepares the next; the kernels called
on a pool thread run in one piece.  These tests hold the order of the
results, the bound on jobs in flight, the cancelling of jobs on an early
stop, and that the rows are those of the kernels run in one call.
"""

from __future__ import annotations

import threading
import time

import numba
import numpy as np
import pytest

from fastbleu import BLEU
from fastbleu._kernels import threads
from fastbleu.statistics.tokens import KERNEL_BATCH_SIZE, iter_statistics
from fastbleu.inputs.text import as_text_column
from fastbleu.tokenizers import get_tokenizer
from testkit.text import random_lines


@pytest.fixture(autouse=True)
def _two_threads(monkeypatch):
    """A pool of two threads even where NUMBA_NUM_THREADS is 1."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)


def test_results_come_in_order_from_pool_threads_that_do_not_split_their_kernels():
    def work(k):
        time.sleep(0.02 * (5 - k))  # the later items finish first
        return k, threads.in_pool_thread(), threads.chunk_bounds(1_000_000)

    results = list(threads.ordered_map(work, range(6)))
    assert [k for k, _, _ in results] == list(range(6))
    assert all(on_pool and bounds == [0, 1_000_000] for _, on_pool, bounds in results)
    assert not threads.in_pool_thread() and len(threads.chunk_bounds(1_000_000)) > 2


def test_jobs_in_flight_are_bounded():
    produced = []

    def items():
        for k in range(50):
            produced.append(k)
            yield k

    results = threads.ordered_map(lambda k: k, items(), in_flight=3)
    assert next(results) == 0
    assert produced == [0, 1, 2]  # three items taken before the first result was awaited
    assert list(results) == list(range(1, 50))


def test_an_early_stop_cancels_the_jobs_not_started():
    workers = threads._executor()._max_workers
    started, gate = [], threading.Event()

    def work(k):
        started.append(k)
        if k:
            gate.wait(0.3)  # keeps every pool thread busy while the caller stops
        return k

    results = threads.ordered_map(work, range(100), in_flight=workers + 5)
    assert next(results) == 0
    results.close()  # cancels the queued jobs, waits for the running ones
    time.sleep(0.5)
    assert len(started) <= workers + 1


def test_an_error_comes_at_its_item():
    def work(k):
        if k == 3:
            raise ValueError("item 3")
        return k

    seen = []
    with pytest.raises(ValueError, match="item 3"):
        for k in threads.ordered_map(work, range(10)):
            seen.append(k)
    assert seen == [0, 1, 2]


def test_on_a_pool_thread_the_jobs_run_there():
    def outer(_):
        return [threading.current_thread() for _ in threads.ordered_map(
            lambda k: threading.current_thread(), range(3))], threading.current_thread()

    (inner, here), = threads.ordered_map(outer, [0])
    assert all(t is here for t in inner)


def test_batches_side_by_side_give_the_rows_of_one_call():
    """Rows of several kernel batches on the pool (missing and empty references, two
    streams) equal those of the whole column in one batch."""
    rng = np.random.default_rng(17)
    words = np.array(["the", "cat", "sat", "on", "the", "mat", ".", "é", ""])
    n = 2 * KERNEL_BATCH_SIZE + 123
    hyps, first = random_lines(rng, words, n, 0, 9), random_lines(rng, words, n, 0, 9)
    second = [None if i % 3 else "the cat" for i in range(n)]
    columns = as_text_column(hyps, "h"), [as_text_column(r, "r", allow_null=True)
                                          for r in (first, second)]
    tokenizer = get_tokenizer("13a")
    batches = list(iter_statistics(*columns, tokenizer, False, 4))
    # even sizes, up to 4 a thread of the 2-thread pool while each keeps half a batch
    assert [len(b) for b in batches] == [n * (k + 1) // 4 - n * k // 4 for k in range(4)]
    whole, = iter_statistics(*columns, tokenizer, False, 4, batch_size=n)
    np.testing.assert_array_equal(np.concatenate(batches), whole)
    np.testing.assert_array_equal(BLEU().segment_statistics(hyps, [first, second]), whole)


def test_even_bounds_cut_no_small_batch_and_feed_every_thread():
    from fastbleu.statistics.tokens import even_bounds

    for n in [1, 8191, 16384, 16385, 40_000, 100_000, 1_000_003]:
        for threads_ in [1, 2, 16]:
            bounds = even_bounds(n, 16384, threads_)
            sizes = np.diff(bounds)
            assert bounds[0] == 0 and bounds[-1] == n and sizes.max() <= 16384
            assert sizes.max() - sizes.min() <= 1
            if len(sizes) > 1:
                assert sizes.min() >= 8192
            if n >= 8192 * threads_:
                assert len(sizes) >= threads_
    assert len(even_bounds(100_000, 16384, 2)) - 1 == 8  # 4 a thread (7 would do by size)
    assert len(even_bounds(100_000, 16384, 16)) - 1 == 12


@pytest.mark.parametrize("metrics", [None, ["bleu", "ter"]])
def test_a_table_job_reuses_its_hash_scratch_from_batch_to_batch(metrics):
    """Record batches of several kernel batches each, two at a time: every pair of hash
    buffers they use comes from the job's one BufferPairs and stays there, so their
    number is bounded by the threads, not the batches (a fresh pair costs its page
    faults in every batch)."""
    import pyarrow as pa

    from fastbleu.statistics.tokens import BufferPairs
    from fastbleu.tables.job import TableJob

    rng = np.random.default_rng(5)
    words = np.array(["the", "cat", "sat", "on", "mat", ".", "é", "1,5"])
    n = 6 * (KERNEL_BATCH_SIZE + 1000)
    text = random_lines(rng, words, n, 1, 6)
    table = pa.table({"hyp": text, "ref": text[1:] + text[:1]})
    job = TableJob.create("hyp", ["ref"], None, None, None, False, "strict", 1 << 16,
                          metrics=metrics)
    batches = table.to_batches(max_chunksize=2 * KERNEL_BATCH_SIZE + 2000)
    assert len(batches) == 3
    scratch = BufferPairs()
    first = job.statistics(batches, buffers=scratch)
    pairs = {id(pair) for pair in scratch._free}
    assert pairs
    again = job.statistics(batches, buffers=scratch)
    kept = {id(pair) for pair in scratch._free}
    assert pairs <= kept
    # at most one pair per pool thread and per record batch on a helper thread, however
    # many batches: a second pass may meet more of them at once, never more than that
    assert len(kept) <= threads.pool_size() + 2
    whole = job.statistics([table.combine_chunks().to_batches()[0]])
    for groups in (first, again):
        np.testing.assert_array_equal(groups.ordered()[1], whole.ordered()[1])
