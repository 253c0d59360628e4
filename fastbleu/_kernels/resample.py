"""Resampled statistics -> BLEU: the kernels behind bootstrap and approximate randomization.

Every system's per-segment statistics sit side by side in one array,
``stats[i] = [row of system 0 | row of system 1 | ...]``, so that one drawn
segment index reads one contiguous stretch of memory for all systems.  A
kernel call handles the resamples (or trials) ``first..last`` of a chunk of
draws and writes one BLEU per system and resample; the draws themselves are
made by numpy in the caller, in sacrebleu's order (see
:mod:`fastbleu.significance`).

Sums are int64 (exact) for int64 statistics.  For float32 statistics they
are float32, added row by row in index order: that is what numpy's
``block.sum(0)`` does on sacrebleu's C-ordered ``(n_segments, width)``
float32 block (the reduction axis is the outer loop, so each column is a
plain running sum, not numpy's pairwise summation), and the float32 scores
then follow ``bleu_from_float32_row``.
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


@njit(cache=True, nogil=True)
def bootstrap_rows(stats, idx, n_systems, max_order, smooth, smooth_value, effective_order,
                   compensated, weights, ref_scale, out, offset, first, last):
    """``out[s, offset + r]`` = BLEU of system ``s`` on the resample ``idx[r]`` (int64 sums)."""
    acc = np.zeros(stats.shape[1], dtype=np.int64)
    precisions = np.empty(max_order, dtype=np.float64)
    n_segments = idx.shape[1]
    for r in range(first, last):
        acc[:] = 0
        for i in range(n_segments):
            row = stats[idx[r, i]]
            for c in range(acc.size):
                acc[c] += row[c]
        _score_systems(acc, n_systems, max_order, smooth, smooth_value, effective_order,
                       compensated, weights, ref_scale, precisions, out, offset + r)


@njit(cache=True, nogil=True)
def bootstrap_rows_float32(stats, idx, n_systems, max_order, smooth, smooth_value,
                           effective_order, compensated, weights, ref_scale, out, offset,
                           first, last):
    """``bootstrap_rows`` with sacrebleu's float32 sums and float32 precisions."""
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
    B takes the other one.  With ``diff = baseline - system`` per segment,
    ``start`` = the system's totals and ``pair_sum`` = baseline totals +
    system totals, A's totals are ``start + sum(diff[flipped])`` and B's
    ``pair_sum - A`` (all int64, exact), so only flipped segments are read.
    """
    acc = np.empty(diff.shape[1], dtype=np.int64)
    other = np.empty(diff.shape[1], dtype=np.int64)
    precisions = np.empty(max_order, dtype=np.float64)
    n_segments = flips.shape[1]
    for t in range(first, last):
        acc[:] = start
        for i in range(n_segments):
            if flips[t, i]:
                row = diff[i]
                for c in range(acc.size):
                    acc[c] += row[c]
        for c in range(acc.size):
            other[c] = pair_sum[c] - acc[c]
        _score_systems(acc, n_systems, max_order, smooth, smooth_value, effective_order,
                       compensated, weights, ref_scale, precisions, out_a, offset + t)
        _score_systems(other, n_systems, max_order, smooth, smooth_value, effective_order,
                       compensated, weights, ref_scale, precisions, out_b, offset + t)
