"""The report's numba kernels: resample counts, their weighted sums, and sums by code.

Private kernels behind :mod:`fastbleu.compare.resampled` and
:mod:`fastbleu.compare.breakdown`; they trust their inputs (shapes and
dtypes are checked by the callers).  ``stats`` is the report's statistics
array: one row per segment, every metric's columns for every system side by
side, uint16 or int32 where every value fits (a quarter or half the memory of int64),
else int64.

Sums are exact.  :func:`resample_sums` adds ``counts[b, i] * stats[i]`` in
int32 over a block of :data:`BLOCK` segments when the caller has checked
that no block sum can pass 2**31 (``BLOCK * max count * max value``), else in
int64; the block sums are then added into int64.  int32 lanes are twice as
many per vector instruction as int64, and the statistics are read once for
four resamples.
"""

import numpy as np
from numba import njit

#: Segments per block of :func:`resample_sums` (a block's rows stay in the cache).
BLOCK = 512


@njit(cache=True, nogil=True)
def count_draws(idx, counts, first, last):
    """``counts[r, j]`` = how often segment ``j`` occurs in ``idx[r]``, for rows
    ``first <= r < last`` (zeroed here).  Returns the largest count, or -1 if one passed
    65,535 (uint16 wrapped: the caller counts that resample again in int64)."""
    largest = 0
    for r in range(first, last):
        row = counts[r]
        row[:] = 0
        for i in range(idx.shape[1]):
            j = idx[r, i]
            row[j] += 1
            if row[j] == 0:
                return -1
    for r in range(first, last):
        row = counts[r]
        for j in range(row.shape[0]):
            if row[j] > largest:
                largest = row[j]
    return largest


@njit(cache=True, nogil=True)
def resample_sums(stats, counts, n_rows, sums, first, last, narrow):
    """``sums[b] += counts[b, first:last] @ stats[first:last]`` for ``b < n_rows``.

    ``narrow``: accumulate each block in int32 (the caller checked it cannot
    overflow), else in int64.
    """
    width = stats.shape[1]
    wide = np.zeros((4, width), dtype=np.int64)
    thin = np.zeros((4, width), dtype=np.int32)
    for block in range(first, last, BLOCK):
        end = min(block + BLOCK, last)
        b = 0
        while b < n_rows:
            m = min(4, n_rows - b)
            if narrow:
                thin[:] = 0
                for i in range(block, end):
                    row = stats[i]
                    if m == 4:
                        c0 = np.int32(counts[b, i])
                        c1 = np.int32(counts[b + 1, i])
                        c2 = np.int32(counts[b + 2, i])
                        c3 = np.int32(counts[b + 3, i])
                        for col in range(width):
                            v = np.int32(row[col])
                            thin[0, col] += c0 * v
                            thin[1, col] += c1 * v
                            thin[2, col] += c2 * v
                            thin[3, col] += c3 * v
                    else:
                        for q in range(m):
                            c = np.int32(counts[b + q, i])
                            for col in range(width):
                                thin[q, col] += c * np.int32(row[col])
                for q in range(m):
                    for col in range(width):
                        sums[b + q, col] += thin[q, col]
            else:
                wide[:] = 0
                for i in range(block, end):
                    row = stats[i]
                    for q in range(m):
                        c = np.int64(counts[b + q, i])
                        for col in range(width):
                            wide[q, col] += c * np.int64(row[col])
                for q in range(m):
                    for col in range(width):
                        sums[b + q, col] += wide[q, col]
            b += 4


@njit(cache=True, nogil=True)
def code_sums(stats, codes, n_codes, first, last):
    """int64 ``(n_codes, width)``: the sum of the rows ``first..last`` of ``stats`` with each
    code (``codes[i]`` in ``[0, n_codes)``)."""
    out = np.zeros((n_codes, stats.shape[1]), dtype=np.int64)
    for i in range(first, last):
        row = stats[i]
        target = out[codes[i]]
        for col in range(stats.shape[1]):
            target[col] += row[col]
    return out
