"""What a report found, as numbers: :class:`Report` and its JSON.

Every number of the page and of the Markdown summary comes from here; the
page embeds :meth:`Report.to_dict` as its data, and each chart's CSV/JSON
export is a part of it.  Floats are kept as computed (the page rounds only
what it shows), so a report's numbers can be compared with ``fastbleu``'s
JSON for the same inputs.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field

import numpy as np

from .breakdown import shown_groups


def plain(value):
    """``value`` as JSON-able Python: arrays as lists, NaN and infinities as None."""
    if isinstance(value, np.ndarray):
        return [plain(v) for v in value.tolist()]
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (np.floating, float)):
        value = float(value)
        return value if math.isfinite(value) else None
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, np.bool_):
        return bool(value)
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)  # a group key of another type (a date ...)


def ranking_dict(ranking, systems, pairs: bool = True) -> dict:
    """One metric's ranking as JSON: rows best first, and (``pairs``) the pairs'
    p-values."""
    rows = []
    for s in ranking.order.tolist():
        rows.append({"system": systems[s], "score": ranking.score[s], "mean": ranking.mean[s],
                     "ci": ranking.ci[s], "cluster": ranking.cluster[s],
                     "rank": [ranking.best_rank[s], ranking.worst_rank[s]]})
    out = {"metric": ranking.name, "signature": ranking.signature,
           "lower_is_better": ranking.lower_is_better, "rows": rows}
    if ranking.p is not None and pairs:
        out["pairs"] = [{"a": systems[i], "b": systems[j],
                         "difference": ranking.score[i] - ranking.score[j],
                         "p_value": ranking.p[i, j]}
                        for i in range(len(systems)) for j in range(len(systems)) if i != j]
    return plain(out)


@dataclass
class Report:
    """A comparison of systems, every number of the page.

    Attributes
    ----------
    title : str
    systems : list of str
        In input order.
    metrics : list of str
        The metrics' names (``BLEU``, ``chrF2`` ...).
    n_segments, n_samples, num_refs : int
    seed : str
        The seed's label (``12345``, ``none``).
    alpha : float
        The significance level of the clusters.
    rankings : list of MetricRanking
        One per metric, on all segments.
    groups : GroupRankings or None
    length : Buckets
    score_histograms : list of Histogram
        One per metric, counts ``(n_systems, n_bins)``.
    pair : (int, int) or None
        The two systems compared segment by segment (None for one system).
    differences : list of Differences
        One per metric, ``pair[0]`` minus ``pair[1]``.
    examples : list of dict
    timings : dict
        Seconds per stage: wall (``bootstrap``, ``groups``, ``breakdowns``) and CPU of
        all threads (``bootstrap_cpu`` ...).
    files : list of str
        The files :func:`fastbleu.compare.report` wrote (the page, then the summary).
    """

    title: str
    systems: list
    metrics: list
    n_segments: int
    n_samples: int
    num_refs: int
    seed: str
    alpha: float
    rankings: list
    groups: object
    length: object
    score_histograms: list
    pair: tuple
    differences: list
    examples: list
    timings: dict = field(default_factory=dict)
    files: list = field(default_factory=list)

    def to_dict(self) -> dict:
        """Everything as JSON-able data (the page's embedded data)."""
        systems = self.systems
        out = {
            "title": self.title, "systems": systems, "metrics": self.metrics,
            "segments": self.n_segments, "resamples": self.n_samples, "seed": self.seed,
            "references": self.num_refs, "alpha": self.alpha,
            "ranking": [ranking_dict(r, systems) for r in self.rankings],
            "length_buckets": {
                "buckets": self.length.labels, "segments": self.length.counts,
                "scores": [{"metric": name, "rows": [
                    {"bucket": label, "segments": count, **dict(zip(systems, row))}
                    for label, count, row in zip(self.length.labels, self.length.counts,
                                                 scores.tolist())]}
                    for name, scores in zip(self.metrics, self.length.scores)]},
            "score_buckets": [{"metric": name, "buckets": h.labels, "rows": [
                {"system": system, **dict(zip(h.labels, counts))}
                for system, counts in zip(systems, h.counts.tolist())]}
                for name, h in zip(self.metrics, self.score_histograms)],
            "pair": None if self.pair is None else {"a": systems[self.pair[0]],
                                                    "b": systems[self.pair[1]]},
            "differences": [{"metric": name, "mean": d.mean, "median": d.median,
                             "a_better": d.a_better, "b_better": d.b_better, "ties": d.ties,
                             "bins": [{"bin": label, "segments": count} for label, count in
                                      zip(d.histogram.labels, d.histogram.counts.tolist())]}
                            for name, d in zip(self.metrics, self.differences)],
            "examples": self.examples,
        }
        if self.groups is not None:  # each group's rows (its pairs: in the Report)
            found = self.groups
            out["groups"] = {"keys": found.keys, "count": len(found.values), "groups": [
                {"group": dict(zip(found.keys, found.values[g])), "segments": found.sizes[g],
                 "ranking": [ranking_dict(r, systems, pairs=False)
                             for r in found.rankings[g]]}
                for g in shown_groups(found.sizes)]}
        return plain(out)

    def html(self) -> str:
        """The self-contained HTML page (needs matplotlib)."""
        from .page import render_page

        return render_page(self)

    def markdown(self, page_name: str | None = None) -> str:
        """The Markdown summary (``page_name``: the page it links to, if any)."""
        from .markdown import render_markdown

        return render_markdown(self, page_name)

    def to_json(self, indent: int | None = None) -> str:
        """:meth:`to_dict` as JSON text."""
        return json.dumps(self.to_dict(), indent=indent, ensure_ascii=False)
