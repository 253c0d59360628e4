"""Scoring on a Dask cluster: partitions -> statistics on the workers -> exact sums on the client.

The graph for :func:`score_groups` is one task per partition (per-group
int64 sums, :func:`fastbleu.dask.partitions.group_statistics`) and a tree of
merges (:data:`FAN_IN` partial results per task), so no task holds more than
a few partial results and the client receives one.  The scores are computed
on the client by the same :class:`fastbleu.tables.job.TableJob` that
scores a table in one process.  With NIST, a first layer of tasks counts every
partition's reference n-grams (:func:`fastbleu.dask.partitions.reference_counts`),
a tree merges them, one task turns them into every group's weights, and the
scoring tasks depend on that one task.
"""

from __future__ import annotations

import os

import numpy as np

from ..errors import InputError
from ..signals import held
from ..tables.groups import Groups, canonical_key
from ..tables.job import TableJob
from ..tables.paths import CSV_SUFFIXES, JSON_SUFFIXES
from ..progress import Progress
from ..tables.pieces import ParquetPiece, parquet_pieces
from ..tables.readers import check_columns
from ..tables.results import GroupScores, MetricScores
from ..tables.targets import check_directory
from ..tables.writers import AtomicDirectory
from . import partitions
from .cluster import require

#: Partial results merged by one task of the reduction tree.
FAN_IN = 8
#: Rows of a partition when a Parquet dataset is cut at row-group boundaries.
PARTITION_ROWS = 1 << 21


def _is_dask_frame(source) -> bool:
    import dask.dataframe as dd

    return isinstance(source, dd.DataFrame)


def _threads(client) -> int:
    """The threads of ``client``'s workers (of Dask's current client without one; 1 when
    there is none): a Parquet dataset is cut into at least this many partitions."""
    if client is None:
        try:
            from distributed import default_client

            client = default_client()
        except (ImportError, ValueError):  # no client: Dask's local threads
            return 1
    return max(1, sum(client.nthreads().values()))


def _pieces(source, job: TableJob, partition_rows: int, min_pieces: int = 1) -> list:
    """The partitions of ``source``: Parquet pieces (at least ``min_pieces`` where the row
    groups allow), or delayed pandas partitions."""
    columns = list(dict.fromkeys(job.columns))
    if _is_dask_frame(source):
        check_columns("DataFrame", list(source.columns), columns)
        return list(source[columns].to_delayed())
    if not isinstance(source, (str, os.PathLike)):
        raise TypeError("source must be a Parquet file, directory or glob, or a "
                        f"dask.dataframe.DataFrame, got {type(source).__name__}")
    if isinstance(partition_rows, bool) or not isinstance(partition_rows, int) \
            or partition_rows < 1:
        raise ValueError(f"partition_rows must be a positive int, got {partition_rows!r}")
    if os.fspath(source).lower().endswith(CSV_SUFFIXES + JSON_SUFFIXES):
        raise InputError(f"{os.fspath(source)}: a cluster reads Parquet here; read other "
                         "formats with dask.dataframe (read_csv, read_json) and pass the "
                         "DataFrame")
    return parquet_pieces(source, columns, partition_rows, min_pieces)


def _compute(graph, client, meter: Progress | None = None, leaves=(), rows=()):
    """The graph's result; on a cluster, waited for in short steps that look for a signal.

    A SIGTERM whose exception a library swallowed (distributed's gc callback)
    stops the wait within a quarter of a second (:func:`fastbleu.signals.check`)
    instead of after the whole computation.  With ``meter``, every step also
    counts the ``rows`` of the ``leaves`` (the partitions' tasks of ``graph``) that
    are done, on the progress line.
    """
    import dask

    if client is None:
        return dask.compute(graph)[0]
    from distributed import wait

    from ..signals import check

    track = meter is not None and meter.enabled and len(leaves) > 0
    futures, *pending = client.compute([graph, *leaves]) if track else [client.compute(graph)]
    counts = list(rows)
    try:
        while True:
            try:
                wait(futures, timeout=0.25)
                break
            except TimeoutError:
                check()
            finally:
                if track:  # a finished partition's future is dropped: its result may go
                    for k, future in enumerate(pending):
                        if future is not None and future.done():
                            meter.update(counts[k])
                            pending[k] = None
        result = client.gather(futures)
        if track:
            meter.update(sum(counts[k] for k, f in enumerate(pending) if f is not None))
            meter.close()
        return result
    except BaseException:
        client.cancel([futures, *[f for f in pending if f is not None]] if track else futures)
        raise


def _meter(pieces: list, progress: bool | None, client) -> Progress | None:
    """The progress line of a cluster run over Parquet pieces (None for a Dask DataFrame,
    whose rows are not known before it is read, or without a cluster)."""
    if client is None or not pieces or not all(isinstance(p, ParquetPiece) for p in pieces):
        return None
    return Progress(sum(p.num_rows for p in pieces), progress)


def _tree(parts: list, merge):
    from dask import delayed

    while len(parts) > 1:
        parts = [delayed(merge, pure=True)(*parts[i:i + FAN_IN])
                 for i in range(0, len(parts), FAN_IN)]
    return parts[0]


def _weights(pieces: list, job: TableJob, metric_set, columns):
    """NIST's weights as one node of the graph (None without NIST): every partition's
    reference counts (:func:`partitions.reference_counts`), merged in a tree, turned into
    weights once; the scoring tasks depend on that node, so it is computed once and sent
    to the workers that need it (:mod:`fastbleu.tables.prepass`)."""
    from dask import delayed

    from ..tables import prepass

    if not pieces or not prepass.nist_positions(metric_set):
        return None
    columns = tuple(columns)
    counts = [delayed(partitions.reference_counts, pure=True)(piece, index, job, columns)
              for index, piece in enumerate(pieces)]
    return delayed(partitions.table_weights, pure=True)(
        _tree(counts, partitions.merge_counts), job)


def _counted(source, pieces: list, job: TableJob, client) -> TableJob:
    """``job`` after a first pass counting the references of every partition, where a
    metric's rows depend on them (TER beyond 16 references: the scale of its rows, one for
    the whole table; :mod:`fastbleu.tables.reference_counts`), else ``job`` itself."""
    from dask import delayed

    from ..tables import reference_counts

    if not pieces or not reference_counts.may_need_counts(job) or _no_lists(source, pieces, job):
        return job
    counts = [delayed(partitions.reference_count_set, pure=True)(piece, index, job)
              for index, piece in enumerate(pieces)]
    return reference_counts.with_counts(job, _compute(_tree(counts, reference_counts.merged),
                                                      client))


def _no_lists(source, pieces: list, job: TableJob) -> bool:
    """Whether the job's single reference column is known to hold text, not lists, without
    reading it (a Dask DataFrame's dtype, a Parquet footer): then no pass is needed."""
    if len(job.refs) != 1:
        return False
    name = job.refs[0]
    if _is_dask_frame(source):
        kind = str(source._meta[name].dtype)
        return kind != "object" and "list" not in kind
    if isinstance(pieces[0], ParquetPiece):
        import pyarrow as pa
        import pyarrow.parquet as pq

        kind = pq.read_schema(pieces[0].path).field(name).type
        return not (pa.types.is_list(kind) or pa.types.is_large_list(kind))
    return False


def score_groups(source, hyp: str = "hyp", refs=("ref",), group_by=None, doc: str | None = None,
                 *, client=None, tokenize_column: str | None = None,
                 segments_out: str | None = None, null_as_empty: bool = False,
                 encoding_errors: str = "strict", progress: bool | None = False,
                 batch_size: int = 1 << 16, partition_rows: int = PARTITION_ROWS,
                 metrics=None, job: TableJob | None = None,
                 **bleu_options) -> GroupScores | MetricScores:
    """:func:`score_table`'s work, returning the score object of every group (a
    :class:`GroupScores`, or a :class:`MetricScores` for several metrics); ``job`` as for
    :func:`fastbleu.tables.scoring.score_groups`."""
    require()
    if job is None:
        job = TableJob.planned(hyp, refs, group_by, doc, tokenize_column, null_as_empty,
                               encoding_errors, batch_size, bleu_options, metrics, segments_out)
    if segments_out is not None:  # before reading any footer: never an input, never a file
        check_directory(segments_out, source)
    pieces = _pieces(source, job, partition_rows, _threads(client))
    job = _counted(source, pieces, job, client)
    metric_set = job.metric_set()
    meter = _meter(pieces, progress, client)
    segments = None
    try:
        with held():  # a signal waits until the temporary directory is ours to discard
            if segments_out is not None:
                segments = AtomicDirectory(segments_out, source)
        offsets = [None] * len(pieces)
        if segments is not None and _is_dask_frame(source):
            # Row numbers of the segment files count from the table's start.
            lengths = _compute(source.map_partitions(len), client)
            offsets = np.concatenate([[0], np.cumsum(np.asarray(lengths))[:-1]]).tolist()
        from dask import delayed

        from ..tables.columns import column_names

        weights = _weights(pieces, job, metric_set, column_names(group_by, "group_by"))
        tasks = [delayed(partitions.group_statistics, pure=True)(
                     piece, index, job,
                     None if segments is None else segments.part(f"part.{index:05d}.parquet"),
                     offsets[index], weights)
                 for index, piece in enumerate(pieces)]
        groups = _compute(_tree(tasks, partitions.merge_groups), client, meter, tasks,
                          [getattr(p, "num_rows", 0) for p in pieces]) if tasks else \
            Groups(metric_set.width)
        if segments is not None:
            segments.commit()
    except BaseException as error:
        if segments is not None:
            segments.discard()
            if isinstance(error, InputError):  # a worker's error names its part: name ours
                raise segments.renamed(error) from None
        raise
    return job.scores(groups, metric_set)


def score_table(source, hyp: str = "hyp", refs=("ref",), group_by=None, doc: str | None = None,
                *, client=None, tokenize_column: str | None = None,
                segments_out: str | None = None, null_as_empty: bool = False,
                encoding_errors: str = "strict", progress: bool | None = False,
                batch_size: int = 1 << 16, partition_rows: int = PARTITION_ROWS,
                metrics=None, **bleu_options):
    """Corpus BLEU (or chrF, or TER, or several metrics) per group of a partitioned table,
    on Dask.

    The arguments and the result are :func:`fastbleu.score_table`'s, and so
    are the numbers: every column of the returned table equals the one
    process's, groups in the same order of first appearance.

    Parameters
    ----------
    source : str, os.PathLike or dask.dataframe.DataFrame
        A Parquet file, directory or glob (the workers read it, so it must be
        on a filesystem they share with the client), or a Dask DataFrame.
    hyp, refs, group_by, doc, tokenize_column, null_as_empty, encoding_errors, batch_size
        As in :func:`fastbleu.score_table`.
    metrics : list of str or Metric, optional
        As in :func:`fastbleu.score_table`: the workers rebuild every metric
        from its key and options.
    client : distributed.Client, optional
        The cluster to run on; without, Dask's current scheduler (the last
        ``Client`` created, or local threads).
    segments_out : str, optional
        A *directory* to write every segment's sentence score and statistics
        to (every metric's), one ``part.NNNNN.parquet`` file per partition
        (the columns of :func:`fastbleu.score_table`'s file).  Written by the workers into
        a hidden temporary directory beside it, which is marked as
        fastbleu's (a ``.fastbleu-segments`` file) and swapped in when all
        are done.  It may be new, an empty directory, or an earlier run's
        marked directory holding nothing else; it may not hold an input or
        lie inside one (:mod:`fastbleu.tables.targets`).  A Dask DataFrame source is
        counted first, for the row numbers.
    progress : bool or None
        The progress line on standard error (None: when it is a terminal),
        counting the rows of the partitions done; on a cluster
        (``client``, or Dask's current client) and Parquet input only.
    partition_rows : int
        A Parquet dataset is cut at row-group boundaries into partitions of
        at most this many rows (default 2**21), and into at least as many
        partitions as the cluster has worker threads where its row groups
        allow, so that every worker gets work.
    **bleu_options
        :class:`fastbleu.BLEU`'s arguments, for the metric named ``"bleu"``.

    Returns
    -------
    pyarrow.Table
        As :func:`fastbleu.score_table`.

    Raises
    ------
    ImportError
        Without dask[dataframe] and distributed (``pip install 'fastbleu[dask]'``).
    TypeError, ValueError
        For arguments of the wrong type or value.
    fastbleu.errors.InputError
        For a missing file or column, a non-Parquet path, a ``segments_out``
        that may not be written (with the reason), and the data errors of
        :func:`fastbleu.score_table` (a partition of a DataFrame is named, its
        rows counted from its start).
    """
    return score_groups(source, hyp, refs, group_by, doc, client=client,
                        tokenize_column=tokenize_column, segments_out=segments_out,
                        null_as_empty=null_as_empty, encoding_errors=encoding_errors,
                        progress=progress, batch_size=batch_size, partition_rows=partition_rows,
                        metrics=metrics, **bleu_options).to_table()


def segment_statistics(source, hyp: str = "hyp", refs=("ref",), group_by=None, *, client=None,
                       tokenize_column: str | None = None, null_as_empty: bool = False,
                       encoding_errors: str = "strict", batch_size: int = 1 << 16,
                       partition_rows: int = PARTITION_ROWS, metric=None, **bleu_options):
    """Every segment's statistics, computed on the cluster and gathered to the client.

    This is the input of significance tests (paired bootstrap, approximate
    randomization), which resample segments and so need them all on one
    machine: 8 bytes a statistics column (``formula.row_width``) a segment, 80 for BLEU-4,
    16 for TER.

    Parameters
    ----------
    source : str, os.PathLike or dask.dataframe.DataFrame
        As in :func:`score_table`.
    hyp, refs, tokenize_column, null_as_empty, encoding_errors, batch_size, partition_rows
        As in :func:`score_table`.
    group_by : str or list of str, optional
        Split the rows by these columns (e.g. ``"system"``).
    client : distributed.Client, optional
        As in :func:`score_table`.
    metric : str or Metric, optional
        The metric (a name of :data:`fastbleu.metrics.METRICS`, or an object
        such as ``fastbleu.CHRF(word_order=2)`` or ``fastbleu.TER(normalized=True)``);
        default BLEU built with
        ``bleu_options``.
    **bleu_options
        :class:`fastbleu.BLEU`'s arguments (those that change statistics:
        ``tokenize``, ``lowercase``, ``max_ngram_order``, ``ref_length``).

    Returns
    -------
    numpy.ndarray or dict
        Without ``group_by``: int64, shape ``(rows, formula.row_width)``,
        in row order, equal to the metric's ``segment_statistics``.  With
        it: ``{key tuple: array}`` in order of first appearance, every array
        holding its group's rows in row order.
    """
    require()
    job = TableJob.create(hyp, refs, group_by, None, tokenize_column, null_as_empty,
                          encoding_errors, batch_size, bleu_options,
                          None if metric is None else [metric])
    width = job.metric().formula.row_width
    pieces = _pieces(source, job, partition_rows, _threads(client))
    counted = _counted(source, pieces, job, client)
    if counted.metrics != job.metrics:  # TER beyond 16 references: rows of another scale
        (key, before), (_, after) = job.metrics[0], counted.metrics[0]
        options = ", ".join(f"{k}={v!r}" for k, v in after.items() if before.get(k) != v)
        cls = type(job.metric()).__name__
        raise InputError(f"these rows' numbers of references need the metric built with "
                         f"{options}: pass metric=fastbleu.{cls}(..., {options}), whose "
                         "formula then scores the statistics returned")
    grouped = bool(job.keys)
    from dask import delayed

    weights = _weights(pieces, job, job.metric_set(), job.keys)
    tasks = [delayed(partitions.segment_statistics, pure=True)(piece, index, job, grouped,
                                                                weights)
             for index, piece in enumerate(pieces)]
    results = _compute(tasks, client) if tasks else []
    stats = np.concatenate([r[0] for r in results]) if results else \
        np.zeros((0, width), dtype=np.int64)
    if not grouped:
        return stats
    number: dict[tuple, int] = {}
    codes = []
    for _, local_codes, keys in results:
        glob = np.array([number.setdefault(tuple(canonical_key(v) for v in key), len(number))
                         for key in keys], dtype=np.int64)
        codes.append(glob[local_codes] if len(keys) else local_codes)
    codes = np.concatenate(codes) if codes else np.zeros(0, dtype=np.int64)
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(1, len(number)))
    return dict(zip(number, np.split(stats[order], bounds)))


def sentence_scores(ddf, hyp: str = "hyp", refs=("ref",), *, column: str | None = None,
                    tokenize_column: str | None = None, null_as_empty: bool = False,
                    encoding_errors: str = "strict", batch_size: int = 1 << 16,
                    metric=None, **bleu_options):
    """A Dask DataFrame with every row's sentence score (BLEU by default) as a new column
    (lazy).

    Parameters
    ----------
    ddf : dask.dataframe.DataFrame
        The rows; every partition is scored on its own.
    hyp, refs, tokenize_column, null_as_empty, encoding_errors, batch_size
        As in :func:`score_table`.
    column : str, optional
        Name of the new float64 column; it must not exist yet.  Default: the
        metric's sentence column (``sentence_bleu``, ``sentence_chrf``, ``sentence_ter``).
    metric : str or Metric, optional
        The metric, as in :func:`segment_statistics`; default BLEU.
    **bleu_options
        :class:`fastbleu.BLEU`'s arguments; ``effective_order=True`` gives
        sacrebleu's sentence-level numbers.

    Returns
    -------
    dask.dataframe.DataFrame
        ``ddf`` with the column added; element ``i`` equals the metric's
        ``sentence_scores(...)[i]`` (``BLEU(**bleu_options)`` by default).  Write it with
        ``.to_parquet(path)``.
    """
    require()
    if not _is_dask_frame(ddf):
        raise TypeError(f"ddf must be a dask.dataframe.DataFrame, got {type(ddf).__name__}")
    job = TableJob.create(hyp, refs, None, None, tokenize_column, null_as_empty,
                          encoding_errors, batch_size, bleu_options,
                          None if metric is None else [metric])
    if column is None:
        column = job.metric().formula.sentence_column
    if not isinstance(column, str):
        raise TypeError(f"column must be a str, got {type(column).__name__}")
    if column in ddf.columns:
        raise ValueError(f"the DataFrame already has a column {column!r}; choose another name "
                         "with column=")
    check_columns("DataFrame", list(ddf.columns), list(dict.fromkeys(job.columns)))
    meta = ddf._meta.assign(**{column: np.zeros(0, dtype=np.float64)})
    weights = _weights(list(ddf[list(dict.fromkeys(job.columns))].to_delayed()), job,
                       job.metric_set(), ())  # NIST: the weights of the whole frame
    return ddf.map_partitions(partitions.sentence_scores, job, column, weights, meta=meta)
