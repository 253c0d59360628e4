"""Where systems differ: by group, by reference length, by sentence score, segment by segment.

* :func:`group_rankings` -- each group (``--group-by``) ranked on its own
  segments, with its own draws from a fresh generator of the same seed, as
  ``fastbleu TABLE --system-column ... --group-by ... --paired-bs`` tests a
  group (so its numbers equal that JSON);
* :func:`length_buckets` -- the corpus score of the segments whose first
  reference has 1-9, 10-19, ... 60 or more words (compare-mt's buckets);
* :func:`score_edges`, :func:`bin_counts` -- how many of a system's segments have a sentence
  score in 0-10, 10-20, ... (sentence BLEU with effective order, as
  ``fastbleu -sl`` and sacrebleu's ``sentence_bleu`` score it);
* :func:`differences` -- the distribution of the sentence-score differences
  of two systems.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .ranking import LOWER_IS_BETTER, MetricRanking, rank
from .resampled import bootstrap_scores

#: Bucket edges in words of the first reference: <10, 10-19, ..., 50-59, >=60.
LENGTH_EDGES = (10, 20, 30, 40, 50, 60)
#: Rows of statistics scored at a time (sentence scores).
_CHUNK = 1 << 18


def totals_scores(corpus, totals: np.ndarray) -> list[np.ndarray]:
    """Per metric, float64 ``(n_systems,)``: the score of summed statistics ``totals``."""
    out = []
    for m, formula in enumerate(corpus.layout.formulas):
        out.append(np.array([formula.score(np.ascontiguousarray(
            totals[corpus.layout.columns(m, s)], dtype=np.int64), check=False).score
            for s in range(len(corpus.systems))]))
    return out


def rank_segments(corpus, stats: np.ndarray, signatures: list, n_samples: int, seed,
                  alpha: float, segments=None) -> list[MetricRanking]:
    """Every metric's ranking of the systems on the segments of ``stats`` (``segments``:
    which of the corpus's, increasing; None: all)."""
    totals = stats.sum(axis=0, dtype=np.int64)
    plan = corpus.column_plan()
    resampled = bootstrap_scores(stats, corpus.layout, n_samples, seed,
                                 plan if segments is None else plan.subset(segments))
    return [rank(formula.name, signature, real, scores, alpha) for formula, signature, real,
            scores in zip(corpus.layout.formulas, signatures, totals_scores(corpus, totals),
                          resampled)]


#: Groups a page holds (the largest; the Report keeps them all): a table grouped by
#: document may have thousands, and each costs a few kB of data and table per metric.
MAX_GROUPS_SHOWN = 200


def shown_groups(sizes) -> list[int]:
    """The indices of the groups a page holds, in their order: the
    :data:`MAX_GROUPS_SHOWN` largest (ties: the first)."""
    order = np.argsort(-np.asarray(sizes), kind="stable")[:MAX_GROUPS_SHOWN]
    return sorted(order.tolist())


@dataclass
class GroupRankings:
    """Each group's rankings: ``rankings[g][m]`` for group ``g`` and metric ``m``."""

    keys: list
    values: list
    sizes: np.ndarray
    rankings: list


def group_rankings(corpus, signatures, n_samples, seed, alpha,
                   overall=None) -> GroupRankings | None:
    """Each group ranked on its own segments (None without groups); a single group is
    all the segments, whose rankings ``overall`` already are."""
    if corpus.group is None:
        return None
    order = np.argsort(corpus.group, kind="stable")
    sizes = np.bincount(corpus.group, minlength=len(corpus.group_values))
    if len(sizes) == 1 and overall is not None:
        return GroupRankings(list(corpus.group_keys), list(corpus.group_values), sizes,
                             [overall])
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    rankings = []
    for g in range(len(corpus.group_values)):
        segments = order[bounds[g]:bounds[g + 1]]  # in corpus order: the baseline's rows
        stats = np.ascontiguousarray(corpus.stats[segments])
        rankings.append(rank_segments(corpus, stats, signatures, n_samples, seed, alpha,
                                      segments))
    return GroupRankings(list(corpus.group_keys), list(corpus.group_values), sizes, rankings)


def code_totals(stats: np.ndarray, codes: np.ndarray, n_codes: int) -> np.ndarray:
    """int64 ``(n_codes, width)``: the summed rows of each code, on the thread pool."""
    from .._kernels.threads import chunk_bounds, submit
    from .kernels import code_sums

    bounds = chunk_bounds(stats.shape[0], 1 << 15)
    futures = [submit(code_sums, stats, codes, n_codes, bounds[k], bounds[k + 1])
               for k in range(len(bounds) - 1)]
    total = np.zeros((n_codes, stats.shape[1]), dtype=np.int64)
    for future in futures:
        total += future.result()
    return total


@dataclass
class Buckets:
    """Corpus scores of the segments of each bucket.

    Attributes
    ----------
    labels : list of str
    counts : numpy.ndarray
        Segments per bucket.
    scores : list of numpy.ndarray
        Per metric, ``(n_buckets, n_systems)`` (NaN for an empty bucket).
    """

    labels: list
    counts: np.ndarray
    scores: list


def length_buckets(corpus) -> Buckets:
    """Scores by the first reference's length in words (see :data:`LENGTH_EDGES`)."""
    edges = LENGTH_EDGES
    labels = [f"<{edges[0]}"] + [f"{a}-{b - 1}" for a, b in zip(edges, edges[1:])] + \
        [f">={edges[-1]}"]
    codes = np.digitize(corpus.ref_words, edges).astype(np.int64)
    counts = np.bincount(codes, minlength=len(labels))
    totals = code_totals(corpus.stats, codes, len(labels))
    scores = [np.full((len(labels), len(corpus.systems)), np.nan)
              for _ in corpus.layout.formulas]
    for b in np.flatnonzero(counts):
        for m, values in enumerate(totals_scores(corpus, totals[b])):
            scores[m][b] = values
    return Buckets(labels, counts, scores)


def sentence_scores(corpus, metric: int, system: int) -> np.ndarray:
    """float64 ``(n_segments,)``: one system's sentence scores under one metric."""
    formula = corpus.layout.formulas[metric].sentence_formula()
    out = np.empty(corpus.n_segments, dtype=np.float64)
    for first in range(0, corpus.n_segments, _CHUNK):
        last = min(first + _CHUNK, corpus.n_segments)
        out[first:last] = formula.scores(corpus.system_rows(metric, system, first, last),
                                         check=False)
    return out


@dataclass
class Histogram:
    """Counts of values in bins: ``counts[..., k]`` for ``edges[k] <= value < edges[k+1]``;
    the first and last bins also hold the values below and above them (the last one its
    upper edge: a sentence BLEU of 100); ``-inf``/``inf`` edges are open ends."""

    edges: list
    counts: np.ndarray

    @property
    def labels(self) -> list[str]:
        def shown(value):
            return f"{value:g}"

        out = []
        for low, high in zip(self.edges, self.edges[1:]):
            if low == -np.inf:
                out.append(f"<{shown(high)}")
            elif high == np.inf:
                out.append(f">={shown(low)}")
            else:
                out.append(f"{shown(low)}-{shown(high)}")
        return out


def bin_counts(values: np.ndarray, edges) -> np.ndarray:
    """Counts of ``values`` in the bins of ``edges`` (see :class:`Histogram`)."""
    inner = np.asarray(edges[1:-1], dtype=np.float64)
    codes = np.searchsorted(inner, values, side="right")  # values outside: the end bins
    return np.bincount(codes, minlength=len(edges) - 1)[:len(edges) - 1]


def score_edges(name: str) -> list:
    """Bins of sentence scores: 0-10 ... 90-100 (TER also 100 and more)."""
    edges = [float(v) for v in range(0, 101, 10)]
    return edges + [np.inf] if name in LOWER_IS_BETTER else edges


@dataclass
class Differences:
    """Sentence-score differences of system ``a`` minus system ``b`` under one metric."""

    histogram: Histogram
    mean: float
    median: float
    a_better: int
    b_better: int
    ties: int


def differences(a: np.ndarray, b: np.ndarray, lower_is_better: bool) -> Differences:
    """The distribution of ``a - b`` (bins of 5 points from -100 to 100, open ends)."""
    d = a - b
    edges = [-np.inf] + [float(v) for v in range(-100, 101, 5)] + [np.inf]
    hist = Histogram(edges, bin_counts(d, edges))
    better_a = d < 0 if lower_is_better else d > 0
    better_b = d > 0 if lower_is_better else d < 0
    return Differences(hist, float(d.mean()), float(np.median(d)), int(better_a.sum()),
                       int(better_b.sum()), int((d == 0).sum()))
