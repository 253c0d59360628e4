"""Each mode of the command line: public API calls, then a report; nothing else.

Every import of another part of fastbleu that the command line makes is in
this module (lazily, where it is used, so that ``fastbleu --help`` loads no
numpy, numba or pyarrow).  Where a value the user typed reaches the API's
own checks (a metric's options, a seed, a table job), that call is wrapped in
:func:`~fastbleu.cli.policy.user_values`, and its refusal becomes the user's
one-line error; every other exception is left to the error policy in
:func:`fastbleu.cli.main`.
"""

from __future__ import annotations

import contextlib
import logging

from ..errors import InputError
from .inputs import read_text_inputs
from .plan import TABLE, Plan, check_significance, make_plan
from .policy import user_values

logger = logging.getLogger("fastbleu")

#: What building a metric from the flags raises for values the user chose: a bad option
#: (ValueError), a missing sentencepiece model (FileNotFoundError), a missing optional
#: extra (ImportError) or MeCab dictionary (RuntimeError).
_METRIC_ERRORS = (ValueError, FileNotFoundError, ImportError, RuntimeError)


def execute(args) -> str:
    """Score as ``args`` (argparse's namespace) say; return what to print."""
    plan = make_plan(args)
    if args.spm_model is not None and args.tokenize_column is None:
        _check_spm_model(args, plan)
    if plan.mode == TABLE:
        return table_paired(args, plan) if plan.test else table_scores(args, plan)
    return text_scores(args, plan)


def _check_spm_model(args, plan: Plan) -> None:
    from ..tokenizers import DEFAULT_TOKENIZER, SPM_TOKENIZERS, TRG_LANG_TOKENIZERS

    tokenize = args.tokenize or TRG_LANG_TOKENIZERS.get(plan.options.get("trg_lang"),
                                                        DEFAULT_TOKENIZER)
    if tokenize not in SPM_TOKENIZERS:
        raise InputError(f"--spm-model is a sentencepiece model for -tok "
                         f"{', '.join(SPM_TOKENIZERS)}; -tok {tokenize} would ignore it")


def metric(options: dict, **more):
    """``BLEU(**options, **more)``; a refused option is the user's error."""
    from ..metrics.bleu import BLEU

    with user_values(*_METRIC_ERRORS):
        return BLEU(**options, **more)


def seed_label(seed) -> str:
    """The ``seed`` field of ``--seed`` (or ``$SACREBLEU_SEED``); a bad seed is the user's."""
    from .. import significance

    with user_values(ValueError):
        return significance.resolve_seed(seed)[1]


# -- text files ----------------------------------------------------------------------------

def text_scores(args, plan: Plan) -> str:
    """Text files: corpus scores, sentence scores, a confidence interval or a paired test."""
    names, systems, refs = read_text_inputs(args)  # first: its import is the first of numpy
    check_significance(args, len(systems))
    if len(systems[0]) == 0:  # the words of table mode's warning
        logger.warning("the input has no lines; its BLEU is 0.0")
    if plan.test:
        return paired_text(args, plan, names, systems, refs)
    if args.sentence_level:
        return sentence_scores(args, plan, systems, refs)
    if len(systems) == 1 and args.confidence and args.confidence_n > 1:
        from .. import significance

        bleu = metric(plan.options)
        seed_label(args.seed)
        _need_segments(systems[0])
        scores = [significance.score_with_confidence(
            systems[0], refs, bleu=bleu, n_samples=args.confidence_n, seed=args.seed,
            sacrebleu_compat=args.sacrebleu_compat)]
    elif len(systems) == 1:
        bleu = metric(plan.options)
        scores = [bleu.corpus_score(systems[0], refs)]
    else:  # tokenize the references once for all systems
        bleu = metric(plan.options, references=refs)
        scores = [bleu.corpus_score(system, None) for system in systems]
    from .. import report

    if len(systems) == 1:
        signature = bleu.get_signature().format(args.short and args.format != "json")
        return report.single(scores[0], signature, args.format, args.width, args.score_only)
    return report.systems(names, scores, bleu.get_signature().format(args.short), args.format,
                          args.width)


def _need_segments(system) -> None:
    """Resampling needs a segment: an empty input is refused as the API refuses it."""
    if len(system) == 0:
        raise InputError("no segments: resampling needs at least one")


def sentence_scores(args, plan: Plan, systems, refs) -> str:
    """``-sl``: every segment's BLEU with effective order, as sacrebleu prints it."""
    if len(systems) > 1:
        raise InputError("only one system can be scored at sentence level")
    bleu = metric(plan.options, effective_order=True)
    stats = bleu.segment_statistics(systems[0], refs)
    signature = bleu.get_signature().format(args.short)
    formula = bleu.formula
    return "\n".join(formula.score(row, check=False).format(args.width, args.score_only, signature)
                     for row in stats)


def paired_text(args, plan: Plan, names, systems, refs) -> str:
    """``--paired-bs``/``--paired-ar`` on text files: the table path's paired test."""
    from .. import report, significance

    label = seed_label(args.seed)
    bleu = metric(plan.options, references=refs)
    _need_segments(systems[0])
    stats = [bleu.segment_statistics(system, None) for system in systems]
    results = significance.paired_test(stats, bleu.formula, plan.test, n_samples=plan.n_samples,
                                       seed=args.seed, sacrebleu_compat=args.sacrebleu_compat)
    signature = significance.paired_signature(bleu.get_signature(), plan.test, plan.n_samples,
                                              label)
    if args.input is None:
        names = ["Baseline"] + [f"System {k}" for k in range(1, len(names))]
    else:
        names = [f"Baseline: {names[0]}"] + names[1:]
    return report.paired(names, results, signature.format(args.short), args.format, args.width,
                         plan.test, plan.n_samples)


# -- tables --------------------------------------------------------------------------------

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
    with user_values(*_METRIC_ERRORS):  # the job's checks of the flags, before any reading
        job = TableJob.create(arguments["hyp"], arguments["refs"], plan.keys, args.doc_column,
                              args.tokenize_column, args.null_as_empty, args.encoding_errors,
                              args.batch_size, plan.options)
        if args.segments_out is not None:
            job.check_segment_columns()
    result = score_groups(args, plan, arguments)
    short = args.short and args.format != "json"
    signatures = _formatted(result.signatures, short)
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
        _formatted(result.signatures, short), args.format, args.width,
        plan.test, plan.n_samples)


def _formatted(signatures: list, short: bool) -> list[str]:
    """Every signature formatted, each distinct object once (groups share them)."""
    done = {}
    return [done[id(s)] if id(s) in done else done.setdefault(id(s), s.format(short))
            for s in signatures]
