"""The command line's dispatch: each mode is its own module.

:mod:`.text_mode` scores text files and standard input, :mod:`.table_mode`
one table (in this process or on Dask); :mod:`.metrics` builds the metrics
from the flags.  Every import of another part of fastbleu that the command
line makes is lazy, so that ``fastbleu --help`` loads no numpy, numba or
pyarrow; every exception that is not the user's is left to the error policy
in :func:`fastbleu.cli.main`.
"""

from __future__ import annotations

from ..errors import InputError
from .plan import TABLE, Plan, make_plan


def execute(args) -> str | None:
    """Score as ``args`` (argparse's namespace) say; return what to print (None: nothing,
    an ``--echo`` of no segment)."""
    from .testset_mode import early_output, uses_test_sets

    if uses_test_sets(args):
        shown = early_output(args)
        if shown is not None:
            return shown or None
    elif not args.refs:
        raise InputError("no references: give reference files (or a table), or a test set "
                         "with -t and -l")
    plan = make_plan(args)
    if args.spm_model is not None and args.tokenize_column is None:
        _check_spm_model(args, plan)
    with _compile_notice(args, plan):
        if plan.mode == TABLE:
            if args.detail and not args.test_set:
                raise InputError("-d/--detail needs a test set (-t) and a language pair (-l)")
            from .table_mode import table_paired, table_scores

            return table_paired(args, plan) if plan.test else table_scores(args, plan)
        from .text_mode import text_scores

        return text_scores(args, plan)


def _compile_notice(args, plan: Plan):
    """One line on standard error when a kernel must be compiled: a first run's 5-15 s of
    compiling would otherwise look like a hang.  Shown where the progress line is (a
    terminal, or ``--progress``; never with ``-q``), so a script's standard error stays
    as it was."""
    import sys

    from ..progress import COMPILE_NOTICE, compile_message

    shown = plan.progress
    if shown is None:
        try:
            shown = sys.stderr is not None and sys.stderr.isatty()
        except (AttributeError, OSError, ValueError):
            shown = False
    return COMPILE_NOTICE.during(compile_message([key for key, _ in plan.metrics])
                                 if shown else None)


def _check_spm_model(args, plan: Plan) -> None:
    from ..tokenizers import DEFAULT_TOKENIZER, SPM_TOKENIZERS, TRG_LANG_TOKENIZERS

    tokenize = args.tokenize or TRG_LANG_TOKENIZERS.get(plan.options.get("trg_lang"),
                                                        DEFAULT_TOKENIZER)
    if tokenize not in SPM_TOKENIZERS:
        raise InputError(f"--spm-model is a sentencepiece model for -tok "
                         f"{', '.join(SPM_TOKENIZERS)}; -tok {tokenize} would ignore it")
