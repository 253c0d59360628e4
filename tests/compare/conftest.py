"""Inputs for the report's tests: the bundled sample, generated many-system tables, and
helpers handed to the tests as the ``tools`` fixture (tests import nothing from here, so
they run whether or not ``tests/`` becomes a package)."""

from __future__ import annotations

import importlib.util
import json
import random
import re
from pathlib import Path
from types import SimpleNamespace

import pytest

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "data"
SAMPLE = {name: DATA / f"sample.{name}.en" for name in ("ref-A", "ref-B", "sys-A", "sys-B")}


def lines(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").split("\n")[:-1]


def damaged(segments: list[str], rate: float, seed: int) -> list[str]:
    """Each segment with words dropped and neighbours swapped at ``rate`` (deterministic)."""
    rng = random.Random(seed)
    out = []
    for segment in segments:
        words = [w for w in segment.split() if rng.random() >= rate]
        for k in range(len(words) - 1):
            if rng.random() < rate / 2:
                words[k], words[k + 1] = words[k + 1], words[k]
        out.append(" ".join(words))
    return out


def systems_table(n_systems: int, n_segments: int, domains: int = 3, seed: int = 7):
    """A pyarrow table ``hyp, ref, system, domain``: ``n_systems`` systems of increasing
    damage to the sample's system A, on its first ``n_segments`` segments."""
    import pyarrow as pa

    base = lines(SAMPLE["sys-A"])[:n_segments]
    refs = lines(SAMPLE["ref-A"])[:n_segments]
    hyp, ref, system, domain = [], [], [], []
    for k in range(n_systems):
        hyp += damaged(base, 0.02 + 0.03 * k, seed + k)
        ref += refs
        system += [f"sys-{k:02d}"] * n_segments
        domain += [f"domain-{i % domains}" for i in range(n_segments)]
    return pa.table({"hyp": hyp, "ref": ref, "system": system, "domain": domain})


def page_data(path: Path) -> dict:
    """The data a report page embeds (``#report-data``)."""
    return page_data_text(Path(path).read_text(encoding="utf-8"))


def page_data_text(text: str) -> dict:
    """The data a report page's text embeds (``#report-data``)."""
    found = re.search(r'<script type="application/json" id="report-data">(.*?)</script>', text,
                      re.S)
    return json.loads(found.group(1))


def fastbleu_json(argv: list[str], capsys) -> list:
    """What the ``fastbleu`` command prints as JSON for ``argv`` (it must succeed)."""
    from fastbleu.cli import main

    capsys.readouterr()
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.fixture(scope="session")
def table8(tmp_path_factory):
    """The generated 8-system table as a Parquet file (120 segments, 3 domains)."""
    import pyarrow.parquet as pq

    path = tmp_path_factory.mktemp("table8") / "systems.parquet"
    pq.write_table(systems_table(8, 120), path)
    return path


def _browser_module():
    """``report_browser.py`` beside this file, loaded by its path."""
    path = Path(__file__).with_name("report_browser.py")
    spec = importlib.util.spec_from_file_location("fastbleu_report_browser", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def tools():
    """The helpers of this file, and the browser driver (``tools.browser``)."""
    return SimpleNamespace(SAMPLE=SAMPLE, lines=lines, damaged=damaged,
                           systems_table=systems_table, page_data=page_data, page_data_text=page_data_text,
                           fastbleu_json=fastbleu_json, browser=_browser_module())
