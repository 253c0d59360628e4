"""Resampled statistics -> BLEU: the kernels behind bootstrap and approximate randomization.

Every system's per-segment statistics sit side by side in one array,
``stats[i] = [row of system 0 | row of system 1 | ...]``, so that one segment
is one contiguous stretch of memory for all systems.  The draws themselves
are made by numpy in the caller, in sacrebleu's order (see
:mod:`fastbleu.significance`); the kernels turn them into one BLEU per system
and resample (or trial).

Exact bootstrap (int64).  A resample's sum does not depend on the order of
its indices, so each resample is first turned into counts (how often each
segment was drawn, :func:`count_draws`) and the sums of a batch of resamples
are ``counts @ stats`` (:func:`weighted_sums`), computed block of segments by
block of segments: the statistics stream through the cache once per batch
instead of being gathered at random once per draw (a million segments would
otherwise cost a cache miss for every one of 10^9 draws).

float32 bootstrap (``sacrebleu_compat``).  sacrebleu gathers each resample
into a C-ordered ``(n_segments, width)`` float32 block and calls
``block.sum(0)``; with the reduction axis outermost numpy adds the rows one
after the other in index order (a plain running sum per column, not its
pairwise summation).  :func:`bootstrap_rows_float32` does the same additions
in the same order, and scores with ``bleu_from_float32_row``.

Approximate randomization (int64 in both modes, as in sacrebleu): see
:func:`randomization_rows`.
"""

import numpy as np
from numba import njit

from .formula import bleu_from_float32_row, bleu_from_row


@njit(cache=True, nogil=True)
def _score_systems(acc, n_systems, max_order, smooth, smooth_value, effective_order,
                   compensated, weights, ref_scale, precisions, out, column):
    width = acc.size // n_systems
    for s in range(n_systems):
        out[s, column] = bleu_from_row(acc[s * width:(s + 1) * width], max_order, smooth,
                                       smooth_value, effective_order, compensated, precisions,
                                       weights, ref_scale)[0]


#: Segments per block of the blocked loops (a block of statistics stays in the cache).
_BLOCK = 1024


@njit(cache=True, nogil=True)
def count_draws(idx, counts, row0):
    """``counts[row0 + r, j]`` = how often segment ``j`` occurs in ``idx[r]`` (rows zeroed here).

    Counts are small unsigned integers (uint16: 2 bytes a segment keeps a
    million-segment row in the cache); returns True if one wrapped around,
    which takes 65,536 draws of one segment in one resample.  The caller
    then sums those rows another way.
    """
    wrapped = False
    for r in range(idx.shape[0]):
        row = counts[row0 + r]
        row[:] = 0
        for i in range(idx.shape[1]):
            j = idx[r, i]
            count = row[j] + 1
            row[j] = count
            wrapped |= row[j] == 0
    return wrapped


@njit(cache=True, nogil=True)
def weighted_sums(stats, counts, n_rows, sums, first, last):
    """``sums[b] += counts[b, first:last] @ stats[first:last]`` for ``b < n_rows`` (int64).

    Two resamples at a time: each statistics row is loaded once for both
    (measured 2-3x faster than one at a time; four at a time was slower).
    """
    width = stats.shape[1]
    sum_a = np.zeros(width, dtype=np.int64)
    sum_b = np.zeros(width, dtype=np.int64)
    for block in range(first, last, _BLOCK):
        end = min(block + _BLOCK, last)
        b = 0
        while b + 1 < n_rows:
            sum_a[:] = 0
            sum_b[:] = 0
            for i in range(block, end):
                count_a = np.int64(counts[b, i])
                count_b = np.int64(counts[b + 1, i])
                row = stats[i]
                for col in range(width):
                    value = row[col]
                    sum_a[col] += count_a * value
                    sum_b[col] += count_b * value
            for col in range(width):
                sums[b, col] += sum_a[col]
                sums[b + 1, col] += sum_b[col]
            b += 2
        if b < n_rows:
            sum_a[:] = 0
            for i in range(block, end):
                count_a = np.int64(counts[b, i])
                row = stats[i]
                for col in range(width):
                    sum_a[col] += count_a * row[col]
            for col in range(width):
                sums[b, col] += sum_a[col]


@njit(cache=True, nogil=True)
def score_sums(sums, n_rows, n_systems, max_order, smooth, smooth_value, effective_order,
               compensated, weights, ref_scale, out, offset):
    """``out[s, offset + b]`` = BLEU of system ``s`` from the summed row ``sums[b]``."""
    precisions = np.empty(max_order, dtype=np.float64)
    for b in range(n_rows):
        _score_systems(sums[b], n_systems, max_order, smooth, smooth_value, effective_order,
                       compensated, weights, ref_scale, precisions, out, offset + b)


@njit(cache=True, nogil=True)
def bootstrap_rows_float32(stats, idx, n_systems, max_order, smooth, smooth_value,
                           effective_order, compensated, weights, ref_scale, out, offset,
                           first, last):
    """``out[s, offset + r]`` = BLEU of system ``s`` on the resample ``idx[r]``, summed and
    scored in float32 as sacrebleu does (rows added in index order)."""
    acc = np.zeros(stats.shape[1], dtype=np.float32)
    precisions = np.empty(max_order, dtype=np.float64)
    n_segments = idx.shape[1]
    width = stats.shape[1] // n_systems
    for r in range(first, last):
        acc[:] = 0
        for i in range(n_segments):
            row = stats[idx[r, i]]
            for c in range(acc.size):
                acc[c] += row[c]  # float32 + float32, rounded to float32 each time
        for s in range(n_systems):
            out[s, offset + r] = bleu_from_float32_row(
                acc[s * width:(s + 1) * width], max_order, smooth, smooth_value,
                effective_order, compensated, precisions, weights, ref_scale)[0]


@njit(cache=True, nogil=True)
def randomization_rows(diff, start, pair_sum, flips, n_systems, max_order, smooth, smooth_value,
                       effective_order, compensated, weights, ref_scale, out_a, out_b, offset,
                       first, last):
    """Approximate randomization trials ``first..last`` of a chunk of coin flips.

    For trial ``t`` and system ``s``, pseudo-system A takes the baseline's
    row of every segment whose flip is set and the system's row otherwise;
    B takes the other one (sacrebleu's ``pos_sel @ bl + neg_sel @ sys``).
    With ``diff = baseline - system`` per segment, ``start`` = the system's
    totals and ``pair_sum`` = baseline totals + system totals, A's totals
    are ``start + sum(diff[flipped])`` and B's ``pair_sum - A`` (all int64,
    exact), so only flipped segments are added.  Segments are visited block
    by block for all trials of the chunk, so ``diff`` streams through the
    cache once per chunk.
    """
    width = diff.shape[1]
    n_segments = flips.shape[1]
    acc = np.empty((last - first, width), dtype=np.int64)
    for t in range(last - first):
        acc[t] = start
    for block in range(0, n_segments, _BLOCK):
        end = min(block + _BLOCK, n_segments)
        for t in range(first, last):
            total = acc[t - first]
            for i in range(block, end):
                if flips[t, i]:
                    row = diff[i]
                    for col in range(width):
                        total[col] += row[col]
    other = np.empty(width, dtype=np.int64)
    precisions = np.empty(max_order, dtype=np.float64)
    for t in range(first, last):
        total = acc[t - first]
        for col in range(width):
            other[col] = pair_sum[col] - total[col]
        _score_systems(total, n_systems, max_order, smooth, smooth_value, effective_order,
                       compensated, weights, ref_scale, precisions, out_a, offset + t)
        _score_systems(other, n_systems, max_order, smooth, smooth_value, effective_order,
                       compensated, weights, ref_scale, precisions, out_b, offset + t)
