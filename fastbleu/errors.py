"""The exceptions that mean "the user's input is wrong", as opposed to a bug.

The command line turns an :class:`InputError` into one line on standard
error and exit status 2; any other exception is a bug and keeps its
traceback.  This module imports nothing but the standard library, so the
command line can catch these before numpy, numba or pyarrow are loaded.
"""

from __future__ import annotations

__all__ = ["InputError", "SegmentError"]


class InputError(Exception):
    """A problem with a user's input that deserves a one-line message, not a traceback.

    Raised for what a user can fix: a missing or unreadable file, text that
    is not valid UTF-8, a missing or repeated column, an output that must
    not be written.  The message names the file, line or column.
    """


class SegmentError(ValueError):
    """A metric refuses one segment of its input (a ``ValueError``), and says which.

    ``index`` counts from the first segment the metric was given, so a caller
    that gave it a slice (a table's batch) can name its own row:
    ``first_row + error.index``.  ``reason`` is the message without the
    segment's number.
    """

    def __init__(self, index: int, reason: str):
        self.index = index
        self.reason = reason
        super().__init__(f"segment {index}: {reason}")
