"""The three significance tests and their results: confidence intervals, paired bootstrap,
paired approximate randomization (the package docstring says how each is run)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .estimates import compat_scores, paired_mean_ci
from .resampling import (DEFAULT_SEED, check_count, confidences, metric_bootstrap_scores,
                         metric_randomization_scores, resolve_seed)
from .systems import (aligned, confidence_count, metric_statistics, metrics_from,
                      system_statistics)

if TYPE_CHECKING:
    from ..metrics.formula import Formula, Score, Signature

__all__ = ["DEFAULT_SEED", "DEFAULT_BOOTSTRAP", "DEFAULT_TRIALS", "TESTS", "Result",
           "confidence_interval", "score_with_confidence", "scores_with_confidence",
           "paired_bootstrap", "paired_ar", "paired_test", "paired_tests", "paired_signature",
           "default_samples", "check_count", "resolve_seed", "p_value", "system_statistics"]

#: sacrebleu's default numbers of resamples and trials (at most ``MAX_SAMPLES``, from
#: ``fastbleu._limits``).
DEFAULT_BOOTSTRAP = 1000
DEFAULT_TRIALS = 10000


@dataclass
class Result:
    """One system's result, with sacrebleu's fields (its JSON prints them in this order).

    Attributes
    ----------
    score : float
        The system's corpus score.
    p_value : float or None
        p-value against the baseline (None for the baseline itself).
    mean : float or None
        Mean score over the bootstrap resamples.
    ci : float or None
        Half the width of the 95 % percentile interval of those scores.
    """

    score: float
    p_value: float | None = None
    mean: float | None = None
    ci: float | None = None


def p_value(null_statistics: np.ndarray, observed: float) -> float:
    """``(count(null_statistics > observed) + 1) / (n + 1)`` (Riezler & Maxwell, 2005): the
    strict ``>`` does not count a system's zero difference with itself as chance; the +1
    keeps the false rejection rate at or below the test's level for few trials.  (float32
    statistics compare in float32, as sacrebleu's do.)"""
    count = int(np.sum(null_statistics > observed))
    return (count + 1) / (null_statistics.size + 1)

# -- the tests ---------------------------------------------------------------------------

def confidence_interval(hypotheses, references=None, *, bleu=None,
                        n_samples: int = DEFAULT_BOOTSTRAP, seed=None,
                        sacrebleu_compat: bool = False, metric=None) -> Result:
    """Corpus score with a bootstrap estimate of its mean and 95 % confidence interval.

    The percentile bootstrap (Efron & Tibshirani, 1993), as sacrebleu's
    ``corpus_score(..., n_bootstrap=n_samples)`` runs it.

    Parameters
    ----------
    hypotheses : sequence of str, a string column, or an int array
        The system's hypotheses, or its segment statistics
        (``metric.segment_statistics``, one row per segment).
    references : list of reference streams, optional
        Needed with hypotheses (unless the metric caches references).
    bleu : fastbleu.BLEU, optional
        The BLEU options (default ``BLEU()``); an alias of ``metric``.
    n_samples : int
        Bootstrap resamples (default 1000).
    seed : int, str or None
        See :func:`resolve_seed` (default: ``$SACREBLEU_SEED`` or 12345).
    sacrebleu_compat : bool
        Sum resamples in float32 as sacrebleu does, for its numbers bit for bit.
    metric : fastbleu.metrics.Metric, optional
        The metric (default ``BLEU()``); ``bleu`` is its alias.

    Returns
    -------
    Result
        ``score``, ``mean`` and ``ci`` (``p_value`` is None).
    """
    score = score_with_confidence(hypotheses, references, bleu=bleu, n_samples=n_samples,
                                  seed=seed, sacrebleu_compat=sacrebleu_compat, metric=metric)
    return Result(score.score, None, score.mean, score.ci)


def score_with_confidence(hypotheses, references=None, *, bleu=None,
                          n_samples: int = DEFAULT_BOOTSTRAP, seed=None,
                          sacrebleu_compat: bool = False, metric=None) -> Score:
    """As :func:`confidence_interval`, but returns the metric's score (which prints
    ``(μ = mean ± ci)`` as sacrebleu's does) and records ``bs`` and ``seed`` in the
    metric's signature."""
    return scores_with_confidence(hypotheses, references,
                                  metrics=metrics_from(bleu, metric), n_samples=n_samples,
                                  seed=seed, sacrebleu_compat=sacrebleu_compat)[0]


def scores_with_confidence(hypotheses, references=None, *, metrics, n_samples: int =
                           DEFAULT_BOOTSTRAP, seed=None, sacrebleu_compat: bool = False
                           ) -> list[Score]:
    """:func:`score_with_confidence` under several metrics, on one set of resamples.

    sacrebleu's ``-m bleu chrf --confidence`` calls each metric's
    ``corpus_score(..., n_bootstrap=n)``, and each draws the same resamples
    from a fresh generator; here they are drawn once.

    Parameters
    ----------
    hypotheses, references, n_samples, seed, sacrebleu_compat
        As for :func:`confidence_interval`; with several metrics,
        ``hypotheses`` are text (statistics belong to one metric).
    metrics : list of fastbleu.metrics.Metric
        The metrics; each records ``bs`` and ``seed`` in its signature.

    Returns
    -------
    list of Score
        One per metric, in order.
    """
    metrics = metrics_from(metrics=metrics)
    n_samples = check_count(n_samples, "n_samples")
    resolve_seed(seed)  # a bad seed is refused before the statistics are computed
    stats = [block[0] for block in metric_statistics([hypotheses], references, metrics, 1)]
    formulas = [metric.formula for metric in metrics]
    estimates, label = confidences(stats, formulas, n_samples, seed, sacrebleu_compat)
    scores = []
    for metric, formula, block, (mean, ci) in zip(metrics, formulas, stats, estimates):
        score = formula.score(block.sum(axis=0), check=False)
        score.set_confidence(mean, ci)
        metric.n_bootstrap = n_samples
        metric.seed = label
        scores.append(score)
    return scores


def paired_bootstrap(systems, references=None, *, bleu=None,
                     n_samples: int = DEFAULT_BOOTSTRAP, seed=None,
                     sacrebleu_compat: bool = False, metric=None, metrics=None) -> list:
    """Paired bootstrap resampling (Koehn, 2004) of every system against the first.

    All systems are scored on the same ``n_samples`` resamples of the
    segments.  For system ``s``, with ``d_r = |score_s(r) - score_base(r)|``,
    the p-value is ``(#{r : d_r - mean(d) > |score_s - score_base|} + 1) /
    (n_samples + 1)``: how often resampling alone, centred to the null
    hypothesis of no difference, gives a difference as large as the one
    observed.  ``mean``/``ci`` summarise each system's resampled scores
    (the baseline's too), as in sacrebleu.

    Parameters
    ----------
    systems : list
        The baseline first, then the systems: hypotheses (sequences of
        str or string columns) or segment statistics arrays, all of the
        same number of segments.
    references, bleu, n_samples, seed, sacrebleu_compat, metric
        As for :func:`confidence_interval`.  With many systems, pass
        ``bleu=BLEU(references=refs)`` and no ``references`` to tokenize the
        references once rather than once per system.
    metrics : list of fastbleu.metrics.Metric, optional
        Several metrics instead of ``metric``, all tested on the same
        resamples as sacrebleu's ``PairedTest`` tests them; ``systems`` are
        then hypotheses.

    Returns
    -------
    list of Result, or with ``metrics`` a list of them per metric
        One per system, the baseline's with ``p_value`` None.
    """
    chosen = metrics_from(bleu, metric, metrics)
    n_samples = check_count(n_samples, "n_samples")
    value, _ = resolve_seed(seed)
    stats = metric_statistics(systems, references, chosen, 2)
    results = _bootstrap_test(stats, [m.formula for m in chosen], n_samples, value,
                              sacrebleu_compat)
    return results if metrics is not None else results[0]


def _bootstrap_test(stats, formulas, n_samples, value, sacrebleu_compat) -> list[list[Result]]:
    """Koehn's test of each metric on checked statistics (``value``: the resolved seed);
    every metric sees the same resamples."""
    all_scores = metric_bootstrap_scores(stats, formulas, n_samples,
                                         np.random.default_rng(value), sacrebleu_compat)
    by_metric = []
    for blocks, formula, scores in zip(stats, formulas, all_scores):
        real = [formula.score(block.sum(axis=0), check=False).score for block in blocks]
        scores = compat_scores(scores, formula, sacrebleu_compat)
        results = [Result(real[0], None, *paired_mean_ci(scores[0]))]
        for s in range(1, len(blocks)):
            observed = abs(real[0] - real[s])
            differences = np.abs(scores[s] - scores[0])
            centred = differences - differences.mean()
            results.append(Result(real[s], p_value(centred, observed),
                                  *paired_mean_ci(scores[s])))
        by_metric.append(results)
    return by_metric


def paired_ar(systems, references=None, *, bleu=None, n_samples: int = DEFAULT_TRIALS,
              n_confidence: int = -1, seed=None, sacrebleu_compat: bool = False,
              metric=None, metrics=None) -> list:
    """Paired approximate randomization (Riezler & Maxwell, 2005) against the first system.

    In every trial a fair coin per segment decides whether the baseline's
    and the system's statistics of that segment swap; the p-value is
    ``(#{t : |score(A_t) - score(B_t)| > |score_s - score_base|} + 1) /
    (n_samples + 1)``.  All systems (and metrics) see the same coins, drawn
    as sacrebleu draws them.

    Parameters
    ----------
    systems, references, bleu, seed, sacrebleu_compat, metric, metrics
        As for :func:`paired_bootstrap`.
    n_samples : int
        Trials (default 10000).
    n_confidence : int
        Also estimate every system's mean and CI from this many bootstrap
        resamples (sacrebleu's ``n_ar_confidence``): ``-1`` (default) does
        not, ``0`` uses 1000.  As in sacrebleu, the baseline's resamples are
        the first draws of a fresh generator and the systems' are drawn
        after the coins.

    Returns
    -------
    list of Result, or with ``metrics`` a list of them per metric
    """
    chosen = metrics_from(bleu, metric, metrics)
    n_samples = check_count(n_samples, "n_samples")
    n_confidence = confidence_count(n_confidence)
    value, _ = resolve_seed(seed)
    stats = metric_statistics(systems, references, chosen, 2)
    results = _ar_test(stats, [m.formula for m in chosen], n_samples, n_confidence, value,
                       sacrebleu_compat)
    return results if metrics is not None else results[0]


def _ar_test(stats, formulas, n_samples, n_confidence, value,
             sacrebleu_compat) -> list[list[Result]]:
    """Riezler & Maxwell's test of each metric on checked statistics (``value``: the resolved
    seed); every metric sees the same coins (and resamples)."""
    rng = np.random.default_rng(value)
    trials = metric_randomization_scores(stats, formulas, n_samples, rng)
    by_metric = []
    for blocks, formula, (scores_a, scores_b) in zip(stats, formulas, trials):
        real = [formula.score(block.sum(axis=0), check=False).score for block in blocks]
        results = [Result(real[0])]
        for s in range(1, len(blocks)):
            null = np.abs(scores_a[s - 1] - scores_b[s - 1])
            results.append(Result(real[s], p_value(null, abs(real[0] - real[s]))))
        by_metric.append(results)
    if n_confidence > 0:
        # The systems' resamples continue the generator that drew the coins; the
        # baseline's come from a fresh one (sacrebleu's _bootstrap_resample).
        systems_scores = metric_bootstrap_scores([blocks[1:] for blocks in stats], formulas,
                                                 n_confidence, rng, sacrebleu_compat)
        base_scores = metric_bootstrap_scores([blocks[:1] for blocks in stats], formulas,
                                              n_confidence, np.random.default_rng(value),
                                              sacrebleu_compat)
        for results, formula, base, others in zip(by_metric, formulas, base_scores,
                                                  systems_scores):
            base = compat_scores(base, formula, sacrebleu_compat)
            others = compat_scores(others, formula, sacrebleu_compat)
            results[0].mean, results[0].ci = paired_mean_ci(base[0])
            for s in range(1, len(results)):
                results[s].mean, results[s].ci = paired_mean_ci(others[s - 1])
    return by_metric


def paired_signature(signature, test: str, n_samples: int, seed_label: str,
                     n_confidence: int = -1) -> Signature:
    """A signature with sacrebleu's fields for a paired test: the one builder.

    Parameters
    ----------
    signature : Signature
        The metric's signature (``metric.signature(num_refs, ...)`` or
        ``metric.get_signature()``); it is copied, not changed.
    test : {"bs", "ar"}
        The field of the test, set to ``n_samples``.
    n_samples : int
        Resamples (``bs``) or trials (``ar``).
    seed_label : str
        The ``seed`` field (:func:`resolve_seed`'s label).
    n_confidence : int
        With ``ar``, the bootstrap resamples of the confidence intervals
        (``bs`` field) when positive.

    Returns
    -------
    Signature
    """
    signature = signature.copy()
    signature.update("seed", seed_label)
    signature.update(test, n_samples)
    if n_confidence > 0:
        signature.update("bs", n_confidence)
    return signature


#: The paired tests by their sacrebleu names, with their default numbers of samples.
TESTS = {"bs": DEFAULT_BOOTSTRAP, "ar": DEFAULT_TRIALS}


def default_samples(test: str) -> int:
    """sacrebleu's default number of resamples (``bs``: 1000) or trials (``ar``: 10000)."""
    return TESTS[_check_test(test)]


def _check_test(test) -> str:
    if test not in TESTS:
        raise ValueError(f"unknown paired test {test!r}; choose 'bs' (paired bootstrap) or "
                         "'ar' (approximate randomization)")
    return test


def paired_test(stats: list, formula: Formula, test: str = "bs", *, n_samples: int | None = None,
                n_confidence: int = -1, seed=None, sacrebleu_compat: bool = False
                ) -> list[Result]:
    """A paired test of every system against the first, on statistics of one metric.

    Paired bootstrap resampling (Koehn, 2004; see :func:`paired_bootstrap`)
    or paired approximate randomization (Riezler & Maxwell, 2005; see
    :func:`paired_ar`), with sacrebleu's draws and numbers: ``paired_tests``
    with one metric.

    Parameters
    ----------
    stats : list of numpy.ndarray
        The baseline's segment statistics first, then each system's, all of
        the same number of rows (``metric.segment_statistics``); each is
        checked by ``formula.check_rows``.
    formula : Formula
        The metric's formula (``metric.formula``).
    test, n_samples, n_confidence, seed, sacrebleu_compat
        As for :func:`paired_tests`.

    Returns
    -------
    list of Result
        One per system, the baseline's first with ``p_value`` None.
    """
    if isinstance(stats, np.ndarray) or not hasattr(stats, "__len__"):
        raise TypeError("stats must be a list of statistics arrays, baseline first")
    return paired_tests([stats], [formula], test, n_samples=n_samples,
                        n_confidence=n_confidence, seed=seed,
                        sacrebleu_compat=sacrebleu_compat)[0]


def paired_tests(stats: list, formulas: list, test: str = "bs", *, n_samples: int | None = None,
                 n_confidence: int = -1, seed=None, sacrebleu_compat: bool = False
                 ) -> list[list[Result]]:
    """Paired tests of every system against the first under several metrics, on one set of
    draws: the one entry point (sacrebleu's ``PairedTest`` with several metrics).

    Parameters
    ----------
    stats : list of list of numpy.ndarray
        Per metric, the baseline's segment statistics first, then each
        system's, all of the same number of rows; each is checked by its
        metric's ``formula.check_rows``.
    formulas : list of Formula
        Each metric's formula (``metric.formula``), in the order of ``stats``.
    test : {"bs", "ar"}
        Paired bootstrap or approximate randomization.
    n_samples : int, optional
        Resamples or trials; default :func:`default_samples`.
    n_confidence : int
        ``ar`` only: bootstrap resamples for every system's mean and CI
        (``-1``: none, ``0``: 1000).
    seed : int, str or None
        See :func:`resolve_seed`.
    sacrebleu_compat : bool
        Sum bootstrap resamples in float32 as sacrebleu does (and summarise
        the scores in the type sacrebleu then has, see
        :func:`fastbleu.estimates.compat_scores`).

    Returns
    -------
    list of list of Result
        Per metric, one per system, the baseline's first with ``p_value`` None.
    """
    test = _check_test(test)
    n_samples = check_count(default_samples(test) if n_samples is None else n_samples,
                            "n_samples")
    n_confidence = confidence_count(n_confidence)
    if test == "bs" and n_confidence != -1:
        raise ValueError("n_confidence is for the 'ar' test; the bootstrap estimates the "
                         "confidence intervals from its own resamples")
    value, _ = resolve_seed(seed)
    if not hasattr(formulas, "__len__") or isinstance(stats, np.ndarray) or \
            not hasattr(stats, "__len__") or len(stats) != len(formulas) or not formulas:
        raise TypeError("formulas must be a list of formulas and stats, for each, a list "
                        "of statistics arrays (baseline first)")
    checked = []
    for blocks, formula in zip(stats, formulas):
        if isinstance(blocks, np.ndarray) or not hasattr(blocks, "__len__"):
            raise TypeError("stats must be a list of statistics arrays, baseline first")
        if len(blocks) < 2:
            raise ValueError(f"a paired test needs a baseline and at least one system; got "
                             f"{len(blocks)} system(s)")
        checked.append(aligned([formula.check_rows(block, f"statistics of system {k}")
                                for k, block in enumerate(blocks)]))
    if len({blocks[0].shape[0] for blocks in checked}) > 1:
        raise ValueError("every metric's statistics must have the same segments")
    if test == "bs":
        return _bootstrap_test(checked, formulas, n_samples, value, sacrebleu_compat)
    return _ar_test(checked, formulas, n_samples, n_confidence, value, sacrebleu_compat)
