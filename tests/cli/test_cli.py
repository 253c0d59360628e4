"""The ``fastbleu`` command against the ``sacrebleu`` command, and its errors."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, settings, strategies as st

from fastbleu.cli import main
from fastbleu.inputs.files import column_from_bytes
from testkit.data import DATA, needs_wmt22, wmt22_references, wmt22_system
from testkit.marks import slow

SACREBLEU = [sys.executable, "-m", "sacrebleu"]
FASTBLEU = [sys.executable, "-m", "fastbleu"]


def _run(command, stdin=None):
    return subprocess.run(command, capture_output=True, text=True, input=stdin,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})


def _json_without_version(text: str) -> dict:
    record = json.loads(text)
    record["signature"] = record["signature"].rsplit("|", 1)[0]
    del record["version"]
    return record


SAMPLE_REFS = [str(DATA / "sample.ref-A.en"), str(DATA / "sample.ref-B.en")]
SAMPLE_HYP = str(DATA / "sample.sys-A.en")


@pytest.mark.parametrize("flags", [  # -lc and add-k run with -m slow (issue 28)
    [], slow(["-lc"]), ["-tok", "char", "-s", "floor"], slow(["-s", "add-k", "-sv", "2"])],
    ids=str)
def test_json_equals_sacrebleu_on_the_sample(flags):
    ours = _run(FASTBLEU + SAMPLE_REFS + ["-i", SAMPLE_HYP] + flags)
    theirs = _run(SACREBLEU + SAMPLE_REFS + ["-i", SAMPLE_HYP] + flags)
    assert ours.returncode == 0, ours.stderr
    assert _json_without_version(ours.stdout) == _json_without_version(theirs.stdout)


def test_max_ngram_order_flag(capsys):
    # sacrebleu's command line has no such flag; its API does.
    from sacrebleu.metrics import BLEU as SacreBLEU
    from testkit.data import read_lines

    assert main(SAMPLE_REFS + ["-i", SAMPLE_HYP, "--max-ngram-order", "3", "-w", "6"]) == 0
    record = json.loads(capsys.readouterr().out)
    expected = SacreBLEU(max_ngram_order=3).corpus_score(
        read_lines(SAMPLE_HYP), [read_lines(p) for p in SAMPLE_REFS])
    assert record["score"] == float(f"{expected.score:.6f}")
    assert record["verbose_score"] == expected._verbose


@needs_wmt22
@pytest.mark.parametrize("flags", [  # quick: JSON and text; the others with -m slow
    [], ["-f", "text", "-w", "2"],
    slow(["-lc", "-w", "3"]), slow(["-tok", "none", "-s", "none"]), slow(["-f", "text", "-b"]),
    slow(["-sh", "-f", "text"])], ids=str)
def test_output_equals_sacrebleu_on_wmt22(flags):
    refs = [str(p) for p in wmt22_references("de-en")]
    hyp = str(wmt22_system("de-en", "Online-B"))
    ours = _run(FASTBLEU + refs + ["-i", hyp] + flags)
    theirs = _run(SACREBLEU + refs + ["-i", hyp] + flags)
    assert ours.returncode == 0, ours.stderr
    if "-f" not in flags:
        assert _json_without_version(ours.stdout) == _json_without_version(theirs.stdout)
    else:
        version = "|v:" if "-sh" in flags else "|version:"
        strip = (lambda s: s.replace(version + "2.6.0", version + "X")
                 .replace(version + "fastbleu-0.1.0", version + "X"))
        assert strip(ours.stdout) == strip(theirs.stdout)


def test_standard_input(capsys, monkeypatch):
    with open(SAMPLE_HYP, "rb") as handle:
        data = handle.read()
    ours = _run(FASTBLEU + SAMPLE_REFS, stdin=data.decode())
    from_file = _run(FASTBLEU + SAMPLE_REFS + ["-i", SAMPLE_HYP])
    assert ours.returncode == 0, ours.stderr
    assert ours.stdout == from_file.stdout


def test_gzip_input(tmp_path, capsys):
    packed = tmp_path / "hyp.gz"
    with open(SAMPLE_HYP, "rb") as source, gzip.open(packed, "wb") as target:
        target.write(source.read())
    assert main(SAMPLE_REFS + ["-i", str(packed), "-b", "-f", "text", "-w", "4"]) == 0
    packed_score = capsys.readouterr().out
    assert main(SAMPLE_REFS + ["-i", SAMPLE_HYP, "-b", "-f", "text", "-w", "4"]) == 0
    assert capsys.readouterr().out == packed_score


def _error(argv, capsys):
    status = main(argv)
    captured = capsys.readouterr()
    assert captured.out == ""
    return status, captured.err


def test_missing_file(capsys):
    status, err = _error(SAMPLE_REFS + ["-i", "does-not-exist.txt"], capsys)
    assert status == 2
    assert err == "fastbleu: error: does-not-exist.txt: no such file\n"


def test_directory_instead_of_file(tmp_path, capsys):
    status, err = _error([str(tmp_path), "-i", SAMPLE_HYP], capsys)
    assert status == 2 and "is a directory" in err


def test_line_count_mismatch_names_both_files(tmp_path, capsys):
    short = tmp_path / "short.txt"
    short.write_text("one line\n", encoding="utf-8")
    status, err = _error(SAMPLE_REFS + ["-i", str(short)], capsys)
    assert status == 2
    assert err.startswith(f"fastbleu: error: {SAMPLE_REFS[0]} has ")
    assert f"lines but {short} has 1\n" in err


def test_invalid_utf8_names_file_and_line(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"fine\nstill fine\nbroken \xff here\n")
    status, err = _error([str(bad), "-i", str(bad)], capsys)
    assert status == 2
    assert err.startswith(f"fastbleu: error: {bad}: line 3 is not valid UTF-8")


def test_unknown_tokenizer_is_a_clean_error(capsys):
    status, err = _error(SAMPLE_REFS + ["-i", SAMPLE_HYP, "-tok", "bogus"], capsys)
    assert status == 2 and "unknown tokenizer 'bogus'; available: none, zh, 13a, intl" in err


def test_debug_shows_the_traceback():
    with pytest.raises(Exception, match="no such file"):
        main(SAMPLE_REFS + ["-i", "does-not-exist.txt", "--debug"])


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("ab \t\r\n\x0b\x0c\x1c\x85\u2028\u2029é")),
               max_size=30))
def test_lines_split_as_python_reads_files(tmp_path_factory, text):
    path = tmp_path_factory.mktemp("lines") / "f.txt"
    path.write_bytes(text.encode("utf-8"))
    with open(path, encoding="utf-8", newline="\n") as handle:
        expected = [line.rstrip("\n") for line in handle]
    column = column_from_bytes(text.encode("utf-8"))
    lines = [column.data[column.offsets[i]:column.offsets[i + 1]].tobytes().decode()
             for i in range(len(column))]
    assert lines == expected
