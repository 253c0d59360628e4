"""Inputs sacrebleu scores that fastbleu refused: chrF's beta = 0 (and any beta sacrebleu
takes), and more than 16 TER references, which give one line where a limit remains.

Differential: every number is sacrebleu's, through the API and the command line.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from testkit.data import DATA, FASTBLEU, ROOT, read_lines
from testkit.marks import slow, slow_unless

sacrebleu = pytest.importorskip("sacrebleu")

from fastbleu import CHRF  # noqa: E402

HYPS = read_lines(DATA / "sample.sys-A.en")[:300] + ["", "x", "A B C"]
REFS = [read_lines(DATA / "sample.ref-A.en")[:300] + ["", "y", "a b c"],
        read_lines(DATA / "sample.ref-B.en")[:300] + ["z", "", "A B C"]]

BETAS = [0, -2, 1, 0.5, 3, 10 ** 20, -(10 ** 20), 2 ** 63, 2 ** 64 + 1, 10 ** 150]


CHRF_OPTION_SETS = [{}, {"word_order": 2}, {"eps_smoothing": True},
                    {"char_order": 3, "word_order": 1, "lowercase": True}]
# The quick run takes each beta once, with the option sets in turn; the other cases run
# with -m slow (issue 28).
@pytest.mark.parametrize("options, beta", [
    slow_unless(b % len(CHRF_OPTION_SETS) == k, options, beta, id=f"{options!r}-{beta!r}")
    for k, options in enumerate(CHRF_OPTION_SETS) for b, beta in enumerate(BETAS)])
def test_chrf_with_any_beta_sacrebleu_takes(beta, options):
    ours, theirs = CHRF(beta=beta, **options), sacrebleu.CHRF(beta=beta, **options)
    got, expected = ours.corpus_score(HYPS, REFS), theirs.corpus_score(HYPS, REFS)
    assert got.score == expected.score
    assert str(got).split(" = ")[0] == str(expected).split(" = ")[0]  # chrF0, chrF-2 ...
    for k in (0, 5, 300, 301, 302):
        refs = [stream[k] for stream in REFS]
        assert (ours.sentence_score(HYPS[k], refs).score
                == theirs.sentence_score(HYPS[k], refs).score)


@pytest.mark.parametrize("beta", [10 ** 200, -(10 ** 400), 1e200, float("inf"),
                                  float("nan")], ids=repr)
def test_a_beta_sacrebleu_cannot_score_is_one_clear_error(beta):
    with pytest.raises(Exception):
        sacrebleu.CHRF(beta=beta).corpus_score(HYPS, REFS)
    with pytest.raises(ValueError, match="beta"):
        CHRF(beta=beta)


def _run(command):
    return subprocess.run([str(a) for a in command], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)


# Quick: the beta a parser could get wrong; 0 and -3 with -m slow (issue 28).
@pytest.mark.parametrize("beta", [slow("0"), slow("-3"), str(10 ** 20)])
def test_chrf_beta_flag_as_sacrebleu(beta):
    ref, hyp = DATA / "sample.ref-A.en", DATA / "sample.sys-A.en"
    mine = _run(FASTBLEU + [ref, "-i", hyp, "-m", "chrf", "--chrf-beta", beta, "-f", "text"])
    theirs = _run([sys.executable, "-m", "sacrebleu", ref, "-i", hyp, "-m", "chrf",
                   "--chrf-beta", beta, "-f", "text"])
    assert mine.returncode == 0 and theirs.returncode == 0, mine.stderr
    assert mine.stdout.split("version:")[0] == theirs.stdout.split("version:")[0]
    assert mine.stdout.split(" = ")[1] == theirs.stdout.split(" = ")[1]


@pytest.mark.parametrize("how", ["files", "-nr"])
def test_ter_with_17_references_equals_sacrebleu(tmp_path, how):
    """sacrebleu scores TER with any number of references; so does fastbleu (17: rows at
    scale 17 rather than 720720), printing sacrebleu's line and signature."""
    ref = tmp_path / "ref"
    ref.write_text("the cat\na dog\n", encoding="utf-8")
    hyp = tmp_path / "hyp"
    hyp.write_text("the cat\na cat\n", encoding="utf-8")
    if how == "files":
        refs = [ref] * 17
    else:
        tsv = tmp_path / "refs.tsv"
        tsv.write_text("\t".join(["the cat"] * 17) + "\n" + "\t".join(["a dog"] * 17) + "\n",
                       encoding="utf-8")
        refs = [tsv, "-nr", "17"]
    mine = _run(FASTBLEU + [*refs, "-i", hyp, "-m", "ter", "-f", "text"])
    theirs = _run([sys.executable, "-m", "sacrebleu", *refs, "-i", hyp, "-m", "ter",
                   "-f", "text"])
    assert mine.returncode == 0 and theirs.returncode == 0, mine.stderr
    assert mine.stdout.split("version:")[0] == theirs.stdout.split("version:")[0]
    assert "nrefs:17" in mine.stdout
