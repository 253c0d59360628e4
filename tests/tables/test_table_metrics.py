"""Several metrics over one table: one read, one set of columns per metric, each metric's
numbers equal to that metric alone (and to sacrebleu's on each group's rows)."""

from __future__ import annotations

import logging

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import sacrebleu

import fastbleu
from fastbleu import BLEU
from fastbleu.tables.metric_set import metric_labels, metric_specs
from testkit.data import sample_table

REFS = ["ref", "ref2"]
TWO_BLEUS = ["bleu", BLEU(lowercase=True)]


@pytest.fixture(scope="module")
def small_parquet(tmp_path_factory):
    """400 rows of the sample (both systems, 4 documents), row groups of 64 rows."""
    table = sample_table()
    table = pa.concat_tables([table.slice(0, 200), table.slice(1000, 200)])
    path = tmp_path_factory.mktemp("metrics") / "small.parquet"
    pq.write_table(table, path, row_group_size=64)
    return path


def _rows(path, system):
    table = pq.read_table(path)
    mask = np.asarray(table.column("system").to_pylist()) == system
    return table.filter(pa.array(mask))


# -- the metrics list --------------------------------------------------------------------

def test_specs_names_objects_and_bleu_options():
    specs = metric_specs(["bleu", BLEU(lowercase=True)], {"tokenize": "intl"})
    assert [key for key, _ in specs] == ["bleu", "bleu"]
    assert specs[0][1]["tokenize"] == "intl" and specs[1][1]["lowercase"] is True
    assert metric_specs(None, {})[0] == ("bleu", BLEU().options())
    assert metric_labels(["bleu", "chrf", "bleu"]) == ["bleu1", "chrf", "bleu2"]


@pytest.mark.parametrize("metrics, error, words", [
    ([], ValueError, "metrics is empty"),
    (["bleu", "BLEU"], ValueError, "twice"),
    (["bleu", BLEU()], ValueError, "twice"),
    (["meteor"], ValueError, "unknown metric 'meteor'"),
    ([42], TypeError, "metrics holds a int"),
    ([BLEU], TypeError, "metrics holds a ABCMeta"),
    (7, TypeError, "metrics must be a list"),
    ({"bleu": BLEU()}, TypeError, "metrics must be a list"),
])
def test_hostile_metrics_lists(small_parquet, metrics, error, words):
    with pytest.raises(error, match=words):
        fastbleu.score_table(small_parquet, refs=REFS, group_by="system", metrics=metrics)


def test_bleu_options_need_bleu_by_name(small_parquet):
    with pytest.raises(ValueError, match="tokenize: BLEU's options, but metrics names no 'bleu'"):
        fastbleu.score_table(small_parquet, refs=REFS, metrics=[BLEU()], tokenize="intl")


def test_group_column_named_like_a_prefixed_result(small_parquet, tmp_path):
    table = pq.read_table(small_parquet).rename_columns(
        ["hyp", "ref", "ref2", "bleu1_score", "doc", "pair"])
    with pytest.raises(ValueError, match="cannot be named 'bleu1_score'"):
        fastbleu.score_table(table, refs=REFS, group_by="bleu1_score", metrics=TWO_BLEUS)
    # a single metric keeps today's names: "bleu1_score" is then a fine group column
    assert fastbleu.score_table(table, refs=REFS, group_by="bleu1_score").num_rows == 2
    table = table.rename_columns(["hyp", "ref", "ref2", "system", "doc", "bleu2_hyp_len"])
    with pytest.raises(ValueError, match="cannot be named 'bleu2_hyp_len' with segments_out"):
        fastbleu.score_table(table, refs=REFS, group_by="bleu2_hyp_len", metrics=TWO_BLEUS,
                             segments_out=tmp_path / "s.parquet")


# -- two configurations of one metric: the generic machinery ----------------------------

def test_two_bleus_equal_each_alone(small_parquet):
    both = fastbleu.score_table(small_parquet, refs=REFS, group_by=["system", "doc"],
                                metrics=TWO_BLEUS, batch_size=50)
    plain = fastbleu.score_table(small_parquet, refs=REFS, group_by=["system", "doc"])
    lower = fastbleu.score_table(small_parquet, refs=REFS, group_by=["system", "doc"],
                                 lowercase=True)
    assert both.column_names == ["system", "doc"] + \
        [f"bleu1_{n}" for n in plain.column_names[2:]] + \
        [f"bleu2_{n}" for n in plain.column_names[2:]]
    for name in plain.column_names[2:]:
        assert both.column(f"bleu1_{name}").equals(plain.column(name))
        assert both.column(f"bleu2_{name}").equals(lower.column(name))
    assert both.column("system").equals(plain.column("system"))
    assert "case:lc" in both.column("bleu2_signature")[0].as_py()


def test_a_single_metric_keeps_todays_columns(small_parquet):
    today = fastbleu.score_table(small_parquet, refs=REFS, group_by="system", tokenize="intl")
    assert fastbleu.score_table(small_parquet, refs=REFS, group_by="system",
                                metrics=["bleu"], tokenize="intl").equals(today)
    assert fastbleu.score_table(small_parquet, refs=REFS, group_by="system",
                                metrics=[BLEU(tokenize="intl")]).equals(today)


def test_two_bleus_against_sacrebleu_per_group(small_parquet):
    result = fastbleu.score_table(small_parquet, refs=REFS, group_by="system",
                                  metrics=TWO_BLEUS).to_pylist()
    for row in result:
        rows = _rows(small_parquet, row["system"])
        hyps = rows.column("hyp").to_pylist()
        refs = [rows.column(r).to_pylist() for r in REFS]
        assert row["bleu1_score"] == sacrebleu.BLEU().corpus_score(hyps, refs).score
        assert row["bleu2_score"] == \
            sacrebleu.BLEU(lowercase=True).corpus_score(hyps, refs).score


def test_two_bleus_segments_out(small_parquet, tmp_path):
    out = tmp_path / "segments.parquet"
    fastbleu.score_table(small_parquet, refs=REFS, group_by="system", metrics=TWO_BLEUS,
                         segments_out=out, batch_size=100)
    segments = pq.read_table(out)
    width = BLEU().formula.row_width
    names = ["sentence_bleu", *BLEU().formula.statistics_names]
    assert segments.column_names == ["row", "system"] + [f"bleu1_{n}" for n in names] + \
        [f"bleu2_{n}" for n in names]
    table = pq.read_table(small_parquet)
    hyps, refs = table.column("hyp").to_pylist(), [table.column(r).to_pylist() for r in REFS]
    for label, metric in (("bleu1", BLEU()), ("bleu2", BLEU(lowercase=True))):
        stats = np.stack([segments.column(f"{label}_{n}").to_numpy() for n in names[1:]], 1)
        assert stats.shape[1] == width
        assert np.array_equal(stats, metric.segment_statistics(hyps, refs))
        sentence = BLEU(lowercase=metric.lowercase, effective_order=True)
        assert np.array_equal(segments.column(f"{label}_sentence_bleu").to_numpy(),
                              sentence.sentence_scores(hyps, refs))


def test_empty_table_scores_every_metric(caplog):
    empty = pa.table({"hyp": pa.array([], pa.string()), "ref": pa.array([], pa.string())})
    with caplog.at_level(logging.WARNING, logger="fastbleu"):
        result = fastbleu.score_table(empty, metrics=TWO_BLEUS)
    assert result.column("bleu1_score").to_pylist() == [0.0] == \
        result.column("bleu2_score").to_pylist()
    assert "its BLEU, BLEU are 0.0" in caplog.text


# -- paired tests over several metrics ----------------------------------------------------

@pytest.mark.parametrize("test", ["bs", "ar"])
def test_paired_two_bleus_equal_each_alone(small_parquet, test):
    from fastbleu.tables.paired import paired_table

    common = dict(refs=REFS, system="system", group_by=["doc"], test=test, n_samples=50,
                  seed=7)
    both = paired_table(small_parquet, metrics=TWO_BLEUS, **common)
    plain = paired_table(small_parquet, **common)
    lower = paired_table(small_parquet, lowercase=True, **common)
    assert [t.metric_name for t in both] == ["BLEU", "BLEU"]
    for found, alone in zip(both, (plain, lower)):
        assert found.results == alone.results and found.systems == alone.systems
        assert [s.format() for s in found.signatures] == [s.format() for s in alone.signatures]


def test_paired_metrics_share_one_set_of_draws_with_a_fresh_seed(small_parquet):
    from fastbleu.tables.paired import paired_table

    table = pq.read_table(small_parquet)
    for name in ("hyp", *REFS):  # lowercase text: both BLEUs have the same statistics
        index = table.column_names.index(name)
        table = table.set_column(index, name, pa.compute.utf8_lower(table.column(name)))
    found = paired_table(table, refs=REFS, system="system", metrics=TWO_BLEUS, test="bs",
                         n_samples=30, seed="none")
    assert found[0].results == found[1].results
    assert "seed:none" in found[0].signatures[0].format()


# -- chrF and chrF++ beside BLEU ----------------------------------------------------------

BLEU_CHRF = ["bleu", "chrf", fastbleu.CHRF(word_order=2)]


def test_chrf_per_group_equals_sacrebleu(small_parquet):
    result = fastbleu.score_table(small_parquet, refs=REFS, group_by=["system", "doc"],
                                  metrics=BLEU_CHRF, batch_size=100)
    assert result.column_names[2:4] == ["bleu_score", "bleu_bp"]
    assert "chrf1_score" in result.column_names and "chrf2_match_ngrams" in result.column_names
    table = pq.read_table(small_parquet)
    for row in result.to_pylist():
        mask = (np.asarray(table.column("system").to_pylist()) == row["system"]) & \
            (np.asarray(table.column("doc").to_pylist()) == row["doc"])
        rows = table.filter(pa.array(mask))
        hyps, refs = rows.column("hyp").to_pylist(), [rows.column(r).to_pylist() for r in REFS]
        assert row["bleu_score"] == sacrebleu.BLEU().corpus_score(hyps, refs).score
        chrf = sacrebleu.CHRF().corpus_score(hyps, refs)
        assert row["chrf1_score"] == chrf.score
        assert row["chrf2_score"] == sacrebleu.CHRF(word_order=2).corpus_score(hyps, refs).score
        assert row["chrf1_signature"] == fastbleu.CHRF().signature(2).format()


def test_chrf_alone_keeps_the_formula_names(small_parquet):
    result = fastbleu.score_table(small_parquet, refs=REFS, group_by="system", metrics=["chrf"])
    assert result.column_names == ["system", "score", "hyp_ngrams", "ref_ngrams", "match_ngrams",
                                   "signature"]
    both = fastbleu.score_table(small_parquet, refs=REFS, group_by="system",
                                metrics=["bleu", "chrf"])
    assert both.column("chrf_score").equals(result.column("score"))


def test_chrf_segments_out_equals_sacrebleu_sentence_scores(small_parquet, tmp_path):
    out = tmp_path / "segments.parquet"
    fastbleu.score_table(small_parquet, refs=REFS, metrics=["bleu", "chrf"], segments_out=out,
                         batch_size=128)
    segments = pq.read_table(out)
    table = pq.read_table(small_parquet)
    hyps, refs = table.column("hyp").to_pylist(), [table.column(r).to_pylist() for r in REFS]
    chrf = sacrebleu.CHRF()
    expected = [chrf.sentence_score(h, list(r)).score for h, r in zip(hyps, zip(*refs))]
    assert segments.column("chrf_sentence_chrf").to_pylist() == expected
    names = fastbleu.CHRF().formula.statistics_names
    stats = np.stack([segments.column(f"chrf_{n}").to_numpy() for n in names], 1)
    assert np.array_equal(stats, fastbleu.CHRF().segment_statistics(hyps, refs))
    bleu = BLEU(effective_order=True).sentence_scores(hyps, refs)
    assert np.array_equal(segments.column("bleu_sentence_bleu").to_numpy(), bleu)


def test_tokenize_column_is_bleus(small_parquet):
    table = pq.read_table(small_parquet)
    table = table.append_column("tok", pa.array(
        ["intl" if s == "A" else "char" for s in table.column("system").to_pylist()]))
    with pytest.raises(ValueError, match="tokenize_column .--tokenize-column. names each row's "
                                         "word tokenizer, which only BLEU uses; chrF does not "
                                         "take one"):
        fastbleu.score_table(table, refs=REFS, metrics=["chrf"], tokenize_column="tok")
    both = fastbleu.score_table(table, refs=REFS, group_by="system", metrics=["bleu", "chrf"],
                                tokenize_column="tok").to_pylist()
    bleu = fastbleu.score_table(table, refs=REFS, group_by="system", tokenize_column="tok")
    chrf = fastbleu.score_table(table, refs=REFS, group_by="system", metrics=["chrf"])
    assert [r["bleu_score"] for r in both] == bleu.column("score").to_pylist()
    assert ["tok:intl" in r["bleu_signature"] for r in both] == [True, False]
    assert [r["chrf_score"] for r in both] == chrf.column("score").to_pylist()


# -- the command line ---------------------------------------------------------------------

def _cli(capsys, *argv):
    from fastbleu.cli import main

    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


def test_cli_groups_one_record_per_group_and_metric(small_parquet, capsys):
    import json

    base = [small_parquet, "--hyp-column", "hyp", "--ref-column", "ref", "--ref-column", "ref2",
            "--group-by", "system", "-m", "chrf", "bleu", "--chrf-word-order", "2", "--quiet"]
    status, out, _ = _cli(capsys, *base)
    records = json.loads(out)
    assert status == 0 and [(r["system"], r["name"]) for r in records] == \
        [("A", "BLEU"), ("A", "chrF2++"), ("B", "BLEU"), ("B", "chrF2++")]
    from fastbleu.tables.scoring import score_groups

    expected = score_groups(small_parquet, refs=REFS, group_by="system",
                            metrics=["bleu", fastbleu.CHRF(word_order=2)]).results[1]
    assert [r["score"] for r in records[1::2]] == \
        [json.loads(score.format(1, signature="x:y", is_json=True))["score"]
         for score in expected.scores]
    status, out, _ = _cli(capsys, *base, "-f", "text")
    lines = out.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["system=A"] * 2 + ["system=B"] * 2
    assert lines[1].split("\t")[1].startswith("chrF2++|nrefs:2|")
    status, out, _ = _cli(capsys, *base, "-f", "latex")
    assert "system & BLEU & chrF2++" in out


def test_cli_no_groups_prints_as_sacrebleu(small_parquet, tmp_path, capsys):
    import subprocess
    import sys

    table = pq.read_table(small_parquet)
    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("\n".join(table.column("hyp").to_pylist()) + "\n")
    ref.write_text("\n".join(table.column("ref").to_pylist()) + "\n")
    for fmt in ("json", "text"):
        status, out, _ = _cli(capsys, small_parquet, "--ref-column", "ref", "-m", "bleu", "chrf",
                              "-f", fmt, "--quiet")
        theirs = subprocess.run([sys.executable, "-m", "sacrebleu", ref, "-i", hyp, "-m",
                                 "bleu", "chrf", "-f", fmt], capture_output=True, text=True,
                                check=True).stdout
        assert status == 0
        assert out.replace("fastbleu-0.1.0", "2.6.0").rstrip("\n") == theirs.rstrip("\n")


def test_cli_tokenize_column_with_only_chrf_is_refused(small_parquet, capsys):
    status, _, err = _cli(capsys, small_parquet, "--ref-column", "ref", "--tokenize-column",
                          "system", "-m", "chrf")
    assert status == 2 and len(err.strip().splitlines()) == 1
    assert "only BLEU uses" in err


def test_cli_paired_several_metrics(small_parquet, capsys):
    import json

    from fastbleu.tables.paired import paired_table

    base = [small_parquet, "--ref-column", "ref", "--system-column", "system", "--group-by",
            "doc", "--paired-bs", "-pbsn", "40", "-m", "bleu", "chrf", "--quiet"]
    status, out, _ = _cli(capsys, *base)
    records = json.loads(out)
    assert status == 0 and len(records) == 4 and list(records[0])[:2] == ["doc", "system"]
    assert set(records[0]["signature"]) == {"BLEU", "chrF2"}
    found = paired_table(small_parquet, refs=["ref"], system="system", group_by=["doc"],
                         metrics=["bleu", "chrf"], n_samples=40)
    chrf = found[1].results[0][1]
    assert records[1]["chrF2"]["p_value"] == chrf.p_value
    assert records[1]["chrF2"]["score"] == chrf.score
    status, out, _ = _cli(capsys, *base, "-f", "text")
    assert "BLEU (μ ± 95% CI)" in out and "chrF2 (μ ± 95% CI)" in out
