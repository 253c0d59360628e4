"""The ``fastbleu`` command: sacrebleu's BLEU command line, plus tables.

    fastbleu REF [REF ...] -i SYS [SYS ...]     # text files, as sacrebleu reads them
    cat SYS | fastbleu REF -f text             # systems from standard input (tab-separated)
    fastbleu -t wmt19 -l de-en -i SYS           # a test set sacrebleu has downloaded
    fastbleu scores.parquet --hyp-column hyp --ref-column ref --group-by system,pair
    fastbleu REF -i BASE SYS2 --paired-bs       # significance (fastbleu.significance)
    fastbleu scores.parquet --system-column system --group-by pair --paired-ar
    fastbleu report REF -i A B C -m bleu chrf -o report.html   # an HTML comparison

Parse, plan, call the public API, print: :mod:`.parser` knows the flags
(:func:`build_parser`), :mod:`.plan` chooses the mode and refuses flag
combinations, :mod:`.inputs` reads text files and standard input, :mod:`.run`
calls the API for each mode and formats with :mod:`fastbleu.report`,
:mod:`.testset_mode` handles sacrebleu's test sets (``-t``, ``--echo``,
``--list``, read through :mod:`fastbleu.testsets`, never downloaded), and
:mod:`.policy` is the error policy.  A user error prints one line and exits
with status 2 (nothing half-written is left behind); ``--debug`` shows the
traceback instead.  Exit statuses:

* 0: the result was written to standard output;
* 1: a broken installation (a module of fastbleu or of a required dependency
  cannot be imported), with one line saying so and how to reinstall; or a
  bug: its traceback, then a line asking to report it;
* 2: a user error (bad flag, unreadable input, standard output closed or
  full, not enough memory), one ``fastbleu: error:`` line;
* 130: interrupted (129 and 143: SIGHUP and SIGTERM, with the same cleanup);
  141: standard output's reader went away (``| head``): silent, as a Unix
  tool killed by SIGPIPE.

Messages go to standard error only; with standard error closed (``2>&-``)
they are dropped, never written to standard output.
"""

from __future__ import annotations

import logging
import sys

from .parser import apply_environment, build_parser
from .policy import broken_install_message, guarded, is_broken_install, write_output
from .run import execute

__all__ = ["main", "build_parser", "execute", "broken_install_message"]

_is_broken_install = is_broken_install  # its name before the command line became a package


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fastbleu`` console script; returns the exit status."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ["report"]:  # fastbleu report ...: the HTML comparison (report_mode.py)
        from .report_mode import main as report_main

        return report_main(argv[1:])
    args = build_parser().parse_args(argv)
    apply_environment(args)
    logging.basicConfig(format="fastbleu: warning: %(message)s",
                        level=logging.ERROR if args.quiet else logging.WARNING)
    output = None
    with guarded(args.debug, "output", memory_hint=(
            "a table is read --batch-size rows at a time, so a smaller batch may help; "
            "else score fewer rows a run, or give the process more memory")) as outcome:
        output = execute(args)
    if outcome.status is not None:
        return outcome.status
    if output is None:  # nothing to print (an --echo of no segment), as sacrebleu
        return 0
    return write_output(output)
