"""sacrebleu's summaries of resampled scores: their type, mean and 95 % half-interval.

Two summaries, as sacrebleu 2.6 computes them: :func:`paired_mean_ci`
(``sacrebleu.significance.estimate_ci``, numpy's mean) for the paired tests,
and :func:`single_mean_ci` (``Score.estimate_ci``, Python's exact
``statistics.mean``) for one system's confidence interval.  With
``sacrebleu_compat`` the scores first take the type sacrebleu holds them in
(:func:`compat_scores`), so that every summary rounds as sacrebleu's does.
numpy and the standard library only.
"""

from __future__ import annotations

import statistics as _statistics
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..metrics.formula import Formula


def compat_scores(scores: np.ndarray, formula: Formula, sacrebleu_compat: bool) -> np.ndarray:
    """Resampled scores in the type sacrebleu holds them before it summarises them.

    With ``sacrebleu_compat``, the formula's ``compat_score_dtype``: sacrebleu
    scores float32 sums, and a metric whose arithmetic stays in numpy (chrF)
    then has float32 scores, whose means, half-intervals and differences
    sacrebleu computes in float32.  The float64 scores of the engines hold
    those float32 values exactly, so the cast loses nothing.  Otherwise
    (exact sums) the scores are left float64.
    """
    if not sacrebleu_compat:
        return scores
    return scores.astype(formula.compat_score_dtype, copy=False)


def paired_mean_ci(scores: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % half-interval as ``sacrebleu.significance.estimate_ci`` computes them:
    numpy's (pairwise) mean of the sorted scores, and half the distance between the
    ``n // 40``-th smallest and largest, in the scores' own dtype."""
    ordered = np.sort(scores)
    low = ordered.size // 40
    high = ordered.size - low - 1
    return float(ordered.mean()), float(0.5 * (ordered[high] - ordered[low]))


def single_mean_ci(scores: np.ndarray) -> tuple[float, float]:
    """The same summary as ``Score.estimate_ci`` of a single system computes it: the mean
    is Python's ``statistics.mean`` (exact, then rounded to the scores' type) rather than
    numpy's; float32 scores (:func:`compat_scores`) stay numpy float32 scalars throughout,
    as sacrebleu's do."""
    ordered = sorted(scores.tolist()) if scores.dtype == np.float64 else list(np.sort(scores))
    low = len(ordered) // 40
    high = len(ordered) - low - 1
    return float(_statistics.mean(ordered)), float(0.5 * (ordered[high] - ordered[low]))
