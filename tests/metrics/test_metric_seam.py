"""The metric seam: ``fastbleu.metrics`` (registry, base classes) and ``BLEUFormula``.

What is held against what:

* ``BLEUFormula.score`` against sacrebleu 2.6's ``BLEU.compute_bleu`` on
  random rows, for every smoothing method, value, order and effective order;
  ``ref_length="average"`` and ``weights`` against plain-Python references;
* ``scores`` and ``resampled_scores`` (int64 and float32 sums) against
  ``score`` (and sacrebleu's float32 path) row by row;
* ``check_rows`` against every kind of bad input, with its message;
* the formula as a value (frozen, hashable, picklable), the registry, and
  the public pieces of ``BLEU``, ``BLEUScore`` and ``significance`` built on it.
"""

from __future__ import annotations

import dataclasses
import math
import pickle
import subprocess
import sys

import numpy as np
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU
from fastbleu.significance import tests as sig
from fastbleu._kernels.bleu.counting import AVERAGE_SCALE
from fastbleu.metrics import METRICS, get_metric, metric_class
from fastbleu.metrics.base import Formula, Metric, Score, Signature
from fastbleu.metrics.bleu.formula import BLEUFormula
from fastbleu.metrics.bleu.score import BLEUSignature
from fastbleu.inputs.text import as_text_column
from testkit.marks import slow

HYPS = ["The cat sat on the mat.", "A quick brown fox jumps over the lazy dog.",
        "Nothing matches here at all", "", "the the the the"]
REFS = [["The cat is on the mat.", "The quick brown fox jumped over the lazy dog.",
         "Something else entirely", "Empty hypothesis", "the cat"]]

SMOOTHING = [("none", None), ("floor", None), ("floor", 0.05), ("floor", 0.5), ("add-k", None),
             ("add-k", 2), ("add-k", 0.5), ("exp", None)]


def _random_rows(rng, n, order, scale=40, zeros=0.3):
    """Rows of plausible statistics: totals shrink with the order, matches <= totals."""
    hyp = rng.integers(0, scale, size=n)
    ref = np.maximum(hyp + rng.integers(-5, 6, size=n), 0)
    totals = np.stack([np.maximum(hyp - k, 0) for k in range(order)], axis=1)
    matches = np.floor(totals * rng.uniform(0, 1, size=(n, order))).astype(np.int64)
    matches[rng.uniform(size=n) < zeros] = 0
    return np.concatenate([hyp[:, None], ref[:, None], matches, totals],
                          axis=1).astype(np.int64)


def _fields(score):
    return (score.score, score.bp, list(score.precisions), list(score.counts),
            list(score.totals), score.sys_len, score.ref_len, str(score))


# -- score against sacrebleu ---------------------------------------------------------------

@pytest.mark.parametrize("smooth_method,smooth_value", SMOOTHING)
@pytest.mark.parametrize("effective_order", [False, True])
def test_score_equals_sacrebleu_compute_bleu(smooth_method, smooth_value, effective_order):
    rng = np.random.default_rng(11)
    for order in range(1, 7):
        formula = BLEUFormula(order, smooth_method, smooth_value, effective_order)
        for row in _random_rows(rng, 60, order).tolist():
            theirs = SacreBLEU.compute_bleu(row[2:2 + order], row[2 + order:], row[0], row[1],
                                            smooth_method, smooth_value, effective_order,
                                            order)
            assert _fields(formula.score(row)) == _fields(theirs), (row, formula)


def test_score_with_average_ref_length_divides_the_scaled_length():
    """Rows of ``ref_length="average"`` carry ``AVERAGE_SCALE * ref_len``; a whole mean
    gives sacrebleu's score for that length exactly."""
    rng = np.random.default_rng(4)
    formula = BLEUFormula(ref_length="average")
    for row in _random_rows(rng, 100, 4).tolist():
        scaled = [row[0], row[1] * AVERAGE_SCALE, *row[2:]]
        ours = formula.score(scaled)
        theirs = SacreBLEU.compute_bleu(row[2:6], row[6:], row[0], row[1], "exp")
        assert (ours.score, ours.bp, ours.precisions) == \
            (theirs.score, theirs.bp, theirs.precisions)
        assert ours.ref_len == row[1]


def test_score_with_weights_is_the_weighted_geometric_mean():
    rng = np.random.default_rng(5)
    weights = (0.4, 0.3, 0.2, 0.1)
    formula = BLEUFormula(weights=weights, smooth_method="floor")
    plain = BLEUFormula(smooth_method="floor")
    for row in _random_rows(rng, 100, 4, zeros=0).tolist():
        ours, base = formula.score(row), plain.score(row)
        if not base.score:
            continue
        logs = [math.log(p) for p in base.precisions]
        expected = base.bp * math.exp(sum(w * x for w, x in zip(weights, logs)) / sum(weights))
        assert ours.score == pytest.approx(expected, rel=1e-12)


# -- scores and resampled_scores against score -------------------------------------------

FORMULAS = [BLEUFormula(), BLEUFormula(smooth_method="none"),
            BLEUFormula(smooth_method="floor", smooth_value=0.2),
            BLEUFormula(smooth_method="add-k", smooth_value=2, max_order=3),
            BLEUFormula(effective_order=True, max_order=6),
            BLEUFormula(weights=(1, 2, 0, 1)), BLEUFormula(ref_length="average")]


# 4,000 rows a formula in the quick run, 20,000 with -m slow (issue 28: a second a formula).
@pytest.mark.parametrize("n_rows", [4000, slow(20000)])
@pytest.mark.parametrize("formula", FORMULAS, ids=repr)
def test_scores_equal_score_row_by_row(formula, n_rows):
    rows = _random_rows(np.random.default_rng(6), n_rows, formula.max_order)
    scores = formula.scores(rows)
    assert scores.dtype == np.float64 and scores.shape == (rows.shape[0],)
    assert scores.tolist() == [formula.score(row).score for row in rows]
    assert formula.scores(rows[:0]).shape == (0,)


@pytest.mark.parametrize("formula", FORMULAS, ids=repr)
def test_resampled_scores_equal_score_on_each_sum(formula):
    rng = np.random.default_rng(7)
    n_systems, k, width = 3, 50, formula.row_width
    rows = [_random_rows(rng, 400, formula.max_order) for _ in range(n_systems)]
    idx = rng.integers(0, 400, size=(k, 400))
    sums = np.concatenate([block[idx].sum(axis=1) for block in rows], axis=1)
    assert sums.shape == (k, n_systems * width) and sums.dtype == np.int64
    out = np.full((n_systems, k + 5), np.nan)
    formula.resampled_scores(sums, n_systems, out, 5)
    assert np.isnan(out[:, :5]).all()
    for s in range(n_systems):
        expected = [formula.score(sums[b, s * width:(s + 1) * width]).score for b in range(k)]
        assert out[s, 5:].tolist() == expected


@pytest.mark.parametrize("options", [{}, {"smooth_method": "floor"}, {"smooth_method": "none"},
                                     {"smooth_method": "add-k", "smooth_value": 2},
                                     {"effective_order": True, "max_ngram_order": 3}])
def test_float32_resampled_scores_equal_sacrebleus_float32_path(options):
    """float32 sums are scored as sacrebleu's ``compute_bleu`` scores numpy float32 scalars."""
    formula = BLEU(**options).formula
    sacre = SacreBLEU(**options)
    rng = np.random.default_rng(8)
    n_systems, k, width = 2, 40, formula.row_width
    rows = [_random_rows(rng, 300, formula.max_order, scale=400000).astype(np.float32)
            for _ in range(n_systems)]
    idx = rng.integers(0, 300, size=(k, 300))
    sums = np.concatenate([np.stack([block[i].sum(0) for i in idx]) for block in rows], axis=1)
    assert sums.dtype == np.float32
    out = np.empty((n_systems, k))
    formula.resampled_scores(sums, n_systems, out, 0)
    for s in range(n_systems):
        expected = [sacre._compute_score_from_stats(list(sums[b, s * width:(s + 1) * width]))
                    .score for b in range(k)]
        assert out[s].tolist() == expected


# -- check_rows --------------------------------------------------------------------------

@pytest.mark.parametrize("stats,error,message", [
    (np.full((3, 10), 0.5), ValueError, "must hold whole counts"),
    (np.zeros((3, 10), dtype=bool), TypeError, "must be an integer array"),
    (np.zeros((3, 10), dtype=complex), TypeError, "must be an integer array"),
    ([["a"] * 10], TypeError, "must be an integer array"),
    (np.zeros(10, dtype=np.int64), ValueError, r"must be 2-D, one row per segment; got shape \(10,\)"),
    (np.zeros((2, 3, 10), dtype=np.int64), ValueError, "must be 2-D"),
    (np.zeros((3, 12), dtype=np.int64), ValueError,
     "have 12 columns; max_ngram_order 4 needs 10"),
    (np.array([[1, 1, 1, 0, 0, 0, 1, 0, 0, 0], [1, -2, 0, 0, 0, 0, 1, 0, 0, 0]]), ValueError,
     r"negative counts \(row 1, ref_len = -2\)"),
    (np.array([[3, 3, 1, 2, 0, 0, 3, 1, 0, 0]]), ValueError,
     "row 0: match_2 = 2 exceeds total_2 = 1"),
    (np.array([[3, 3, 1, 0, 0, 0, 3, 4, 0, 0]]), ValueError,
     r"row 0: total_2 = 4 exceeds hyp_len = 3 \(totals must not exceed hyp_len\)"),
    (np.full((1, 10), 2 ** 63, dtype=np.uint64), ValueError, "too large for int64"),
    (np.full((1, 10), 2.0 ** 63), ValueError, "too large for int64"),
])
def test_check_rows_rejects_bad_statistics(stats, error, message):
    with pytest.raises(error, match=message):
        BLEUFormula().check_rows(stats)


def test_check_rows_of_one_row():
    row = np.array([3, 3, 1, 0, 0, 0, 3, 2, 1, 0])
    assert np.array_equal(BLEUFormula().check_rows(row, ndim=1), row)
    with pytest.raises(ValueError, match=r"must be one row of 10 counts; got shape \(2, 10\)"):
        BLEUFormula().check_rows(np.zeros((2, 10), dtype=np.int64), ndim=1)


def test_score_columns_are_the_tables_result_columns():
    pytest.importorskip("pyarrow")
    formula = BLEUFormula(ref_length="average")
    totals = _random_rows(np.random.default_rng(4), 3, 4)
    scores = [formula.score(row) for row in totals]
    signatures = [BLEU().signature(1)] * 3
    columns = dict(formula.score_columns(totals, scores, signatures))
    assert list(columns) == ["score", "bp", "ratio", "sys_len", "ref_len", "counts", "totals",
                             "precisions", "signature"]
    assert columns["score"].to_pylist() == [s.score for s in scores]
    assert str(columns["ref_len"].type) == "double"
    assert columns["totals"].to_pylist() == totals[:, 6:].tolist()


def test_check_rows_names_the_array():
    with pytest.raises(ValueError, match="statistics of system 2 have 9 columns"):
        BLEUFormula().check_rows(np.zeros((1, 9), dtype=np.int32), "statistics of system 2")


def test_check_rows_returns_c_contiguous_int64():
    rows = _random_rows(np.random.default_rng(9), 50, 4)
    assert BLEUFormula().check_rows(rows) is rows
    for given in (rows.astype(np.int32), np.asfortranarray(rows), rows.astype(np.uint16),
                  rows.tolist()):
        checked = BLEUFormula().check_rows(given)
        assert checked.dtype == np.int64 and checked.flags.c_contiguous
        assert np.array_equal(checked, rows)
    assert BLEUFormula().check_rows(np.zeros((0, 10), dtype=np.int64)).shape == (0, 10)


# -- the formula as a value --------------------------------------------------------------

def test_formula_is_frozen_hashable_and_pickles():
    formula = BLEUFormula(3, "floor", 0.2, True, (1, 2, 3), "shortest")
    with pytest.raises(dataclasses.FrozenInstanceError):
        formula.max_order = 4
    again = pickle.loads(pickle.dumps(formula))
    assert again == formula and hash(again) == hash(formula)
    assert len({formula, again, BLEUFormula()}) == 2
    assert again.weights == (1.0, 2.0, 3.0) and again.row_width == 8
    rows = _random_rows(np.random.default_rng(10), 100, 3)
    assert np.array_equal(again.scores(rows), formula.scores(rows))
    assert isinstance(formula, Formula)


def test_formula_layout_and_fields():
    formula = BLEUFormula(max_order=2, ref_length="average")
    assert formula.row_width == 6
    assert formula.statistics_names == ("hyp_len", "ref_len", "match_1", "match_2", "total_1",
                                        "total_2")
    row = np.arange(6)
    assert formula.matches(row).tolist() == [2, 3] and formula.totals(row).tolist() == [4, 5]
    assert formula.sentence_formula() == dataclasses.replace(formula, effective_order=True)
    sentence = formula.sentence_formula()
    assert sentence.sentence_formula() is sentence
    assert (formula.name, formula.sentence_column) == ("BLEU", "sentence_bleu")


@pytest.mark.parametrize("options", [{}, {"smooth_method": "floor"},
                                     {"smooth_method": "add-k", "smooth_value": 3},
                                     {"effective_order": True, "ref_length": "shortest"},
                                     {"weights": [0.5, 0.5, 0.25, 0.25]}])
def test_signature_fields_are_what_the_signature_prints(options):
    bleu = BLEU(**options)
    info = bleu.signature(1).info
    assert bleu.formula.signature_fields() == {key: info[key] for key in
                                               ("eff", "smooth", "reflen", "weights")}


@pytest.mark.parametrize("options,error,message", [
    ({"smooth_method": "nope"}, ValueError, "unknown smooth_method"),
    ({"smooth_value": -1.0, "smooth_method": "floor"}, ValueError, "finite number >= 0"),
    ({"ref_length": "longest"}, ValueError, "unknown ref_length"),
    ({"max_order": 0}, ValueError, "max_ngram_order must be at least 1"),
    ({"max_order": 2.0}, TypeError, "max_ngram_order must be an int"),
    ({"weights": (1, 1)}, ValueError, "weights has 2 values but max_ngram_order is 4"),
    ({"weights": (0, 0, 0, 0)}, ValueError, "at least one of them positive"),
])
def test_formula_refuses_bad_options_as_bleu_does(options, error, message):
    with pytest.raises(error, match=message):
        BLEUFormula(**options)
    bleu_options = {("max_ngram_order" if k == "max_order" else k): v for k, v in options.items()}
    with pytest.raises(error, match=message):
        BLEU(**bleu_options)


# -- the registry and BLEU on the seam ---------------------------------------------------

def test_get_metric_builds_an_equivalent_bleu():
    options = {"tokenize": "intl", "smooth_method": "floor", "lowercase": True}
    metric = get_metric("bleu", **options)
    plain = BLEU(**options)
    assert isinstance(metric, BLEU) and isinstance(metric, Metric)
    assert metric.formula == plain.formula
    ours, theirs = metric.corpus_score(HYPS, REFS), plain.corpus_score(HYPS, REFS)
    assert str(ours) == str(theirs)
    assert str(metric.get_signature()) == str(plain.get_signature())
    assert get_metric("BLEU").formula == BLEUFormula() and metric_class("bleu") is BLEU
    assert set(METRICS) == {"bleu", "chrf", "ter", "nist"}
    from fastbleu.cli.parser import METRIC_NAMES

    assert set(METRIC_NAMES) == set(METRICS)  # -m offers every metric, and no other
    for key in METRICS:
        metric = get_metric(key)
        assert metric.key == key and get_metric(key, **metric.options()).options() == \
            metric.options()
    with pytest.raises(ValueError, match="unknown metric .meteor.; available: bleu, chrf, ter"):
        get_metric("meteor")


def test_importing_the_metrics_package_does_not_start_numba():
    code = ("import sys, fastbleu.metrics as m, fastbleu.metrics.base; "
            "assert 'numba' not in sys.modules, 'numba'; m.get_metric; print('ok')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr


def test_bleu_formula_follows_its_attributes():
    bleu = BLEU()
    first = bleu.formula
    assert bleu.formula is first
    bleu.effective_order = True  # sacrebleu's attributes are plain; so are ours, for now
    assert bleu.formula == dataclasses.replace(first, effective_order=True)


def test_column_statistics_equal_segment_statistics():
    bleu = BLEU(tokenize="char", ref_length="average")
    hyps = as_text_column(HYPS, "hyps")
    refs = [as_text_column(stream, "refs") for stream in REFS]
    assert np.array_equal(bleu.column_statistics(hyps, refs), bleu.segment_statistics(HYPS, REFS))
    intl = bleu.column_statistics(hyps, refs, tokenizer="intl")
    assert np.array_equal(intl, BLEU(tokenize="intl", ref_length="average")
                          .segment_statistics(HYPS, REFS))


def test_bleu_signature_is_public_and_paired_signature_copies():
    bleu = BLEU()
    signature = bleu.signature(2, "intl")
    assert isinstance(signature, Signature)
    assert signature.format() == BLEUSignature(2, False, "intl",
                                               bleu.formula.signature_fields()).format()
    assert "tok:13a" in bleu.signature(1).format()
    paired = sig.paired_signature(signature, "ar", 10000, "12345", n_confidence=1000)
    assert paired.format() == ("nrefs:2|bs:1000|ar:10000|seed:12345|case:mixed|eff:no|tok:intl|"
                               f"smooth:exp|version:{signature.info['version']}")
    assert signature.format() == bleu.signature(2, "intl").format()  # unchanged


def test_score_confidence_properties():
    score = BLEU().corpus_score(HYPS, REFS)
    assert isinstance(score, Score)
    assert (score.mean, score.ci) == (None, None)
    score.set_confidence(12.5, 0.75)
    assert (score.mean, score.ci, score._mean, score._ci) == (12.5, 0.75, 12.5, 0.75)
    assert "(μ = 12.50 ± 0.75)" in score.format()


# -- significance on statistics + a formula ----------------------------------------------

def _systems(n=3, segments=300):
    rng = np.random.default_rng(12)
    return [_random_rows(rng, segments, 4) for _ in range(n)]


def _same(a, b):
    assert [dataclasses.astuple(r) for r in a] == [dataclasses.astuple(r) for r in b]


def test_paired_test_equals_the_named_tests():
    stats = _systems()
    formula = BLEUFormula()
    _same(sig.paired_test(stats, formula, "bs", n_samples=100),
          sig.paired_bootstrap(stats, n_samples=100))
    _same(sig.paired_test(stats, formula, "bs", n_samples=100, sacrebleu_compat=True),
          sig.paired_bootstrap(stats, n_samples=100, sacrebleu_compat=True))
    _same(sig.paired_test(stats, formula, "ar", n_samples=200, n_confidence=50, seed=3),
          sig.paired_ar(stats, n_samples=200, n_confidence=50, seed=3))


def test_paired_test_checks_its_inputs():
    stats, formula = _systems(2), BLEUFormula()
    with pytest.raises(ValueError, match="unknown paired test 'x'"):
        sig.paired_test(stats, formula, "x")
    with pytest.raises(ValueError, match="n_samples must be at least 1"):
        sig.paired_test(stats, formula, n_samples=0)
    with pytest.raises(ValueError, match="baseline and at least one system"):
        sig.paired_test(stats[:1], formula)
    with pytest.raises(ValueError, match="statistics of system 1 have 8 columns"):
        sig.paired_test([stats[0], stats[1][:, :8]], formula)
    with pytest.raises(ValueError, match="system 1 has 299 segments but system 0 has 300"):
        sig.paired_test([stats[0], stats[1][1:]], formula)
    with pytest.raises(ValueError, match="n_confidence is for the 'ar' test"):
        sig.paired_test(stats, formula, "bs", n_confidence=10)


def test_metric_alias_and_defaults():
    stats = _systems(2)
    bleu = BLEU(smooth_method="floor")
    _same(sig.paired_bootstrap(stats, metric=bleu, n_samples=50),
          sig.paired_bootstrap(stats, bleu=bleu, n_samples=50))
    with pytest.raises(TypeError, match="not both"):
        sig.paired_bootstrap(stats, metric=bleu, bleu=bleu)
    with pytest.raises(TypeError, match="metric must be a fastbleu metric"):
        sig.paired_ar(stats, metric="bleu")
    assert (sig.default_samples("bs"), sig.default_samples("ar")) == (1000, 10000)
    assert sig.check_count(np.int32(5), "n") == 5
    with pytest.raises(TypeError, match="n must be an int"):
        sig.check_count(5.0, "n")
    result = sig.confidence_interval(stats[0], metric=bleu, n_samples=30)
    score = sig.score_with_confidence(stats[0], bleu=bleu, n_samples=30)
    assert (result.score, result.mean, result.ci) == (score.score, score.mean, score.ci)
