"""Fewer columns to resample: the columns whose sums follow from the sums of others.

A report's statistics hold, for every system, columns that are functions of
other columns on nearly every segment: with one reference, every system's
reference side is the same (BLEU's reference length, chrF's reference n-grams
of each order); BLEU's n-gram totals are the hypothesis length less ``n - 1``,
chrF's hypothesis and reference n-grams of order ``n`` its characters less
``n - 1``, except on segments shorter than ``n``.  A bootstrap adds each column
over a resample, ``sum_i count_i * column_i``; when ``column = base - offset``
on every segment but a few (the *exceptions*), its sum is the base's sum less
``offset * n`` (every resample draws ``n`` segments) plus the counts of the
exceptions times their residuals.  The float32 products then sum only the
kept columns (:class:`ColumnPlan`), for BLEU and chrF under half of them.

Nothing here knows a metric: :func:`plan_columns` finds such columns from
the numbers (candidates: an earlier column of the same metric and system,
or the same column of the first system), on a sample of segments, then
checks every segment.  The sums are exact integers either way.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np

#: Segments of the sample on which candidate columns are tried first.
_SAMPLE = 4096
#: Share of the sample a candidate must fit (column = base - offset) to be checked on all.
_FIT = 0.95
#: A column is derived only when at most one segment in this many is an exception.
_MAX_EXCEPTIONS = 32
#: float64 adds integers exactly below 2**53: a column's exceptions, times the largest count
#: (255), must stay below it.
_EXACT = 1 << 53
_LARGEST_COUNT = 255


@dataclass(frozen=True)
class ColumnPlan:
    """The sums of every column from the sums of the kept ones.

    Attributes
    ----------
    keep : numpy.ndarray
        int64 ``(k,)``: the columns summed by the products, in order.
    base : numpy.ndarray
        int64 ``(width,)``: the place in ``keep`` of each column's base (a kept
        column's own place).
    offset : numpy.ndarray
        int64 ``(width,)``: ``column = base - offset`` on every segment but the
        exceptions (0 for a kept column).
    derived : numpy.ndarray
        int64 ``(d,)``: the columns not kept.
    rows : numpy.ndarray
        int64 ``(u,)``: the segments where some derived column is not its base
        less its offset, increasing.
    residual : numpy.ndarray
        float64 ``(u, d)``: ``column - (base - offset)`` on those segments
        (integers; every sum of them times counts is exact in float64).
    """

    keep: np.ndarray
    base: np.ndarray
    offset: np.ndarray
    derived: np.ndarray
    rows: np.ndarray
    residual: np.ndarray

    @classmethod
    def identity(cls, width: int) -> ColumnPlan:
        """Every column kept."""
        every = np.arange(width, dtype=np.int64)
        return cls(every, every, np.zeros(width, dtype=np.int64), every[:0],
                   every[:0], np.zeros((0, 0)))

    def sums(self, kept: np.ndarray, counts: np.ndarray, n_draws: int) -> np.ndarray:
        """int64 ``(rows, width)``: every column's sums, from ``kept`` (int64 ``(rows, k)``,
        the sums of :attr:`keep` under ``counts[:rows]``) and the resamples' ``counts``,
        each resample ``n_draws`` draws."""
        out = kept[:, self.base] - self.offset * np.int64(n_draws)
        if self.rows.size:
            taken = counts[:kept.shape[0], self.rows].astype(np.float64)
            out[:, self.derived] += np.rint(taken @ self.residual).astype(np.int64)
        return out

    def subset(self, segments: np.ndarray) -> ColumnPlan:
        """The plan of the statistics ``stats[segments]`` (``segments`` increasing)."""
        if not self.rows.size:
            return self
        at = np.searchsorted(segments, self.rows)
        inside = at < segments.size
        inside[inside] = segments[at[inside]] == self.rows[inside]
        return replace(self, rows=at[inside].astype(np.int64),
                       residual=np.ascontiguousarray(self.residual[inside]))


def _candidates(layout) -> tuple[np.ndarray, np.ndarray]:
    """Pairs ``(a, b)``, ``a < b``: ``a`` an earlier column of ``b``'s metric and system, or
    ``b``'s column in the first system."""
    bases, columns = [], []
    for m, formula in enumerate(layout.formulas):
        first = layout.columns(m, 0).start
        for s in range(layout.n_systems):
            start = layout.columns(m, s).start
            for k in range(formula.row_width):
                if s:
                    bases.append(first + k)
                    columns.append(start + k)
                for j in range(k):
                    bases.append(start + j)
                    columns.append(start + k)
    return np.array(bases, dtype=np.int64), np.array(columns, dtype=np.int64)


def plan_columns(stats: np.ndarray, layout) -> ColumnPlan:
    """The :class:`ColumnPlan` of ``stats`` (``(n, layout.width)``) under ``layout``."""
    n, width = stats.shape
    plan = ColumnPlan.identity(width)
    if n < 2 * _MAX_EXCEPTIONS:
        return plan
    a, b = _candidates(layout)
    sample = stats[np.linspace(0, n - 1, min(n, _SAMPLE)).astype(np.int64)].astype(np.int64)
    differences = sample[:, a] - sample[:, b]
    offsets = np.median(differences, axis=0).round().astype(np.int64)
    fits = (differences == offsets).mean(axis=0)
    # each column's best candidate (the first on ties), followed to a kept column: when the
    # candidate is itself derived, from its base with both offsets
    chosen, seen = {}, set()
    for k in np.lexsort((-fits, b)):
        column = int(b[k])
        if column in seen:
            continue
        seen.add(column)
        if fits[k] >= _FIT:
            base, offset = int(a[k]), int(offsets[k])
            if base in chosen:
                base, offset = chosen[base][0], chosen[base][1] + offset
            chosen[column] = (base, offset)
    if not chosen:
        return plan
    derived = np.array(sorted(chosen), dtype=np.int64)
    bases = np.array([chosen[c][0] for c in derived], dtype=np.int64)
    offsets = np.array([chosen[c][1] for c in derived], dtype=np.int64)
    rows, residuals = [], []
    work = np.int32 if stats.dtype == np.uint16 else np.int64  # holds every difference
    for first in range(0, n, 1 << 15):
        block = stats[first:first + (1 << 15)].astype(work)
        residual = block[:, derived] - (block[:, bases] - offsets.astype(work))
        where = np.flatnonzero(residual.any(axis=1))
        rows.append(where + first)
        residuals.append(residual[where])
    rows = np.concatenate(rows)
    residual = np.concatenate(residuals).astype(np.int64)
    good = ((residual != 0).sum(axis=0) <= n // _MAX_EXCEPTIONS) & \
        (np.abs(residual).sum(axis=0) * _LARGEST_COUNT < _EXACT)
    if not good.any():
        return plan
    derived, bases, offsets, residual = derived[good], bases[good], offsets[good], \
        residual[:, good]
    used = residual.any(axis=1)
    kept = np.ones(width, dtype=bool)
    kept[derived] = False
    keep = np.flatnonzero(kept).astype(np.int64)
    place = np.searchsorted(keep, np.arange(width))
    base = place.copy()
    base[derived] = place[bases]
    offset = np.zeros(width, dtype=np.int64)
    offset[derived] = offsets
    return ColumnPlan(keep, base, offset, derived, rows[used].astype(np.int64),
                      np.ascontiguousarray(residual[used], dtype=np.float64))
