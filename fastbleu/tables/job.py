"""What to score in a table, checked once: :class:`TableJob`.

A job turns record batches into per-segment statistics with the metric's
kernels (:meth:`TableJob.batch_statistics`), adds them into per-group sums
(:meth:`TableJob.statistics`, a :class:`~fastbleu.tables.groups.Groups`) and
scores merged sums (:meth:`TableJob.scores`).  The same job runs in one
process (:mod:`fastbleu.tables.scoring`), on every partition of a Dask
cluster (:mod:`fastbleu.dask`) and for paired tests per group
(:mod:`fastbleu.tables.paired`).  It knows its metric only through the seam
(:func:`fastbleu.metrics.get_metric`, ``metric.formula``,
``metric.column_statistics``, ``metric.signature``).
"""

from __future__ import annotations

import itertools
import logging
from collections import deque
from dataclasses import dataclass

import numpy as np

from ..errors import InputError, SegmentError
from ..statistics.tokens import BufferPairs
from ..inputs.text import as_text_column
from ..tokenizers import get_tokenizer
from .columns import column_names, hypothesis_column, reference_streams
from .groups import Groups, factorize
from .readers import check_batch_size
from .metric_set import MetricSet, metric_specs
from .results import GroupScores, MetricScores

logger = logging.getLogger("fastbleu")


#: Pool threads from which the last batches of a table are split (fewer: whole batches).
SPLIT_FROM_THREADS = 4
#: Fewest rows in a piece of a split batch.
MIN_PIECE_ROWS = 16_384


def tail_pieces(rows: int, rows_left: int, batch_size: int, threads: int) -> int:
    """Into how many jobs of consecutive rows a batch of ``rows`` goes, ``rows_left`` rows of
    the table from its first on: four within the last half round of batches (``threads / 2``
    batches of ``batch_size`` rows), two within the last round, else one; never pieces of
    fewer than :data:`MIN_PIECE_ROWS` rows.

    The reader's batches are the table's jobs; a table of 41 batches on 16 threads ends with a
    round of 9, seven threads idle (12.3x replayed).  Pieces in the last round let the threads
    finish within a small piece of each other; splitting changes no sum (exact int64, merged
    in row order) and no row of ``segments_out`` (the pieces' rows are written as one batch).
    One to three pool threads never split (:data:`SPLIT_FROM_THREADS`).
    """
    left = rows_left / batch_size
    count = 4 if 2 * left <= threads else 2 if left <= threads else 1
    return max(1, min(count, rows // MIN_PIECE_ROWS))


def segment_columns(formula) -> list[str]:
    """The columns of a ``segments_out`` file besides the keys, for a metric's formula."""
    return ["row", formula.sentence_column, *formula.statistics_names]


@dataclass(frozen=True)
class TableJob:
    """What to score in a table, checked once; the same for one process and for a cluster.

    :meth:`statistics` turns record batches into per-group sums
    (:class:`~fastbleu.tables.groups.Groups`), :meth:`scores` turns merged
    sums into a :class:`~fastbleu.tables.results.GroupScores` (or, for
    several metrics, a :class:`~fastbleu.tables.results.MetricScores`);
    :mod:`fastbleu.dask` runs the first on every partition and the second on
    the client.  ``metrics`` holds every metric as ``(key, options)``
    (:func:`fastbleu.metrics.get_metric`), so that a worker rebuilds them.
    """

    hyp: str
    refs: tuple
    keys: tuple
    tokenize_column: str | None
    null_as_empty: bool
    encoding_errors: str
    batch_size: int
    metrics: tuple = (("bleu", {}),)

    @classmethod
    def create(cls, hyp, refs, group_by, doc, tokenize_column, null_as_empty, encoding_errors,
               batch_size, bleu_options=None, metrics=None) -> TableJob:
        """Check the arguments of :func:`~fastbleu.tables.scoring.score_table`.

        ``metrics`` are names and/or metric objects
        (:func:`~fastbleu.tables.metric_set.metric_specs`; default BLEU);
        ``bleu_options`` apply to the one named ``"bleu"``.

        Raises TypeError or ValueError (the metric's own for its options).
        """
        if not isinstance(hyp, str):
            raise TypeError(f"hyp must be a column name, got {type(hyp).__name__}")
        refs = column_names(refs, "refs")
        if not refs:
            raise ValueError("refs must name at least one reference column")
        keys = column_names(group_by, "group_by") + column_names(doc, "doc")
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"the column {repeated[0]!r} is given twice as a group or document "
                             "column; name each once")
        if tokenize_column is not None and not isinstance(tokenize_column, str):
            raise TypeError("tokenize_column must be a column name")
        if encoding_errors not in ("strict", "replace"):
            raise ValueError(f"encoding_errors must be 'strict' or 'replace', got "
                             f"{encoding_errors!r}")
        batch_size = check_batch_size(batch_size)
        specs = metric_specs(metrics, dict(bleu_options or {}))  # checked now, not on a worker
        job = cls(hyp, tuple(refs), tuple(keys), tokenize_column, bool(null_as_empty),
                  encoding_errors, int(batch_size), specs)
        metric_set = job.metric_set()
        if tokenize_column is not None and not metric_set.takes_tokenizer:
            # chrF reads characters and TER has its own (Tercom) rules: neither takes one
            names = [metric.name for metric in metric_set.metrics]
            shown = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
            verb = "does" if len(names) == 1 else "do"
            raise ValueError(f"tokenize_column (--tokenize-column) names each row's word "
                             f"tokenizer, which only BLEU uses; {shown} {verb} not take one: "
                             "drop the column or add BLEU to the metrics")
        names = metric_set.result_names()
        reserved = [k for k in keys if k in names]
        if reserved:
            raise ValueError(f"a group or document column cannot be named {reserved[0]!r}: "
                             f"the result has columns {', '.join(names)}; rename it in the "
                             "table")
        return job

    def check_segment_columns(self) -> None:
        """Refuse keys named like a column of the ``segments_out`` file (ValueError)."""
        reserved = ["row", *self.metric_set().segment_names()]
        clash = [k for k in self.keys if k in reserved]
        if clash:
            raise ValueError(f"a group or document column cannot be named {clash[0]!r} with "
                             f"segments_out: the file has columns {', '.join(reserved)}; "
                             "rename it in the table")

    @property
    def columns(self) -> list[str]:
        """The columns to read."""
        return [self.hyp, *self.refs, *self.keys] + \
            ([self.tokenize_column] if self.tokenize_column else [])

    def metric(self):
        """A new object of this job's first metric (:func:`fastbleu.metrics.get_metric`)."""
        from ..metrics import get_metric

        key, options = self.metrics[0]
        return get_metric(key, **options)

    def metric_set(self) -> MetricSet:
        """This job's metrics, side by side (:class:`MetricSet`): built from their
        ``(key, options)`` once in a process (a pickled job leaves them behind, and a Dask
        worker builds its own once)."""
        built = self.__dict__.get("_built")
        if built is None:
            built = MetricSet.build(self.metrics)
            object.__setattr__(self, "_built", built)  # a cache, not a field of the job
        return built

    def __getstate__(self) -> dict:
        state = dict(self.__dict__)
        state.pop("_built", None)
        return state

    @classmethod
    def planned(cls, hyp, refs, group_by, doc, tokenize_column, null_as_empty, encoding_errors,
                batch_size, bleu_options=None, metrics=None, segments_out=None) -> TableJob:
        """:meth:`create`, and with ``segments_out`` :meth:`check_segment_columns`: the one
        plan of a table job, made before anything is read (the command line makes it, then
        hands it to :func:`~fastbleu.tables.scoring.score_groups` or Dask's)."""
        job = cls.create(hyp, refs, group_by, doc, tokenize_column, null_as_empty,
                         encoding_errors, batch_size, bleu_options, metrics)
        if segments_out is not None:
            job.check_segment_columns()
        return job

    def batch_statistics(self, batch, metrics, first_row: int, buffers=None):
        """Statistics of one record batch, with each row's reference count and tokenizer.

        ``metrics`` is a :class:`MetricSet` (or one metric object);
        ``buffers`` hash scratch to reuse (a
        :class:`~fastbleu.statistics.BufferPairs` or one pair).  The
        batch's text is converted once; every metric's ``column_statistics``
        then fills its own columns of the row.  A tokenizer column applies to
        the metrics that take a word tokenizer (BLEU), never to chrF or TER.

        Raises InputError for a null hypothesis (without ``null_as_empty``), a
        row without references or with more than a metric takes, and a
        metric's refusal of a batch's text.

        Returns ``(stats, refs_per_row, tokenizer_of_row, tokenizers)``:
        int64 statistics (``metrics.width`` columns), the number of non-null
        references of every row, the tokenizer code of every row and the
        tokenizer name of every code.
        """
        import pyarrow as pa

        metrics = MetricSet.of(metrics).for_batch(batch, first_row)
        buffers = BufferPairs.of(buffers)
        hyp, refs, errors = self.hyp, list(self.refs), self.encoding_errors
        n = batch.num_rows
        hyp_column = hypothesis_column(batch, hyp, first_row, errors)
        if hyp_column.null_count:
            if not self.null_as_empty:
                row = int(np.flatnonzero(~np.asarray(hyp_column.is_valid()))[0])
                raise InputError(f"column {hyp!r}, row {first_row + row}: the hypothesis is null "
                                 "(--null-as-empty takes it as empty)")
            hyp_column = hyp_column.fill_null("")
        streams = reference_streams(batch, refs, first_row, errors)
        present = np.stack([np.ones(n, bool) if s.valid is None else s.valid for s in streams])
        refs_per_row = present.sum(axis=0)
        if (refs_per_row == 0).any():
            row = int(np.flatnonzero(refs_per_row == 0)[0])
            raise InputError(f"row {first_row + row}: every reference is null")
        metrics.check_reference_counts(refs_per_row, first_row,
                                       f"column {refs[0]!r}, " if len(refs) == 1 else "")

        if self.tokenize_column is None:
            tokenizer_of_row = np.zeros(n, dtype=np.int64)
            tokenizers = [metrics.default_tokenizer]
        else:
            tokenizer_of_row, values = factorize([batch.column(self.tokenize_column)],
                                                 [self.tokenize_column], first_row, errors)
            tokenizers = [value[0] for value in values]
        hyps = as_text_column(hyp_column, hyp, trusted=True)
        parts = {}  # tokenizer code -> its rows and their text, converted once for all metrics

        def part(code):
            if code not in parts:
                rows = np.flatnonzero(tokenizer_of_row == code)
                if rows.size == n:
                    parts[code] = rows, hyps, streams
                else:
                    take = pa.array(rows)
                    parts[code] = (rows, as_text_column(hyp_column.take(take), hyp, trusted=True),
                                   reference_streams(batch.take(take), refs, first_row, errors))
            return parts[code]

        stats = np.empty((n, metrics.width), dtype=np.int64)
        for metric, columns in zip(metrics.metrics, metrics.slices):
            if metric.tokenizer is None or self.tokenize_column is None:
                try:
                    stats[:, columns] = metric.column_statistics(hyps, streams, buffers=buffers)
                except SegmentError as error:
                    # The metric's refusal of one row's text (a TER segment too long for its
                    # edit-distance matrix) is the user's; it counts from the batch's start.
                    raise InputError(f"row {first_row + error.index}: {error.reason}") from None
                continue
            for code, name in enumerate(tokenizers):
                try:
                    tokenizer = get_tokenizer(name, metric.spm_model)
                except (TypeError, ValueError, ImportError, OSError) as error:
                    raise InputError(f"column {self.tokenize_column!r}: {error}") from None
                rows, part_hyps, part_refs = part(code)
                stats[rows, columns] = metric.column_statistics(part_hyps, part_refs,
                                                                tokenizer=tokenizer,
                                                                buffers=buffers)
        return stats, refs_per_row, tokenizer_of_row, tokenizers

    def statistics(self, batches, metrics=None, first_row: int = 0, partition: int = 0,
                   on_batch=None, buffers=None, total_rows: int | None = None) -> Groups:
        """Per-group sums of record batches whose first row is ``first_row``.

        ``metrics`` is a :class:`MetricSet` or one metric object (default:
        :meth:`metric_set`); ``partition`` and the row give each group's
        first position; ``on_batch(batch, stats, first_row)`` sees every
        batch's statistics; ``total_rows``, the rows of ``batches`` when known
        (a Parquet file's metadata says), lets the first batch go to the pool
        as soon as it is read (without it, a table of one batch is only known
        as such once a second one is not there, so the first batch is counted
        on the calling thread, its kernels in pieces on the pool, while the
        second is read); ``buffers`` are two
        :class:`~fastbleu.statistics.HashBuffer` to reuse (new ones without),
        lent first; every batch borrows its scratch from one
        :class:`~fastbleu.statistics.BufferPairs`, so that it is reused
        from batch to batch, also by the batches that run side by side.

        Each record batch runs whole on one thread of the pool
        (:func:`fastbleu._kernels.threads.ordered_map`): its conversion, its
        statistics and its own group sums (a :class:`Groups` of the batch),
        as many batches side by side as the pool has threads.  The calling
        thread only takes the next batches from the reader and merges each
        batch's few group sums (exact int64, in row order), so nearly no
        work is left serial and the sums are those of one batch at a time.
        """
        metrics = self.metric_set() if metrics is None else MetricSet.of(metrics)
        groups = Groups(metrics.width)
        keys = list(self.keys)

        def numbered():
            row = first_row
            for batch in batches:
                if batch.num_rows:
                    yield batch, row
                    row += batch.num_rows

        scratch = BufferPairs.of(buffers)
        encoding_errors = self.encoding_errors

        def counted(item):
            """One batch, whole, on a pool thread: its statistics and its own group sums."""
            batch, row = item
            counts = self.batch_statistics(batch, metrics, row, scratch)
            stats, refs_per_row, tokenizer_of_row, tokenizers = counts
            part = Groups(metrics.width)
            if keys:
                codes, key_values = factorize([batch.column(k) for k in keys], keys, row,
                                              encoding_errors)
            else:
                codes, key_values = np.zeros(batch.num_rows, dtype=np.int64), [()]
            part.add(codes, key_values, stats, refs_per_row, tokenizer_of_row, tokenizers,
                     (partition, row))
            return batch, row, stats, part

        def add(batch, row, stats, part):
            # Here only the few rows of the batch's groups: a merge (exact, int64).
            if keys:
                groups.check_key_types({k: batch.schema.field(k).type for k in keys}, row)
                part.key_types = groups.key_types
            groups.merge(part)
            if on_batch is not None:
                on_batch(batch, stats, row)

        items = numbered()
        if total_rows is None:
            # The rows are not known (CSV, JSON Lines): the first batch is counted here, as
            # a table of one batch is (its kernels in pieces on the pool), while the reader
            # reads the next one; only that read tells whether there is more.
            for item in itertools.islice(items, 1):
                add(*counted(item))
            second = list(itertools.islice(items, 1))
            small = not second
            items = itertools.chain(second, items)
        else:
            small = total_rows <= self.batch_size
        if small:  # one batch: here (no numba import for a small table)
            for item in items:
                add(*counted(item))
            return groups
        from .._kernels.threads import in_pool_thread, ordered_map, pool_size, submit

        # Every batch whole on one pool thread (its kernels in one piece there), as
        # many side by side as the pool has threads, while this thread only reads
        # the next batches (pyarrow decodes them on its reader thread) and merges
        # each batch's group sums.
        threads = pool_size()
        if total_rows is None or threads < SPLIT_FROM_THREADS or in_pool_thread():
            for result in ordered_map(counted, items):
                add(*result)
            return groups
        # On many threads the last batches of a table of known rows go as two or four jobs
        # of consecutive rows (tail_pieces): the first is the batch's job in ordered_map's
        # window, the others start beside it (the window still holds as many batches, so
        # as many rows, and a long batch ahead does not hold back the small pieces behind
        # it); the pieces are merged here in row order and segments_out gets the batch
        # whole, as from one job.
        end = first_row + total_rows
        started = deque()  # the pieces started beside their batch's job, not yet taken

        def pieced():
            for batch, row in items:
                count = tail_pieces(batch.num_rows, end - row, self.batch_size, threads)
                if count == 1:
                    yield (batch, row), None
                    continue
                cuts = [batch.num_rows * k // count for k in range(count + 1)]
                others = [submit(counted, (batch.slice(cuts[k], cuts[k + 1] - cuts[k]),
                                           row + cuts[k])) for k in range(1, count)]
                started.extend(others)
                yield (batch.slice(0, cuts[1]), row), (batch, row, others)

        def first_piece(item):
            piece, whole = item
            return counted(piece), whole

        interrupted = False
        try:
            for result, whole in ordered_map(first_piece, pieced()):
                if whole is None:
                    add(*result)
                    continue
                batch, row, others = whole
                parts = [result]
                for future in others:
                    parts.append(future.result())
                    started.popleft()
                if keys:
                    groups.check_key_types({k: batch.schema.field(k).type for k in keys}, row)
                for _, _, _, part in parts:
                    if keys:
                        part.key_types = groups.key_types
                    groups.merge(part)
                if on_batch is not None:
                    on_batch(batch, np.concatenate([stats for _, _, stats, _ in parts]), row)
        except KeyboardInterrupt:
            interrupted = True
            raise
        finally:
            for future in started:  # after an error: as ordered_map does with its own jobs
                future.cancel()
            if not interrupted:
                for future in started:
                    if not future.cancelled():
                        future.exception()
        return groups

    def scores(self, groups: Groups, metrics=None):
        """One score and signature per group and metric, in order of first appearance.

        Returns a :class:`GroupScores` for a single metric, a
        :class:`MetricScores` (one ``GroupScores`` per metric) for several.
        """
        metrics = self.metric_set() if metrics is None else MetricSet.of(metrics)
        keys = list(self.keys)
        if groups.rows == 0:
            names = ", ".join(metric.formula.name for metric in metrics.metrics)
            logger.warning("the table has no rows; its %s %s 0.0", names,
                           "is" if len(metrics) == 1 else "are")
            if not keys:  # the whole (empty) table is one corpus
                groups.add_empty_corpus(metrics.default_tokenizer, len(self.refs))
        key_values, totals, info = groups.ordered()
        results = [self._metric_scores(metric, key_values, totals[:, columns], info,
                                       groups.key_types, prefix)
                   for metric, columns, prefix in zip(
                       metrics.metrics, metrics.slices,
                       [metrics.prefix(i) for i in range(len(metrics))])]
        return results[0] if len(results) == 1 else MetricScores(metrics.labels, results)

    def _metric_scores(self, metric, key_values, totals, info, key_types,
                       prefix: str) -> GroupScores:
        formula = metric.formula
        totals = np.ascontiguousarray(totals)
        # Groups with the same references count and tokenizer share one signature (a table
        # with a document per row has as many groups as rows, and few distinct signatures).
        shared = {}
        signatures = []
        for g in info:
            if metric.tokenizer is None:
                tokenizer = None
            else:
                tokenizer = g.tokenizer if self.tokenize_column else metric.tokenizer.name
            key = (g.min_refs if g.min_refs == g.max_refs else -1, tokenizer)
            if key not in shared:
                shared[key] = metric.signature(
                    key[0], None if tokenizer is None
                    else get_tokenizer(tokenizer, metric.spm_model).signature)
            signatures.append(shared[key])
        return GroupScores(list(self.keys), key_types, key_values,
                           [formula.score(row, check=False) for row in totals], signatures,
                           totals, formula, prefix)
