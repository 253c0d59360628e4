"""Edge cases found in review: group keys, Arrow layouts, untrusted bytes, CLI details."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU, score_table
from fastbleu.cli import main
from testkit.data import DATA

SACREBLEU = [sys.executable, "-m", "sacrebleu"]
FASTBLEU = [sys.executable, "-m", "fastbleu"]


def _table(keys) -> pa.Table:
    n = len(keys)
    return pa.table({"hyp": ["a b c d"] * n, "ref": ["a b c d"] * n, "g": keys})


@pytest.mark.parametrize("batch_size", [1, 2, 4])
def test_a_dictionary_that_repeats_a_value_is_one_group(batch_size):
    keys = pa.DictionaryArray.from_arrays(pa.array([0, 1, 0, 1]), pa.array(["s", "s"]))
    result = score_table(_table(keys), group_by="g", batch_size=batch_size).to_pylist()
    assert [(r["g"], r["sys_len"]) for r in result] == [("s", 16)]


@pytest.mark.parametrize("batch_size", [1, 2, 4])
def test_nan_and_signed_zero_keys_merge_across_batches(batch_size):
    result = score_table(_table([0.0, -0.0, float("nan"), float("nan")]), group_by="g",
                         batch_size=batch_size).to_pylist()
    assert [r["sys_len"] for r in result] == [8, 8]
    assert result[0]["g"] == 0.0 and np.isnan(result[1]["g"])


def test_a_sliced_list_column_of_references():
    values = pa.array(["zz", "zz", "a b c d", "q", "e f"])
    lists = pa.ListArray.from_arrays(pa.array([2, 4, 5], pa.int32()), values)
    result = score_table(pa.table({"hyp": ["a b c d", "e f"], "ref": lists}), refs="ref",
                         max_ngram_order=2)
    expected = SacreBLEU(max_ngram_order=2).corpus_score(["a b c d", "e f"],
                                                         [["a b c d", "e f"], ["q", None]])
    assert result.column("score")[0].as_py() == expected.score


def test_binary_arrow_input_is_refused():
    with pytest.raises(TypeError, match="must hold strings, got an Arrow column of type "
                                        "large_binary"):
        BLEU().segment_statistics(pa.array([b"a\xe2", b"b"], pa.large_binary()), [["a", "b"]])


def test_arrow_strings_that_are_not_utf8_are_refused_with_the_index():
    unchecked = pa.Array.from_buffers(pa.string(), 2, [
        None, pa.py_buffer(np.array([0, 2, 4], dtype=np.int32)), pa.py_buffer(b"ok\xe2\x80")])
    with pytest.raises(ValueError, match=r"hypotheses\[1\] is not valid UTF-8"):
        BLEU().segment_statistics(unchecked, [["ok", "x"]])


def test_compute_bleu_refuses_smoothed_counts():
    with pytest.raises(ValueError, match="whole-number statistics"):
        BLEU.compute_bleu([2, 1.5, 0, 0], [3, 2.5, 1, 0], 3, 4, smooth_method="add-k")


def test_score_only_with_json_prints_the_bare_score_as_sacrebleu():
    files = [str(DATA / "sample.ref-A.en"), "-i", str(DATA / "sample.sys-A.en"), "-b", "-w", "3"]
    ours = subprocess.run(FASTBLEU + files, capture_output=True, text=True)
    theirs = subprocess.run(SACREBLEU + files, capture_output=True, text=True)
    assert ours.stdout == theirs.stdout and ours.stdout.strip().replace(".", "").isdigit()


def test_standard_input_ends_lines_at_carriage_returns_as_sacrebleu(tmp_path):
    refs = tmp_path / "refs.txt"
    refs.write_text("a dog barks loudly\nthe cat sleeps all day\n", encoding="utf-8")
    stdin = "a dog barks loudly\rthe cat sleeps all day\n"
    ours = subprocess.run(FASTBLEU + [str(refs)], capture_output=True, text=True, input=stdin)
    theirs = subprocess.run(SACREBLEU + [str(refs)], capture_output=True, text=True,
                            input=stdin)
    assert ours.returncode == 0, ours.stderr
    assert json.loads(ours.stdout)["score"] == json.loads(theirs.stdout)["score"] == 100.0


def test_a_file_name_with_glob_characters_is_a_file(tmp_path, capsys):
    odd = tmp_path / "ref[1].txt"
    odd.write_text("a b c d e\n", encoding="utf-8")
    assert main([str(odd), "-i", str(odd), "-b", "-f", "text"]) == 0
    assert capsys.readouterr().out.strip() == "100.0"


def test_segments_out_gets_ordinary_permissions(tmp_path):
    out = tmp_path / "segments.parquet"
    score_table(_table(["x", "y"]), segments_out=str(out))
    umask = os.umask(0)
    os.umask(umask)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o666 & ~umask
    assert pq.read_table(out).num_rows == 2
