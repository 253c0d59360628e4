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
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass

from ..errors import InputError
from ..inputs.text import valid_utf8
from .columns import check_same_types
from .paths import CSV_SUFFIXES, JSON_SUFFIXES, PARQUET_SUFFIXES

@dataclass
class TableSource:
    """Where the rows come from, and how many there are when that is known."""

    name: str
    columns: list[str]
    total_rows: int | None
    _batches: object  # a callable returning an iterator of record batches
    #: A callable like ``_batches`` whose first batches are small ones, decoded beside
    #: the first full batch (Parquet); None where the first rows cost no decoding.
    _small_first: object = None

    def batches(self, read_ahead: bool = True) -> Iterator:
        """Record batches holding only :attr:`columns`, in row order.

        With ``read_ahead``, the next batch is read on a background thread
        while the caller works on the current one (pyarrow decodes without
        holding the GIL), and a Parquet table of more than one batch starts
        with small batches (:func:`first_batch_rows`): nothing can be counted
        before the first batch is decoded, so a small one lets the pool start
        at once while the first full batch decodes on another thread.  Without
        it, every batch but the last has the table's batch size.
        """
        if not read_ahead:
            return self._batches()
        return _ahead((self._small_first or self._batches)())


#: Small batches a Parquet table read ahead starts with (:func:`first_batch_rows` rows each).
SMALL_BATCHES = 2


def first_batch_rows(batch_size: int) -> int:
    """Rows of each of the :data:`SMALL_BATCHES` small batches a Parquet table read ahead
    starts with: an eighth of a batch.

    Nothing can be counted before the first batch is decoded, and that first
    decoding is partly fixed (the text columns' dictionary pages: 2.7 ms of CPU
    for the first 1,024 rows of the benchmark's WMT22 file, 3.2 ms for 8,192,
    16.8 ms for 65,536, read through :data:`PARQUET_BUFFER`), so the first
    batch is small.  The pool then counts
    the small batches while the first full batch decodes beside them: two of
    an eighth each take the kernels about as long as that decoding.
    """
    return max(1, batch_size // 8)


def read_ahead(batches: Iterator) -> Iterator:
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastbleu-read") as reader:
        pending = reader.submit(next, batches, None)
        while True:
            batch = pending.result()
            if batch is None:
                return
            pending = reader.submit(next, batches, None)
            yield batch


_ahead = read_ahead  # TableSource.batches's argument of that name hides the function


def expand_paths(path: str) -> list[str]:
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


def check_columns(name: str, available: list[str], wanted: list[str]) -> None:
    missing = [column for column in wanted if column not in available]
    if missing:
        listed = ", ".join(repr(c) for c in dict.fromkeys(available)) or "none"
        raise InputError(f"{name}: no column {', '.join(repr(c) for c in missing)}; "
                         f"the columns are {listed}")
    repeated = [column for column in wanted if available.count(column) > 1]
    if repeated:
        raise InputError(f"{name}: {available.count(repeated[0])} columns are named "
                         f"{repeated[0]!r}; rename them so that each name is used once")


#: Rows per batch at most: Arrow's CSV block size is an int32, and a batch of
#: more rows than this would not fit in memory anyway.
MAX_BATCH_SIZE = 1 << 24


def check_batch_size(batch_size) -> int:
    """``batch_size`` as an int, or a ValueError saying which values are allowed."""
    import numpy as np

    if isinstance(batch_size, bool) or not isinstance(batch_size, (int, np.integer)) \
            or not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise ValueError(f"batch_size must be an int from 1 to {MAX_BATCH_SIZE:,}, got "
                         f"{batch_size!r}")
    return int(batch_size)


#: Bytes a Parquet reader reads from the file at a time.  Without a buffer (pyarrow's
#: default), a reader reads a column's whole chunk in a row group into memory before its
#: first row: 70 MB of compressed text for a row group of a million rows, 10 ms of
#: copying before the first batch (and that much memory per reader and column).
PARQUET_BUFFER = 1 << 18


def _open_parquet(path: str, wanted: list[str], dictionary_columns=()):
    """A ``ParquetFile`` whose columns were checked, reading the group keys as dictionaries."""
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(path, pre_buffer=False, buffer_size=PARQUET_BUFFER)
        names = parquet.schema_arrow.names
    except Exception as error:  # pyarrow raises several types for a bad file
        raise InputError(f"{path}: not a Parquet file ({error})") from None
    # Check before read_dictionary: pyarrow takes a name it does not know for
    # a bad file (KeyError), which read as "not a Parquet file (b'nosuch')".
    check_columns(path, names, wanted)
    if not dictionary_columns:
        return parquet
    try:
        # Group columns come as dictionaries: Parquet stores them so, and
        # grouping then works on small integer codes.  pre_buffer=False:
        # pre-buffering keeps every column chunk it read ahead, so memory
        # grew with the file (1 GB for 10M rows) instead of the batch.
        return pq.ParquetFile(path, metadata=parquet.metadata, pre_buffer=False,
                              buffer_size=PARQUET_BUFFER, read_dictionary=list(dictionary_columns))
    except Exception as error:  # pyarrow raises several types for a bad file
        raise InputError(f"{path}: not a Parquet file ({error})") from None


def _parquet_batches(path: str, parquet, **options) -> Iterator:
    """``iter_batches``, with a damaged page reported as an InputError naming the file."""
    import pyarrow as pa

    try:
        yield from parquet.iter_batches(**options)
    except (OSError, pa.ArrowException, ValueError, EOFError) as error:
        raise InputError(f"{path}: damaged Parquet data ({str(error).splitlines()[0]})") \
            from None


def _small_first(path: str, parquet, wanted: list[str], batch_size: int,
                 dictionary_columns=()) -> Iterator:
    """A Parquet file's batches, the first :data:`SMALL_BATCHES` of them
    :func:`first_batch_rows` rows.

    Two readers of the file: one decodes the first rows a small batch at a
    time on this thread (the first quickly, so that the pool starts counting
    it), while the other, on a thread of its own, decodes the first full
    batch from the file's first row; that batch is then yielded without the
    rows already given, and the rest of the file in full batches.  The cost
    is the small batches' rows and the dictionary pages decoded twice;
    memory stays about two batches.
    """
    from concurrent.futures import ThreadPoolExecutor

    import pyarrow.parquet as pq

    try:
        # A reader of its own (one ParquetFile is not read from two threads at once), of
        # the footer already read.
        again = pq.ParquetFile(path, metadata=parquet.metadata, pre_buffer=False,
                               buffer_size=PARQUET_BUFFER,
                               read_dictionary=list(dictionary_columns) or None)
    except Exception as error:  # the file changed or vanished since it was opened
        raise InputError(f"{path}: not a Parquet file ({error})") from None
    rest = _parquet_batches(path, again, batch_size=batch_size, columns=wanted)
    given = 0
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastbleu-read-first") as beside:
        full = beside.submit(next, rest, None)
        # Decoded on this thread, not on pyarrow's CPU pool, where they would queue behind
        # the full batch's columns (a pool of one thread at one thread).
        small = _parquet_batches(path, parquet, batch_size=first_batch_rows(batch_size),
                                 columns=wanted, use_threads=False)
        for batch in itertools.islice(small, SMALL_BATCHES):
            yield batch
            given += batch.num_rows
        small.close()
        first = full.result()
    for batch in itertools.chain([] if first is None else [first], rest):
        if given >= batch.num_rows:  # never with batches that span row groups, as pyarrow's do
            given -= batch.num_rows
            continue
        yield batch.slice(given) if given else batch
        given = 0


def _parquet(paths: list[str], name: str, wanted: list[str], batch_size: int,
             dictionary_columns: list[str] = ()) -> TableSource:
    files = [_open_parquet(path, wanted, dictionary_columns) for path in paths]
    check_same_types(wanted, [(path, parquet.schema_arrow) for path, parquet in zip(paths, files)])
    total = sum(parquet.metadata.num_rows for parquet in files)

    def batches(small_first: bool = False):
        for k, (path, parquet) in enumerate(zip(paths, files)):
            if small_first and k == 0 and parquet.metadata.num_rows > batch_size:
                yield from _small_first(path, parquet, wanted, batch_size, dictionary_columns)
            else:
                yield from _parquet_batches(path, parquet, batch_size=batch_size, columns=wanted)

    return TableSource(name, wanted, total, batches, lambda: batches(
        small_first=total > batch_size
        and SMALL_BATCHES * first_batch_rows(batch_size) <= batch_size // 2))


#: CSV blocks: Arrow's CSV reader reads some 18 blocks ahead, so blocks of 16 MB
#: cost a 400 MB file 860 MB.  Blocks of 2 MB (grown 8-fold for a longer row),
#: gathered into batches of ``batch_size``: memory follows the batch, as for
#: Parquet.  JSON Lines blocks are whole lines, parsed one block at a time.
CSV_BLOCK = JSON_BLOCK = 1 << 21
_CSV_BLOCK_MAX = 1 << 30


def _larger(error, block: int) -> int:
    """The next block size after ``error``, a row longer than ``block``; other errors go on."""
    if "straddl" not in str(error) or block >= _CSV_BLOCK_MAX:
        raise error
    return block * 8


def _gathered(batches: list):
    """One table of ``batches``; a column of nulls only (a JSON block) takes the others' type."""
    import pyarrow as pa

    if all(batch.schema == batches[0].schema for batch in batches):
        return pa.Table.from_batches(batches).combine_chunks()
    return pa.concat_tables([pa.Table.from_batches([batch]) for batch in batches],
                            promote_options="default").combine_chunks()


def _rebatched(batches: Iterator, batch_size: int) -> Iterator:
    """Record batches of exactly ``batch_size`` rows (the last one fewer)."""
    held, rows = [], 0
    for batch in batches:
        held.append(batch)
        rows += batch.num_rows
        if rows >= batch_size:
            table = _gathered(held)
            whole = rows - rows % batch_size
            yield from table.slice(0, whole).to_batches(max_chunksize=batch_size)
            held = table.slice(whole).to_batches() if whole < rows else []
            rows -= whole
    if rows:
        yield from _gathered(held).to_batches()


def _csv(path: str, wanted: list[str], batch_size: int, errors: str = "strict") -> TableSource:
    import pyarrow as pa
    import pyarrow.csv as pacsv

    delimiter = "\t" if ".tsv" in path.lower() else ","
    kind = "TSV" if delimiter == "\t" else "CSV"
    parse = pacsv.ParseOptions(delimiter=delimiter, newlines_in_values=True)

    def open_csv(block: int, skip: int = 0, convert=None):
        read = pacsv.ReadOptions(block_size=block, skip_rows_after_names=skip)
        return pacsv.open_csv(path, read_options=read, parse_options=parse,
                              convert_options=convert)

    def header(block: int) -> list[str]:
        try:
            return open_csv(block).schema.names
        except pa.ArrowInvalid as error:
            return header(_larger(error, block))

    try:
        names = header(CSV_BLOCK)
    except (pa.ArrowInvalid, OSError) as error:
        raise InputError(f"{path}: cannot be read as {kind} ({error})") from None
    check_columns(path, names, wanted)
    # Every column as bytes, checked to be UTF-8 below, where a bad row can be named
    # (Arrow's check names neither row nor value) and --encoding-errors replace can
    # repair it.  Text, not types: ids such as "007" stay as written.
    convert = pacsv.ConvertOptions(include_columns=wanted,
                                   column_types={c: pa.large_binary() for c in names},
                                   strings_can_be_null=False)

    def blocks():
        row, block = 0, CSV_BLOCK
        try:
            while True:
                try:
                    for batch in open_csv(block, row, convert):
                        try:
                            columns = [valid_utf8(batch.column(c), c, row, errors)
                                       for c in wanted]
                        except InputError as error:
                            raise InputError(f"{path}: {error}") from None
                        yield pa.RecordBatch.from_arrays(columns, names=wanted)
                        row += batch.num_rows
                    return
                except pa.ArrowInvalid as error:  # a row longer than the block: read on from it
                    block = _larger(error, block)
        except (pa.ArrowInvalid, OSError) as error:
            raise InputError(f"{path}: cannot be read as {kind} ({error})") from None

    return TableSource(path, wanted, None, lambda: _rebatched(blocks(), batch_size))


def _json_blocks(path: str, block_size: int) -> Iterator[tuple[int, bytes]]:
    """Blocks of whole lines of a file (``.gz`` decompressed), with each one's first line number."""
    import gzip

    opener = gzip.open if path.lower().endswith(".gz") else open
    line = 0
    rest = b""
    try:
        with opener(path, "rb") as handle:
            while True:
                chunk = handle.read(block_size)
                if not chunk:
                    break
                data = rest + chunk
                end = data.rfind(b"\n") + 1
                if end == 0:  # a line longer than the block: read on
                    rest = data
                    continue
                block, rest = data[:end], data[end:]
                yield line, block
                line += block.count(b"\n")
    except (OSError, EOFError) as error:
        raise InputError(f"{path}: cannot be read ({error})") from None
    if rest.strip():
        yield line, rest + b"\n"


def _json_lines(path: str, wanted: list[str], batch_size: int = 1 << 16,
                errors: str = "strict") -> TableSource:
    """JSON Lines read block by block: memory follows the block, not the file.

    pyarrow infers each block's types; the types the first blocks found are
    then imposed on the next ones, so a column that is null at first and text
    later is read as text, and a column whose values change type is refused.
    """
    import pyarrow as pa
    import pyarrow.json as pajson

    def parse(first_line: int, block: bytes, known: dict):
        if errors == "replace":
            block = block.decode("utf-8", "replace").encode("utf-8")
        else:
            try:
                block.decode("utf-8")
            except UnicodeDecodeError as error:
                line = first_line + block.count(b"\n", 0, error.start) + 1
                raise InputError(f"{path}: line {line} is not valid UTF-8 ({error.reason}); "
                                 "--encoding-errors replace goes on with U+FFFD") from None
        # Once every wanted column has a type, the other fields are skipped: less to
        # keep, and their values cannot fail the block.
        options = pajson.ParseOptions(
            explicit_schema=pa.schema(list(known.items())) if known else None,
            unexpected_field_behavior="ignore" if len(known) == len(wanted) else "infer")
        try:
            return pajson.read_json(pa.BufferReader(block),
                                    read_options=pajson.ReadOptions(block_size=len(block) + 1),
                                    parse_options=options)
        except pa.ArrowInvalid as error:
            message = str(error).splitlines()[0]
            last = first_line + block.count(b"\n")
            raise InputError(f"{path}: cannot be read as JSON Lines (lines {first_line + 1} to "
                             f"{last}: {message})") from None

    blocks = _json_blocks(path, JSON_BLOCK)
    first = next(blocks, None)
    if first is None:
        raise InputError(f"{path}: empty JSON Lines file; no column {wanted[0]!r}")
    known: dict = {}
    head = [parse(*first, known)]
    check_columns(path, head[0].column_names, wanted)

    def batches():
        # The first block was read to check the columns; a second pass reads it again.
        parsed = iter(list(head)) if head else (parse(*item, known)
                                                for item in _json_blocks(path, JSON_BLOCK))
        remaining = blocks if head else iter(())
        head.clear()
        for table in itertools.chain(parsed, (parse(*item, known) for item in remaining)):
            columns = []
            for column in wanted:
                if column in table.column_names:
                    columns.append(table.column(column))
                else:  # no value in this block
                    columns.append(pa.nulls(table.num_rows, known.get(column, pa.null())))
                kind = columns[-1].type
                if column not in known and not pa.types.is_null(kind):
                    known[column] = kind  # imposed on the next blocks
            yield from pa.Table.from_arrays(columns, names=wanted).to_batches()

    return TableSource(path, wanted, None, lambda: _rebatched(batches(), batch_size))


def _in_memory(table, name: str, wanted: list[str], batch_size: int = 1 << 16) -> TableSource:
    check_columns(name, table.column_names, wanted)
    table = table.select(wanted)
    return TableSource(name, wanted, table.num_rows,
                       lambda: iter(table.to_batches(max_chunksize=batch_size)))


def _from_pandas(frame, wanted: list[str]):
    """The wanted columns of a pandas DataFrame as a pyarrow.Table."""
    import pyarrow as pa

    check_columns("DataFrame", list(frame.columns), wanted)
    try:
        return pa.Table.from_pandas(frame[wanted], preserve_index=False)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError) as error:
        # An object column holding text in some rows and numbers in others.
        details = error.args[1] if len(error.args) > 1 else ""
        raise InputError(f"DataFrame: {str(error.args[0]).rstrip('.')} ({details or error}); "
                         "a column must hold values of one type") from None


def _collect(lazy, wanted: list[str]):
    """The wanted columns of a polars LazyFrame, collected, as a pyarrow.Table.

    Only those columns are computed (the query is pruned to them).  Collected
    rather than streamed: polars' ``collect_batches`` is marked unstable; for
    a table larger than memory, ``sink_parquet`` it and score the file.
    """
    import polars as pl

    try:
        check_columns("LazyFrame", lazy.collect_schema().names(), wanted)
        return lazy.select(wanted).collect().to_arrow()
    except (pl.exceptions.PolarsError, OSError) as error:  # a scan of a missing file
        raise InputError(f"LazyFrame: cannot be computed ({str(error).splitlines()[0]})") \
            from None


def _checked(sources, wanted: list[str]) -> Iterator:
    """The batches of several sources, refused when a column changes type between them."""
    schemas = []
    for source in sources:
        for batch in source.batches(read_ahead=False):
            if not schemas or schemas[-1][0] != source.name:
                schemas.append((source.name, batch.schema))
                check_same_types(wanted, schemas)
            yield batch


def open_table(source, columns: list[str], batch_size: int = 1 << 16,
               dictionary_columns: list[str] = (), encoding_errors: str = "strict") -> TableSource:
    """Open a table for streaming the given columns.

    Parameters
    ----------
    source : str, os.PathLike, pyarrow.Table, pandas.DataFrame or polars.DataFrame/LazyFrame
        A Parquet file, a directory of Parquet files, a glob of Parquet/CSV/
        TSV/JSON Lines files, a single CSV/TSV/JSON Lines file, or a table in
        memory (a polars LazyFrame is collected, its wanted columns only).
    columns : list of str
        The columns to read; a missing one is an error that lists those
        that exist.
    batch_size : int
        Rows per record batch, for every format: memory follows it.
    dictionary_columns : list of str
        Columns to read dictionary-encoded from Parquet (group keys).
    encoding_errors : {"strict", "replace"}
        Text of CSV and JSON Lines files that is not UTF-8: an error naming
        the row and column, or repaired with U+FFFD.

    Raises
    ------
    fastbleu.files.InputError
        For a missing or unreadable file, a file that is not of its format,
        a missing or repeated column, or a column whose type differs between
        the files of a table.
    """
    wanted = list(dict.fromkeys(columns))
    batch_size = check_batch_size(batch_size)
    module = type(source).__module__.split(".")[0]
    if module == "pyarrow" and hasattr(source, "to_batches"):
        return _in_memory(source, "table", wanted, batch_size)
    if module == "pandas":
        return _in_memory(_from_pandas(source, wanted), "DataFrame", wanted, batch_size)
    if module == "polars":
        if hasattr(source, "collect") and not hasattr(source, "to_arrow"):  # a LazyFrame
            return _in_memory(_collect(source, wanted), "LazyFrame", wanted, batch_size)
        check_columns("DataFrame", list(source.columns), wanted)
        return _in_memory(source.select(wanted).to_arrow(), "DataFrame", wanted, batch_size)
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError("source must be a path, a glob, a pyarrow.Table, a pandas/polars "
                        f"DataFrame or a polars LazyFrame, got {type(source).__name__}")
    path = os.fspath(source)
    paths = expand_paths(path)
    lower = [p.lower() for p in paths]
    if all(p.endswith(PARQUET_SUFFIXES) for p in lower) or os.path.isdir(path):
        return _parquet(paths, path, wanted, batch_size, dictionary_columns)
    if len(paths) == 1 and lower[0].endswith(CSV_SUFFIXES):
        return _csv(paths[0], wanted, batch_size, encoding_errors)
    if len(paths) == 1 and lower[0].endswith(JSON_SUFFIXES):
        return _json_lines(paths[0], wanted, batch_size, encoding_errors)
    if len(paths) > 1:
        sources = [open_table(p, wanted, batch_size, dictionary_columns, encoding_errors)
                   for p in paths]
        totals = [s.total_rows for s in sources]
        return TableSource(path, wanted, None if None in totals else sum(totals),
                           lambda: _checked(sources, wanted))
    # Unknown suffix: Parquet is the one format that says what it is.
    return _parquet(paths, path, wanted, batch_size, dictionary_columns)
