"""One line on standard error when a kernel has to be compiled: a first run is not a hang.

numba compiles a kernel on its first call unless the cache (or the
ahead-of-time module, :mod:`fastbleu._native`) already holds it; for a
metric that takes 5-15 s, during which nothing else is printed.  numba
announces every compile it is about to do, and only those (a kernel loaded
from the cache is not one), with its ``numba:compile`` event; the listener
here prints one line at the first such event of a fastbleu kernel, in any
thread, and nothing after.  Checking numba's event is exact where guessing
from the cache's files is not (an index file may hold another signature, or
source that has changed since).
"""

from __future__ import annotations

import contextlib
import sys
import threading

from numba.core import event

#: The name of each metric key in the notice.
NAMES = {"bleu": "BLEU", "chrf": "chrF", "ter": "TER", "nist": "NIST"}


def message(keys) -> str:
    """The notice for the metrics ``keys`` (``["chrf"]`` -> "... the chrF kernels ...")."""
    names = list(dict.fromkeys(NAMES.get(key, key) for key in keys)) or ["fastbleu"]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return (f"fastbleu: compiling the {listed} kernels once; later runs load them from "
            "the cache")


class _FirstCompile(event.Listener):
    """Writes ``text`` to standard error at the first compile of a fastbleu function."""

    def __init__(self, text: str, stream=None):
        self.text = text
        self.stream = stream
        self.shown = False
        self._lock = threading.Lock()

    def on_start(self, ev):
        if self.shown:
            return
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if not module.startswith("fastbleu."):
            return
        with self._lock:
            if self.shown:
                return
            self.shown = True
        stream = self.stream if self.stream is not None else sys.stderr
        if stream is None:
            return
        try:
            stream.write(self.text + "\n")
            stream.flush()
        except (OSError, ValueError):  # a closed or full standard error: no notice
            pass

    def on_end(self, ev):
        pass


@contextlib.contextmanager
def compile_notice(keys, enabled: bool = True, stream=None):
    """Within the block, the first compile of a fastbleu kernel prints :func:`message`.

    Parameters
    ----------
    keys : iterable of str
        The metrics being run (``"bleu"``, ``"chrf"``, ...), named in the line.
    enabled : bool
        False (``-q``): print nothing.
    stream : file, optional
        Where to write (default: ``sys.stderr`` at the time of the compile).

    Yields
    ------
    _FirstCompile or None
        The listener (its ``shown`` says whether the line was printed).
    """
    if not enabled:
        yield None
        return
    listener = _FirstCompile(message(keys), stream)
    with event.install_listener("numba:compile", listener):
        yield listener
