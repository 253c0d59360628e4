"""TER on the command line: ``fastbleu -m ter`` prints what ``sacrebleu -m ter`` prints, byte
for byte but for the version, for one system and several, at sentence level, with
confidence intervals and paired tests, with every ``--ter-*`` flag; hostile flags are
refused as sacrebleu refuses them (or, where fastbleu is stricter, with one line).

sacrebleu's TER is slow (a few hundred segments a second), so the inputs are 24 lines of
the bundled sample plus seven hand-written lines that exercise the flags: CJK text, XML
entities and possessives, a line of punctuation only, empty hypotheses and references,
upper case and hyphenated numbers.  fastbleu runs in this process, sacrebleu as its
command (the helpers of ``test_cli_metrics``).
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from testkit.data import DATA, read_lines
from fastbleu.cli import main
from fastbleu.cli.parser import build_parser
from testkit.data import cli_ours, cli_same, cli_theirs
from testkit.marks import slow

N_LINES = 24

#: Extra lines: (ref-A, ref-B, sys-A, sys-B).
TRICKY = [
    ("这是一个测试。他说：“你好！”", "这是测试，他说你好。",
     "这是一个测试。 他说：“你好”", "这 是 测试 ！"),
    ("Tom's \"report\" & the A<B rule cost 1,000.50 dollars.",
     "The report of Tom & the rule cost $1,000.50.",
     "Tom's &quot;report&quot; &amp; the A&lt;B rule cost 1,000.50 dollars .",
     "TOM'S REPORT COST 1000 DOLLARS"),
    ("Yes, it works.", "It works!", "... !!! ,", "yes , it works ."),
    ("Nothing was said about the plan.", "The plan was not discussed.", "",
     "nothing was said"),
    ("The EU and NATO met in Brussels.", "NATO and the EU met in Brussels.",
     "the eu and nato met in brussels.", "The EU and NATO met in Brussels ."),
    ("Scores rose 3-4 points in 2021-22.", "Scores went up by 3 to 4 points in 2021/22.",
     "Scores rose 3 - 4 points in 2021 - 22 .", "scores rose 3-4 points"),
    ("", "", "unexpected words here", ""),  # empty references: TER 100 and 0
]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """References A and B, systems A, B and C (B lowercased), 31 lines each."""
    folder = tmp_path_factory.mktemp("ter")
    columns = {}
    for k, name in enumerate(("ref-A", "ref-B", "sys-A", "sys-B")):
        lines = read_lines(DATA / f"sample.{name}.en")[:N_LINES]
        columns[name] = lines + [row[k] for row in TRICKY]
    columns["sys-C"] = [line.lower() for line in columns["sys-B"]]
    paths = {}
    for name, lines in columns.items():
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return {name: str(path) for name, path in paths.items()}


def _one(files, *flags, refs=("ref-A",)):
    return [*(files[r] for r in refs), "-i", files["sys-A"], *flags]


def _several(files, *flags, systems=("sys-A", "sys-B", "sys-C")):
    return [files["ref-A"], "-i", *(files[s] for s in systems), *flags]


# -- one system ------------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [
    ["-m", "ter"],
    ["-m", "ter", "-b"],
    ["-m", "bleu", "chrf", "ter", "-f", "text"],
    ["-m", "ter", "chrf", "bleu"],
    ["-m", "chrf", "ter", "-b", "-f", "text"],
], ids=" ".join)
def test_one_system(files, flags, capsys, monkeypatch):
    cli_same(_one(files, *flags), capsys, monkeypatch)


@pytest.mark.parametrize("flags", [
    slow(["-m", "ter", "-ci", "-cin", "100"]),
    ["-m", "ter", "bleu", "-ci", "-cin", "100", "-f", "text", "-w", "4"],
], ids=" ".join)
def test_one_system_with_confidence_two_references(files, flags, capsys, monkeypatch):
    """sacrebleu's float32 bootstrap of TER (float32 scores, ``statistics.mean``)."""
    cli_same(_one(files, *flags, refs=("ref-A", "ref-B")), capsys, monkeypatch)


@pytest.mark.parametrize("flags", [  # quick: none, one, all; the rest with -m slow
    [],
    slow(["--ter-case-sensitive", "-b"]),
    slow(["--ter-no-punct", "-w", "4"]),
    ["--ter-normalized", "-f", "text"],
    slow(["--ter-asian-support", "--ter-normalized", "-sh"]),
    slow(["--ter-asian-support", "--ter-no-punct", "--ter-case-sensitive"]),
    ["--ter-case-sensitive", "--ter-asian-support", "--ter-no-punct", "--ter-normalized",
     "-w", "3"],
], ids=" ".join)
def test_flags_sentence_by_sentence(files, flags, capsys, monkeypatch):
    """Each flag, alone and together, on every line's score (``-sl``): the tokenization of
    each hand-written line shows.  (Two references with all flags: sacrebleu's TER against
    the paraphrases of reference B is slow.)"""
    refs = ("ref-A", "ref-B") if len(flags) > 4 else ("ref-A",)
    cli_same(_one(files, "-m", "ter", "-sl", *flags, refs=refs), capsys, monkeypatch)


def test_ter_flags_without_ter_are_ignored_as_by_sacrebleu(files, capsys, monkeypatch):
    cli_same(_one(files, "-m", "bleu", "chrf", "--ter-normalized", "--ter-case-sensitive",
               "--ter-no-punct", "--ter-asian-support", "-f", "text"), capsys, monkeypatch)


# -- several systems -------------------------------------------------------------------------

@pytest.mark.parametrize("flags", [
    ["-m", "ter", "-f", "text"],
    ["-m", "bleu", "chrf", "ter", "-f", "latex"],
    slow(["-m", "ter", "chrf", "-f", "text", "-sh", "-w", "3", "--ter-normalized"]),
    slow(["-m", "ter", "bleu"]),
], ids=" ".join)
def test_several_systems(files, flags, capsys, monkeypatch):
    cli_same(_several(files, *flags), capsys, monkeypatch)


@pytest.mark.parametrize("flags", [
    ["-m", "ter", "-pbs", "-pbsn", "60", "-f", "text"],
    slow(["-m", "ter", "bleu", "-pbs", "-pbsn", "60", "-f", "latex", "-w", "3"]),
    slow(["-m", "ter", "-par", "-parn", "200", "-f", "text", "--ter-normalized"]),
    ["-m", "ter", "bleu", "chrf", "-par", "-parn", "200"],
], ids=" ".join)
def test_paired_tests(files, flags, capsys, monkeypatch):
    """Lower is better for TER, yet sacrebleu's tests are two-sided and its report marks a
    p-value, not a winner: the same table, the same stars, in ``-m``'s order."""
    cli_same(_several(files, *flags, systems=("sys-B", "sys-A", "sys-C")), capsys, monkeypatch)


@pytest.mark.parametrize("compat", [True, False], ids=["compat", "exact"])
def test_paired_bs_json(files, compat, capsys, monkeypatch):
    """sacrebleu cannot print this JSON (its TER means are float32): fastbleu prints the
    numbers sacrebleu computes, to 1e-9 with --sacrebleu-compat; with exact sums the
    scores are the same and the bootstrap summaries differ by float32's rounding only."""
    from sacrebleu.metrics import BLEU, TER
    from sacrebleu.significance import PairedTest

    args = _several(files, "-m", "ter", "bleu", "-pbs", "-pbsn", "50")
    if compat:
        ours = json.loads(cli_ours(args, capsys, monkeypatch))
    else:
        assert main(args) == 0
        ours = json.loads(capsys.readouterr().out)
    refs = [read_lines(files["ref-A"])]
    systems = [(s, read_lines(files[s])) for s in ("sys-A", "sys-B", "sys-C")]
    metrics = {"TER": TER(references=refs), "BLEU": BLEU(references=refs)}
    _, scores = PairedTest(systems, metrics, None, test_type="bs", n_samples=50)()
    assert [list(record) for record in ours] == [["system", "TER", "BLEU"]] * 3
    for k, record in enumerate(ours):
        for name in ("TER", "BLEU"):
            theirs = scores[name][k].__dict__
            assert list(record[name]) == list(theirs)
            for field, value in theirs.items():
                assert (record[name][field] is None) == (value is None)
                if value is None:
                    continue
                if compat or field == "score":
                    assert record[name][field] == pytest.approx(float(value), abs=1e-9)
                elif field == "p_value":  # a resample may fall either side of the observed
                    assert record[name][field] == pytest.approx(float(value), abs=3 / 51)
                else:
                    assert record[name][field] == pytest.approx(float(value), rel=1e-5)


def test_standard_input_and_tab_separated_references(files, capsys, monkeypatch):
    """Systems as tab-separated columns of standard input, references as ``-nr 2``: the
    last 14 lines but one (two empty references make a line sacrebleu refuses)."""
    folder = files["ref-A"].rsplit("/", 1)[0]
    refs = f"{folder}/refs.tsv"
    lines = slice(-15, -1)
    pairs = list(zip(read_lines(files["ref-A"]), read_lines(files["ref-B"])))[lines]
    with open(refs, "w", encoding="utf-8") as handle:
        handle.writelines(f"{a}\t{b}\n" for a, b in pairs)
    stdin = "".join(f"{a}\t{b}\n" for a, b in list(zip(read_lines(files["sys-A"]),
                                                       read_lines(files["sys-C"])))[lines])
    cli_same([refs, "-nr", "2", "-m", "ter", "chrf", "-par", "-parn", "100", "-f", "text",
           "--ter-normalized"], capsys, monkeypatch, stdin)


# -- hostile flags ---------------------------------------------------------------------------

@pytest.mark.parametrize("flags, words", [
    (["--ter-normalized=yes"], "argument --ter-normalized: ignored explicit argument 'yes'"),
    (["--ter-normalized", "yes"], "unrecognized arguments: yes"),
    (["--ter"], "unrecognized arguments: --ter"),          # sacrebleu: ambiguous option
    (["--ter-norm"], "unrecognized arguments: --ter-norm"),  # sacrebleu: an abbreviation
    (["-m", "TER"], "unknown metric 'TER'; choose from bleu, chrf, ter, nist"),
    (["-m", "ter", "ter", "-sl"], "only one metric can be scored at sentence level"),
    (["-m", "bleu", "ter", "-sl"], "only one metric can be scored at sentence level"),
    (["-m", "ter", "-sl", "-ci"], "statistical tests are unavailable at sentence level"),
], ids=str)
def test_hostile_flags(files, flags, words, capsys):
    """Refused with exit status 2 and the reason on the one line of standard error; the
    abbreviations sacrebleu accepts fastbleu never does."""
    try:
        status = main(_one(files, "-m", "ter", *flags) if "-m" not in flags
                      else _one(files, *flags))
    except SystemExit as stop:  # argparse's refusals
        status = stop.code
    captured = capsys.readouterr()
    assert status == 2 and captured.out == ""
    assert len(captured.err.splitlines()) == 1 and words in captured.err


@pytest.mark.parametrize("flags, words", [
    (["-sl"], "only one system can be scored at sentence level"),
    (["-ci"], "--confidence is for a single system; for several use --paired-bs or "
              "--paired-ar"),
], ids=str)
def test_several_systems_refuse_what_sacrebleu_refuses(files, flags, words, capsys):
    """sacrebleu refuses -sl and -ci for several systems (its exit status 1); fastbleu says
    so in one line (status 2)."""
    assert main(_several(files, "-m", "ter", *flags)) == 2
    assert capsys.readouterr().err == f"fastbleu: error: {words}\n"


def test_empty_input_warns_with_the_metric_name(tmp_path, capsys, caplog):
    empty = tmp_path / "empty.txt"
    empty.write_text("", encoding="utf-8")
    caplog.set_level("WARNING", logger="fastbleu")
    assert main([str(empty), "-i", str(empty), "-m", "ter", "chrf", "-f", "text"]) == 0
    assert "its chrF and TER are 0.0" in caplog.text
    assert capsys.readouterr().out.splitlines()[-1].endswith(" = 0.0")


def test_help_lists_the_ter_flags_as_sacrebleu_names_them():
    done = cli_theirs(["--help"])
    ours = build_parser().format_help()
    for flag in ("--ter-case-sensitive", "--ter-asian-support", "--ter-no-punct",
                 "--ter-normalized"):
        assert flag in done and flag in ours
    assert "among bleu, chrf, ter, nist" in " ".join(ours.split())
    assert "lower is better" in ours and "BLEU, chrF and TER" in ours


@pytest.mark.parametrize("flags", [[], slow(["-sl"]), ["-ci", "-cin", "10"], slow(["-f", "text"])])
def test_a_line_too_long_for_ter_is_one_line_naming_file_and_line(tmp_path, flags):
    """TER's edit-distance matrix has a size limit: a line past it is the user's error,
    named by file and line (was a traceback)."""
    text = "a b\n" + " ".join(["w"] * 8192) + "\n"
    ref, hyp = tmp_path / "ref.txt", tmp_path / "hyp.txt"
    ref.write_text(text)
    hyp.write_text(text)
    done = subprocess.run([sys.executable, "-m", "fastbleu", str(ref), "-i", str(hyp), "-m",
                           "ter", *flags], capture_output=True, text=True)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"fastbleu: error: {hyp}, line 2: too long for TER: 8192 hypothesis words against "
        "8192 reference words need a 67,125,249-cell edit-distance matrix (at most "
        "67,108,864)"]
