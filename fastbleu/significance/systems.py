"""The systems of a significance test: metrics from arguments, statistics from hypotheses.

:func:`metrics_from` turns the ``bleu=``/``metric=``/``metrics=`` arguments of
:mod:`fastbleu.significance` into metrics (``BLEU()`` by default);
:func:`system_statistics` turns each system's hypotheses, or statistics given
as arrays, into checked int64 rows of one number of segments
(:func:`aligned`).  ``fastbleu.metrics`` is imported only when a metric is
needed, so that the tests on statistics and formulas never load it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from .resampling import check_count

if TYPE_CHECKING:
    from ..metrics.base import Metric


def _checked_metric(value, name: str) -> Metric:
    from ..metrics.base import Metric

    if not isinstance(value, Metric):
        kind = "a fastbleu.BLEU" if name == "bleu" else "a fastbleu metric (fastbleu.metrics.Metric)"
        raise TypeError(f"{name} must be {kind}, got {type(value).__name__}")
    return value


def metrics_from(bleu=None, metric=None, metrics=None) -> list[Metric]:
    """The metrics of ``metrics=`` (several), ``metric=`` or its alias ``bleu=``; default
    ``[BLEU()]``.

    Raises
    ------
    TypeError
        If more than one of them is given, or one is not a metric.
    ValueError
        If ``metrics`` is empty.
    """
    given = [name for name, value in (("bleu", bleu), ("metric", metric), ("metrics", metrics))
             if value is not None]
    if len(given) > 1:
        raise TypeError(f"pass metric= (or its alias bleu=) or metrics=, not both; got "
                        f"{' and '.join(given)}")
    if metrics is not None:
        if isinstance(metrics, (str, bytes)) or not hasattr(metrics, "__iter__"):
            raise TypeError(f"metrics must be a list of fastbleu metrics, got "
                            f"{type(metrics).__name__}")
        metrics = [_checked_metric(m, "metrics[]") for m in metrics]
        if not metrics:
            raise ValueError("metrics is empty; give at least one metric")
        return metrics
    if metric is not None:
        return [_checked_metric(metric, "metric")]
    if bleu is not None:
        return [_checked_metric(bleu, "bleu")]
    from ..metrics import get_metric

    return [get_metric("bleu")]


def is_statistics(value) -> bool:
    """A numeric numpy array (any shape: validation says what is wrong with it); an
    array of strings or objects is hypotheses."""
    return isinstance(value, np.ndarray) and (np.issubdtype(value.dtype, np.integer)
                                              or np.issubdtype(value.dtype, np.floating))


def system_statistics(systems, references, bleu, min_systems: int) -> list[np.ndarray]:
    """Each system's int64 segment statistics under the metric ``bleu``, from hypotheses
    or given as arrays."""
    if isinstance(systems, (str, bytes)) or not hasattr(systems, "__len__"):
        raise TypeError("systems must be a list: one system's hypotheses (or statistics "
                        "array) per element")
    if len(systems) < min_systems:
        raise ValueError(f"a paired test needs a baseline and at least one system; got "
                         f"{len(systems)} system(s)")
    given = [is_statistics(system) for system in systems]
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
    return aligned(stats)


def metric_statistics(systems, references, metrics: list[Metric],
                      min_systems: int) -> list[list[np.ndarray]]:
    """:func:`system_statistics` under each metric; statistics arrays belong to one metric,
    so with several the systems must be hypotheses."""
    if len(metrics) > 1 and not isinstance(systems, (str, bytes)) and hasattr(systems, "__len__") \
            and any(is_statistics(system) for system in systems):
        raise TypeError("statistics arrays belong to one metric: with several metrics give "
                        "hypotheses, or call paired_tests with each metric's statistics")
    return [system_statistics(systems, references, metric, min_systems) for metric in metrics]


def aligned(stats: list) -> list:
    """``stats``, once every system has the baseline's number of segments, and one at least."""
    n = stats[0].shape[0]
    for k, block in enumerate(stats):
        if block.shape[0] != n:
            raise ValueError(f"system {k} has {block.shape[0]} segments but system 0 has {n}")
    if n == 0:
        raise ValueError("no segments: resampling needs at least one")
    return stats


def confidence_count(n_confidence, default: int = 1000) -> int:
    """``n_confidence`` checked: ``-1`` (none) or a number of resamples (``0``: ``default``)."""
    if isinstance(n_confidence, bool) or not isinstance(n_confidence, (int, np.integer)):
        raise TypeError(f"n_confidence must be an int, got {type(n_confidence).__name__}")
    if n_confidence == 0:
        n_confidence = default
    elif n_confidence < -1:
        raise ValueError(f"n_confidence must be -1 (none), 0 (1000) or positive, got "
                         f"{n_confidence}")
    elif n_confidence > 0:
        n_confidence = check_count(n_confidence, "n_confidence")
    return int(n_confidence)
