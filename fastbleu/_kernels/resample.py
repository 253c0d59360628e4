"""Resampled statistics -> their sums: the kernels behind bootstrap and approximate randomization.

Every system's per-segment statistics sit side by side in one array,
``stats[i] = [row of system 0 | row of system 1 | ...]``, so that one segment
is one contiguous stretch of memory for all systems.  The draws themselves
are made by numpy in the caller, in sacrebleu's order (see
:mod:`fastbleu.significance`); the kernels here turn them into one summed row
per resample (or trial), and know nothing of the metric: the caller then
scores a batch of sums with one call to its formula's kernel
(``Formula.resampled_scores``; for BLEU :func:`.formula.bleu_of_sums`).

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
pairwise summation).  :func:`float32_sums` does the same additions in the
same order (the formula then scores them as sacrebleu does, e.g.
:func:`.formula.bleu_of_float32_sums`).

Approximate randomization (int64 in both modes, as in sacrebleu): see
:func:`randomization_sums`.
"""

import numpy as np
from numba import njit

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
def float32_sums(stats, idx, sums, first, last):
    """``sums[r - first]`` = the float32 sum of the rows ``stats[idx[r]]``, for ``first <= r < last``.

    The rows are added in index order, rounded to float32 after every
    addition: numpy's ``stats[idx[r]].sum(0)`` on a C-ordered float32 block,
    as sacrebleu computes a resample's statistics.
    """
    n_segments = idx.shape[1]
    width = stats.shape[1]
    for r in range(first, last):
        acc = sums[r - first]
        acc[:] = 0
        for i in range(n_segments):
            row = stats[idx[r, i]]
            for c in range(width):
                acc[c] += row[c]  # float32 + float32, rounded to float32 each time


@njit(cache=True, nogil=True)
def randomization_sums(diff, start, pair_sum, flips, sums_a, sums_b, first, last):
    """Summed rows of approximate randomization trials ``first..last`` of a chunk of coin flips.

    For trial ``t`` and system ``s``, pseudo-system A takes the baseline's
    row of every segment whose flip is set and the system's row otherwise;
    B takes the other one (sacrebleu's ``pos_sel @ bl + neg_sel @ sys``).
    With ``diff = baseline - system`` per segment, ``start`` = the system's
    totals and ``pair_sum`` = baseline totals + system totals, A's totals
    are ``start + sum(diff[flipped])`` and B's ``pair_sum - A`` (all int64,
    exact), so only flipped segments are added.  Segments are visited block
    by block for all trials of the chunk, so ``diff`` streams through the
    cache once per chunk.  Writes ``sums_a[t - first]`` and ``sums_b[t - first]``.
    """
    width = diff.shape[1]
    n_segments = flips.shape[1]
    for t in range(last - first):
        sums_a[t] = start
    for block in range(0, n_segments, _BLOCK):
        end = min(block + _BLOCK, n_segments)
        for t in range(first, last):
            total = sums_a[t - first]
            for i in range(block, end):
                if flips[t, i]:
                    row = diff[i]
                    for col in range(width):
                        total[col] += row[col]
    for t in range(last - first):
        for col in range(width):
            sums_b[t, col] = pair_sum[col] - sums_a[t, col]
