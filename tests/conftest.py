"""Shared fixtures: the WMT22 data in ../shared (skipped cleanly when absent)."""

from __future__ import annotations

import glob
import logging
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
WMT22 = Path(os.environ.get("FASTBLEU_WMT22", ROOT.parent / "shared" / "wmt22"))
DATA = ROOT / "data"

#: The two command lines, run as this interpreter's modules (the checkout's fastbleu).
FASTBLEU = [sys.executable, "-m", "fastbleu"]
SACREBLEU = [sys.executable, "-m", "sacrebleu"]
#: The bundled sample: reference A and systems A and B.
REF = str(DATA / "sample.ref-A.en")
HYP = str(DATA / "sample.sys-A.en")
HYP_B = str(DATA / "sample.sys-B.en")

#: The tokenizer WMT22 used per target language (see ../shared/wmt22/README.md).
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


@pytest.fixture(autouse=True)
def _quiet_loggers():
    """sacrebleu and fastbleu warn about sentence BLEU without effective order; keep logs clean."""
    for name in ("sacrebleu", "fastbleu"):
        logging.getLogger(name).setLevel(logging.ERROR)
    yield
