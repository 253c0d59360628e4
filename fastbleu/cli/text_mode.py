"""Text files and standard input: corpus scores, sentence scores, a confidence interval or
a paired test, as sacrebleu computes and prints them.

Public API calls, then a report; imports are lazy (``fastbleu --help`` loads no numpy).
"""

from __future__ import annotations

import logging

from ..errors import InputError
from .inputs import read_text_inputs
from .metrics import metric, seed_label
from .plan import Plan, check_significance

logger = logging.getLogger("fastbleu")


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
