"""Tables -> one corpus score per group, in a single streaming pass (one process).

``score_table`` reads the hypothesis and reference columns of a table batch
by batch (:mod:`~fastbleu.tables.readers`), turns every batch into
per-segment statistics (:class:`~fastbleu.tables.job.TableJob`), adds them
into per-group sums (:class:`~fastbleu.tables.groups.Groups`) and, if asked,
writes every segment's sentence score and statistics to a Parquet file
(:class:`~fastbleu.tables.writers.SegmentWriter`).  Memory is bounded by the
batch and the number of groups, not by the rows.
"""

from __future__ import annotations

from ..progress import Progress
from ..signals import held
from .columns import column_names
from .job import TableJob
from .prepass import first_pass
from .reference_counts import counted_job
from .readers import open_table
from .results import GroupScores, MetricScores
from .targets import check_writable
from .writers import SegmentWriter


def score_table(source, hyp: str = "hyp", refs=("ref",), group_by=None, doc: str | None = None,
                *, tokenize_column: str | None = None, segments_out: str | None = None,
                null_as_empty: bool = False, encoding_errors: str = "strict",
                progress: bool | None = False, batch_size: int = 1 << 16, metrics=None,
                **bleu_options):
    """Corpus BLEU (or chrF, or TER, or several metrics) per group of a table, in one
    streaming pass.

    Parameters
    ----------
    source : str, os.PathLike, pyarrow.Table, pandas.DataFrame or polars.DataFrame
        A Parquet file, directory or glob; a CSV, TSV or JSON Lines file; or
        a table in memory.
    hyp : str
        The hypothesis column.
    refs : str or list of str
        Reference columns (a null is a missing reference), or one
        ``list<string>`` column holding a variable number of references.
    group_by : str or list of str, optional
        Columns whose value combinations each get a corpus BLEU (e.g.
        ``["system", "pair"]``); without, the whole table is one corpus.
    doc : str, optional
        A document column: every document of every group gets its own BLEU
        from its summed statistics (document-level BLEU).
    tokenize_column : str, optional
        A column naming each row's BLEU tokenizer; a group must use only one.
        It applies to the metrics that take a word tokenizer (BLEU); with only
        chrF and TER among the metrics it is refused (ValueError).
    segments_out : str, optional
        A Parquet file to write every segment's sentence score to (BLEU's
        with effective order, as sacrebleu's sentence level does), its
        statistics, its row number and its group and document values; for
        several metrics, every metric's sentence score and statistics (TER's
        ``sentence_ter``, ``num_edits`` and ``ref_length_scaled``, the mean
        reference length times 720720, so that the column sums exactly; where a
        row's number of references does not divide 720720 (17), times the
        least common multiple of the table's numbers of references).
        Written atomically.
    null_as_empty : bool
        Take a null hypothesis as an empty one instead of failing.
    encoding_errors : {"strict", "replace"}
        What to do with text that is not valid UTF-8.
    progress : bool or None
        Show a progress line on standard error (None: only on a terminal).
    batch_size : int
        Rows per record batch.
    metrics : list of str or Metric, optional
        The metrics to score, by name (``"bleu"``, ``"chrf"``, ``"ter"``) and/or
        as objects (``fastbleu.CHRF(word_order=2)``, ``fastbleu.TER(normalized=True)``);
        default BLEU alone.  The
        table is read once and each batch's text converted once for all;
        with NIST (``"nist"``) it is read once more first, its reference and
        group columns only, so that every group gets the information weights
        of all its references (:mod:`fastbleu.tables.prepass`).
    **bleu_options
        :class:`fastbleu.BLEU`'s arguments (``tokenize``, ``lowercase``,
        ``smooth_method`` ...), for the metric named ``"bleu"``.

    Returns
    -------
    pyarrow.Table
        The group (and document) columns, then the metric's columns: for
        BLEU ``score, bp, ratio, sys_len, ref_len, counts, totals,
        precisions, signature`` (``counts`` and ``totals`` are the summed
        statistics, without ``add-k``'s added k); for chrF ``score,
        hyp_ngrams, ref_ngrams, match_ngrams, signature``; for TER ``score,
        num_edits, ref_length, signature`` (``ref_length`` the summed mean
        reference lengths, a float as sacrebleu's).  With several
        metrics, every metric's columns in turn, each prefixed by the
        metric's label and ``_`` (``bleu_score`` ... ``chrf_score`` ...; a
        key given twice is numbered: ``bleu1_score``, ``bleu2_score``).

    Raises
    ------
    fastbleu.errors.InputError
        For a missing, repeated or unreadable file or column, a column whose
        type differs between the files (or batches, or partitions) of the
        table, a group column that cannot be a key (struct, list), a null
        hypothesis, a row without any reference or with more than a metric
        takes (16 for BLEU with ``ref_length="average"``; TER takes any
        number, its table read once more first when it has more than 16
        reference columns or a list column: :mod:`fastbleu.tables.reference_counts`),
        text that is not UTF-8, a metric's refusal of a
        segment (one too long for TER's edit-distance matrix), or an
        unwritable ``segments_out``.
    TypeError
        For an entry of ``metrics`` that is neither a metric name nor a Metric,
        or a keyword option of another metric than BLEU (``normalized``: pass
        ``fastbleu.TER(normalized=True)`` in ``metrics``).
    ValueError
        For a group column given twice, or named like a column of the result
        (``score`` ...) or, with ``segments_out``, of that file (``row`` ...),
        a ``batch_size`` outside 1 to 2**24, and ``metrics`` empty, holding
        an unknown name or a metric twice, or without ``"bleu"`` for BLEU
        options.
    """
    return score_groups(source, hyp, refs, group_by, doc, tokenize_column=tokenize_column,
                        segments_out=segments_out, null_as_empty=null_as_empty,
                        encoding_errors=encoding_errors, progress=progress,
                        batch_size=batch_size, metrics=metrics, **bleu_options).to_table()


def score_groups(source, hyp: str = "hyp", refs=("ref",), group_by=None, doc: str | None = None,
                 *, tokenize_column: str | None = None, segments_out: str | None = None,
                 null_as_empty: bool = False, encoding_errors: str = "strict",
                 progress: bool | None = False, batch_size: int = 1 << 16, metrics=None,
                 job: TableJob | None = None, **bleu_options) -> GroupScores | MetricScores:
    """:func:`score_table`'s work, returning the score object of every group: a
    :class:`GroupScores` for one metric, a :class:`MetricScores` for several.

    ``job`` is a plan made already (:meth:`TableJob.planned`, as the command line
    makes it); then the arguments it holds are not read again."""
    if job is None:
        job = TableJob.planned(hyp, refs, group_by, doc, tokenize_column, null_as_empty,
                               encoding_errors, batch_size, bleu_options, metrics, segments_out)
    if segments_out is not None:
        check_writable(segments_out, source)
    job = counted_job(source, job)  # TER beyond 16 references: its scale, from a first pass
    metric_set = job.metric_set()
    table = open_table(source, job.columns, batch_size, dictionary_columns=job.keys,
                       encoding_errors=job.encoding_errors)

    # NIST's weights are the whole group's: a first pass over the references (NIST only)
    metric_set, batches = first_pass(source, job, metric_set, column_names(group_by, "group_by"),
                                     table.batches())
    meter = Progress(table.total_rows, progress)
    segments = None

    def written(batch, stats, first_row):
        if segments is not None:
            segments.write(batch, stats, first_row)
        meter.update(batch.num_rows)

    try:
        with held():  # a signal waits until the writer is ours to discard
            if segments_out is not None:
                segments = SegmentWriter(segments_out, list(job.keys), metric_set, source)
        groups = job.statistics(batches, metric_set, on_batch=written,
                                total_rows=table.total_rows)
        if segments is not None:
            segments.commit()
    except BaseException:
        if segments is not None:
            segments.discard()
        raise
    finally:
        meter.close()
    return job.scores(groups, metric_set)
