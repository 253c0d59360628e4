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
import zlib

import numpy as np

from ..errors import InputError  # noqa: F401  (fastbleu.files.InputError stays importable)
from .text import TextColumn


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
    except zlib.error as error:
        raise InputError(f"{path}: damaged gzip data ({error})") from None
    except (OSError, EOFError) as error:
        raise InputError(f"{path}: cannot be read ({error})") from None


def _to_utf8(raw: bytes, name: str, encoding: str, errors: str) -> bytes:
    """The bytes as valid UTF-8: checked, or re-encoded from another encoding."""
    is_utf8 = encoding.lower().replace("-", "").replace("_", "") == "utf8"
    try:
        text = raw.decode(encoding, "strict")
    except LookupError:
        raise InputError(f"unknown encoding {encoding!r}") from None
    except UnicodeDecodeError as error:
        if errors != "replace":
            line = raw.count(b"\n", 0, error.start) + 1
            shown = "UTF-8" if is_utf8 else encoding
            raise InputError(f"{name}: line {line} is not valid {shown} ({error.reason} at "
                             f"byte {error.start}); --encoding-errors replace goes on with "
                             "U+FFFD") from None
        text = raw.decode(encoding, "replace")
    else:
        if is_utf8:
            return raw
    return text.encode("utf-8", "surrogatepass")


#: The first bytes of binary tables that are sometimes given where a text file belongs.
_TABLE_MAGIC = {b"PAR1": "a Parquet table", b"ARROW1": "an Arrow IPC (Feather) table"}


def _refuse_table(raw: bytes, name: str) -> None:
    """A table read as text would be reported as undecodable: say what it is instead."""
    for magic, what in _TABLE_MAGIC.items():
        if raw.startswith(magic):
            raise InputError(f"{name}: is {what}, not a text file; to score a table give it "
                             "alone (no -i) with --hyp-column and --ref-column")


def column_from_bytes(raw: bytes, name: str = "<bytes>", encoding: str = "utf-8",
                      errors: str = "strict", universal_newlines: bool = False) -> TextColumn:
    """Split text bytes into lines as sacrebleu's reader does.

    Parameters
    ----------
    raw : bytes
        The file's content.
    name : str
        The file's name, for messages.
    encoding : str
        Its encoding (sacrebleu's ``-e``); the column is UTF-8 in any case.
    errors : {"strict", "replace"}
        Whether undecodable bytes are an error or become U+FFFD.
    universal_newlines : bool
        End lines at ``\r\n`` and ``\r`` too, as a ``TextIOWrapper`` does
        (sacrebleu reads standard input that way, files with ``newline="\n"``).
        Applied after decoding, so that a ``0x0D`` byte inside a UTF-16 or
        UTF-32 character is not taken for a carriage return.

    Raises
    ------
    InputError
        If the bytes cannot be decoded (the message names the line), or are a
        Parquet or Arrow table.
    """
    _refuse_table(raw, name)
    raw = _to_utf8(raw, name, encoding, errors)
    if universal_newlines and b"\r" in raw:  # in UTF-8, 0x0D is only ever a carriage return
        raw = raw.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
    data = np.frombuffer(raw, dtype=np.uint8)
    is_newline = data == 0x0A
    newlines = np.flatnonzero(is_newline)
    # Line i ends at the i-th newline; text after the last newline is one more line.
    ends = newlines if not raw or raw.endswith(b"\n") else np.append(newlines, data.size)
    starts = np.concatenate(([0], newlines + 1))[:ends.size]
    offsets = np.zeros(ends.size + 1, dtype=np.int64)
    np.cumsum(ends - starts, out=offsets[1:])
    return TextColumn(data[~is_newline], offsets, None)


def read_bytes(path: str) -> bytes:
    """A file's bytes (``.gz`` decompressed), or an InputError that says why not."""
    return _read_bytes(os.fspath(path))


def read_lines(path, encoding: str = "utf-8", errors: str = "strict") -> TextColumn:
    """Read a text file (``.gz`` too) into a column, one segment per line."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
    path = os.fspath(path)
    return column_from_bytes(_read_bytes(path), path, encoding, errors)


def split_fields(column: TextColumn, name: str, count: int | None = None) -> list[list[str]]:
    """Tab-separated fields of every line, as sacrebleu reads them.

    With ``count`` (``-nr``), each right-stripped line is split into exactly
    that many fields (the last keeps further tabs); without (several
    systems on standard input), the first line fixes the number of fields
    and every field is right-stripped.

    Raises
    ------
    InputError
        For a line with another number of fields; the message names it.
    """
    data = column.data
    lines = [data[column.offsets[i]:column.offsets[i + 1]].tobytes()
             .decode("utf-8", "surrogatepass").rstrip() for i in range(len(column))]
    if count is None:
        count = len(lines[0].split("\t")) if lines else 1
        rows = [[field.rstrip() for field in line.split("\t")] for line in lines]
    else:
        rows = [line.split("\t", count - 1) for line in lines]
    for number, row in enumerate(rows, 1):
        if len(row) != count:
            raise InputError(f"{name}: line {number} has {len(row)} tab-separated fields, "
                             f"expected {count}")
    return [[row[k] for row in rows] for k in range(count)]
