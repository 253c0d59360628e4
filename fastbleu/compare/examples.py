"""Examples: the segments where two systems differ most, with their text and scores.

The ``count`` segments where system ``a`` is most ahead of ``b`` under the
first metric and the ``count`` where it is most behind, by sentence score
(ties: the earlier segment first); whatever the corpus size, the report
keeps only these, and cuts a text longer than :data:`MAX_CHARS` characters.
"""

from __future__ import annotations

import numpy as np

#: Characters of one text kept in a report (the rest is cut, and the cut said).
MAX_CHARS = 2000


def _cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return f"{text[:MAX_CHARS]} … [{len(text) - MAX_CHARS:,} more characters]"


def most_different(d: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """Segment indices of the ``count`` largest and the ``count`` smallest values of ``d``
    (largest first, then smallest first; a segment once)."""
    n = d.size
    count = min(count, n)
    if count == 0:
        return np.empty(0, np.int64), np.empty(0, np.int64)
    order = np.lexsort((np.arange(n), -d))  # largest first, ties by position
    top = order[:count]
    top = top[d[top] > 0]
    order = np.lexsort((np.arange(n), d))
    bottom = order[:count]
    bottom = bottom[d[bottom] < 0]
    return top, bottom


def examples(corpus, a: int, b: int, scores: list[list[np.ndarray]], count: int,
             lower_is_better: bool) -> list[dict]:
    """Rows for the report: ``segment`` (1-based), ``group``, ``ahead`` (``a`` or ``b``),
    ``src``, ``ref`` (list), ``hyp_a``, ``hyp_b`` and ``scores`` (per metric, ``[a, b]``)."""
    d = scores[0][a] - scores[0][b]
    if lower_is_better:
        d = -d
    top, bottom = most_different(d, count)
    chosen = np.concatenate([top, bottom])
    if chosen.size == 0:
        return []
    texts = corpus.texts(chosen, [a, b])
    rows = []
    for k, segment in enumerate(chosen.tolist()):
        group = None
        if corpus.group is not None:
            group = " ".join(str(v) for v in corpus.group_values[int(corpus.group[segment])])
        rows.append({
            "segment": segment + 1,
            "group": group,
            "ahead": "a" if k < top.size else "b",
            "src": None if texts["src"] is None else _cut(texts["src"][k]),
            "ref": [_cut(stream[k]) for stream in texts["ref"]],
            "hyp_a": _cut(texts["hyp"][a][k]),
            "hyp_b": _cut(texts["hyp"][b][k]),
            "scores": [[float(per[a][segment]), float(per[b][segment])] for per in scores],
        })
    return rows
