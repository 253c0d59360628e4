"""Significance of BLEU differences: bootstrap confidence intervals, paired bootstrap
resampling and paired approximate randomization, with sacrebleu's draws.

Three tests, as sacrebleu 2.6 runs them:

* :func:`confidence_interval` -- the percentile bootstrap (Efron & Tibshirani,
  1993): resample the segments with replacement ``n_samples`` times, score
  each resample, report the mean and half the width of the central 95 %
  interval of those scores.
* :func:`paired_bootstrap` -- paired bootstrap resampling (Koehn, 2004): the
  same resamples for the baseline and every system; the p-value of a system
  is the share of resamples whose centred absolute score difference exceeds
  the observed one (with the +1 smoothing of Riezler & Maxwell's test).
* :func:`paired_ar` -- paired approximate randomization (Riezler & Maxwell,
  2005; Noreen, 1989): in each trial a coin decides, segment by segment,
  whether the baseline's and the system's outputs swap places; the p-value is
  the share of trials whose absolute score difference exceeds the observed
  one, again with +1 smoothing.

The draws are sacrebleu's, and the sums exact unless ``sacrebleu_compat``
asks for its float32 ones: see :mod:`fastbleu.resampling`, the engines under
these tests.  The tests take statistics and a metric's formula
(:func:`paired_test`), or hypotheses and a metric (``BLEU()`` by default,
imported only then).

References
----------
Efron, B. & Tibshirani, R. (1993). *An Introduction to the Bootstrap.* Chapman & Hall.
Koehn, P. (2004). Statistical significance tests for machine translation evaluation. EMNLP.
Riezler, S. & Maxwell, J. T. (2005). On some pitfalls in automatic evaluation and
significance testing for MT. ACL Workshop on Intrinsic and Extrinsic Evaluation Measures.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from .resampling import (DEFAULT_SEED, bootstrap_scores, check_count, confidence,
                         paired_mean_ci, randomization_scores, resolve_seed)

if TYPE_CHECKING:
    from .metrics.base import Formula, Metric, Signature
    from .metrics.bleu_score import BLEUScore

__all__ = ["DEFAULT_SEED", "DEFAULT_BOOTSTRAP", "DEFAULT_TRIALS", "TESTS", "Result",
           "confidence_interval", "score_with_confidence", "paired_bootstrap", "paired_ar",
           "paired_test", "paired_signature", "default_samples", "check_count", "resolve_seed",
           "p_value", "system_statistics"]

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
        The system's corpus BLEU.
    p_value : float or None
        p-value against the baseline (None for the baseline itself).
    mean : float or None
        Mean BLEU over the bootstrap resamples.
    ci : float or None
        Half the width of the 95 % percentile interval of those scores.
    """

    score: float
    p_value: float | None = None
    mean: float | None = None
    ci: float | None = None

def p_value(null_statistics: np.ndarray, observed: float) -> float:
    """``(count(null_statistics > observed) + 1) / (n + 1)`` (Riezler & Maxwell, 2005).

    The strict ``>`` means a system compared with itself does not count its
    zero difference as chance; the +1 keeps the test's false rejection rate
    at or below its level for few trials.
    """
    count = int(np.sum(null_statistics > observed))
    return (count + 1) / (null_statistics.size + 1)

# -- inputs ------------------------------------------------------------------------------

def _bleu_or_default(bleu, metric=None) -> Metric:
    """The metric of ``metric=`` or its alias ``bleu=``; default ``BLEU()``.

    ``fastbleu.metrics`` is imported here, not at the top: the tests on
    statistics and a formula (:func:`paired_test`) never need it.
    """
    from .metrics.base import Metric

    if metric is not None:
        if bleu is not None:
            raise TypeError("pass metric= or its alias bleu=, not both")
        if not isinstance(metric, Metric):
            raise TypeError(f"metric must be a fastbleu metric (fastbleu.metrics.Metric), got "
                            f"{type(metric).__name__}")
        return metric
    if bleu is None:
        from .metrics import get_metric

        return get_metric("bleu")
    if not isinstance(bleu, Metric):
        raise TypeError(f"bleu must be a fastbleu.BLEU, got {type(bleu).__name__}")
    return bleu


def _is_statistics(value) -> bool:
    """A numeric numpy array (any shape: validation says what is wrong with it); an
    array of strings or objects is hypotheses."""
    return isinstance(value, np.ndarray) and (np.issubdtype(value.dtype, np.integer)
                                              or np.issubdtype(value.dtype, np.floating))


def system_statistics(systems, references, bleu, min_systems: int) -> list[np.ndarray]:
    """Each system's int64 segment statistics, from hypotheses or given as arrays."""
    if isinstance(systems, (str, bytes)) or not hasattr(systems, "__len__"):
        raise TypeError("systems must be a list: one system's hypotheses (or statistics "
                        "array) per element")
    if len(systems) < min_systems:
        raise ValueError(f"a paired test needs a baseline and at least one system; got "
                         f"{len(systems)} system(s)")
    given = [_is_statistics(system) for system in systems]
    if all(given):
        if references is not None:
            raise ValueError("systems are statistics arrays: references are not used, pass "
                             "references=None")
        formula = bleu.formula
        stats = [formula.check_rows(system, f"statistics of system {k}")
                 for k, system in enumerate(systems)]
    elif any(given):
        raise TypeError("give all systems as hypotheses or all as statistics arrays, not both")
    else:
        stats = [bleu.segment_statistics(system, references) for system in systems]
    return _aligned(stats)


# -- the tests ---------------------------------------------------------------------------

def confidence_interval(hypotheses, references=None, *, bleu=None,
                        n_samples: int = DEFAULT_BOOTSTRAP, seed=None,
                        sacrebleu_compat: bool = False, metric=None) -> Result:
    """Corpus BLEU with a bootstrap estimate of its mean and 95 % confidence interval.

    The percentile bootstrap (Efron & Tibshirani, 1993), as sacrebleu's
    ``corpus_score(..., n_bootstrap=n_samples)`` runs it.

    Parameters
    ----------
    hypotheses : sequence of str, a string column, or an int array
        The system's hypotheses, or its segment statistics
        (``BLEU.segment_statistics``, one row per segment).
    references : list of reference streams, optional
        Needed with hypotheses (unless ``bleu`` caches references).
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
                          sacrebleu_compat: bool = False, metric=None) -> BLEUScore:
    """As :func:`confidence_interval`, but returns the ``BLEUScore`` (which prints
    ``(μ = mean ± ci)`` as sacrebleu's does) and records ``bs`` and ``seed`` in ``bleu``'s
    signature."""
    bleu = _bleu_or_default(bleu, metric)
    n_samples = check_count(n_samples, "n_samples")
    resolve_seed(seed)  # a bad seed is refused before the statistics are computed
    stats = system_statistics([hypotheses], references, bleu, 1)[0]
    formula = bleu.formula
    score = formula.score(stats.sum(axis=0), check=False)
    mean, ci, label = confidence(stats, formula, n_samples, seed, sacrebleu_compat)
    score.set_confidence(mean, ci)
    bleu.n_bootstrap = n_samples
    bleu.seed = label
    return score


def paired_bootstrap(systems, references=None, *, bleu=None,
                     n_samples: int = DEFAULT_BOOTSTRAP, seed=None,
                     sacrebleu_compat: bool = False, metric=None) -> list[Result]:
    """Paired bootstrap resampling (Koehn, 2004) of every system against the first.

    All systems are scored on the same ``n_samples`` resamples of the
    segments.  For system ``s``, with ``d_r = |BLEU_s(r) - BLEU_base(r)|``,
    the p-value is ``(#{r : d_r - mean(d) > |BLEU_s - BLEU_base|} + 1) /
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

    Returns
    -------
    list of Result
        One per system, the baseline's with ``p_value`` None.
    """
    bleu = _bleu_or_default(bleu, metric)
    n_samples = check_count(n_samples, "n_samples")
    value, _ = resolve_seed(seed)
    stats = system_statistics(systems, references, bleu, 2)
    return _bootstrap_test(stats, bleu.formula, n_samples, value, sacrebleu_compat)


def _bootstrap_test(stats, formula, n_samples, value, sacrebleu_compat) -> list[Result]:
    """Koehn's test on checked statistics (``value``: the resolved seed)."""
    real = [formula.score(block.sum(axis=0), check=False).score for block in stats]
    scores = bootstrap_scores(stats, formula, n_samples, np.random.default_rng(value),
                              sacrebleu_compat)
    results = [Result(real[0], None, *paired_mean_ci(scores[0]))]
    for s in range(1, len(stats)):
        observed = abs(real[0] - real[s])
        differences = np.abs(scores[s] - scores[0])
        centred = differences - differences.mean()
        results.append(Result(real[s], p_value(centred, observed), *paired_mean_ci(scores[s])))
    return results


def paired_ar(systems, references=None, *, bleu=None, n_samples: int = DEFAULT_TRIALS,
              n_confidence: int = -1, seed=None, sacrebleu_compat: bool = False,
              metric=None) -> list[Result]:
    """Paired approximate randomization (Riezler & Maxwell, 2005) against the first system.

    In every trial a fair coin per segment decides whether the baseline's
    and the system's statistics of that segment swap; the p-value is
    ``(#{t : |BLEU(A_t) - BLEU(B_t)| > |BLEU_s - BLEU_base|} + 1) /
    (n_samples + 1)``.  All systems see the same coins, drawn as sacrebleu
    draws them.

    Parameters
    ----------
    systems, references, bleu, seed, sacrebleu_compat, metric
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
    list of Result
    """
    bleu = _bleu_or_default(bleu, metric)
    n_samples = check_count(n_samples, "n_samples")
    n_confidence = _confidence_count(n_confidence)
    value, _ = resolve_seed(seed)
    stats = system_statistics(systems, references, bleu, 2)
    return _ar_test(stats, bleu.formula, n_samples, n_confidence, value, sacrebleu_compat)


def _confidence_count(n_confidence) -> int:
    """``n_confidence`` checked: ``-1`` (none) or a number of resamples (``0``: 1000)."""
    if isinstance(n_confidence, bool) or not isinstance(n_confidence, (int, np.integer)):
        raise TypeError(f"n_confidence must be an int, got {type(n_confidence).__name__}")
    if n_confidence == 0:
        n_confidence = DEFAULT_BOOTSTRAP
    elif n_confidence < -1:
        raise ValueError(f"n_confidence must be -1 (none), 0 (1000) or positive, got "
                         f"{n_confidence}")
    elif n_confidence > 0:
        n_confidence = check_count(n_confidence, "n_confidence")
    return int(n_confidence)


def _ar_test(stats, formula, n_samples, n_confidence, value, sacrebleu_compat) -> list[Result]:
    """Riezler & Maxwell's test on checked statistics (``value``: the resolved seed)."""
    real = [formula.score(block.sum(axis=0), check=False).score for block in stats]
    rng = np.random.default_rng(value)
    scores_a, scores_b = randomization_scores(stats[0], stats[1:], formula, n_samples, rng)
    results = [Result(real[0])]
    for s in range(1, len(stats)):
        null = np.abs(scores_a[s - 1] - scores_b[s - 1])
        results.append(Result(real[s], p_value(null, abs(real[0] - real[s]))))
    if n_confidence > 0:
        # The systems' resamples continue the generator that drew the coins; the
        # baseline's come from a fresh one (sacrebleu's _bootstrap_resample).
        systems_scores = bootstrap_scores(stats[1:], formula, n_confidence, rng,
                                          sacrebleu_compat)
        base_scores = bootstrap_scores(stats[:1], formula, n_confidence,
                                       np.random.default_rng(value), sacrebleu_compat)
        results[0].mean, results[0].ci = paired_mean_ci(base_scores[0])
        for s in range(1, len(stats)):
            results[s].mean, results[s].ci = paired_mean_ci(systems_scores[s - 1])
    return results


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
    """A paired test of every system against the first, on statistics: the one entry point.

    Paired bootstrap resampling (Koehn, 2004; see :func:`paired_bootstrap`)
    or paired approximate randomization (Riezler & Maxwell, 2005; see
    :func:`paired_ar`), with sacrebleu's draws and numbers.

    Parameters
    ----------
    stats : list of numpy.ndarray
        The baseline's segment statistics first, then each system's, all of
        the same number of rows (``metric.segment_statistics``); each is
        checked by ``formula.check_rows``.
    formula : Formula
        The metric's formula (``metric.formula``).
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
        Sum bootstrap resamples in float32 as sacrebleu does.

    Returns
    -------
    list of Result
        One per system, the baseline's first with ``p_value`` None.
    """
    test = _check_test(test)
    n_samples = check_count(default_samples(test) if n_samples is None else n_samples,
                            "n_samples")
    n_confidence = _confidence_count(n_confidence)
    if test == "bs" and n_confidence != -1:
        raise ValueError("n_confidence is for the 'ar' test; the bootstrap estimates the "
                         "confidence intervals from its own resamples")
    value, _ = resolve_seed(seed)
    if isinstance(stats, np.ndarray) or not hasattr(stats, "__len__"):
        raise TypeError("stats must be a list of statistics arrays, baseline first")
    if len(stats) < 2:
        raise ValueError(f"a paired test needs a baseline and at least one system; got "
                         f"{len(stats)} system(s)")
    stats = _aligned([formula.check_rows(block, f"statistics of system {k}")
                      for k, block in enumerate(stats)])
    if test == "bs":
        return _bootstrap_test(stats, formula, n_samples, value, sacrebleu_compat)
    return _ar_test(stats, formula, n_samples, n_confidence, value, sacrebleu_compat)


def _aligned(stats: list) -> list:
    """``stats``, once every system has the baseline's number of segments, and one at least."""
    n = stats[0].shape[0]
    for k, block in enumerate(stats):
        if block.shape[0] != n:
            raise ValueError(f"system {k} has {block.shape[0]} segments but system 0 has {n}")
    if n == 0:
        raise ValueError("no segments: resampling needs at least one")
    return stats
