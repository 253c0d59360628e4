"""Where the tests' data is, how to read it, and inputs several test modules build."""

from __future__ import annotations
import glob
import logging
import os
import sys
from pathlib import Path
import pytest
import io
import json
import re
import subprocess
import pyarrow as pa
import pyarrow.parquet as pq

from fastbleu.cli import main

ROOT = Path(__file__).resolve().parents[2]


WMT22 = Path(os.environ.get("FASTBLEU_WMT22", ROOT.parent / "shared" / "wmt22"))


DATA = ROOT / "data"


FASTBLEU = [sys.executable, "-m", "fastbleu"]


SACREBLEU = [sys.executable, "-m", "sacrebleu"]


REF = str(DATA / "sample.ref-A.en")


HYP = str(DATA / "sample.sys-A.en")


HYP_B = str(DATA / "sample.sys-B.en")


WMT22_TOKENIZER = {"zh": "zh", "ja": "char"}


needs_wmt22 = pytest.mark.skipif(not (WMT22 / "published-bleu.tsv").is_file(),
                                 reason=f"WMT22 data not found at {WMT22}")


def read_lines(path) -> list[str]:
    """Lines as sacrebleu's command line reads them (split at \\n only)."""
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line.rstrip("\n") for line in handle]


def wmt22_system(pair: str, system: str) -> Path:
    return WMT22 / "system-outputs" / f"generaltest2022.{pair}.hyp.{system}.{pair.split('-')[1]}"


def wmt22_references(pair: str) -> list[Path]:
    target = pair.split("-")[1]
    return sorted(Path(p) for p in glob.glob(str(WMT22 / "references" /
                                                  f"generaltest2022.{pair}.ref.*.{target}")))


def wmt22_systems(pair: str) -> list[str]:
    target = pair.split("-")[1]
    prefix = f"generaltest2022.{pair}.hyp."
    return sorted(p.name[len(prefix):-len(target) - 1]
                  for p in (WMT22 / "system-outputs").glob(f"{prefix}*.{target}"))


def published_references(pair: str, metric: str) -> list[list[str]]:
    paths = wmt22_references(pair)
    which = metric.split("-")[1]
    if which != "all":
        paths = [p for p in paths if f".ref.{which}." in p.name]
    assert paths, f"no reference {which} for {pair}"
    return [read_lines(p) for p in paths]


SAMPLE_SYSTEMS = {"A": read_lines(DATA / "sample.sys-A.en"), "B": read_lines(DATA / "sample.sys-B.en")}




SAMPLE_REFS = [read_lines(DATA / "sample.ref-A.en"), read_lines(DATA / "sample.ref-B.en")]


def sample_table() -> pa.Table:
    """Both sample systems, 10 documents of 100 segments, as one long table."""
    rows = {"hyp": [], "ref": [], "ref2": [], "system": [], "doc": [], "pair": []}
    for name, hyps in SAMPLE_SYSTEMS.items():
        rows["hyp"] += hyps
        rows["ref"] += SAMPLE_REFS[0]
        rows["ref2"] += SAMPLE_REFS[1]
        rows["system"] += [name] * len(hyps)
        rows["doc"] += [f"d{i // 100}" for i in range(len(hyps))]
        rows["pair"] += ["xx-en"] * len(hyps)
    return pa.table(rows)


def cli_ours(args, capsys, monkeypatch, stdin: str | None = None) -> str:
    if stdin is not None:
        stream = io.TextIOWrapper(io.BytesIO(stdin.encode("utf-8")), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", stream)
    capsys.readouterr()
    status = main([str(a) for a in args] + ["--sacrebleu-compat"])
    captured = capsys.readouterr()
    assert status == 0, captured.err
    return captured.out


def cli_theirs(args, stdin: str | None = None) -> str:
    done = subprocess.run(SACREBLEU + [str(a) for a in args], capture_output=True, text=True,
                          input=stdin, encoding="utf-8")
    assert done.returncode == 0, done.stderr
    return done.stdout


def version_free(text: str) -> str:
    text = re.sub(r"\b(version|v):(fastbleu-[^|\s\"]+|2\.6\.0)", r"\1:V", text)
    return re.sub(r'"version": "(fastbleu-[^"]+|2\.6\.0)"', '"version": "V"', text)


def cli_same(args, capsys, monkeypatch, stdin=None) -> str:
    """fastbleu's output is sacrebleu's; one system's text lines are aligned on their '='
    after the signature, whose version differs in length, so they are compared without
    the padding and their alignment is checked on its own."""
    ours, theirs = version_free(cli_ours(args, capsys, monkeypatch, stdin)), \
        version_free(cli_theirs(args, stdin))
    aligned = [line for line in ours.splitlines() if "|" in line and " = " in line]
    if len(aligned) > 1 and "-sl" not in args:
        assert len({line.index(" = ") for line in aligned}) == 1, ours
        ours, theirs = ([line.lstrip() for line in text.splitlines()] for text in (ours, theirs))
    assert ours == theirs



def sorted_mix(n: int, seed: int = 26, longest: int = 11) -> tuple[list[str], list[str]]:
    """Short segments first, long ones last (lengths 1 to ``longest ** 2`` words), as a
    test set sorted by length, and references close to them (the batch cuts' hard case)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    words = np.array(["the", "cat", "sat", "on", "a", "mat", "und", "der", "Hund", ".", ",",
                      "über", "东京", "1,5"])
    lengths = np.sort(rng.integers(1, longest + 1, n) ** 2)
    hyps = [" ".join(rng.choice(words, k)) for k in lengths]
    refs = [" ".join(rng.choice(words, max(1, k + rng.integers(-3, 4)))) for k in lengths]
    return hyps, refs
