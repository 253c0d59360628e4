"""What a long job says on standard error: a progress line (rows done, rows/s and ETA),
and the one line of a first run that has to compile kernels."""

from __future__ import annotations

import contextlib
import sys
import threading
import time


def _duration(seconds: float) -> str:
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


class Progress:
    """Redraws one line on ``stream`` at most every ``interval`` seconds.

    Parameters
    ----------
    total : int or None
        Rows expected (from Parquet metadata), or None when unknown.
    enabled : bool or None
        Force on or off; None shows it only when ``stream`` is a terminal.
    """

    def __init__(self, total: int | None, enabled: bool | None = None, stream=None,
                 interval: float = 0.2):
        self.stream = stream if stream is not None else sys.stderr
        if self.stream is None:  # standard error closed (2>&-): nowhere to draw
            enabled = False
        elif enabled is None:
            try:
                enabled = hasattr(self.stream, "isatty") and self.stream.isatty()
            except (OSError, ValueError):
                enabled = False
        self.enabled = enabled
        self.total = total
        self.done = 0
        self.interval = interval
        self._start = time.perf_counter()
        self._last = 0.0

    def line(self) -> str:
        """The text of the progress line as it stands."""
        elapsed = max(time.perf_counter() - self._start, 1e-9)
        rate = self.done / elapsed
        text = f"{self.done:,}"
        if self.total:
            text += f"/{self.total:,} rows ({100 * self.done / self.total:.0f}%)"
        else:
            text += " rows"
        text += f"  {rate:,.0f} rows/s"
        if self.total and rate > 0:
            text += f"  ETA {_duration(max(self.total - self.done, 0) / rate)}"
        return text

    def update(self, rows: int) -> None:
        """Count ``rows`` more rows and redraw if it is time."""
        self.done += rows
        now = time.perf_counter()
        if self.enabled and now - self._last >= self.interval:
            self._last = now
            self._draw("\r" + self.line() + "\x1b[K")

    def close(self) -> None:
        """Draw the final state and end the line."""
        if self.enabled:
            self._draw("\r" + self.line() + f"  in {_duration(time.perf_counter() - self._start)}"
                       + "\x1b[K\n")

    def _draw(self, text: str) -> None:
        """Write ``text``; a stream that fails (closed, full, a broken pipe) ends the
        progress line rather than the job."""
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):
            self.enabled = False


#: The name of each metric key in the compile notice.
_METRIC_NAMES = {"bleu": "BLEU", "chrf": "chrF", "ter": "TER", "nist": "NIST"}


def compile_message(keys) -> str:
    """The compile notice for the metrics ``keys`` (``["chrf"]``: "... the chrF kernels ...")."""
    names = list(dict.fromkeys(_METRIC_NAMES.get(key, key) for key in keys)) or ["fastbleu"]
    listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
    return (f"fastbleu: compiling the {listed} kernels once; later runs load them from "
            "the cache")


class CompileNotice:
    """One line on standard error at the first numba compile of a fastbleu kernel.

    A first run compiles for 5-15 s with nothing else printed, which looks like a
    hang.  The command line sets the line for its run (:meth:`during`);
    :mod:`fastbleu._kernels.notice`, installed when the kernels are first imported,
    calls :meth:`show` at numba's ``numba:compile`` event, which numba fires on a
    cache miss only.  This module imports neither numba nor numpy, so a run that
    the ahead-of-time kernels serve still never imports numba.
    """

    def __init__(self):
        self.text = None
        self.stream = None
        self.shown = False
        self._lock = threading.Lock()

    @contextlib.contextmanager
    def during(self, text: str | None, stream=None):
        """Within the block, the first compile prints ``text`` (None: nothing) on
        ``stream`` (default: ``sys.stderr`` at the time); yields this object."""
        self.text, self.stream, self.shown = text, stream, False
        try:
            yield self
        finally:
            self.text, self.stream = None, None

    def show(self) -> None:
        """Print the line, if one is set and not yet printed (from any thread)."""
        with self._lock:
            if self.text is None or self.shown:
                return
            self.shown = True
            text, stream = self.text, self.stream if self.stream is not None else sys.stderr
        if stream is None:
            return
        try:
            stream.write(text + "\n")
            stream.flush()
        except (OSError, ValueError):  # a closed or full standard error: no notice
            pass


#: The notice of this process (fastbleu's kernels are compiled once per process).
COMPILE_NOTICE = CompileNotice()
