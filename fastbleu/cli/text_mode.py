"""Text files and standard input: corpus scores, sentence scores, confidence intervals or
a paired test, under one metric or several (``-m``), as sacrebleu computes and prints them.

Public API calls, then a report; imports are lazy (``fastbleu --help`` loads no numpy).
"""

from __future__ import annotations

import logging

from ..errors import InputError, SegmentError
from .inputs import read_text_inputs
from .metrics import metrics, seed_label
from .plan import Plan, check_significance

logger = logging.getLogger("fastbleu")


def text_scores(args, plan: Plan) -> str:
    """Text files: corpus scores, sentence scores, confidence intervals or a paired test."""
    names, systems, refs = read_text_inputs(args)  # first: its import is the first of numpy
    check_significance(args, len(systems))
    _check_reference_count(plan, refs)
    full_system, full_refs = systems[0], refs  # -d scores the whole test set's parts
    if args.test_set:
        from .testset_mode import filtered

        systems, refs = filtered(args, systems, refs)
    if len(systems[0]) == 0:  # the words of table mode's warning
        shown = " and ".join(_display_names(plan))
        logger.warning(f"the input has no lines; its {shown} {'are' if ' and ' in shown else 'is'} "
                       "0.0")
    if plan.test:
        return paired_text(args, plan, names, systems, refs)
    if args.sentence_level:
        return sentence_scores(args, plan, systems, refs)
    from . import printing as report

    if len(systems) > 1:  # the references prepared once for all systems
        chosen = metrics(plan.metrics, references=refs)
        scores = [[_on_lines(source, metric.corpus_score, system, None)
                   for source, system in zip(_sources(args, systems), systems)]
                  for metric in chosen]
        return report.systems(names, scores, [m.get_signature().format(args.short)
                                              for m in chosen], args.format, args.width)
    chosen = metrics(plan.metrics)
    if args.confidence and args.confidence_n > 1:
        from ..significance import tests as significance

        seed_label(args.seed)
        _need_segments(systems[0])
        scores = _on_lines(_sources(args, systems)[0], significance.scores_with_confidence,
                           systems[0], refs, metrics=chosen, n_samples=args.confidence_n,
                           seed=args.seed, sacrebleu_compat=args.sacrebleu_compat)
    else:
        scores = [_on_lines(_sources(args, systems)[0], metric.corpus_score, systems[0], refs)
                  for metric in chosen]
    fmt = "text" if args.detail and args.format == "json" else args.format  # as sacrebleu
    short = args.short and fmt != "json"
    shown = report.single(scores, [m.get_signature().format(short) for m in chosen],
                          fmt, args.width, args.score_only)
    if args.detail:
        from .testset_mode import detail

        # sacrebleu's breakdown lists the metrics in the order of -m, not sorted
        order = list(dict.fromkeys(args.metrics))
        by_key = dict(zip((key for key, _ in plan.metrics), chosen))
        shown = "\n".join(filter(None, [shown, detail(args, [by_key[key] for key in order],
                                                        full_system, full_refs)]))
    return shown


def _check_reference_count(plan: Plan, refs: list) -> None:
    """More reference streams than a metric's exact statistics hold (averaged BLEU/NIST:
    16, their mean length being an integer times lcm(1..16); TER takes any number): one
    line."""
    for metric in metrics(plan.metrics):
        limit = getattr(metric, "max_references", None)
        if limit is not None and len(refs) > limit:
            raise InputError(f"{metric.formula.name} takes at most {limit} references per "
                             f"segment here, {len(refs)} were given (its exact statistics "
                             f"hold the mean reference length as an integer times "
                             f"lcm(1..{limit}))")


def _sources(args, systems) -> list[str]:
    """Where each system was read from, for messages: its file, or standard input."""
    return list(args.input) if args.input else ["<stdin>"] * len(systems)


def _on_lines(name: str, call, *args, **kwargs):
    """``call(*args, **kwargs)``, a metric refusing one segment being the user's error: the message
    names the input and its line (segment ``i`` is line ``i + 1`` of every file)."""
    try:
        return call(*args, **kwargs)
    except SegmentError as error:
        raise InputError(f"{name}, line {error.index + 1}: {error.reason}") from None


def _display_names(plan: Plan) -> list[str]:
    """The metrics' names as a warning gives them (``BLEU``, ``chrF``, ``TER``)."""
    return [{"bleu": "BLEU", "chrf": "chrF", "ter": "TER", "nist": "NIST"}.get(key, key)
            for key, _ in plan.metrics]


def _need_segments(system) -> None:
    """Resampling needs a segment: an empty input is refused as the API refuses it."""
    if len(system) == 0:
        raise InputError("no segments: resampling needs at least one")


def sentence_scores(args, plan: Plan, systems, refs) -> str:
    """``-sl``: every segment's score (BLEU with effective order), as sacrebleu prints it."""
    if len(systems) > 1:
        raise InputError("only one system can be scored at sentence level")
    (metric,) = metrics(plan.metrics)
    stats = _on_lines(_sources(args, systems)[0], metric.segment_statistics, systems[0], refs)
    signature = metric.get_signature().format(args.short)
    formula = metric.formula
    return "\n".join(formula.score(row, check=False).format(args.width, args.score_only, signature)
                     for row in stats)


def paired_text(args, plan: Plan, names, systems, refs) -> str:
    """``--paired-bs``/``--paired-ar`` on text files: every metric on one set of draws."""
    from . import printing as report
    from ..significance import tests as significance

    label = seed_label(args.seed)
    chosen = metrics(plan.metrics, references=refs)
    _need_segments(systems[0])
    stats = [[_on_lines(source, metric.segment_statistics, system, None)
              for source, system in zip(_sources(args, systems), systems)]
             for metric in chosen]
    results = significance.paired_tests(stats, [m.formula for m in chosen], plan.test,
                                        n_samples=plan.n_samples, seed=args.seed,
                                        sacrebleu_compat=args.sacrebleu_compat)
    signatures = [significance.paired_signature(m.get_signature(), plan.test, plan.n_samples,
                                                label).format(args.short) for m in chosen]
    if args.input is None:
        names = ["Baseline"] + [f"System {k}" for k in range(1, len(names))]
    else:
        names = [f"Baseline: {names[0]}"] + names[1:]
    return report.paired(names, results, [m.formula.name for m in chosen], signatures,
                         args.format, args.width, plan.test, plan.n_samples)
