"""Compare systems: a self-contained HTML report and a Markdown summary (``fastbleu report``).

    fastbleu.compare.report({"A": hyps_a, "B": hyps_b}, [refs], metrics=["bleu", "chrf"],
                            output="report.html")
    fastbleu.compare.report("scores.parquet", hyp="hyp", refs=["ref"], system="system",
                            group_by=["domain"], output="report.html")

One module a job::

    corpus.py     text -> every system's statistics, aligned, uint16 where they fit
    table.py      a table (one row per system and segment) -> the same, read in batches
    kernels.py    numba: resample counts, their exact sums, sums by code
    resampled.py  sacrebleu's draws once for every system and metric -> resampled scores
    ranking.py    intervals, every pair's paired bootstrap, WMT-style clusters
    breakdown.py  groups, reference-length and sentence-score buckets, differences
    examples.py   the segments where two systems differ most
    results.py    Report: every number, and its JSON
    charts.py     matplotlib -> inline SVG (the ``report`` extra)
    page.py       the HTML page (static/: its stylesheet and script)
    markdown.py   the Markdown summary
    output.py     both files checked first, written atomically, never over an input
    api.py        report(), compare(), load()

Nothing else in fastbleu imports this package; matplotlib is needed only to
render (``pip install 'fastbleu[report]'``).
"""

from __future__ import annotations

from importlib import import_module

__all__ = ["report", "compare", "load", "Report"]

_LAZY = {"report": "api", "compare": "api", "load": "api", "Report": "results"}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fastbleu.compare' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
