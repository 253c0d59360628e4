"""Paired bootstrap on the device: the rows laid out, and the resamples scored (Koehn, 2004).

:func:`lay_out` puts the systems' rows side by side (one row a segment, so
a draw reads one place), in full and in a compact int16 form of the lengths
and matches alone (BLEU's totals follow from the hypothesis length), and
flags rows that do not fit it.  :mod:`.resamples` then draws numpy's indices
(sacrebleu's ``default_rng(seed).choice(n, size=(n_samples, n))``) and sums
each resample's rows.  :func:`score_resamples` scores each system's part of
a resample's sums with :func:`.formula.bleu_of_row` (a thread per resample
and system), writing ``out[system, resample]``.  :func:`high_word` is the
high word of a 64 x 64-bit product on 32-bit halves (the simulator has no
128-bit integers), for :func:`.randomization.mul128`.
"""

import math

import numpy as np

from .formula import MAX_ORDER, bleu_of_row
from .loader import CACHED, cuda

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
    if b_hi == 0:  # b < 2**32: two 32 x 32-bit products
        return (a_hi * b_lo + ((a_lo * b_lo) >> _S32)) >> _S32
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> _S32) + (hi_lo & _LOW) + lo_hi
    return hi_hi + (hi_lo >> _S32) + (cross >> _S32)


@cuda.jit(**CACHED)
def lay_out(systems, max_order, side, compact, flag):
    """The systems' rows side by side, twice: every column in ``side`` (int32 or int64,
    ``(n, S * row_width)``), and the lengths and matches alone in ``compact`` (int16,
    ``(n, S * (2 + max_order))``).  ``flag[0]`` (zeroed by the caller) gets ``FULL``
    where a row does not fit the compact form (a value outside ``0..COMPACT_MAX``, or a
    total that is not ``max(hyp_len - m, 0)``: a BLEU row's totals always are), and
    ``MALFORMED`` for a malformed segment's row of -1, or, where ``side`` is int32, for a
    value beyond int32 (no segment of real text has 2**31 tokens; rows made by hand may):
    NaN rather than a sum of truncated values."""
    n = side.shape[0]
    n_systems = len(systems)
    row_width = 2 + 2 * max_order
    compact_width = 2 + max_order
    narrow = side.itemsize == 4
    for i in range(cuda.grid(1), n * n_systems, cuda.gridsize(1)):
        r = i // n_systems
        s = i - r * n_systems
        rows = systems[s]
        for c in range(row_width):
            value = rows[r, c]
            if narrow and (value + 0x80000000) >> 32 != 0:  # beyond int32: never a real row's
                cuda.atomic.or_(flag, 0, MALFORMED)
                value = 0
            side[r, s * row_width + c] = value
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


@cuda.jit(**CACHED)
def score_resamples(sums, flag, n_systems, max_order, smooth, smooth_value, effective_order,
                    compensated, weights, ref_scale, out):
    """``out[s, b]`` = BLEU of system ``s``'s columns of resample ``b``'s ``sums`` (a thread
    per resample and system); NaN everywhere when a row was malformed (``flag[0]`` has
    ``MALFORMED``)."""
    row = cuda.local.array(_ROW, np.int64)
    precisions = cuda.local.array(MAX_ORDER, np.float64)
    k = sums.shape[0]
    row_width = 2 + 2 * max_order
    for i in range(cuda.grid(1), k * n_systems, cuda.gridsize(1)):
        b = i // n_systems
        s = i - b * n_systems
        if flag[0] & MALFORMED:
            out[s, b] = math.nan
            continue
        for c in range(row_width):
            row[c] = sums[b, s * row_width + c]
        out[s, b] = bleu_of_row(row, max_order, smooth, smooth_value, effective_order,
                                compensated, weights, ref_scale, precisions)
