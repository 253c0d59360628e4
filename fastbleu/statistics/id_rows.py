"""Token ids given as Python rows, one per segment, joined into one flat array.

:class:`fastbleu.token_ids.TokenIds` takes a list (or tuple, or object
array) with one row per segment; a row is a list of Python ints or an array
of any integer dtype, and the rows' dtypes may differ.  These functions join
them end to end without losing an id: int64, or uint64 when an id is
``2**63`` or more (ids are hashed, so any 64-bit value is an id).  A token
that is not an integer (a bool, even beside ints, a float, a string, a nested
list) is refused with the segment's number, as is a mix that fits no 64-bit
type.
"""

from __future__ import annotations

from itertools import chain

import numpy as np


def list_ids(rows: list, name: str) -> np.ndarray:
    """The ids of Python rows ``(segment, row)`` as one int64 (or uint64) array.

    Every token must be an integer: a bool (even beside ints, ``[True, 5]``), a
    float, a string or a nested list is refused with the segment's number.
    """
    tokens = list(chain.from_iterable(row for _, row in rows))
    kinds = set(map(type, tokens))
    if not all(issubclass(k, (int, np.integer)) and not issubclass(k, (bool, np.bool_))
               for k in kinds):
        for i, row in rows:
            for token in row:
                if isinstance(token, (bool, np.bool_)) or not isinstance(token,
                                                                         (int, np.integer)):
                    raise TypeError(f"{name}[{i}] holds a {type(token).__name__}: token ids "
                                    "must be integers (for tokens as strings, join them with "
                                    "spaces and use tokenize='none')")
    for dtype in (np.int64, np.uint64):  # uint64 only for ids of 2**63 or more
        try:
            return np.array(tokens, dtype=dtype)
        except OverflowError:
            continue
    raise ValueError(f"{name} holds ids that do not fit in 64 bits, or negative ids beside "
                     "ids of 2**63 or more")


def joined_ids(pieces: list, name: str) -> np.ndarray:
    """The rows' ids end to end: int64, or uint64 when one of them is 2**63 or more (any
    integer dtype may be given, and the rows' dtypes may differ)."""
    pieces = [piece for piece in pieces if piece.size]
    if not pieces:
        return np.zeros(0, dtype=np.int64)
    big = any(piece.dtype == np.uint64 and piece.max() > np.iinfo(np.int64).max
              for piece in pieces)
    if not big:
        return np.concatenate([piece.astype(np.int64, copy=False) for piece in pieces])
    if any(piece.dtype.kind == "i" and piece.min() < 0 for piece in pieces):
        raise ValueError(f"{name} mixes negative ids with uint64 ids of 2**63 or more; give "
                         "one kind (a padding value such as -100 needs pad_id)")
    return np.concatenate([piece.astype(np.uint64, copy=False) for piece in pieces])
