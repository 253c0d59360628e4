"""A Parquet table read ahead starts with small batches (issue 26: the serial part).

Nothing can be counted before the first batch is decoded, so a table of more
than one batch starts with two batches of
:func:`~fastbleu.tables.readers.first_batch_rows` rows, read by one reader
while a second decodes the first full batch beside them.  These tests hold that the rows are still every row once, in order, for
any file layout; that every result is the same as with batches of any other
size; that memory stays a few batches; and that errors and early stops of
either reader come out as they did.
"""

from __future__ import annotations

import gc
import threading

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastbleu
from fastbleu.errors import InputError
from fastbleu.tables import readers
from fastbleu.tables.job import TableJob
from testkit.data import sample_table


def _write(path, table: pa.Table, row_group_size: int) -> str:
    pq.write_table(table, path, row_group_size=row_group_size)
    return str(path)


@pytest.mark.parametrize("row_group_size", [7, 100, 333, 1000, 5000])
@pytest.mark.parametrize("batch_size", [1, 7, 8, 250, 1999, 2000, 4096])
def test_every_row_once_in_order_whatever_the_row_groups(tmp_path, row_group_size, batch_size):
    table = sample_table()
    path = _write(tmp_path / "t.parquet", table, row_group_size)
    source = readers.open_table(path, ["hyp", "ref", "system"], batch_size,
                                dictionary_columns=["system"])
    batches = list(source.batches())
    sizes = [b.num_rows for b in batches]
    plain = [b.num_rows for b in source.batches(read_ahead=False)]
    assert sum(sizes) == table.num_rows and max(sizes) <= batch_size
    small = readers.SMALL_BATCHES
    ramp = small * readers.first_batch_rows(batch_size) <= batch_size // 2
    if table.num_rows > batch_size and ramp:  # small first batches, then the rest as without
        head = sum(sizes[:small])
        assert max(sizes[:small]) <= readers.first_batch_rows(batch_size)
        assert head == small * readers.first_batch_rows(batch_size) \
            or row_group_size < batch_size
        rest = list(plain)
        while head:  # pyarrow's batches, less the first rows
            taken = min(head, rest[0])
            rest[0] -= taken
            head -= taken
            if not rest[0]:
                rest.pop(0)
        assert sizes[small:] == rest
    else:
        assert sizes == plain
    read = pa.Table.from_batches(batches)
    for column in ("hyp", "ref"):
        assert read.column(column).to_pylist() == table.column(column).to_pylist()
    assert read.column("system").to_pylist() == table.column("system").to_pylist()
    assert pa.types.is_dictionary(read.schema.field("system").type)


def test_a_directory_of_files_starts_small_in_its_first_file_only(tmp_path):
    table = sample_table()
    folder = tmp_path / "parts"
    folder.mkdir()
    for k in range(3):
        _write(folder / f"part-{k}.parquet", table.slice(600 * k, 600 if k < 2 else 800), 256)
    sizes = [b.num_rows for b in readers.open_table(str(folder), ["hyp", "ref"], 500).batches()]
    assert sizes == [62, 62, 376, 100, 500, 100, 500, 300]
    got = pa.Table.from_batches(list(readers.open_table(str(folder), ["hyp"], 500).batches()))
    assert got.column("hyp").to_pylist() == table.column("hyp").to_pylist()


@pytest.mark.parametrize("metrics", [None, ["bleu", "chrf", "ter"]])
@pytest.mark.parametrize("batch_size", [3, 64, 999, 1000, 2000, 65536])
def test_every_batch_size_gives_the_same_scores_and_segments(tmp_path, metrics, batch_size):
    """Group sums are exact integers: the small first batch changes no number, and the
    per-segment file holds the same rows in the same order."""
    table = sample_table()
    path = _write(tmp_path / "t.parquet", table, 300)
    expected = fastbleu.score_table(table, group_by=["system", "doc"], metrics=metrics,
                                    batch_size=1 << 16,
                                    segments_out=str(tmp_path / "whole.parquet"))
    got = fastbleu.score_table(path, group_by=["system", "doc"], metrics=metrics,
                               batch_size=batch_size, segments_out=str(tmp_path / "s.parquet"))
    assert got.to_pylist() == expected.to_pylist()
    assert pq.read_table(tmp_path / "s.parquet").to_pylist() == \
        pq.read_table(tmp_path / "whole.parquet").to_pylist()


def test_the_first_batch_is_counted_before_the_second_is_read(tmp_path):
    """With the table's rows known, a table of several batches goes to the pool from its
    first batch; without them (CSV, JSON Lines), the first batch is counted on the
    calling thread, as a table of one batch is: either way the second batch is not
    read before the first is being counted (once, it waited for the second, to tell a
    table of one batch).  Same sums either way, and for a table of one batch, scored
    where it is."""
    table = sample_table()
    job = TableJob.create("hyp", ["ref"], ["system"], None, None, False, "strict", 500)
    started = threading.Event()

    class Watched(fastbleu.BLEU):
        def column_statistics(self, *args, **kwargs):
            started.set()
            return super().column_statistics(*args, **kwargs)

    def batches(waits: list, patience: float):
        for k, batch in enumerate(table.to_batches(max_chunksize=500)):
            if k == 1:  # the second batch waits for the first one's counting
                waits.append(started.wait(timeout=patience))
            yield batch

    for hint, expected, patience in ((table.num_rows, True, 60), (None, True, 60)):
        started.clear()
        waits = []
        groups = job.statistics(batches(waits, patience), Watched(), total_rows=hint)
        assert waits == [expected]
        np.testing.assert_array_equal(
            groups.ordered()[1], job.statistics(table.to_batches(), Watched()).ordered()[1])
    path = _write(tmp_path / "t.parquet", table, 400)
    one = readers.open_table(path, job.columns, 4000, dictionary_columns=["system"])
    single = job.statistics(one.batches(), total_rows=one.total_rows)
    np.testing.assert_array_equal(single.ordered()[1], groups.ordered()[1])


def test_memory_follows_the_batch_not_the_file(tmp_path):
    """Two readers of the file at the start: still a few batches of memory, not the file
    (a 1,000-row batch of this text is about 0.2 MB; the file decodes to some 9 MB)."""
    table = pa.concat_tables([sample_table().select(["hyp", "ref"])] * 20)
    path = _write(tmp_path / "t.parquet", table, 10_000)
    gc.collect()
    before, peak, rows = pa.total_allocated_bytes(), 0, 0
    for batch in readers.open_table(path, ["hyp", "ref"], batch_size=1000).batches():
        peak = max(peak, pa.total_allocated_bytes() - before)
        rows += batch.num_rows
        del batch
    assert rows == table.num_rows
    assert peak < 3 << 20, peak


def test_the_first_batch_does_not_read_the_whole_row_group(tmp_path):
    """The readers read the file a buffer at a time: a first batch of 100 rows does not
    copy its columns' whole chunks of a large row group into memory first (pyarrow's
    default without a buffer; 10 ms of the serial start for the benchmark's file)."""
    import random

    rng = random.Random(26)
    text = ["".join(rng.choice("abcdefghij klmnopqrstuvwxyz") for _ in range(80))
            for _ in range(100_000)]
    path = _write(tmp_path / "t.parquet", pa.table({"hyp": text, "ref": text[::-1]}), 100_000)
    chunks = pq.ParquetFile(path).metadata.row_group(0)
    compressed = sum(chunks.column(k).total_compressed_size for k in range(2))
    assert compressed > 12 << 20  # two chunks of some 8 MB: random text barely compresses
    gc.collect()
    before = pa.total_allocated_bytes()
    batches = readers.open_table(path, ["hyp", "ref"], batch_size=100).batches(read_ahead=False)
    first = next(batches)
    held = pa.total_allocated_bytes() - before
    assert first.column("hyp").to_pylist() == text[:100]
    assert held < compressed // 2, (held, compressed)
    batches.close()


def test_stopping_after_the_first_batch_leaves_no_reader_running(tmp_path):
    path = _write(tmp_path / "t.parquet", sample_table(), 300)
    before = {t.ident for t in threading.enumerate()}
    batches = readers.open_table(path, ["hyp", "ref"], 500).batches()
    first = next(batches)
    assert first.num_rows == readers.first_batch_rows(500)
    batches.close()
    left = [t for t in threading.enumerate()
            if t.ident not in before and t.name.startswith("fastbleu-read")]
    for thread in left:
        thread.join(timeout=30)
    assert not any(thread.is_alive() for thread in left)


def test_a_damaged_file_is_one_error_from_either_reader(tmp_path):
    """Damage after the first rows: the full batch's reader meets it beside the small
    one; the error names the file, as without the small first batch."""
    table = pa.concat_tables([sample_table().select(["hyp", "ref"])] * 5)
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=2500, compression="snappy")
    data = bytearray(path.read_bytes())
    middle = len(data) // 3
    data[middle:middle + 4000] = b"\xff" * 4000
    path.write_bytes(bytes(data))
    with pytest.raises(InputError, match="damaged Parquet data|not a Parquet file"):
        fastbleu.score_table(str(path), batch_size=1000)
