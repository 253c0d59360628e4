"""The command line's flags: sacrebleu's names and defaults, plus tables and Dask.

Only argparse and the version string: building the parser loads nothing heavy,
so ``fastbleu --help`` starts fast.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys

from .._version import __version__

SMOOTH_METHODS = ("exp", "floor", "add-k", "none")
#: The metrics of ``-m`` (the keys of ``fastbleu.metrics.METRICS``, which imports nothing
#: heavy either; a test checks that the two agree).
METRIC_NAMES = ("bleu", "chrf", "ter", "nist")
FORMATS = ("json", "text", "latex")


class _Parser(argparse.ArgumentParser):
    """argparse, except that its usage errors never go to standard output (argparse
    prints the usage to ``sys.stdout`` when ``sys.stderr`` is None, ``2>&-``) and that
    no option is ever abbreviated.

    ``allow_abbrev=False`` stops ``--lowerc`` from meaning ``--lowercase``, but
    argparse still completes a single-dash prefix (``-p`` for ``-pbs``, ``-c`` for
    ``-cc``); :meth:`_get_option_tuples` keeps only what is not an abbreviation: a
    one-letter option with its value attached (``-w2``; ``-tok`` and ``-t``, sacrebleu's
    test set, are two flags, as in sacrebleu).
    """

    def _get_option_tuples(self, option_string):
        # Each tuple is (action, option string, ...): keep the option strings that
        # ``option_string`` starts with (``-w`` of ``-w2``), drop those it is a prefix of.
        return [found for found in super()._get_option_tuples(option_string)
                if option_string.startswith(found[1])]

    def _print_message(self, message, file=None):
        # argparse drops a failed write, and sends --help and --version to standard
        # error when standard output is closed: either way the help went nowhere and
        # the exit status said 0.  Say so, once, on standard error, and exit 2.
        if not message:
            return
        try:
            if file is None:
                raise OSError(errno.EBADF, "it is closed")
            file.write(message)
            file.flush()
        except OSError as error:
            if file is not None and file is sys.stderr:
                return  # a message for a closed or full standard error is dropped
            from .policy import say, silence_stdout

            if file is not None:
                silence_stdout()
            say(f"{self.prog}: error: cannot write to standard output ({error.strerror})")
            raise SystemExit(2) from None

    def error(self, message):
        # One line, as every other fastbleu error: argparse's whole usage block (25
        # lines) buries the message; point to --help instead.
        self.exit(2, f"{self.prog}: error: {message} (see {self.prog} --help)\n")


def apply_environment(args) -> None:
    """sacrebleu's ``SACREBLEU_FORMAT``: one of :data:`FORMATS`, in any case, replaces
    ``-f`` (even one given on the command line); any other value is ignored."""
    value = os.environ.get("SACREBLEU_FORMAT", "").lower()
    if value in FORMATS:
        args.format = value


def build_parser() -> argparse.ArgumentParser:
    """The argument parser, with sacrebleu's flag names and defaults."""
    parser = _Parser(
        prog="fastbleu", allow_abbrev=False,
        description="BLEU, chrF and TER exactly as sacrebleu computes them, vectorized for "
                    "large corpora (and NIST as NLTK or mteval-v13a computes it). "
                    "Give reference files and systems (-i) as sacrebleu takes them, or one "
                    "table (Parquet file, directory or glob; CSV, TSV, JSON Lines) with "
                    "--hyp-column and --ref-column.")
    # "*": with -t the references are sacrebleu's test set (cli.testset_mode checks which).
    parser.add_argument("refs", nargs="*", metavar="REF",
                        help="reference file(s), one segment per line (.gz read transparently),"
                             " or one table; none with -t")
    parser.add_argument("-i", "--input", nargs="+", metavar="SYS",
                        help="system output file(s) (default: standard input, several systems "
                             "as tab-separated columns)")
    # No argparse choices: an unknown name is one line of error (plan.check_metrics).
    parser.add_argument("-m", "--metrics", nargs="+", default=["bleu"],
                        metavar="METRIC",
                        help=f"metrics to compute, among {', '.join(METRIC_NAMES)} (default: "
                             "bleu); printed in sacrebleu's order, whatever the order given")
    bleu = parser.add_argument_group("BLEU")
    bleu.add_argument("-tok", "--tokenize", default=None,
                      help="tokenizer: 13a (default), none, char, intl, zh, ja-mecab, ko-mecab, "
                           "spm, flores101, flores200 or spBLEU-1K")
    bleu.add_argument("--spm-model", metavar="PATH", default=None,
                      help="sentencepiece model for spm/flores101/flores200/spBLEU-1K (default: "
                           "sacrebleu's copy in $SACREBLEU/models, ~/.sacrebleu/models)")
    bleu.add_argument("-l", "--language-pair", metavar="SRC-TRG", default=None,
                      help="source and target language (ISO 639-1 codes, e.g. en-zh): as in "
                           "sacrebleu, the target language picks the default tokenizer (zh, "
                           "ja-mecab for ja, ko-mecab for ko, else 13a)")
    bleu.add_argument("-lc", "--lowercase", action="store_true",
                      help="compute case-insensitive BLEU")
    bleu.add_argument("-s", "--smooth-method", choices=SMOOTH_METHODS, default="exp",
                      help="smoothing method (default: exp)")
    bleu.add_argument("-sv", "--smooth-value", type=float, default=None,
                      help="value for floor (default 0.1) and add-k (default 1) smoothing")
    bleu.add_argument("--max-ngram-order", type=int, default=4,
                      help="highest n-gram order (default: 4)")
    bleu.add_argument("--force", action="store_true",
                      help="do not warn about hypotheses that look tokenized")
    chrf = parser.add_argument_group("chrF")
    chrf.add_argument("-cc", "--chrf-char-order", type=int, default=6,
                      help="character n-gram order (default: 6)")
    chrf.add_argument("-cw", "--chrf-word-order", type=int, default=0,
                      help="word n-gram order (default: 0; 2 is chrF++)")
    chrf.add_argument("--chrf-beta", type=int, default=2,
                      help="weight of recall against precision (default: 2)")
    chrf.add_argument("--chrf-whitespace", action="store_true",
                      help="keep whitespace in character n-grams")
    chrf.add_argument("--chrf-lowercase", action="store_true",
                      help="compute case-insensitive chrF")
    chrf.add_argument("--chrf-eps-smoothing", action="store_true",
                      help="the epsilon smoothing of chrF++.py, NLTK and Moses instead of "
                           "effective order")
    # As in sacrebleu, these flags only configure -m ter: without it they are ignored.
    ter = parser.add_argument_group(
        "TER", "the defaults are Tercom's: lowercased, split at whitespace only, "
               "punctuation kept; lower is better, and the paired tests are two-sided as "
               "for BLEU")
    ter.add_argument("--ter-case-sensitive", action="store_true",
                     help="compute case-sensitive TER (default: lowercased)")
    ter.add_argument("--ter-asian-support", action="store_true",
                     help="with --ter-normalized, split CJK text into characters; with "
                          "--ter-no-punct, also remove CJK and full-width punctuation (alone: "
                          "no effect but the signature's asian:yes)")
    ter.add_argument("--ter-no-punct", action="store_true",
                     help="remove punctuation before TER")
    ter.add_argument("--ter-normalized", action="store_true",
                     help="Tercom's normalization and tokenization (XML entities, punctuation, "
                          "possessives, numbers)")
    nist = parser.add_argument_group(
        "NIST", "Doddington (2002); tokenized by -tok/-lc as BLEU is; information weights "
                "from the references of the whole input")
    nist.add_argument("--nist-order", type=int, default=5,
                      help="highest n-gram order of -m nist (default: 5)")
    nist.add_argument("--nist-variant", choices=("nltk", "mteval"), default="nltk",
                      help="NLTK's nist_score (default) or NIST's mteval-v13a.pl")
    sets = parser.add_argument_group(
        "test sets", "sacrebleu's test sets, read from $SACREBLEU (default ~/.sacrebleu) "
                     "where sacrebleu downloaded them; fastbleu never downloads")
    sets.add_argument("-t", "--test-set", metavar="NAME[,NAME...]",
                      help="score against this test set's references (with -l); several, "
                           "comma-separated, are concatenated")
    sets.add_argument("--echo", nargs="+", metavar="FIELD",
                      help="print these fields of the test set (src, ref, docid, origlang..., "
                           "or all), tab-separated, and stop")
    sets.add_argument("-ol", "--origlang", metavar="LANG",
                      help="only the documents originally in LANG ('non-LANG': the others)")
    sets.add_argument("--subset", metavar="REGEX",
                      help="only the documents whose domain (or WMT18/19 annotation) matches")
    sets.add_argument("--list", action="store_true",
                      help="list the test sets (of -l), or with -t their fields, and stop")
    sets.add_argument("--citation", "--cite", action="store_true",
                      help="print the test set's BibTeX citation and stop")
    sets.add_argument("-d", "--detail", action="store_true",
                      help="also score each original language (and domain) of the test set")
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
    # -q: sacrebleu's name; there it silences the INFO lines on standard error.
    shown.add_argument("-q", "--quiet", action="store_true",
                       help="no progress line, no warnings")
    shown.add_argument("--progress", action="store_true",
                       help="show the progress line even when standard error is not a terminal")
    out = parser.add_argument_group("output")
    out.add_argument("-f", "--format", choices=FORMATS, default="json",
                     help="output format (default: json); $SACREBLEU_FORMAT, when it is one of "
                          "these (any case), overrides it, as in sacrebleu")
    out.add_argument("-w", "--width", type=int, default=1, help="decimals (default: 1)")
    out.add_argument("-b", "--score-only", action="store_true", help="print only the score")
    out.add_argument("-sh", "--short", action="store_true", help="short signature")
    parser.add_argument("--debug", action="store_true", help="show a traceback for errors")
    parser.add_argument("-V", "--version", action="version", version=f"fastbleu {__version__}")
    return parser
