"""SIGTERM and SIGHUP handled as Ctrl-C is: the run unwinds and removes what it half-wrote.

Python turns SIGINT into :class:`KeyboardInterrupt`, so every ``except
BaseException`` cleanup (:mod:`fastbleu.tables.writers`' temporary files and
directories) runs.  SIGTERM (``kill``, a batch scheduler's time limit) and
SIGHUP (a closed terminal) would kill the process on the spot instead,
leaving hidden temporary files behind.  :func:`terminating` makes them raise
:class:`Terminated`, a ``KeyboardInterrupt``, for the duration of a block:
the command line uses it around its work, and a library caller's handlers
are never replaced outside it.  :func:`held` makes all three wait during the
few steps that must not be cut in two.

A signal is never lost.  Python runs the handler in whatever Python code the
main thread executes next, and some of that code swallows exceptions: a
garbage collector callback (distributed installs one), a ``__del__``, a
callback of an event loop.  So the handler records the signal before it
raises; an output's commit (:func:`check`) refuses to go on once a signal was
received, and :func:`terminating` raises :class:`Terminated` on leaving if a
signal was received but its exception never came through.  An output
committed before the signal is listed in :attr:`Terminated.written`, so that
the message can say it was written (:attr:`Terminated.message`).
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading

#: The signals turned into :class:`Terminated` (those this platform has).
SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


_held = 0  # depth of held() blocks in the main thread
_pending: list = []  # a signal that arrived meanwhile
_active = 0  # depth of terminating() blocks
_received: list = []  # every signal received inside terminating(), raised or not
_written: list = []  # outputs committed inside terminating()
_listeners: list = []  # called by the handler when a signal arrives


def add_listener(callback) -> None:
    """Have ``callback()`` called, from the signal handler, when a signal arrives inside
    :func:`terminating`, before its exception is raised.

    It runs in the middle of whatever the main thread was doing, so it must only
    set flags (never take a lock): the thread pool uses it to cancel the chunks
    still queued (:mod:`fastbleu._kernels.threads`).
    """
    if callback not in _listeners:
        _listeners.append(callback)


def received() -> bool:
    """Whether a signal arrived inside the current :func:`terminating` block (the run is
    stopping: waits for work that is no longer needed may be skipped)."""
    return bool(_received)


def check() -> None:
    """Raise the interruption of a signal already received (whose exception may have been lost).

    Called just before an output is committed: a signal whose exception a
    garbage collector callback swallowed must still stop the commit.
    """
    if _received and threading.current_thread() is threading.main_thread():
        raise _interruption(_received[0])


def wrote(path) -> None:
    """Record an output committed inside :func:`terminating` (for :attr:`Terminated.written`)."""
    if _active:
        _written.append(str(path))


@contextlib.contextmanager
def held():
    """Within the block, SIGTERM, SIGHUP and SIGINT wait for its end, then raise.

    For the few steps that must not be cut in two: creating a temporary file
    and recording its name, renaming a finished output into place.  Outside
    :func:`terminating`, and in other threads, it changes nothing.
    """
    global _held
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _held += 1
    try:
        yield
    finally:
        _held -= 1
        if not _held and _pending:
            signum = _pending[0]
            _pending.clear()
            raise _interruption(signum)


class Terminated(KeyboardInterrupt):
    """Raised in the main thread when SIGTERM or SIGHUP arrives inside :func:`terminating`.

    Attributes
    ----------
    signum : int
        The signal's number.
    """

    def __init__(self, signum: int, written=()):
        super().__init__(signum)
        self.signum = signum
        #: The outputs committed before the signal arrived (complete and in place).
        self.written = tuple(written)

    @property
    def name(self) -> str:
        """The signal's name, e.g. ``"SIGTERM"``."""
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum

    @property
    def message(self) -> str:
        """What the run did, for the user: ``stopped by SIGTERM; no output was written``,
        or ``stopped by SIGTERM after writing OUT`` when the outputs were already in place."""
        if self.written:
            return f"stopped by {self.name} after writing {', '.join(self.written)}"
        return f"stopped by {self.name}; no output was written"


def _interruption(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum, _written)


@contextlib.contextmanager
def terminating():
    """Within the block, SIGTERM and SIGHUP raise :class:`Terminated` in the main thread.

    The first signal raises; a second one while the run cleans up is
    ignored, so that the cleanup finishes (a second Ctrl-C still interrupts
    it: the user asked twice).  Inside :func:`held`, SIGINT too waits for the
    block's end.  A signal that was ignored when the block started
    (``nohup`` ignores SIGHUP) stays ignored, and every handler is put back
    as it was on leaving.  Outside the main thread, where Python cannot set
    handlers, the block runs unchanged.

    A signal whose exception was swallowed on the way (see the module's
    notes) is raised on leaving the block, and wins over another exception
    leaving it: the run still ends with 128 + the signal's number.
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = []

    global _active

    def handler(signum, frame):
        if fired and signum != signal.SIGINT:
            return
        fired.append(signum)
        _received.append(signum)  # first: the exception below may be swallowed
        for callback in _listeners:
            try:
                callback()
            except Exception:  # a listener's failure must not cost the signal
                pass
        if _held:
            _pending.append(signum)
        else:
            raise _interruption(signum)

    previous = {}
    previous_hook = sys.unraisablehook

    def unraisable(report):
        # The handler's exception, swallowed where Python cannot raise (a gc
        # callback): not worth a traceback, the block's end raises it again.
        if not isinstance(report.exc_value, KeyboardInterrupt) or not _received:
            previous_hook(report)

    outer = (list(_received), list(_written))
    _received.clear()
    _written.clear()
    _active += 1
    try:
        for number in SIGNALS:
            if signal.getsignal(number) is signal.SIG_IGN:
                continue
            previous[number] = signal.signal(number, handler)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, handler)
        sys.unraisablehook = unraisable
        try:
            yield
        except KeyboardInterrupt as stop:  # Terminated too: the signal came through
            if isinstance(stop, Terminated) and not stop.written and _written:
                stop.written = tuple(_written)
            raise
        except BaseException as error:
            if _received:  # its exception was lost, and this one is likely its consequence
                raise _interruption(_received[0]) from error
            raise
        if _received:  # received, but its exception never came through
            raise _interruption(_received[0])
    finally:
        if sys.unraisablehook is unraisable:
            sys.unraisablehook = previous_hook
        for number, old in previous.items():
            signal.signal(number, old if old is not None else signal.SIG_DFL)
        _pending.clear()
        _active -= 1
        _received[:] = outer[0]
        _written[:] = outer[1]
