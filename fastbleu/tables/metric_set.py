"""Several metrics over one table: which metrics a job scores, checked once, and their columns.

A job stores every metric as a ``(key, options)`` pair (``Metric.key``,
``Metric.options()``), so that a Dask worker rebuilds the same metrics by
name (:func:`fastbleu.metrics.get_metric`).  :class:`MetricSet` holds the
built metrics side by side: one statistics row of a table is every metric's
row, one after another (each metric's columns a slice of it), so that a
batch's text is converted once, one :class:`~fastbleu.tables.groups.Groups`
accumulator sums all metrics, and a Dask merge moves one array.

With one metric, result and ``segments_out`` columns are named as the
formula names them (``score``, ``bp`` ...).  With several, every column of a
metric is prefixed by its *label* and ``_``: the metric's key (``bleu``,
``chrf``), numbered when a key repeats (``bleu1``, ``bleu2``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np


def metric_specs(metrics, bleu_options: dict) -> tuple[tuple[str, dict], ...]:
    """The ``(key, options)`` of every metric a table job scores, checked.

    Parameters
    ----------
    metrics : str, Metric, list of (str or Metric), or None
        Metric names (``"bleu"``, ``"chrf"``) and/or metric objects
        (``fastbleu.CHRF(word_order=2)``); None is ``["bleu"]``.
    bleu_options : dict
        :class:`fastbleu.BLEU`'s keyword options; they apply to the metric
        named ``"bleu"``.

    Returns
    -------
    tuple of (str, dict)

    Raises
    ------
    TypeError
        For an entry that is neither a metric name nor a Metric, or a keyword
        option that is another metric's (``normalized`` is TER's).
    ValueError
        For an empty list, an unknown name, a metric given twice (same key
        and options), BLEU options without ``"bleu"`` among the names, or a
        metric's own refusal of its options.
    """
    from ..metrics import METRICS, get_metric
    from ..metrics.base import Metric

    if metrics is None:
        metrics = ["bleu"]
    if isinstance(metrics, (str, Metric)):
        metrics = [metrics]
    if isinstance(metrics, dict) or not hasattr(metrics, "__iter__"):
        raise TypeError(f"metrics must be a list of metric names ({', '.join(METRICS)}) or "
                        f"Metric objects, got {type(metrics).__name__}")
    items = list(metrics)
    if not items:
        raise ValueError(f"metrics is empty; give at least one metric name "
                         f"({', '.join(METRICS)}) or Metric object")
    _check_foreign_options(bleu_options)
    specs, bleu_used = [], False
    for item in items:
        if isinstance(item, str):
            is_bleu = item.lower() == "bleu"
            bleu_used = bleu_used or is_bleu
            metric = get_metric(item, **(bleu_options if is_bleu else {}))
        elif isinstance(item, Metric):
            metric = item
        else:
            raise TypeError(f"metrics holds a {type(item).__name__}; give metric names "
                            f"({', '.join(METRICS)}) or Metric objects such as "
                            "fastbleu.CHRF(word_order=2)")
        spec = (metric.key, metric.options())
        if spec in specs:
            raise ValueError(f"metrics holds {metric.key!r} twice with the same options; give "
                             "each metric once")
        specs.append(spec)
    if bleu_options and not bleu_used:
        raise ValueError(f"{', '.join(sorted(bleu_options))}: BLEU's options, but metrics names "
                         "no 'bleu' to apply them to; pass fastbleu.BLEU(...) in metrics instead")
    return tuple(specs)


def _parameters(cls) -> set[str]:
    """The keyword options of a metric class's constructor (its cached references aside)."""
    import inspect

    return set(inspect.signature(cls.__init__).parameters) - {"self", "references"}


def _check_foreign_options(bleu_options: dict) -> None:
    """Refuse a keyword option that is not BLEU's but another metric's (``normalized=True``
    meant for TER), naming the metric object to pass instead."""
    from ..metrics import METRICS, metric_class

    bleu = _parameters(metric_class("bleu"))
    for name in sorted(bleu_options):
        if name in bleu:
            continue
        owner = next((metric_class(key) for key in METRICS
                      if name in _parameters(metric_class(key))), None)
        if owner is not None:
            raise TypeError(f"{name} is an option of {owner.name}, not of BLEU (the keyword "
                            f"options apply to BLEU): pass fastbleu.{owner.__name__}"
                            f"({name}={bleu_options[name]!r}) in metrics instead")


def reference_limit(metric) -> int | None:
    """The most references per segment ``metric`` takes, or None for no limit.

    BLEU with ``ref_length="average"`` keeps each segment's mean reference
    length exactly, as an integer times 720720 (the least common multiple of
    1 to 16), so it takes at most 16 references (``Metric.max_references``;
    TER chooses its scale from the counts present instead:
    :mod:`fastbleu.tables.reference_counts`).  Its ``segment_statistics``
    refuse more, but a table calls the fast path (``column_statistics``),
    where BLEU does not check; so the table checks every batch itself.
    """
    return getattr(metric, "max_references", None)


def _described(metric) -> str:
    """How a message names a metric whose options limit its references."""
    if getattr(metric, "ref_length", None) == "average":
        return f"{metric.name} with ref_length='average'"
    return metric.name


def metric_labels(keys: list[str]) -> list[str]:
    """Every metric's label: its key, numbered from 1 when the key repeats."""
    counts, seen = Counter(keys), Counter()
    labels = []
    for key in keys:
        seen[key] += 1
        labels.append(key if counts[key] == 1 else f"{key}{seen[key]}")
    return labels


class MetricSet:
    """Metrics side by side in one statistics row.

    Attributes
    ----------
    metrics : list of Metric
    labels : list of str
        Each metric's label (:func:`metric_labels`).
    slices : list of slice
        Each metric's columns in a row of :attr:`width` columns.
    width : int
        Columns of a row: the sum of the formulas' ``row_width``.
    """

    def __init__(self, metrics):
        self.metrics = list(metrics)
        self.labels = metric_labels([metric.key for metric in self.metrics])
        self.slices, start = [], 0
        for metric in self.metrics:
            self.slices.append(slice(start, start + metric.formula.row_width))
            start += metric.formula.row_width
        self.width = start

    @classmethod
    def build(cls, specs) -> MetricSet:
        """The metrics of ``(key, options)`` pairs (:func:`metric_specs`), built anew."""
        from ..metrics import get_metric

        return cls(get_metric(key, **options) for key, options in specs)

    @classmethod
    def of(cls, metrics) -> MetricSet:
        """``metrics`` if a set already, else a set of one metric object or a list of them."""
        if isinstance(metrics, MetricSet):
            return metrics
        return cls(metrics if isinstance(metrics, (list, tuple)) else [metrics])

    def __len__(self) -> int:
        return len(self.metrics)

    def for_batch(self, batch, first_row: int) -> MetricSet:
        """The metrics to score one record batch with, whose first row is ``first_row``:
        these (a set weighing rows by their group gives each batch its own, see
        :class:`fastbleu.tables.prepass.WeightedMetricSet`)."""
        return self

    def prefix(self, index: int) -> str:
        """The prefix of metric ``index``'s columns: none for a single metric."""
        return "" if len(self.metrics) == 1 else f"{self.labels[index]}_"

    @property
    def takes_tokenizer(self) -> bool:
        """Whether some metric takes a choice of word tokenizer (BLEU), and so uses a
        tokenizer column; chrF reads characters and TER has its own Tercom rules."""
        return any(metric.tokenizer is not None for metric in self.metrics)

    def check_reference_counts(self, refs_per_row, first_row: int, where: str = "") -> None:
        """Refuse a row with more references than a metric takes (InputError naming the row).

        Parameters
        ----------
        refs_per_row : numpy.ndarray
            The non-null references of every row of a batch.
        first_row : int
            The table row of the batch's first row.
        where : str
            What the message puts before the row (``"column 'refs', "`` for a list column).
        """
        from ..errors import InputError

        for metric in self.metrics:
            limit = reference_limit(metric)
            if limit is not None and refs_per_row.size and refs_per_row.max() > limit:
                row = int(np.flatnonzero(refs_per_row > limit)[0])
                raise InputError(f"{where}row {first_row + row}: {int(refs_per_row[row])} "
                                 f"references, but {_described(metric)} takes at most {limit} "
                                 "references per segment")

    @property
    def default_tokenizer(self) -> str:
        """The tokenizer name a group records without a tokenizer column ("" if none)."""
        return next((m.tokenizer.name for m in self.metrics if m.tokenizer is not None), "")

    def result_names(self) -> list[str]:
        """Every result column after the keys (``formula.result_names``, prefixed)."""
        return [self.prefix(i) + name for i, metric in enumerate(self.metrics)
                for name in metric.formula.result_names]

    def segment_parts(self) -> list[tuple[str, object, slice]]:
        """``(prefix, formula, columns)`` of every metric, for a ``segments_out`` file."""
        return [(self.prefix(i), metric.formula, self.slices[i])
                for i, metric in enumerate(self.metrics)]

    def segment_names(self) -> list[str]:
        """The columns of a ``segments_out`` file besides ``row`` and the keys."""
        return [prefix + name for prefix, formula, _ in self.segment_parts()
                for name in (formula.sentence_column, *formula.statistics_names)]
