"""A progress line on standard error for long jobs: rows done, rows/s and ETA."""

from __future__ import annotations

import sys
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
