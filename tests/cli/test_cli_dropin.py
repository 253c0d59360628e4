"""sacrebleu's command lines run unchanged: -q, $SACREBLEU_FORMAT and test sets (-t).

Each test builds a $SACREBLEU folder in sacrebleu's layout (processed field files, a
raw release, and the downloaded archive's name so that sacrebleu finds it there and
never downloads), then compares the ``sacrebleu`` command's output with ours.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from testkit.testsets import XML_HYP, sacrebleu_folder, write_lines

pytest.importorskip("sacrebleu")
pytest.importorskip("lxml")

ROOT = Path(__file__).resolve().parents[2]
SACREBLEU = shutil.which("sacrebleu")
needs_sacrebleu = pytest.mark.skipif(SACREBLEU is None, reason="no sacrebleu command")

# wmt19 de-en (an SGML release): two documents, originally German and English.
SRC = ["Die Katze sitzt.", "Hallo Welt.", "Guten Morgen, Herr Schmidt.", "Das ist gut."]
REF = ["The cat sits.", "Hello world.", "Good morning, Mr Smith.", "That is good."]
HYP = ["The cat sat.", "Hello world!", "Good morning, Mr Smith.", "This is good."]
DOCS = [("d1", "de", SRC[:2]), ("d2", "en", SRC[2:])]

@pytest.fixture()
def sacrebleu_dir(tmp_path, monkeypatch):
    """A $SACREBLEU holding wmt19 de-en and wmt22 en-de as sacrebleu leaves them."""
    root = sacrebleu_folder(tmp_path / "sacrebleu", DOCS, REF)
    write_lines(tmp_path / "hyp.txt", HYP)
    write_lines(tmp_path / "hyp22.txt", XML_HYP)
    write_lines(tmp_path / "ref.txt", REF)
    monkeypatch.setenv("SACREBLEU", str(root))
    monkeypatch.chdir(tmp_path)
    return root


def _env(**more) -> dict:
    env = {key: value for key, value in os.environ.items() if key != "SACREBLEU_FORMAT"}
    # sacrebleu orders a WMT 2021+ release's translators as a set of str: by their hashes.
    env.update(PYTHONPATH=str(ROOT), NO_COLOR="1", PYTHONHASHSEED="0", **more)
    return env


def run(command: list[str], stdin: str | None = None, **env) -> subprocess.CompletedProcess:
    return subprocess.run(command, input=stdin, capture_output=True, text=True,
                          env=_env(**env), timeout=120)


def ours(*args, stdin=None, **env):
    """Our command, in this process (a new one costs a second of imports)."""
    from fastbleu.cli import main

    out, err = io.StringIO(), io.StringIO()
    saved = sys.stdin
    sys.stdin = io.TextIOWrapper(io.BytesIO((stdin or "").encode()))
    try:
        with mock_env(env), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(list(args))
    finally:
        sys.stdin = saved
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


@contextlib.contextmanager
def mock_env(values: dict):
    """``os.environ`` with ``values`` set, restored afterwards."""
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def ours_process(*args):
    return run([sys.executable, "-m", "fastbleu", *args])


def theirs(*args, stdin=None, **env):
    return run([SACREBLEU, *args], stdin, **env)


def _same(args: list[str], stdin: str | None = None, **env) -> str:
    """Run both commands; their standard outputs must be equal but for the version."""
    mine, reference = ours(*args, stdin=stdin, **env), theirs(*args, stdin=stdin, **env)
    assert reference.returncode == 0, reference.stderr
    assert mine.returncode == 0, mine.stderr
    from fastbleu._version import __version__

    got = mine.stdout.replace(f"fastbleu-{__version__}", "X")
    import sacrebleu

    assert got == reference.stdout.replace(sacrebleu.__version__, "X")
    return got


# --- -q and $SACREBLEU_FORMAT ------------------------------------------------------------

@needs_sacrebleu
@pytest.mark.parametrize("value, shown", [("text", "text"), ("LaTeX", "latex"),
                                          ("xml", None), ("", None)])
def test_sacrebleu_format_overrides_f_as_sacrebleu(sacrebleu_dir, value, shown):
    out = _same(["ref.txt", "-i", "hyp.txt", "-f", "json"], SACREBLEU_FORMAT=value)
    assert out.startswith("{") == (shown is None)


@needs_sacrebleu
def test_sacrebleu_format_with_several_systems(sacrebleu_dir):
    out = _same(["ref.txt", "-i", "hyp.txt", "ref.txt", "-f", "text"], SACREBLEU_FORMAT="latex")
    assert "\\begin{tabular}" in out


@needs_sacrebleu
def test_q_is_quiet(sacrebleu_dir):
    write_lines(Path("empty.txt"), [])
    # Each its own process: the logging level is set once per process.
    loud = ours_process("empty.txt", "-i", "empty.txt")
    quiet = ours_process("-q", "empty.txt", "-i", "empty.txt")
    assert "warning: the input has no lines" in loud.stderr and quiet.stderr == ""
    assert quiet.stdout == loud.stdout and quiet.returncode == 0
    refused = ours_process("-q", "--progress", "ref.txt", "-i", "hyp.txt")
    assert refused.returncode == 2 and "-q/--quiet" in refused.stderr


# --- test sets ---------------------------------------------------------------------------

SCORING = [
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt"],
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "-f", "text", "-m", "bleu", "chrf"],
    ["-t", "wmt19,wmt19", "-l", "de-en", "-i", "hyp2.txt", "-f", "text"],
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "--origlang", "de", "-f", "text"],
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "--origlang", "non-de", "-b"],
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "-d"],
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "-d", "-m", "chrf", "bleu"],
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "hyp3.txt", "ref.txt", "-f", "text"],
    ["-t", "wmt22", "-l", "en-de", "-i", "hyp22.txt", "-f", "text"],
    ["-t", "wmt22", "-l", "en-de", "-i", "hyp22.txt", "-d", "-m", "ter"],
    ["-t", "wmt22", "-l", "en-de", "-i", "hyp22.txt", "--origlang", "en", "-sl"],
]


@needs_sacrebleu
@pytest.mark.parametrize("args", SCORING, ids=" ".join)
def test_scores_against_a_test_set_as_sacrebleu(sacrebleu_dir, args):
    write_lines(Path("hyp2.txt"), HYP + HYP)
    write_lines(Path("hyp3.txt"), HYP[::-1])
    out = _same(args)
    assert out.strip()


@needs_sacrebleu
def test_systems_on_standard_input(sacrebleu_dir):
    lines = "".join(f"{h}\t{r}\n" for h, r in zip(HYP, REF))
    _same(["-t", "wmt19", "-l", "de-en", "-f", "text"], stdin=lines)


ECHO = [
    ["src"], ["ref", "src", "origlang"], ["all"], ["all", "--origlang", "non-de"],
    ["docid", "--subset", "country:US"], ["src", "--origlang", "fr"],
]


@needs_sacrebleu
@pytest.mark.parametrize("fields", ECHO, ids=" ".join)
def test_echo_as_sacrebleu(sacrebleu_dir, fields):
    _same(["-t", "wmt19", "-l", "de-en", "--echo", *fields])


@needs_sacrebleu
@pytest.mark.parametrize("args", [["--echo", "ref"], ["--echo", "ref:B", "--origlang", "de"]],
                         ids=" ".join)
def test_echo_of_an_xml_release(sacrebleu_dir, args):
    out = _same(["-t", "wmt22", "-l", "en-de", *args])
    assert out


@needs_sacrebleu
@pytest.mark.parametrize("args", [["--echo", "all"], ["--list"]], ids=" ".join)
def test_translators_of_an_xml_release_in_a_fixed_order(sacrebleu_dir, args):
    # sacrebleu orders them by their str hashes (another order in each process); ours are
    # sorted, the rest as sacrebleu's.
    args = ["-t", "wmt22", "-l", "en-de", *args]
    mine, reference = ours(*args), theirs(*args)
    assert mine.returncode == reference.returncode == 0, (mine.stderr, reference.stderr)
    if args[-1] == "--list":
        assert mine.stdout == "en-de: src, ref:A, ref:B, docid, origlang\n"
    else:
        assert mine.stdout.splitlines()[1].split("\t")[1:3] == ["Ich mag es.", "Es gefällt mir."]
    split = lambda text: [sorted(re.split(r"\t|, ", line)) for line in text.splitlines()]
    assert split(mine.stdout) == split(reference.stdout)


@needs_sacrebleu
def test_echo_of_concatenated_test_sets(sacrebleu_dir):
    assert _same(["-t", "wmt19,wmt19", "-l", "de-en", "--echo", "ref"]).count("\n") == 8


@needs_sacrebleu
@pytest.mark.parametrize("args", [[], ["-l", "de-en"], ["-l", "en-xx"], ["-t", "wmt19"],
                                  ["-t", "wmt19", "-l", "de-en"]], ids=" ".join)
def test_list_as_sacrebleu(sacrebleu_dir, args):
    _same(["--list", *args])


def test_citation(sacrebleu_dir):
    from sacrebleu.dataset import DATASETS

    # sacrebleu 2.6's own --citation fails (a TypeError), so we compare with its index.
    shown = ours("-t", "wmt19,wmt18", "--citation")
    assert shown.returncode == 0
    assert shown.stdout == f"{DATASETS['wmt19'].citation}\n{DATASETS['wmt18'].citation}\n"
    missing = ours("-t", "wmt21/dev", "--citation")
    assert missing.returncode == 2 and "no citation found for wmt21/dev" in missing.stderr


HOSTILE = [
    (["-t", "wmt99", "-l", "de-en", "-i", "hyp.txt"], "unknown test set 'wmt99'"),
    (["-t", "wmt19", "-i", "hyp.txt"], "-t needs a language pair (-l)"),
    (["-t", "wmt19", "-l", "xx-yy", "-i", "hyp.txt"], "has no language pair 'xx-yy'"),
    (["-t", "wmt18", "-l", "de-en", "-i", "hyp.txt"],
     "fetch it with: sacrebleu --download wmt18 -l de-en"),
    (["-t", "wmt21", "-l", "de-en", "--echo", "src"],
     "fetch it with: sacrebleu --download wmt21 -l de-en"),
    (["--list", "-t", "wmt21", "-l", "de-en"], "sacrebleu --download wmt21 -l de-en"),
    (["-t", "wmt19", "-l", "de-en", "ref.txt", "-i", "hyp.txt"],
     "give a test set (-t) or reference files, not both"),
    (["ref.txt", "--origlang", "de", "-i", "hyp.txt"], "--origlang needs a test set (-t)"),
    (["--echo", "src"], "--echo needs a test set (-t)"),
    (["-i", "hyp.txt"], "no references"),
    (["--citation"], "--citation needs a test set (-t)"),
    (["-t", "wmt19", "-l", "de-en", "--echo", "hyp"], "has no field 'hyp'"),
    (["-t", "wmt19", "-l", "de-en", "--echo", "all", "src"], "--echo all takes no other"),
    (["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "--origlang", "fr"],
     "has no segment with origlang=fr"),
    (["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "--subset", "(("],
     "is not a regular expression"),
    (["-t", "wmt19", "-l", "de-en", "-nr", "2", "-i", "hyp.txt"], "-nr/--num-refs"),
    (["-t", "wmt19", "-l", "de-en", "-i", "short.txt"], "has 4 lines but short.txt has 2"),
    (["--list", "-t", "wmt21"], "fetch it with: sacrebleu --download wmt21\n"),
    (["-t", "wmt19", "-l", "de-en", "--group-by", "x"], "--group-by read a table"),
    (["--list", "-l", "de"], "-l/--language-pair takes SRC-TRG"),
    (["-t", "wmt22", "-l", "en-de", "-i", "hyp22.txt", "--subset", "news"],
     "no segment with subset=news"),
]


@pytest.mark.parametrize("args, message", HOSTILE, ids=[" ".join(a) for a, _ in HOSTILE])
def test_hostile_test_set_lines_are_one_line_errors(sacrebleu_dir, args, message):
    write_lines(Path("short.txt"), HYP[:2])
    result = ours(*args)
    assert result.returncode == 2, result.stderr
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("fastbleu: error: ")
    assert message in result.stderr


def test_nothing_is_downloaded_or_written(sacrebleu_dir):
    before = sorted(str(p) for p in sacrebleu_dir.rglob("*"))
    for args in (["-t", "wmt18", "-l", "de-en", "-i", "hyp.txt"],
                 ["-t", "wmt19", "-l", "de-en", "-i", "hyp.txt", "-d"],
                 ["--list", "-t", "wmt21"]):
        ours(*args)
    assert sorted(str(p) for p in sacrebleu_dir.rglob("*")) == before


def test_the_library_reads_the_layout(sacrebleu_dir):
    from fastbleu.cli import testsets

    assert testsets.sacrebleu_dir() == str(sacrebleu_dir)
    assert testsets.fieldnames("wmt22", "en-de") == ["src", "ref:A", "ref:B", "docid",
                                                     "origlang"]
    refs = testsets.reference_files("wmt22", "en-de")
    assert [Path(p).name for p in refs] == ["wmt22.en-de.ref-A"]
    assert testsets.keep_mask(["wmt19"], "de-en", "non-en", None) == [True, True, False,
                                                                      False]
    assert testsets.available_origlangs(["wmt19"], "de-en") == ["de", "en"]
    with pytest.raises(Exception, match="sacrebleu --download wmt20 -l de-en"):
        testsets.field_files("wmt20", "de-en")
