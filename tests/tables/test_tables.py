"""Tables: group-by, documents, per-segment output, formats and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq
import pytest
from testkit.data import sample_table
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU, score_table
from fastbleu.cli import main
from fastbleu.errors import InputError
from testkit.data import DATA, needs_wmt22, read_lines, wmt22_references, wmt22_system, wmt22_systems
from testkit.data import (SAMPLE_REFS, SAMPLE_SYSTEMS)

@pytest.fixture(scope="module")
def sample_parquet(tmp_path_factory):
    path = tmp_path_factory.mktemp("tables") / "sample.parquet"
    pq.write_table(sample_table(), path, row_group_size=300)
    return path


def _by_key(result: pa.Table, keys) -> dict:
    return {tuple(row[k] for k in keys): row for row in result.to_pylist()}


def test_group_by_equals_each_group_alone(sample_parquet):
    result = score_table(sample_parquet, refs=["ref", "ref2"], group_by=["system", "pair"],
                         batch_size=256)
    assert result.column_names[:2] == ["system", "pair"]
    rows = _by_key(result, ["system", "pair"])
    assert set(rows) == {("A", "xx-en"), ("B", "xx-en")}
    for name, hyps in SAMPLE_SYSTEMS.items():
        expected = SacreBLEU().corpus_score(hyps, SAMPLE_REFS)
        row = rows[(name, "xx-en")]
        assert row["score"] == expected.score
        assert (row["sys_len"], row["ref_len"], row["counts"], row["totals"]) == \
            (expected.sys_len, expected.ref_len, expected.counts, expected.totals)
        assert row["precisions"] == expected.precisions and row["bp"] == expected.bp
        assert row["signature"].startswith("nrefs:2|case:mixed|eff:no|tok:13a|smooth:exp|")


def test_documents_are_scored_alone(sample_parquet):
    result = score_table(sample_parquet, group_by="system", doc="doc", batch_size=333)
    assert result.num_rows == 20
    rows = _by_key(result, ["system", "doc"])
    for name, hyps in SAMPLE_SYSTEMS.items():
        for d in (0, 7):
            part = slice(100 * d, 100 * (d + 1))
            expected = SacreBLEU().corpus_score(hyps[part], [SAMPLE_REFS[0][part]])
            assert rows[(name, f"d{d}")]["score"] == expected.score


def test_batch_size_does_not_change_the_numbers(sample_parquet):
    small = score_table(sample_parquet, group_by="system", batch_size=7)
    large = score_table(sample_parquet, group_by="system", batch_size=1 << 20)
    assert small.equals(large)


def test_segments_out(sample_parquet, tmp_path):
    out = tmp_path / "segments.parquet"
    score_table(sample_parquet, refs=["ref", "ref2"], group_by="system", segments_out=str(out),
                batch_size=500)
    segments = pq.read_table(out)
    assert segments.column_names[:3] == ["row", "system", "sentence_bleu"]
    assert segments.column("row").to_pylist() == list(range(2000))
    hyps = SAMPLE_SYSTEMS["A"] + SAMPLE_SYSTEMS["B"]
    refs = [SAMPLE_REFS[0] * 2, SAMPLE_REFS[1] * 2]
    expected = BLEU(effective_order=True).sentence_scores(hyps, refs)
    np.testing.assert_array_equal(segments.column("sentence_bleu").to_numpy(), expected)
    stats = BLEU().segment_statistics(hyps, refs)
    names = ["hyp_len", "ref_len"] + [f"match_{n}" for n in range(1, 5)] + \
        [f"total_{n}" for n in range(1, 5)]
    got = np.stack([segments.column(n).to_numpy() for n in names], axis=1)
    np.testing.assert_array_equal(got, stats)
    sacre = SacreBLEU(effective_order=True)
    for i in (0, 17, 1999):
        assert expected[i] == sacre.sentence_score(hyps[i], [refs[0][i], refs[1][i]]).score


def test_variable_references_in_a_list_column():
    hyps = ["a b c d", "the cat sat", "x y z", "q"]
    ref_lists = [["a b c d", "a b"], ["the cat sat on it"], None, ["q", None, "r"]]
    table = pa.table({"hyp": hyps, "refs": pa.array(
        [r if r is None else r for r in ref_lists[:2]] + [["x y"], ["q", None, "r"]],
        type=pa.list_(pa.string()))})
    streams = [["a b c d", "the cat sat on it", "x y", "q"], ["a b", None, None, None],
               [None, None, None, "r"]]
    result = score_table(table, refs="refs")
    expected = SacreBLEU().corpus_score(hyps, streams)
    assert result.column("score")[0].as_py() == expected.score
    assert result.column("signature")[0].as_py().startswith("nrefs:var|")


FORMATS = ["parquet", "directory", "glob", "csv", "tsv", "jsonl", "arrow", "pandas", "polars"]


@pytest.mark.parametrize("kind", FORMATS)
def test_every_source_format_gives_the_same_result(kind, tmp_path):
    table = sample_table().slice(900, 300)
    if kind == "parquet":
        source = tmp_path / "t.parquet"
        pq.write_table(table, source)
    elif kind in ("directory", "glob"):
        os.mkdir(tmp_path / "parts")
        pq.write_table(table.slice(0, 120), tmp_path / "parts" / "a.parquet")
        pq.write_table(table.slice(120), tmp_path / "parts" / "b.parquet")
        source = tmp_path / "parts" if kind == "directory" else str(tmp_path / "parts" / "*.parquet")
    elif kind in ("csv", "tsv"):
        source = tmp_path / f"t.{kind}"
        pacsv.write_csv(table, source, pacsv.WriteOptions(delimiter="," if kind == "csv" else "\t",
                                                          quoting_style="all_valid"))
    elif kind == "jsonl":
        source = tmp_path / "t.jsonl"
        source.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n"
                                  for r in table.to_pylist()), encoding="utf-8")
    elif kind == "arrow":
        source = table
    elif kind == "pandas":
        source = table.to_pandas()
    else:
        source = pl.from_arrow(table)
    result = score_table(source, group_by="system")
    expected = score_table(table, group_by="system")
    assert result.select(["score", "counts", "totals"]).equals(
        expected.select(["score", "counts", "totals"]))


def test_tokenizer_per_group_from_a_column():
    table = sample_table().slice(0, 300)
    tokenizers = ["13a"] * 100 + ["char"] * 100 + ["none"] * 100
    table = table.append_column("tok", pa.array(tokenizers)).append_column(
        "part", pa.array([t for t in tokenizers]))
    result = _by_key(score_table(table, group_by="part", tokenize_column="tok"), ["part"])
    hyps = table.column("hyp").to_pylist()
    refs = table.column("ref").to_pylist()
    for k, name in enumerate(["13a", "char", "none"]):
        part = slice(100 * k, 100 * (k + 1))
        expected = SacreBLEU(tokenize=name).corpus_score(hyps[part], [refs[part]])
        assert result[(name,)]["score"] == expected.score
        assert f"|tok:{name}|" in result[(name,)]["signature"]
    with pytest.raises(InputError, match="mixes the tokenizers"):
        score_table(table, group_by="system", tokenize_column="tok")


def test_null_references_are_missing_and_null_hypotheses_are_errors():
    table = pa.table({"hyp": ["a b", "c d", None], "r1": ["a b", None, "e"], "r2": [None, "c", "e"]})
    with pytest.raises(InputError, match=r"column 'hyp', row 2: the hypothesis is null"):
        score_table(table, refs=["r1", "r2"])
    result = score_table(table, refs=["r1", "r2"], null_as_empty=True)
    expected = SacreBLEU().corpus_score(["a b", "c d", ""], [["a b", None, "e"], [None, "c", "e"]])
    assert result.column("score")[0].as_py() == expected.score
    with pytest.raises(InputError, match=r"row 1: every reference is null"):
        score_table(pa.table({"hyp": ["a", "b"], "ref": ["a", None]}))


def test_invalid_utf8_in_a_table(tmp_path):
    path = tmp_path / "bad.parquet"
    # pyarrow checks UTF-8 when casting, so build the column from its buffers.
    unchecked = pa.Array.from_buffers(pa.string(), 2, [
        None, pa.py_buffer(np.array([0, 4, 11], dtype=np.int32)), pa.py_buffer(b"finebro\xffken")])
    pq.write_table(pa.table({"hyp": unchecked, "ref": ["fine", "broken"]}), path)
    with pytest.raises(InputError, match=r"column 'hyp', row 1: not valid UTF-8"):
        score_table(path)
    assert score_table(path, encoding_errors="replace").column("sys_len")[0].as_py() == 2


def test_missing_column_lists_the_columns(sample_parquet):
    with pytest.raises(InputError, match=r"no column 'target'; the columns are 'hyp', 'ref', "
                                         r"'ref2', 'system', 'doc', 'pair'"):
        score_table(sample_parquet, hyp="target")


def test_empty_table_scores_zero_with_a_warning(caplog, tmp_path):
    empty = sample_table().slice(0, 0)
    with caplog.at_level("WARNING", logger="fastbleu"):
        result = score_table(empty)
    assert result.column("score").to_pylist() == [0.0]
    assert "no rows" in caplog.text
    assert score_table(empty, group_by="system").num_rows == 0


# -- the command line on tables ----------------------------------------------------------


def _cli(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_cli_group_by_json(sample_parquet, capsys):
    status, out, _ = _cli([str(sample_parquet), "--ref-column", "ref", "--ref-column", "ref2",
                           "--group-by", "system,pair", "-w", "4"], capsys)
    assert status == 0
    records = json.loads(out)
    assert [(r["system"], r["pair"]) for r in records] == [("A", "xx-en"), ("B", "xx-en")]
    expected = SacreBLEU().corpus_score(SAMPLE_SYSTEMS["B"], SAMPLE_REFS)
    assert records[1]["score"] == float(f"{expected.score:.4f}")
    assert records[1]["verbose_score"] == expected._verbose
    assert records[1]["nrefs"] == "2" and records[1]["tok"] == "13a"


def test_cli_table_without_groups_prints_one_object(sample_parquet, capsys):
    status, out, _ = _cli([str(sample_parquet), "-f", "text", "-w", "3"], capsys)
    hyps = SAMPLE_SYSTEMS["A"] + SAMPLE_SYSTEMS["B"]
    expected = SacreBLEU().corpus_score(hyps, [SAMPLE_REFS[0] * 2])
    assert status == 0 and f" = {expected.score:.3f} {expected._verbose}" in out


def test_cli_errors_leave_no_output(sample_parquet, tmp_path, capsys):
    out = tmp_path / "segments.parquet"
    status, _, err = _cli([str(sample_parquet), "--hyp-column", "nope", "--segments-out",
                           str(out)], capsys)
    assert status == 2 and "no column 'nope'" in err and not out.exists()
    assert not [p for p in os.listdir(tmp_path) if p.startswith(".")]
    status, _, err = _cli([str(sample_parquet), "--segments-out",
                           str(tmp_path / "missing-dir" / "s.parquet")], capsys)
    assert status == 2 and "does not exist" in err
    status, _, err = _cli([str(tmp_path / "nothing.parquet")], capsys)
    assert status == 2 and "nothing.parquet: no such file" in err
    not_parquet = tmp_path / "text.parquet"
    not_parquet.write_text("hello\n")
    status, _, err = _cli([str(not_parquet)], capsys)
    assert status == 2 and "not a Parquet file" in err


def test_cli_segments_out_is_written_atomically(sample_parquet, tmp_path, capsys):
    out = tmp_path / "segments.parquet"
    out.write_bytes(b"old content")
    status, _, _ = _cli([str(sample_parquet), "--segments-out", str(out), "--quiet"], capsys)
    assert status == 0 and pq.read_table(out).num_rows == 2000
    assert sorted(os.listdir(tmp_path)) == ["segments.parquet"]


def test_cli_progress_line(sample_parquet, capsys):
    status, _, err = _cli([str(sample_parquet), "--progress", "--batch-size", "500"], capsys)
    assert status == 0 and "2,000/2,000 rows (100%)" in err and "rows/s" in err


def test_cli_empty_table_prints_valid_json(tmp_path):
    path = tmp_path / "empty.parquet"
    pq.write_table(sample_table().slice(0, 0), path)
    done = _run(FASTBLEU + [str(path)])
    assert done.returncode == 0 and json.loads(done.stdout)["score"] == 0.0
    assert "fastbleu: warning: the table has no rows" in done.stderr


# -- the command line on text files, against sacrebleu's --------------------------------

SACREBLEU = [sys.executable, "-m", "sacrebleu"]
FASTBLEU = [sys.executable, "-m", "fastbleu"]


def _run(command, stdin=None):
    return subprocess.run(command, capture_output=True, text=True, input=stdin)


def test_several_systems_json_equals_sacrebleu():
    files = [str(DATA / "sample.ref-A.en"), "-i", str(DATA / "sample.sys-A.en"),
             str(DATA / "sample.sys-B.en")]
    ours, theirs = _run(FASTBLEU + files), _run(SACREBLEU + files)
    assert ours.returncode == 0 and json.loads(ours.stdout) == json.loads(theirs.stdout)


def test_tab_separated_systems_on_stdin_and_references_in_one_file(tmp_path):
    refs = tmp_path / "refs.tsv"
    refs.write_text("".join(f"{a}\t{b}\n" for a, b in zip(*SAMPLE_REFS)), encoding="utf-8")
    systems = "".join(f"{a}\t{b}\n" for a, b in zip(SAMPLE_SYSTEMS["A"], SAMPLE_SYSTEMS["B"]))
    ours = _run(FASTBLEU + [str(refs), "-nr", "2"], stdin=systems)
    theirs = _run(SACREBLEU + [str(refs), "-nr", "2"], stdin=systems)
    assert ours.returncode == 0 and json.loads(ours.stdout) == json.loads(theirs.stdout)


def test_sentence_level_equals_sacrebleu():
    files = [str(DATA / "sample.ref-A.en"), "-i", str(DATA / "sample.sys-B.en"), "-sl", "-w", "4"]
    ours, theirs = _run(FASTBLEU + files), _run(SACREBLEU + files)
    strip = lambda text: text.replace("version:2.6.0", "V").replace("version:fastbleu-0.1.0", "V")  # noqa: E731
    assert ours.returncode == 0 and strip(ours.stdout) == strip(theirs.stdout)


def test_wrong_field_count_names_the_line(tmp_path, capsys):
    refs = tmp_path / "refs.tsv"
    refs.write_text("a\tb\nc\n", encoding="utf-8")
    status, _, err = _cli([str(refs), "-nr", "2", "-i", str(refs)], capsys)
    assert status == 2 and "line 2 has 1 tab-separated fields, expected 2" in err


def test_other_encodings(tmp_path, capsys):
    latin = tmp_path / "latin.txt"
    latin.write_bytes("un café crème et une crêpe à la crème\n".encode("latin-1"))
    assert main([str(latin), "-i", str(latin), "-e", "latin-1", "-b", "-f", "text"]) == 0
    assert capsys.readouterr().out.strip() == "100.0"
    status, _, err = _cli([str(latin), "-i", str(latin)], capsys)
    assert status == 2 and "line 1 is not valid UTF-8" in err
    assert main([str(latin), "-i", str(latin), "--encoding-errors", "replace", "-b",
                 "-f", "text"]) == 0


@needs_wmt22
def test_group_by_over_many_wmt22_systems(tmp_path):
    rows = {"hyp": [], "ref": [], "system": [], "pair": []}
    expected = {}
    for pair in ("de-en", "en-de", "cs-en"):
        ref = read_lines(wmt22_references(pair)[0])
        for system in wmt22_systems(pair)[:4]:
            hyps = read_lines(wmt22_system(pair, system))
            rows["hyp"] += hyps
            rows["ref"] += ref
            rows["system"] += [system] * len(hyps)
            rows["pair"] += [pair] * len(hyps)
            expected[(system, pair)] = BLEU().corpus_score(hyps, [ref]).score
    path = tmp_path / "wmt22.parquet"
    pq.write_table(pa.table(rows), path, row_group_size=3000)
    result = _by_key(score_table(path, group_by=["system", "pair"], batch_size=4096),
                     ["system", "pair"])
    assert {k: r["score"] for k, r in result.items()} == expected
