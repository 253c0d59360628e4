"""The HTML page: one self-contained file, readable without a server, a network or a script.

Everything the page holds is made here from a :class:`~fastbleu.compare.results.Report`:
the charts (matplotlib's inline SVG, :mod:`fastbleu.compare.charts`), a table
of their numbers beside each (every value also whole in ``data-value``), the
report's data as JSON (``<script type="application/json" id="report-data">``,
the source of the CSV/JSON exports) and the small script of ``static/``
(exports, the examples' search, opening folded tables for printing).  Every
text from the inputs is escaped; a Content-Security-Policy forbids any
request and any script but that one (by its hash).
"""

from __future__ import annotations

import base64
import hashlib
import html
import json
import math
import re
from importlib import resources

from . import charts
from .breakdown import shown_groups

_STATIC = "static"
#: Groups smaller than this are named in a warning (their bootstrap says little).
SMALL_GROUP = 10


def esc(value) -> str:
    """Text for HTML (also inside attributes)."""
    return html.escape(str(value), quote=True)


def number(value, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    return f"{value:.{digits}f}"


def num(value, digits: int = 2, cls: str = "", **more) -> str:
    """A table cell showing ``value`` rounded, with the whole value in ``data-value``."""
    whole = "" if value is None or (isinstance(value, float) and math.isnan(value)) \
        else json.dumps(value)
    extra = "".join(f' data-{k.replace("_", "-")}="{esc(v)}"' for k, v in more.items())
    klass = f' class="{cls}"' if cls else ""
    return f'<td{klass} data-value="{whole}"{extra}>{number(value, digits)}</td>'


def txt(value, cls: str = "text") -> str:
    return f'<td class="{cls}">{esc(value)}</td>'


def table(caption: str, head: list, rows: list, classes: list | None = None,
          table_id: str | None = None) -> str:
    """A table of already-made cells; ``head`` holds header texts (escaped here)."""
    text = [cell.startswith('<td class="text') for cell in rows[0]] if rows else []
    head_html = "".join(f'<th scope="col"{_class("text" if k < len(text) and text[k] else "")}'
                        f'>{esc(h)}</th>' for k, h in enumerate(head))
    body = "".join(f'<tr{_class(classes[k] if classes else "")}>{"".join(row)}</tr>'
                   for k, row in enumerate(rows))
    ident = f' id="{table_id}"' if table_id else ""
    return (f'<table{ident}><caption>{esc(caption)}</caption><thead><tr>{head_html}</tr>'
            f'</thead><tbody>{body}</tbody></table>')


def _class(name: str) -> str:
    return f' class="{name}"' if name else ""


def buttons(key: str) -> str:
    return (f'<div class="export"><button type="button" data-export="{esc(key)}" '
            f'data-format="csv">Export CSV</button><button type="button" '
            f'data-export="{esc(key)}" data-format="json">Export JSON</button></div>')


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "metric"


class _Page:
    """The parts of a page being assembled: charts, exports, sections."""

    def __init__(self):
        self.exports, self.charts, self.sections, self.nav = {}, [], [], []

    def figure(self, key: str, drawn: str, caption: str, numbers: str, records: list,
               wide: bool = False) -> str:
        self.exports[key] = records
        self.charts.append(key)
        return (f'<figure class="chart{" wide" if wide else ""}" id="chart-{esc(key)}" '
                f'data-chart="{esc(key)}"><div class="plot" role="img" '
                f'aria-label="{esc(caption)}">{drawn}</div><div class="numbers" tabindex="0" '
                f'role="region" aria-label="{esc(key)}: the numbers">{numbers}'
                f'{buttons(key)}</div><figcaption>{esc(caption)}</figcaption></figure>')

    def section(self, ident: str, title: str, body: str) -> None:
        self.nav.append((ident, title))
        self.sections.append(f'<section id="{ident}" aria-labelledby="{ident}-h"><h2 '
                             f'id="{ident}-h">{esc(title)}</h2>{body}</section>')


def _ranking(page, report, d) -> None:
    systems = report.systems
    parts = []
    if len(systems) == 1:
        parts.append('<p class="note">One system: there is nothing to compare it with, so no '
                     'significance test, no clusters and no pairwise matrix; its interval is '
                     'its bootstrap 95 % confidence interval.</p>')
    else:
        parts.append(f'<p>Systems best first, with the bootstrap mean and 95 % confidence '
                     f'interval of {report.n_samples:,} resamples (one set of draws for all '
                     f'metrics). Clusters as WMT draws them: a line separates two clusters '
                     f'when every system above it is significantly better (paired bootstrap, '
                     f'p &lt; {report.alpha:g}) than every system below it. The rank range '
                     f'runs from 1 + the systems significantly better to n − the systems '
                     f'significantly worse.</p>')
    for m, (rank, data) in enumerate(zip(report.rankings, d["ranking"])):
        key = f"ranking-{slug(rank.name)}"
        rows, classes, last = [], [], None
        for row in data["rows"]:
            rows.append([f'<td>{row["cluster"]}</td>', f'<td>{row["rank"][0]}–{row["rank"][1]}'
                         f'</td>', txt(row["system"]), num(row["score"]), num(row["mean"]),
                         num(row["ci"])])
            classes.append("cluster-start" if last is not None and row["cluster"] != last
                           else "")
            last = row["cluster"]
        numbers = table(f"{rank.name}: ranking", ["Cluster", "Rank", "System", "Score",
                                                  "Mean", "± 95% CI"], rows, classes)
        numbers += f'<p><code class="signature">{esc(rank.signature)}</code></p>'
        parts.append(f"<h3>{esc(rank.name)}</h3>" + page.figure(
            key, charts.ranking(rank, systems, key), f"{rank.name}: score (dot) and "
            f"bootstrap mean ± 95 % CI (bar); shaded bands alternate between clusters.",
            numbers, [dict(r, rank=f"{r['rank'][0]}-{r['rank'][1]}") for r in data["rows"]]))
    page.section("ranking", "Ranking", "".join(parts))


def _matrices(page, report, d) -> None:
    if len(report.systems) == 1:
        page.section("pairs", "Pairwise significance",
                     '<p class="note">One system: no pair to test.</p>')
        return
    parts = ['<p>Each cell: the row system\'s score minus the column system\'s, coloured by '
             'the p-value of their paired bootstrap test (blue: the row is better, red: '
             'worse).</p>']
    for rank, data in zip(report.rankings, d["ranking"]):
        key = f"pairs-{slug(rank.name)}"
        order = rank.order.tolist()
        names = [report.systems[s] for s in order]
        rows = []
        for i in order:
            cells = [txt(report.systems[i])]
            for j in order:
                if i == j:
                    cells.append('<td data-value="">·</td>')
                    continue
                diff = float(rank.score[i] - rank.score[j])
                better = -diff if rank.lower_is_better else diff
                p = float(rank.p[i, j])
                cls = ("sig-better" if better > 0 else "sig-worse") if p < report.alpha else ""
                cells.append(num(diff, cls=cls, p_value=json.dumps(p)))
            rows.append(cells)
        grid = table(f"{rank.name}: row − column (p-value in data-p-value)", [""] + names, rows)
        numbers = grid if len(order) <= charts.ANNOTATE_UP_TO else \
            f"<details><summary>The {len(order)}×{len(order)} table</summary>{grid}</details>"
        parts.append(f"<h3>{esc(rank.name)}</h3>" + page.figure(
            key, charts.matrix(rank, report.systems, report.alpha, key),
            f"{rank.name}: pairwise differences (row − column) and their significance.",
            numbers, data["pairs"], wide=len(order) > charts.ANNOTATE_UP_TO))
    page.section("pairs", "Pairwise significance", "".join(parts))


def _groups(page, report, d) -> None:
    if report.groups is None:
        page.section("groups", "By group", '<p class="note">No groups: a table report groups '
                     'its segments with --group-by (language pair, domain, document ...).</p>')
        return
    found = report.groups
    order = report.rankings[0].order.tolist()
    shown = shown_groups(found.sizes)
    drawn = min(len(found.values), charts.MAX_PANELS)
    limits = ""
    if len(found.values) > drawn:
        table_has = (f"all {len(shown):,}" if len(shown) == len(found.values)
                     else f"the {len(shown):,} largest of {len(found.values):,}")
        limits = f" The {drawn} largest groups are drawn; the table has {table_has}."
    parts = [f'<p>Each group ranked on its own segments (its own draws, as '
             f'<code>--group-by</code> tests a group). Bold: the group\'s first cluster.'
             f'{esc(limits)}</p>']
    small = [(" ".join(str(v) for v in values), int(size))
             for values, size in zip(found.values, found.sizes) if size < SMALL_GROUP]
    if small:
        named = ", ".join(f"{label} ({size})" for label, size in small[:20])
        parts.append(f'<p class="note">Fewer than {SMALL_GROUP} segments: {esc(named)}'
                     f'{" ..." if len(small) > 20 else ""}. A bootstrap of so few segments '
                     f'says little: their intervals are narrow and their p-values small '
                     f'because few resamples differ, not because the systems do.</p>')
    for m, name in enumerate(report.metrics):
        key = f"groups-{slug(name)}"
        rows, records = [], []
        for g in shown:
            values, rank = found.values[g], found.rankings[g][m]
            label = " ".join(str(v) for v in values)
            cells = [txt(label), f"<td>{int(found.sizes[g]):,}</td>"]
            for s in order:
                cells.append(num(float(rank.score[s]), cls="best" if rank.cluster[s] == 1 and
                                 len(order) > 1 else "", mean=json.dumps(float(rank.mean[s])),
                                 ci=json.dumps(float(rank.ci[s]))))
                records.append({**dict(zip(found.keys, map(str, values))),
                                "segments": int(found.sizes[g]), "system": report.systems[s],
                                "score": float(rank.score[s]), "mean": float(rank.mean[s]),
                                "ci": float(rank.ci[s]), "cluster": int(rank.cluster[s])})
            rows.append(cells)
        grid = table(f"{name} by group", ["Group", "Segments"] +
                     [report.systems[s] for s in order], rows)
        parts.append(f"<h3>{esc(name)}</h3>" + page.figure(
            key, charts.groups(found, m, report.systems, order, key),
            f"{name} of each group: score (dot) and bootstrap mean ± 95 % CI (bar).",
            f"<details><summary>The numbers of {len(shown):,} groups</summary>{grid}"
            f"</details>", records, wide=True))
    page.section("groups", "By group", "".join(parts))


def _buckets(page, report, d) -> None:
    import numpy as np

    systems = report.systems
    length = report.length
    parts = ["<h3>By length of the reference</h3><p>Corpus score of the segments whose first "
             "reference has that many words.</p>"]
    for m, (name, scores) in enumerate(zip(report.metrics, length.scores)):
        key = f"length-{slug(name)}"
        rows = [[txt(label), f"<td>{int(count):,}</td>"] + [num(v) for v in row.tolist()]
                for label, count, row in zip(length.labels, length.counts, scores)]
        parts.append(page.figure(
            key, charts.lines(length.labels, scores, systems, name, key, length.counts),
            f"{name} by the number of words in the first reference.",
            table(f"{name} by reference length", ["Words", "Segments"] + systems, rows),
            d["length_buckets"]["scores"][m]["rows"]))
    parts.append("<h3>By sentence score</h3><p>Share of each system's segments by sentence "
                 "score (BLEU with effective order, as sentence BLEU scores one segment).</p>")
    for m, (name, hist) in enumerate(zip(report.metrics, report.score_histograms)):
        key = f"sentence-{slug(name)}"
        share = 100.0 * hist.counts.T / max(report.n_segments, 1)
        rows = [[txt(label)] + [f'<td data-value="{int(c)}">{int(c):,}</td>' for c in row]
                for label, row in zip(hist.labels, hist.counts.T.tolist())]
        parts.append(page.figure(
            key, charts.lines(hist.labels, np.asarray(share), systems, "% of segments", key),
            f"Segments by sentence {name}.",
            table(f"Segments by sentence {name}", [f"Sentence {name}"] + systems, rows),
            d["score_buckets"][m]["rows"]))
    page.section("buckets", "Where systems differ", "".join(parts))


def _pair(page, report, d) -> None:
    if report.pair is None:
        page.section("segments", "Segment by segment",
                     '<p class="note">One system: no pair to compare segment by segment.</p>')
        return
    a, b = (report.systems[k] for k in report.pair)
    parts = [f"<p>Sentence scores of <strong>{esc(a)}</strong> minus those of "
             f"<strong>{esc(b)}</strong>, segment by segment.</p>"]
    for m, (name, diff) in enumerate(zip(report.metrics, report.differences)):
        key = f"differences-{slug(name)}"
        summary = table(f"{name}: {a} − {b}", ["", "Value"], [
            [txt("mean difference"), num(diff.mean)], [txt("median"), num(diff.median)],
            [txt(f"{a} better"), f'<td data-value="{diff.a_better}">{diff.a_better:,}</td>'],
            [txt(f"{b} better"), f'<td data-value="{diff.b_better}">{diff.b_better:,}</td>'],
            [txt("ties"), f'<td data-value="{diff.ties}">{diff.ties:,}</td>']])
        parts.append(page.figure(
            key, charts.histogram(diff.histogram.labels, diff.histogram.counts,
                                  f"sentence {name}: {charts.short(a)} − {charts.short(b)}",
                                  key, diff.mean),
            f"Distribution of the sentence {name} differences.", summary,
            d["differences"][m]["bins"]))
    page.section("segments", f"Segment by segment: {a} and {b}", "".join(parts))
    _examples(page, report, d, a, b)


def _examples(page, report, d, a, b) -> None:
    rows_data = report.examples
    has_src = any(row["src"] is not None for row in rows_data)
    has_group = any(row["group"] is not None for row in rows_data)
    head = ["Segment"] + (["Group"] if has_group else []) + ["Better"] + \
        (["Source"] if has_src else []) + ["Reference", a, b] + \
        [f"{name} ({x})" for name in report.metrics for x in ("A", "B")]
    rows, classes = [], []
    for row in rows_data:
        cells = [f'<td data-value="{row["segment"]}">{row["segment"]}</td>']
        if has_group:
            cells.append(txt(row["group"] or ""))
        cells.append(txt(a if row["ahead"] == "a" else b, "text who"))
        if has_src:
            cells.append(txt(row["src"] or ""))
        cells.append(txt("\n".join(row["ref"])))
        cells += [txt(row["hyp_a"]), txt(row["hyp_b"])]
        cells += [num(v, 1) for pair in row["scores"] for v in pair]
        rows.append(cells)
        classes.append(f"ahead-{row['ahead']}")
    page.exports["examples"] = rows_data
    body = (f'<p>The segments where {esc(a)} is most ahead of {esc(b)} under '
            f'{esc(report.metrics[0])}, then those where it is most behind.</p>'
            f'<div class="search"><label for="example-search">Search the examples</label>'
            f'<input type="search" id="example-search" autocomplete="off">'
            f'<span id="example-count" aria-live="polite">{len(rows)} examples</span></div>'
            + buttons("examples") + '<div class="numbers">' +
            table(f"Examples: {a} and {b}", head, rows, classes, "examples") + "</div>")
    page.section("examples", "Examples", body)


def _island(payload) -> str:
    text = json.dumps(payload, ensure_ascii=False, allow_nan=False)
    for raw, safe in (("&", "\\u0026"), ("<", "\\u003c"), (">", "\\u003e"),
                      ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(raw, safe)
    return text


def render_page(report) -> str:
    """The report as one HTML document (str)."""
    from .._version import __version__

    d = report.to_dict()
    page = _Page()
    with charts.style():
        _ranking(page, report, d)
        _matrices(page, report, d)
        _groups(page, report, d)
        _buckets(page, report, d)
        _pair(page, report, d)
    static = resources.files(__package__).joinpath(_STATIC)
    css = static.joinpath("report.css").read_text(encoding="utf-8")
    script = static.joinpath("report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    policy = (f"default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
              f"script-src 'sha256-{digest}'; base-uri 'none'; form-action 'none'")
    refs = "varies" if report.num_refs < 0 else report.num_refs
    meta = (f"{report.n_segments:,} segments · {len(report.systems)} systems · "
            f"{', '.join(report.metrics)} · references per segment: {refs} · "
            f"{report.n_samples:,} bootstrap resamples · seed {report.seed} · "
            f"significance level {report.alpha:g}")
    nav = "".join(f'<li><a href="#{i}">{esc(t)}</a></li>' for i, t in page.nav)
    payload = {"report": d, "exports": page.exports, "charts": page.charts}
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(policy)}">'
            f'<meta name="generator" content="fastbleu {esc(__version__)}">'
            f'<title>{esc(report.title)}</title><style>{css}</style></head><body>'
            f'<a class="skip" href="#main">Skip to the report</a><header><h1>'
            f'{esc(report.title)}</h1><p class="meta">{esc(meta)}</p><nav aria-label='
            f'"Sections"><ul>{nav}</ul></nav></header><main id="main">'
            f'{"".join(page.sections)}</main><footer>Made by fastbleu {esc(__version__)} '
            f'(fastbleu report). Every number in this page is in its data, '
            f'<code>#report-data</code>.</footer>'
            f'<script type="application/json" id="report-data">{_island(payload)}</script>'
            f'<script>{script}</script></body></html>\n')
