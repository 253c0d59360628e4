"""Tables -> streams of record batches: Parquet, CSV/TSV, JSON Lines, in-memory frames.

:func:`open_table` takes a path (a file, a directory of Parquet files, or a
glob), a ``pyarrow.Table`` or a pandas/polars DataFrame, checks that the
wanted columns exist, and returns a :class:`TableSource` whose
``batches()`` yields ``pyarrow.RecordBatch`` objects holding only those
columns.  Parquet is read batch by batch, so memory is bounded by the batch,
and its metadata gives the row count for a progress bar before any row is
read.
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterator
from dataclasses import dataclass

from .files import InputError

PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
CSV_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz")
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json", ".jsonl.gz")
TABLE_SUFFIXES = PARQUET_SUFFIXES + CSV_SUFFIXES + JSON_SUFFIXES


def is_table_path(path: str, table_options: bool = False) -> bool:
    """Whether a command-line input names a table rather than a text file.

    Parquet files, directories and globs are tables.  CSV, TSV and JSON
    Lines files are tables only with ``table_options`` (a ``--hyp-column``,
    ``--group-by`` ... flag): a ``.tsv`` file is just as often sacrebleu's
    tab-separated references (``-nr``).
    """
    lower = str(path).lower()
    pattern = glob.has_magic(str(path)) and not os.path.exists(path)  # "ref[1].txt" is a file
    if lower.endswith(PARQUET_SUFFIXES) or os.path.isdir(path) or pattern:
        return True
    return table_options and lower.endswith(CSV_SUFFIXES + JSON_SUFFIXES)


@dataclass
class TableSource:
    """Where the rows come from, and how many there are when that is known."""

    name: str
    columns: list[str]
    total_rows: int | None
    _batches: object  # a callable returning an iterator of record batches

    def batches(self, read_ahead: bool = True) -> Iterator:
        """Record batches holding only :attr:`columns`, in row order.

        With ``read_ahead``, the next batch is read on a background thread
        while the caller works on the current one (pyarrow decodes without
        holding the GIL).
        """
        return _read_ahead(self._batches()) if read_ahead else self._batches()


def _read_ahead(batches: Iterator) -> Iterator:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastbleu-read") as reader:
        pending = reader.submit(next, batches, None)
        while True:
            batch = pending.result()
            if batch is None:
                return
            pending = reader.submit(next, batches, None)
            yield batch


def _expand(path: str) -> list[str]:
    if glob.has_magic(path) and not os.path.exists(path):
        paths = sorted(p for p in glob.glob(path, recursive=True) if os.path.isfile(p))
        if not paths:
            raise InputError(f"{path}: no file matches this pattern")
        return paths
    if os.path.isdir(path):
        paths = sorted(os.path.join(root, name) for root, _, names in os.walk(path)
                       for name in names if name.lower().endswith(PARQUET_SUFFIXES))
        if not paths:
            raise InputError(f"{path}: the directory holds no Parquet file")
        return paths
    if not os.path.exists(path):
        raise InputError(f"{path}: no such file")
    if not os.access(path, os.R_OK):
        raise InputError(f"{path}: permission denied")
    return [path]


def _check_columns(name: str, available: list[str], wanted: list[str]) -> None:
    missing = [column for column in wanted if column not in available]
    if missing:
        listed = ", ".join(repr(c) for c in available) or "none"
        raise InputError(f"{name}: no column {', '.join(repr(c) for c in missing)}; "
                         f"the columns are {listed}")


def _parquet(paths: list[str], name: str, wanted: list[str], batch_size: int,
             dictionary_columns: list[str] = ()) -> TableSource:
    import pyarrow.parquet as pq

    files = []
    for path in paths:
        try:
            # Group columns come as dictionaries: Parquet stores them so, and
            # grouping then works on small integer codes.  pre_buffer=False:
            # pre-buffering keeps every column chunk it read ahead, so memory
            # grew with the file (1 GB for 10M rows) instead of the batch.
            files.append(pq.ParquetFile(path, read_dictionary=list(dictionary_columns),
                                        pre_buffer=False))
        except Exception as error:  # pyarrow raises several types for a bad file
            raise InputError(f"{path}: not a Parquet file ({error})") from None
    for path, parquet in zip(paths, files):
        _check_columns(path, parquet.schema_arrow.names, wanted)
    total = sum(parquet.metadata.num_rows for parquet in files)

    def batches():
        for parquet in files:
            yield from parquet.iter_batches(batch_size=batch_size, columns=wanted)

    return TableSource(name, wanted, total, batches)


def _csv(path: str, wanted: list[str], batch_size: int) -> TableSource:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    delimiter = "\t" if ".tsv" in path.lower() else ","
    # Every column as text: ids such as "007" stay as written.
    def reader():
        read = pacsv.ReadOptions(block_size=max(1 << 20, batch_size * 256))
        parse = pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True)
        try:
            header = pacsv.open_csv(path, read_options=read, parse_options=parse)
        except (pa.ArrowInvalid, OSError) as error:
            raise InputError(f"{path}: cannot be read as {'TSV' if delimiter == chr(9) else 'CSV'}"
                             f" ({error})") from None
        return header, read, parse

    header, read, parse = reader()
    names = header.schema.names
    _check_columns(path, names, wanted)
    convert = pacsv.ConvertOptions(include_columns=wanted,
                                   column_types={c: pa.large_string() for c in names},
                                   strings_can_be_null=False)

    def batches():
        try:
            stream = pacsv.open_csv(path, read_options=read, parse_options=parse,
                                    convert_options=convert)
            for batch in stream:
                yield batch
        except pa.ArrowInvalid as error:
            raise InputError(f"{path}: {error}") from None

    return TableSource(path, wanted, None, batches)


def _json_lines(path: str, wanted: list[str]) -> TableSource:
    import pyarrow as pa
    import pyarrow.json as pajson

    try:
        table = pajson.read_json(path)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"{path}: cannot be read as JSON Lines ({error})") from None
    return _in_memory(table, path, wanted)


def _in_memory(table, name: str, wanted: list[str], batch_size: int = 1 << 16) -> TableSource:
    _check_columns(name, table.column_names, wanted)
    table = table.select(wanted)
    return TableSource(name, wanted, table.num_rows,
                       lambda: iter(table.to_batches(max_chunksize=batch_size)))


def open_table(source, columns: list[str], batch_size: int = 1 << 16,
               dictionary_columns: list[str] = ()) -> TableSource:
    """Open a table for streaming the given columns.

    Parameters
    ----------
    source : str, os.PathLike, pyarrow.Table, pandas.DataFrame or polars.DataFrame
        A Parquet file, a directory of Parquet files, a glob of Parquet/CSV/
        TSV/JSON Lines files, a single CSV/TSV/JSON Lines file, or a table in
        memory.
    columns : list of str
        The columns to read; a missing one is an error that lists those
        that exist.
    batch_size : int
        Rows per record batch.
    dictionary_columns : list of str
        Columns to read dictionary-encoded from Parquet (group keys).

    Raises
    ------
    fastbleu.files.InputError
        For a missing or unreadable file, a file that is not of its format,
        or a missing column.
    """
    wanted = list(dict.fromkeys(columns))
    module = type(source).__module__.split(".")[0]
    if module == "pyarrow" and hasattr(source, "to_batches"):
        return _in_memory(source, "table", wanted, batch_size)
    if module == "pandas":
        import pyarrow as pa

        return _in_memory(pa.Table.from_pandas(source, preserve_index=False), "DataFrame",
                          wanted, batch_size)
    if module == "polars":
        return _in_memory(source.to_arrow(), "DataFrame", wanted, batch_size)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError("source must be a path, a glob, a pyarrow.Table or a pandas/polars "
                        f"DataFrame, got {type(source).__name__}")
    path = os.fspath(source)
    paths = _expand(path)
    lower = [p.lower() for p in paths]
    if all(p.endswith(PARQUET_SUFFIXES) for p in lower) or os.path.isdir(path):
        return _parquet(paths, path, wanted, batch_size, dictionary_columns)
    if len(paths) == 1 and lower[0].endswith(CSV_SUFFIXES):
        return _csv(paths[0], wanted, batch_size)
    if len(paths) == 1 and lower[0].endswith(JSON_SUFFIXES):
        return _json_lines(paths[0], wanted)
    if len(paths) > 1:
        sources = [open_table(p, wanted, batch_size, dictionary_columns) for p in paths]
        totals = [s.total_rows for s in sources]

        def batches():
            for s in sources:
                yield from s.batches(read_ahead=False)

        return TableSource(path, wanted, None if None in totals else sum(totals), batches)
    # Unknown suffix: Parquet is the one format that says what it is.
    return _parquet(paths, path, wanted, batch_size, dictionary_columns)


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
        import pyarrow.parquet as pq

        try:
            parquet = pq.ParquetFile(self.path, read_dictionary=list(dictionary_columns),
                                     pre_buffer=False)
        except Exception as error:  # pyarrow raises several types for a bad file
            raise InputError(f"{self.path}: not a Parquet file ({error})") from None
        _check_columns(self.path, parquet.schema_arrow.names, columns)
        return parquet.iter_batches(batch_size=batch_size, row_groups=list(self.row_groups),
                                    columns=list(columns))


def parquet_pieces(source, columns: list[str], rows_per_piece: int = 1 << 21) -> list[ParquetPiece]:
    """A Parquet dataset (file, directory or glob) cut into pieces of whole row groups.

    Every file is at least one piece; a file with many row groups is cut
    into pieces of about ``rows_per_piece`` rows.  The files' footers are
    read here, so a missing column is found before any work.

    Raises
    ------
    fastbleu.files.InputError
        For a missing or unreadable file, a file that is not Parquet, or a
        missing column.
    """
    import pyarrow.parquet as pq

    if not isinstance(source, (str, os.PathLike)):
        raise TypeError(f"source must be a path or glob, got {type(source).__name__}")
    path = os.fspath(source)
    paths = _expand(path)
    if not os.path.isdir(path) and not all(p.lower().endswith(PARQUET_SUFFIXES) for p in paths) \
            and len(paths) > 1:
        raise InputError(f"{path}: not every matching file is Parquet")
    pieces = []
    row = 0
    wanted = list(dict.fromkeys(columns))
    for file in paths:
        try:
            parquet = pq.ParquetFile(file)
            metadata, names = parquet.metadata, parquet.schema_arrow.names
        except Exception as error:  # pyarrow raises several types for a bad file
            raise InputError(f"{file}: not a Parquet file ({error})") from None
        _check_columns(file, names, wanted)
        groups, size = [], 0
        for g in range(metadata.num_row_groups):
            rows = metadata.row_group(g).num_rows
            if groups and size + rows > rows_per_piece:
                pieces.append(ParquetPiece(file, tuple(groups), row, size))
                row += size
                groups, size = [], 0
            groups.append(g)
            size += rows
        pieces.append(ParquetPiece(file, tuple(groups), row, size))
        row += size
    return pieces
