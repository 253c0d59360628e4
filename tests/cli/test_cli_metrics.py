"""Several metrics on the text-file path (issue 13): ``fastbleu -m bleu chrf`` prints what
``sacrebleu -m bleu chrf`` prints, byte for byte but for the version, in every format, for
one system and several, with confidence intervals and paired tests; hostile flags are one
line of error.

fastbleu runs in this process (``main``), sacrebleu as its command (the oracle), on 200
lines of the bundled sample: a run of each takes well under a second.
"""

from __future__ import annotations

import io
import json
import re
import subprocess
import sys

import pytest
from testkit.data import cli_ours, cli_same

from testkit.data import DATA, FASTBLEU, REF, SACREBLEU, read_lines
from testkit.marks import slow, slow_unless
from fastbleu.cli import main

N_LINES = 200


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """200-line slices: reference A, reference B, systems A and B, and both references
    tab-separated in one file (``-nr 2``)."""
    folder = tmp_path_factory.mktemp("metrics")
    paths = {}
    for name in ("ref-A", "ref-B", "sys-A", "sys-B"):
        lines = read_lines(DATA / f"sample.{name}.en")[:N_LINES]
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    pairs = zip(read_lines(paths["ref-A"]), read_lines(paths["ref-B"]))
    paths["refs"] = folder / "refs.tsv"
    paths["refs"].write_text("".join(f"{a}\t{b}\n" for a, b in pairs), encoding="utf-8")
    return {name: str(path) for name, path in paths.items()}










METRICS = [["chrf"], ["bleu", "chrf"], ["chrf", "bleu"], ["chrf", "bleu", "-cw", "2"]]
FORMATS = ["json", "text", "latex"]


#: The quick run's slices (issue 28): each (extra, format) once, the metric lists in turn;
#: the other cases run with -m slow.
QUICK_ONE = {("plain", "chrf", "json"), ("plain", "bleu chrf", "text"),
             ("plain", "chrf bleu -cw 2", "latex"), ("ci", "chrf bleu", "json"),
             ("ci", "chrf bleu -cw 2", "text"), ("ci", "bleu chrf", "latex")}
QUICK_SEVERAL = {("plain", "bleu chrf", "json"), ("plain", "chrf bleu", "text"),
                 ("ar", "bleu chrf", "latex"), ("ar", "chrf bleu", "json"),
                 ("bs", "bleu chrf", "text"), ("bs", "chrf bleu", "latex")}


def _cases(quick, extras, metric_lists):
    return [slow_unless((name, " ".join(metrics), fmt) in quick, fmt, metrics, extra,
                        id=f"{name}-{' '.join(metrics)}-{fmt}")
            for name, extra in extras for metrics in metric_lists for fmt in FORMATS]


@pytest.mark.parametrize("fmt, metrics, extra",
                         _cases(QUICK_ONE, [("plain", []), ("ci", ["-ci", "-cin", "50"])],
                                METRICS))
def test_one_system(files, fmt, metrics, extra, capsys, monkeypatch):
    cli_same([files["ref-A"], "-i", files["sys-A"], "-m", *metrics, "-f", fmt, *extra], capsys,
          monkeypatch)


@pytest.mark.parametrize("fmt, metrics, extra",
                         _cases(QUICK_SEVERAL, [("plain", []), ("ar", ["-par", "-parn", "60"]),
                                                ("bs", ["-pbs", "-pbsn", "40"])], METRICS[1:3]))
def test_several_systems(files, fmt, metrics, extra, capsys, monkeypatch):
    args = [files["ref-A"], "-i", files["sys-A"], files["sys-B"], "-m", *metrics, "-f", fmt,
            *extra]
    if fmt == "json" and "-pbs" in extra:
        pytest.skip("sacrebleu cannot print this JSON (float32 chrF); test_paired_bs_json")
    cli_same(args, capsys, monkeypatch)


def test_paired_bs_json(files, capsys, monkeypatch):
    """sacrebleu's paired bootstrap with chrF fails to print JSON (its float32 means are not
    JSON numbers): fastbleu prints the values sacrebleu computes, to 1e-9."""
    from sacrebleu.metrics import BLEU, CHRF
    from sacrebleu.significance import PairedTest

    args = [files["ref-A"], "-i", files["sys-A"], files["sys-B"], "-m", "chrf", "bleu",
            "-pbs", "-pbsn", "40"]
    ours = json.loads(cli_ours(args, capsys, monkeypatch))
    refs = [read_lines(files["ref-A"])]
    systems = [("a", read_lines(files["sys-A"])), ("b", read_lines(files["sys-B"]))]
    metrics = {"CHRF": CHRF(references=refs), "BLEU": BLEU(references=refs)}
    _, scores = PairedTest(systems, metrics, None, test_type="bs", n_samples=40)()
    assert [list(record) for record in ours] == [["system", "chrF2", "BLEU"]] * 2
    for k, record in enumerate(ours):
        for name in ("chrF2", "BLEU"):
            theirs = scores[name][k].__dict__
            assert list(record[name]) == list(theirs)
            for field, value in theirs.items():
                assert (record[name][field] is None) == (value is None)
                if value is not None:
                    assert record[name][field] == pytest.approx(float(value), abs=1e-9)


@pytest.mark.parametrize("extra", [[], ["-pbs", "-pbsn", "30"], ["-f", "text"],
                                   ["-f", "text", "-par", "-parn", "30"]], ids=str)
def test_standard_input_and_two_references(files, extra, capsys, monkeypatch):
    """Systems as tab-separated columns of standard input, references as ``-nr 2``."""
    columns = zip(read_lines(files["sys-A"]), read_lines(files["sys-B"]))
    stdin = "".join(f"{a}\t{b}\n" for a, b in columns)
    args = [files["refs"], "-nr", "2", "-m", "bleu", "chrf", "-cw", "2", "--chrf-lowercase",
            *extra]
    if "-pbs" in extra:  # JSON: sacrebleu's float32 means; compare the structure and scores
        ours = json.loads(cli_ours(args, capsys, monkeypatch, stdin))
        assert [record["system"] for record in ours] == ["Baseline", "System 1"]
        assert list(ours[0]) == ["system", "BLEU", "chrF2++"]
        return
    cli_same(args, capsys, monkeypatch, stdin)


@pytest.mark.parametrize("flags", [["-m", "chrf"], ["-m", "chrf", "-cw", "2", "-b"],
                                   ["-m", "chrf", "--chrf-whitespace", "--chrf-eps-smoothing",
                                    "-cc", "4", "--chrf-beta", "3", "-w", "4"]], ids=str)
def test_sentence_level_chrf(files, flags, capsys, monkeypatch):
    cli_same([files["ref-A"], files["ref-B"], "-i", files["sys-B"], "-sl", *flags], capsys,
          monkeypatch)


# Quick: -sh and -b with a format; -b alone and the lowercase flags (which
# test_standard_input_and_two_references also passes) run with -m slow.
@pytest.mark.parametrize("flags", [
    slow(["-b"]), ["-sh", "-f", "text"], ["-b", "-f", "json"],
    slow(["-lc", "--chrf-lowercase", "-f", "text", "-w", "3"])], ids=str)
def test_output_flags(files, flags, capsys, monkeypatch):
    cli_same([files["ref-A"], "-i", files["sys-A"], "-m", "bleu", "chrf", *flags], capsys,
          monkeypatch)
    cli_same([files["ref-A"], "-i", files["sys-A"], files["sys-B"], "-m", "chrf", "bleu", *flags],
          capsys, monkeypatch)


# -- hostile flags: one line, exit 2 -------------------------------------------------------

@pytest.mark.parametrize("flags, words", [
    (["-m", "chrf", "-cc", "-1"], "-cc/--chrf-char-order must be between 0 and 100"),
    (["-m", "chrf", "-cw", "-2"], "-cw/--chrf-word-order must be between 0 and 100"),
    (["-m", "bleu", "chrf", "-cc", "0", "-cw", "0"], "both 0"),
    (["-m", "chrf", "--chrf-beta", str(10 ** 400)], "beta is too large"),
    (["-m", "chrf", "-cc", "1000000"], "-cc/--chrf-char-order must be between 0 and 100"),
    (["-m", "bleu", "chrf", "-sl"], "only one metric can be scored at sentence level"),
    (["-m", "bleu", "bleu", "-sl"], "only one metric can be scored at sentence level"),
    (["-m", "ter3"], "unknown metric 'ter3'; choose from bleu, chrf, ter, nist"),
    (["-m", "bleu", "CHRF"], "unknown metric 'CHRF'"),
], ids=str)
def test_hostile_flags_are_one_line(flags, words):
    done = subprocess.run(FASTBLEU + [REF, "-i", REF, *flags], capture_output=True, text=True)
    assert done.returncode == 2, done.stderr
    lines = done.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastbleu: error: "), done.stderr
    assert words in lines[0]


def test_chrf_flags_without_chrf_are_ignored_as_by_sacrebleu(files, capsys, monkeypatch):
    cli_same([files["ref-A"], "-i", files["sys-A"], "--chrf-beta", "0", "-cc", "0", "-cw", "0"],
          capsys, monkeypatch)
