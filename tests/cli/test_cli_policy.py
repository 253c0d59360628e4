"""The command line's policy (issue 12 §5): only the user's input is a one-line error, a bug
shows its traceback; no flag is abbreviated; sacrebleu's -l picks the tokenizer; --help
loads nothing heavy."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from fastbleu.cli import main
from testkit.data import DATA, FASTBLEU, HYP, HYP_B, REF, ROOT, SACREBLEU
from testkit.marks import slow

INTERNAL = ("fastbleu: internal error: this is a bug; please report it with the command line "
            "and the traceback above")


def _env() -> dict:
    return {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONIOENCODING": "utf-8"}


def _run(command, **kwargs):
    return subprocess.run([str(a) for a in command], capture_output=True, text=True,
                          env=_env(), **kwargs)


def _one_line(status, err, expected_status=2) -> str:
    assert status == expected_status, err
    assert "Traceback" not in err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastbleu: error: "), err
    return lines[0]


# -- a bug is a bug ---------------------------------------------------------------------------

@pytest.mark.parametrize("error", [ValueError("boom"), TypeError("boom"),
                                   FileNotFoundError("boom")], ids=lambda e: type(e).__name__)
def test_an_exception_from_scoring_shows_its_traceback(monkeypatch, capsys, error):
    """What today's blanket except turned into 'fastbleu: error: boom', exit 2."""
    import fastbleu.metrics.bleu.metric

    def broken(self, *args, **kwargs):
        raise error

    monkeypatch.setattr(fastbleu.metrics.bleu.metric.BLEU, "corpus_score", broken)
    assert main([REF, "-i", HYP]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0] == "Traceback (most recent call last):"
    assert f"{type(error).__name__}: boom" in lines
    assert "corpus_score" in captured.err  # the frame that raised it
    assert lines[-1] == INTERNAL
    assert not any(line.startswith("fastbleu: error:") for line in lines)


def test_a_bug_in_a_paired_test_or_a_report_too(monkeypatch, capsys):
    import fastbleu.significance.tests
    import fastbleu.cli.printing

    def boom(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(fastbleu.significance.tests, "paired_tests", boom)
    assert main([REF, "-i", HYP, HYP_B, "--paired-bs", "-pbsn", "10"]) == 1
    err = capsys.readouterr().err
    assert "ValueError: boom" in err and err.splitlines()[-1] == INTERNAL
    monkeypatch.setattr(fastbleu.cli.printing, "single", boom)
    assert main([REF, "-i", HYP]) == 1
    assert capsys.readouterr().err.splitlines()[-1] == INTERNAL


def test_debug_reraises_a_bug(monkeypatch):
    import fastbleu.cli.printing

    def boom(*args, **kwargs):
        raise ValueError("boom")

    monkeypatch.setattr(fastbleu.cli.printing, "single", boom)
    with pytest.raises(ValueError, match="boom"):
        main([REF, "-i", HYP, "--debug"])


def test_an_input_error_stays_one_line(monkeypatch, capsys):
    import fastbleu.cli.printing
    from fastbleu.errors import InputError

    def refuse(*args, **kwargs):
        raise InputError("this input is refused")

    monkeypatch.setattr(fastbleu.cli.printing, "single", refuse)
    status = main([REF, "-i", HYP])
    captured = capsys.readouterr()
    assert captured.out == ""
    assert _one_line(status, captured.err) == "fastbleu: error: this input is refused"


def test_a_bug_in_a_subprocess_exits_1_with_the_traceback(tmp_path):
    """The whole process: exit 1, the traceback and the request on standard error."""
    code = ("import sys, fastbleu.metrics.bleu.metric\n"
            "def boom(*a, **k): raise ValueError('boom')\n"
            "fastbleu.metrics.bleu.metric.BLEU.corpus_score = boom\n"
            "from fastbleu.cli import main\n"
            f"sys.exit(main([{REF!r}, '-i', {HYP!r}]))\n")
    done = _run([sys.executable, "-c", code])
    assert done.returncode == 1 and done.stdout == ""
    assert "Traceback (most recent call last)" in done.stderr
    assert done.stderr.splitlines()[-1] == INTERNAL


# -- the API's refusals of typed values stay one line -----------------------------------------

@pytest.mark.parametrize("flags, needle", [
    (["-tok", "bogus"], "unknown tokenizer 'bogus'"),
    (["--seed", "x1", "-pbs", "-pbsn", "10"], "seed"),
    (["--seed", "-3", "-ci"], "seed"),
    (["-tok", "flores200", "--spm-model", "/nonexistent/m.model"], "/nonexistent/m.model"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_refused_flag_values_are_one_line(capsys, flags, needle):
    systems = [HYP, HYP_B] if "-pbs" in flags else [HYP]
    status = main([REF, "-i", *systems, *flags])
    captured = capsys.readouterr()
    assert needle in _one_line(status, captured.err) and captured.out == ""


@pytest.mark.parametrize("flags", [["-pbs"], ["-par", "-parn", "10"], ["-ci"]], ids=str)
def test_resampling_an_empty_input_is_one_line(tmp_path, capsys, flags):
    empty, other = tmp_path / "empty.txt", tmp_path / "other.txt"
    empty.write_bytes(b"")
    other.write_bytes(b"")
    systems = [empty] if "-ci" in flags else [empty, other]
    status = main([str(empty), "-i", *map(str, systems), *flags])
    err = capsys.readouterr().err.splitlines()
    assert status == 2 and err[-1] == "fastbleu: error: no segments: resampling needs at least one"
    assert "Traceback" not in "\n".join(err)


@pytest.fixture
def small_table(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": ["a b c d", "e f g h"] * 2, "ref": ["a b c d", "e f g x"] * 2,
                             "system": ["s1", "s1", "s2", "s2"], "g": ["x", "y", "x", "y"],
                             "score": [1, 2, 3, 4]}), path)
    return path


@pytest.mark.parametrize("flags, needle", [
    (["--group-by", "g,g"], "'g' is given twice"),
    (["--group-by", "score"], "cannot be named 'score'"),
    (["--group-by", "g", "--batch-size", str(10 ** 11)], "batch_size must be an int from 1"),
    (["--system-column", "system", "-pbs", "--group-by", "g,g"], "'g' is given twice"),
    (["--system-column", "system", "-pbs", "--group-by", "system"], "the system column"),
    (["--system-column", "system", "-pbs", "--batch-size", str(10 ** 11)], "batch_size"),
    (["--system-column", "system", "-pbs", "--seed", "x"], "seed"),
    (["--system-column", "system", "-pbs", "-tok", "bogus"], "unknown tokenizer 'bogus'"),
], ids=lambda v: " ".join(v) if isinstance(v, list) else v)
def test_table_flags_the_api_refuses_are_one_line(capsys, small_table, flags, needle):
    status = main([str(small_table), *flags, "--quiet"])
    captured = capsys.readouterr()
    assert needle in _one_line(status, captured.err) and captured.out == ""


# -- no abbreviations -------------------------------------------------------------------------

@pytest.mark.parametrize("flag, words", [
    (["--lowerc"], "unrecognized arguments: --lowerc"),
    (["--max-ngram", "3"], "unrecognized arguments: --max-ngram"),
    (["--tok", "char"], "unrecognized arguments: --tok"),
    (["-pb"], "unrecognized arguments: -pb"),  # not -pbs or -pbsn
])
def test_abbreviated_flags_are_usage_errors(capsys, flag, words):
    with pytest.raises(SystemExit) as stop:
        main([REF, "-i", HYP, *flag])
    assert stop.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert captured.err.startswith(f"fastbleu: error: {words}")
    assert captured.err.endswith(" (see fastbleu --help)\n")


@pytest.mark.parametrize("flags, words", [
    (["-f", "xml"], "argument -f/--format: invalid choice: 'xml'"),
    (["-w"], "argument -w/--width: expected one argument"),
    (["-w", "two"], "argument -w/--width: invalid int value: 'two'"),
    (["-pbs", "-par"], "argument -par/--paired-ar: not allowed with argument -pbs/--paired-bs"),
], ids=str)
def test_usage_errors_are_one_line(capsys, flags, words):
    """Every argparse refusal is one line that points to --help (issue 28: a misspelled
    flag printed the 25-line usage block first), exit status 2, nothing on stdout."""
    with pytest.raises(SystemExit) as stop:
        main([REF, "-i", HYP, *flags])
    captured = capsys.readouterr()
    assert stop.value.code == 2 and captured.out == ""
    assert len(captured.err.splitlines()) == 1
    assert captured.err.startswith(f"fastbleu: error: {words}")
    assert captured.err.endswith(" (see fastbleu --help)\n")


def test_attached_values_of_one_letter_flags_still_work(capsys):
    assert main([REF, "-i", HYP, "-w3", "-b"]) == 0
    attached = capsys.readouterr().out
    assert main([REF, "-i", HYP, "-w", "3", "-b"]) == 0
    assert capsys.readouterr().out == attached and len(attached.split(".")[1].strip()) == 3


def test_lowercase_is_still_lc(capsys):
    assert main([REF, "-i", HYP, "-lc"]) == 0
    assert json.loads(capsys.readouterr().out)["case"] == "lc"


# -- -l/--language-pair ------------------------------------------------------------------------

_ZH_REFS = ["我们今天去公园散步。", "这是一个非常好的例子。", "他在北京大学学习中文和历史。",
            "天气很好，我们一起去吃饭吧！", "请把这本书放在桌子上。"] * 4
_ZH_HYPS = ["我们今天去公园走路。", "这是一个很好的例子。", "他在北京学习中文和历史。",
            "天气很好，我们去吃饭吧！", "请把书放在桌子上面。"] * 4


@pytest.fixture
def chinese(tmp_path):
    ref, hyp = tmp_path / "ref.zh", tmp_path / "hyp.zh"
    ref.write_text("\n".join(_ZH_REFS) + "\n", encoding="utf-8")
    hyp.write_text("\n".join(_ZH_HYPS) + "\n", encoding="utf-8")
    return ref, hyp


def _without_version(text: str) -> dict:
    record = json.loads(text)
    record["signature"] = record["signature"].rsplit("|", 1)[0]
    del record["version"]
    return record


@pytest.mark.parametrize("flags", [["-l", "en-zh"], slow(["--language-pair", "en-zh"]),
                                   ["-l", "en-zh", "-tok", "13a"], ["-l", "zh-en"]], ids=str)
def test_language_pair_equals_sacrebleu(chinese, flags):
    ref, hyp = chinese
    ours = _run(FASTBLEU + [ref, "-i", hyp, *flags])
    theirs = _run(SACREBLEU + [ref, "-i", hyp, *flags])
    assert ours.returncode == 0, ours.stderr
    assert _without_version(ours.stdout) == _without_version(theirs.stdout)
    expected = "13a" if flags[-1] in ("13a", "zh-en") else "zh"
    assert json.loads(ours.stdout)["tok"] == expected
    if "-tok" in flags:  # sacrebleu's advice, as it words it
        assert "Consider using the 'zh' or 'spm' tokenizer for Chinese." in ours.stderr


def test_language_pair_is_not_lowercase(chinese, capsys):
    ref, hyp = chinese
    assert main([str(ref), "-i", str(hyp), "-l", "en-zh"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record["case"] == "mixed" and record["tok"] == "zh"


def test_language_pair_in_table_mode(chinese, tmp_path, capsys):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "zh.parquet"
    pq.write_table(pa.table({"hyp": _ZH_HYPS, "ref": _ZH_REFS}), path)
    ref, hyp = chinese
    assert main([str(path), "-l", "en-zh", "-w", "6"]) == 0
    table = json.loads(capsys.readouterr().out)
    assert main([str(ref), "-i", str(hyp), "-l", "en-zh", "-w", "6"]) == 0
    text = json.loads(capsys.readouterr().out)
    assert table["score"] == text["score"] and table["tok"] == "zh"


@pytest.mark.parametrize("pair", ["enzh", "en-", "en_zh", "en-zh-tw", "", " -zh"])
def test_language_pair_needs_two_codes(capsys, pair):
    status = main([REF, "-i", HYP, "-l", pair])
    assert "-l/--language-pair takes SRC-TRG" in _one_line(status, capsys.readouterr().err)


def test_language_pair_and_an_spm_model(tmp_path, capsys):
    """-l en-zh makes the default tokenizer zh: an --spm-model would be ignored."""
    status = main([REF, "-i", HYP, "-l", "en-zh", "--spm-model", str(tmp_path / "m.model")])
    assert "-tok zh would ignore it" in _one_line(status, capsys.readouterr().err)


# -- start-up ----------------------------------------------------------------------------------

def test_help_imports_no_numpy_numba_or_pyarrow():
    done = _run([sys.executable, "-X", "importtime", "-m", "fastbleu", "--help"])
    assert done.returncode == 0 and "usage: fastbleu" in done.stdout
    imported = {line.rsplit("|", 1)[-1].strip() for line in done.stderr.splitlines()
                if line.startswith("import time:")}
    assert "fastbleu.cli" in imported
    assert not imported & {"numpy", "numba", "pyarrow", "fastbleu.inputs.files",
                            "fastbleu.metrics.bleu.metric"}


def test_a_malformed_scheduler_address_is_one_line(small_table, capsys):
    pytest.importorskip("distributed")
    status = main([str(small_table), "--scheduler", "no-port-here", "--quiet"])
    assert "missing port number" in _one_line(status, capsys.readouterr().err)


def test_memory_exhaustion_is_one_line_not_a_bug(monkeypatch, capsys):
    """Running out of memory (or into ulimit -v) is a limit of the machine: one line,
    exit 2, no traceback, no request to report a bug."""
    import fastbleu.metrics.bleu.metric

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(fastbleu.metrics.bleu.metric.BLEU, "corpus_score", exhausted)
    status = main([str(DATA / "sample.ref-A.en"), "-i", str(DATA / "sample.sys-A.en")])
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    lines = captured.err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastbleu: error: not enough memory")
