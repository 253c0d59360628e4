"""``fastbleu report``: a self-contained HTML comparison of systems, and its Markdown summary.

    fastbleu report REF [REF ...] -i SYS_A SYS_B ... -m bleu chrf -o report.html
    fastbleu report TABLE --hyp-column hyp --ref-column ref --system-column system \\
        --group-by domain -o report.html

The flags are the ``fastbleu`` command's, where they mean the same (``-i``,
``-m``, ``-tok``, ``-lc``, the chrF and TER options, ``--hyp-column``,
``--ref-column``, ``--system-column``, ``--group-by``, ``--segment-column``,
``--baseline``, ``--paired-bs-n``, ``--seed`` ...), plus the report's own
(``-o``, ``--markdown``, ``--pair``, ``--examples``, ``--alpha``, ``--src``,
``--src-column``, ``--title``).  The work is :func:`fastbleu.compare.report`'s;
the error policy is the command's: a user error is one ``fastbleu: error:``
line and exit 2, nothing half-written is left behind.
"""

from __future__ import annotations

import logging
import sys

from ..errors import InputError
from .parser import METRIC_NAMES, SMOOTH_METHODS, _Parser
from .policy import guarded, say, silence_stdout

_TABLE_FLAGS = ("hyp_column", "ref_column", "group_by", "segment_column", "src_column",
                "baseline", "system_column")


def build_report_parser() -> _Parser:
    """The parser of ``fastbleu report``."""
    parser = _Parser(prog="fastbleu report", allow_abbrev=False,
                     description="Compare systems: one self-contained HTML page (ranking with "
                                 "bootstrap intervals and significance clusters, pairwise "
                                 "tests, groups, buckets, examples) and a Markdown summary.")
    add = parser.add_argument
    add("refs", nargs="+", metavar="REF", help="reference file(s), or one table")
    add("-i", "--input", nargs="+", metavar="SYS", help="system output files (text mode)")
    add("-o", "--output", required=True, metavar="REPORT.html",
        help="the HTML page to write ('-': standard output)")
    add("--markdown", metavar="PATH", help="the Markdown summary (default: beside the page, "
                                           "with .md; none with -o -)")
    add("--no-markdown", action="store_true", help="write no Markdown summary")
    add("-m", "--metrics", nargs="+", default=["bleu"], metavar="METRIC",
        help="bleu, chrf and/or ter (default: bleu); the first orders the examples")
    add("--title", help="the page's title")
    add("--pair", nargs=2, metavar=("SYS_A", "SYS_B"),
        help="the two systems compared segment by segment (default: the best two)")
    add("--examples", type=int, default=25, metavar="N",
        help="segments shown where the pair differs most, each way (default: 25)")
    add("--alpha", type=float, default=0.05, help="significance level (default: 0.05)")
    add("-pbsn", "--paired-bs-n", type=int, default=None,
        help="bootstrap resamples, for the intervals and every paired test (default: 1000)")
    add("-cin", "--confidence-n", type=int, default=None,
        help="the same number (the name of fastbleu's flag for one system)")
    add("--seed", default=None, help="random seed (default: $SACREBLEU_SEED, else 12345; "
                                     "'none' for fresh entropy)")
    bleu = parser.add_argument_group("BLEU")
    bleu.add_argument("-tok", "--tokenize", default=None, help="tokenizer (default: 13a)")
    bleu.add_argument("--spm-model", metavar="PATH", default=None)
    bleu.add_argument("-l", "--language-pair", metavar="SRC-TRG", default=None)
    bleu.add_argument("-lc", "--lowercase", action="store_true")
    bleu.add_argument("-s", "--smooth-method", choices=SMOOTH_METHODS, default="exp")
    bleu.add_argument("-sv", "--smooth-value", type=float, default=None)
    bleu.add_argument("--max-ngram-order", type=int, default=4)
    bleu.add_argument("--force", action="store_true")
    chrf = parser.add_argument_group("chrF")
    chrf.add_argument("-cc", "--chrf-char-order", type=int, default=6)
    chrf.add_argument("-cw", "--chrf-word-order", type=int, default=0)
    chrf.add_argument("--chrf-beta", type=int, default=2)
    chrf.add_argument("--chrf-whitespace", action="store_true")
    chrf.add_argument("--chrf-lowercase", action="store_true")
    chrf.add_argument("--chrf-eps-smoothing", action="store_true")
    ter = parser.add_argument_group("TER")
    ter.add_argument("--ter-case-sensitive", action="store_true")
    ter.add_argument("--ter-asian-support", action="store_true")
    ter.add_argument("--ter-no-punct", action="store_true")
    ter.add_argument("--ter-normalized", action="store_true")
    text = parser.add_argument_group("text files")
    text.add_argument("-e", "--encoding", default="utf-8")
    text.add_argument("--encoding-errors", choices=("strict", "replace"), default="strict")
    text.add_argument("-nr", "--num-refs", type=int, default=1)
    text.add_argument("--src", metavar="FILE", help="the source file, shown with the examples")
    table = parser.add_argument_group("tables")
    table.add_argument("--hyp-column", default=None, help="hypothesis column (default: hyp)")
    table.add_argument("--ref-column", action="append", metavar="NAME",
                       help="reference column; repeat for several (default: ref)")
    table.add_argument("--system-column", metavar="COL", help="system column (default: system)")
    table.add_argument("--group-by", metavar="COL[,COL...]", help="group columns")
    table.add_argument("--segment-column", metavar="COL",
                       help="segment id column aligning the systems' rows within a group")
    table.add_argument("--baseline", metavar="NAME",
                       help="the system whose rows set the segments' order (default: the first)")
    table.add_argument("--src-column", metavar="COL", help="source column, shown with examples")
    table.add_argument("--null-as-empty", action="store_true")
    table.add_argument("--batch-size", type=int, default=1 << 16)
    parser.add_argument("-q", "--quiet", action="store_true", help="no messages but errors")
    parser.add_argument("--debug", action="store_true", help="show a traceback for errors")
    # what the command's own checks (plan.check_numbers, plan.metric_options) read
    parser.set_defaults(width=1, dask_workers=None, paired_jobs=1, paired_ar_n=10000,
                        nist_order=5, sentence_level=False, paired_bs=True, paired_ar=False,
                        test_set=None)
    return parser


def _options(args) -> dict:
    """Keyword arguments of :func:`fastbleu.compare.report` from the flags."""
    from .plan import check_metrics, check_numbers, metric_options, target_language

    check_metrics(args)
    for name in args.metrics:
        if name not in METRIC_NAMES[:3]:
            raise InputError(f"-m/--metrics: a report scores bleu, chrf and ter; not {name!r}")
    given = {v for v in (args.paired_bs_n, args.confidence_n) if v is not None}
    if len(given) > 1:
        raise InputError("-pbsn/--paired-bs-n and -cin/--confidence-n are one number of "
                         "resamples here; give one")
    n_samples = given.pop() if given else 1000
    if n_samples < 1:
        raise InputError(f"-pbsn/--paired-bs-n must be at least 1, got {n_samples}")
    args.paired_bs_n = args.confidence_n = n_samples
    check_numbers(args)
    if args.examples < 0:
        raise InputError(f"--examples must be 0 or more, got {args.examples}")
    if not 0 < args.alpha < 1:
        raise InputError(f"--alpha must be between 0 and 1, got {args.alpha}")
    if args.markdown is not None and args.no_markdown:
        raise InputError("--markdown PATH and --no-markdown contradict each other; give one")
    if args.markdown == "":
        raise InputError("--markdown: the path is empty; give one, or --no-markdown")
    if args.markdown == "-":
        raise InputError("--markdown -: the summary is written to a file only (standard "
                         "output takes the page with -o -); give it a path, or --no-markdown")
    bleu = {"lowercase": args.lowercase, "force": args.force, "tokenize": args.tokenize,
            "smooth_method": args.smooth_method, "smooth_value": args.smooth_value,
            "max_ngram_order": args.max_ngram_order, "spm_model": args.spm_model}
    trg = target_language(args.language_pair)
    if trg:
        bleu["trg_lang"] = trg
    specs = metric_options(args, bleu)
    from ..metrics import get_metric

    try:
        metrics = [get_metric(key, **options) for key, options in specs]
    except (ValueError, TypeError, FileNotFoundError, RuntimeError) as error:
        raise InputError(str(error)) from None
    return {"metrics": metrics, "n_samples": n_samples, "seed": args.seed, "alpha": args.alpha, "pair": args.pair,
            "examples": args.examples, "title": args.title,
            "markdown": False if args.no_markdown else (
                args.markdown or (args.output != "-"))}


def _is_table(args) -> bool:
    from ..tables.paths import is_table_path

    flagged = any(getattr(args, name) is not None for name in _TABLE_FLAGS)
    if flagged or args.null_as_empty:
        return True
    return len(args.refs) == 1 and not args.input and is_table_path(args.refs[0])


def _read_source(path: str, encoding: str, errors: str) -> list[str]:
    """The source file's lines (display only), or an InputError."""
    import gzip

    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rt", encoding=encoding, errors=errors, newline="\n") as handle:
            return [line[:-1] if line.endswith("\n") else line for line in handle]
    except (OSError, UnicodeDecodeError) as error:
        raise InputError(f"{path}: cannot be read ({getattr(error, 'strerror', None) or error})"
                         ) from None


def _arrow(column):
    """A column of text read from files (UTF-8 bytes and offsets) as an Arrow string array,
    without a copy; a list of str as it is."""
    if not (hasattr(column, "data") and hasattr(column, "offsets")):
        return column
    import pyarrow as pa

    return pa.LargeStringArray.from_buffers(len(column.offsets) - 1,
                                            pa.py_buffer(column.offsets),
                                            pa.py_buffer(column.data))


def run(args) -> int | None:
    """Write the report that ``args`` ask for; 141 where standard output's reader went
    away before the page was out (nothing else is said)."""
    from ..compare import api

    options = _options(args)
    to_stdout = args.output == "-"
    if to_stdout:  # the page on standard output; the summary only where --markdown says
        import matplotlib  # noqa: F401  (the charts need it: fail before the work)

        if sys.stdout is None:
            raise InputError("standard output is closed (-o -); the page was not written")
    summary = options["markdown"] if isinstance(options["markdown"], str) else None
    if _is_table(args):
        if len(args.refs) != 1 or args.input or args.src or args.num_refs != 1:
            raise InputError("a table is reported on its own: give one table, and no -i, "
                             "--src or -nr (use --src-column)")
        source = args.refs[0]
        inputs = []
        options.update(hyp=args.hyp_column or "hyp", refs=args.ref_column or ["ref"],
                       system=args.system_column or "system",
                       group_by=args.group_by.split(",") if args.group_by else None,
                       segment=args.segment_column, src=args.src_column,
                       baseline=args.baseline, null_as_empty=args.null_as_empty,
                       encoding_errors=args.encoding_errors, batch_size=args.batch_size)
        references = None
    else:
        from .inputs import read_text_inputs

        if not args.input:
            raise InputError("no systems: give their files with -i (or one table)")
        inputs = list(args.refs) + list(args.input) + ([args.src] if args.src else [])
        from ..compare.output import check_outputs

        if to_stdout:
            check_outputs(None, summary, inputs)
        else:
            check_outputs(*api.output_paths(args.output, options["markdown"]), inputs,
                          default_markdown=options["markdown"] is True)
        names, systems, references = read_text_inputs(args)
        source = dict(zip(names, map(_arrow, systems)))
        references = [_arrow(stream) for stream in references]
        if args.src:
            options["sources"] = _read_source(args.src, args.encoding, args.encoding_errors)
    protect = inputs if references is not None else []  # a table source is protected anyway
    if not to_stdout:
        found = api.report(source, references, output=args.output, protect=protect, **options)
        files = found.files
    else:
        from ..compare.output import check_outputs, write_outputs

        read = protect if references is not None else [source]
        check_outputs(None, summary, read)
        options["markdown"] = False
        found = api.report(source, references, output=None, **options)
        try:
            write_outputs(found, None, summary, read, stream=sys.stdout)
        except BrokenPipeError:  # the reader went away (| head): silent, as SIGPIPE
            silence_stdout()
            return 141
        files = ["the page to standard output"] + ([summary] if summary else [])
    if not args.quiet:
        say(f"fastbleu: wrote {' and '.join(files)} ({len(found.systems)} systems, "
            f"{found.n_segments:,} segments)")


def main(argv: list[str]) -> int:
    """``fastbleu report ...``; returns the exit status (the command's policy)."""
    args = build_report_parser().parse_args(argv)
    logging.basicConfig(format="fastbleu: warning: %(message)s",
                        level=logging.ERROR if args.quiet else logging.WARNING)
    with guarded(args.debug, "report", extras={"matplotlib": (
            "fastbleu report draws its charts with matplotlib, which is not installed: "
            "pip install 'fastbleu[report]'")}) as outcome:
        status = run(args)
    if outcome.status is not None:
        return outcome.status
    return status or 0
