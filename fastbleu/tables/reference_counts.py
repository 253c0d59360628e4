"""A first pass over a table's reference columns, for metrics whose rows depend on the
numbers of references present (TER beyond 16 references per row).

TER keeps each segment's mean reference length exactly, as an integer times
a scale that must be a multiple of every segment's number of references
(:mod:`fastbleu.metrics.ter.scale`).  Up to 16 references, 720720 fits any
row, and a table is read once as before.  A table with more reference
columns, or with one list column (whose rows may hold any number), is read
once more first, its reference columns only, their nulls counted (no text
is decoded); every metric that needs it is then rebuilt with the options
those counts need (``Metric.options_for_counts``: TER's
``reference_scale``), in the job itself, so that every batch, every Dask
partition and the ``segments_out`` file hold rows of one scale.  The pass
counts the whole table (not group by group): the scale only changes how
rows are stored, never a score.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InputError
from .metric_set import MetricSet


def _limit(metric_set: MetricSet) -> int | None:
    """The fewest references beyond which some metric's rows depend on the counts (None:
    no metric's do)."""
    limits = [m.counted_beyond for m in metric_set.metrics if m.counted_beyond is not None]
    return min(limits) if limits else None


def may_need_counts(job) -> bool:
    """Whether ``job`` may need the pass, before its table is opened: a metric counts
    references, and there are more reference columns than it takes without, or one
    column (a list column holds any number)."""
    limit = _limit(job.metric_set())
    return limit is not None and (len(job.refs) > limit or len(job.refs) == 1)


def _is_list(kind) -> bool:
    import pyarrow as pa

    return pa.types.is_list(kind) or pa.types.is_large_list(kind)


def needs_counts(job, batch) -> bool:
    """Whether ``job`` needs the pass, seeing the column types of one of its batches."""
    limit = _limit(job.metric_set())
    if limit is None:
        return False
    if len(job.refs) == 1:
        return _is_list(batch.schema.field(job.refs[0]).type)
    return len(job.refs) > limit


def row_counts(batch, refs) -> np.ndarray:
    """The number of non-null references of every row of a batch, counted as
    :func:`fastbleu.tables.columns.reference_streams` reads them (a list column's null
    elements and null lists are missing references)."""
    import pyarrow.compute as pc

    n = batch.num_rows
    if len(refs) == 1 and _is_list(batch.column(refs[0]).type):
        lists = batch.column(refs[0])
        values = pc.list_flatten(lists)
        parents = np.asarray(pc.list_parent_indices(lists), dtype=np.int64)
        valid = np.asarray(values.is_valid(), dtype=bool)
        return np.bincount(parents[valid], minlength=n).astype(np.int64)
    counts = np.zeros(n, dtype=np.int64)
    for name in refs:
        counts += np.asarray(batch.column(name).is_valid(), dtype=np.int64)
    return counts


def count_batches(job, batches) -> frozenset | None:
    """The numbers of references present in ``batches`` (reference columns only), or
    None when their column types show that the job needs no pass (read no further)."""
    found: set[int] = set()
    for batch in batches:
        if batch.num_rows == 0:
            continue
        if not found and not needs_counts(job, batch):
            return None
        found.update(int(c) for c in np.unique(row_counts(batch, list(job.refs))) if c > 0)
        found.add(0)  # a batch was counted (zeros are refused by the scoring pass)
    found.discard(0)
    return frozenset(found)


def merged(*parts: frozenset | None) -> frozenset | None:
    """Counts of several pieces of a table together (None: no piece needed them)."""
    counted = [p for p in parts if p is not None]
    return frozenset().union(*counted) if counted else None


def with_counts(job, counts: frozenset | None):
    """``job`` whose metrics score rows with these numbers of references in one layout
    (the same job when none changes).

    Raises
    ------
    fastbleu.errors.InputError
        If the counts need more than a metric can hold (TER: a scale beyond 2**32).
    """
    if not counts:
        return job
    specs = []
    for (key, options), metric in zip(job.metrics, job.metric_set().metrics):
        try:
            specs.append((key, metric.options_for_counts(counts)))
        except ValueError as error:
            names = ", ".join(repr(name) for name in job.refs)
            raise InputError(f"the references of {'column' if len(job.refs) == 1 else 'columns'}"
                             f" {names}: {error}") from None
    specs = tuple(specs)
    return job if specs == job.metrics else dataclasses.replace(job, metrics=specs)


def counted_job(source, job):
    """For one process: ``job`` after the pass over ``source``'s reference columns, if it
    needs one (else ``job`` itself, the table not read)."""
    if not may_need_counts(job):
        return job
    from .readers import open_table

    table = open_table(source, list(dict.fromkeys(job.refs)), job.batch_size,
                       encoding_errors=job.encoding_errors)
    return with_counts(job, count_batches(job, table.batches(read_ahead=False)))
