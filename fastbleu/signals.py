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
"""

from __future__ import annotations

import contextlib
import signal
import threading

#: The signals turned into :class:`Terminated` (those this platform has).
SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))


_held = 0  # depth of held() blocks in the main thread
_pending: list = []  # a signal that arrived meanwhile


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

    def __init__(self, signum: int):
        super().__init__(signum)
        self.signum = signum

    @property
    def name(self) -> str:
        """The signal's name, e.g. ``"SIGTERM"``."""
        return signal.Signals(self.signum).name

    @property
    def exit_status(self) -> int:
        """The shell's convention for a process ended by a signal: 128 + its number."""
        return 128 + self.signum


def _interruption(signum: int) -> KeyboardInterrupt:
    return KeyboardInterrupt() if signum == signal.SIGINT else Terminated(signum)


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
    """
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    fired = []

    def handler(signum, frame):
        if fired and signum != signal.SIGINT:
            return
        fired.append(signum)
        if _held:
            _pending.append(signum)
        else:
            raise _interruption(signum)

    previous = {}
    try:
        for number in SIGNALS:
            if signal.getsignal(number) is signal.SIG_IGN:
                continue
            previous[number] = signal.signal(number, handler)
        if signal.getsignal(signal.SIGINT) is signal.default_int_handler:
            previous[signal.SIGINT] = signal.signal(signal.SIGINT, handler)
        yield
    finally:
        for number, old in previous.items():
            signal.signal(number, old if old is not None else signal.SIG_DFL)
        _pending.clear()
