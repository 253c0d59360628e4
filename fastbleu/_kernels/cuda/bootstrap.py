"""Paired bootstrap resamples on the device in one pass: draws, sums and scores (Koehn, 2004).

Draw ``j`` of resample ``b`` is segment ``mulhi(finish(finish(seed + b) + j), n)``
(:func:`draw`: splitmix64's finaliser as a counter-based generator;
``mulhi`` the high word of the 128-bit product, which maps 64 random bits to
``0..n-1`` with a bias below ``n / 2**64``).  The same seed gives the same
resamples on every device and on the simulator, but not numpy's draws
(sacrebleu's), which would have to be made on the host and copied.

:func:`lay_out` puts the systems' rows side by side (one row a segment, so
a draw reads one place), in full and in a compact int16 form of the lengths
and matches alone (BLEU's totals follow from the hypothesis length), and
flags rows that do not fit it.  :func:`sums_kernel` gives the kernel for a
number of systems and orders: a block sums a stretch of one resample's
draws, each thread adding its draws' rows into accumulators held in
registers (the sizes are compile-time constants, so the loops over columns
unroll), then the block adds them up in shared memory and writes one
partial row; no index array and no zeroed sums are made.
:func:`score_resamples` adds a resample's partial rows and scores each
system's part with :func:`.formula.bleu_of_row` (a thread per resample and
system), writing ``out[system, resample]``.
"""

import math
from functools import lru_cache

import numpy as np

from .formula import MAX_ORDER, bleu_of_row
from .loader import CACHED, cuda
from .tokens import finish

_S32 = np.uint64(32)
_LOW = np.uint64(0xFFFFFFFF)
_ROW = 2 + 2 * MAX_ORDER  # local arrays take literal sizes
#: The largest value a compact row holds (int16).
COMPACT_MAX = 32767
#: Bits of :func:`lay_out`'s flag: some row needs the full rows; some row is malformed.
FULL = np.int32(1)
MALFORMED = np.int32(2)


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
    """Segment of draw ``j`` of the resample whose key is ``finish(seed + b)``
    (``0 <= result < n``)."""
    return np.int64(high_word(finish(resample_key + np.uint64(j)), np.uint64(n)))


@cuda.jit(**CACHED)
def lay_out(systems, max_order, side, compact, flag):
    """The systems' rows side by side, twice: every column in ``side`` (int32 or int64,
    ``(n, S * row_width)``), and the lengths and matches alone in ``compact`` (int16,
    ``(n, S * (2 + max_order))``).  ``flag[0]`` (zeroed by the caller) gets ``FULL``
    where a row does not fit the compact form (a value outside ``0..COMPACT_MAX``, or a
    total that is not ``max(hyp_len - m, 0)``: a BLEU row's totals always are), and
    ``MALFORMED`` for a malformed segment's row of -1."""
    n = side.shape[0]
    n_systems = len(systems)
    row_width = 2 + 2 * max_order
    compact_width = 2 + max_order
    for i in range(cuda.grid(1), n * n_systems, cuda.gridsize(1)):
        r = i // n_systems
        s = i - r * n_systems
        rows = systems[s]
        for c in range(row_width):
            side[r, s * row_width + c] = rows[r, c]
        fits = True
        for c in range(compact_width):
            value = rows[r, c]
            if value < 0 or value > COMPACT_MAX:
                fits = False
            compact[r, s * compact_width + c] = np.int16(value & 0x7FFF)
        hyp_len = rows[r, 0]
        for m in range(max_order):
            if rows[r, 2 + max_order + m] != max(hyp_len - m, 0):
                fits = False
        if hyp_len < 0:  # a malformed segment's row of -1: every resample is NaN
            cuda.atomic.or_(flag, 0, MALFORMED)
        elif not fits:
            cuda.atomic.or_(flag, 0, FULL)


@lru_cache(maxsize=None)
def sums_kernel(n_systems: int, max_order: int):
    """The kernel that sums resampled rows of ``n_systems`` systems of ``max_order`` orders
    (made once per shape, whose sizes are compile-time constants: the loops over columns
    unroll and the sums stay in registers):
    ``kernel[(parts, k), threads](side, compact, flag, seed, first, partials)`` writes
    ``partials[b, p]``, the sum of part ``p`` of the ``n`` draws of resample
    ``first + b`` (``(k, parts, n_systems * row_width)`` int64; the parts split the
    draws evenly).  Where ``flag[0]`` is 0 it reads the compact rows (about a third of
    the bytes: a million segments of two systems fit a GPU's L2 cache) and adds the
    totals from the hypothesis lengths; else the full rows."""
    systems = int(n_systems)
    order = int(max_order)
    row_width = 2 + 2 * order
    compact_width = 2 + order
    columns = systems * row_width

    @cuda.jit
    def resample_sums(side, compact, flag, seed, first, partials):
        acc = cuda.local.array(columns, np.int64)
        block = cuda.shared.array(columns, np.int64)
        t = cuda.threadIdx.x
        n = side.shape[0]
        b = cuda.blockIdx.y
        parts = cuda.gridDim.x
        for c in range(columns):
            acc[c] = 0
        for c in range(t, columns, cuda.blockDim.x):
            block[c] = 0
        cuda.syncthreads()
        key = finish(seed + np.uint64(first + b))
        stretch = (n + parts - 1) // parts
        lo = cuda.blockIdx.x * stretch
        hi = min(n, lo + stretch)
        if flag[0] == 0:
            for j in range(lo + t, hi, cuda.blockDim.x):
                row = draw(key, j, n)
                for s in range(systems):
                    hyp_len = np.int64(compact[row, s * compact_width])
                    acc[s * row_width] += hyp_len
                    for c in range(1, compact_width):
                        acc[s * row_width + c] += np.int64(compact[row, s * compact_width + c])
                    for m in range(order):
                        acc[s * row_width + 2 + order + m] += max(hyp_len - m, 0)
        else:
            for j in range(lo + t, hi, cuda.blockDim.x):
                row = draw(key, j, n)
                for c in range(columns):
                    acc[c] += np.int64(side[row, c])
        for c in range(columns):
            if acc[c] != 0:
                cuda.atomic.add(block, c, acc[c])
        cuda.syncthreads()
        for c in range(t, columns, cuda.blockDim.x):
            partials[b, cuda.blockIdx.x, c] = block[c]

    return resample_sums


@cuda.jit(**CACHED)
def score_resamples(partials, flag, n_systems, first, max_order, smooth, smooth_value,
                    effective_order, compensated, weights, ref_scale, out):
    """``out[s, first + b]`` = BLEU of system ``s``'s columns of the summed partial rows of
    resample ``b`` (a thread per resample and system); NaN everywhere when a row was
    malformed (``flag[0]`` has ``MALFORMED``)."""
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
        if flag[0] & MALFORMED:
            out[s, first + b] = math.nan
            continue
        out[s, first + b] = bleu_of_row(row, max_order, smooth, smooth_value, effective_order,
                                        compensated, weights, ref_scale, precisions)
