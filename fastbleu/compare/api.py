"""``fastbleu.report(...)``: inputs -> numbers (:class:`~fastbleu.compare.results.Report`)
-> an HTML page and a Markdown summary, written safely.

:func:`compare` computes (statistics once, one set of draws for every metric
and system, then each group's); :func:`report` also renders and writes.
Rendering needs matplotlib (``pip install 'fastbleu[report]'``); computing
does not.
"""

from __future__ import annotations

import os
import time

import numpy as np

from ..errors import InputError

#: Examples on each side (segments where the first system of the pair is most ahead, and
#: most behind).
DEFAULT_EXAMPLES = 25


def _metric_specs(metrics, bleu_options):
    from ..tables.metric_set import metric_specs

    try:
        return metric_specs(list(metrics) if isinstance(metrics, (list, tuple)) else metrics,
                            bleu_options)
    except (TypeError, ValueError) as error:
        raise InputError(str(error)) from None


def load(source, references=None, *, names=None, hyp="hyp", refs=("ref",),
         system="system", group_by=None, segment=None, src=None, sources=None, groups=None,
         metrics=("bleu",), baseline=None, null_as_empty=False, encoding_errors="strict",
         batch_size=1 << 16, **bleu_options):
    """The :class:`~fastbleu.compare.corpus.Corpus` of :func:`report`'s inputs."""
    specs = _metric_specs(metrics, bleu_options)
    if references is None:
        from .table import from_table

        if isinstance(group_by, str):
            group_by = [k.strip() for k in group_by.split(",")]
        if isinstance(refs, str):
            refs = [refs]
        return from_table(source, hyp, refs, system, group_by or (), segment, src, specs,
                          baseline, null_as_empty, encoding_errors, batch_size)
    from .corpus import from_text

    if isinstance(source, dict):
        names, systems = list(source), list(source.values())
    else:
        systems = list(source)
        if systems and isinstance(systems[0], str):
            raise TypeError("systems must be a list of hypothesis lists (one per system) or a "
                            "dict of them by name, not one list of str")
        names = list(names) if names is not None else \
            [f"System {k + 1}" for k in range(len(systems))]
    if len(names) != len(systems):
        raise ValueError(f"{len(names)} names for {len(systems)} systems")
    if isinstance(references, str) or (references and isinstance(references[0], str)):
        raise TypeError("references must be a list of reference streams (a list of lists)")
    return from_text(names, systems, references, specs, sources, groups)


def compare(corpus, *, n_samples: int = 1000, seed=None, alpha: float = 0.05, pair=None,
            examples: int = DEFAULT_EXAMPLES, title: str | None = None):
    """Every number of a report on ``corpus`` (see :func:`report` for the arguments)."""
    from .. import significance
    from .breakdown import (Histogram, bin_counts, differences, group_rankings,
                            length_buckets, rank_segments, score_edges, sentence_scores)
    from .examples import examples as pick_examples
    from .ranking import LOWER_IS_BETTER
    from .results import Report

    n_samples = significance.check_count(n_samples, "n_samples")
    value, label = significance.resolve_seed(seed)
    if value is None:  # fresh entropy, once for all draws of this report
        value = int(np.random.SeedSequence().entropy)
    if isinstance(alpha, bool) or not isinstance(alpha, (int, float)) or not 0 < alpha < 1:
        raise ValueError(f"alpha must be a number between 0 and 1, got {alpha!r}")
    if isinstance(examples, bool) or not isinstance(examples, (int, np.integer)) or \
            examples < 0:
        raise ValueError(f"examples must be a non-negative int, got {examples!r}")
    timings = {}
    clock = time.perf_counter(), time.process_time()

    def lap(name):
        nonlocal clock
        now = time.perf_counter(), time.process_time()
        timings[name] = now[0] - clock[0]
        timings[f"{name}_cpu"] = now[1] - clock[1]
        clock = now

    n_systems = len(corpus.systems)
    if n_systems == 1 and pair is not None:
        raise InputError("pair: the report has one system; there is no pair to compare")
    named = _pair(pair, corpus.systems) if pair is not None else None  # checked before work
    signatures = [significance.paired_signature(metric.signature(corpus.num_refs), "bs",
                                                n_samples, label).format()
                  for metric in corpus.metrics]
    rankings = rank_segments(corpus, corpus.stats, signatures, n_samples, value, alpha)
    lap("bootstrap")
    groups = group_rankings(corpus, signatures, n_samples, value, alpha, rankings)
    lap("groups")
    chosen = None
    if n_systems > 1:  # by default the best two under the first metric
        chosen = named or (int(rankings[0].order[0]), int(rankings[0].order[1]))
    length = length_buckets(corpus)
    histograms, kept = [], []
    for m, formula in enumerate(corpus.layout.formulas):
        edges = score_edges(formula.name)
        counts, mine = [], {}
        for s in range(n_systems):  # one system's sentence scores at a time
            scores = sentence_scores(corpus, m, s)
            counts.append(bin_counts(scores, edges))
            if chosen is not None and s in chosen:
                mine[s] = scores
        histograms.append(Histogram(edges, np.stack(counts)))
        kept.append(mine)
    diffs, rows = [], []
    if chosen is not None:
        a, b = chosen
        diffs = [differences(kept[m][a], kept[m][b], f.name in LOWER_IS_BETTER)
                 for m, f in enumerate(corpus.layout.formulas)]
        rows = pick_examples(corpus, a, b, kept, examples,
                             corpus.layout.formulas[0].name in LOWER_IS_BETTER)
    lap("breakdowns")
    names = [f.name for f in corpus.layout.formulas]
    if title is None:
        title = f"{', '.join(names)}: {n_systems} system{'s' * (n_systems != 1)}, " \
                f"{corpus.n_segments:,} segments"
    return Report(str(title), list(corpus.systems), names, corpus.n_segments, n_samples,
                  corpus.num_refs, label, float(alpha), rankings, groups, length, histograms,
                  chosen, diffs, rows, timings)


def _pair(pair, systems) -> tuple[int, int]:
    """The indices of the two systems ``pair`` names."""
    if isinstance(pair, str) or len(pair) != 2:
        raise ValueError("pair must be two system names")
    found = []
    for name in pair:
        if str(name) not in systems:
            shown = ", ".join(repr(s) for s in systems[:10])
            raise InputError(f"pair: no system {str(name)!r} (the systems: {shown}"
                             f"{' ...' if len(systems) > 10 else ''})")
        found.append(systems.index(str(name)))
    if found[0] == found[1]:
        raise InputError("pair: give two different systems")
    return found[0], found[1]


def report(source, references=None, *, output=None, markdown=True, n_samples: int = 1000,
           seed=None, alpha: float = 0.05, pair=None, examples: int = DEFAULT_EXAMPLES,
           title=None, protect=(), **options):
    """Compare systems and write a self-contained HTML report and a Markdown summary.
    See :mod:`fastbleu.compare` (``fastbleu.report``) for the arguments."""
    from .output import check_outputs, write_outputs

    html_path, md_path = output_paths(output, markdown)
    read = [os.fspath(p) for p in protect]
    if isinstance(source, (str, os.PathLike)):
        read.insert(0, source)
    if html_path is not None:
        import matplotlib  # noqa: F401  (the charts need it: fail before the work)

        check_outputs(html_path, md_path, read, default_markdown=markdown is True)
    corpus = load(source, references, **options)
    found = compare(corpus, n_samples=n_samples, seed=seed, alpha=alpha, pair=pair,
                    examples=examples, title=title)
    if html_path is not None:
        write_outputs(found, html_path, md_path, read)
        found.files = [html_path] + ([md_path] if md_path is not None else [])
    return found


def output_paths(output, markdown) -> tuple[str | None, str | None]:
    """The HTML and Markdown paths of ``output`` and ``markdown`` (True: beside the HTML,
    ``NAME.md``; False: none)."""
    if output is None:
        if markdown not in (True, False, None):
            raise ValueError("markdown takes a path only with output")
        return None, None
    html_path = os.fspath(output)
    if markdown is True:
        stem, _ = os.path.splitext(html_path)
        return html_path, stem + ".md"
    if markdown in (False, None):
        return html_path, None
    return html_path, os.fspath(markdown)
