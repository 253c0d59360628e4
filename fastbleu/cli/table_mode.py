"""One table: a score per group (and document), in this process or on Dask, or a paired
test per group.

Public API calls, then a report; imports are lazy (``fastbleu --help`` loads no numpy).
"""

from __future__ import annotations

import contextlib
import logging

from .metrics import METRIC_ERRORS, formatted, metric, seed_label
from .plan import Plan
from .policy import user_values


def _table_arguments(args, plan: Plan) -> dict:
    return {"hyp": args.hyp_column, "refs": args.ref_column or ["ref"],
            "null_as_empty": args.null_as_empty, "encoding_errors": args.encoding_errors,
            "progress": plan.progress, "batch_size": args.batch_size, **plan.options}


def table_scores(args, plan: Plan) -> str:
    """One table: a score per group (and document), in this process or on Dask."""
    from .. import report
    from ..tables.job import TableJob

    doc = [args.doc_column] if args.doc_column else []
    arguments = {**_table_arguments(args, plan), "group_by": plan.keys, "doc": args.doc_column,
                 "tokenize_column": args.tokenize_column, "segments_out": args.segments_out}
    with user_values(*METRIC_ERRORS):  # the job's checks of the flags, before any reading
        job = TableJob.create(arguments["hyp"], arguments["refs"], plan.keys, args.doc_column,
                              args.tokenize_column, args.null_as_empty, args.encoding_errors,
                              args.batch_size, plan.options)
        if args.segments_out is not None:
            job.check_segment_columns()
    result = score_groups(args, plan, arguments)
    short = args.short and args.format != "json"
    signatures = formatted(result.signatures, short)
    if not plan.keys and not doc:
        return report.single(result.scores[0], signatures[0], args.format, args.width,
                             args.score_only)
    return report.groups(plan.keys + doc, result.key_values, result.scores, signatures,
                         args.format, args.width, args.score_only)


def score_groups(args, plan: Plan, arguments: dict):
    """The table's scores, in this process or on a Dask cluster (``--scheduler``,
    ``--dask-workers``)."""
    if not plan.on_cluster:
        from ..tables.scoring import score_groups

        return score_groups(args.refs[0], **arguments)
    from ..dask import connect, require, score_groups

    with user_values(ImportError):  # the message names the extra to install
        require()
    if arguments.get("segments_out") is not None:  # before starting a cluster
        from ..tables.targets import check_directory

        check_directory(arguments["segments_out"], args.refs[0])
    # Dask logs its cluster's life at INFO; the root handler set up in main() would print it.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with contextlib.ExitStack() as stack:
        with user_values(ValueError):  # distributed's refusal of a malformed --scheduler
            client = stack.enter_context(connect(args.scheduler, args.dask_workers))
        return score_groups(args.refs[0], client=client, **arguments)


def table_paired(args, plan: Plan) -> str:
    """``--paired-bs``/``--paired-ar`` with ``--system-column``: a test per group."""
    from .. import report
    from ..tables.paired import check_paired_columns, paired_table
    from ..tables.readers import check_batch_size

    with user_values(ValueError):  # the columns first, before the seed and the options
        check_paired_columns(args.system_column, plan.keys, args.segment_column)
    seed_label(args.seed)
    metric(plan.options)  # the flags' options checked before any reading
    with user_values(ValueError):
        check_batch_size(args.batch_size)
    result = paired_table(args.refs[0], **_table_arguments(args, plan),
                          system=args.system_column, baseline=args.baseline,
                          group_by=plan.keys, segment=args.segment_column, test=plan.test,
                          n_samples=plan.n_samples, seed=args.seed,
                          sacrebleu_compat=args.sacrebleu_compat)
    short = args.short and args.format != "json"
    return report.paired_groups(
        plan.keys, result.key_values, result.systems, result.results,
        formatted(result.signatures, short), args.format, args.width,
        plan.test, plan.n_samples)
