"""Columns of a record batch: names, types, and the text columns the kernels read.

:func:`hypothesis_column` and :func:`reference_streams` turn a batch's text
columns into :class:`~fastbleu.text.TextColumn` objects through the one Arrow
-> text path, :func:`fastbleu.text.arrow_strings`.  The type helpers compare
columns across files, batches and partitions: the text ``"0"`` of one file
and the number ``0`` of another would be two groups printed alike.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from ..inputs.text import TextColumn, arrow_strings, as_text_column


def column_names(value, what: str) -> list[str]:
    """A column name or a list of them as a list (``[]`` for None); TypeError otherwise."""
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    names = list(value)
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"{what} must be a column name or a list of column names")
    return names


def _kind(kind):
    """A column type up to how it is stored: dictionary or not, 32- or 64-bit offsets."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        kind = kind.value_type
    if pa.types.is_string(kind) or pa.types.is_large_string(kind) or pa.types.is_string_view(kind):
        return pa.large_string()
    if pa.types.is_binary(kind) or pa.types.is_large_binary(kind) or pa.types.is_binary_view(kind):
        return pa.large_binary()
    if pa.types.is_list(kind) or pa.types.is_large_list(kind) or pa.types.is_list_view(kind) \
            or pa.types.is_large_list_view(kind):
        return pa.large_list(_kind(kind.value_type))
    return kind


def describe(kind) -> str:
    """A column type as a message shows it: ``string`` for every kind of text column."""
    import pyarrow as pa

    kind = _kind(kind)
    return "string" if kind == pa.large_string() else str(kind)


def same_kind(a, b) -> bool:
    """Whether two column types hold the same values (a null column fits any type)."""
    import pyarrow as pa

    return pa.types.is_null(a) or pa.types.is_null(b) or _kind(a) == _kind(b)


def check_same_types(columns: list[str], schemas) -> None:
    """Refuse sources (``(name, schema)`` pairs) whose columns differ in type.

    Group keys are compared as values: the text ``"0"`` of one file and the
    number ``0`` of another would be two groups printed alike.
    """
    import pyarrow as pa

    first: dict = {}
    for name, schema in schemas:
        for column in columns:
            if column not in schema.names:
                continue
            kind = schema.field(column).type
            if column not in first or pa.types.is_null(first[column][1]):
                first[column] = (name, kind)
            elif not same_kind(first[column][1], kind):
                other, before = first[column]
                raise InputError(f"column {column!r} holds {describe(before)} in {other} but "
                                 f"{describe(kind)} in {name}; every part of a table needs the "
                                 "same column types")


def check_key_types(known: dict, found: dict, where_known: str, where_found: str) -> None:
    """Refuse a key column whose type changed: "0" and 0 would be two groups printed alike."""
    for name, kind in found.items():
        if name in known and not same_kind(known[name], kind):
            raise InputError(f"column {name!r} holds {describe(known[name])} in {where_known} "
                             f"but {describe(kind)} in {where_found}; every part of a table "
                             "needs the same column types")


def merged_types(known: dict, found: dict) -> dict:
    """Key types known so far, a null type (a column of nulls only) taking the other one."""
    import pyarrow as pa

    merged = dict(found)
    merged.update({k: v for k, v in known.items() if not pa.types.is_null(v) or k not in found})
    return merged


def hypothesis_column(batch, name: str, first_row: int, errors: str):
    """A batch's text column ``name`` as a checked Arrow string array (InputError if not text)."""
    return arrow_strings(batch.column(name), name, errors=errors, first_row=first_row)


def reference_streams(batch, refs: list[str], first_row: int, errors: str) -> list[TextColumn]:
    """The reference streams of a batch: one per column, or one per list position."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(refs) == 1 and (pa.types.is_list(batch.column(refs[0]).type)
                           or pa.types.is_large_list(batch.column(refs[0]).type)):
        lists = batch.column(refs[0])
        lengths = np.asarray(pc.fill_null(pc.list_value_length(lists), 0))
        width = int(lengths.max()) if lengths.size else 1
        # Offsets index the whole child array, also for a slice of a list array.
        starts = lists.offsets.to_numpy()[:-1]
        values = lists.values
        streams = []
        for r in range(max(width, 1)):
            has = lengths > r
            taken = values.take(pa.array(np.where(has, starts + r, 0)))
            column = pc.if_else(pa.array(has), taken, pa.scalar(None, taken.type))
            strings = arrow_strings(column, refs[0], errors=errors, first_row=first_row)
            streams.append(as_text_column(strings, refs[0], allow_null=True, trusted=True))
        return streams
    return [as_text_column(hypothesis_column(batch, name, first_row, errors), name,
                           allow_null=True, trusted=True) for name in refs]
