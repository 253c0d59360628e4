"""NIST over a corpus in pieces: record batches, Dask partitions, accumulator updates and
merges all get the information weights of the whole input (Doddington, 2002), so their
numbers equal one call's and NLTK's ``corpus_nist`` of the same tokens."""

from __future__ import annotations

import logging
import pickle

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

nltk_nist = pytest.importorskip("nltk.translate.nist_score")

from testkit.data import (needs_wmt22, read_lines, wmt22_references, wmt22_system,  # noqa: E402
                      wmt22_systems)
from fastbleu import NIST, score_table  # noqa: E402
from fastbleu.tables.paired import paired_table  # noqa: E402

WORDS = ["a", "b", "c", "0", "é", "a.", "b"]  # "0": mteval's quirk; "b" twice: more repeats
VARIANTS = ["nltk", "mteval"]


sentences = st.lists(st.sampled_from(WORDS), max_size=9).map(" ".join)


@st.composite
def corpora(draw, min_size=1, max_size=14):
    """Hypotheses and two reference streams, the second with missing references; with
    repeated, empty and whitespace-only segments."""
    n = draw(st.integers(min_size, max_size))
    pool = draw(st.lists(sentences | st.just("  "), min_size=1, max_size=6))
    pick = st.sampled_from(pool) | sentences
    hyps = [draw(pick) for _ in range(n)]
    refs = [[draw(pick) for _ in range(n)],
            [draw(st.none() | pick) for _ in range(n)]]
    return hyps, refs


def _cuts(draw, n):
    return sorted(set(draw(st.lists(st.integers(0, n), max_size=3))) | {0, n})


def _nltk(hyps, refs, n=5):
    """NLTK's corpus_nist of the whitespace tokens (tokenize="none")."""
    streams = [[r[i].split() for r in refs if r[i] is not None] for i in range(len(hyps))]
    return nltk_nist.corpus_nist(streams, [h.split() for h in hyps], n)


@pytest.mark.parametrize("variant", VARIANTS)
@settings(deadline=None, max_examples=25)
@given(corpus=corpora(), data=st.data())
def test_summed_counts_give_one_calls_rows(variant, corpus, data):
    hyps, refs = corpus
    metric = NIST(variant=variant, max_ngram_order=3)
    cuts = _cuts(data.draw, len(hyps))
    pieces = [(a, b) for a, b in zip(cuts, cuts[1:])]
    counts = [metric.reference_counts([r[a:b] for r in refs]) for a, b in pieces]
    total = counts[0].merge(*counts[1:])
    fitted = metric.with_weights(pickle.loads(pickle.dumps(total)))
    rows = np.concatenate([fitted.segment_statistics(hyps[a:b], [r[a:b] for r in refs])
                           for a, b in pieces])
    assert (rows == metric.segment_statistics(hyps, refs)).all()


@pytest.mark.parametrize("variant", VARIANTS)
@settings(deadline=None, max_examples=25)
@given(corpus=corpora(), data=st.data())
def test_accumulator_updates_and_merges_equal_one_call(variant, corpus, data):
    hyps, refs = corpus
    metric = NIST(variant=variant, tokenize="none")
    cuts = _cuts(data.draw, len(hyps))
    accs = [metric.accumulator().update(hyps[a:b], [r[a:b] for r in refs])
            for a, b in zip(cuts, cuts[1:])]
    total = pickle.loads(pickle.dumps(accs[-1]))
    for acc in reversed(accs[:-1]):  # merged in another order than updated
        total.merge(pickle.loads(pickle.dumps(acc)))
    assert total.n_segments == len(hyps)
    whole = metric.corpus_score(hyps, refs)
    assert (total.statistics == metric.segment_statistics(hyps, refs).sum(axis=0)).all()
    assert total.score().score == whole.score
    if variant == "nltk" and sum(h.split() != [] for h in hyps):
        try:
            expected = _nltk(hyps, refs)
        except ZeroDivisionError:  # NLTK fails on a corpus without words somewhere
            return
        assert total.score().score == pytest.approx(expected, rel=1e-12, abs=1e-12)


def test_accumulator_merges_updates_of_different_stream_counts():
    hyps = ["a b c", "b c a", "0 a", "c c b a"]
    refs = [["a b c", "a b", "0 a", "c b a"], ["b c", None, "a 0", "c c"]]
    acc = NIST().accumulator().update(hyps[:2], [r[:2] for r in refs])
    acc.merge(NIST().accumulator().update(hyps[2:], [refs[0][2:]]))
    expected = NIST().corpus_score(hyps, [refs[0], refs[1][:2] + [None, None]])
    assert acc.score().score == expected.score
    assert acc.signature().format().startswith("nrefs:var")
    with pytest.raises(ValueError, match="different metrics or options"):
        acc.merge(NIST(max_ngram_order=4).accumulator())


def test_fixed_weights_refuse_other_configurations():
    counts = NIST(lowercase=True).reference_counts([["A b"]])
    with pytest.raises(ValueError, match="lowercase"):
        NIST().with_weights(counts)
    with pytest.raises(ValueError, match="configurations"):
        counts.merge(NIST().reference_counts([["a"]]))
    with pytest.raises(TypeError, match="NISTCounts"):
        NIST().with_weights({"a": 1.0})
    weights = NIST().reference_counts([["a b"]]).weights("mteval")
    with pytest.raises(ValueError, match="variant"):
        NIST().with_weights(weights)
    with pytest.raises(ValueError, match="accumulator"):
        NIST().with_weights(NIST().reference_counts([["a b"]])).accumulator()


# -- tables: a first pass gives every batch its group's weights ---------------------------

def _table(seed=5, n=60):
    """Two systems over the same references in one pair, one system in another pair with
    its own references; duplicated, empty and missing references."""
    rng = np.random.default_rng(seed)
    words = np.array(WORDS)

    def text(size):
        return [" ".join(rng.choice(words, rng.integers(0, 9))) for _ in range(size)]

    refs, refs2 = text(n), [None if rng.random() < 0.3 else s for s in text(n)]
    other, other2 = text(n // 2), text(n // 2)
    rows = {"system": [], "pair": [], "doc": [], "hyp": [], "ref": [], "ref2": []}
    for system, pair, r, r2 in [("A", "p1", refs, refs2), ("B", "p1", refs, refs2),
                                ("A", "p2", other, other2)]:
        rows["system"] += [system] * len(r)
        rows["pair"] += [pair] * len(r)
        rows["doc"] += [f"d{i % 3}" for i in range(len(r))]
        rows["hyp"] += text(len(r))
        rows["ref"] += r
        rows["ref2"] += r2
    order = rng.permutation(len(rows["hyp"]))  # groups interleaved across batches
    return pa.table({k: [v[i] for i in order] for k, v in rows.items()})


def _rows(table, mask):
    hyps = [h for h, m in zip(table["hyp"].to_pylist(), mask) if m]
    refs = [[r for r, m in zip(table[c].to_pylist(), mask) if m] for c in ("ref", "ref2")]
    return hyps, refs


@pytest.mark.parametrize("variant", VARIANTS)
def test_table_in_batches_equals_one_call_per_group(variant, tmp_path, caplog):
    table = _table()
    metric = NIST(variant=variant)
    caplog.set_level(logging.WARNING, logger="fastbleu")
    whole = score_table(table, refs=["ref", "ref2"], metrics=[metric], batch_size=17)
    hyps, refs = _rows(table, [True] * table.num_rows)
    assert whole["score"][0].as_py() == metric.corpus_score(hyps, refs).score
    segments = tmp_path / "segments.parquet"
    grouped = score_table(table, refs=["ref", "ref2"], group_by=["system", "pair"], doc="doc",
                          metrics=[metric, "bleu"], batch_size=17, segments_out=str(segments))
    assert not caplog.records  # no per-batch warning: the weights are exact
    written = pq.read_table(segments)
    names = list(metric.formula.statistics_names)
    for system, pair in [("A", "p1"), ("B", "p1"), ("A", "p2")]:
        mask = [s == system and p == pair for s, p in
                zip(table["system"].to_pylist(), table["pair"].to_pylist())]
        hyps, refs = _rows(table, mask)
        expected = metric.segment_statistics(hyps, refs)  # the group alone
        mine = written.filter(pa.compute.and_(pa.compute.equal(written["system"], system),
                                              pa.compute.equal(written["pair"], pair)))
        mine = mine.sort_by("row")
        got = np.stack([mine[f"nist_{c}"].to_numpy() for c in names], axis=1)
        assert (got == expected).all()
        docs = [r for r in grouped.to_pylist() if (r["system"], r["pair"]) == (system, pair)]
        for row in docs:
            in_doc = [m and d == row["doc"] for m, d in zip(mask, table["doc"].to_pylist())]
            picked = np.flatnonzero(np.asarray(in_doc)[np.asarray(mask)])
            assert row["nist_score"] == metric.formula.score(expected[picked].sum(axis=0)).score
    for batch_size in (9, 1 << 16):  # groups merged from batches, or each from one batch
        by_group = score_table(table, refs=["ref", "ref2"], group_by=["system", "pair"],
                               metrics=[metric], batch_size=batch_size)
        _check_each_group_alone(table, metric, by_group)


def _check_each_group_alone(table, metric, by_group):
    for row in by_group.to_pylist():
        mask = [s == row["system"] and p == row["pair"] for s, p in
                zip(table["system"].to_pylist(), table["pair"].to_pylist())]
        assert row["score"] == metric.corpus_score(*_rows(table, mask)).score


def test_paired_table_weighs_each_system_by_its_references():
    table = _table(seed=8)
    table = table.filter(pa.compute.equal(table["pair"], "p1"))
    result = paired_table(table, refs=["ref", "ref2"], metrics=[NIST()], n_samples=20,
                          seed=3, batch_size=11)
    one_batch = paired_table(table, refs=["ref", "ref2"], metrics=[NIST()], n_samples=20,
                             seed=3, batch_size=1 << 16)
    assert str(result) == str(one_batch)
    mask = [s == "A" for s in table["system"].to_pylist()]
    assert f"{NIST().corpus_score(*_rows(table, mask)).score:.4f}" in str(result)


# -- Dask: per-partition counts merged in a tree, the weights broadcast ------------------

@pytest.fixture(scope="module")
def nist_dataset(tmp_path_factory):
    path = tmp_path_factory.mktemp("nist-dask") / "data"
    path.mkdir()
    table = _table(seed=11, n=80)
    for k in range(3):
        pq.write_table(table.slice(67 * k, 67), path / f"part-{k}.parquet", row_group_size=20)
    return path, table


@pytest.mark.slow  # a real cluster (issue 28: -m slow)
def test_dask_partitions_equal_one_process(nist_dataset):
    pytest.importorskip("distributed")
    import fastbleu.dask as fd

    path, table = nist_dataset
    metrics = [NIST(), NIST(variant="mteval", max_ngram_order=3)]
    expected = score_table(path, refs=["ref", "ref2"], group_by=["system", "pair"],
                           metrics=metrics, batch_size=13)
    with fd.connect(workers=2) as client:
        got = fd.score_table(path, refs=["ref", "ref2"], group_by=["system", "pair"],
                             metrics=metrics, batch_size=13, partition_rows=20, client=client)
        stats = fd.segment_statistics(path, refs=["ref", "ref2"], metric=metrics[1],
                                      batch_size=13, partition_rows=20, client=client)
        import dask.dataframe as dd

        frame = dd.from_pandas(table.to_pandas(), npartitions=3)
        sentences = fd.sentence_scores(frame, refs=["ref", "ref2"], metric=metrics[0],
                                       batch_size=13).compute()["sentence_nist"].to_numpy()
    assert got.equals(expected)
    hyps, refs = _rows(table, [True] * table.num_rows)
    assert (stats == metrics[1].segment_statistics(hyps, refs)).all()
    assert (sentences == metrics[0].sentence_scores(hyps, refs)).all()


def test_cli_table_mode_in_batches_equals_each_group_alone(tmp_path, capsys):
    import json

    from fastbleu.cli import main

    table = _table(seed=13)
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=25)
    status = main([str(path), "--hyp-column", "hyp", "--ref-column", "ref", "--ref-column",
                   "ref2", "--group-by", "pair", "-m", "nist", "--batch-size", "10", "-w", "6",
                   "--quiet"])
    out, err = capsys.readouterr()
    assert status == 0 and "batch" not in err
    for record in json.loads(out):
        mask = [p == record["pair"] for p in table["pair"].to_pylist()]
        expected = NIST().corpus_score(*_rows(table, mask))
        assert record["score"] == json.loads(expected.format(6, signature="x:y",
                                                             is_json=True))["score"]


@needs_wmt22
def test_wmt22_table_of_two_pairs_in_batches_equals_each_system_and_nltk():
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    rows = {"pair": [], "system": [], "hyp": [], "ref": [], "ref2": []}
    alone = {}
    for pair in ("de-en", "en-de"):
        refs = [read_lines(p)[:400] for p in wmt22_references(pair)][:2]
        for system in wmt22_systems(pair)[:2]:
            hyps = read_lines(wmt22_system(pair, system))[:400]
            rows["pair"] += [pair] * 400
            rows["system"] += [system] * 400
            rows["hyp"] += hyps
            rows["ref"] += refs[0]
            rows["ref2"] += refs[1]
            alone[pair, system] = (hyps, refs)
    result = score_table(pa.table(rows), refs=["ref", "ref2"], group_by=["pair", "system"],
                         metrics=["nist"], batch_size=300)
    tok = Tokenizer13a()
    for row in result.to_pylist():
        hyps, refs = alone[row["pair"], row["system"]]
        assert row["score"] == NIST().corpus_score(hyps, refs).score
        if row["system"] == wmt22_systems(row["pair"])[0]:
            expected = nltk_nist.corpus_nist(
                [[tok(s[i]).split() for s in refs] for i in range(len(hyps))],
                [tok(h).split() for h in hyps])
            assert row["score"] == pytest.approx(expected, rel=1e-12)


def test_list_column_of_references_in_batches_equals_each_group_alone():
    table = _table(seed=21)
    lists = [[r for r in (a, b) if r is not None]
             for a, b in zip(table["ref"].to_pylist(), table["ref2"].to_pylist())]
    listed = table.append_column("refs", pa.array(lists, pa.list_(pa.string())))
    result = score_table(listed, refs="refs", group_by="pair", metrics=["nist"], batch_size=8)
    for row in result.to_pylist():
        mask = [p == row["pair"] for p in table["pair"].to_pylist()]
        hyps, refs = _rows(table, mask)
        # a list holds the present references, in order: the same streams, the same counts
        present = [[x for x in pair if x is not None] for pair in zip(*refs)]
        packed = [[p[k] if len(p) > k else None for p in present] for k in range(2)]
        assert row["score"] == NIST().corpus_score(hyps, packed).score
