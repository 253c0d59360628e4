"""Paired bootstrap resamples on the device in one pass: draws, sums and scores (Koehn, 2004).

Draw ``j`` of resample ``b`` is segment ``mulhi(mix(mix(seed + b) + j), n)``
(:func:`draw`: splitmix64's finaliser as a counter-based generator;
``mulhi`` the high word of the 128-bit product, which maps 64 random bits to
``0..n-1`` with a bias below ``n / 2**64``).  The same seed gives the same
resamples on every device and on the simulator, but not numpy's draws
(sacrebleu's), which would have to be made on the host and copied.

:func:`sums_kernel` gives the kernel for rows of ``width`` columns (the
systems' rows side by side, int32 or int64): a block sums a stretch of one
resample's draws, each thread adding its draws' rows into ``width``
accumulators held in registers (the width is a compile-time constant, so
the loop over columns unrolls), then the block adds them up in shared memory
and writes one partial row; no index array and no zeroed sums are made.
:func:`score_resamples` adds a resample's partial rows and scores each
system's part with :func:`.formula.bleu_of_row` (a thread per resample and
system), writing ``out[system, resample]``.
"""

from functools import lru_cache

import numpy as np

from .formula import MAX_ORDER, bleu_of_row
from .loader import cuda

_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_LOW = np.uint64(0xFFFFFFFF)
_ROW = 2 + 2 * MAX_ORDER  # local arrays take literal sizes


@cuda.jit(device=True)
def mix(h):
    """splitmix64's finaliser (a bijection of 64-bit words)."""
    h ^= h >> _S30
    h *= _MIX_1
    h ^= h >> _S27
    h *= _MIX_2
    h ^= h >> _S31
    return h


@cuda.jit(device=True)
def high_word(a, b):
    """The high 64 bits of the 128-bit product ``a * b`` (uint64)."""
    a_lo = a & _LOW
    a_hi = a >> _S32
    b_lo = b & _LOW
    b_hi = b >> _S32
    if b_hi == 0:  # b < 2**32 (any n of segments in practice): two 32 x 32-bit products
        return (a_hi * b_lo + ((a_lo * b_lo) >> _S32)) >> _S32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> _S32) + (hi_lo & _LOW) + lo_hi
    return hi_hi + (hi_lo >> _S32) + (cross >> _S32)


@cuda.jit(device=True)
def draw(resample_key, j, n):
    """Segment of draw ``j`` of the resample whose key is ``mix(seed + b)``
    (``0 <= result < n``)."""
    return np.int64(high_word(mix(resample_key + np.uint64(j)), np.uint64(n)))


@lru_cache(maxsize=None)
def sums_kernel(width: int):
    """The kernel that sums resampled rows of ``width`` columns (made once per width):
    ``kernel[(parts, k), threads](stats, seed, first, partials)`` writes
    ``partials[b, p]``, the sum of part ``p`` of the ``n`` draws of resample
    ``first + b`` (``partials`` is ``(k, parts, width)`` int64; the parts split the
    draws evenly)."""
    columns = int(width)

    @cuda.jit
    def resample_sums(stats, seed, first, partials):
        acc = cuda.local.array(columns, np.int64)
        block = cuda.shared.array(columns, np.int64)
        t = cuda.threadIdx.x
        n = stats.shape[0]
        b = cuda.blockIdx.y
        parts = cuda.gridDim.x
        for c in range(columns):
            acc[c] = 0
        for c in range(t, columns, cuda.blockDim.x):
            block[c] = 0
        cuda.syncthreads()
        key = mix(seed + np.uint64(first + b))
        stretch = (n + parts - 1) // parts
        lo = cuda.blockIdx.x * stretch
        hi = min(n, lo + stretch)
        for j in range(lo + t, hi, cuda.blockDim.x):
            row = draw(key, j, n)
            for c in range(columns):
                acc[c] += np.int64(stats[row, c])
        for c in range(columns):
            if acc[c] != 0:
                cuda.atomic.add(block, c, acc[c])
        cuda.syncthreads()
        for c in range(t, columns, cuda.blockDim.x):
            partials[b, cuda.blockIdx.x, c] = block[c]

    return resample_sums


@cuda.jit(cache=True)
def score_resamples(partials, n_systems, first, max_order, smooth, smooth_value,
                    effective_order, compensated, weights, ref_scale, out):
    """``out[s, first + b]`` = BLEU of system ``s``'s columns of the summed partial rows of
    resample ``b`` (a thread per resample and system)."""
    row = cuda.local.array(_ROW, np.int64)
    precisions = cuda.local.array(MAX_ORDER, np.float64)
    k = partials.shape[0]
    parts = partials.shape[1]
    row_width = 2 + 2 * max_order
    for i in range(cuda.grid(1), k * n_systems, cuda.gridsize(1)):
        b = i // n_systems
        s = i - b * n_systems
        for c in range(row_width):
            total = 0
            for p in range(parts):
                total += partials[b, p, s * row_width + c]
            row[c] = total
        out[s, first + b] = bleu_of_row(row, max_order, smooth, smooth_value, effective_order,
                                        compensated, weights, ref_scale, precisions)
