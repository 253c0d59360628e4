"""Scoring in forked children: the kernels' thread pool must survive fork().

The parent first scores enough segments to start the pool (``chunk_bounds``
cuts at 2 x 4,096 segments); a forked child then scores as many.  Before the
fix the child inherited the pool without its threads and waited forever, so
every child here runs under a timeout and a hang is a failure, not a stuck
test run.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
import threading

import numba
import pytest

from testkit.data import DATA, read_lines
from fastbleu import BLEU
from fastbleu._kernels import threads

pytestmark = pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")

TIMEOUT = 60  # seconds; a scoring child takes well under one
REPEAT = 21   # 21,000 segments: several pool chunks


@pytest.fixture(scope="module")
def corpus():
    hyps = read_lines(DATA / "sample.sys-A.en") * REPEAT
    refs = [read_lines(DATA / f"sample.ref-{x}.en") * REPEAT for x in "AB"]
    return hyps, refs


@pytest.fixture(autouse=True)
def _two_threads(monkeypatch):
    """Use the pool even where NUMBA_NUM_THREADS is 1, so the bug can show."""
    if numba.config.NUMBA_NUM_THREADS < 2:
        monkeypatch.setattr(numba.config, "NUMBA_NUM_THREADS", 2)
    assert len(threads.chunk_bounds(REPEAT * 1000)) > 2


def _score(hyps, refs) -> float:
    return BLEU().corpus_score(hyps, refs).score


def _send_score(connection, hyps, refs) -> None:
    connection.send(_score(hyps, refs))
    connection.close()


def _score_in_forked_process(hyps, refs) -> float:
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=_send_score, args=(sender, hyps, refs))
    child.start()
    sender.close()
    child.join(TIMEOUT)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail(f"the forked child did not finish scoring in {TIMEOUT} s")
    assert child.exitcode == 0
    return receiver.recv()


def test_forked_process_scores_after_the_parent_used_the_pool(corpus):
    hyps, refs = corpus
    expected = _score(hyps, refs)
    assert threads._pool is not None  # the parent's pool has run
    assert _score_in_forked_process(hyps, refs) == expected
    assert _score(hyps, refs) == expected  # and the parent's pool still works


def test_multiprocessing_pool_with_fork(corpus):
    hyps, refs = corpus
    expected = _score(hyps, refs)
    with multiprocessing.get_context("fork").Pool(2) as pool:
        results = [pool.apply_async(_score, (hyps, refs)) for _ in range(2)]
        scores = [result.get(timeout=TIMEOUT) for result in results]
    assert scores == [expected, expected]


def test_process_pool_executor_with_fork(corpus):
    hyps, refs = corpus
    expected = _score(hyps, refs)
    executor = concurrent.futures.ProcessPoolExecutor(
        max_workers=1, mp_context=multiprocessing.get_context("fork"))
    try:
        future = executor.submit(_score, hyps, refs)
        assert future.result(timeout=TIMEOUT) == expected
    except concurrent.futures.TimeoutError:
        for process in list(executor._processes.values()):
            process.kill()
        pytest.fail(f"the ProcessPoolExecutor worker did not finish in {TIMEOUT} s")
    finally:
        executor.shutdown(wait=False, cancel_futures=True)


def test_fork_while_another_thread_is_scoring(corpus):
    """A child forked while a parent thread is inside the pool's kernels."""
    hyps, refs = corpus
    expected = _score(hyps, refs)
    stop = threading.Event()
    scored = []

    def keep_scoring():
        while not stop.is_set():
            scored.append(_score(hyps, refs))

    worker = threading.Thread(target=keep_scoring, daemon=True)
    worker.start()
    try:
        for _ in range(3):  # fork at a few different moments of the worker's run
            assert _score_in_forked_process(hyps, refs) == expected
    finally:
        stop.set()
        worker.join(TIMEOUT)
    assert not worker.is_alive()
    assert scored and set(scored) == {expected}


def test_child_of_a_child(corpus):
    """The reset runs again in a grandchild (the hooks are inherited)."""
    hyps, refs = corpus
    expected = _score(hyps, refs)

    def grandchild_score(connection):
        assert _score(hyps, refs) == expected  # the child's own pool runs first
        connection.send(_score_in_forked_process(hyps, refs))
        connection.close()

    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    child = context.Process(target=grandchild_score, args=(sender,))
    child.start()
    sender.close()
    child.join(2 * TIMEOUT)
    if child.is_alive():
        child.kill()
        child.join()
        pytest.fail("the forked grandchild did not finish scoring")
    assert child.exitcode == 0
    assert receiver.recv() == expected


def test_line_tokenizer_forked_while_another_thread_holds_its_lock():
    """A Python line tokenizer (MeCab, sentencepiece) busy in a parent thread at fork()
    time: the child inherits its lock held, and must still tokenize."""
    import time

    from fastbleu.tokenizers.lines import LineTransform

    inside, release = threading.Event(), threading.Event()

    def slow_upper(lines):
        inside.set()
        release.wait(30)
        return [line.upper() for line in lines]

    transform = LineTransform(slow_upper)
    busy = threading.Thread(target=transform.lines, args=([b"held"],))
    busy.start()
    try:
        assert inside.wait(30)
        pid = os.fork()
        if pid == 0:  # the child: the parent's thread holds the lock, and is not here
            try:
                release.set()  # the child's copy of the event; the tokenizer is not waiting
                ok = transform.lines([b"a b", b"c"]) == [b"A B", b"C"]
            finally:
                os._exit(0 if ok else 3)
        deadline = time.monotonic() + 60
        while True:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            if time.monotonic() > deadline:
                os.kill(pid, 9)
                os.waitpid(pid, 0)
                pytest.fail("the forked child hung on the line tokenizer's inherited lock")
            time.sleep(0.05)
        assert os.waitstatus_to_exitcode(status) == 0
    finally:
        release.set()
        busy.join(30)
