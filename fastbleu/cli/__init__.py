"""The ``fastbleu`` command: sacrebleu's BLEU command line, plus tables.

    fastbleu REF [REF ...] -i SYS [SYS ...]     # text files, as sacrebleu reads them
    cat SYS | fastbleu REF -f text             # systems from standard input (tab-separated)
    fastbleu scores.parquet --hyp-column hyp --ref-column ref --group-by system,pair
    fastbleu REF -i BASE SYS2 --paired-bs       # significance (fastbleu.significance)
    fastbleu scores.parquet --system-column system --group-by pair --paired-ar

Parsing, reading, scoring and printing stay apart: :func:`build_parser`
knows the flags, :mod:`fastbleu.files` and :mod:`fastbleu.tables` read,
:class:`fastbleu.BLEU` and :func:`fastbleu.score_table` score,
:mod:`fastbleu.report` formats.  A user error prints one line and exits with
status 2 (nothing half-written is left behind); ``--debug`` shows the
traceback instead.  Exit statuses:

* 0: the result was written to standard output;
* 1: a broken installation (a module of fastbleu or of a required dependency
  cannot be imported), with one line saying so and how to reinstall;
* 2: a user error (bad flag, unreadable input, standard output closed or
  full), one ``fastbleu: error:`` line;
* 130: interrupted; 141: standard output's reader went away (``| head``):
  silent, as a Unix tool killed by SIGPIPE.

Messages go to standard error only; with standard error closed (``2>&-``)
they are dropped, never written to standard output.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys

from ._version import __version__
from .errors import InputError
from .files import column_from_bytes, read_bytes, read_lines, split_fields
from .tables import is_table_path

logger = logging.getLogger("fastbleu")
_SMOOTH_METHODS = ("exp", "floor", "add-k", "none")


class _Parser(argparse.ArgumentParser):
    """argparse, except that its usage errors never go to standard output: argparse
    prints the usage to ``sys.stdout`` when ``sys.stderr`` is None (``2>&-``)."""

    def error(self, message):
        if sys.stderr is not None:
            self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: error: {message}\n")


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with sacrebleu's flag names and defaults."""
    parser = _Parser(
        prog="fastbleu",
        description="BLEU exactly as sacrebleu computes it, vectorized for large corpora. "
                    "Give reference files and systems (-i) as sacrebleu takes them, or one "
                    "table (Parquet file, directory or glob; CSV, TSV, JSON Lines) with "
                    "--hyp-column and --ref-column.")
    parser.add_argument("refs", nargs="+", metavar="REF",
                        help="reference file(s), one segment per line (.gz read transparently),"
                             " or one table")
    parser.add_argument("-i", "--input", nargs="+", metavar="SYS",
                        help="system output file(s) (default: standard input, several systems "
                             "as tab-separated columns)")
    bleu = parser.add_argument_group("BLEU")
    bleu.add_argument("-tok", "--tokenize", default=None,
                      help="tokenizer: 13a (default), none, char, intl, zh, ja-mecab, ko-mecab, "
                           "spm, flores101, flores200 or spBLEU-1K")
    bleu.add_argument("--spm-model", metavar="PATH", default=None,
                      help="sentencepiece model for spm/flores101/flores200/spBLEU-1K (default: "
                           "sacrebleu's copy in $SACREBLEU/models, ~/.sacrebleu/models)")
    bleu.add_argument("-lc", "--lowercase", action="store_true",
                      help="compute case-insensitive BLEU")
    bleu.add_argument("-s", "--smooth-method", choices=_SMOOTH_METHODS, default="exp",
                      help="smoothing method (default: exp)")
    bleu.add_argument("-sv", "--smooth-value", type=float, default=None,
                      help="value for floor (default 0.1) and add-k (default 1) smoothing")
    bleu.add_argument("--max-ngram-order", type=int, default=4,
                      help="highest n-gram order (default: 4)")
    bleu.add_argument("--force", action="store_true",
                      help="do not warn about hypotheses that look tokenized")
    text = parser.add_argument_group("text files")
    text.add_argument("-e", "--encoding", default="utf-8",
                      help="encoding of the text files (default: utf-8)")
    text.add_argument("--encoding-errors", choices=("strict", "replace"), default="strict",
                      help="undecodable bytes: an error (default), or U+FFFD")
    text.add_argument("-nr", "--num-refs", type=int, default=1,
                      help="references per line of a single, tab-separated reference file")
    text.add_argument("-sl", "--sentence-level", action="store_true",
                      help="a score for every segment (with effective order, as sacrebleu)")
    table = parser.add_argument_group("tables")
    # None, not "hyp": an explicit --hyp-column hyp must select table mode too.
    table.add_argument("--hyp-column", default=None, help="hypothesis column (default: hyp)")
    table.add_argument("--ref-column", action="append", metavar="NAME",
                       help="reference column; repeat it for several, or name one list<string> "
                            "column (default: ref)")
    table.add_argument("--group-by", metavar="COL[,COL...]",
                       help="one corpus BLEU per combination of these columns")
    table.add_argument("--doc-column", metavar="COL",
                       help="document column: a BLEU per document")
    table.add_argument("--tokenize-column", metavar="COL",
                       help="column naming each row's tokenizer")
    table.add_argument("--segments-out", metavar="OUT.parquet",
                       help="write every segment's sentence BLEU and statistics here (on a "
                            "Dask cluster: a directory of one file per partition)")
    table.add_argument("--null-as-empty", action="store_true",
                       help="take a null hypothesis as empty instead of failing")
    table.add_argument("--batch-size", type=int, default=1 << 16,
                       help="rows per record batch (default: 65536)")
    table.add_argument("--system-column", metavar="COL",
                       help="system name column: with --paired-bs/--paired-ar, test every "
                            "system against --baseline within each --group-by group")
    table.add_argument("--baseline", metavar="NAME",
                       help="the baseline system's name in --system-column (default: the "
                            "first system in the table)")
    table.add_argument("--segment-column", metavar="COL",
                       help="segment id column aligning the systems' rows within a group "
                            "(default: each system's rows in table order)")
    tests = parser.add_argument_group(
        "significance", "bootstrap and randomization tests, with sacrebleu's draws")
    tests.add_argument("-ci", "--confidence", action="store_true",
                       help="report a bootstrap 95%% confidence interval (one system)")
    tests.add_argument("-cin", "--confidence-n", type=int, default=1000,
                       help="bootstrap resamples for --confidence (default: 1000)")
    paired = tests.add_mutually_exclusive_group()
    paired.add_argument("-pbs", "--paired-bs", action="store_true",
                        help="paired bootstrap resampling test against the first system")
    paired.add_argument("-par", "--paired-ar", action="store_true",
                        help="paired approximate randomization test against the first system")
    tests.add_argument("-pbsn", "--paired-bs-n", type=int, default=1000,
                       help="resamples for --paired-bs (default: 1000)")
    tests.add_argument("-parn", "--paired-ar-n", type=int, default=10000,
                       help="trials for --paired-ar (default: 10000)")
    tests.add_argument("-j", "--paired-jobs", type=int, default=1,
                       help="accepted for sacrebleu's command lines; fastbleu uses its thread "
                            "pool (NUMBA_NUM_THREADS)")
    tests.add_argument("--seed", default=None,
                       help="random seed (default: $SACREBLEU_SEED, else 12345; 'none' for "
                            "fresh entropy)")
    tests.add_argument("--sacrebleu-compat", action="store_true",
                       help="sum resampled statistics in float32 as sacrebleu does (its "
                            "numbers bit for bit; the default sums exactly in int64)")
    cluster = table.add_mutually_exclusive_group()
    cluster.add_argument("--scheduler", metavar="ADDRESS",
                         help="score the table on this running Dask cluster (tcp://host:8786); "
                              "its workers must see the same files")
    cluster.add_argument("--dask-workers", type=int, metavar="N",
                         help="score the table on a new local Dask cluster of N worker "
                              "processes")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--quiet", action="store_true", help="no progress line, no warnings")
    shown.add_argument("--progress", action="store_true",
                       help="show the progress line even when standard error is not a terminal")
    out = parser.add_argument_group("output")
    out.add_argument("-f", "--format", choices=("json", "text", "latex"), default="json",
                     help="output format (default: json)")
    out.add_argument("-w", "--width", type=int, default=1, help="decimals (default: 1)")
    out.add_argument("-b", "--score-only", action="store_true", help="print only the score")
    out.add_argument("-sh", "--short", action="store_true", help="short signature")
    parser.add_argument("--debug", action="store_true", help="show a traceback for errors")
    parser.add_argument("-V", "--version", action="version", version=f"fastbleu {__version__}")
    return parser


def _check_numbers(args) -> None:
    """Every numeric flag in its range, refused with one line before anything is read or
    allocated.  sacrebleu's own rules stay: ``-pbsn``/``-parn`` of 0 or less mean the
    default, ``-cin`` of 1 or less means no interval, ``-j 0`` one job per system."""
    from ._limits import MAX_NGRAM_ORDER_LIMIT, MAX_SAMPLES

    def at_least(value, low, flag, high=None, unit=""):
        if value is None:
            return
        if value < low or (high is not None and value > high):
            if high is not None:
                limit = f"between {low} and {high:,}{unit}"
            else:
                limit = "a positive int" if low == 1 else f"at least {low}"
            raise InputError(f"{flag} must be {limit}, got {value}")

    at_least(args.width, 0, "-w/--width", 100, " decimals")  # a precision for format()
    at_least(args.max_ngram_order, 1, "--max-ngram-order", MAX_NGRAM_ORDER_LIMIT)
    at_least(args.num_refs, 1, "-nr/--num-refs")
    at_least(args.batch_size, 1, "--batch-size")
    at_least(args.dask_workers, 1, "--dask-workers")
    at_least(args.paired_jobs, 0, "-j/--paired-jobs")
    for flag, value in (("-cin/--confidence-n", args.confidence_n),
                        ("-pbsn/--paired-bs-n", args.paired_bs_n),
                        ("-parn/--paired-ar-n", args.paired_ar_n)):
        if value > MAX_SAMPLES:
            raise InputError(f"{flag} must be at most {MAX_SAMPLES:,} (one float64 score per "
                             f"sample and system is kept), got {value:,}")
    value = args.smooth_value
    if value is not None and not (value >= 0 and value != float("inf")):
        raise InputError(f"-sv/--smooth-value must be a finite number >= 0, got {value}")


def _bleu_options(args) -> dict:
    return {"lowercase": args.lowercase, "force": args.force, "tokenize": args.tokenize,
            "smooth_method": args.smooth_method, "smooth_value": args.smooth_value,
            "max_ngram_order": args.max_ngram_order, "spm_model": args.spm_model}


def _read_text_inputs(args):
    """Systems (names, columns or lists) and reference streams from text files."""
    read = lambda path: read_lines(path, args.encoding, args.encoding_errors)  # noqa: E731
    if args.num_refs > 1:
        if len(args.refs) != 1:
            raise InputError("-nr/--num-refs takes a single, tab-separated reference file")
        refs = split_fields(read(args.refs[0]), args.refs[0], args.num_refs)
    else:
        refs = [read(path) for path in args.refs]
    if args.input is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise InputError("no system output: give files with -i or pipe them into standard "
                             "input")
        column = column_from_bytes(_read_stdin(), "<stdin>", args.encoding,
                                   args.encoding_errors, universal_newlines=True)
        fields = split_fields(column, "<stdin>")
        systems = fields if len(fields) > 1 else [column]
        names = [f"System {k + 1}" for k in range(len(systems))]
    else:
        if len(set(args.input)) != len(args.input):
            raise InputError("the same system file is given twice")
        systems = [read(path) for path in args.input]
        names = list(args.input)
    ref_names = args.refs if args.num_refs == 1 else [f"{args.refs[0]} (field {k + 1})"
                                                      for k in range(len(refs))]
    for name, system in zip(names, systems):
        for ref_name, ref in zip(ref_names, refs):
            if len(ref) != len(system):
                raise InputError(f"{ref_name} has {len(ref)} lines but {name} has "
                                 f"{len(system)}")
    return names, systems, refs


def _read_stdin() -> bytes:
    """Standard input's bytes, or an InputError when it cannot be read (closed, a
    directory, opened for writing only)."""
    try:
        return sys.stdin.buffer.read()
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise InputError(f"standard input cannot be read ({reason})") from None


def _paired_test(args) -> str | None:
    """``"bs"`` or ``"ar"`` if a paired test is asked for, else None."""
    return "bs" if args.paired_bs else ("ar" if args.paired_ar else None)


def _check_significance_args(args, n_systems: int | None) -> None:
    """The combinations sacrebleu refuses, refused with one line each."""
    test = _paired_test(args)
    if args.sentence_level and (test or args.confidence):
        raise InputError("statistical tests are unavailable at sentence level (-sl)")
    if test and args.confidence:
        raise InputError("--confidence is for a single system; a paired test already reports "
                         "every system's confidence interval (--paired-bs)")
    if n_systems is not None and test and n_systems == 1:
        raise InputError("paired tests need several systems: give the baseline first, then "
                         "the others, to -i")
    if n_systems is not None and args.confidence and n_systems > 1:
        raise InputError("--confidence is for a single system; for several use --paired-bs "
                         "or --paired-ar")


def _paired_samples(args, test: str) -> int:
    """sacrebleu's rule: a number of samples of 0 or less means the default."""
    from .significance import DEFAULT_BOOTSTRAP, DEFAULT_TRIALS

    n = args.paired_bs_n if test == "bs" else args.paired_ar_n
    return n if n > 0 else (DEFAULT_BOOTSTRAP if test == "bs" else DEFAULT_TRIALS)


def _paired_text(args, names, systems, refs) -> str:
    from . import significance, significance_report
    from .bleu import BLEU

    test = _paired_test(args)
    n_samples = _paired_samples(args, test)
    _, seed_label = significance.resolve_seed(args.seed)
    bleu = BLEU(**_bleu_options(args), references=refs)
    stats = [bleu.segment_statistics(system, None) for system in systems]
    if test == "bs":
        results = significance.paired_bootstrap(stats, bleu=bleu, n_samples=n_samples,
                                                seed=args.seed,
                                                sacrebleu_compat=args.sacrebleu_compat)
    else:
        results = significance.paired_ar(stats, bleu=bleu, n_samples=n_samples, seed=args.seed,
                                         sacrebleu_compat=args.sacrebleu_compat)
    signature = significance.paired_signature(bleu, test, n_samples, seed_label)
    if args.input is None:
        names = ["Baseline"] + [f"System {k}" for k in range(1, len(names))]
    else:
        names = [f"Baseline: {names[0]}"] + names[1:]
    return significance_report.paired(names, results, signature.format(args.short),
                                      args.format, args.width, test, n_samples)


def _text_mode(args) -> str:
    from . import report
    from .bleu import BLEU

    if _paired_test(args) and args.input:
        # sacrebleu skips a repeat of the baseline's file in a paired test
        args.input = args.input[:1] + [path for path in args.input[1:] if path != args.input[0]]
    _check_significance_args(args, None)
    names, systems, refs = _read_text_inputs(args)
    _check_significance_args(args, len(systems))
    if len(systems[0]) == 0:  # the words of table mode's warning
        logger.warning("the input has no lines; its BLEU is 0.0")
    options = _bleu_options(args)
    if _paired_test(args):
        return _paired_text(args, names, systems, refs)
    if args.sentence_level:
        if len(systems) > 1:
            raise InputError("only one system can be scored at sentence level")
        bleu = BLEU(**options, effective_order=True)
        stats = bleu.segment_statistics(systems[0], refs)
        signature = bleu.get_signature().format(args.short)
        return "\n".join(bleu._score(row).format(args.width, args.score_only, signature)
                         for row in stats)
    if len(systems) == 1 and args.confidence and args.confidence_n > 1:
        from .significance import score_with_confidence

        bleu = BLEU(**options)
        scores = [score_with_confidence(systems[0], refs, bleu=bleu, n_samples=args.confidence_n,
                                        seed=args.seed, sacrebleu_compat=args.sacrebleu_compat)]
    elif len(systems) == 1:
        bleu = BLEU(**options)
        scores = [bleu.corpus_score(systems[0], refs)]
    else:  # tokenize the references once for all systems
        bleu = BLEU(**options, references=refs)
        scores = [bleu.corpus_score(system, None) for system in systems]
    if len(systems) == 1:
        signature = bleu.get_signature().format(args.short and args.format != "json")
        return report.single(scores[0], signature, args.format, args.width, args.score_only)
    return report.systems(names, scores, bleu.get_signature().format(args.short), args.format,
                          args.width)


def _score_groups(args, **arguments):
    """The table's scores, in this process or on a Dask cluster (``--scheduler``, ``--dask-workers``)."""
    if args.scheduler is None and args.dask_workers is None:
        from .table_scoring import score_groups

        return score_groups(args.refs[0], **arguments)
    from .dask import connect, require, score_groups

    try:
        require()
    except ImportError as error:  # the message names the extra to install
        raise InputError(str(error)) from None
    if arguments.get("segments_out") is not None:  # before starting a cluster
        from .output import check_directory

        check_directory(arguments["segments_out"], args.refs[0])
    # Dask logs its cluster's life at INFO; the root handler set up in main() would print it.
    logging.getLogger("distributed").setLevel(logging.ERROR)
    with connect(args.scheduler, args.dask_workers) as client:
        return score_groups(args.refs[0], client=client, **arguments)


def _group_keys(args) -> list[str]:
    """The --group-by columns, comma-separated."""
    return [k.strip() for k in args.group_by.split(",") if k.strip()] if args.group_by else []


def _progress(args) -> bool | None:
    """--progress forces the progress line, --quiet hides it; otherwise on a terminal."""
    return True if args.progress else (False if args.quiet else None)


def _table_mode(args) -> str:
    from . import report

    if len(args.refs) != 1 or args.input:
        raise InputError("a table is scored on its own: give one table and no -i")
    _check_significance_args(args, None)
    if _paired_test(args) or args.system_column:
        if args.scheduler is not None or args.dask_workers is not None:
            raise InputError("paired tests on a table run in this process; on a cluster, "
                             "gather the statistics with fastbleu.dask.segment_statistics("
                             "..., group_by=SYSTEM) and pass them to "
                             "fastbleu.significance.paired_bootstrap (README: 'On a Dask "
                             "cluster')")
        return _table_paired(args)
    if args.confidence:
        raise InputError("--confidence takes text files; for a table use --system-column with "
                         "--paired-bs, which reports every system's confidence interval")
    if args.sentence_level or args.num_refs != 1:
        raise InputError("-sl and -nr are for text files; for a table use --segments-out and "
                         "--ref-column")
    keys = _group_keys(args)
    doc = [args.doc_column] if args.doc_column else []
    result = _score_groups(args, hyp=args.hyp_column, refs=args.ref_column or ["ref"],
                           group_by=keys, doc=args.doc_column,
                           tokenize_column=args.tokenize_column, segments_out=args.segments_out,
                           null_as_empty=args.null_as_empty,
                           encoding_errors=args.encoding_errors,
                           progress=_progress(args),
                           batch_size=args.batch_size, **_bleu_options(args))
    short = args.short and args.format != "json"
    signatures = [signature.format(short) for signature in result.signatures]
    if not keys and not doc:
        return report.single(result.scores[0], signatures[0], args.format, args.width,
                             args.score_only)
    return report.groups(keys + doc, result.key_values, result.scores, signatures, args.format,
                         args.width, args.score_only)


def _table_paired(args) -> str:
    from . import significance_report
    from .table_significance import paired_table

    test = _paired_test(args)
    if test is None:
        raise InputError("--system-column is for paired tests: add --paired-bs or --paired-ar")
    if not args.system_column:
        raise InputError(f"--paired-{test} on a table needs --system-column naming the "
                         "systems (and optionally --baseline)")
    if args.segments_out or args.tokenize_column or args.doc_column:
        raise InputError("--segments-out, --tokenize-column and --doc-column do not combine "
                         "with paired tests; use --group-by and --segment-column")
    n_samples = _paired_samples(args, test)
    keys = _group_keys(args)
    result = paired_table(args.refs[0], hyp=args.hyp_column, refs=args.ref_column or ["ref"],
                          system=args.system_column, baseline=args.baseline, group_by=keys,
                          segment=args.segment_column, test=test, n_samples=n_samples,
                          seed=args.seed, sacrebleu_compat=args.sacrebleu_compat,
                          null_as_empty=args.null_as_empty,
                          encoding_errors=args.encoding_errors,
                          progress=_progress(args),
                          batch_size=args.batch_size, **_bleu_options(args))
    short = args.short and args.format != "json"
    return significance_report.paired_groups(
        keys, result.key_values, result.systems, result.results,
        [signature.format(short) for signature in result.signatures], args.format, args.width,
        test, n_samples)


def run(args) -> str:
    """Score as ``args`` say; return what to print."""
    _check_numbers(args)
    if args.spm_model is not None and args.tokenize_column is None:
        from .tokenizers import SPM_TOKENIZERS

        if (args.tokenize or "13a") not in SPM_TOKENIZERS:
            raise InputError(f"--spm-model is a sentencepiece model for -tok "
                             f"{', '.join(SPM_TOKENIZERS)}; -tok {args.tokenize or '13a'} "
                             "would ignore it")
    table_options = any([args.group_by, args.doc_column, args.segments_out, args.ref_column,
                         args.tokenize_column, args.hyp_column is not None,
                         args.system_column, args.segment_column, args.baseline,
                         args.null_as_empty])
    if args.hyp_column is None:
        args.hyp_column = "hyp"
    table = table_options or (len(args.refs) == 1 and not args.input and args.num_refs == 1
                              and not args.sentence_level and is_table_path(args.refs[0]))
    if not table and (args.scheduler is not None or args.dask_workers is not None):
        raise InputError("--scheduler and --dask-workers score a Parquet table; text files are "
                         "scored in this process")
    try:
        return _table_mode(args) if table else _text_mode(args)
    except ImportError as error:
        if _is_broken_install(error):
            raise
        raise InputError(str(error)) from None  # an optional extra: the message names it
    except (TypeError, ValueError, FileNotFoundError) as error:
        raise InputError(str(error)) from None


#: fastbleu's required dependencies: without one of them the installation is broken.
_REQUIRED = ("fastbleu", "numpy", "numba", "llvmlite", "pyarrow", "regex")


def _is_broken_install(error: ImportError) -> bool:
    """Whether an ImportError is a broken installation (a module of fastbleu or of a
    required dependency is missing or cannot be loaded) rather than a missing extra."""
    name = error.name or ""
    return name.split(".")[0] in _REQUIRED


def broken_install_message(error: ImportError) -> str:
    """The one line for an ImportError of fastbleu's own modules or required dependencies:
    the installation is broken (not the user's input), with the module and the fix."""
    name = error.name or "fastbleu"
    package = name.split(".")[0]
    what = "module" if package == "fastbleu" else f"required dependency {package}'s module"
    return (f"broken installation: fastbleu's {what} {name} cannot be imported ({error}); "
            f"this is not a problem with the input: reinstall with "
            f"pip install --force-reinstall {package}")


def _say(message: str) -> None:
    """One line on standard error; nothing (never standard output) if it is closed."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(message + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def _write_output(output: str) -> int:
    """Print the result and flush it, so that a failed write is seen here and not lost.

    A closed standard output (``>&-``) or a failed write (``> /dev/full``) is an error:
    exit 2 with one line.  A closed pipe (``| head``) is not: as a Unix tool killed by
    SIGPIPE, exit 141 (128 + SIGPIPE) silently.
    """
    stream = sys.stdout
    if stream is None:
        _say("fastbleu: error: standard output is closed; the result was not written")
        return 2
    try:
        stream.write(output + "\n")
        stream.flush()
    except BrokenPipeError:
        _silence_stdout()
        return 141
    except UnicodeEncodeError as error:
        _silence_stdout()
        _say(f"fastbleu: error: standard output's encoding ({error.encoding}) cannot hold the "
             f"result ({error.reason}); set PYTHONIOENCODING=utf-8")
        return 2
    except (OSError, ValueError) as error:
        _silence_stdout()
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        _say(f"fastbleu: error: cannot write to standard output ({reason})")
        return 2
    return 0


def _silence_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's final flush of what
    is left in its buffer does not fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``fastbleu`` console script; returns the exit status."""
    args = build_parser().parse_args(argv)
    logging.basicConfig(format="fastbleu: warning: %(message)s",
                        level=logging.ERROR if args.quiet else logging.WARNING)
    from .signals import Terminated, terminating

    try:
        with terminating():  # SIGTERM and SIGHUP unwind as Ctrl-C does, removing temporaries
            output = run(args)
    except InputError as error:
        if args.debug:
            raise
        _say(f"fastbleu: error: {error}")
        return 2
    except Terminated as stop:
        _say(f"fastbleu: stopped by {stop.name}; no output was written")
        return stop.exit_status
    except ImportError as error:  # run() lets only a broken installation through
        if args.debug or not _is_broken_install(error):
            raise
        _say(f"fastbleu: error: {broken_install_message(error)}")
        return 1
    except KeyboardInterrupt:
        _say("fastbleu: interrupted; no output was written")
        return 130
    return _write_output(output)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
