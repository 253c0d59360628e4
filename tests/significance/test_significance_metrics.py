"""Significance tests over several metrics at once (issue 13): one set of draws for every
metric, as sacrebleu's ``PairedTest`` and ``corpus_score(n_bootstrap=...)`` draw them, and
with ``sacrebleu_compat`` sacrebleu's numbers (float32 sums; float32 chrF and TER scores)
to 1e-9.
"""

from __future__ import annotations

import numpy as np
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU, CHRF as SacreCHRF, TER as SacreTER
from sacrebleu.significance import PairedTest

from testkit.data import DATA, needs_wmt22, read_lines, wmt22_references, wmt22_system
from fastbleu import BLEU, CHRF, TER
from fastbleu.significance import tests as significance

N = 200


@pytest.fixture(scope="module")
def sample():
    refs = [read_lines(DATA / "sample.ref-A.en")[:N], read_lines(DATA / "sample.ref-B.en")[:N]]
    systems = [read_lines(DATA / f"sample.sys-{name}.en")[:N] for name in "AB"]
    systems.append([line.lower() for line in systems[1]])
    return systems, refs


def cli_same(ours, theirs) -> None:
    """A fastbleu Result against sacrebleu's, field by field, to 1e-9."""
    for field, value in theirs.__dict__.items():
        mine = getattr(ours, field)
        assert (mine is None) == (value is None), field
        if value is not None:
            assert mine == pytest.approx(float(value), abs=1e-9), field


def _sacrebleu_paired(systems, refs, test, n, n_confidence=-1):
    metrics = {"CHRF": SacreCHRF(word_order=2, references=refs),
               "BLEU": SacreBLEU(references=refs)}
    named = [(f"s{k}", system) for k, system in enumerate(systems)]
    _, scores = PairedTest(named, metrics, None, test_type=test, n_samples=n,
                           n_ar_confidence=n_confidence)()
    return [scores["chrF2++"], scores["BLEU"]]


def test_paired_bootstrap_of_two_metrics_is_sacrebleus(sample):
    systems, refs = sample
    ours = significance.paired_bootstrap(systems, refs, metrics=[CHRF(word_order=2), BLEU()],
                                         n_samples=120, sacrebleu_compat=True)
    theirs = _sacrebleu_paired(systems, refs, "bs", 120)
    for metric_ours, metric_theirs in zip(ours, theirs):
        assert len(metric_ours) == len(systems)
        for mine, result in zip(metric_ours, metric_theirs):
            cli_same(mine, result)


def test_paired_ar_of_two_metrics_with_confidence_is_sacrebleus(sample):
    systems, refs = sample
    ours = significance.paired_ar(systems, refs, metrics=[CHRF(word_order=2), BLEU()],
                                  n_samples=200, n_confidence=60, sacrebleu_compat=True)
    theirs = _sacrebleu_paired(systems, refs, "ar", 200, 60)
    for metric_ours, metric_theirs in zip(ours, theirs):
        for mine, result in zip(metric_ours, metric_theirs):
            cli_same(mine, result)


@pytest.mark.parametrize("compat", [False, True], ids=["exact", "compat"])
@pytest.mark.parametrize("test", ["bs", "ar"])
def test_one_draw_for_all_metrics_changes_no_number(sample, test, compat):
    """Several metrics on shared draws give each metric's own test, number for number."""
    systems, refs = sample
    metrics = [BLEU(), CHRF(), CHRF(word_order=2, beta=1)]
    stats = [[m.segment_statistics(system, refs) for system in systems] for m in metrics]
    together = significance.paired_tests(stats, [m.formula for m in metrics], test,
                                         n_samples=50, sacrebleu_compat=compat)
    for blocks, metric, results in zip(stats, metrics, together):
        alone = significance.paired_test(blocks, metric.formula, test, n_samples=50,
                                         sacrebleu_compat=compat)
        assert alone == results


@pytest.mark.parametrize("compat", [False, True], ids=["exact", "compat"])
def test_confidence_of_several_metrics(sample, compat):
    """Each metric's interval is its own (one draw, the same numbers); with compat it is
    sacrebleu's ``corpus_score(n_bootstrap=...)``, float32 chrF scores and all."""
    systems, refs = sample
    metrics = [BLEU(), CHRF(), CHRF(word_order=2, eps_smoothing=True)]
    together = significance.scores_with_confidence(systems[1], refs, metrics=metrics,
                                                   n_samples=150, sacrebleu_compat=compat)
    for metric, score in zip(metrics, together):
        alone = significance.score_with_confidence(systems[1], refs, metric=type(metric)(
            **metric.options()), n_samples=150, sacrebleu_compat=compat)
        assert (score.score, score.mean, score.ci) == (alone.score, alone.mean, alone.ci)
        assert "bs:150" in metric.get_signature().format()
    if compat:
        oracles = [SacreBLEU(), SacreCHRF(), SacreCHRF(word_order=2, eps_smoothing=True)]
        for score, oracle in zip(together, oracles):
            theirs = oracle.corpus_score(systems[1], refs, n_bootstrap=150)
            assert score.score == pytest.approx(theirs.score, abs=1e-9)
            assert score.mean == pytest.approx(float(theirs._mean), abs=1e-9)
            assert score.ci == pytest.approx(float(theirs._ci), abs=1e-9)


def test_compat_scores_are_summarised_in_float32_for_chrf(sample):
    """sacrebleu's chrF of float32 sums is a float32: the mean of the bootstrap scores is
    float32's (pairwise) mean, not float64's, and fastbleu's compat follows it."""
    systems, refs = sample
    chrf = CHRF()
    assert chrf.formula.compat_score_dtype == np.float32
    assert BLEU().formula.compat_score_dtype == np.float64
    result = significance.paired_bootstrap(systems[:2], refs, metric=chrf, n_samples=100,
                                           sacrebleu_compat=True)
    for r in result:
        assert r.mean == float(np.float32(r.mean)) and r.ci == float(np.float32(r.ci))


def test_several_metrics_arguments(sample):
    systems, refs = sample
    with pytest.raises(TypeError, match="not both"):
        significance.paired_bootstrap(systems, refs, metric=BLEU(), metrics=[CHRF()])
    with pytest.raises(ValueError, match="metrics is empty"):
        significance.paired_bootstrap(systems, refs, metrics=[])
    with pytest.raises(TypeError, match="metrics must be a list"):
        significance.paired_ar(systems, refs, metrics=CHRF())
    with pytest.raises(TypeError, match="metrics\\[\\] must be"):
        significance.paired_ar(systems, refs, metrics=[CHRF(), "bleu"])
    stats = [BLEU().segment_statistics(system, refs) for system in systems]
    with pytest.raises(TypeError, match="statistics arrays belong to one metric"):
        significance.paired_bootstrap(stats, metrics=[BLEU(), CHRF()])
    with pytest.raises(TypeError, match="formulas must be a list"):
        significance.paired_tests([stats], BLEU().formula)
    chrf_stats = [CHRF().segment_statistics(system[:10], [r[:10] for r in refs])
                  for system in systems]
    with pytest.raises(ValueError, match="same segments"):
        significance.paired_tests([stats, chrf_stats], [BLEU().formula, CHRF().formula])
    one = significance.paired_bootstrap(systems, refs, metrics=[CHRF()], n_samples=10)
    assert len(one) == 1 and len(one[0]) == len(systems)
    assert significance.paired_bootstrap(systems, refs, bleu=BLEU(), n_samples=10)[0].score \
        == pytest.approx(SacreBLEU().corpus_score(systems[0], refs).score, abs=1e-9)


@needs_wmt22
def test_wmt22_paired_bootstrap_of_chrf_and_bleu():
    """Real text: 200 segments of three WMT22 en-de systems, chrF++ and BLEU, one draw."""
    refs = [read_lines(path)[:N] for path in wmt22_references("en-de")[:1]]
    systems = [read_lines(wmt22_system("en-de", name))[:N]
               for name in ("Online-A", "Online-B", "OpenNMT")]
    ours = significance.paired_bootstrap(systems, refs, metrics=[CHRF(word_order=2), BLEU()],
                                         n_samples=100, sacrebleu_compat=True)
    theirs = _sacrebleu_paired(systems, refs, "bs", 100)
    for metric_ours, metric_theirs in zip(ours, theirs):
        for mine, result in zip(metric_ours, metric_theirs):
            cli_same(mine, result)


# -- TER: lower is better, float32 scores --------------------------------------------------

#: sacrebleu's TER is slow (a few hundred segments a second): 30 segments.
N_TER = 30


def _ter_paired(systems, refs, test, n, n_confidence=-1, **options):
    """sacrebleu's ``PairedTest`` of TER (with ``options``) and BLEU, in that order."""
    metrics = {"TER": SacreTER(references=refs, **options), "BLEU": SacreBLEU(references=refs)}
    named = [(f"s{k}", system) for k, system in enumerate(systems)]
    _, scores = PairedTest(named, metrics, None, test_type=test, n_samples=n,
                           n_ar_confidence=n_confidence)()
    return [scores["TER"], scores["BLEU"]]


@pytest.mark.parametrize("test, n, n_confidence", [("bs", 80, -1), ("ar", 150, 40)])
def test_paired_tests_of_ter_are_sacrebleus(sample, test, n, n_confidence):
    """TER and BLEU on one set of draws, one reference: with ``sacrebleu_compat`` every
    number is sacrebleu's (float32 sums of its float rows, float32 TER scores) to 1e-9.
    TER is two-sided like every metric: sacrebleu neither flips the difference nor the
    order of the systems for a lower-is-better metric, and neither does fastbleu."""
    systems, refs = sample
    systems = [system[:N_TER] for system in systems]
    refs = [refs[0][:N_TER]]
    ours = significance.paired_tests(
        [[m.segment_statistics(system, refs) for system in systems] for m in (TER(), BLEU())],
        [TER().formula, BLEU().formula], test, n_samples=n, n_confidence=n_confidence,
        sacrebleu_compat=True)
    theirs = _ter_paired(systems, refs, test, n, n_confidence)
    for metric_ours, metric_theirs in zip(ours, theirs):
        for mine, result in zip(metric_ours, metric_theirs):
            cli_same(mine, result)
    # The swapped order: every p-value is the same (two-sided), whichever system is better.
    swapped = significance.paired_ar(systems[1::-1], refs, metric=TER(), n_samples=n,
                                     sacrebleu_compat=True) if test == "ar" else None
    if swapped is not None:
        assert swapped[1].p_value == ours[0][1].p_value
        assert (swapped[0].score, swapped[1].score) == (ours[0][1].score, ours[0][0].score)


def test_confidence_of_ter(sample):
    """One system's TER interval, two references: with compat sacrebleu's
    ``corpus_score(n_bootstrap=...)`` to 1e-9 (float32 scores, ``statistics.mean``), its
    mean a float32 value; exact sums differ from it by float32's rounding only."""
    systems, refs = sample
    hypotheses = systems[0][:20]
    refs = [ref[:20] for ref in refs]
    theirs = SacreTER(normalized=True).corpus_score(hypotheses, refs, n_bootstrap=120)
    for compat, tolerance in ((True, {"abs": 1e-9}), (False, {"rel": 1e-4})):
        ter = TER(normalized=True)
        (score,) = significance.scores_with_confidence(hypotheses, refs, metrics=[ter],
                                                       n_samples=120, sacrebleu_compat=compat)
        assert score.score == pytest.approx(theirs.score, abs=1e-9)
        assert "bs:120" in ter.get_signature().format()
        assert score.mean == pytest.approx(float(theirs._mean), **tolerance)
        assert score.ci == pytest.approx(float(theirs._ci), **tolerance)
        assert (score.mean == float(np.float32(score.mean))) == compat


@needs_wmt22
def test_wmt22_paired_bootstrap_of_ter_with_asian_support():
    """Real Chinese: 20 segments of three WMT22 en-zh systems, TER normalized with CJK split
    into characters, and BLEU, one draw."""
    refs = [read_lines(path)[:20] for path in wmt22_references("en-zh")[:1]]
    systems = [read_lines(wmt22_system("en-zh", name))[:20]
               for name in ("Online-A", "Online-B", "HuaweiTSC")]
    options = {"normalized": True, "asian_support": True}
    metrics = [TER(**options), BLEU(tokenize="zh")]
    ours = significance.paired_bootstrap(systems, refs, metrics=metrics, n_samples=60,
                                         sacrebleu_compat=True)
    named = [(f"s{k}", system) for k, system in enumerate(systems)]
    _, scores = PairedTest(named, {"TER": SacreTER(references=refs, **options),
                                   "BLEU": SacreBLEU(references=refs, tokenize="zh")},
                           None, test_type="bs", n_samples=60)()
    for metric_ours, metric_theirs in zip(ours, [scores["TER"], scores["BLEU"]]):
        for mine, result in zip(metric_ours, metric_theirs):
            cli_same(mine, result)
