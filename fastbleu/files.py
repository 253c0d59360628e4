"""Text files -> text columns, without a Python string per line.

A file is read as bytes, checked to be valid UTF-8 and split at ``\\n``,
which is how sacrebleu reads it (``open(..., newline="\\n")``): a ``\\r``,
U+2028 or any other separator stays inside its line, and trailing
whitespace is left for the tokenizer's right-strip.  ``.gz`` files are
decompressed transparently.
"""

from __future__ import annotations

import gzip
import os

import numpy as np

from .text import TextColumn


class InputError(Exception):
    """A problem with a user's input that deserves a one-line message, not a traceback."""


def _read_bytes(path: str) -> bytes:
    try:
        if path.endswith(".gz"):
            with gzip.open(path, "rb") as handle:
                return handle.read()
        with open(path, "rb") as handle:
            return handle.read()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a directory, not a text file") from None
    except PermissionError:
        raise InputError(f"{path}: permission denied") from None
    except (OSError, EOFError) as error:
        raise InputError(f"{path}: cannot be read ({error})") from None


def column_from_bytes(raw: bytes, name: str = "<bytes>") -> TextColumn:
    """Split UTF-8 bytes into lines as sacrebleu's reader does.

    Raises
    ------
    InputError
        If the bytes are not valid UTF-8; the message names the line.
    """
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise InputError(f"{name}: line {line} is not valid UTF-8 ({error.reason} at byte "
                         f"{error.start})") from None
    data = np.frombuffer(raw, dtype=np.uint8)
    is_newline = data == 0x0A
    newlines = np.flatnonzero(is_newline)
    # Line i ends at the i-th newline; text after the last newline is one more line.
    ends = newlines if not raw or raw.endswith(b"\n") else np.append(newlines, data.size)
    starts = np.concatenate(([0], newlines + 1))[:ends.size]
    offsets = np.zeros(ends.size + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    return TextColumn(data[~is_newline], offsets, None)


def read_lines(path: str) -> TextColumn:
    """Read a text file (``.gz`` too) into a column, one segment per line."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    return column_from_bytes(_read_bytes(path), path)
