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

**Signals.**  The pool's threads are daemon threads of this module's own
(:class:`WorkerPool`), not ``concurrent.futures``' threads, which the
interpreter joins at exit: a kernel runs in native code and cannot be
stopped, so joining a thread busy with a chunk would keep an interrupted
process alive for as long as the chunk runs (tens of seconds for TER on long
segments).  Inside :func:`fastbleu.signals.terminating` (the command line), a
SIGTERM, SIGHUP or SIGINT marks the pool stopped: every chunk still queued is
cancelled instead of run, the waits that unwind after it (:func:`ordered_map`,
a :class:`WorkerPool` leaving its ``with`` block) do not wait for the running
ones, and the process exits at once.

**Whole batches.**  :func:`ordered_map` runs whole batches, one per pool
thread, while the calling thread prepares the next ones (converts Python
lists to text, which holds the GIL).  Kernel calls made on a pool thread run
in one piece (:func:`chunk_bounds`): no fork-join inside a batch, and no
pool thread ever waits for the pool.
"""

from __future__ import annotations

import os
import queue
import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future

import numba
from numba.core.compiler_lock import global_compiler_lock

from .. import signals
from .._native.codes import MIN_CHUNK

_MIN_CHUNK = MIN_CHUNK
_thread = threading.local()  # .in_pool: this thread is one of the pool's


def _mark_pool_thread() -> None:
    _thread.in_pool = True


class WorkerPool:
    """A fixed number of daemon threads, each running submitted calls one at a time.

    ``submit`` returns a :class:`concurrent.futures.Future`, as an executor's
    does.  Unlike ``concurrent.futures.ThreadPoolExecutor``, its threads are
    daemon threads the interpreter does not join at exit, and :meth:`stop`
    (safe in a signal handler: it only sets a flag) cancels every call not yet
    started.  As a context manager it shuts down on leaving, waiting for the
    running calls unless a ``KeyboardInterrupt`` (or a signal) is unwinding.
    """

    def __init__(self, workers: int, name: str, initializer: Callable | None = None):
        self.stopped = False
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._closed = False
        self._initializer = initializer
        self._threads = [threading.Thread(target=self._work, name=f"{name}_{k}", daemon=True)
                         for k in range(max(1, workers))]
        self._max_workers = len(self._threads)  # ThreadPoolExecutor's name for it
        for thread in self._threads:
            thread.start()

    def _work(self) -> None:
        if self._initializer is not None:
            self._initializer()
        while True:
            item = self._queue.get()
            if item is None:
                return
            future, call, args = item
            del item
            if self.stopped:
                future.cancel()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = call(*args)
            except BaseException as error:
                future.set_exception(error)
            else:
                future.set_result(result)
            del future, call, args

    def submit(self, call: Callable, *args) -> Future:
        """Start ``call(*args)`` on one of the threads; returns its future."""
        future: Future = Future()
        with self._lock:
            if self._closed:
                raise RuntimeError("cannot schedule new work on a pool that was shut down")
            self._queue.put((future, call, args))
        return future

    def stop(self) -> None:
        """Cancel every call not yet started (the running ones finish on their own)."""
        self.stopped = True

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        """No more work; ``cancel_futures`` cancels what has not started; ``wait`` waits
        for the threads to finish what they run."""
        if cancel_futures:
            self.stopped = True
        with self._lock:
            if not self._closed:
                self._closed = True
                for _ in self._threads:
                    self._queue.put(None)
        if wait:
            for thread in self._threads:
                if thread is not threading.current_thread():
                    thread.join()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind, error, traceback) -> None:
        interrupted = (kind is not None and issubclass(kind, KeyboardInterrupt)
                       or signals.received())
        self.shutdown(wait=not interrupted, cancel_futures=kind is not None)


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def _stop_on_signal() -> None:
    """Called by :mod:`fastbleu.signals`' handler: only sets a flag (no lock is taken)."""
    pool = _pool
    if pool is not None:
        pool.stop()


signals.add_listener(_stop_on_signal)


def in_pool_thread() -> bool:
    """Whether the calling thread is one of the pool's (its kernels then run in one piece)."""
    return getattr(_thread, "in_pool", False)


def pool_size() -> int:
    """The pool's number of threads (numba's ``NUMBA_NUM_THREADS``)."""
    return numba.config.NUMBA_NUM_THREADS


def _executor() -> WorkerPool:
    """The shared pool, created on first use (callers may themselves be threads); a pool
    stopped by a signal is replaced by a fresh one."""
    global _pool
    with _pool_lock:
        if _pool is not None and _pool.stopped:
            _pool.shutdown(wait=False, cancel_futures=True)
            _pool = None
        if _pool is None:
            _pool = WorkerPool(numba.config.NUMBA_NUM_THREADS, "fastbleu",
                               initializer=_mark_pool_thread)
        return _pool


def helper_pool(workers: int, name: str) -> WorkerPool:
    """A pool of ``workers`` threads of the caller's own (shut down by its ``with`` block),
    for work that prepares batches beside the kernels' pool."""
    return WorkerPool(workers, name)


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
                executor: WorkerPool | None = None, early: Iterable[int] = ()) -> Iterator:
    """``work(item)`` for every item, on the pool, yielded in the items' order.

    Each item is one job on one pool thread (its kernels run in one piece
    there, see :func:`chunk_bounds`), so with two threads two batches run side
    by side while this thread produces the next items: one hand-over per
    batch instead of a fork-join per kernel call, and no pool thread waits
    for a straggler.  At most ``in_flight`` jobs (default: threads + 1, so
    that a finished thread finds the next one queued) are started before the
    oldest result is yielded.  Closing the generator early cancels the jobs
    not started and waits for the running ones (not after a signal or a
    ``KeyboardInterrupt``: the process is stopping).  On a pool thread the jobs
    run there, one after the other (a pool thread never waits for the pool).
    ``executor`` runs the jobs on other threads than the pool's.

    ``early``: distinct positions of items (``items`` then a sequence) started before all
    the others, in the order given, their results held until their turn (they do
    not count in ``in_flight``).  A batch pipeline starts its costliest batches
    first this way, so that the last ones to finish are not the longest (a test
    set sorted by length ends with them).
    """
    if in_pool_thread() and executor is None:
        yield from map(work, items)
        return
    if in_flight is None:
        in_flight = numba.config.NUMBA_NUM_THREADS + 1
    pending = deque()
    held: dict = {}
    interrupted = False
    try:
        early = list(early)
        if early:
            sequence = items
            for k in early:  # one at a time: a failure here still cancels those handed out
                held[k] = (executor or _executor()).submit(work, sequence[k])
            items = (sequence[k] for k in range(len(sequence)) if k not in held)
        turn = 0  # the position of the next result to yield
        for item in items:
            pending.append((executor or _executor()).submit(work, item))
            if len(pending) >= in_flight:
                while turn in held:  # held results due before the oldest pending one
                    yield held.pop(turn).result()
                    turn += 1
                yield pending.popleft().result()
                turn += 1
        while pending or held:
            if turn in held:
                yield held.pop(turn).result()
            else:
                yield pending.popleft().result()
            turn += 1
    except KeyboardInterrupt:
        interrupted = True
        raise
    finally:
        left = [*pending, *held.values()]
        for future in left:
            future.cancel()
        if not interrupted and not signals.received():
            for future in left:
                if not future.cancelled():
                    future.exception()  # waits; its error, if any, is not this one's cause
