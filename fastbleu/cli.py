"""The ``fastbleu`` command: sacrebleu's BLEU command line, on fastbleu's pipeline.

    fastbleu REF [REF ...] -i HYP        # JSON, as ``sacrebleu`` prints it
    cat HYP | fastbleu REF -f text       # the hypotheses from standard input

Parsing, reading and scoring stay apart: :func:`build_parser` knows the
flags, :mod:`fastbleu.files` reads, :class:`fastbleu.BLEU` scores.  A user
error (missing file, bad UTF-8, line counts that differ ...) prints one line
and exits with status 2; ``--debug`` shows the traceback instead.
"""

from __future__ import annotations

import argparse
import sys

from ._version import __version__
from .files import InputError, column_from_bytes, read_lines

_SMOOTH_METHODS = ("exp", "floor", "add-k", "none")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with sacrebleu's flag names and defaults."""
    parser = argparse.ArgumentParser(
        prog="fastbleu",
        description="BLEU exactly as sacrebleu computes it, vectorized for large corpora.")
    parser.add_argument("refs", nargs="+", metavar="REF",
                        help="reference file(s), one segment per line (.gz read transparently)")
    parser.add_argument("-i", "--input", metavar="HYP",
                        help="hypothesis file (default: standard input)")
    parser.add_argument("-tok", "--tokenize", default=None,
                        help="tokenizer: 13a (default), none or char")
    parser.add_argument("-lc", "--lowercase", action="store_true",
                        help="compute case-insensitive BLEU")
    parser.add_argument("-s", "--smooth-method", choices=_SMOOTH_METHODS, default="exp",
                        help="smoothing method (default: exp)")
    parser.add_argument("-sv", "--smooth-value", type=float, default=None,
                        help="value for floor (default 0.1) and add-k (default 1) smoothing")
    parser.add_argument("--max-ngram-order", type=int, default=4,
                        help="highest n-gram order (default: 4)")
    parser.add_argument("--force", action="store_true",
                        help="do not warn about hypotheses that look tokenized")
    parser.add_argument("-f", "--format", choices=("json", "text"), default="json",
                        help="output format (default: json)")
    parser.add_argument("-w", "--width", type=int, default=1,
                        help="decimals in the score (default: 1)")
    parser.add_argument("-b", "--score-only", action="store_true",
                        help="print only the score (text format)")
    parser.add_argument("-sh", "--short", action="store_true",
                        help="short signature")
    parser.add_argument("--debug", action="store_true",
                        help="show a traceback for errors")
    parser.add_argument("-V", "--version", action="version",
                        version=f"fastbleu {__version__}")
    return parser


def _read_inputs(args):
    refs = [read_lines(path) for path in args.refs]
    if args.input is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("no hypotheses: give a file with -i or pipe them into standard input")
        hyps = column_from_bytes(sys.stdin.buffer.read(), "<stdin>")
        hyp_name = "<stdin>"
    else:
        hyps = read_lines(args.input)
        hyp_name = args.input
    for path, ref in zip(args.refs, refs):
        if len(ref) != len(hyps):
            raise InputError(f"{path} has {len(ref)} lines but {hyp_name} has {len(hyps)}")
    return hyps, refs


def run(args) -> str:
    """Score as ``args`` say; return what to print."""
    hyps, refs = _read_inputs(args)
    from .bleu import BLEU  # numba starts here, once the inputs are known to be good

    try:
        bleu = BLEU(lowercase=args.lowercase, force=args.force, tokenize=args.tokenize,
                    smooth_method=args.smooth_method, smooth_value=args.smooth_value,
                    max_ngram_order=args.max_ngram_order)
    except (TypeError, ValueError) as error:
        raise InputError(str(error)) from None
    score = bleu.corpus_score(hyps, refs)
    signature = bleu.get_signature().format(args.short)
    is_json = args.format == "json"
    return score.format(args.width, args.score_only and not is_json, signature, is_json)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fastbleu`` console script; returns the exit status."""
    import logging

    logging.basicConfig(format="fastbleu: warning: %(message)s", level=logging.WARNING)
    args = build_parser().parse_args(argv)
    try:
        output = run(args)
    except (InputError, ValueError) as error:
        if args.debug:
            raise
        print(f"fastbleu: error: {error}", file=sys.stderr)
        return 2
    print(output)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
