"""A metric's corpus score with its bootstrap confidence interval (Koehn, 2004)."""

from __future__ import annotations

from .. import resampling
from .base import Metric, Score


def score_with_confidence(metric: Metric, hypotheses, references, n_bootstrap: int) -> Score:
    """The corpus score with sacrebleu's bootstrap mean and 95 % interval.

    ``n_bootstrap`` resamples of the segments, with sacrebleu's draws and
    seed (``$SACREBLEU_SEED``); sums are exact (int64).  Sets the metric's
    ``n_bootstrap`` and ``seed``, so its signature gains ``bs`` and ``seed``.
    """
    n_samples = resampling.check_count(n_bootstrap, "n_bootstrap")
    resampling.resolve_seed()  # a bad $SACREBLEU_SEED before the statistics
    stats = metric.segment_statistics(hypotheses, references)
    if not stats.shape[0]:
        raise ValueError("no segments: resampling needs at least one")
    formula = metric.formula
    score = formula.score(stats.sum(axis=0), check=False)
    mean, ci, metric.seed = resampling.confidence(stats, formula, n_samples)
    score.set_confidence(mean, ci)
    metric.n_bootstrap = n_samples
    return score
