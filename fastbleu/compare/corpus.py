"""The systems' statistics, aligned segment by segment: what every part of a report reads.

A :class:`Corpus` holds one statistics row per segment with every metric's
columns for every system side by side (:class:`~fastbleu.compare.resampled.Layout`),
uint16 where the values fit, plus each segment's group and the length of its
first reference in words.  Text is not kept: :meth:`Corpus.texts` fetches
the few segments a report shows (from the lists, or by reading the table
again).  It is built from text (:func:`from_text`, the systems' hypotheses
and the reference streams, references tokenized once) or from a table
(:mod:`fastbleu.compare.table`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..errors import InputError, SegmentError
from .resampled import Layout, narrowest

#: The metrics a report takes (NIST's weights need a pass of their own over the corpus).
REPORT_METRICS = ("bleu", "chrf", "ter")


@dataclass
class Corpus:
    """Statistics of every system on the same segments.

    Attributes
    ----------
    systems : list of str
        System names, in input order (the first is the baseline of
        ``fastbleu``'s paired tests on the same inputs).
    metrics : list of Metric
    layout : Layout
    stats : numpy.ndarray
        uint16, int32 or int64 ``(n_segments, layout.width)``.
    ref_words : numpy.ndarray
        int64: words (whitespace-separated) of each segment's first reference.
    num_refs : int
        References per segment (-1 when it varies).
    group_keys : list of str
        The names of the group columns (empty: no groups).
    group_values : list of tuple
        Each group's values, in order of first appearance.
    group : numpy.ndarray or None
        Each segment's group code.
    fetch : callable
        ``fetch(segments, systems)`` -> ``{"hyp": {system: [str]}, "ref": [[str] per
        reference], "src": [str] or None}`` for those segments.
    """

    systems: list
    metrics: list
    layout: Layout
    stats: np.ndarray
    ref_words: np.ndarray
    num_refs: int
    group_keys: list = field(default_factory=list)
    group_values: list = field(default_factory=list)
    group: np.ndarray | None = None
    fetch: object = None
    _plan: object = field(default=None, repr=False, compare=False)

    @property
    def n_segments(self) -> int:
        return self.stats.shape[0]

    def column_plan(self):
        """:func:`~fastbleu.compare.columns.plan_columns` of :attr:`stats`, made once
        (:meth:`~fastbleu.compare.columns.ColumnPlan.subset` gives a group's)."""
        if self._plan is None:
            from .columns import plan_columns

            self._plan = plan_columns(self.stats, self.layout)
        return self._plan

    def system_rows(self, metric: int, system: int, first: int = 0, last: int | None = None
                    ) -> np.ndarray:
        """int64 statistics rows of one system under one metric (a copy)."""
        columns = self.layout.columns(metric, system)
        return np.ascontiguousarray(self.stats[first:last, columns], dtype=np.int64)

    def texts(self, segments, systems) -> dict:
        """The text of some segments: see :attr:`fetch`."""
        return self.fetch(np.asarray(segments, dtype=np.int64), list(systems))


class StatisticsArray:
    """The statistics array being filled: uint16 until a value needs int32, then int64
    (a segment of more than 65,535 characters, TER's scaled reference lengths)."""

    def __init__(self, n_segments: int, layout: Layout):
        self.layout = layout
        self.array = np.zeros((n_segments, layout.width), dtype=np.uint16)

    def put(self, metric: int, system: int, segments, rows: np.ndarray) -> None:
        """Store ``rows`` (int64) as ``system``'s statistics under ``metric`` at ``segments``
        (an index array or a slice)."""
        columns = self.layout.columns(metric, system)
        if isinstance(segments, slice) and segments.step in (None, 1) and rows.ndim == 2 \
                and rows.dtype == np.int64 and rows.shape[0] > 1024:
            from .kernels import store_rows  # numpy's max, then its cast: several times slower

            first = segments.indices(self.array.shape[0])[0]
            if not self._fits(store_rows(self.array, first, columns.start, rows)):
                store_rows(self.array, first, columns.start, rows)
            return
        if rows.size:
            self._fits(int(rows.max()))
        self.array[segments, columns] = rows

    def _fits(self, largest: int) -> bool:
        """Whether ``largest`` fits the array's type; if not, the array is widened to one
        it fits."""
        needed = narrowest(int(largest))
        if np.iinfo(needed).max > np.iinfo(self.array.dtype).max:
            self.array = self.array.astype(needed)
            return False
        return True


def check_names(systems) -> list[str]:
    """System names as text, each once."""
    names = [str(name) for name in systems]
    seen = set()
    for name in names:
        if name in seen:
            raise InputError(f"the system {name!r} is given twice; give each system once")
        seen.add(name)
    return names


def word_counts(texts) -> np.ndarray:
    """int64 words (whitespace-separated) of each text (a list of str or an Arrow array)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = texts if isinstance(texts, (pa.Array, pa.ChunkedArray)) else pa.array(
        list(texts), type=pa.string())
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if pa.types.is_list(column.type) or pa.types.is_large_list(column.type):
        column = pc.list_element(column, 0)
    if pa.types.is_dictionary(column.type):
        column = column.cast(column.type.value_type)
    counts = pc.list_value_length(pc.utf8_split_whitespace(column))
    return np.asarray(pc.fill_null(counts, 0), dtype=np.int64)


def from_text(names, systems, references, metrics, sources=None, groups=None) -> Corpus:
    """A corpus from the systems' hypotheses and the reference streams.

    Parameters
    ----------
    names : list of str
        A name per system.
    systems : list of sequences of str
        Each system's hypotheses, all of the same length.
    references : list of sequences of str
        Reference streams, each as long as the systems.
    metrics : list of (str, dict)
        ``(key, options)`` of each metric (:func:`fastbleu.metrics.get_metric`).
    sources : sequence of str, optional
        The source segments, shown beside the examples.
    groups : sequence, optional
        A group label per segment (language pair, domain, document ...).
    """
    from ..metrics import get_metric

    names = check_names(names)
    if not systems:
        raise InputError("no systems: give at least one")
    n = len(systems[0])
    for name, system in zip(names, systems):
        if len(system) != n:
            raise InputError(f"system {name!r} has {len(system)} segments but {names[0]!r} "
                             f"has {n}; every system needs one per segment")
    references = list(references)
    if not references:
        raise InputError("no references: give at least one reference stream")
    for k, stream in enumerate(references):
        if len(stream) != n:
            raise InputError(f"reference {k + 1} has {len(stream)} segments but the systems "
                             f"have {n}")
    if sources is not None and len(sources) != n:
        raise InputError(f"the source has {len(sources)} segments but the systems have {n}")
    if n == 0:
        raise InputError("no segments: a report needs at least one")
    built = []
    for key, options in metrics:
        if key not in REPORT_METRICS:
            raise InputError(f"a report scores {', '.join(REPORT_METRICS)}; not {key!r}")
        try:
            built.append(get_metric(key, references=references, **options))
        except (ValueError, TypeError) as error:
            raise InputError(str(error)) from None
    layout = Layout([metric.formula for metric in built], len(systems))
    array = StatisticsArray(n, layout)
    for m, metric in enumerate(built):
        for s, (name, hyps) in enumerate(zip(names, systems)):
            try:
                rows = metric.segment_statistics(hyps)
            except SegmentError as error:
                raise InputError(f"{name}, segment {error.index + 1}: {error.reason}") from None
            except (TypeError, ValueError) as error:
                raise InputError(f"{name}: {error}") from None
            array.put(m, s, slice(None), rows)
    group_values, group_codes = [], None
    if groups is not None:
        if len(groups) != n:
            raise InputError(f"groups has {len(groups)} labels but the systems have {n} "
                             "segments")
        ids = {}
        group_codes = np.fromiter((ids.setdefault(label, len(ids)) for label in groups),
                                  dtype=np.int64, count=n)
        group_values = [(label,) for label in ids]

    def fetch(segments, chosen):
        pick = segments.tolist()
        return {"hyp": {s: [_text(systems[s][i]) for i in pick] for s in chosen},
                "ref": [[_text(stream[i]) for i in pick] for stream in references],
                "src": None if sources is None else [_text(sources[i]) for i in pick]}

    return Corpus(names, built, layout, array.array, word_counts(references[0]),
                  len(references), ["group"] if groups is not None else [], group_values,
                  group_codes, fetch)


def _text(value) -> str:
    """A segment as str (an Arrow scalar's value; a null is empty)."""
    value = value.as_py() if hasattr(value, "as_py") else value
    return "" if value is None else str(value)
