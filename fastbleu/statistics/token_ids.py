"""Integer token ids as BLEU input: the column of segments that needs no tokenizer.

A model's output and its references are often token ids already (an RL
reward, a batch of generated tensors, an Arrow column of ``input_ids``).
:class:`TokenIds` reads them where they are (numpy, Arrow and DLPack buffers
without a copy) and hashes every id into the token stream the counting
kernels read (:mod:`fastbleu._kernels.ids`), batch by batch.  Scores equal
those of the ids joined by spaces and scored with ``tokenize="none"``.

``BLEU.corpus_score``, ``sentence_scores`` and ``segment_statistics`` (and
so an accumulator's ``update``), ``pool_scores`` and ``self_scores`` take any
of the forms :class:`TokenIds` takes directly; wrap them in :class:`TokenIds`
for offsets, padding and end-of-sequence ids.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .id_rows import joined_ids, list_ids
from .tokens import Tokens

# The hashing kernel (:mod:`fastbleu._kernels.ids`) is imported when ids are hashed: text
# input, even through code that asks whether its input is ids, never starts numba.

#: The ``tok`` field of the signature of scores of token ids.
IDS_SIGNATURE = "ids"
_INT64 = np.dtype(np.int64)
_CPU = 1  # DLPack's kDLCPU


def _module(value) -> str:
    return type(value).__module__.split(".")[0]


def _has_dlpack(value) -> bool:
    return hasattr(value, "__dlpack__") and not isinstance(value, np.ndarray) and \
        _module(value) != "pyarrow"


def _array(value, name: str) -> np.ndarray:
    """A numpy array, or a DLPack tensor (torch, jax, cupy ...) read on the CPU without a copy."""
    if isinstance(value, np.ndarray):
        array = value
    elif _has_dlpack(value):
        device = value.__dlpack_device__() if hasattr(value, "__dlpack_device__") else (_CPU, 0)
        if int(device[0]) != _CPU:
            raise ValueError(f"{name} is on DLPack device {tuple(device)}, not the CPU; move "
                             "it to the CPU first (e.g. tensor.cpu())")
        array = np.from_dlpack(value)
    else:
        array = np.asarray(value)
    if array.dtype.kind not in "iu":
        raise TypeError(f"{name} must hold integer token ids, got dtype {array.dtype}")
    return array


def _check_id(value, name: str) -> int | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int or None, got {type(value).__name__}")
    if not -2 ** 63 <= int(value) < 2 ** 63:
        raise ValueError(f"{name} must fit in int64, got {value}")
    return int(value)


class _Part:
    """One buffer of segments: ``values`` 1-D with int64 ``offsets`` (``n + 1``, into
    ``values``), or ``values`` 2-D (a row per segment) with ``offsets`` None."""

    __slots__ = ("values", "offsets", "valid")

    def __init__(self, values: np.ndarray, offsets: np.ndarray | None, valid=None):
        self.values, self.offsets, self.valid = values, offsets, valid

    def __len__(self) -> int:
        return self.values.shape[0] if self.offsets is None else self.offsets.size - 1

    def span(self, lo: int, hi: int) -> int:
        if self.offsets is None:
            return (hi - lo) * self.values.shape[1]
        return int(self.offsets[hi] - self.offsets[lo])

    def batch(self, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """Values and offsets of segments ``lo:hi``, int32/int64 as the kernel takes them."""
        if self.offsets is None:
            width = self.values.shape[1]
            values = np.ascontiguousarray(self.values[lo:hi]).reshape(-1)
            offsets = np.arange(hi - lo + 1, dtype=np.int64) * width
        else:
            values, offsets = self.values, self.offsets[lo:hi + 1]
        if values.dtype != _INT64:  # one kernel specialisation; a batch's copy at most
            first, last = int(offsets[0]), int(offsets[-1])
            values = values[first:last].astype(np.int64)
            offsets = offsets - first
        return values, offsets


def _check_offsets(values: np.ndarray, offsets, name: str) -> np.ndarray:
    offsets = _array(offsets, f"{name} offsets")
    if offsets.ndim != 1 or offsets.size == 0:
        raise ValueError(f"{name} offsets must be 1-D with one more entry than segments, got "
                         f"shape {offsets.shape}")
    if values.ndim != 1:
        raise ValueError(f"{name} values must be 1-D with offsets, got shape {values.shape}")
    if offsets.dtype.kind == "u" and offsets.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} offsets exceed int64")
    offsets = offsets.astype(np.int64)
    steps = np.diff(offsets)
    if (steps < 0).any():
        i = int(np.flatnonzero(steps < 0)[0])
        raise ValueError(f"{name} offsets must be non-decreasing: offsets[{i}] = {offsets[i]} "
                         f"> offsets[{i + 1}] = {offsets[i + 1]}")
    if offsets[0] < 0 or offsets[-1] > values.size:
        raise ValueError(f"{name} offsets must lie in 0 .. len(values) = {values.size}, got "
                         f"{offsets[0]} .. {offsets[-1]}")
    return offsets


def _from_tensor(value, name: str) -> _Part:
    array = _array(value, name)
    if array.ndim == 2:
        return _Part(array, None)
    if array.ndim == 1:  # neither text nor segments
        raise TypeError(f"{name} is a 1-D array of dtype {array.dtype}: text must be strings, "
                        "and token ids need segment boundaries, fastbleu.TokenIds(values, "
                        "offsets), or a 2-D (segments x length) array")
    raise ValueError(f"{name} must be a 2-D (segments x length) array of ids, got shape "
                     f"{array.shape}")


def _from_arrow(column, name: str) -> list[_Part]:
    import pyarrow as pa

    kind = column.type
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)) or \
            not pa.types.is_integer(kind.value_type):
        raise TypeError(f"{name} must be an Arrow list<int> column, got type {kind}")
    parts = []
    for chunk in column.chunks if isinstance(column, pa.ChunkedArray) else [column]:
        offsets = chunk.offsets.to_numpy()  # this chunk's n + 1 offsets, into its child
        child = chunk.values.slice(int(offsets[0]), int(offsets[-1] - offsets[0])) \
            if len(chunk) else chunk.values.slice(0, 0)
        if child.null_count:
            raise ValueError(f"{name} holds null ids inside a list; only whole segments may "
                             "be null")
        values = child.to_numpy(zero_copy_only=True)
        valid = chunk.is_valid().to_numpy(zero_copy_only=False) if chunk.null_count else None
        parts.append(_Part(values, (offsets - offsets[0]).astype(np.int64), valid))
    return parts


def _from_sequence(values: Sequence, name: str) -> _Part:
    """Python lists (or tuples, arrays, tensors) of ids, one per segment; None is missing."""
    n = len(values)
    lengths = np.zeros(n, dtype=np.int64)
    valid = np.ones(n, dtype=bool)
    rows, arrays = [], False  # rows: (segment, row)
    for i, row in enumerate(values):
        if row is None:
            valid[i] = False
            continue
        if isinstance(row, np.ndarray) or _has_dlpack(row):
            row = _array(row, f"{name}[{i}]")
            if row.ndim != 1:
                raise ValueError(f"{name}[{i}] must be a 1-D sequence of ids, got shape "
                                 f"{row.shape}")
            arrays = True
        elif isinstance(row, (str, bytes)) or not hasattr(row, "__len__"):
            raise TypeError(f"{name}[{i}] is {type(row).__name__}: give every segment as a "
                            "sequence of integer ids (or every segment as a string)")
        lengths[i] = len(row)
        rows.append((i, row))
    if arrays:  # each row its own array (lists among them converted one by one)
        pieces = [row if isinstance(row, np.ndarray) else list_ids([(i, row)], name)
                  for i, row in rows if len(row)]
    else:
        pieces = [list_ids(rows, name)]
    flat = joined_ids(pieces, name)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    return _Part(flat, offsets, None if valid.all() else valid)


class TokenIds:
    """A column of segments given as integer token ids, for BLEU without a tokenizer.

    Each segment's ids are its tokens (a unigram is one id), exactly as if
    the ids were written out in decimal, joined by spaces and scored with
    ``tokenize="none"`` (Papineni et al., 2002; Post, 2018).  The signature
    then says ``tok:ids``.  The buffers are read in place, batch by batch.

    Parameters
    ----------
    values : array-like
        The ids, in one of these forms:

        * with ``offsets``: a 1-D integer array (numpy, or any object with
          ``__dlpack__`` such as a torch or jax tensor) of all segments' ids
          back to back;
        * a 2-D integer array or DLPack tensor, a row per segment (rows of
          equal length; drop the padding with ``pad_id``);
        * a pyarrow ``list<int>``/``large_list<int>`` Array or ChunkedArray
          (null lists are missing segments);
        * a Python sequence (or numpy object array, pandas Series) with one
          list (tuple, 1-D array) of ints per segment (``None``: missing);
          a polars ``List`` Series;
        * another :class:`TokenIds`.
    offsets : array-like of int, optional
        ``n + 1`` non-decreasing offsets into ``values``: segment ``i`` is
        ``values[offsets[i]:offsets[i + 1]]``.
    pad_id : int, optional
        A padding id, dropped wherever it occurs (left or right padding, as a
        tokenizer's ``decode(..., skip_special_tokens=True)`` drops it).
    eos_id : int, optional
        An end-of-sequence id: after the leading run of ``pad_id`` (if any),
        a segment ends at its first ``eos_id``, which is not a token of it.
        Skipping the leading padding first lets ``pad_id == eos_id``
        (GPT-2's convention) work with left-padded batches.
    valid : array-like of bool, optional
        ``False`` marks a missing segment (a missing reference).

    Notes
    -----
    Ids are hashed, so any integer dtype and any 64-bit value is an id
    (uint64 ids of ``2**63`` or more too), but a negative id left after
    padding is dropped is refused, since it usually is a label-padding value
    (such as ``-100``) that needs ``pad_id``.  Bools are not ids.  ``BLEU(lowercase=True)`` is
    refused with ids.  Arguments of a metric's methods that are not
    :class:`TokenIds` are wrapped as ``TokenIds(argument)``.

    Examples
    --------
    >>> import numpy as np
    >>> from fastbleu import BLEU, TokenIds
    >>> hyps = TokenIds(np.array([5, 6, 7, 5, 6]), offsets=[0, 3, 5])
    >>> refs = np.array([[5, 6, 7, 0], [5, 6, 0, 0]])
    >>> BLEU(effective_order=True).sentence_scores(hyps, [TokenIds(refs, pad_id=0)])
    array([100., 100.])
    """

    def __init__(self, values, offsets=None, *, pad_id: int | None = None,
                 eos_id: int | None = None, valid=None):
        self._name = "values"
        self.pad_id = _check_id(pad_id, "pad_id")
        self.eos_id = _check_id(eos_id, "eos_id")
        if offsets is not None:
            array = _array(values, "values")
            self._parts = [_Part(array, _check_offsets(array, offsets, "values"))]
        elif isinstance(values, TokenIds):
            self._parts = values._parts
            self.pad_id = values.pad_id if self.pad_id is None else self.pad_id
            self.eos_id = values.eos_id if self.eos_id is None else self.eos_id
        else:
            self._parts = _convert(values, "values")
        self._bounds = np.cumsum([0] + [len(part) for part in self._parts])
        if valid is not None:
            mask = np.asarray(valid)
            if mask.dtype != bool or mask.shape != (len(self),):
                raise ValueError(f"valid must be a bool array of {len(self)} entries, got "
                                 f"{mask.dtype} {mask.shape}")
            self._parts = [_Part(part.values, part.offsets, mask[lo:hi] if part.valid is None
                                 else part.valid & mask[lo:hi])
                           for part, lo, hi in zip(self._parts, self._bounds, self._bounds[1:])]

    def __len__(self) -> int:
        return int(self._bounds[-1])

    def __repr__(self) -> str:
        return f"TokenIds({len(self)} segments, pad_id={self.pad_id}, eos_id={self.eos_id})"

    @property
    def valid(self) -> np.ndarray | None:
        """``bool`` per segment (False: missing), or None when every segment is present."""
        if all(part.valid is None for part in self._parts):
            return None
        return np.concatenate([np.ones(len(part), dtype=bool) if part.valid is None
                               else part.valid for part in self._parts])

    def _pieces(self, first: int, last: int):
        for k, part in enumerate(self._parts):
            lo, hi = max(first, int(self._bounds[k])), min(last, int(self._bounds[k + 1]))
            if lo < hi:
                yield part, lo - int(self._bounds[k]), hi - int(self._bounds[k])

    def span(self, first: int, last: int) -> int:
        """Hash slots that :meth:`tokens` needs for segments ``first:last``."""
        return sum(part.span(lo, hi) for part, lo, hi in self._pieces(first, last))

    def tokens(self, first: int = 0, last: int | None = None,
               out: np.ndarray | None = None) -> Tokens:
        """The token hashes of segments ``first:last`` (default all), as ``tokenize`` makes them.

        Parameters
        ----------
        first, last : int
            The segments.
        out : numpy.ndarray, optional
            uint64 scratch of at least :meth:`span` slots for the hashes.

        Raises
        ------
        ValueError
            If a segment keeps a negative id (the message names the segment).
        """
        from .._kernels.text.ids import NEGATIVE_ID, hash_ids

        last = len(self) if last is None else last
        if out is None:
            out = np.empty(self.span(first, last), dtype=np.uint64)
        start = np.empty(last - first, dtype=np.int64)
        count = np.empty(last - first, dtype=np.int64)
        at, base = 0, 0
        for part, lo, hi in self._pieces(first, last):
            values, offsets = part.batch(lo, hi)
            size = int(offsets[-1] - offsets[0])
            hash_ids(values, offsets, self.pad_id, self.eos_id, out[base:base + size],
                     count[at:at + hi - lo], unsigned=part.values.dtype.kind == "u")
            start[at:at + hi - lo] = offsets[:-1] - offsets[0] + base
            if part.valid is not None:
                count[at:at + hi - lo][~part.valid[lo:hi]] = -1
            at, base = at + hi - lo, base + size
        bad = np.flatnonzero(count == NEGATIVE_ID)
        if bad.size:
            raise ValueError(f"{self._name}: segment {first + int(bad[0])} holds a negative "
                             "token id; ids must be >= 0 (drop a padding value such as -100 "
                             "with fastbleu.TokenIds(..., pad_id=-100))")
        return Tokens(out[:base], start, count)


def _unwrap(values):
    """A pandas or polars Series as the Arrow array or numpy array it holds."""
    module = _module(values)
    if module == "polars" and hasattr(values, "to_arrow"):
        return values.to_arrow()
    if module == "pandas" and hasattr(values, "to_numpy"):
        if type(values.dtype).__name__ == "ArrowDtype":
            import pyarrow as pa

            return pa.array(values)
        return values.to_numpy()
    return values


def _first_present(values):
    for row in values:
        if row is not None:
            return row
    return None


def _convert(values, name: str) -> list[_Part]:
    values = _unwrap(values)
    if isinstance(values, np.ndarray) and values.dtype.kind == "O" and values.ndim == 1:
        return [_from_sequence(values, name)]  # one list or array per segment
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be token ids, got a single {type(values).__name__}")
    if _module(values) == "pyarrow" and hasattr(values, "type"):
        return _from_arrow(values, name)
    if isinstance(values, np.ndarray) or _has_dlpack(values):
        return [_from_tensor(values, name)]
    if isinstance(values, (list, tuple)) or (isinstance(values, Sequence) and
                                             hasattr(values, "__len__")):
        return [_from_sequence(values, name)]
    raise TypeError(f"{name} must be token ids (a 2-D integer array or tensor, an Arrow "
                    f"list<int> column, lists of ints, or fastbleu.TokenIds), got "
                    f"{type(values).__name__}")


def as_token_ids(values, name: str, allow_null: bool = False) -> TokenIds:
    """``values`` as :class:`TokenIds` whose messages name it ``name`` (a new object sharing
    the buffers; a given TokenIds is not changed).

    Raises
    ------
    TypeError, ValueError
        For input that is not token ids, or missing segments when
        ``allow_null`` is False (hypotheses); the message names ``name``.
    """
    if isinstance(values, TokenIds):
        ids = TokenIds(values)
    else:
        ids = TokenIds.__new__(TokenIds)
        ids.pad_id = ids.eos_id = None
        ids._parts = _convert(values, name)
        ids._bounds = np.cumsum([0] + [len(part) for part in ids._parts])
    ids._name = name
    if not allow_null and ids.valid is not None:
        raise ValueError(f"{name}[{int(np.flatnonzero(~ids.valid)[0])}] is missing (None or "
                         "null); only references may be missing")
    return ids


def is_token_ids(values) -> bool:
    """Whether ``values`` is meant as token ids rather than text (the form, not its contents:
    ids in a wrong shape or dtype are then refused with a message, not read as text).
    Converts nothing: text columns are asked too."""
    if isinstance(values, TokenIds):
        return True
    if isinstance(values, (str, bytes)):
        return False
    module = _module(values)
    if module == "polars" and hasattr(values, "dtype"):
        return type(values.dtype).__name__ in ("List", "Array")
    if module == "pandas" and hasattr(values, "dtype"):
        if getattr(values.dtype, "pyarrow_dtype", None) is not None:
            return _is_arrow_list(values.dtype.pyarrow_dtype)
        return values.dtype.kind == "O" and _is_row(_first_present(values))
    if module == "pyarrow":
        return hasattr(values, "type") and _is_arrow_list(values.type)
    if isinstance(values, np.ndarray):
        if values.dtype.kind == "O" and values.ndim == 1:
            return _is_row(_first_present(values))
        return values.dtype.kind not in "UOSV"
    if _has_dlpack(values):
        return True
    return isinstance(values, (list, tuple)) and _is_row(_first_present(values))


def _is_arrow_list(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_list(kind) or pa.types.is_large_list(kind)


def _is_row(row) -> bool:
    """Whether a segment is token ids (a list, tuple, array or tensor) rather than text."""
    return isinstance(row, (list, tuple, np.ndarray)) or _has_dlpack(row)
