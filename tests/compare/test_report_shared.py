"""A report's table statistics with each segment's references counted once
(fastbleu.compare.shared) equal every row scored on its own, bit for bit."""

from __future__ import annotations

import random

import numpy as np
import pytest

pa = pytest.importorskip("pyarrow")

from fastbleu.compare import table as compare_table  # noqa: E402
from fastbleu.errors import InputError  # noqa: E402
from fastbleu.metrics import get_metric  # noqa: E402

METRICS = [("bleu", {}), ("chrf", {}), ("chrf", {"word_order": 2, "lowercase": True}),
           ("bleu", {"tokenize": "char", "lowercase": True}),
           ("chrf", {"whitespace": True, "eps_smoothing": True})]


def _table(tools, n_segments=60, seed=3):
    """Four systems of one segment-id column, rows shuffled: two reference columns (the
    second often null), a system with references of its own on some segments, a system
    equal to another on some segments, empty and null hypotheses, markup in the text."""
    refs = tools.lines(tools.SAMPLE["ref-A"])[:n_segments]
    refs_b = tools.lines(tools.SAMPLE["ref-B"])[:n_segments]
    base = tools.lines(tools.SAMPLE["sys-A"])[:n_segments]
    rng = random.Random(seed)
    rows = []
    outputs = [tools.damaged(base, 0.05 + 0.05 * k, seed + k) for k in range(4)]
    for i in range(n_segments):
        if i % 7 == 0:
            outputs[3][i] = outputs[0][i]  # the same hypothesis as another system
        if i == 4:
            outputs[1][i] = ""
        if i == 5:
            outputs[2][i] = "<script>alert('x')</script> &amp; Ünïcödé ΣΑΣ"
    for k in range(4):
        for i in range(n_segments):
            ref = refs[i]
            if k == 2 and i % 9 == 1:  # this row's own references
                ref = ref.upper() + " !"
            rows.append({"hyp": None if (k == 3 and i == 8) else outputs[k][i],
                         "ref": ref, "ref2": None if i % 3 else refs_b[i],
                         "system": f"sys-{k}", "domain": f"d{i % 4}", "id": i})
    rng.shuffle(rows)
    return pa.Table.from_pylist(rows)


def _expected(table, metrics, refs):
    """Every row scored on its own by the metric, placed as the report places it."""
    rows = table.to_pylist()
    systems = list(dict.fromkeys(r["system"] for r in rows))
    base = systems[0]
    segment_of = {}
    for r in rows:
        if r["system"] == base:
            segment_of[(r["domain"], r["id"])] = len(segment_of)
    hyps = [r["hyp"] or "" for r in rows]
    streams = [[r[c] for r in rows] for c in refs]
    found = {}
    for m, (key, options) in enumerate(metrics):
        stats = get_metric(key, **options).segment_statistics(hyps, streams)
        per_system = {s: np.zeros((len(segment_of), stats.shape[1]), np.int64)
                      for s in systems}
        for r, row in zip(rows, stats):
            per_system[r["system"]][segment_of[(r["domain"], r["id"])]] = row
        found[m] = per_system
    return found


@pytest.mark.parametrize("block_bytes", [1, 700, 1 << 28])
def test_shared_references_equal_every_row_on_its_own(tools, block_bytes):
    table = _table(tools)
    refs = ("ref", "ref2")
    corpus = compare_table.from_table(table, refs=refs, group_by=["domain"], segment="id",
                                      metrics=METRICS, null_as_empty=True,
                                      block_bytes=block_bytes)
    expected = _expected(table, METRICS, refs)
    assert corpus.num_refs == -1
    for m in range(len(METRICS)):
        for s, name in enumerate(corpus.systems):
            assert np.array_equal(corpus.system_rows(m, s), expected[m][name]), (m, name)
    by_row = compare_table.from_table(table, refs=refs, group_by=["domain"], segment="id",
                                      metrics=METRICS + [("ter", {})], null_as_empty=True)
    assert np.array_equal(corpus.ref_words, by_row.ref_words)
    assert np.array_equal(corpus.group, by_row.group)
    for m in range(len(METRICS)):  # the per-row path (TER takes it) gives the same rows
        for s in range(len(corpus.systems)):
            assert np.array_equal(corpus.system_rows(m, s), by_row.system_rows(m, s))


def test_shared_references_by_row_order_and_one_reference(tools):
    """Rows aligned by their order in each group (no segment column), one reference."""
    table = tools.systems_table(5, 40)
    metrics = [("bleu", {}), ("chrf", {})]
    corpus = compare_table.from_table(table, group_by=["domain"], metrics=metrics,
                                      block_bytes=2000)
    by_row = compare_table.from_table(table, group_by=["domain"],
                                      metrics=metrics + [("ter", {})])
    assert corpus.num_refs == by_row.num_refs == 1
    assert np.array_equal(corpus.ref_words, by_row.ref_words)
    for m in range(len(metrics)):
        for s in range(len(corpus.systems)):
            assert np.array_equal(corpus.system_rows(m, s), by_row.system_rows(m, s))


def test_shared_path_refuses_what_the_row_path_refuses(tools):
    table = _table(tools)
    with pytest.raises(InputError, match=r"column 'hyp', row \d+: the hypothesis is null"):
        compare_table.from_table(table, refs=("ref", "ref2"), segment="id",
                                 group_by=["domain"], metrics=[("chrf", {})])
    nulls = table.set_column(table.schema.get_field_index("ref"), "ref",
                             pa.array([None] * table.num_rows, pa.string()))
    nulls = nulls.set_column(nulls.schema.get_field_index("ref2"), "ref2",
                             pa.array([None] * table.num_rows, pa.string()))
    with pytest.raises(InputError, match="every reference is null"):
        compare_table.from_table(nulls, refs=("ref", "ref2"), segment="id",
                                 group_by=["domain"], metrics=[("bleu", {})],
                                 null_as_empty=True)
    with pytest.raises(InputError, match="src"):
        compare_table.from_table(table, refs=("ref",), segment="id", group_by=["domain"],
                                 metrics=[("bleu", {})], null_as_empty=True, src="src")
    missing = table.filter(pa.compute.not_equal(table.column("id"), 3))
    missing = pa.concat_tables([missing, table.filter(pa.compute.and_(
        pa.compute.equal(table.column("id"), 3),
        pa.compute.not_equal(table.column("system"), "sys-1")))])
    with pytest.raises(InputError, match="segments but the baseline"):
        compare_table.from_table(missing, refs=("ref",), segment="id", group_by=["domain"],
                                 metrics=[("bleu", {})], null_as_empty=True)


def test_shared_references_from_csv_list_columns_and_a_baseline(tools, tmp_path):
    """A CSV table, a list column of references and another baseline: the same rows as
    the per-row path."""
    import pyarrow.csv as pa_csv

    table = tools.systems_table(3, 30)
    metrics = [("bleu", {}), ("chrf", {"word_order": 2})]
    path = tmp_path / "rows.csv"
    pa_csv.write_csv(table, path)
    for source, refs in ((str(path), ("ref",)),
                         (table.append_column("refs", pa.array(
                             [[r, r[::-1]] for r in table.column("ref").to_pylist()])),
                          ("refs",))):
        shared = compare_table.from_table(source, refs=refs, group_by=["domain"],
                                          metrics=metrics, baseline="sys-02", block_bytes=500)
        by_row = compare_table.from_table(source, refs=refs, group_by=["domain"],
                                          metrics=metrics + [("ter", {})], baseline="sys-02")
        assert shared.systems[0] == "sys-02"
        assert shared.num_refs == by_row.num_refs
        assert np.array_equal(shared.ref_words, by_row.ref_words)
        for m in range(len(metrics)):
            for s in range(len(shared.systems)):
                assert np.array_equal(shared.system_rows(m, s), by_row.system_rows(m, s))


def test_shared_references_repair_text_as_the_row_path_does(tools, tmp_path):
    """Bytes that are not UTF-8 in a CSV file, repaired (``encoding_errors="replace"``)
    alike in both passes over the hypotheses."""
    table = tools.systems_table(2, 12).to_pylist()
    lines = [b"hyp,ref,system,domain"]
    for k, row in enumerate(table):
        hyp = row["hyp"].replace(",", " ").replace('"', " ").encode()
        if k in (3, 15):
            hyp = b"caf\xe9 \xff " + hyp
        ref = row["ref"].replace(",", " ").replace('"', " ").encode()
        lines.append(b",".join([hyp, ref, row["system"].encode(), row["domain"].encode()]))
    path = tmp_path / "rows.csv"
    path.write_bytes(b"\n".join(lines) + b"\n")
    metrics = [("bleu", {}), ("chrf", {})]
    with pytest.raises(InputError, match="UTF-8"):
        compare_table.from_table(str(path), metrics=metrics)
    shared = compare_table.from_table(str(path), metrics=metrics, encoding_errors="replace",
                                      block_bytes=300)
    by_row = compare_table.from_table(str(path), metrics=metrics + [("ter", {})],
                                      encoding_errors="replace")
    for m in range(len(metrics)):
        for s in range(len(shared.systems)):
            assert np.array_equal(shared.system_rows(m, s), by_row.system_rows(m, s))


def test_the_same_reference_column_twice_equals_the_row_path(tools):
    """``--ref-column ref --ref-column ref``: table mode scores two references (nrefs:2);
    the shared path read the columns once but selected them twice from a record batch,
    a pyarrow KeyError shown as fastbleu's internal error."""
    table = tools.systems_table(3, 20)
    metrics = [("bleu", {}), ("chrf", {})]
    refs = ("ref", "ref")
    shared = compare_table.from_table(table, refs=refs, group_by=["domain"], metrics=metrics)
    by_row = compare_table.from_table(table, refs=refs, group_by=["domain"],
                                      metrics=metrics + [("ter", {})])
    assert shared.num_refs == by_row.num_refs == 2
    assert np.array_equal(shared.ref_words, by_row.ref_words)
    for m in range(len(metrics)):
        for s in range(len(shared.systems)):
            assert np.array_equal(shared.system_rows(m, s), by_row.system_rows(m, s))
