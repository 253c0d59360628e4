"""The report's charts, drawn by matplotlib as inline SVG.

Why matplotlib's SVG rather than Vega-Lite: the charts are static vector
drawings that need no script to appear, print exactly as shown, and cannot
fail in the browser (no console error, nothing fetched); matplotlib is one
well-kept dependency (a 10 MB wheel, against about 33 MB for vl-convert's
embedded JavaScript runtime, whose bundle would also add about 1 MB of
script to every page).  The numbers are in a table beside every chart
rather than on hover, which also serves keyboards, screen readers and paper.

Text stays text in the SVG (``svg.fonttype: none``: small, selectable,
escaped by matplotlib's SVG writer), math text is off (a ``$`` in a system
name is a dollar), every figure has its own id salt (several SVGs share one
HTML document) and no date (the same report is the same file).
"""

from __future__ import annotations

import io

import numpy as np

#: Groups drawn as small multiples (the largest; all of them are in the table).
MAX_PANELS = 24
#: Characters of a label drawn in a chart (the tables show it whole).
MAX_LABEL = 32
#: Pairwise matrices print the differences in their cells up to this many systems.
ANNOTATE_UP_TO = 12
#: p-value levels of the matrices' colours, besides the significance level itself.
LEVELS = (0.01, 0.001)


def cuts(alpha: float) -> list[float]:
    """The p-value levels of the matrices' colours: ``alpha``, then the smaller of
    :data:`LEVELS`."""
    return [alpha] + [v for v in LEVELS if v < alpha]


def short(label) -> str:
    """A label cut to :data:`MAX_LABEL` characters for a chart."""
    text = str(label)
    return text if len(text) <= MAX_LABEL else text[:MAX_LABEL - 1] + "…"


def _figure(width: float, height: float, layout: str | None = "constrained"):
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout=layout)


def svg(figure, salt: str) -> str:
    """The figure as an ``<svg>`` element (no XML prolog), ids salted with ``salt``."""
    import matplotlib

    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt,
                                "svg.image_inline": True}):
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    return text[text.index("<svg"):]


def style():
    """matplotlib settings of every chart (a context manager)."""
    import matplotlib

    return matplotlib.rc_context({"text.parse_math": False, "text.usetex": False,
                                  "font.size": 9, "axes.titlesize": 10,
                                  "axes.spines.top": False, "axes.spines.right": False})


def colours(n: int) -> list:
    """A colour per system (tab10, then tab20 for more)."""
    import matplotlib

    cmap = matplotlib.colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(k % cmap.N) for k in range(n)]


def ranking(rank, systems, salt: str) -> str:
    """Scores with 95 % intervals, best at the top, clusters as alternating bands."""
    order = rank.order.tolist()
    n = len(order)
    figure = _figure(7.0, 1.0 + 0.28 * n)
    ax = figure.add_subplot()
    y = np.arange(n)
    mean, ci, score = rank.mean[order], rank.ci[order], rank.score[order]
    clusters = rank.cluster[order]
    for k, cluster in enumerate(np.unique(clusters)):
        rows = y[clusters == cluster]
        if k % 2 == 0:
            ax.axhspan(rows.min() - 0.5, rows.max() + 0.5, color="#eef2f7", zorder=0)
    ax.errorbar(mean, y, xerr=ci, fmt="none", ecolor="#4c72b0", elinewidth=2, capsize=3,
                label="bootstrap mean ± 95% CI")
    ax.plot(score, y, "o", color="#1b2a41", label="score")
    ax.set_yticks(y, [f"{c}. {short(systems[s])}" for c, s in zip(clusters, order)])
    ax.set_ylim(n - 0.5, -0.5)
    ax.set_xlabel(f"{rank.name} ({'lower' if rank.lower_is_better else 'higher'} is better)")
    ax.grid(axis="x", color="#dddddd")
    ax.legend(loc="lower right" if not rank.lower_is_better else "lower left", fontsize=8)
    return svg(figure, salt)


def matrix(rank, systems, alpha: float, salt: str) -> str:
    """Row minus column score differences, coloured by the pair's p-value and sign."""
    from matplotlib.colors import ListedColormap
    from matplotlib.patches import Patch

    order = rank.order.tolist()
    n = len(order)
    score = rank.score[order]
    p = rank.p[np.ix_(order, order)]
    diff = score[:, None] - score[None, :]
    better = -diff if rank.lower_is_better else diff
    level = np.zeros((n, n), dtype=np.int64)
    levels = cuts(alpha)
    for threshold in levels:
        level += p < threshold
    code = np.where(np.isnan(p), 0, np.sign(better) * level).astype(np.int64)
    # worse (p < .001, .01, alpha), not significant, better (alpha, .01, .001)
    palette = ["#b2182b", "#d6604d", "#f4a582", "#f0f0f0", "#92c5de", "#4393c3", "#2166ac"]
    cmap = ListedColormap(palette)
    side = min(0.45 * n + 2.2, 11.0)
    figure = _figure(side + 1.8, side)
    ax = figure.add_subplot()
    ax.imshow(code + 3, cmap=cmap, vmin=0, vmax=6, interpolation="nearest")
    labels = [short(systems[s]) for s in order]
    ax.set_xticks(np.arange(n), labels, rotation=90)
    ax.set_yticks(np.arange(n), labels)
    ax.tick_params(length=0)
    for spine in ax.spines.values():
        spine.set_visible(False)
    if n <= ANNOTATE_UP_TO:
        for i in range(n):
            for j in range(n):
                if i != j:
                    shown = f"{diff[i, j]:+.1f}"
                    ax.text(j, i, "0.0" if shown in ("+0.0", "-0.0") else shown, ha="center",
                            va="center", fontsize=7,
                            color="white" if abs(code[i, j]) >= 2 else "#222222")
    names = [f"p < {c:g}" for c in levels]
    handles = [Patch(color=palette[3 + k], label=f"row better, {names[k - 1]}")
               for k in range(len(levels), 0, -1)]
    handles.append(Patch(color=palette[3], label=f"not significant (p ≥ {alpha:g})"))
    handles += [Patch(color=palette[3 - k], label=f"row worse, {names[k - 1]}")
                for k in range(1, len(levels) + 1)]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7,
              frameon=False)
    ax.set_title(f"{rank.name}: row − column")
    return svg(figure, salt)


def groups(group_rankings, metric: int, systems, order, salt: str) -> str:
    """Small multiples: each group's scores with intervals, systems in the overall order."""
    sizes = group_rankings.sizes
    shown = np.argsort(-sizes, kind="stable")[:MAX_PANELS]
    shown = np.sort(shown)
    cols = min(4, len(shown))
    rows = -(-len(shown) // cols)
    n = len(order)
    labels = [short(systems[s]) for s in order]
    # margins by hand: the constrained layout of many panels costs seconds
    left = 0.3 + 0.065 * max(len(label) for label in labels)
    panel = 0.22 * n + 0.45
    width, height = 2.4 * cols + left + 0.3, (panel + 0.45) * rows + 0.6
    figure = _figure(width, height, None)
    figure.subplots_adjust(left=left / width, right=1 - 0.25 / width, bottom=0.55 / height,
                           top=1 - 0.35 / height, wspace=0.08, hspace=0.45 / panel)
    axes = figure.subplots(rows, cols, sharex=True, sharey=True, squeeze=False)
    y = np.arange(n)
    palette = colours(n)
    for ax in axes.flat[len(shown):]:
        ax.set_visible(False)
    for k, (ax, g) in enumerate(zip(axes.flat, shown.tolist())):
        rank = group_rankings.rankings[g][metric]
        # one collection of bars and one of dots per panel: few artists, a fast layout
        ax.hlines(y, rank.mean[order] - rank.ci[order], rank.mean[order] + rank.ci[order],
                  colors=palette, linewidth=1.6)
        ax.scatter(rank.score[order], y, c=palette, s=12, zorder=3)
        label = " ".join(str(v) for v in group_rankings.values[g])
        ax.set_title(f"{short(label)} ({int(sizes[g]):,})", fontsize=8)
        ax.grid(axis="x", color="#e5e5e5")
        if k % cols == 0:
            ax.set_yticks(y, labels)
        else:
            ax.tick_params(labelleft=False)
        ax.set_ylim(n - 0.5, -0.5)
    name = group_rankings.rankings[0][metric].name
    figure.supxlabel(f"{name} by group (segments in brackets)", fontsize=9, y=0.1 / height)
    return svg(figure, salt)


def lines(labels, values, systems, ylabel: str, salt: str, counts=None) -> str:
    """One line per system across buckets (``values``: ``(n_buckets, n_systems)``), and the
    buckets' segment counts below when given."""
    n = len(systems)
    figure = _figure(7.0, 4.2 if counts is not None else 3.4)
    if counts is not None:
        ax, below = figure.subplots(2, 1, sharex=True, height_ratios=[3, 1])
    else:
        ax, below = figure.add_subplot(), None
    x = np.arange(len(labels))
    markers = "osD^v<>ph*"
    for s, colour in zip(range(n), colours(n)):
        ax.plot(x, values[:, s], marker=markers[(s // 10) % len(markers)], color=colour,
                label=short(systems[s]), linewidth=1.4, markersize=4)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", color="#e5e5e5")
    if n <= 12:
        ax.legend(fontsize=7, ncols=2 if n > 6 else 1, loc="best")
    if below is not None:
        below.bar(x, counts, color="#9aa5b1")
        below.set_ylabel("segments")
        below.set_xticks(x, labels)
        below.set_xlabel("words in the first reference")
    else:
        ax.set_xticks(x, labels)
    return svg(figure, salt)


def histogram(labels, counts, xlabel: str, salt: str, mean: float | None = None) -> str:
    """Bars of segment counts per bin (the sentence-score differences of a pair)."""
    figure = _figure(7.0, 3.2)
    ax = figure.add_subplot()
    x = np.arange(len(labels))
    ax.bar(x, counts, color="#4c72b0", width=0.9)
    zero = [k for k, label in enumerate(labels) if label.startswith("0-")]
    if zero:
        ax.axvline(zero[0] - 0.5, color="#222222", linewidth=1)
    step = max(1, len(labels) // 14)
    ax.set_xticks(x[::step], [labels[k] for k in x[::step]], rotation=45, ha="right")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("segments")
    if mean is not None:
        ax.set_title(f"mean difference {mean:+.2f}", fontsize=9)
    ax.grid(axis="y", color="#e5e5e5")
    return svg(figure, salt)
