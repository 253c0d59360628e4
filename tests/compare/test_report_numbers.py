"""The report's numbers are fastbleu's: its JSON for the same inputs, number for number."""

from __future__ import annotations

import numpy as np
import pytest

import fastbleu
from fastbleu import significance
from fastbleu.compare import compare, load, report
from fastbleu.compare.ranking import clusters, order_of, pair_p_values, rank_ranges

pytest.importorskip("matplotlib")


def by_name(rows):
    return {row["system"]: row for row in rows}


def test_text_report_equals_the_paired_bootstrap_json(tmp_path, capsys, tools):
    SAMPLE = tools.SAMPLE
    refs = [str(SAMPLE["ref-A"]), str(SAMPLE["ref-B"])]
    systems = [str(SAMPLE["sys-A"]), str(SAMPLE["sys-B"])]
    out = tmp_path / "report.html"
    from fastbleu.cli import main

    assert main(["report", *refs, "-i", *systems, "-m", "bleu", "chrf", "-o", str(out),
                 "-q"]) == 0
    data = tools.page_data(out)["report"]
    expected = tools.fastbleu_json([*refs, "-i", *systems, "-m", "bleu", "chrf", "--paired-bs"],
                             capsys)
    for m, name in enumerate(["BLEU", "chrF2"]):
        ranking = data["ranking"][m]
        assert ranking["metric"] == name
        rows = by_name(ranking["rows"])
        for k, entry in enumerate(expected):
            system = systems[k]
            for field in ("score", "mean", "ci"):
                assert rows[system][field] == entry[name][field]
            if k:  # the baseline against this system
                pair = [p for p in ranking["pairs"] if p["a"] == systems[0] and p["b"] == system]
                assert pair[0]["p_value"] == entry[name]["p_value"]
        assert ranking["signature"].startswith("nrefs:2|bs:1000|seed:12345|")


def test_every_pair_is_a_paired_bootstrap_with_either_baseline(tools):
    SAMPLE, lines = tools.SAMPLE, tools.lines
    hyps = [lines(SAMPLE["sys-A"])[:300], lines(SAMPLE["sys-B"])[:300],
            lines(SAMPLE["sys-A"])[300:600]]
    refs = [lines(SAMPLE["ref-A"])[:300]]
    found = compare(load(hyps, refs, metrics=["bleu", "chrf"]), n_samples=200, seed=3)
    for base in range(3):
        order = [base] + [s for s in range(3) if s != base]
        results = significance.paired_bootstrap([hyps[s] for s in order], refs,
                                                n_samples=200, seed=3,
                                                metrics=[fastbleu.BLEU(), fastbleu.CHRF()])
        for m, per_metric in enumerate(results):
            rank = found.rankings[m]
            for k, result in enumerate(per_metric):
                s = order[k]
                assert rank.score[s] == result.score
                assert (rank.mean[s], rank.ci[s]) == (result.mean, result.ci)
                if k:
                    assert rank.p[base, s] == result.p_value == rank.p[s, base]


def test_one_system_equals_the_confidence_json(tmp_path, capsys, tools):
    SAMPLE, lines = tools.SAMPLE, tools.lines
    ref, hyp = str(SAMPLE["ref-A"]), str(SAMPLE["sys-B"])
    found = report({hyp: lines(SAMPLE["sys-B"])}, [lines(SAMPLE["ref-A"])],
                   metrics=["bleu", "chrf"], output=tmp_path / "one.html")
    # the command prints a single system's interval rounded (-w): 6 decimals here
    printed = tools.fastbleu_json([ref, "-i", hyp, "-m", "bleu", "chrf", "--confidence", "-w",
                                   "6"], capsys)
    exact = significance.scores_with_confidence(lines(SAMPLE["sys-B"]),
                                                [lines(SAMPLE["ref-A"])],
                                                metrics=[fastbleu.BLEU(), fastbleu.CHRF()])
    for m, (entry, score) in enumerate(zip(printed, exact)):
        rank = found.rankings[m]
        assert (rank.score[0], rank.mean[0], rank.ci[0]) == (score.score, score.mean, score.ci)
        assert (round(rank.score[0], 6), round(rank.mean[0], 6), round(rank.ci[0], 6)) == (
            entry["score"], entry["confidence_mean"], entry["confidence_var"])
        assert rank.p is None and rank.cluster.tolist() == [1]
    assert found.pair is None and found.examples == []


def test_table_groups_equal_the_grouped_paired_json(table8, tmp_path, capsys, tools):
    fastbleu_json = tools.fastbleu_json
    found = report(str(table8), system="system", group_by="domain",
                   metrics=["bleu", "chrf"], n_samples=300, output=tmp_path / "t.html")
    overall = fastbleu_json([str(table8), "--system-column", "system", "--paired-bs",
                             "-pbsn", "300", "-m", "bleu", "chrf"], capsys)
    grouped = fastbleu_json([str(table8), "--system-column", "system", "--group-by", "domain",
                             "--paired-bs", "-pbsn", "300", "-m", "bleu", "chrf"], capsys)
    systems = found.systems
    for entry in overall:
        s = systems.index(entry["system"].removeprefix("Baseline: "))
        for m, name in enumerate(["BLEU", "chrF2"]):
            rank = found.rankings[m]
            assert (rank.score[s], rank.mean[s], rank.ci[s]) == (
                entry[name]["score"], entry[name]["mean"], entry[name]["ci"])
            if entry[name]["p_value"] is not None:
                assert rank.p[0, s] == entry[name]["p_value"]
    labels = [values[0] for values in found.groups.values]
    for entry in grouped:
        g = labels.index(entry["domain"])
        s = systems.index(entry["system"])
        for m, name in enumerate(["BLEU", "chrF2"]):
            rank = found.groups.rankings[g][m]
            assert (rank.score[s], rank.mean[s], rank.ci[s]) == (
                entry[name]["score"], entry[name]["mean"], entry[name]["ci"])
            if entry[name]["p_value"] is not None:
                assert rank.p[0, s] == entry[name]["p_value"]
    data = tools.page_data(tmp_path / "t.html")["report"]
    assert data["ranking"][0]["rows"][0]["score"] == found.rankings[0].score[
        found.rankings[0].order[0]]


def test_clusters_and_rank_ranges_follow_the_wmt_rule():
    # four systems, best first: 0 beats everyone, 1 and 2 tie, 2 does not beat 3, 1 does
    real = np.array([40.0, 30.0, 29.0, 28.0])
    p = np.full((4, 4), 0.5)
    for i, j in [(0, 1), (0, 2), (0, 3), (1, 3)]:
        p[i, j] = p[j, i] = 0.001
    np.fill_diagonal(p, np.nan)
    from fastbleu.compare.ranking import better_than

    better = better_than(real, p, 0.05, False)
    order = order_of(real, False)
    assert clusters(order, better).tolist() == [1, 2, 2, 2]
    best, worst = rank_ranges(better)
    assert best.tolist() == [1, 2, 2, 3] and worst.tolist() == [1, 3, 4, 4]
    # lower is better (TER): the order turns round
    assert order_of(np.array([30.0, 20.0]), True).tolist() == [1, 0]


def test_pair_p_values_are_symmetric_with_a_nan_diagonal():
    rng = np.random.default_rng(0)
    resampled = rng.normal(size=(4, 50))
    p = pair_p_values(resampled.mean(axis=1), resampled)
    assert np.array_equal(p, p.T, equal_nan=True)
    assert np.isnan(np.diag(p)).all() and (p[~np.isnan(p)] > 0).all()


def test_the_sums_are_exact_in_every_storage_type(tools):
    from fastbleu.compare.resampled import Layout, bootstrap_scores, narrowest

    hyps = [tools.lines(tools.SAMPLE["sys-A"])[:200], tools.lines(tools.SAMPLE["sys-B"])[:200]]
    metric = fastbleu.BLEU(references=[tools.lines(tools.SAMPLE["ref-A"])[:200]])
    stats = np.concatenate([metric.segment_statistics(h) for h in hyps], axis=1)
    layout = Layout([metric.formula], 2)
    found = [bootstrap_scores(np.ascontiguousarray(stats.astype(kind)), layout, 64, 5)[0]
             for kind in (np.uint16, np.int32, np.int64)]
    assert np.array_equal(found[0], found[1]) and np.array_equal(found[0], found[2])
    # counts scaled by 2**30 leave every BLEU the same, but need int64 lanes (the wide path)
    scaled = bootstrap_scores(stats * (1 << 30), layout, 64, 5)[0]
    assert np.array_equal(scaled, found[0])
    assert [narrowest(v) for v in (65535, 65536, 2**31 - 1, 2**31)] == [
        np.uint16, np.int32, np.int32, np.int64]


def test_a_segment_column_aligns_shuffled_rows(tools):
    import pyarrow as pa

    table = tools.systems_table(3, 60, domains=2)
    table = table.append_column("id", pa.array(list(range(60)) * 3))
    ordered = compare(load(table, group_by=["domain"], metrics=["bleu"]), n_samples=100)
    # the other systems' rows in another order: the ids put them back
    rows = list(range(60)) + [60 + k for k in range(60)][::-1] + \
        [120 + k for k in range(0, 60, 2)] + [120 + k for k in range(1, 60, 2)]
    shuffled = compare(load(table.take(pa.array(rows)), group_by=["domain"], segment="id",
                            metrics=["bleu"]), n_samples=100)
    assert np.array_equal(ordered.rankings[0].score, shuffled.rankings[0].score)
    assert np.array_equal(ordered.rankings[0].p, shuffled.rankings[0].p, equal_nan=True)
    for g in range(2):
        assert np.array_equal(ordered.groups.rankings[g][0].ci,
                              shuffled.groups.rankings[g][0].ci)


def test_rows_that_do_not_align_are_refused(tools):
    from fastbleu.errors import InputError

    table = tools.systems_table(3, 30, domains=2)
    with pytest.raises(InputError, match="domain=domain-1: system 'sys-02' has 14 segments "
                                         "but the baseline 'sys-00' has 15"):
        load(table.slice(0, 89), group_by=["domain"])
    with pytest.raises(InputError, match="baseline 'nope' is not a value of column 'system'"):
        load(table, baseline="nope")


def test_ter_takes_the_integer_sums_and_equals_the_paired_bootstrap(tools):
    from fastbleu.compare.resampled import float_blocks

    hyps = [tools.lines(tools.SAMPLE["sys-A"])[:150], tools.lines(tools.SAMPLE["sys-B"])[:150]]
    refs = [tools.lines(tools.SAMPLE["ref-A"])[:150]]
    corpus = load(hyps, refs, metrics=["ter", "bleu"])
    cumulative = np.concatenate([[0], np.cumsum(corpus.stats.max(axis=1), dtype=np.int64)])
    assert corpus.stats.dtype == np.int32 and float_blocks(cumulative, 5) is None
    found = compare(corpus, n_samples=150, seed=9)
    results = significance.paired_bootstrap(hyps, refs, n_samples=150, seed=9,
                                            metrics=[fastbleu.TER(), fastbleu.BLEU()])
    for rank, per_metric in zip(found.rankings, results):
        assert rank.mean.tolist() == [r.mean for r in per_metric]
        assert rank.ci.tolist() == [r.ci for r in per_metric]
        assert rank.p[0, 1] == per_metric[1].p_value
    assert found.rankings[0].name == "TER" and found.rankings[0].lower_is_better
