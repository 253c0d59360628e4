"""What a command line asks for, checked: the mode and every refusal of flag combinations.

:func:`make_plan` turns parsed flags into a :class:`Plan` (the mode, the
paired test and its number of samples, the metric's options) or refuses
them with an :class:`~fastbleu.errors.InputError` of one line.  Nothing
is read or scored here and nothing heavy is imported: the checks that need
the data (the number of systems) are :func:`check_significance` with a
count, called once the inputs are read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from .._limits import MAX_NGRAM_ORDER_LIMIT, MAX_SAMPLES
from ..errors import InputError
from ..tables.paths import is_table_path

#: sacrebleu's default numbers of samples of the paired tests (as
#: ``fastbleu.significance.default_samples``, which loads numpy).
_DEFAULT_SAMPLES = {"bs": 1000, "ar": 10000}

TEXT, TABLE = "text", "table"


@dataclass
class Plan:
    """A checked command line.

    Attributes
    ----------
    mode : {"text", "table"}
        Text files (or standard input), or one table.
    test : {"bs", "ar"} or None
        The paired test asked for.
    n_samples : int or None
        Its resamples or trials (sacrebleu's rule: 0 or less is the default).
    options : dict
        :class:`fastbleu.BLEU`'s options from the flags.
    metrics : list of (str, dict)
        Every metric of ``-m`` with its options from the flags (BLEU's are
        ``options``), each once, in sacrebleu's order: sorted by name, except
        for a paired test, whose columns keep the order of ``-m`` (sacrebleu's
        ``PairedTest`` iterates its metrics as given).
    keys : list of str
        The ``--group-by`` columns.
    progress : bool or None
        Whether to show the progress line (None: on a terminal).
    cluster : str, int or None
        The Dask scheduler's address or number of local workers, if any.
    """

    mode: str
    test: str | None
    n_samples: int | None
    options: dict = field(default_factory=dict)
    keys: list = field(default_factory=list)
    progress: bool | None = None
    cluster: str | int | None = None
    metrics: list = field(default_factory=list)

    @property
    def on_cluster(self) -> bool:
        """Whether the table is scored on Dask (``--scheduler``, ``--dask-workers``)."""
        return self.cluster is not None


def make_plan(args) -> Plan:
    """The plan of ``args`` (argparse's namespace), or an InputError saying what is refused.

    ``args.hyp_column`` gets its default and, for a paired test on text files,
    a repeat of the baseline's file among the systems is dropped, as sacrebleu
    does.
    """
    check_metrics(args)
    check_numbers(args)
    trg_lang = target_language(args.language_pair)
    for flag, value in (("--group-by", args.group_by), ("--doc-column", args.doc_column),
                        ("--system-column", args.system_column),
                        ("--segment-column", args.segment_column),
                        ("--tokenize-column", args.tokenize_column),
                        ("--hyp-column", args.hyp_column), ("--baseline", args.baseline),
                        ("--segments-out", args.segments_out)):
        if value is not None and not value.strip():
            raise InputError(f"{flag} is empty; give a name")
    for value in args.ref_column or []:
        if not value.strip():
            raise InputError("--ref-column is empty; give a name")
    table_options = any([args.group_by, args.doc_column, args.segments_out, args.ref_column,
                         args.tokenize_column, args.hyp_column is not None,
                         args.system_column, args.segment_column, args.baseline,
                         args.null_as_empty])
    if args.hyp_column is None:  # None until here: an explicit "hyp" selects table mode too
        args.hyp_column = "hyp"
    table = table_options or (len(args.refs) == 1 and not args.input and args.num_refs == 1
                              and not args.sentence_level and is_table_path(args.refs[0]))
    cluster = args.scheduler if args.scheduler is not None else args.dask_workers
    if not table and cluster is not None:
        raise InputError("--scheduler and --dask-workers score a Parquet table; text files are "
                         "scored in this process")
    test = paired_test(args)
    options = {"lowercase": args.lowercase, "force": args.force, "tokenize": args.tokenize,
               "smooth_method": args.smooth_method, "smooth_value": args.smooth_value,
               "max_ngram_order": args.max_ngram_order, "spm_model": args.spm_model}
    if trg_lang:  # sacrebleu's -l: the target language picks the default tokenizer
        options["trg_lang"] = trg_lang
    plan = Plan(TABLE if table else TEXT, test, None, options, group_keys(args),
                True if args.progress else (False if args.quiet else None), cluster)
    plan.metrics = metric_options(args, options)
    if test:
        n = args.paired_bs_n if test == "bs" else args.paired_ar_n
        plan.n_samples = n if n > 0 else _DEFAULT_SAMPLES[test]
    if table:
        _check_table(args, plan)
    else:
        if test and args.input:  # sacrebleu skips a repeat of the baseline's file
            args.input = args.input[:1] + [path for path in args.input[1:]
                                           if path != args.input[0]]
        check_significance(args, None)
    return plan


def metric_options(args, bleu_options: dict) -> list[tuple[str, dict]]:
    """Each metric of ``-m`` and its options, sorted by name and each once, as sacrebleu
    computes and prints them (its ``sorted(metrics)`` of upper-case names)."""
    chrf = {"char_order": args.chrf_char_order, "word_order": args.chrf_word_order,
            "beta": args.chrf_beta, "whitespace": args.chrf_whitespace,
            "lowercase": args.chrf_lowercase, "eps_smoothing": args.chrf_eps_smoothing}
    ter = {"case_sensitive": args.ter_case_sensitive, "asian_support": args.ter_asian_support,
           "no_punct": args.ter_no_punct, "normalized": args.ter_normalized}
    options = {"bleu": bleu_options, "chrf": chrf, "ter": ter}
    if "nist" in args.metrics:  # its options import the tokenizers: only when asked
        options["nist"] = nist_options(args, bleu_options)
    if args.sentence_level:  # sacrebleu's -sl scores BLEU with effective order
        options["bleu"] = {**bleu_options, "effective_order": True}
    names = list(dict.fromkeys(args.metrics))
    if not paired_test(args):
        names.sort(key=str.upper)
    return [(name, options[name]) for name in names]


def nist_options(args, bleu_options: dict) -> dict:
    """``-m nist``'s options: BLEU's tokenizer and case (``-tok``, ``-l``, ``-lc``), its order
    and variant."""
    from ..tokenizers import DEFAULT_TOKENIZER, TRG_LANG_TOKENIZERS

    tokenize = bleu_options.get("tokenize") or TRG_LANG_TOKENIZERS.get(
        bleu_options.get("trg_lang", ""), DEFAULT_TOKENIZER)
    return {"max_ngram_order": args.nist_order, "variant": args.nist_variant,
            "tokenize": tokenize, "lowercase": bleu_options.get("lowercase", False),
            "spm_model": bleu_options.get("spm_model")}


def check_metrics(args) -> None:
    """``-m``'s names, and the combinations sacrebleu refuses: ``-sl`` scores one metric."""
    from .parser import METRIC_NAMES

    for name in args.metrics:
        if name not in METRIC_NAMES:
            raise InputError(f"-m/--metrics: unknown metric {name!r}; choose from "
                             f"{', '.join(METRIC_NAMES)}")
    if args.sentence_level and len(args.metrics) > 1:
        raise InputError("only one metric can be scored at sentence level (-sl); got -m "
                         f"{' '.join(args.metrics)}")


def target_language(language_pair: str | None) -> str:
    """The target language of ``-l SRC-TRG`` (sacrebleu's ``langpair.split('-')[1]``)."""
    if language_pair is None:
        return ""
    parts = language_pair.split("-")
    if len(parts) != 2 or not all(part.strip() for part in parts):
        raise InputError(f"-l/--language-pair takes SRC-TRG, two language codes joined by "
                         f"'-' (e.g. en-zh), got {language_pair!r}")
    return parts[1]


def check_numbers(args) -> None:
    """Every numeric flag in its range, refused with one line before anything is read or
    allocated.  sacrebleu's own rules stay: ``-pbsn``/``-parn`` of 0 or less mean the
    default, ``-cin`` of 1 or less means no interval, ``-j 0`` one job per system."""

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
    # More local worker processes than a few per core only thrash (a larger cluster is
    # --scheduler's job), and starting many thousands never finishes.
    at_least(args.dask_workers, 1, "--dask-workers", max(8, 4 * (os.cpu_count() or 1)),
             " processes on this machine; give --scheduler for a larger cluster")
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
    if "nist" in args.metrics:
        at_least(args.nist_order, 1, "--nist-order", 9)
    if "chrf" in args.metrics:  # sacrebleu ignores the chrF flags of a run without chrF
        at_least(args.chrf_char_order, 0, "-cc/--chrf-char-order", MAX_NGRAM_ORDER_LIMIT)
        at_least(args.chrf_word_order, 0, "-cw/--chrf-word-order", MAX_NGRAM_ORDER_LIMIT)
        if args.chrf_char_order == 0 and args.chrf_word_order == 0:
            raise InputError("-cc/--chrf-char-order and -cw/--chrf-word-order are both 0: "
                             "chrF needs n-grams of some order")


def paired_test(args) -> str | None:
    """``"bs"`` or ``"ar"`` if a paired test is asked for, else None."""
    return "bs" if args.paired_bs else ("ar" if args.paired_ar else None)


def check_significance(args, n_systems: int | None) -> None:
    """The combinations sacrebleu refuses, refused with one line each (``n_systems``: the
    number of systems read, or None before reading)."""
    test = paired_test(args)
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


def group_keys(args) -> list[str]:
    """The --group-by columns, comma-separated."""
    if args.group_by is None:
        return []
    keys = [k.strip() for k in args.group_by.split(",")]
    if not all(keys):
        raise InputError(f"--group-by {args.group_by!r} names an empty column; give "
                         "COL[,COL...]")
    return keys


def _check_table(args, plan: Plan) -> None:
    """The refusals of table mode, in the order the command line has always made them."""
    if len(args.refs) != 1 or args.input:
        raise InputError("a table is scored on its own: give one table and no -i")
    check_significance(args, None)
    if plan.test or args.system_column:
        if plan.on_cluster:
            raise InputError("paired tests on a table run in this process; on a cluster, "
                             "gather the statistics with fastbleu.dask.segment_statistics("
                             "..., group_by=SYSTEM) and pass them to "
                             "fastbleu.significance.paired_bootstrap (README: 'On a Dask "
                             "cluster')")
        if plan.test is None:
            raise InputError("--system-column is for paired tests: add --paired-bs or "
                             "--paired-ar")
        if not args.system_column:
            raise InputError(f"--paired-{plan.test} on a table needs --system-column naming "
                             "the systems (and optionally --baseline)")
        if args.segments_out or args.tokenize_column or args.doc_column:
            raise InputError("--segments-out, --tokenize-column and --doc-column do not "
                             "combine with paired tests; use --group-by and --segment-column")
        return
    if args.confidence:
        raise InputError("--confidence takes text files; for a table use --system-column with "
                         "--paired-bs, which reports every system's confidence interval")
    if args.sentence_level or args.num_refs != 1:
        raise InputError("-sl and -nr are for text files; for a table use --segments-out and "
                         "--ref-column")
