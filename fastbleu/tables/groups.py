"""Statistics rows -> sums per group: the group-by reduction.

BLEU's statistics are sums, so one corpus BLEU per group (per system and
language pair, per document ...) is a segmented sum of the per-segment rows
followed by the score formula.  :class:`GroupSums` keeps one int64 row per
group seen so far, in order of first appearance, and adds batch after batch
into it; memory grows with the number of groups, not with the rows.
"""

from __future__ import annotations

import math

import numpy as np

# One NaN object for every NaN key: NaN != NaN, but a tuple holding the same
# object compares equal (identity first), so NaN groups merge across batches.
_NAN = float("nan")


def _canonical(value):
    return _NAN if isinstance(value, float) and math.isnan(value) else value


def _encode(column, name, first_row: int, errors: str):
    """One column's dictionary codes (nulls encoded) and the value of every code."""
    import pyarrow as pa
    import pyarrow.compute as pc

    from .errors import InputError

    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    try:
        if pa.types.is_dictionary(column.type):
            # Parquet's dictionary columns come already encoded, their nulls in the
            # indices, which dictionary_encode leaves there: give nulls a code of their own.
            encoded = column
        else:
            encoded = pc.dictionary_encode(column, null_encoding="encode")
    except (pa.ArrowNotImplementedError, pa.ArrowTypeError):
        shown = f"column {name!r}" if name is not None else "a column"
        raise InputError(f"{shown} holds {column.type}, which cannot be a group key; group "
                         "by a column of text, numbers, booleans or dates") from None
    dictionary = encoded.dictionary
    indices = encoded.indices
    if pa.types.is_string(dictionary.type) or pa.types.is_large_string(dictionary.type):
        # Parquet does not check UTF-8: a bad key would fail in to_pylist() below.
        dictionary = _valid_keys(dictionary, indices, name, first_row, errors)
    values = dictionary.to_pylist()
    if indices.null_count:
        indices = pc.fill_null(indices, len(values))
        values.append(None)
    # No nulls among the indices now, so this is zero-copy; a copying to_numpy()
    # would import pandas, a noticeable part of a CLI run.
    return indices.to_numpy().astype(np.int64), values


def _valid_keys(dictionary, indices, name, first_row: int, errors: str):
    """The dictionary of a key column, checked to be UTF-8 (or repaired with U+FFFD)."""
    import pyarrow as pa

    from .errors import InputError
    from .tables import valid_utf8

    try:
        dictionary.validate(full=True)
        return dictionary
    except pa.ArrowInvalid:
        pass
    if errors == "replace":
        return valid_utf8(dictionary, name, 0, "replace")
    bad = [i for i, value in enumerate(dictionary.cast(pa.large_binary()).to_pylist())
           if value is not None and not _decodes(value)]
    codes = np.asarray(indices.fill_null(-1) if indices.null_count else indices)
    row = int(np.flatnonzero(np.isin(codes, bad))[0]) if bad else 0
    raise InputError(f"column {name!r}, row {first_row + row}: not valid UTF-8; "
                     "--encoding-errors replace goes on with U+FFFD")


def _decodes(value: bytes) -> bool:
    try:
        value.decode("utf-8")
        return True
    except UnicodeDecodeError:
        return False


def factorize(columns, names=None, first_row: int = 0,
              errors: str = "strict") -> tuple[np.ndarray, list[tuple]]:
    """Codes ``0..k-1`` for the distinct value combinations of some Arrow columns.

    Returns the code of every row and the value tuple of every code, codes
    numbered in order of first appearance.  Nulls are a value of their own
    (also in a dictionary column read from Parquet).  Two codes may have equal
    tuples (a dictionary that repeats a value); callers merge them by key.

    ``names`` (one per column), ``first_row`` and ``errors`` ("strict" or
    "replace") serve the messages and the handling of text that is not UTF-8.

    Raises
    ------
    fastbleu.files.InputError
        For a column whose type cannot be a key (struct, list ...) or a key
        that is not valid UTF-8 with ``errors="strict"``.
    """
    names = list(names) if names is not None else [None] * len(columns)
    n = len(columns[0])
    combined = np.zeros(n, dtype=np.int64)
    combined_size = 1
    per_column = []
    for column, name in zip(columns, names):
        indices, values = _encode(column, name, first_row, errors)
        size = max(len(values), 1)
        if combined_size * size >= 1 << 62:  # renumber before the product could overflow
            _, combined = np.unique(combined, return_inverse=True)
            combined = combined.ravel().astype(np.int64)
            combined_size = int(combined.max()) + 1 if n else 1
        combined = combined * size + indices
        combined_size *= size
        per_column.append((values, indices))
    _, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
    order = np.argsort(first, kind="stable")
    rank = np.empty_like(order)
    rank[order] = np.arange(order.size)
    keys = [tuple(_canonical(values[indices[row]]) for values, indices in per_column)
            for row in first[order]]
    return rank[inverse.ravel()], keys


def sum_by_code(codes: np.ndarray, rows: np.ndarray, n_codes: int) -> np.ndarray:
    """Exact int64 sums of ``rows`` per code (a segmented sum after a stable sort)."""
    sums = np.zeros((n_codes, rows.shape[1]), dtype=np.int64)
    if rows.shape[0] == 0:
        return sums
    order = np.argsort(codes, kind="stable")
    sorted_codes = codes[order]
    starts = np.flatnonzero(np.r_[True, sorted_codes[1:] != sorted_codes[:-1]])
    sums[sorted_codes[starts]] = np.add.reduceat(rows[order], starts, axis=0)
    return sums


class GroupSums:
    """Statistics rows summed per group key, in order of first appearance.

    Parameters
    ----------
    width : int
        Columns of a statistics row (``2 + 2 * max_ngram_order``).
    """

    def __init__(self, width: int):
        self._row_of: dict[tuple, int] = {}
        self.keys: list[tuple] = []
        self.sums = np.zeros((0, width), dtype=np.int64)

    def add(self, codes: np.ndarray, keys: list[tuple], rows: np.ndarray) -> np.ndarray:
        """Add a batch whose row ``i`` belongs to ``keys[codes[i]]``; return the group row of each code."""
        target = np.empty(len(keys), dtype=np.int64)
        for code, key in enumerate(keys):
            row = self._row_of.get(key)
            if row is None:
                row = self._row_of[key] = len(self.keys)
                self.keys.append(key)
            target[code] = row
        if len(self.keys) > self.sums.shape[0]:
            grown = np.zeros((max(len(self.keys), 2 * self.sums.shape[0]), self.sums.shape[1]),
                             dtype=np.int64)
            grown[:self.sums.shape[0]] = self.sums
            self.sums = grown
        # np.add.at, not sums[target] += ...: two codes of a batch can be one group
        # (a dictionary that repeats a value, 0.0 and -0.0), and fancy-index +=
        # would keep only one of their additions.
        np.add.at(self.sums, target, sum_by_code(codes, rows, len(keys)))
        return target

    def totals(self) -> np.ndarray:
        """The sums, one row per group in :attr:`keys` order."""
        return self.sums[:len(self.keys)]
