"""One table: a score per group (and document), in this process or on Dask, or a paired
test per group; for every metric of ``-m``.

Several metrics print as sacrebleu prints them for one system, extended to groups:

* no group columns: sacrebleu's output for one system and several metrics (a
  JSON list of its score objects; text lines aligned on ``=``);
* groups, JSON and text: one record (one line) per group and metric, groups in
  order of first appearance and the metrics in sacrebleu's order within each;
  LaTeX: one row per group, a column per metric;
* paired tests, JSON: sacrebleu's record per group and system, with a
  ``{score, p_value, mean, ci}`` object per metric and ``signature`` an object
  of the metrics' signatures; text and LaTeX: one table per metric.

Public API calls, then a report; imports are lazy (``fastbleu --help`` loads no numpy).
"""

from __future__ import annotations

import contextlib
import logging

from .metrics import METRIC_ERRORS, formatted, seed_label
from .plan import Plan
from .policy import user_values


def _table_arguments(args, plan: Plan) -> dict:
    return {"hyp": args.hyp_column, "refs": args.ref_column or ["ref"],
            "null_as_empty": args.null_as_empty, "encoding_errors": args.encoding_errors,
            "progress": plan.progress, "batch_size": args.batch_size,
            "metrics": _metrics(plan)}


def _metrics(plan: Plan) -> list:
    """The metric objects of ``-m`` with their flags' options; a refused option is the
    user's error."""
    from ..metrics import get_metric

    with user_values(*METRIC_ERRORS):
        return [get_metric(key, **options) for key, options in plan.metrics]


def table_scores(args, plan: Plan) -> str:
    """One table: a score per group (and document), in this process or on Dask."""
    from . import printing as report
    from ..tables.job import TableJob

    doc = [args.doc_column] if args.doc_column else []
    arguments = {**_table_arguments(args, plan), "group_by": plan.keys, "doc": args.doc_column,
                 "tokenize_column": args.tokenize_column, "segments_out": args.segments_out}
    with user_values(*METRIC_ERRORS):  # the job's checks of the flags, before any reading
        arguments["job"] = TableJob.planned(
            arguments["hyp"], arguments["refs"], plan.keys, args.doc_column,
            args.tokenize_column, args.null_as_empty, args.encoding_errors, args.batch_size,
            None, arguments["metrics"], args.segments_out)
    result = score_groups(args, plan, arguments)
    short = args.short and args.format != "json"
    results = getattr(result, "results", [result])  # MetricScores: one GroupScores per metric
    signatures = [formatted(r.signatures, short) for r in results]
    if not plan.keys and not doc:
        lines = [report.single(r.scores[0], s[0], args.format, args.width, args.score_only)
                 for r, s in zip(results, signatures)]
        return lines[0] if len(lines) == 1 else _single_metrics(lines, args.format)
    keys = plan.keys + doc
    if len(results) > 1 and args.format == "latex":
        rows = [[str(v) for v in values] + [r.scores[g].format(args.width, score_only=True)
                                             for r in results]
                for g, values in enumerate(result.key_values)]
        return report.table(keys + [r.formula.name for r in results], rows, "latex")
    # group by group, every metric of a group in turn
    return report.groups(keys, [v for v in result.key_values for _ in results],
                         [r.scores[g] for g in range(len(result.key_values)) for r in results],
                         [s[g] for g in range(len(result.key_values)) for s in signatures],
                         args.format, args.width, args.score_only)


def _single_metrics(lines: list[str], fmt: str) -> str:
    """Several metrics of one corpus as sacrebleu prints them (its print_single_results): a
    JSON list of the score objects, or the text lines right-aligned on ``=``."""
    if fmt == "json":
        return "[\n" + ",\n".join(lines) + "\n]"
    if any("=" not in line for line in lines):  # --score-only: the bare scores
        return "\n".join(lines)
    width = max(line.index("=") - 1 for line in lines)
    return "\n".join(f"{line[:line.index('=') - 1]:>{width}}{line[line.index('=') - 1:]}"
                      for line in lines)


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
    from . import printing as report
    from ..tables.paired import check_paired_columns, paired_table
    from ..tables.readers import check_batch_size

    with user_values(ValueError):  # the columns first, before the seed and the options
        check_paired_columns(args.system_column, plan.keys, args.segment_column)
    seed_label(args.seed)
    arguments = _table_arguments(args, plan)  # the flags' options checked before any reading
    with user_values(ValueError):
        check_batch_size(args.batch_size)
    found = paired_table(args.refs[0], **arguments, system=args.system_column,
                         baseline=args.baseline, group_by=plan.keys,
                         segment=args.segment_column, test=plan.test, n_samples=plan.n_samples,
                         seed=args.seed, sacrebleu_compat=args.sacrebleu_compat)
    short = args.short and args.format != "json"
    found = found if isinstance(found, list) else [found]
    if args.format == "json" and len(found) > 1:  # one record per group and system
        return report.dumped(_merged_records([
            report.paired_group_records(plan.keys, result.key_values, result.systems,
                                        result.results, formatted(result.signatures, short),
                                        result.metric_name) for result in found],
            [result.metric_name for result in found]))
    reports = [report.paired_groups(plan.keys, result.key_values, result.systems,
                                    result.results, formatted(result.signatures, short),
                                    args.format, args.width, plan.test, plan.n_samples,
                                    result.metric_name)
               for result in found]
    return reports[0] if len(reports) == 1 else "\n\n".join(reports)


def _merged_records(tables: list[list[dict]], names: list[str]) -> list[dict]:
    """Paired tests of several metrics as one JSON list: sacrebleu's record per group and
    system with every metric's result, and ``signature`` an object of theirs."""
    merged = []
    for records in zip(*tables):
        record = {k: v for k, v in records[0].items() if k != "signature"}
        for name, own in zip(names[1:], records[1:]):
            record[name] = own[name]
        record["signature"] = {name: own["signature"] for name, own in zip(names, records)}
        merged.append(record)
    return merged
