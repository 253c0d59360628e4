"""Metrics and labels from the command line's values: each refusal is the user's error.

Where a value the user typed reaches the API's own checks (a metric's
options, a seed), that call is wrapped in
:func:`~fastbleu.cli.policy.user_values`, and its refusal becomes the user's
one-line error.  Imports are lazy, so that ``fastbleu --help`` loads no numpy.
"""

from __future__ import annotations

from .policy import user_values

#: What building a metric from the flags raises for values the user chose: a bad option
#: (ValueError), a missing sentencepiece model (FileNotFoundError), a missing optional
#: extra (ImportError) or MeCab dictionary (RuntimeError).
METRIC_ERRORS = (ValueError, FileNotFoundError, ImportError, RuntimeError)


def metric(options: dict, **more):
    """``BLEU(**options, **more)``; a refused option is the user's error."""
    from ..metrics.bleu.metric import BLEU

    with user_values(*METRIC_ERRORS):
        return BLEU(**options, **more)


def metrics(plan_metrics: list, **more) -> list:
    """Each metric of ``plan.metrics`` (``(key, options)`` pairs) built by name through the
    registry, with ``more`` (e.g. ``references=``); a refused option is the user's error."""
    from ..metrics import get_metric

    with user_values(*METRIC_ERRORS):
        return [get_metric(key, **options, **more) for key, options in plan_metrics]


def seed_label(seed) -> str:
    """The ``seed`` field of ``--seed`` (or ``$SACREBLEU_SEED``); a bad seed is the user's."""
    from ..significance import tests as significance

    with user_values(ValueError):
        return significance.resolve_seed(seed)[1]


def formatted(signatures: list, short: bool) -> list[str]:
    """Every signature formatted, each distinct object once (groups share them)."""
    done = {}
    return [done[id(s)] if id(s) in done else done.setdefault(id(s), s.format(short))
            for s in signatures]
