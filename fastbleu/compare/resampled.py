"""Every system's score on every bootstrap resample, all metrics on one set of draws.

The draws are sacrebleu's, as :func:`fastbleu.significance.paired_bootstrap`
makes them: resample ``r`` is row ``r`` of
``numpy.random.default_rng(seed).choice(n, size=(n_samples, n))``, drawn a
block of rows at a time (numpy's 64-bit bounded draws take each value from
the generator's stream with no state local to the call, so consecutive
calls continue the one big call exactly).  So a system's resampled scores
here are those of a paired bootstrap with any baseline, and every pair of
systems can be tested from them (:mod:`fastbleu.compare.ranking`).

Why not the significance package's own engine: it keeps each system's
statistics as int64 side by side, 224 bytes a segment for 8 systems under
BLEU and chrF, which for a 10M-row table is 2.2 GB; the report keeps them in
uint16 (or int32) where they fit, a quarter of that, and adds them by float32
products where that is exact, and in int64 otherwise (see below).  ``tests/compare`` checks the
results against ``paired_bootstrap`` number for number.

Sums are exact.  Where the counts and statistics are small enough (BLEU and
chrF: counts of a resample below 20, statistics in the hundreds), the sums of
a batch of resamples are float32 matrix products (BLAS) over blocks of
segments in which every partial sum is an integer below 2**24, so exact in
any order, added up in int64 (:func:`float_sums`, about twice as fast as the
integer kernel); otherwise (TER's scaled lengths, a huge segment) the integer
kernel of :mod:`fastbleu.compare.kernels`.  Each metric's
``formula.resampled_scores`` scores a batch of sums (Efron & Tibshirani,
1993; Koehn, 2004).

What it costs.  A resample's sums are ``n_segments * columns`` multiply-adds,
so three things decide the time.  Columns: the products sum only the columns
that do not follow from others (:mod:`fastbleu.compare.columns`; BLEU and chrF
of 8 systems: 98 of 224).  Resamples a pass: a product's cost per
multiply-add falls with its number of rows (the resamples of a batch), so the
counts are uint8 (:data:`COUNT_TYPE`) and a batch holds 128 MiB of them (106
resamples of 1.25M segments).  Threads: the products of a batch run side by
side on fastbleu's pool, each on one BLAS thread (threadpoolctl); OpenBLAS's
own threads next to the pool's would spin while they wait, which on a busy
machine cost several times the work.  numpy draws on the calling thread while
the pool counts the draws and sums the batch before.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import numpy as np

#: Draws per block of ``rng.choice`` (2**22 int64 indices, 32 MiB).
_INDEX_BUDGET = 1 << 22
#: Bytes of counts per batch of resamples (uint8, one a segment and resample: 2**27 is
#: 128 MiB; two batches live).  The larger a batch, the fewer passes over the statistics and
#: the better the matrix products use each block of them (106 resamples a pass for 1.25M
#: segments, 256 below 524,288 segments).
_COUNT_BUDGET = 1 << 27
#: Resamples per batch at most: several batches, so that drawing one overlaps summing another.
_MAX_BATCH = 256
#: The type of a resample's counts: 256 draws of one segment in one resample wrap it, which
#: :func:`_counted` catches (a resample of 256 or more segments almost never has one).
COUNT_TYPE = np.uint8
#: float32 holds every integer below 2**24 exactly; segments per float32 product at most.
_FLOAT_EXACT = (1 << 24) - 1
_FLOAT_BLOCK = 8192


@dataclass(frozen=True)
class Layout:
    """Where each metric's and system's columns lie in a statistics row.

    Attributes
    ----------
    formulas : list of Formula
        Each metric's formula, in order.
    n_systems : int
        Systems side by side within each metric's columns.
    """

    formulas: list
    n_systems: int

    @property
    def bounds(self) -> list[int]:
        """``[0, end of metric 0, end of metric 1, ...]``: column bounds of each metric."""
        edges = [0]
        for formula in self.formulas:
            edges.append(edges[-1] + formula.row_width * self.n_systems)
        return edges

    @property
    def width(self) -> int:
        """Columns of one row: every metric's row for every system."""
        return self.bounds[-1]

    def columns(self, metric: int, system: int) -> slice:
        """The columns of ``system``'s statistics under ``metric``."""
        width = self.formulas[metric].row_width
        start = self.bounds[metric] + system * width
        return slice(start, start + width)


#: The storage types of statistics, narrowest first.
STORAGE = (np.uint16, np.int32, np.int64)


def narrowest(values_max: int) -> type:
    """The narrowest of :data:`STORAGE` that holds every value up to ``values_max``."""
    for kind in STORAGE:
        if values_max <= np.iinfo(kind).max:
            return kind
    raise ValueError(f"a statistic of {values_max} does not fit int64")


def bootstrap_scores(stats: np.ndarray, layout: Layout, n_samples: int,
                     seed: int | None, plan=None) -> list[np.ndarray]:
    """The score of every system under every metric on each of ``n_samples`` resamples.

    Parameters
    ----------
    stats : numpy.ndarray
        uint16, int32 or int64 (:data:`STORAGE`), ``(n_segments, layout.width)``,
        C-contiguous; at least one segment.
    layout : Layout
        The columns of each metric and system.
    n_samples : int
        Resamples (checked by the caller).
    seed : int or None
        ``numpy.random.default_rng``'s seed (None: fresh entropy).
    plan : ColumnPlan, optional
        :func:`~fastbleu.compare.columns.plan_columns` of ``stats``: the products sum
        only its kept columns (made here when not given).

    Returns
    -------
    list of numpy.ndarray
        Per metric, float64 ``(n_systems, n_samples)``.
    """
    from .._kernels.threads import chunk_bounds, pool_size, submit
    from ..significance.draws import IndexDraws
    from .columns import plan_columns
    from .kernels import BLOCK, count_draws, resample_sums

    rng = np.random.default_rng(seed)
    n, width = stats.shape
    if plan is None:
        plan = plan_columns(stats, layout)
    # every column's sum over segments i..j is at most the sum of those rows' largest values
    cumulative = np.concatenate([[0], np.cumsum(stats.max(axis=1), dtype=np.int64)])
    outs = [np.empty((layout.n_systems, n_samples), dtype=np.float64) for _ in layout.formulas]
    batch = max(1, min(n_samples, _COUNT_BUDGET // n, _MAX_BATCH))
    draws_rows = max(1, min(batch, _INDEX_BUDGET // n))
    buffers = [np.empty((batch, n), dtype=COUNT_TYPE) for _ in range(2)]
    segment_bounds = chunk_bounds(n, max(BLOCK, (1 << 16) // max(1, batch * width)))
    blas = _blas_controller()
    pieces = pool_size() if blas is not None else 1  # products side by side, one thread each

    def score(sums: np.ndarray, offset: int) -> None:
        bounds = layout.bounds
        for k, formula in enumerate(layout.formulas):
            part = np.ascontiguousarray(sums[:, bounds[k]:bounds[k + 1]])
            formula.resampled_scores(part, layout.n_systems, outs[k], offset)

    def sums_of(counts, rows, largest_count, exact):
        """Start the sums of ``rows`` resamples on the pool; return what finishing needs."""
        blocks = None if stats.dtype == np.int64 else float_blocks(cumulative, largest_count)
        if blocks is not None:  # BLAS, exactly: every partial sum is an integer below 2**24
            cuts = _split(len(blocks) - 1, pieces)
            futures = [submit(float_sums, stats, counts, rows, blocks[a:b + 1], plan.keep)
                       for a, b in zip(cuts, cuts[1:])]
            return futures, None, exact, counts
        partial = np.zeros((len(segment_bounds) - 1, rows, width), dtype=np.int64)
        futures = [submit(resample_sums, stats, counts, rows, partial[k], segment_bounds[k],
                          segment_bounds[k + 1])
                   for k in range(len(segment_bounds) - 1)]
        return futures, partial, exact, counts

    def finish(pending, offset):
        futures, partial, exact, counts = pending
        found = [future.result() for future in futures]
        if partial is None:
            sums = found[0]
            for more in found[1:]:
                sums += more
            sums = plan.sums(sums, counts, n)
        else:
            sums = partial.sum(axis=0)
        for row, values in exact.items():
            sums[row] = values
        score(sums, offset)

    # the limit is set here (threadpoolctl sets it when made) and undone on leaving
    with blas.limit(limits=1, user_api="blas") if blas is not None else \
            contextlib.nullcontext():
        pending, pending_offset, current = None, 0, 0
        draws = IndexDraws(rng, n)
        for offset in range(0, n_samples, batch):
            rows = min(batch, n_samples - offset)
            counts = buffers[current]
            largest_count, exact, counting = 0, {}, []
            for first in range(0, rows, draws_rows):
                last = min(rows, first + draws_rows)
                # numpy's draws, in order (on the pool when it is large); the pool counts
                idx = draws.take(last - first)
                counting.append((submit(count_draws, idx, counts[first:last], 0, last - first),
                                 idx, first))
                if len(counting) > 2:
                    largest_count = _counted(counting.pop(0), counts, stats, exact,
                                             largest_count)
            while counting:
                largest_count = _counted(counting.pop(0), counts, stats, exact, largest_count)
            if pending is not None:
                finish(pending, pending_offset)
            pending, pending_offset = sums_of(counts, rows, largest_count, exact), offset
            current = 1 - current
        if pending is not None:
            finish(pending, pending_offset)
    return outs


def _split(n: int, pieces: int) -> list[int]:
    """``[0, ..., n]``: ``n`` items in at most ``pieces`` runs of nearly equal length."""
    pieces = max(1, min(pieces, n))
    return [n * k // pieces for k in range(pieces + 1)]


_CONTROLLER = []


def _blas_controller():
    """threadpoolctl's controller of this process's thread pools (made once), or None
    without threadpoolctl.

    The bootstrap's products run on the pool's threads, several side by side, each
    on one BLAS thread: a BLAS that also started threads of its own for each would
    have more threads than cores, and OpenBLAS's threads spin while they wait, which
    on a busy machine costs several times the work.  Without threadpoolctl the
    products run one at a time, with BLAS's threads."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    if not _CONTROLLER:
        _CONTROLLER.append(ThreadpoolController())
    return _CONTROLLER[0]


def float_blocks(cumulative: np.ndarray, largest_count: int) -> list[int] | None:
    """Bounds ``[0, ..., n]`` of blocks of segments over which no sum of ``count * value``
    can reach 2**24 (``largest_count`` times the block's sum of row maxima, from
    ``cumulative``), at most :data:`_FLOAT_BLOCK` long; None if one segment alone could."""
    budget = _FLOAT_EXACT // max(1, largest_count)
    n = cumulative.size - 1
    bounds = [0]
    while bounds[-1] < n:
        start = bounds[-1]
        end = int(np.searchsorted(cumulative, cumulative[start] + budget, side="right")) - 1
        end = min(end, start + _FLOAT_BLOCK, n)
        if end <= start:
            return None
        bounds.append(end)
    return bounds


def float_sums(stats: np.ndarray, counts: np.ndarray, rows: int, blocks: list[int],
               columns: np.ndarray) -> np.ndarray:
    """int64 ``counts[:rows] @ stats[:, columns]`` over the segments of ``blocks`` (:func:`float_blocks`, or a run of them), by float32 matrix
    products block by block: the products and every partial sum are integers below 2**24,
    which float32 holds exactly in any order of addition, so the result is exact."""
    from .kernels import float_columns

    width = columns.size
    out = np.zeros((rows, width), dtype=np.int64)
    longest = max(end - start for start, end in zip(blocks, blocks[1:]))
    values = np.empty((longest, width), dtype=np.float32)
    weights = np.empty((rows, longest), dtype=np.float32)
    for start, end in zip(blocks, blocks[1:]):
        size = end - start
        float_columns(stats, start, end, columns, values)
        weights[:, :size] = counts[:rows, start:end]
        out += (weights[:, :size] @ values[:size]).astype(np.int64)
    return out


def _counted(job, counts, stats, exact, largest_count) -> int:
    """Wait for a block of counts; a count that wrapped (256 draws of one segment in one
    resample, :data:`COUNT_TYPE`) is summed exactly here instead, and its counts are
    zeroed."""
    future, idx, first = job
    found = future.result()
    if found >= 0:
        return max(largest_count, found)
    n = counts.shape[1]
    for r in range(idx.shape[0]):
        exact_counts = np.bincount(idx[r], minlength=n)
        if exact_counts.max() > np.iinfo(counts.dtype).max:
            exact[first + r] = exact_counts @ stats.astype(np.int64)
            counts[first + r] = 0
        else:
            counts[first + r] = exact_counts
    return max(largest_count, int(counts[first:first + idx.shape[0]].max()))
