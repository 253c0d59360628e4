"""sacrebleu's test set flags (``-t``, ``--list``, ``--citation``, ``--echo``,
``--origlang``, ``--subset``, ``-d``): their checks in sacrebleu's order, and the
references, filters and per-language breakdown they give a text-mode run.

Everything is read through :mod:`fastbleu.testsets`, which never downloads.
"""

from __future__ import annotations

import logging

from ..errors import InputError

logger = logging.getLogger("fastbleu")


def uses_test_sets(args) -> bool:
    """Whether any test set flag is given."""
    return bool(args.test_set or args.list or args.citation or args.echo or args.origlang
                or args.subset or args.detail)


def early_output(args) -> str | None:
    """What ``--list``, ``--citation`` and ``--echo`` print instead of scores (None when
    scoring goes on), after sacrebleu's checks of ``-t``, in its order; an InputError for
    a refused combination."""
    from . import testsets

    if args.list:
        return testsets.listing(args.test_set, args.language_pair)
    if args.citation:
        if not args.test_set:
            raise InputError("--citation needs a test set (-t)")
        return testsets.citations(args.test_set)
    if args.test_set is None:
        # -d alone is allowed, as sacrebleu: the score, then "No subset information found"
        for flag, value in (("--echo", args.echo), ("--origlang", args.origlang),
                            ("--subset", args.subset)):
            if value:
                raise InputError(f"{flag} needs a test set (-t) and a language pair (-l)")
        return None
    if args.num_refs != 1:
        raise InputError("-nr/--num-refs is for a tab-separated reference file, not for a "
                         "test set (-t)")
    names = testsets.check_test_sets(args.test_set)
    tables = [flag for flag, value in (
        ("--hyp-column", args.hyp_column), ("--ref-column", args.ref_column),
        ("--group-by", args.group_by), ("--doc-column", args.doc_column),
        ("--tokenize-column", args.tokenize_column), ("--segments-out", args.segments_out),
        ("--system-column", args.system_column), ("--segment-column", args.segment_column),
        ("--baseline", args.baseline), ("--null-as-empty", args.null_as_empty))
        if value not in (None, False)]
    if tables:
        raise InputError(f"{', '.join(tables)} read a table; a test set (-t) is scored as "
                         "sacrebleu scores it, with systems from -i or standard input")
    if args.refs:
        raise InputError("give a test set (-t) or reference files, not both (the files "
                         f"given: {' '.join(args.refs)})")
    testsets.check_language_pair(names, args.language_pair)
    if args.echo:
        return testsets.echo(names, args.language_pair, args.echo, args.origlang, args.subset)
    if args.detail and args.format == "json":  # sacrebleu: the breakdown is not JSON
        args.format = "text"
    if args.tokenize == "none":  # sacrebleu's two warnings, one line here
        logger.warning("-tok none turns off BLEU's tokenizer, presumably for tokenized files: "
                       "published numbers will not be comparable to other papers")
    return None


def test_set_references(args) -> tuple[list[str], list[list[str]]]:
    """The names and streams of the references of ``-t`` (several test sets
    concatenated, as sacrebleu concatenates them), read from ``$SACREBLEU``."""
    from . import testsets

    names = args.test_set.split(",")
    per_set = []
    for name in names:
        files = testsets.reference_files(name, args.language_pair)
        if not files:
            logger.warning(f"no references found for test set {name}/{args.language_pair}")
        per_set.append([testsets.read_field(path, args.encoding) for path in files])
    streams = [list(stream) for stream in per_set[0]]
    for more in per_set[1:]:  # sacrebleu appends the k-th file of each set to stream k
        for k, stream in enumerate(more):
            if k < len(streams):
                streams[k] += stream
            else:
                streams.append(list(stream))
    label = f"test set {args.test_set} ({args.language_pair})"
    ref_names = [label] if len(streams) == 1 else [f"{label} reference {k + 1}"
                                                  for k in range(len(streams))]
    return ref_names, streams


def as_strings(column) -> list[str]:
    """A system or reference stream as a list of str (a text column decoded)."""
    if isinstance(column, list):
        return column
    data, offsets = column.data, column.offsets
    return [data[offsets[i]:offsets[i + 1]].tobytes().decode("utf-8", "surrogatepass")
            for i in range(len(column))]


def filtered(args, systems: list, refs: list) -> tuple[list, list]:
    """``--origlang``/``--subset``: the systems and references with only the documents
    kept; an InputError when none is."""
    from . import testsets

    if args.origlang is None and args.subset is None:
        return systems, refs
    mask = testsets.keep_mask(args.test_set.split(","), args.language_pair, args.origlang,
                              args.subset)
    columns = testsets.apply_mask([as_strings(c) for c in [*systems, *refs]], mask)
    systems, refs = columns[:len(systems)], columns[len(systems):]
    if len(systems[0]) == 0:
        kept = " ".join(f"{flag}={value}" for flag, value in (("origlang", args.origlang),
                                                             ("subset", args.subset))
                        if value is not None)
        raise InputError(f"test set {args.test_set!r} has no segment with {kept}")
    return systems, refs


def detail(args, chosen: list, system, refs: list) -> str:
    """``-d``: every metric's score on each original language (and each domain or
    country) of the whole test set, as sacrebleu's ``print_subset_results`` prints it."""
    from . import testsets

    if not args.test_set:  # reference files: sacrebleu finds no subset either
        return "No subset information found. Consider using --origlang argument."
    names = args.test_set.split(",")
    origlangs = [args.origlang] if args.origlang else testsets.available_origlangs(
        names, args.language_pair)
    if not origlangs:
        return "No subset information found. Consider using --origlang argument."
    subsets = [None] + ([args.subset] if args.subset is not None
                        else testsets.available_subsets(names, args.language_pair))
    columns = [as_strings(system), *(as_strings(ref) for ref in refs)]
    results = {}
    for origlang in origlangs:
        for subset in subsets:
            mask = testsets.keep_mask(names, args.language_pair, origlang, subset)
            kept_system, *kept_refs = testsets.apply_mask(columns, mask)
            if not kept_system:
                continue
            if subset is None:
                key = f"origlang={origlang} domain=ALL"
            elif subset.startswith("country:"):
                key = f"origlang={origlang} country={subset[len('country:'):]}"
            else:
                key = f"origlang={origlang} domain={subset}"
            results[key] = [(len(kept_system), metric.corpus_score(kept_system, kept_refs))
                            for metric in chosen]
    if not results:
        return ""
    left = max(len(key) for key in results) + 1
    name_width = max(len(score.name) for _, score in next(iter(results.values())))
    return "\n".join(f"{key:<{left}}: sentences={n:<6} {score.name:<{name_width}} = "
                     f"{score.score:.{args.width}f}"
                     for key, scores in results.items() for n, score in scores)
