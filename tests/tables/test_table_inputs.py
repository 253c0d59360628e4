"""Tables from hostile inputs: a right score or one line of error, never a silent mix-up (issue 11).

Every file here is a real Parquet, CSV or JSON Lines file in ``tmp_path``;
command-line cases run ``python3 -m fastbleu`` in a subprocess and expect
exit status 2, one ``fastbleu: error:`` line and no traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastbleu
from fastbleu import BLEU, score_table
from fastbleu.errors import InputError
from fastbleu.tables import paired_table
from testkit.data import ROOT
from testkit.data import sample_table


def _fails(args, cwd, *needles):
    """Run the CLI; it must fail with one error line holding every needle."""
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-m", "fastbleu", *map(str, args), "--quiet"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastbleu: error: "), done.stderr
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert done.stdout == ""
    return lines[0]


def _small(n=6, **extra) -> pa.Table:
    sample = sample_table().slice(0, n)
    columns = {"hyp": sample.column("hyp"), "ref": sample.column("ref")}
    columns.update(extra)
    return pa.table(columns)


def _unchecked(values: list[bytes]) -> pa.Array:
    """A string array built from its buffers: pyarrow does not check its UTF-8."""
    offsets = np.concatenate([[0], np.cumsum([len(v) for v in values])]).astype(np.int32)
    return pa.Array.from_buffers(pa.string(), len(values),
                                 [None, pa.py_buffer(offsets), pa.py_buffer(b"".join(values))])


# -- §3 a column of another type in another part --------------------------------------


@pytest.fixture
def mixed_parts(tmp_path):
    """Two Parquet parts whose "system" is text in one and a number in the other."""
    path = tmp_path / "mixed"
    path.mkdir()
    pq.write_table(_small(2, system=["0", "1"]), path / "p0.parquet")
    pq.write_table(_small(2, system=[0, 1]), path / "p1.parquet")
    return path


def test_a_column_of_another_type_in_another_part_is_refused(mixed_parts):
    pattern = r"column 'system' holds string in .*p0.parquet but int64 in .*p1.parquet"
    with pytest.raises(InputError, match=pattern):
        score_table(mixed_parts, group_by="system")
    with pytest.raises(InputError, match=pattern):
        score_table(str(mixed_parts / "*.parquet"), group_by="system")
    with pytest.raises(InputError, match=pattern):
        paired_table(mixed_parts, system="system")
    _fails([mixed_parts, "--group-by", "system"], mixed_parts.parent, "p0.parquet",
           "p1.parquet", "'system'", "string", "int64")


def test_a_column_of_another_type_in_a_glob_of_several_formats(tmp_path):
    pq.write_table(_small(2, system=["0", "1"]), tmp_path / "a.parquet")
    with open(tmp_path / "b.jsonl", "w") as handle:
        for hyp, ref in zip(["x y", "z"], ["x y", "z"]):
            handle.write(json.dumps({"hyp": hyp, "ref": ref, "system": 0}) + "\n")
    with pytest.raises(InputError, match=r"'system' holds string in .*a.parquet but int64 in "
                                         r".*b.jsonl"):
        score_table(str(tmp_path / "*"), group_by="system")


def test_object_columns_of_mixed_types_are_refused():
    frame = pd.DataFrame({"hyp": ["a b", "c"], "ref": ["a b", "c"], "system": ["0", 0]})
    with pytest.raises(InputError, match=r"column system .*one type"):
        score_table(frame, group_by="system")
    frame = pd.DataFrame({"hyp": ["a b", 5], "ref": ["a b", "c"]})
    with pytest.raises(InputError, match=r"column hyp"):
        score_table(frame)


def test_a_key_that_changes_type_between_batches_is_refused():
    from fastbleu.tables.job import TableJob

    job = TableJob.create("hyp", ["ref"], ["system"], None, None, False, "strict", 10, {})
    batches = [_small(2, system=["0", "1"]).to_batches()[0],
               _small(2, system=[0, 1]).to_batches()[0]]
    with pytest.raises(InputError, match=r"'system' holds string in the rows before but int64 "
                                         r"in the rows from 2 on"):
        job.statistics(batches, job.metric())


# -- §3 group columns named like output columns, or twice ------------------------------


def test_repeated_or_reserved_group_columns_are_refused(tmp_path):
    table = _small(4, system=["a", "b", "a", "b"], row=[1, 2, 3, 4], score=[1, 1, 2, 2])
    path = tmp_path / "t.parquet"
    pq.write_table(table, path)
    with pytest.raises(ValueError, match=r"'system' is given twice"):
        score_table(table, group_by=["system", "system"])
    with pytest.raises(ValueError, match=r"'system' is given twice"):
        score_table(table, group_by="system", doc="system")
    with pytest.raises(ValueError, match=r"cannot be named 'score': the result has columns "
                                         r"score, bp"):
        score_table(table, group_by="score")
    with pytest.raises(ValueError, match=r"'row' with segments_out: the file has columns row, "
                                         r"sentence_bleu"):
        score_table(table, group_by="row", segments_out=str(tmp_path / "s.parquet"))
    with pytest.raises(ValueError, match=r"given twice in group_by"):
        paired_table(table, system="row", group_by=["system", "system"])
    # Without segments_out, "row" is an ordinary column.
    assert score_table(table, group_by="row").num_rows == 4
    _fails([path, "--group-by", "system,system", "--segments-out", "s.parquet"], tmp_path,
           "'system' is given twice")
    _fails([path, "--group-by", "row", "--segments-out", "s.parquet"], tmp_path, "'row'",
           "sentence_bleu")
    assert not (tmp_path / "s.parquet").exists()


# -- §4 nullable string keys ------------------------------------------------------------


@pytest.fixture
def nullable_keys(tmp_path):
    """1000 rows whose key "g" is null in every third row (one Parquet dictionary column)."""
    sample = sample_table().slice(0, 1000)
    keys = pa.array([None if i % 3 == 0 else ("x" if i % 3 == 1 else "y") for i in range(1000)],
                    pa.string())
    table = pa.table({"hyp": sample.column("hyp"), "ref": sample.column("ref"), "g": keys,
                      "seg": pa.array([str(i // 3) for i in range(1000)])})
    path = tmp_path / "nulls.parquet"
    pq.write_table(table, path, row_group_size=300)
    return path, table


def test_null_keys_from_parquet_are_a_group_of_their_own(nullable_keys):
    path, table = nullable_keys
    result = score_table(path, group_by="g", batch_size=128)
    assert result.column("g").to_pylist() == [None, "x", "y"]
    hyps, refs, keys = (table.column(c).to_pylist() for c in ("hyp", "ref", "g"))
    for value, score in zip(result.column("g").to_pylist(), result.column("score").to_pylist()):
        rows = [i for i, k in enumerate(keys) if k == value]
        expected = BLEU().corpus_score([hyps[i] for i in rows], [[refs[i] for i in rows]])
        assert score == expected.score
    # The same in memory (no dictionary), and as a document column.
    assert score_table(table, group_by="g").equals(result)
    assert score_table(path, doc="g").column("score").equals(result.column("score"))


def test_null_systems_and_segments_in_a_paired_table(nullable_keys):
    path, table = nullable_keys
    table = table.slice(0, 999)
    path = path.with_name("paired.parquet")
    pq.write_table(table, path, row_group_size=300)
    result = paired_table(path, system="g", segment="seg", n_samples=20, batch_size=100)
    assert result.systems == [[None, "x", "y"]]
    _fails([path, "--system-column", "g", "--baseline", "nosuch", "--paired-bs"], path.parent,
           "baseline 'nosuch'")


# -- §4 a misspelled column -----------------------------------------------------------------


@pytest.mark.parametrize("flags", [["--group-by", "nosuch"], ["--doc-column", "nosuch"],
                                   ["--system-column", "nosuch", "--paired-bs"],
                                   ["--tokenize-column", "nosuch"],
                                   ["--hyp-column", "nosuch"], ["--ref-column", "nosuch"],
                                   ["--system-column", "system", "--segment-column", "nosuch",
                                    "--paired-bs"]])
def test_a_misspelled_column_is_named_with_the_columns_there_are(flags, tmp_path):
    path = tmp_path / "good.parquet"
    pq.write_table(_small(4, system=["a", "b", "a", "b"]), path)
    _fails([path, *flags], tmp_path, "no column 'nosuch'; the columns are 'hyp', 'ref', "
           "'system'")


def test_a_misspelled_key_column_in_the_api_and_on_every_format(tmp_path):
    table = _small(4, system=["a", "b", "a", "b"])
    pq.write_table(table, tmp_path / "t.parquet")
    table.to_pandas().to_csv(tmp_path / "t.csv", index=False)
    table.to_pandas().to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    for name in ("t.parquet", "t.csv", "t.jsonl"):
        with pytest.raises(InputError, match=r"no column 'nosuch'; the columns are 'hyp', 'ref', "
                                             r"'system'"):
            score_table(tmp_path / name, group_by="nosuch")
    with pytest.raises(InputError, match=r"no column 'nosuch'"):
        paired_table(tmp_path / "t.parquet", system="nosuch")


# -- §5 damaged files, repeated names, nested keys, huge batches -------------------------


@pytest.fixture
def damaged_parquet(tmp_path):
    """An uncompressed Parquet file with bytes flipped inside a data page, the footer intact."""
    path = tmp_path / "damaged.parquet"
    pq.write_table(sample_table().select(["hyp", "ref"]), path, compression="none",
                   use_dictionary=False)
    column = pq.ParquetFile(path).metadata.row_group(0).column(0)
    data = bytearray(path.read_bytes())
    for i in range(column.data_page_offset + 8, column.data_page_offset + 72):
        data[i] ^= 0xFF
    path.write_bytes(bytes(data))
    pq.ParquetFile(path).metadata  # the footer still reads
    return path


def test_a_damaged_data_page_names_the_file(damaged_parquet):
    with pytest.raises(InputError, match=r"damaged.parquet: damaged Parquet data"):
        score_table(damaged_parquet)
    _fails([damaged_parquet], damaged_parquet.parent, "damaged.parquet: damaged Parquet data")


def test_two_columns_of_one_name(tmp_path):
    table = pa.Table.from_arrays([pa.array(["a b"]), pa.array(["a b"]), pa.array(["c"])],
                                 names=["hyp", "ref", "hyp"])
    pq.write_table(table, tmp_path / "dup.parquet")
    (tmp_path / "dup.csv").write_text("hyp,ref,hyp\na b,a b,c\n")
    for name in ("dup.parquet", "dup.csv"):
        _fails([name, "--ref-column", "ref"], tmp_path, f"{name}: 2 columns are named 'hyp'")
    with pytest.raises(InputError, match=r"2 columns are named 'hyp'"):
        score_table(table)
    with pytest.raises(InputError, match=r"2 columns are named 'hyp'"):
        score_table(table.to_pandas())
    # A repeated column that is not read is no obstacle.
    other = pa.Table.from_arrays([pa.array(["a b"]), pa.array(["a b"]), pa.array([1]),
                                  pa.array([2])], names=["hyp", "ref", "x", "x"])
    assert score_table(other).column("score")[0].as_py() == 0.0


@pytest.mark.parametrize("column", ["st", "li"])
def test_a_struct_or_list_key_from_json_lines(column, tmp_path):
    with open(tmp_path / "nested.jsonl", "w") as handle:
        for i in range(4):
            handle.write(json.dumps({"hyp": "a b c", "ref": "a b d", "st": {"x": i},
                                     "li": [i]}) + "\n")
    kind = "struct<x: int64>" if column == "st" else "list<item: int64>"
    _fails(["nested.jsonl", "--group-by", column], tmp_path,
           f"column '{column}' holds {kind}, which cannot be a group key")
    frame = pl.DataFrame({"hyp": ["a b"], "ref": ["a b"], "st": [{"x": 1}]})
    with pytest.raises(InputError, match=r"column 'st' holds struct"):
        score_table(frame, group_by="st")


@pytest.mark.parametrize("name", ["t.csv", "t.parquet", "t.jsonl"])
def test_a_batch_size_too_large_is_refused_before_reading(name, tmp_path):
    table = _small(4)
    pq.write_table(table, tmp_path / "t.parquet")
    table.to_pandas().to_csv(tmp_path / "t.csv", index=False)
    table.to_pandas().to_json(tmp_path / "t.jsonl", orient="records", lines=True)
    _fails([name, "--ref-column", "ref", "--batch-size", str(10 ** 11)], tmp_path,
           "batch_size must be an int from 1 to 16,777,216")
    with pytest.raises(ValueError, match=r"batch_size"):
        score_table(tmp_path / name, batch_size=1 << 40)
    with pytest.raises(ValueError, match=r"batch_size"):
        paired_table(tmp_path / name, system="hyp", batch_size=0)
    # The largest batch allowed reads (a CSV block size is an int32 in pyarrow).
    assert score_table(tmp_path / name, batch_size=1 << 24).equals(score_table(table))


# -- §6 JSON Lines in blocks; many groups in one batch ------------------------------------


def test_json_lines_are_read_in_blocks_with_the_numbers_of_a_whole_read(tmp_path, monkeypatch):
    import gzip

    import fastbleu.tables.readers

    table = sample_table()
    frame = table.to_pandas()
    frame.loc[:1499, "hyp"] = None  # null in the first blocks, text later
    path = tmp_path / "t.jsonl"
    frame.to_json(path, orient="records", lines=True)
    gz = tmp_path / "t.jsonl.gz"
    gz.write_bytes(gzip.compress(path.read_bytes()))
    expected = score_table(pa.Table.from_pandas(frame, preserve_index=False),
                           group_by=["system", "doc"], null_as_empty=True).to_pylist()
    monkeypatch.setattr(fastbleu.tables.readers, "JSON_BLOCK", 4096)
    assert len(list(fastbleu.tables.readers._json_blocks(str(path), 4096))) > 100
    source = fastbleu.tables.readers.open_table(path, ["hyp", "ref", "system", "doc"],
                                                batch_size=300)
    sizes = [batch.num_rows for batch in source.batches(read_ahead=False)]
    assert sizes == [300] * 6 + [200]  # blocks of 4 KB, gathered into batches
    for name in (path, gz):
        result = score_table(name, group_by=["system", "doc"], null_as_empty=True)
        assert result.to_pylist() == expected


def test_csv_rows_longer_than_a_block_and_batches_of_batch_size(tmp_path, monkeypatch):
    import fastbleu.tables.readers as readers

    frame = sample_table().to_pandas()
    frame.loc[5, "hyp"] = "a quoted\nvalue, over \"two\" lines"
    frame.loc[1500, "ref"] = " ".join(["long"] * 30000)  # 150 KB: longer than a block
    path = tmp_path / "t.csv"
    frame.to_csv(path, index=False)
    expected = score_table(pa.Table.from_pandas(frame, preserve_index=False),
                           group_by="system").to_pylist()
    monkeypatch.setattr(readers, "CSV_BLOCK", 1 << 14)  # the long row is read again, from it on
    source = readers.open_table(path, ["hyp", "ref", "system"], batch_size=300)
    batches = list(source.batches(read_ahead=False))
    assert [b.num_rows for b in batches] == [300] * 6 + [200]
    assert pa.Table.from_batches(batches).column("hyp").to_pylist() == \
        frame["hyp"].tolist()
    assert score_table(path, group_by="system", batch_size=300).to_pylist() == expected


@pytest.mark.parametrize("suffix", ["csv", "jsonl"])
def test_csv_and_json_lines_memory_follows_the_batch_not_the_file(suffix, tmp_path, monkeypatch):
    """Arrow's CSV reader reads some 18 blocks ahead: with blocks of 16 MB, a 400 MB
    file took 860 MB and a 20 MB one 440 MB.  Here blocks of 64 KB and a 12 MB file."""
    import fastbleu.tables.readers as readers

    frame = pd.concat([sample_table().to_pandas()] * 30, ignore_index=True)
    path = tmp_path / f"t.{suffix}"
    if suffix == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_json(path, orient="records", lines=True)
    assert path.stat().st_size > 10 << 20 and len(frame) == 60000
    monkeypatch.setattr(readers, "CSV_BLOCK", 1 << 16)
    monkeypatch.setattr(readers, "JSON_BLOCK", 1 << 16)
    import gc

    del frame
    gc.collect()
    before, peak, rows = pa.total_allocated_bytes(), 0, 0
    for batch in readers.open_table(path, ["hyp", "ref"], batch_size=1000).batches():
        peak = max(peak, pa.total_allocated_bytes() - before)
        rows += batch.num_rows
    assert rows == 60000
    assert peak < 6 << 20, peak  # about 18 blocks and two batches, not the file (12 MB)


def test_json_lines_whose_values_change_type_are_refused(tmp_path):
    with open(tmp_path / "t.jsonl", "w") as handle:
        for i in range(30000):
            handle.write(json.dumps({"hyp": "a b", "ref": "a b", "s": i if i < 20000 else "x"})
                         + "\n")
    _fails(["t.jsonl", "--group-by", "s"], tmp_path, "t.jsonl: cannot be read as JSON Lines",
           "Column(/s) changed from number to string")


def test_one_document_per_row_in_one_batch():
    sample = sample_table()
    table = sample.append_column("one", pa.array([f"r{i}" for i in range(sample.num_rows)]))
    result = score_table(table, doc="one", batch_size=1 << 16)
    bleu = BLEU()
    stats = bleu.segment_statistics(sample.column("hyp").to_pylist(),
                                    [sample.column("ref").to_pylist()])
    assert result.column("one").to_pylist() == [f"r{i}" for i in range(sample.num_rows)]
    assert result.column("score").to_pylist() == [bleu.formula.score(row).score for row in stats]


def test_groups_mixing_tokenizers_are_still_refused():
    table = _small(4, g=["a", "a", "b", "b"], tok=["13a", "char", "13a", "13a"])
    with pytest.raises(InputError, match=r"group \('a',\) mixes the tokenizers \['13a', 'char'\]"):
        score_table(table, group_by="g", tokenize_column="tok")
    result = score_table(table.slice(2), group_by="g", tokenize_column="tok")
    assert result.column("g").to_pylist() == ["b"]


# -- §7 text that is not UTF-8 ------------------------------------------------------------


def test_invalid_utf8_in_a_csv_names_the_row_and_column(tmp_path):
    (tmp_path / "bad.csv").write_bytes(b"hyp,ref,g\na b,a b,x\na \xff b,a b,y\nc,c,\xfe\n")
    _fails(["bad.csv", "--group-by", "g"], tmp_path, "bad.csv: column 'hyp', row 1: not valid "
           "UTF-8", "--encoding-errors replace")
    (tmp_path / "key.csv").write_bytes(b"hyp,ref,g\na b,a b,x\nc,c,\xfe\n")
    _fails(["key.csv", "--group-by", "g"], tmp_path, "key.csv: column 'g', row 1: not valid UTF-8")
    result = score_table(tmp_path / "bad.csv", group_by="g", encoding_errors="replace")
    assert result.column("g").to_pylist() == ["x", "y", "\ufffd"]
    assert result.column("sys_len").to_pylist() == [2, 3, 1]


def test_invalid_utf8_in_a_parquet_key_or_a_json_line(tmp_path):
    table = _small(3, g=_unchecked([b"ok", b"\xff", b"ok"]))
    pq.write_table(table, tmp_path / "key.parquet")
    _fails(["key.parquet", "--group-by", "g"], tmp_path, "column 'g', row 1: not valid UTF-8")
    result = score_table(tmp_path / "key.parquet", group_by="g", encoding_errors="replace")
    assert result.column("g").to_pylist() == ["ok", "\ufffd"]
    with pytest.raises(InputError, match=r"column 'g', row 1: not valid UTF-8"):
        paired_table(tmp_path / "key.parquet", system="g")
    (tmp_path / "bad.jsonl").write_bytes(b'{"hyp":"a b","ref":"a b"}\n'
                                         b'{"hyp":"a \xff b","ref":"a b"}\n')
    _fails(["bad.jsonl", "--ref-column", "ref"], tmp_path, "bad.jsonl: line 2 is not valid UTF-8")
    result = score_table(tmp_path / "bad.jsonl", encoding_errors="replace")
    assert result.column("sys_len")[0].as_py() == 5


# -- data frames ------------------------------------------------------------------------------


def test_null_keys_in_data_frames():
    frame = pd.DataFrame({"hyp": ["a b c", "d", "x"], "ref": ["a b c", "d e g", "a b"],
                          "system": pd.array(["a", None, "a"], dtype="string")})
    assert score_table(frame, group_by="system").column("system").to_pylist() == ["a", None]
    polars = pl.from_pandas(frame).with_columns(pl.col("system").cast(pl.Categorical))
    assert score_table(polars, group_by="system").column("system").to_pylist() == ["a", None]


# -- on a Dask cluster ------------------------------------------------------------------------


def test_a_polars_lazy_frame_is_collected(tmp_path):
    sample = sample_table()
    expected = score_table(sample, group_by="system").to_pylist()
    lazy = pl.from_arrow(sample).lazy().with_columns(extra=pl.lit(1))
    assert score_table(lazy, group_by="system").to_pylist() == expected
    pq.write_table(sample, tmp_path / "t.parquet")
    scanned = pl.scan_parquet(tmp_path / "t.parquet")
    assert score_table(scanned, group_by="system").to_pylist() == expected
    with pytest.raises(InputError, match=r"LazyFrame: no column 'nosuch'; the columns are 'hyp'"):
        score_table(lazy, group_by="nosuch")
    with pytest.raises(InputError, match=r"LazyFrame: cannot be computed"):
        score_table(pl.scan_parquet(tmp_path / "missing.parquet"))


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    import fastbleu.dask as fd

    fastbleu.score_table(sample_table())  # compile or load the kernels before the workers
    with fd.connect(workers=2) as client:
        yield client


@pytest.mark.slow  # a real cluster (issue 28: -m slow)
def test_on_dask(client, mixed_parts, nullable_keys, damaged_parquet):
    import dask
    import dask.dataframe as dd

    import fastbleu.dask as fd

    with pytest.raises(InputError, match=r"column 'system' holds string in .*p0.parquet but "
                                         r"int64 in .*p1.parquet"):
        fd.score_table(mixed_parts, group_by="system", client=client)
    path, table = nullable_keys
    expected = score_table(path, group_by="g")
    assert fd.score_table(path, group_by="g", client=client, batch_size=128).equals(expected)
    with pytest.raises(InputError, match=r"damaged.parquet: damaged Parquet data"):
        fd.score_table(damaged_parquet, client=client)
    # Partitions of a Dask DataFrame whose column is text in one, numbers in another.
    frames = [pd.DataFrame({"hyp": ["a b", "c"], "ref": ["a b", "c"], "system": values})
              for values in (["0", "1"], [0, 1])]
    ddf = dd.from_delayed([dask.delayed(f) for f in frames], meta=frames[0], verify_meta=False)
    with pytest.raises(InputError, match=r"column 'system' holds string in one partition but "
                                         r"int64 in another"):
        fd.score_table(ddf, group_by="system", client=client)
    with pytest.raises(ValueError, match=r"'row' with segments_out"):
        fd.score_table(path, group_by="row", segments_out="never", client=client)
