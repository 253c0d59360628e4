"""Writing outputs atomically: a temporary file beside the target, renamed into place.

An interrupted run never leaves a truncated output behind: either the old
file (or none) is there, or the complete new one.
"""

from __future__ import annotations

import os
import tempfile

from .files import InputError


def check_writable(path: str) -> None:
    """Fail now, before any work, if ``path`` cannot be written."""
    directory = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(directory):
        raise InputError(f"{path}: cannot write here, the directory {directory} does not exist")
    if os.path.isdir(path):
        raise InputError(f"{path}: is a directory")
    try:
        handle, probe = tempfile.mkstemp(prefix=".fastbleu-", dir=directory)
    except OSError as error:
        raise InputError(f"{path}: cannot write here ({error.strerror})") from None
    os.close(handle)
    os.unlink(probe)


class AtomicPath:
    """A temporary path to write to, moved onto ``path`` by :meth:`commit`.

    Use as a context manager: leaving the block by an exception removes the
    temporary file and leaves ``path`` untouched.
    """

    def __init__(self, path: str):
        self.path = path
        handle, self.temporary = tempfile.mkstemp(
            prefix=f".{os.path.basename(path)}.", suffix=".tmp",
            dir=os.path.dirname(os.path.abspath(path)))
        os.close(handle)

    def commit(self) -> None:
        # mkstemp made the file private (0600); give it the permissions any new file gets.
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(self.temporary, 0o666 & ~umask)
        os.replace(self.temporary, self.path)

    def discard(self) -> None:
        if os.path.exists(self.temporary):
            os.unlink(self.temporary)

    def __enter__(self) -> AtomicPath:
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()
