"""Run a chunk kernel over chunks of segments on a pool of threads.

The kernels are compiled with ``nogil=True``, so Python threads run them in
parallel.  This replaces numba's ``parallel=True``/``prange``: the result is
the same (each chunk writes only its own rows), but a parallel kernel costs
about 3 s more to compile for every kernel, and that compile time is part of
the user's first run.  The number of threads follows numba's setting
(``NUMBA_NUM_THREADS``, default: the number of CPUs).

**fork().**  A forked child (``multiprocessing``'s default on Linux before
Python 3.14) inherits the pool object but none of its threads: work submitted
there would wait forever.  So the child drops the pool and its lock
(:func:`os.register_at_fork`) and starts a fresh pool on first use.  numba's
compiler lock (held while a kernel is compiled or loaded from the cache) is
taken around ``fork()`` as :mod:`logging` does with its locks, so a child
forked while another thread loads a kernel does not inherit it locked.

**Whole batches.**  :func:`ordered_map` runs whole batches, one per pool
thread, while the calling thread prepares the next ones (converts Python
lists to text, which holds the GIL).  Kernel calls made on a pool thread run
in one piece (:func:`chunk_bounds`): no fork-join inside a batch, and no
pool thread ever waits for the pool.
"""

from __future__ import annotations

import os
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

import numba
from numba.core.compiler_lock import global_compiler_lock

from .._native.codes import MIN_CHUNK

_MIN_CHUNK = MIN_CHUNK
_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()
_thread = threading.local()  # .in_pool: this thread is one of the pool's


def _mark_pool_thread() -> None:
    _thread.in_pool = True


def in_pool_thread() -> bool:
    """Whether the calling thread is one of the pool's (its kernels then run in one piece)."""
    return getattr(_thread, "in_pool", False)


def pool_size() -> int:
    """The pool's number of threads (numba's ``NUMBA_NUM_THREADS``)."""
    return numba.config.NUMBA_NUM_THREADS


def _executor() -> ThreadPoolExecutor:
    """The shared pool, created on first use (callers may themselves be threads)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=numba.config.NUMBA_NUM_THREADS,
                                       thread_name_prefix="fastbleu",
                                       initializer=_mark_pool_thread)
        return _pool


def _reset_in_child() -> None:
    """After fork(), in the child: forget the parent's pool (its threads are gone)."""
    global _pool, _pool_lock
    _pool = None  # never shut down: it would wait for threads that do not exist here
    _pool_lock = threading.Lock()


# The compiler lock (an RLock) around fork(): taken before, released on both sides.
# The timeout keeps fork() from waiting forever on a lock that is never released;
# then the child re-initialises its copy, whose owner does not exist there.
_FORK_LOCK_TIMEOUT = 120.0
_fork_held = threading.local()


def _before_fork() -> None:
    _fork_held.compiler = global_compiler_lock._lock.acquire(timeout=_FORK_LOCK_TIMEOUT)


def _after_fork_in_parent() -> None:
    if getattr(_fork_held, "compiler", False):
        _fork_held.compiler = False
        global_compiler_lock._lock.release()


def _after_fork_in_child() -> None:
    if getattr(_fork_held, "compiler", False):
        _fork_held.compiler = False
        global_compiler_lock._lock.release()
    else:
        global_compiler_lock._lock._at_fork_reinit()
    _reset_in_child()


if hasattr(os, "register_at_fork"):  # not on Windows, which has no fork()
    os.register_at_fork(before=_before_fork, after_in_parent=_after_fork_in_parent,
                        after_in_child=_after_fork_in_child)


def chunk_bounds(n: int, min_chunk: int = _MIN_CHUNK) -> list[int]:
    """Bounds ``[0, ..., n]`` of the pieces ``for_chunks`` would cut ``range(n)`` into.

    One piece on a pool thread: it runs a whole batch of :func:`ordered_map`.
    """
    threads = numba.config.NUMBA_NUM_THREADS
    if threads <= 1 or n < 2 * min_chunk or in_pool_thread():
        return [0, n]
    pieces = min(4 * threads, max(1, n // min_chunk))
    return [n * k // pieces for k in range(pieces + 1)]


def submit(kernel, *args):
    """Start ``kernel(*args)`` on the pool; returns its future."""
    return _executor().submit(kernel, *args)


def submit_chunks(kernel, n: int, *args, min_chunk: int = _MIN_CHUNK) -> list:
    """Start ``kernel(*args, first, last)`` on chunks covering ``range(n)``; return the futures.

    Pieces have at least ``min_chunk`` items (one piece, run here and now,
    when ``n`` is smaller than two of them or numba has one thread).  The
    caller may work while the pool runs, then wait on the futures.
    """
    bounds = chunk_bounds(n, min_chunk)
    if len(bounds) == 2:
        kernel(*args, 0, n)
        return []
    return [_executor().submit(kernel, *args, bounds[k], bounds[k + 1])
            for k in range(len(bounds) - 1)]


def for_chunks(kernel, n: int, *args, min_chunk: int = _MIN_CHUNK) -> None:
    """Call ``kernel(*args, first, last)`` on chunks covering ``range(n)``, in parallel."""
    for future in submit_chunks(kernel, n, *args, min_chunk=min_chunk):
        future.result()


def ordered_map(work: Callable, items: Iterable, in_flight: int | None = None,
                executor: ThreadPoolExecutor | None = None) -> Iterator:
    """``work(item)`` for every item, on the pool, yielded in the items' order.

    Each item is one job on one pool thread (its kernels run in one piece
    there, see :func:`chunk_bounds`), so with two threads two batches run side
    by side while this thread produces the next items: one hand-over per
    batch instead of a fork-join per kernel call, and no pool thread waits
    for a straggler.  At most ``in_flight`` jobs (default: threads + 1, so
    that a finished thread finds the next one queued) are started before the
    oldest result is yielded.  Closing the generator early cancels the jobs
    not started and waits for the running ones.  On a pool thread the jobs
    run there, one after the other (a pool thread never waits for the pool).
    ``executor`` runs the jobs on other threads than the pool's.
    """
    if in_pool_thread() and executor is None:
        yield from map(work, items)
        return
    if in_flight is None:
        in_flight = numba.config.NUMBA_NUM_THREADS + 1
    pending = deque()
    try:
        for item in items:
            pending.append((executor or _executor()).submit(work, item))
            if len(pending) >= in_flight:
                yield pending.popleft().result()
        while pending:
            yield pending.popleft().result()
    finally:
        for future in pending:
            future.cancel()
        for future in pending:
            if not future.cancelled():
                future.exception()  # waits; its error, if any, is not this one's cause
