"""A table job is planned once, its metrics built once, its JSON built once (issue 25)."""

from __future__ import annotations

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from fastbleu.cli import main
from fastbleu.tables import job as job_module
from fastbleu.tables import metric_set as metric_set_module
from testkit.data import sample_table


@pytest.fixture(scope="module")
def table_file(tmp_path_factory):
    table = sample_table()
    table = pa.concat_tables([table.slice(0, 150), table.slice(1000, 150)])
    path = tmp_path_factory.mktemp("plan") / "t.parquet"
    pq.write_table(table, path, row_group_size=64)
    return path


def _counting(monkeypatch, owner, name):
    calls = []
    original = getattr(owner, name)

    def counted(*args, **kwargs):
        calls.append(name)
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, classmethod(lambda cls, *a, **k: counted(*a, **k))
                        if isinstance(owner.__dict__.get(name), classmethod) else counted)
    return calls


@pytest.mark.parametrize("extra", [[], ["--segments-out", "SEG"]], ids=["plain", "segments"])
def test_a_table_run_plans_its_job_and_builds_its_metrics_once(table_file, tmp_path,
                                                              monkeypatch, capsys, extra):
    created = _counting(monkeypatch, job_module.TableJob, "create")
    built = _counting(monkeypatch, metric_set_module.MetricSet, "build")
    extra = [str(tmp_path / "segs.parquet") if x == "SEG" else x for x in extra]
    status = main([str(table_file), "-m", "bleu", "chrf", "--group-by", "system", *extra])
    assert status == 0, capsys.readouterr().err
    assert len(created) == 1 and len(built) == 1
    systems = set(pq.read_table(table_file, columns=["system"]).column(0).to_pylist())
    assert {r["system"] for r in json.loads(capsys.readouterr().out)} == systems


def test_paired_json_of_several_metrics_is_one_list_of_records(table_file, capsys):
    status = main([str(table_file), "-m", "bleu", "chrf", "--system-column", "system",
                   "--paired-bs", "-pbsn", "20"])
    assert status == 0, capsys.readouterr().err
    records = json.loads(capsys.readouterr().out)
    assert len(records) == 2  # the baseline and the other system
    assert all({"BLEU", "chrF2", "signature", "system"} <= set(r) for r in records)
    assert all(set(r["signature"]) == {"BLEU", "chrF2"} for r in records)
