"""Batches started before their turn (``ordered_map``'s ``early``, issue 26).

A test set sorted by length ends with its costliest batches; started in their
turn they finish last, long after the other threads.  ``early`` starts them
first and holds their results until their turn: the results still come in
the items' order, the other jobs keep their bound, and an early stop or an
error leaves nothing running.
"""

from __future__ import annotations

import threading
import time

import numba
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastbleu._kernels import threads


@pytest.fixture(autouse=True)
def _three_threads(monkeypatch):
    if numba.config.NUMBA_NUM_THREADS < 3:
        monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 3)


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 40), st.integers(1, 6), st.data())
def test_results_come_in_order_whatever_starts_early(n, in_flight, data):
    early = data.draw(st.lists(st.integers(0, max(0, n - 1)), unique=True, max_size=n)) \
        if n else []
    assert list(threads.ordered_map(lambda k: k * k, range(n), in_flight, early=early)) == \
        [k * k for k in range(n)]


def test_the_early_items_start_first_in_the_order_given():
    started, lock = [], threading.Lock()

    def work(k):
        with lock:
            started.append(k)
        time.sleep(0.01)
        return k

    assert list(threads.ordered_map(work, list(range(12)), in_flight=2, early=[11, 9, 10])) \
        == list(range(12))
    assert set(started[:3]) == {9, 10, 11}  # (several threads may start them in any order)


def test_early_items_do_not_count_in_the_bound_on_the_others():
    produced = []

    class Items(list):
        def __getitem__(self, k):
            produced.append(k)
            return super().__getitem__(k)

    results = threads.ordered_map(lambda k: k, Items(range(20)), in_flight=3, early=[19, 18])
    assert next(results) == 0
    assert produced == [19, 18, 0, 1, 2]
    assert list(results) == list(range(1, 20))


def test_a_failure_cancels_the_held_jobs_not_started():
    """The early jobs go first, so they are still queued only when the calling thread
    fails (here: taking an item; else a KeyboardInterrupt while it waits)."""
    workers = threads._executor()._max_workers
    started, gate = [], threading.Event()

    def work(k):
        started.append(k)
        gate.wait(0.3)  # keeps the pool threads busy while the caller fails
        return k

    class Items(list):
        def __getitem__(self, k):
            if k == 0:
                raise ValueError("no item 0")
            return super().__getitem__(k)

    early = list(range(99, 99 - 3 * workers, -1))  # more than the pool runs at once
    with pytest.raises(ValueError, match="no item 0"):
        list(threads.ordered_map(work, Items(range(100)), in_flight=2, early=early))
    time.sleep(0.5)
    assert len(started) <= workers and set(started) <= set(early)


def test_an_error_of_an_early_item_comes_at_its_turn():
    def work(k):
        if k == 7:
            raise ValueError("item 7")
        return k

    seen = []
    with pytest.raises(ValueError, match="item 7"):
        for k in threads.ordered_map(work, list(range(10)), in_flight=2, early=[7, 8]):
            seen.append(k)
    assert seen == list(range(7))


def test_a_failure_while_the_early_items_start_cancels_those_started():
    """An early item that cannot be taken (or a ``KeyboardInterrupt`` while they are
    handed out) fails the map before ``held`` is complete: the early jobs already handed
    to the pool were neither cancelled nor waited for, and still ran after the error."""
    pool = threads._executor()
    gate = threading.Event()
    blockers = [pool.submit(gate.wait, 5.0) for _ in range(pool._max_workers)]
    started = []

    class Items(list):
        def __getitem__(self, k):
            if k == 3:
                raise ValueError("no item 3")
            return super().__getitem__(k)

    try:
        with pytest.raises(ValueError, match="no item 3"):
            list(threads.ordered_map(started.append, Items(range(10)), in_flight=2,
                                     early=[9, 8, 3]))
    finally:
        gate.set()
    for blocker in blockers:
        blocker.result()
    # every pool thread meets at a barrier: each has finished the jobs it took before
    barrier = threading.Barrier(pool._max_workers)
    for meeting in [pool.submit(barrier.wait, 5.0) for _ in range(pool._max_workers)]:
        meeting.result()
    assert started == []
