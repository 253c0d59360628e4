"""Inputs -> UTF-8 text columns: the first stage of the pipeline.

Every accepted input (Python sequences of ``str``, numpy string/object
arrays, pyarrow string arrays, pandas and polars Series) becomes a
:class:`TextColumn`: an Arrow-style UTF-8 data buffer with int64 offsets and
an optional validity mask.  The kernels read these buffers directly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import InputError

# pyarrow is imported where it is used: reading files (the command line) does
# not need it, and its import is part of every run's start-up time.


@dataclass(frozen=True)
class TextColumn:
    """A column of UTF-8 segments.

    Attributes
    ----------
    data : numpy.ndarray
        ``uint8`` bytes of all segments, back to back.
    offsets : numpy.ndarray
        ``int64``, length ``n + 1``; segment ``i`` is
        ``data[offsets[i]:offsets[i + 1]]``.
    valid : numpy.ndarray or None
        ``bool`` per segment, ``False`` for a missing one; ``None`` when
        every segment is present.
    """

    data: np.ndarray
    offsets: np.ndarray
    valid: np.ndarray | None = None

    def __len__(self) -> int:
        return self.offsets.size - 1

    def slice(self, start: int, stop: int) -> TextColumn:
        """Segments ``start:stop``, sharing this column's buffers."""
        valid = None if self.valid is None else self.valid[start:stop]
        return TextColumn(self.data, self.offsets[start:stop + 1], valid)


def _describe(values) -> str:
    return type(values).__module__.split(".")[0] + "." + type(values).__qualname__


def is_string_type(kind) -> bool:
    """Whether an Arrow type holds text: ``string``, ``large_string`` or ``string_view``."""
    import pyarrow as pa

    return pa.types.is_string(kind) or pa.types.is_large_string(kind) or \
        (hasattr(pa.types, "is_string_view") and pa.types.is_string_view(kind))


def valid_utf8(column, name: str, first_row: int, errors: str):
    """A text column checked to be UTF-8 (or repaired with U+FFFD if ``errors="replace"``).

    Binary columns are accepted and returned as ``large_string``.  A bad
    value with ``errors="strict"`` is an InputError naming the column and row.
    """
    import pyarrow as pa

    if pa.types.is_binary(column.type) or pa.types.is_large_binary(column.type):
        try:
            return column.cast(pa.large_string())  # checks UTF-8, copies nothing
        except pa.ArrowInvalid:
            pass
    else:
        try:
            column.validate(full=True)
            return column
        except pa.ArrowInvalid:
            pass
    raw = column.cast(pa.large_binary()).to_pylist()
    fixed = []
    for i, value in enumerate(raw):
        if value is None:
            fixed.append(None)
            continue
        try:
            fixed.append(value.decode("utf-8"))
        except UnicodeDecodeError as error:
            if errors != "replace":
                raise InputError(f"column {name!r}, row {first_row + i}: not valid UTF-8 "
                                 f"({error.reason}); --encoding-errors replace goes on with "
                                 "U+FFFD") from None
            fixed.append(value.decode("utf-8", "replace"))
    return pa.array(fixed, type=pa.large_string())


def arrow_strings(array, name: str, *, errors: str = "strict", first_row: int | None = None,
                  trusted: bool = False):
    """An Arrow text column as one ``string``/``large_string`` array of valid UTF-8.

    The one Arrow -> text path of fastbleu (API inputs, table columns): a
    chunked array becomes one array, a dictionary its values, a view or an
    all-null column ``large_string``.

    Parameters
    ----------
    array : pyarrow.Array or pyarrow.ChunkedArray
    name : str
        The column, as messages name it.
    errors : {"strict", "replace"}
        Table columns only: refuse text that is not UTF-8, or repair it with U+FFFD.
    first_row : int, optional
        Given for a table column (the row number of the array's first row):
        errors are then :class:`~fastbleu.errors.InputError` naming the
        column and the row, as the command line shows them.  Without, they
        are a TypeError (not text) or ValueError (``name[i]`` not UTF-8).
    trusted : bool
        An array fastbleu built itself (valid UTF-8, or Python text with lone
        surrogates as ``large_binary``): not checked.

    Returns
    -------
    pyarrow.Array
    """
    import pyarrow as pa

    table = first_row is not None
    if not table and len(array) and array.null_count == len(array):  # all missing, any type
        array = pa.nulls(len(array), pa.large_string())
    if isinstance(array, pa.ChunkedArray):
        if array.num_chunks == 1:
            array = array.chunk(0)
        else:  # large offsets, so that chunks beyond 2 GiB of text still fit
            array = array.cast(pa.large_string()).combine_chunks()
    kind = array.type
    if pa.types.is_dictionary(kind) and (table or pa.types.is_string(kind.value_type)
                                         or pa.types.is_large_string(kind.value_type)):
        array = array.cast(kind.value_type)
        kind = array.type
    if pa.types.is_string_view(kind) or pa.types.is_null(kind):
        array = array.cast(pa.large_string())
        kind = array.type
    if table:
        if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
            raise InputError(f"column {name!r} holds {kind}, not strings")
        return valid_utf8(array, name, first_row, errors)
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)
            or (trusted and pa.types.is_large_binary(kind))):
        raise TypeError(f"{name} must hold strings, got an Arrow column of type {kind}")
    if not trusted:
        try:
            _validate(array)
        except pa.ArrowInvalid:
            for i, value in enumerate(array.cast(pa.large_binary()).to_pylist()):
                try:
                    None if value is None else value.decode("utf-8")
                except UnicodeDecodeError:
                    raise ValueError(f"{name}[{i}] is not valid UTF-8") from None
            raise
    return array


#: Rows from which a column's UTF-8 is checked in pieces on the kernels' pool.
_PARALLEL_CHECK = 1 << 16


def _validate(array) -> None:
    """``array.validate(full=True)``: offsets and UTF-8; a large column in pieces on the
    kernels' thread pool (pyarrow releases the GIL), so that the calling thread only waits.
    The pieces' offsets meet at their ends, so together they check what the whole does."""
    n = len(array)
    if n < _PARALLEL_CHECK:
        array.validate(full=True)
        return
    from .._kernels.threads import ordered_map, pool_size  # numba: a large input uses it

    pieces = max(2, 2 * pool_size())
    bounds = [n * k // pieces for k in range(pieces + 1)]
    for _ in ordered_map(lambda k: array.slice(bounds[k], bounds[k + 1] - bounds[k])
                         .validate(full=True), range(pieces)):
        pass


def _from_arrow(array, name: str, trusted: bool = False) -> TextColumn:
    """Buffers of an Arrow string column (:func:`arrow_strings`).

    ``trusted`` marks arrays fastbleu built itself (valid UTF-8, or Python
    text with lone surrogates as binary); any other array is checked to be
    valid UTF-8, because the kernels read it without bounds checks.
    """
    import pyarrow as pa

    array = arrow_strings(array, name, trusted=trusted)
    offset_type = np.int32 if pa.types.is_string(array.type) else np.int64
    n = len(array)
    _, offsets_buffer, data_buffer = array.buffers()
    offsets = np.frombuffer(offsets_buffer, dtype=offset_type)[array.offset:array.offset + n + 1]
    offsets = offsets.astype(np.int64)
    if data_buffer is None:
        data = np.zeros(0, dtype=np.uint8)
    else:
        data = np.frombuffer(data_buffer, dtype=np.uint8)
    valid = None
    if array.null_count:
        valid = np.asarray(array.is_valid())
    return TextColumn(data, offsets, valid)


def _raise_for_first_non_string(values: Sequence, name: str) -> None:
    for i, value in enumerate(values):
        if not isinstance(value, str) and value is not None:
            raise TypeError(f"{name}[{i}] is {type(value).__name__}, not str")


def _from_python(values: Sequence, name: str, allow_null: bool) -> TextColumn:
    import pyarrow as pa

    values = values if isinstance(values, (list, tuple)) else list(values)
    try:
        # Inference, not type=string: a bytes element then shows as a binary
        # column instead of being taken for text.
        array = pa.array(values)
    except (pa.ArrowException, UnicodeError):
        _raise_for_first_non_string(values, name)
        # Only lone surrogates make a list of str fail to encode; Python (and
        # sacrebleu) treat them as ordinary characters, so keep them.
        encoded = [None if v is None else v.encode("utf-8", "surrogatepass") for v in values]
        array = pa.array(encoded, type=pa.large_binary())
    else:
        if not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
                or pa.types.is_null(array.type)):
            _raise_for_first_non_string(values, name)
    return _from_arrow(array, name, trusted=True)


def _from_pandas(series, name: str, allow_null: bool) -> TextColumn:
    import pyarrow as pa

    try:
        array = pa.array(series, from_pandas=True)  # NaN and None become nulls
    except (pa.ArrowException, TypeError, ValueError):
        array = None
    if array is None or not (pa.types.is_string(array.type) or pa.types.is_large_string(array.type)
                             or pa.types.is_string_view(array.type) or pa.types.is_null(array.type)
                             or pa.types.is_dictionary(array.type)):
        values = [None if value is None or value != value else value for value in series.tolist()]
        return _from_python(values, name, allow_null)
    return _from_arrow(array, name)


def as_text_column(values, name: str, allow_null: bool = False,
                   trusted: bool = False) -> TextColumn:
    """Convert a column of segments to a :class:`TextColumn`.

    Parameters
    ----------
    values : sequence of str, numpy.ndarray, pyarrow.Array, pyarrow.ChunkedArray,
        pandas.Series or polars.Series
        The segments.
    name : str
        What the column is called in error messages (``"hypotheses"``,
        ``"references[1]"`` ...).
    allow_null : bool
        Whether ``None``/null marks a missing segment (references) or is an
        error (hypotheses).
    trusted : bool
        The caller has already checked an Arrow column to be valid UTF-8.

    Raises
    ------
    TypeError
        If ``values`` is not a column of strings, or an element is not a
        ``str`` (the message names its index).
    """
    if isinstance(values, TextColumn):
        column = values
    elif isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a sequence of segments, got a single {type(values).__name__}")
    elif _describe(values).startswith("pyarrow.") and hasattr(values, "type"):
        column = _from_arrow(values, name, trusted=trusted)
    elif isinstance(values, np.ndarray):
        if values.ndim != 1:
            raise TypeError(f"{name} must be one-dimensional, got an array of shape {values.shape}")
        if values.dtype.kind in "UO":
            # Through Python str, not pa.array(values): pyarrow cuts a numpy
            # str element at an embedded NUL.
            column = _from_python(values.tolist(), name, allow_null)
        else:
            raise TypeError(f"{name} must hold strings, got a numpy array of dtype {values.dtype}")
    elif _describe(values).startswith("polars."):
        column = _from_arrow(values.to_arrow(), name)
    elif _describe(values).startswith("pandas."):
        column = _from_pandas(values, name, allow_null)
    elif isinstance(values, Sequence) or hasattr(values, "__iter__"):
        column = _from_python(values, name, allow_null)
    else:
        raise TypeError(f"{name} must be a sequence of strings, got {_describe(values)}")
    if column.valid is not None and not allow_null:
        i = int(np.flatnonzero(~column.valid)[0])
        raise TypeError(f"{name}[{i}] is None; every hypothesis must be a str")
    return column


def lowercase(column: TextColumn) -> TextColumn:
    """Apply Python's ``str.lower()`` to every segment.

    ASCII bytes are lowered in bulk; segments with non-ASCII characters go
    through ``str.lower()`` itself, which knows the full Unicode mappings
    (``İ`` -> ``i̇``, final sigma ...).  ``str.lower()`` never produces an
    ASCII capital, so lowering ASCII first and then the rest is the same as
    lowering each segment once.
    """
    data = column.data
    offsets = column.offsets
    start, stop = int(offsets[0]), int(offsets[-1])
    lowered = data[start:stop].copy()
    capitals = (lowered >= 0x41) & (lowered <= 0x5A)
    lowered[capitals] += 0x20
    high = np.concatenate(([0], np.cumsum(lowered >= 0x80, dtype=np.int64)))
    rebased = offsets - start
    has_high = high[rebased[1:]] != high[rebased[:-1]]
    if column.valid is not None:  # a null slot may hold anything; it is never read
        has_high &= column.valid
    non_ascii = np.flatnonzero(has_high)
    if non_ascii.size == 0:
        return TextColumn(lowered, rebased, column.valid)
    # The other segments' bytes stay; each non-ASCII one is replaced by its str.lower(),
    # assembled with numpy (no pyarrow: a text-file run does not import it).
    pieces, lengths, done = [], np.diff(rebased), 0
    for i in non_ascii:
        first, last = int(rebased[i]), int(rebased[i + 1])
        lower = (lowered[first:last].tobytes().decode("utf-8", "surrogatepass").lower()
                 .encode("utf-8", "surrogatepass"))
        pieces += [lowered[done:first], np.frombuffer(lower, dtype=np.uint8)]
        lengths[i] = len(lower)
        done = last
    pieces.append(lowered[done:])
    new_offsets = np.zeros(len(column) + 1, dtype=np.int64)
    np.cumsum(lengths, out=new_offsets[1:])
    return TextColumn(np.concatenate(pieces), new_offsets, column.valid)
