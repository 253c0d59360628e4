"""Ranking: bootstrap intervals, every pair's paired test, and WMT-style clusters.

From each system's resampled scores (:mod:`fastbleu.compare.resampled`, the
same draws for every system and metric):

* **interval** -- the mean and half-width of the central 95 % of a system's
  resampled scores, as sacrebleu's paired bootstrap reports them (numpy's
  mean of the sorted scores; the ``n // 40``-th smallest and largest), or,
  for a single system, as its ``--confidence`` does (Python's exact mean);
* **p-value of a pair** -- paired bootstrap resampling (Koehn, 2004) with
  one of the two as the baseline: the share of resamples whose centred
  absolute difference exceeds the observed one, smoothed by one (Riezler &
  Maxwell, 2005).  The statistic is symmetric, so either system may be the
  baseline: ``p[i, j]`` is what ``fastbleu REF -i SYS_i SYS_j --paired-bs``
  prints for ``SYS_j``;
* **clusters** -- as WMT's findings draw them: systems sorted best first, a
  line is drawn between two neighbours when every system above it is
  significantly better (``p < alpha``) than every system below it; systems
  between two lines share a cluster (numbered from 1, the best);
* **rank range** -- ``1 + (systems significantly better)`` to
  ``n - (systems significantly worse)``.

References
----------
Koehn, P. (2004). Statistical significance tests for machine translation evaluation. EMNLP.
Riezler, S. & Maxwell, J. T. (2005). On some pitfalls in automatic evaluation and
significance testing for MT. ACL Workshop on Intrinsic and Extrinsic Evaluation Measures.
Kocmi, T. et al. (2022). Findings of the 2022 Conference on Machine Translation (WMT22).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass

import numpy as np

#: Metrics whose lower scores are better, by their formula's name.
LOWER_IS_BETTER = frozenset({"TER"})


def paired_interval(scores: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % half-interval of resampled scores as sacrebleu's paired bootstrap
    reports them (``sacrebleu.significance.estimate_ci``)."""
    ordered = np.sort(scores)
    low = ordered.size // 40
    high = ordered.size - low - 1
    return float(ordered.mean()), float(0.5 * (ordered[high] - ordered[low]))


def single_interval(scores: np.ndarray) -> tuple[float, float]:
    """The same for one system, as its ``--confidence`` reports it (``Score.estimate_ci``:
    Python's exact mean)."""
    ordered = sorted(scores.tolist())
    low = len(ordered) // 40
    high = len(ordered) - low - 1
    return float(statistics.mean(ordered)), float(0.5 * (ordered[high] - ordered[low]))


def pair_p_values(real: np.ndarray, resampled: np.ndarray) -> np.ndarray:
    """``(n, n)`` p-values of the paired bootstrap of every pair (NaN on the diagonal).

    Parameters
    ----------
    real : numpy.ndarray
        float64 ``(n,)``: each system's score.
    resampled : numpy.ndarray
        float64 ``(n, n_samples)``: each system's score on each resample.
    """
    n, samples = resampled.shape
    p = np.full((n, n), np.nan)
    for i in range(n):
        for j in range(i + 1, n):
            differences = np.abs(resampled[j] - resampled[i])
            centred = differences - differences.mean()
            count = int(np.sum(centred > abs(real[i] - real[j])))
            p[i, j] = p[j, i] = (count + 1) / (samples + 1)
    return p


def better_than(real: np.ndarray, p: np.ndarray, alpha: float, lower_is_better: bool
                ) -> np.ndarray:
    """bool ``(n, n)``: ``[i, j]`` if system ``i`` is significantly better than ``j``."""
    ahead = real[:, None] < real[None, :] if lower_is_better else real[:, None] > real[None, :]
    with np.errstate(invalid="ignore"):
        return ahead & (p < alpha)


def order_of(real: np.ndarray, lower_is_better: bool) -> np.ndarray:
    """System indices best first (ties in input order)."""
    return np.argsort(real if lower_is_better else -real, kind="stable")


def clusters(order: np.ndarray, better: np.ndarray) -> np.ndarray:
    """Each system's cluster (1 = best), for systems sorted best first by ``order``.

    A line goes after position ``b`` when every system at positions ``<= b``
    is significantly better than every system at positions ``> b``.
    """
    n = order.size
    cluster = np.empty(n, dtype=np.int64)
    current = 1
    for position, system in enumerate(order):
        cluster[system] = current
        if position + 1 < n and better[np.ix_(order[:position + 1], order[position + 1:])].all():
            current += 1
    return cluster


def rank_ranges(better: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Best and worst possible rank of each system: ``1 + (significantly better
    systems)`` and ``n - (significantly worse systems)``."""
    n = better.shape[0]
    return 1 + better.sum(axis=0), n - better.sum(axis=1)


@dataclass
class MetricRanking:
    """One metric's ranking of the systems (arrays in the systems' input order).

    Attributes
    ----------
    name : str
        The metric's name (``BLEU``, ``chrF2``, ``TER``).
    signature : str
        The signature of every number (with the bootstrap's fields).
    score, mean, ci : numpy.ndarray
        Corpus score, bootstrap mean and 95 % half-interval of each system.
    p : numpy.ndarray or None
        ``(n, n)`` p-values of the pairs (None for one system).
    order : numpy.ndarray
        System indices best first.
    cluster, best_rank, worst_rank : numpy.ndarray
        WMT-style cluster and rank range of each system (all 1 for one system).
    lower_is_better : bool
    """

    name: str
    signature: str
    score: np.ndarray
    mean: np.ndarray
    ci: np.ndarray
    p: np.ndarray | None
    order: np.ndarray
    cluster: np.ndarray
    best_rank: np.ndarray
    worst_rank: np.ndarray
    lower_is_better: bool


def rank(name: str, signature: str, real: np.ndarray, resampled: np.ndarray,
         alpha: float) -> MetricRanking:
    """The ranking of one metric from its scores and resampled scores."""
    n = real.size
    lower = name in LOWER_IS_BETTER
    interval = single_interval if n == 1 else paired_interval
    mean, ci = (np.array(v) for v in zip(*(interval(resampled[s]) for s in range(n))))
    order = order_of(real, lower)
    if n == 1:
        ones = np.ones(1, dtype=np.int64)
        return MetricRanking(name, signature, real, mean, ci, None, order, ones, ones, ones,
                             lower)
    p = pair_p_values(real, resampled)
    better = better_than(real, p, alpha, lower)
    best, worst = rank_ranges(better)
    return MetricRanking(name, signature, real, mean, ci, p, order, clusters(order, better),
                         best, worst, lower)
