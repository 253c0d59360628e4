"""The work of one partition, run on a worker: batches -> statistics, per group or per row.

A partition is either a :class:`fastbleu.tables.pieces.ParquetPiece` (some row
groups of a Parquet file, read with pyarrow exactly as one process reads
them) or a pandas DataFrame (a partition of a Dask DataFrame).  Every
function here is a plain module-level function, so Dask sends it to the
workers by name.
"""

from __future__ import annotations

import contextlib
import threading

import numpy as np

from ..errors import InputError
from ..statistics.tokens import HashBuffer
from ..tables.groups import Groups, factorize
from ..tables.job import TableJob
from ..tables import prepass
from ..tables import reference_counts as counting
from ..tables.metric_set import MetricSet
from ..tables.pieces import ParquetPiece
from ..tables.readers import open_table, read_ahead
from ..tables.writers import SegmentWriter


@contextlib.contextmanager
def _naming(index: int, piece):
    """Row numbers of a DataFrame partition count from its start: say which partition."""
    if isinstance(piece, ParquetPiece):
        yield
        return
    try:
        yield
    except InputError as error:
        raise InputError(f"partition {index}: {error}") from None


_scratch = threading.local()


def _buffers() -> tuple[HashBuffer, HashBuffer]:
    """Hash scratch kept by each worker thread from task to task.

    A batch's buffers take 8 bytes per text byte (about 100 MB for 64k WMT
    rows); allocated afresh for every partition, their page faults showed
    as system time in the workers (see benchmarks/README.md).
    """
    if not hasattr(_scratch, "buffers"):
        _scratch.buffers = (HashBuffer(), HashBuffer())
    return _scratch.buffers


def _batches(piece, job: TableJob):
    if isinstance(piece, ParquetPiece):
        # Decode the next batch while the kernels work on this one, as one process does.
        return piece.first_row, read_ahead(piece.batches(job.columns, job.batch_size,
                                                          list(job.keys)))
    columns = list(dict.fromkeys(job.columns))
    table = open_table(piece[columns], columns, job.batch_size)
    return 0, table.batches(read_ahead=False)


def reference_counts(piece, index: int, job: TableJob, columns: tuple) -> prepass.TableCounts:
    """NIST's first pass on one partition: every weight group's reference n-gram counts
    (:func:`fastbleu.tables.prepass.count_batches`), reading the reference and group
    columns only."""
    wanted = list(dict.fromkeys([*job.refs, *columns]))
    if isinstance(piece, ParquetPiece):
        start, batches = piece.first_row, piece.batches(wanted, job.batch_size, list(columns))
    else:
        start, batches = 0, open_table(piece[wanted], wanted, job.batch_size).batches(
            read_ahead=False)
    with _naming(index, piece):
        return prepass.count_batches(job, job.metric_set(), batches, columns, start,
                                     _buffers()[1])


def _reference_batches(piece, job: TableJob):
    """The record batches of a partition's reference columns only."""
    wanted = list(dict.fromkeys(job.refs))
    if isinstance(piece, ParquetPiece):
        return piece.batches(wanted, job.batch_size)
    return open_table(piece[wanted], wanted, job.batch_size).batches(read_ahead=False)


def reference_count_set(piece, index: int, job: TableJob):
    """The numbers of references present in one partition (reference columns only), for
    metrics whose rows depend on them (TER beyond 16: :mod:`fastbleu.tables.reference_counts`);
    None when the columns' types show no need."""
    with _naming(index, piece):
        return counting.count_batches(job, _reference_batches(piece, job))


def _alone(piece, index: int, job: TableJob) -> TableJob:
    """``job`` for one partition scored on its own (sentence scores, which do not depend on
    the scale of TER's rows): its own reference counts."""
    if not counting.may_need_counts(job):
        return job
    with _naming(index, piece):
        return counting.with_counts(job, reference_count_set(piece, index, job))


def merge_counts(*partials: prepass.TableCounts) -> prepass.TableCounts:
    """Partial counts added into a new object (a node of the reduction tree)."""
    return partials[0].merge(*partials[1:])


def table_weights(counts: prepass.TableCounts, job: TableJob) -> prepass.TableWeights:
    """The merged counts' weights: computed once, then sent to every scoring task."""
    return counts.weights(job.metric_set())


def _weighted(weights, job: TableJob, metric_set: MetricSet) -> MetricSet:
    """The metric set to score with, NIST's weights fixed per group (if ``weights``)."""
    if weights is None:
        return metric_set
    return prepass.fitted(metric_set, weights, job.encoding_errors)


def merge_groups(*partials: Groups) -> Groups:
    """Partial per-group sums added into a new object (the inputs stay as they are)."""
    merged = Groups(partials[0].width)
    for partial in partials:
        merged.merge(partial)
    return merged


def group_statistics(piece, index: int, job: TableJob, segments: str | None = None,
                     first_row: int | None = None, weights=None) -> Groups:
    """Per-group sums of one partition (every metric of the job side by side); with
    ``segments``, also its per-segment file; with ``weights``, NIST's fixed weights
    (:class:`fastbleu.tables.prepass.TableWeights`)."""
    start, batches = _batches(piece, job)
    start = start if first_row is None else first_row
    metric_set = _weighted(weights, job, job.metric_set())
    writer = SegmentWriter(segments, list(job.keys), metric_set) \
        if segments is not None else None
    try:
        with _naming(index, piece):
            groups = job.statistics(batches, metric_set, start, index,
                                    on_batch=None if writer is None else writer.write,
                                    buffers=_buffers())
        if writer is not None:
            if groups.rows:
                writer.commit()
            else:  # no file for an empty partition: its schema could not be known
                writer.discard()
    except BaseException:
        if writer is not None:
            writer.discard()
        raise
    return groups


def segment_statistics(piece, index: int, job: TableJob, grouped: bool, weights=None):
    """Statistics of every row of one partition; with ``grouped``, each row's group too.

    Returns ``(stats, codes, key_values)``: int64 statistics in row order,
    the group code of every row and the key of every code (first-appearance
    order), or ``(stats, None, None)``.
    """
    start, batches = _batches(piece, job)
    metric = _weighted(weights, job, MetricSet.of(job.metric()))
    parts, codes, seen = [], [], {}
    row = start
    with _naming(index, piece):
        for batch in batches:
            if batch.num_rows == 0:
                continue
            stats = job.batch_statistics(batch, metric, row, _buffers())[0]
            parts.append(stats)
            if grouped:
                batch_codes, batch_keys = factorize([batch.column(k) for k in job.keys],
                                                    list(job.keys), row, job.encoding_errors)
                local = np.array([seen.setdefault(key, len(seen)) for key in batch_keys],
                                 dtype=np.int64)
                codes.append(local[batch_codes])
            row += batch.num_rows
    width = metric.width
    stats = np.concatenate(parts) if parts else np.zeros((0, width), dtype=np.int64)
    if not grouped:
        return stats, None, None
    codes = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
    return stats, codes, list(seen)


def sentence_scores(frame, job: TableJob, column: str, weights=None, partition_info=None):
    """A pandas partition with its sentence scores (``formula.scores``) as a new float64 column."""
    index = partition_info["number"] if partition_info else 0
    job = _alone(frame, index, job)
    formula = job.metric().formula
    stats = segment_statistics(frame, index, job, grouped=False, weights=weights)[0]
    return frame.assign(**{column: formula.scores(stats, check=False)})
