"""Resampling engines: seeds, sacrebleu's draws a chunk at a time, and the resampled scores.

The machinery under :mod:`fastbleu.significance` and ``BLEU.corpus_score(...,
n_bootstrap=k)``: it takes statistics arrays and a
:class:`~fastbleu.metrics.base.Formula` (any metric's) and imports neither
``fastbleu.metrics`` nor ``fastbleu.significance``.

**Same draws as sacrebleu.**  The seed defaults to 12345, or the
``SACREBLEU_SEED`` environment variable (``none`` draws fresh entropy).
Resample indices are ``numpy.random.default_rng(seed).choice(n, size=(k,
n))`` and coin flips ``rng.integers(2, size=(k, n), dtype=bool)``, exactly
as sacrebleu calls them, but drawn a chunk of rows at a time so that memory
stays O(segments + resamples).  Chunks do not change the values:
``choice``/``integers`` of 64-bit indices draw each value from the bit
generator's stream with no buffer local to the call, so consecutive calls
continue the stream exactly; boolean draws take 32 coins from each 32-bit
word and drop the unused bits of the last word of every call, so flip chunks
hold a whole number of 32-coin words (a multiple of ``32 / gcd(n, 32)``
rows).  The draws themselves are made by :mod:`.draws`: numpy's values, from
anywhere in the generator's stream, so that a many-core machine draws a chunk
on the whole pool instead of on one thread.  ``tests/significance/test_significance.py`` checks both against one big draw.
All systems share the draws, as they do in sacrebleu with a fixed seed (with
``none``, sacrebleu draws afresh for every system; fastbleu once).

**Exact by default.**  Resampled statistics are summed in int64 and scored in
float64, so a resample's BLEU is exactly what :class:`fastbleu.BLEU` gives
for those segments.  sacrebleu sums them in float32, which rounds once a sum
passes 2**24 (about 150,000 WMT segments); ``sacrebleu_compat=True``
reproduces its float32 arithmetic bit for bit (see
:mod:`fastbleu._kernels.resample`).  Approximate randomization sums int64 in
both tools.
"""

from __future__ import annotations

import math
import os
from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from .._kernels.resample import count_draws, float32_sums, randomization_sums, weighted_sums
from .._kernels.threads import (chunk_bounds, for_chunks, in_pool_thread, pool_size, submit,
                                submit_chunks)
from .._limits import MAX_SAMPLES
from . import draws as pool_draws
from .draws import FlipDraws, IndexDraws
from .estimates import compat_scores, single_mean_ci

if TYPE_CHECKING:
    from ..metrics.formula import Formula

#: sacrebleu's default seed.
DEFAULT_SEED = 12345

# Draws per chunk: 2**22 int64 indices (32 MiB) or 2**24 coin flips (16 MiB); a batch of
# resamples' segment counts: 2**25 uint16 (64 MiB, two batches alive at a time).
_INDEX_BUDGET = 1 << 22
_FLIP_BUDGET = 1 << 24
_COUNT_BUDGET = 1 << 25
_COUNT_DTYPE = np.uint16
_MAX_COUNTING = 2
# Fewest draws in one counting job when a block of draws is counted in pieces of rows (a
# pool of PARALLEL_FROM_THREADS threads or more): each row counts into its own row of the
# batch, so pieces of whole rows never touch the same counts.
_MIN_COUNT = 1 << 20
# Additions per thread piece below which splitting a chunk is not worth it.
_MIN_WORK = 1 << 16


# -- seeds -------------------------------------------------------------------------------

def resolve_seed(seed=None) -> tuple[int | None, str]:
    """The seed to draw with, and its label for the signature.

    Parameters
    ----------
    seed : int, str or None
        ``None`` takes ``$SACREBLEU_SEED``, else 12345 (sacrebleu's rule);
        ``"none"`` (any case) means fresh entropy from the operating system;
        otherwise a non-negative integer, or a string of one.

    Returns
    -------
    (int or None, str)
        The value for ``numpy.random.default_rng`` and the signature's ``seed``.
    """
    if seed is None:
        seed = os.environ.get("SACREBLEU_SEED", str(DEFAULT_SEED))
        where = "SACREBLEU_SEED"
    else:
        where = "seed"
    if isinstance(seed, str):
        text = seed.strip()
        if text.lower() == "none":
            return None, "none"
        try:
            seed = int(text)
        except ValueError:
            raise ValueError(f"{where} must be a non-negative integer or 'none', got "
                             f"{text!r}") from None
    elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, a string or None, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"{where} must be a non-negative integer or 'none', got {seed}")
    return int(seed), str(int(seed))


def check_count(value, name: str) -> int:
    """``value`` as an int if it is a whole number from 1 to ``MAX_SAMPLES``, else a
    TypeError/ValueError naming ``name`` (numbers of resamples and trials)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    if value > MAX_SAMPLES:
        raise ValueError(f"{name} must be at most {MAX_SAMPLES:,} (one float64 score is kept "
                         f"per sample and system), got {value:,}")
    return int(value)


# -- draws, chunk by chunk ---------------------------------------------------------------

def index_chunks(rng: np.random.Generator, n_segments: int, n_samples: int,
                 chunk_rows: int | None = None):
    """Yield ``(first_row, indices)``: ``rng.choice(n_segments, size=(n_samples, n_segments))``
    a block of rows at a time, the same values as the one big call."""
    if chunk_rows is None:
        chunk_rows = _chunk_rows(n_segments)
    draws = IndexDraws(rng, n_segments)  # numpy's values, drawn on the pool when it is large
    done = 0
    try:
        while done < n_samples:
            rows = min(chunk_rows, n_samples - done)
            ahead = min(chunk_rows, n_samples - done - rows)
            yield done, draws.take(rows, ahead)
            done += rows
    finally:
        draws.close()


def flip_rows_step(n_segments: int) -> int:
    """Rows of coin flips that make a whole number of the generator's 32-coin words."""
    return 32 // math.gcd(n_segments, 32)


def flip_chunks(rng: np.random.Generator, n_segments: int, n_trials: int,
                chunk_rows: int | None = None):
    """Yield ``(first_row, flips)``: ``rng.integers(2, size=(n_trials, n_segments),
    dtype=bool)`` a block of rows at a time, the same values as the one big call.

    ``chunk_rows`` is rounded down to a multiple of :func:`flip_rows_step`
    (at least one step): numpy drops the unused coins of a call's last
    32-bit word, so only whole words keep the stream.
    """
    step = flip_rows_step(n_segments)
    if chunk_rows is None:
        chunk_rows = _FLIP_BUDGET // n_segments
    chunk_rows = max(step, chunk_rows // step * step)
    flips = FlipDraws(rng, n_segments)  # numpy's values, drawn on the pool when it is large
    done = 0
    try:
        while done < n_trials:
            rows = min(chunk_rows, n_trials - done)
            yield done, flips.take(rows)
            done += rows
    finally:
        flips.close()


def _pipelined(chunks, launch) -> None:
    """Run ``launch(first_row, draws)`` (which starts kernels on the thread pool and
    returns their futures) on every chunk; numpy draws the next chunk meanwhile."""
    iterator = iter(chunks)
    current = next(iterator, None)
    while current is not None:
        futures = launch(*current)
        current = next(iterator, None)
        for future in futures:
            future.result()

# -- statistics in, scores out -----------------------------------------------------------

def _side_by_side(stats: list[np.ndarray], dtype) -> np.ndarray:
    """``(n_segments, total width)``: each segment's rows of all blocks, contiguous."""
    n = stats[0].shape[0]
    joined = np.empty((n, sum(block.shape[1] for block in stats)), dtype=dtype)
    for_chunks(_copy_rows, n, joined, stats, min_chunk=1 << 16)  # numpy copies without the GIL
    return joined


def _copy_rows(joined: np.ndarray, stats: list[np.ndarray], first: int, last: int) -> None:
    column = 0
    for block in stats:
        joined[first:last, column:column + block.shape[1]] = block[first:last]
        column += block.shape[1]


class _Metrics:
    """Several metrics' statistics side by side, so that one draw serves them all.

    ``joined`` holds, for each metric in turn, its systems' rows side by
    side; :meth:`score` hands each metric's columns of a batch of sums to
    that metric's formula (one kernel call per metric and batch).
    """

    def __init__(self, stats_by_metric: list[list[np.ndarray]], formulas: list, dtype,
                 blocks: list[np.ndarray] | None = None):
        self.formulas = list(formulas)
        self.n_systems = [len(stats) for stats in stats_by_metric]
        widths = [sum(block.shape[1] for block in stats) for stats in stats_by_metric]
        self.bounds = np.concatenate([[0], np.cumsum(widths)]).astype(int).tolist()
        if blocks is None:  # sacrebleu's float32 sums start from its own statistics
            blocks = [formula.float_statistics(b) if dtype == np.float32 else b
                      for formula, stats in zip(self.formulas, stats_by_metric) for b in stats]
        self.joined = _side_by_side(blocks, dtype)

    def outputs(self, n_samples: int) -> list[np.ndarray]:
        """One float64 ``(n_systems, n_samples)`` array per metric."""
        return [np.empty((n, n_samples), dtype=np.float64) for n in self.n_systems]

    def score(self, sums: np.ndarray, outs: list[np.ndarray], offset: int) -> None:
        """Score each metric's columns of ``sums`` into its ``outs`` array."""
        for k, formula in enumerate(self.formulas):
            part = sums[:, self.bounds[k]:self.bounds[k + 1]]
            if not part.flags.c_contiguous:
                part = np.ascontiguousarray(part)
            formula.resampled_scores(part, self.n_systems[k], outs[k], offset)


def _min_rows(n_segments: int, width: int) -> int:
    return max(1, _MIN_WORK // max(1, n_segments * width))


def bootstrap_scores(stats: list[np.ndarray], formula: Formula, n_samples: int,
                     rng: np.random.Generator, sacrebleu_compat: bool = False) -> np.ndarray:
    """The score of every system on every bootstrap resample: float64 ``(n_systems, n_samples)``.

    Resample ``r`` is row ``r`` of ``rng.choice(n, size=(n_samples, n))``,
    drawn chunk by chunk; all systems use the same resamples.  The sums of a
    batch of resamples are scored by one ``formula.resampled_scores`` call.
    """
    return metric_bootstrap_scores([stats], [formula], n_samples, rng, sacrebleu_compat)[0]


def metric_bootstrap_scores(stats_by_metric: list[list[np.ndarray]], formulas: list[Formula],
                            n_samples: int, rng: np.random.Generator,
                            sacrebleu_compat: bool = False) -> list[np.ndarray]:
    """:func:`bootstrap_scores` of several metrics on the same draws, as sacrebleu's
    ``PairedTest`` applies one set of resamples to every metric.

    Parameters
    ----------
    stats_by_metric : list of list of numpy.ndarray
        For each metric, its systems' checked statistics (all of the same
        number of segments, across metrics too).
    formulas : list of Formula
        Each metric's formula.
    n_samples : int
        Resamples.
    rng : numpy.random.Generator
        The generator to draw with (drawn once for all metrics).
    sacrebleu_compat : bool
        Sum in float32 as sacrebleu does.

    Returns
    -------
    list of numpy.ndarray
        Per metric, float64 ``(n_systems, n_samples)``.
    """
    if sacrebleu_compat:
        return _bootstrap_float32(_Metrics(stats_by_metric, formulas, np.float32), n_samples,
                                  rng)
    metrics = _Metrics(stats_by_metric, formulas, np.int64)
    n_segments = metrics.joined.shape[0]
    joined = metrics.joined
    width = joined.shape[1]
    outs = metrics.outputs(n_samples)
    batch = max(1, min(n_samples, _COUNT_BUDGET // n_segments))
    buffers = [np.empty((batch, n_segments), dtype=_COUNT_DTYPE) for _ in range(2)]
    min_segments = max(256, _MIN_WORK // (batch * width))
    wrapped = {}  # resample -> its sums, for the (astronomically rare) count that wrapped

    def launch(counts, n_rows, offset):
        """Start the sums of a full batch on the pool; return what ``finish`` needs."""
        bounds = chunk_bounds(n_segments, min_segments)
        partial = np.zeros((len(bounds) - 1, n_rows, width), dtype=np.int64)
        futures = [submit(weighted_sums, joined, counts, n_rows, partial[k], bounds[k],
                          bounds[k + 1]) for k in range(len(bounds) - 1)]
        return futures, partial, n_rows, offset

    def finish(pending):
        futures, partial, n_rows, offset = pending
        for future in futures:
            future.result()
        sums = partial.sum(axis=0)
        for row in range(offset, offset + n_rows):
            if row in wrapped:
                sums[row - offset] = wrapped.pop(row)
        metrics.score(sums, outs, offset)

    def count(part, counts, first_row, first_resample):
        """Count a block of draws into ``counts`` (runs on the pool)."""
        if count_draws(part, counts, first_row):
            for r in range(part.shape[0]):
                exact = np.bincount(part[r], minlength=n_segments)  # int64
                if exact.max() > np.iinfo(_COUNT_DTYPE).max:
                    wrapped[first_resample + r] = exact @ joined

    # The main thread only draws (numpy, one stream); the pool counts the draws of
    # batch k + 1 and sums batch k.  At most _MAX_COUNTING blocks of draws wait.  On
    # many threads a block is counted in pieces of whole rows: one job a block (4M draws
    # at 1M segments) took longer than the pool took to draw the next blocks.
    counting = deque()
    piece_rows = n_samples
    if pool_size() >= pool_draws.PARALLEL_FROM_THREADS and not in_pool_thread():
        piece_rows = max(1, _MIN_COUNT // n_segments)
    pending, current, filled, offset = None, 0, 0, 0
    for _, idx in index_chunks(rng, n_segments, n_samples, min(batch, _chunk_rows(n_segments))):
        while idx.shape[0]:
            take = min(idx.shape[0], batch - filled)
            counting.append([submit(count, idx[first:min(take, first + piece_rows)],
                                    buffers[current], filled + first, offset + filled + first)
                             for first in range(0, take, piece_rows)])
            while len(counting) > _MAX_COUNTING:
                for future in counting.popleft():
                    future.result()
            idx, filled = idx[take:], filled + take
            if filled == batch or offset + filled == n_samples:
                while counting:
                    for future in counting.popleft():
                        future.result()
                if pending is not None:
                    finish(pending)
                pending = launch(buffers[current], filled, offset)
                offset, filled, current = offset + filled, 0, 1 - current
    finish(pending)
    return outs


def _chunk_rows(n_segments: int) -> int:
    return max(1, _INDEX_BUDGET // n_segments)


def _bootstrap_float32(metrics: _Metrics, n_samples, rng) -> list[np.ndarray]:
    """sacrebleu's float32 bootstrap: each resample's rows gathered and added in index order."""
    joined = metrics.joined
    n_segments, width = joined.shape
    outs = metrics.outputs(n_samples)
    min_rows = _min_rows(n_segments, width)

    def piece(idx, first_row, first, last):
        """Sum resamples ``first..last`` of a chunk of draws, then score them (one call each)."""
        sums = np.empty((last - first, width), dtype=np.float32)
        float32_sums(joined, idx, sums, first, last)
        metrics.score(sums, outs, first_row + first)

    def launch(first_row, idx):
        return submit_chunks(piece, idx.shape[0], idx, first_row, min_chunk=min_rows)

    _pipelined(index_chunks(rng, n_segments, n_samples), launch)
    return outs


def randomization_scores(baseline: np.ndarray, systems: list[np.ndarray], formula: Formula,
                         n_trials: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Score of both pseudo-systems of every system and trial: two ``(n_systems, n_trials)``
    arrays, A and B of sacrebleu's ``_paired_ar_test`` (A takes the baseline's segment where
    the coin ``rng.integers(2, size=(n_trials, n), dtype=bool)`` is set)."""
    (a, b), = metric_randomization_scores([[baseline, *systems]], [formula], n_trials, rng)
    return a, b


def metric_randomization_scores(stats_by_metric: list[list[np.ndarray]],
                                formulas: list[Formula], n_trials: int,
                                rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """:func:`randomization_scores` of several metrics on the same coins, as sacrebleu's
    ``PairedTest`` applies one set of coins to every metric.

    Parameters
    ----------
    stats_by_metric : list of list of numpy.ndarray
        For each metric, the baseline's checked statistics, then each system's.
    formulas : list of Formula
        Each metric's formula.
    n_trials : int
        Trials.
    rng : numpy.random.Generator
        The generator to draw the coins with (once for all metrics).

    Returns
    -------
    list of (numpy.ndarray, numpy.ndarray)
        Per metric, A and B, float64 ``(n_systems - 1, n_trials)``.
    """
    blocks, starts, pairs = [], [], []
    for baseline, *systems in stats_by_metric:
        blocks += [baseline - s for s in systems]
        starts += [s.sum(axis=0) for s in systems]
        pairs += [s.sum(axis=0) + baseline.sum(axis=0) for s in systems]
    metrics = _Metrics([stats[1:] for stats in stats_by_metric], formulas, np.int64, blocks)
    diff = metrics.joined
    start = np.concatenate(starts).astype(np.int64)
    pair_sum = np.concatenate(pairs).astype(np.int64)
    n_segments, width = diff.shape
    out_a, out_b = metrics.outputs(n_trials), metrics.outputs(n_trials)
    min_rows = _min_rows(n_segments // 2, width)

    def piece(flips, first_row, first, last):
        """Sum trials ``first..last`` of a chunk of coins, then score A and B (one call each)."""
        sums_a = np.empty((last - first, width), dtype=np.int64)
        sums_b = np.empty_like(sums_a)
        randomization_sums(diff, start, pair_sum, flips, sums_a, sums_b, first, last)
        metrics.score(sums_a, out_a, first_row + first)
        metrics.score(sums_b, out_b, first_row + first)

    def launch(first_row, flips):
        return submit_chunks(piece, flips.shape[0], flips, first_row, min_chunk=min_rows)

    _pipelined(flip_chunks(rng, n_segments, n_trials), launch)
    return list(zip(out_a, out_b))


# -- sacrebleu's summaries ---------------------------------------------------------------

def confidence(stats: np.ndarray, formula: Formula, n_samples: int, seed=None,
               sacrebleu_compat: bool = False) -> tuple[float, float, str]:
    """Bootstrap mean and 95 % half-interval of one system's score, as sacrebleu's
    ``corpus_score(..., n_bootstrap=n_samples)`` computes them (Efron & Tibshirani, 1993).

    Parameters
    ----------
    stats : numpy.ndarray
        Checked int64 segment statistics (at least one row).
    formula : Formula
        The metric's formula.
    n_samples : int
        Resamples (checked by :func:`check_count`).
    seed : int, str or None
        See :func:`resolve_seed`.
    sacrebleu_compat : bool
        Sum resamples in float32 as sacrebleu does.

    Returns
    -------
    (float, float, str)
        The mean, the half-interval and the seed's label for the signature.
    """
    ((mean, ci),), label = confidences([stats], [formula], n_samples, seed, sacrebleu_compat)
    return mean, ci, label


def confidences(stats: list[np.ndarray], formulas: list[Formula], n_samples: int, seed=None,
                sacrebleu_compat: bool = False) -> tuple[list, str]:
    """:func:`confidence` of one system under several metrics, on one set of draws (each of
    sacrebleu's ``corpus_score`` calls draws the same resamples from a fresh generator).

    Returns
    -------
    (list of (float, float), str)
        Each metric's mean and half-interval, and the seed's label.
    """
    value, label = resolve_seed(seed)
    scores = metric_bootstrap_scores([[block] for block in stats], formulas, n_samples,
                                     np.random.default_rng(value), sacrebleu_compat)
    return [single_mean_ci(compat_scores(s[0], f, sacrebleu_compat))
            for s, f in zip(scores, formulas)], label
