"""A Parquet dataset cut at row-group boundaries: the partitions of a cluster run.

:func:`parquet_pieces` reads the footers only; every :class:`ParquetPiece`
is read on a worker exactly as :func:`fastbleu.tables.readers.open_table`
reads Parquet in one process.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import InputError
from .columns import check_same_types
from .paths import PARQUET_SUFFIXES
from .readers import _open_parquet, _parquet_batches, expand_paths


@dataclass(frozen=True)
class ParquetPiece:
    """Some consecutive row groups of one Parquet file: a partition to score on its own.

    Attributes
    ----------
    path : str
        The file.
    row_groups : tuple of int
        Its row groups in this piece.
    first_row : int
        The row number (in the whole dataset) of the piece's first row.
    num_rows : int
        Rows in the piece.
    """

    path: str
    row_groups: tuple
    first_row: int
    num_rows: int

    def batches(self, columns: list[str], batch_size: int,
                dictionary_columns: list[str] = ()) -> Iterator:
        """Record batches of the piece, read as :func:`open_table` reads Parquet."""
        parquet = _open_parquet(self.path, list(columns), dictionary_columns)
        return _parquet_batches(self.path, parquet, batch_size=batch_size,
                                row_groups=list(self.row_groups), columns=list(columns))


def parquet_pieces(source, columns: list[str], rows_per_piece: int = 1 << 21,
                   min_pieces: int = 1) -> list[ParquetPiece]:
    """A Parquet dataset (file, directory or glob) cut into pieces of whole row groups.

    Every file is at least one piece; a file with many row groups is cut
    into pieces of about ``rows_per_piece`` rows, or fewer: the pieces are
    made small enough that there are at least ``min_pieces`` of them (the
    threads of a cluster, so that every worker gets work) where the row
    groups allow it (a row group is never split).  The files' footers are
    read here, so a missing column, or a column whose type differs between
    files, is found before any work.

    Raises
    ------
    fastbleu.files.InputError
        For a missing or unreadable file, a file that is not Parquet, a
        missing or repeated column, or a column of different types.
    """
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"source must be a path or glob, got {type(source).__name__}")
    path = os.fspath(source)
    paths = expand_paths(path)
    if not os.path.isdir(path) and not all(p.lower().endswith(PARQUET_SUFFIXES) for p in paths) \
            and len(paths) > 1:
        raise InputError(f"{path}: not every matching file is Parquet")
    wanted = list(dict.fromkeys(columns))
    schemas, files = [], []
    for file in paths:
        parquet = _open_parquet(file, wanted)
        metadata = parquet.metadata
        schemas.append((file, parquet.schema_arrow))
        files.append((file, [metadata.row_group(g).num_rows
                             for g in range(metadata.num_row_groups)]))
    check_same_types(wanted, schemas)
    total = sum(sum(groups) for _, groups in files)
    target = min(rows_per_piece, max(1, -(-total // max(min_pieces, 1))))
    pieces = []
    row = 0
    for file, group_rows in files:
        groups, size = [], 0
        for g, rows in enumerate(group_rows):
            if groups and size + rows > target:
                pieces.append(ParquetPiece(file, tuple(groups), row, size))
                row += size
                groups, size = [], 0
            groups.append(g)
            size += rows
        pieces.append(ParquetPiece(file, tuple(groups), row, size))
        row += size
    return pieces
