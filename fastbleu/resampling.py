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
rows).  ``tests/test_significance.py`` checks both against one big draw.
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
import statistics as _statistics
from collections import deque
from typing import TYPE_CHECKING

import numpy as np

from ._kernels.resample import count_draws, float32_sums, randomization_sums, weighted_sums
from ._kernels.threads import chunk_bounds, submit, submit_chunks
from ._limits import MAX_SAMPLES

if TYPE_CHECKING:
    from .metrics.base import Formula

#: sacrebleu's default seed.
DEFAULT_SEED = 12345

# Draws per chunk: 2**22 int64 indices (32 MiB) or 2**24 coin flips (16 MiB); a batch of
# resamples' segment counts: 2**25 uint16 (64 MiB, two batches alive at a time).
_INDEX_BUDGET = 1 << 22
_FLIP_BUDGET = 1 << 24
_COUNT_BUDGET = 1 << 25
_COUNT_DTYPE = np.uint16
_MAX_COUNTING = 2
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
    done = 0
    while done < n_samples:
        rows = min(chunk_rows, n_samples - done)
        yield done, rng.choice(n_segments, size=(rows, n_segments), replace=True)
        done += rows


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
    done = 0
    while done < n_trials:
        rows = min(chunk_rows, n_trials - done)
        yield done, rng.integers(2, size=(rows, n_segments), dtype=bool)
        done += rows


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
    """``(n_segments, n_systems * width)``: each segment's rows of all systems, contiguous."""
    n, width = stats[0].shape
    joined = np.empty((n, len(stats) * width), dtype=dtype)
    for s, block in enumerate(stats):
        joined[:, s * width:(s + 1) * width] = block
    return joined


def _min_rows(n_segments: int, width: int) -> int:
    return max(1, _MIN_WORK // max(1, n_segments * width))


def bootstrap_scores(stats: list[np.ndarray], formula: Formula, n_samples: int,
                     rng: np.random.Generator, sacrebleu_compat: bool = False) -> np.ndarray:
    """The score of every system on every bootstrap resample: float64 ``(n_systems, n_samples)``.

    Resample ``r`` is row ``r`` of ``rng.choice(n, size=(n_samples, n))``,
    drawn chunk by chunk; all systems use the same resamples.  The sums of a
    batch of resamples are scored by one ``formula.resampled_scores`` call.
    """
    if sacrebleu_compat:
        return _bootstrap_float32(stats, formula, n_samples, rng)
    n_segments = stats[0].shape[0]
    joined = _side_by_side(stats, np.int64)
    width = joined.shape[1]
    out = np.empty((len(stats), n_samples), dtype=np.float64)
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
        formula.resampled_scores(sums, len(stats), out, offset)

    def count(part, counts, first_row, first_resample):
        """Count a block of draws into ``counts`` (runs on the pool)."""
        if count_draws(part, counts, first_row):
            for r in range(part.shape[0]):
                exact = np.bincount(part[r], minlength=n_segments)  # int64
                if exact.max() > np.iinfo(_COUNT_DTYPE).max:
                    wrapped[first_resample + r] = exact @ joined

    # The main thread only draws (numpy, one stream); the pool counts the draws of
    # batch k + 1 and sums batch k.  At most _MAX_COUNTING blocks of draws wait.
    counting = deque()
    pending, current, filled, offset = None, 0, 0, 0
    for _, idx in index_chunks(rng, n_segments, n_samples, min(batch, _chunk_rows(n_segments))):
        while idx.shape[0]:
            take = min(idx.shape[0], batch - filled)
            counting.append(submit(count, idx[:take], buffers[current], filled,
                                   offset + filled))
            while len(counting) > _MAX_COUNTING:
                counting.popleft().result()
            idx, filled = idx[take:], filled + take
            if filled == batch or offset + filled == n_samples:
                while counting:
                    counting.popleft().result()
                if pending is not None:
                    finish(pending)
                pending = launch(buffers[current], filled, offset)
                offset, filled, current = offset + filled, 0, 1 - current
    finish(pending)
    return out


def _chunk_rows(n_segments: int) -> int:
    return max(1, _INDEX_BUDGET // n_segments)


def _bootstrap_float32(stats, formula, n_samples, rng) -> np.ndarray:
    """sacrebleu's float32 bootstrap: each resample's rows gathered and added in index order."""
    n_segments = stats[0].shape[0]
    joined = _side_by_side(stats, np.float32)
    out = np.empty((len(stats), n_samples), dtype=np.float64)
    width = joined.shape[1]
    min_rows = _min_rows(n_segments, width)

    def piece(idx, first_row, first, last):
        """Sum resamples ``first..last`` of a chunk of draws, then score them (one call each)."""
        sums = np.empty((last - first, width), dtype=np.float32)
        float32_sums(joined, idx, sums, first, last)
        formula.resampled_scores(sums, len(stats), out, first_row + first)

    def launch(first_row, idx):
        return submit_chunks(piece, idx.shape[0], idx, first_row, min_chunk=min_rows)

    _pipelined(index_chunks(rng, n_segments, n_samples), launch)
    return out


def randomization_scores(baseline: np.ndarray, systems: list[np.ndarray], formula: Formula,
                         n_trials: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """BLEU of both pseudo-systems of every system and trial: two ``(n_systems, n_trials)``
    arrays, A and B of sacrebleu's ``_paired_ar_test`` (A takes the baseline's segment where
    the coin ``rng.integers(2, size=(n_trials, n), dtype=bool)`` is set)."""
    n_segments = baseline.shape[0]
    diff = _side_by_side([baseline - s for s in systems], np.int64)
    start = np.concatenate([s.sum(axis=0) for s in systems]).astype(np.int64)
    pair_sum = start + np.tile(baseline.sum(axis=0), len(systems))
    out_a = np.empty((len(systems), n_trials), dtype=np.float64)
    out_b = np.empty_like(out_a)
    width = diff.shape[1]
    min_rows = _min_rows(n_segments // 2, width)

    def piece(flips, first_row, first, last):
        """Sum trials ``first..last`` of a chunk of coins, then score A and B (one call each)."""
        sums_a = np.empty((last - first, width), dtype=np.int64)
        sums_b = np.empty_like(sums_a)
        randomization_sums(diff, start, pair_sum, flips, sums_a, sums_b, first, last)
        formula.resampled_scores(sums_a, len(systems), out_a, first_row + first)
        formula.resampled_scores(sums_b, len(systems), out_b, first_row + first)

    def launch(first_row, flips):
        return submit_chunks(piece, flips.shape[0], flips, first_row, min_chunk=min_rows)

    _pipelined(flip_chunks(rng, n_segments, n_trials), launch)
    return out_a, out_b


# -- sacrebleu's summaries ---------------------------------------------------------------

def paired_mean_ci(scores: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % half-interval as ``sacrebleu.significance.estimate_ci`` computes them:
    numpy's (pairwise) mean of the sorted scores, and half the distance between the
    ``n // 40``-th smallest and largest."""
    ordered = np.sort(scores)
    low = ordered.size // 40
    high = ordered.size - low - 1
    return float(ordered.mean()), float(0.5 * (ordered[high] - ordered[low]))


def single_mean_ci(scores: np.ndarray) -> tuple[float, float]:
    """The same summary as ``Score.estimate_ci`` of a single system computes it: the mean
    is Python's ``statistics.mean`` (exact, then rounded) rather than numpy's."""
    ordered = sorted(scores.tolist())
    low = len(ordered) // 40
    high = len(ordered) - low - 1
    return _statistics.mean(ordered), 0.5 * (ordered[high] - ordered[low])


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
    value, label = resolve_seed(seed)
    scores = bootstrap_scores([stats], formula, n_samples, np.random.default_rng(value),
                              sacrebleu_compat)[0]
    return (*single_mean_ci(scores), label)
