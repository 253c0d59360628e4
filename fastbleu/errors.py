"""The exceptions that mean "the user's input is wrong", as opposed to a bug.

The command line turns an :class:`InputError` into one line on standard
error and exit status 2; any other exception is a bug and keeps its
traceback.  This module imports nothing but the standard library, so the
command line can catch these before numpy, numba or pyarrow are loaded.
"""

from __future__ import annotations

__all__ = ["InputError"]


class InputError(Exception):
    """A problem with a user's input that deserves a one-line message, not a traceback.

    Raised for what a user can fix: a missing or unreadable file, text that
    is not valid UTF-8, a missing or repeated column, an output that must
    not be written.  The message names the file, line or column.
    """
