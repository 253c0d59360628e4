"""Accumulators: streamed and merged statistics score exactly as the concatenated corpus.

Every metric on the seam (BLEU, chrF, TER) is checked the same way: pieces
of a real corpus (with empty pieces and references missing in some segments)
are added in several update/merge orders, through pickling and through a
process pool, and the score and signature must equal the metric's
``corpus_score`` of the whole input -- and sacrebleu's.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle

import pytest
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.metrics import CHRF as SacreCHRF
from sacrebleu.metrics import TER as SacreTER

from testkit.data import DATA, read_lines
from fastbleu import BLEU, CHRF
from fastbleu.metrics import TER
from fastbleu.metrics.accumulator import Accumulator

N = 24
HYPS = read_lines(DATA / "sample.sys-A.en")[:N]
REF_A = read_lines(DATA / "sample.ref-A.en")[:N]
# reference B is missing in every third segment: nrefs of a piece is 1, 2 or var
REF_B = [None if i % 3 == 0 else r for i, r in enumerate(read_lines(DATA / "sample.ref-B.en")[:N])]
REFS = [REF_A, REF_B]

METRICS = {
    "bleu": (lambda: BLEU(), lambda: SacreBLEU()),
    "bleu-options": (lambda: BLEU(max_ngram_order=3, smooth_method="floor", lowercase=True),
                     lambda: SacreBLEU(max_ngram_order=3, smooth_method="floor",
                                       lowercase=True)),
    "chrf": (lambda: CHRF(), lambda: SacreCHRF()),
    "chrf++": (lambda: CHRF(word_order=2), lambda: SacreCHRF(word_order=2)),
    "ter": (lambda: TER(), lambda: SacreTER()),
    "ter-normalized": (lambda: TER(normalized=True, case_sensitive=True),
                       lambda: SacreTER(normalized=True, case_sensitive=True)),
}

#: Cut points of the corpus into pieces (repeated cuts make empty pieces).
CUTS = [(), (12,), (0, 5, 5, 17, N), (1, 2, 3, 20, 23)]


def pieces(cuts, hyps=HYPS, refs=REFS):
    bounds = [0, *cuts, len(hyps)]
    return [(hyps[a:b], [r[a:b] for r in refs]) for a, b in zip(bounds, bounds[1:])]


def expected(metric_name):
    make_fast, make_sacre = METRICS[metric_name]
    fast = make_fast()
    score = fast.corpus_score(HYPS, REFS)
    return make_fast, score, fast.get_signature().format(), make_sacre


def assert_same(acc, score, signature):
    got = acc.score()
    assert got.score == score.score
    assert str(got) == str(score)
    assert acc.signature().format() == signature
    assert acc.n_segments == N


@pytest.mark.parametrize("metric_name", METRICS)
@pytest.mark.parametrize("cuts", CUTS)
def test_update_and_merge_orders_equal_the_corpus_score(metric_name, cuts):
    make, score, signature, _ = expected(metric_name)
    parts = pieces(cuts)
    # one accumulator, updated piece by piece
    acc = make().accumulator()
    for hyps, refs in parts:
        acc.update(hyps, refs)
    assert_same(acc, score, signature)
    # one accumulator per piece, merged in reverse, then as a tree
    singles = [make().accumulator().update(h, r) for h, r in parts]
    merged = make().accumulator()
    for part in reversed(singles):
        merged.merge(part)
    assert_same(merged, score, signature)
    while len(singles) > 1:
        singles = [singles[i].merge(singles[i + 1]) if i + 1 < len(singles) else singles[i]
                   for i in range(0, len(singles), 2)]
    assert_same(singles[0], score, signature)


@pytest.mark.parametrize("metric_name", METRICS)
def test_agrees_with_sacrebleu(metric_name):
    make, _, _, make_sacre = expected(metric_name)
    acc = make().accumulator()
    for hyps, refs in pieces((7, 7, 19)):
        acc.update(hyps, refs)
    sacre = make_sacre()
    want = sacre.corpus_score(HYPS, REFS)
    assert acc.score().score == want.score
    strip = (lambda s: s.rsplit("|version:", 1)[0])
    assert strip(acc.signature().format()) == strip(sacre.get_signature().format())
    assert "nrefs:var" in acc.signature().format()


@pytest.mark.parametrize("metric_name", ["bleu", "chrf", "ter"])
def test_pickling_round_trip_mid_stream(metric_name):
    make, score, signature, _ = expected(metric_name)
    first, second = pieces((10,))
    acc = make().accumulator().update(*first)
    restored = pickle.loads(pickle.dumps(acc))
    assert restored.statistics.tolist() == acc.statistics.tolist()
    restored.update(*second)  # its metric is rebuilt from key and options
    assert_same(restored, score, signature)
    assert_same(pickle.loads(pickle.dumps(restored)), score, signature)


def _score_piece(job):
    accumulator, hyps, refs = job
    return accumulator.update(hyps, refs)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork() here")
@pytest.mark.parametrize("metric_name", ["bleu", "chrf", "ter"])
def test_process_pool_partial_results_merge(metric_name):
    make, score, signature, _ = expected(metric_name)
    jobs = [(make().accumulator(), h, r) for h, r in pieces((3, 11, 11, 20))]
    with multiprocessing.get_context("fork").Pool(2) as pool:
        partial = pool.map_async(_score_piece, jobs).get(timeout=120)
    total = make().accumulator()
    for acc in partial:
        total.merge(acc)
    assert_same(total, score, signature)


@pytest.mark.parametrize("metric_name", ["bleu", "chrf", "ter"])
def test_empty(metric_name):
    make = METRICS[metric_name][0]
    acc = make().accumulator()
    with pytest.raises(ValueError, match="update the accumulator first"):
        acc.signature()
    acc.update([], [[], []])
    metric = make()
    assert str(acc.score()) == str(metric.corpus_score([], [[], []]))
    assert acc.signature().format() == metric.get_signature().format()  # nrefs:2
    # an empty piece with other streams does not outvote a piece with segments
    acc.update(HYPS[:2], [REF_A[:2]])
    assert acc.num_refs == 1
    assert str(acc.score()) == str(make().corpus_score(HYPS[:2], [REF_A[:2]]))
    assert make().accumulator().merge(make().accumulator()).n_segments == 0


def test_refuses_other_metrics_and_options():
    bleu = BLEU().accumulator()
    for other in (CHRF().accumulator(), TER().accumulator(),
                  BLEU(max_ngram_order=3).accumulator(), BLEU(tokenize="intl").accumulator()):
        with pytest.raises(ValueError, match="cannot merge accumulators") as info:
            bleu.merge(other)
        assert "\n" not in str(info.value)
    with pytest.raises(TypeError, match="another Accumulator"):
        bleu.merge(BLEU())
    with pytest.raises(TypeError, match="fastbleu metric"):
        Accumulator(SacreBLEU())
    metric = BLEU()
    acc = metric.accumulator()
    metric.max_ngram_order = 2
    with pytest.raises(ValueError, match="options changed"):
        acc.update(HYPS[:1], [REF_A[:1]])
    with pytest.raises(ValueError):  # the metric's own check: streams as long as hypotheses
        BLEU().accumulator().update(HYPS[:2], [REF_A[:3]])


def test_cached_references_and_in_place_add():
    metric = BLEU(references=[REF_A[:5]])
    acc = metric.accumulator().update(HYPS[:5])
    other = BLEU().accumulator().update(HYPS[5:8], [REF_A[5:8]])
    acc += other
    assert str(acc.score()) == str(BLEU().corpus_score(HYPS[:8], [REF_A[:8]]))
    assert "Accumulator(bleu, 8 segments" in repr(acc)


def test_streamed_bleu_orders_from_the_statistics():
    acc = BLEU().accumulator()
    for hyps, refs in pieces((4, 4, 15)):
        acc.update(hyps, refs)
    formula = acc.formula
    assert formula.cumulative_scores(acc.statistics).tolist() == \
        BLEU().cumulative_scores(HYPS, REFS).tolist()
    assert formula.individual_scores(acc.statistics).tolist() == \
        BLEU().individual_scores(HYPS, REFS).tolist()
