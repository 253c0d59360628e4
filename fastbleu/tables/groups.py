"""Statistics rows -> sums per group: the group-by reduction.

A metric's statistics are sums, so one corpus score per group (per system
and language pair, per document ...) is a segmented sum of the per-segment
rows followed by the metric's formula.  :class:`Groups`, the one group
accumulator, keeps one int64 row per group seen so far and adds batch after
batch into it; memory grows with the number of groups, not with the rows.
"""

from __future__ import annotations

import math

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .columns import check_key_types, merged_types

# One NaN object for every NaN key: NaN != NaN, but a tuple holding the same
# object compares equal (identity first), so NaN groups merge across batches.
_NAN = float("nan")


def canonical_key(value):
    """One NaN object for every NaN (so NaN keys are one group); other values as they are."""
    return _NAN if isinstance(value, float) and math.isnan(value) else value


def _encode(column, name, first_row: int, errors: str):
    """One column's dictionary codes (nulls encoded) and the value of every code."""
    import pyarrow as pa
    import pyarrow.compute as pc

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

    from ..inputs.text import valid_utf8

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
    keys = [tuple(canonical_key(values[indices[row]]) for values, indices in per_column)
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


@dataclass
class GroupInfo:
    """What a group needs for its signature besides its sums."""

    tokenizer: str
    min_refs: int
    max_refs: int


class Groups:
    """The group accumulator: statistics rows summed per group key, with each group's
    tokenizer, reference counts and first position.

    One process adds batches in row order (:meth:`add`), so its groups are
    already in order of first appearance; partial results of partitions
    (:mod:`fastbleu.dask`) are merged in any order (:meth:`merge`) and
    sorted by the position ``(partition, row)`` of each group's first row at
    the end (:meth:`ordered`).

    Parameters
    ----------
    width : int
        Columns of a statistics row (the metric's ``formula.row_width``).
    """

    def __init__(self, width: int):
        self.width = width
        self.keys: list[tuple] = []
        self.info: list[GroupInfo] = []
        self.first: list[tuple[int, int]] = []
        self.key_types: dict = {}
        self.rows = 0
        self._row_of: dict[tuple, int] = {}
        self._sums = np.zeros((0, width), dtype=np.int64)

    def add_sums(self, codes: np.ndarray, keys: list[tuple], rows: np.ndarray) -> np.ndarray:
        """Add rows whose row ``i`` belongs to ``keys[codes[i]]``; return the group of each code."""
        target = np.empty(len(keys), dtype=np.int64)
        for code, key in enumerate(keys):
            row = self._row_of.get(key)
            if row is None:
                row = self._row_of[key] = len(self.keys)
                self.keys.append(key)
            target[code] = row
        if len(self.keys) > self._sums.shape[0]:
            grown = np.zeros((max(len(self.keys), 2 * self._sums.shape[0]), self.width),
                             dtype=np.int64)
            grown[:self._sums.shape[0]] = self._sums
            self._sums = grown
        # np.add.at, not sums[target] += ...: two codes of a batch can be one group
        # (a dictionary that repeats a value, 0.0 and -0.0), and fancy-index +=
        # would keep only one of their additions.
        np.add.at(self._sums, target, sum_by_code(codes, rows, len(keys)))
        return target

    def totals(self) -> np.ndarray:
        """The sums, one row per group in :attr:`keys` order."""
        return self._sums[:len(self.keys)]

    def check_key_types(self, found: dict, first_row: int) -> None:
        """Note the key column types of a batch from ``first_row`` on (InputError if changed)."""
        check_key_types(self.key_types, found, "the rows before", f"the rows from {first_row} on")
        self.key_types = merged_types(self.key_types, found)

    def add(self, codes, key_values, stats, refs_per_row, tokenizer_of_row, tokenizers,
            position=(0, 0)):
        """Add a batch; ``position`` is ``(partition, row)`` of its first row."""
        known = len(self.info)
        # A dictionary may hold a tokenizer's name twice: one code per name.
        first_code = np.array([tokenizers.index(name) for name in tokenizers], dtype=np.int64)
        tokenizer_of_row = first_code[tokenizer_of_row]
        target = self.add_sums(codes, key_values, stats)
        if len(self.keys) > known:  # new groups: note where each first appears
            first_row = np.full(len(key_values), len(codes), dtype=np.int64)
            np.minimum.at(first_row, codes, np.arange(len(codes), dtype=np.int64))
            for code in np.flatnonzero(target >= known):
                if target[code] == len(self.first):
                    self.first.append((position[0], position[1] + int(first_row[code])))
        # Each group's reference counts and tokenizers, from one sort of the rows
        # (a loop over the groups with a mask each cost groups x rows: minutes for
        # a batch of one document per row).
        group_of_row = target[codes]
        order = np.argsort(group_of_row, kind="stable")
        ordered = group_of_row[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        present = ordered[starts]
        low = np.minimum.reduceat(refs_per_row[order], starts)
        high = np.maximum.reduceat(refs_per_row[order], starts)
        pairs = np.unique(group_of_row * len(tokenizers) + tokenizer_of_row)
        pair_group, pair_tokenizer = np.divmod(pairs, len(tokenizers))
        tokenizer_of_group = dict(zip(pair_group.tolist(), pair_tokenizer.tolist()))
        if pairs.size > present.size:  # some group uses two tokenizers in this batch
            g = int(pair_group[np.flatnonzero(pair_group[1:] == pair_group[:-1])[0]])
            names = sorted({tokenizers[t] for t in pair_tokenizer[pair_group == g]})
            raise InputError(f"group {self.keys[g]} mixes the tokenizers {names}")
        for g, lo, hi in zip(present.tolist(), low.tolist(), high.tolist()):
            name = tokenizers[tokenizer_of_group[g]]
            if g == len(self.info):
                self.info.append(GroupInfo(name, lo, hi))
                continue
            info = self.info[g]
            if info.tokenizer != name:
                names = sorted({info.tokenizer, name})
                raise InputError(f"group {self.keys[g]} mixes the tokenizers {names}")
            info.min_refs = min(info.min_refs, lo)
            info.max_refs = max(info.max_refs, hi)
        self.rows += len(codes)

    def add_empty_corpus(self, tokenizer: str, num_refs: int) -> None:
        """Make a table without rows (and without keys) one group of zero sums."""
        self.add_sums(np.zeros(0, dtype=np.int64), [()], np.zeros((0, self.width), np.int64))
        self.info.append(GroupInfo(tokenizer, num_refs, num_refs))
        self.first.append((0, 0))

    def merge(self, other: Groups) -> Groups:
        """Add another partial result into this one (exact: int64 sums) and return this one."""
        check_key_types(self.key_types, other.key_types, "one partition", "another")
        if not other.keys:
            self.rows += other.rows
            self.key_types = merged_types(self.key_types, other.key_types)
            return self
        count = len(other.keys)
        # A NaN key is one group only through a shared NaN object (canonical_key),
        # which a partial result sent between processes no longer holds.
        keys = [tuple(canonical_key(value) for value in key) for key in other.keys]
        target = self.add_sums(np.arange(count, dtype=np.int64), keys, other.totals())
        for code, g in enumerate(target):
            theirs = other.info[code]
            if g == len(self.info):
                self.info.append(GroupInfo(theirs.tokenizer, theirs.min_refs, theirs.max_refs))
                self.first.append(other.first[code])
                continue
            mine = self.info[g]
            if mine.tokenizer != theirs.tokenizer:
                names = sorted({mine.tokenizer, theirs.tokenizer})
                raise InputError(f"group {self.keys[g]} mixes the tokenizers {names}")
            mine.min_refs = min(mine.min_refs, theirs.min_refs)
            mine.max_refs = max(mine.max_refs, theirs.max_refs)
            self.first[g] = min(self.first[g], other.first[code])
        self.rows += other.rows
        self.key_types = merged_types(self.key_types, other.key_types)
        return self

    def ordered(self) -> tuple[list[tuple], np.ndarray, list[GroupInfo]]:
        """Keys, summed statistics and group information in order of first appearance."""
        order = sorted(range(len(self.first)), key=self.first.__getitem__)
        totals = self.totals()[order] if order else self.totals()
        return ([self.keys[g] for g in order], totals, [self.info[g] for g in order])
