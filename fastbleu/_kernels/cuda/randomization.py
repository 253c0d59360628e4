"""Approximate randomization on the device with numpy's own coins (Riezler & Maxwell, 2005).

The coins are those of ``numpy.random.default_rng(seed).integers(2, size=(n_trials,
n), dtype=bool)`` (sacrebleu's ``_paired_ar_test``), to the last bit.  numpy's
default bit generator is PCG64 (O'Neill, 2014): a 128-bit linear congruential
state ``s -> s * MULTIPLIER + inc`` stepped before each 64-bit output, the
XSL-RR permutation of the new state (:func:`output`).  A bool call takes 32
coins from each 32-bit word, lowest bit first, and the words come from the
outputs low half first, so coin ``c = t * n + i`` (trial ``t``, segment ``i``)
is bit ``c % 64`` of output ``c // 64``: one output holds 64 coins.  Output
``o`` comes from the state stepped ``o + 1`` times; :func:`jump` gets there in
``popcount(steps)`` 128-bit multiply-adds from :func:`jump_table`'s powers of
the step (Brown, 1994, "Random number generation with arbitrary strides"),
made once on the host for the generator's increment.  This is the device's
version of :mod:`fastbleu._kernels.draws` (``coin_flips``), whose 128-bit
product is an LLVM intrinsic that the simulator cannot run: :func:`mul128`
takes the high word from :func:`.bootstrap.high_word` (32-bit halves).

:func:`lay_out_kernel` gives the kernel that writes each segment's ``baseline
- system`` rows side by side (``diff``), adds the systems' and the baseline's
totals into two rows of the zeroed ``scratch`` array and counts malformed rows
(a row of -1) in a third.  :func:`randomization_sums_kernel` gives the kernel
that makes the coins and sums (compile-time sizes: the row sums stay in
registers): a block takes a stretch of outputs, a thread every
``blockDim``-th output of it, makes the output's 64 coins and adds the
``diff`` row of every set coin, flushing its sums to the trial's row of
``scratch`` (through shared memory, int64 atomics) when the coins cross into
the next trial.  :func:`score_trials` forms, per trial and system, A = the
system's totals + the flipped differences and B = the pair's totals - A
(sacrebleu's ``pos_sel @ bl + neg_sel @ sys`` and its complement, exact in
int64, as :func:`fastbleu._kernels.resample.randomization_sums`), and scores
both with :func:`.formula.bleu_of_row`.
"""

import math
from functools import lru_cache

import numpy as np

from .bootstrap import high_word
from .formula import MAX_ORDER, bleu_of_row
from .loader import CACHED, cuda

#: PCG64's default 128-bit multiplier (numpy's ``PCG_DEFAULT_MULTIPLIER_128``).
MULTIPLIER = 47026247687942121848144207491837523525
_M64 = (1 << 64) - 1
_M128 = (1 << 128) - 1
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_S58 = np.uint64(58)
_S63 = np.uint64(63)
_S64 = np.uint64(64)
_ROW = 2 + 2 * MAX_ORDER  # local arrays take literal sizes
#: Rows of ``scratch`` after the trials' rows: the systems' totals, the baseline's totals
#: (its first row-width columns), and the count of malformed rows (column 0).
SYSTEM_TOTALS, BASELINE_TOTALS, MALFORMED_ROWS = 0, 1, 2
EXTRA_ROWS = 3


def jump_table(inc: int) -> np.ndarray:
    """The LCG ``s -> s * MULTIPLIER + inc`` applied ``2**k`` times, ``k = 0..63``, as the
    affine maps ``s -> s * mult + plus`` (mod 2**128): uint64 ``(64, 4)`` rows
    ``(mult_hi, mult_lo, plus_hi, plus_lo)``."""
    table = np.empty((64, 4), dtype=np.uint64)
    mult, plus = MULTIPLIER, int(inc) & _M128
    for k in range(64):
        table[k] = (mult >> 64, mult & _M64, plus >> 64, plus & _M64)
        mult, plus = (mult * mult) & _M128, (plus * (mult + 1)) & _M128
    return table


@cuda.jit(device=True)
def mul128(a_hi, a_lo, b_hi, b_lo):
    """``a * b`` mod 2**128 on (high, low) uint64 pairs."""
    return high_word(a_lo, b_lo) + a_hi * b_lo + a_lo * b_hi, a_lo * b_lo


@cuda.jit(device=True)
def add128(a_hi, a_lo, b_hi, b_lo):
    """``a + b`` mod 2**128 on (high, low) uint64 pairs."""
    low = a_lo + b_lo
    return a_hi + b_hi + (_ONE if low < a_lo else _ZERO), low


@cuda.jit(device=True)
def jump(table, hi, lo, steps):
    """The state ``(hi, lo)`` stepped ``steps`` (uint64) times: a multiply-add per set bit."""
    k = 0
    while steps != _ZERO:
        if steps & _ONE:
            hi, lo = mul128(hi, lo, table[k, 0], table[k, 1])
            hi, lo = add128(hi, lo, table[k, 2], table[k, 3])
        steps = steps >> _ONE
        k += 1
    return hi, lo


@cuda.jit(device=True)
def output(hi, lo):
    """PCG64's XSL-RR output of a (new) state."""
    x = hi ^ lo
    rot = hi >> _S58
    return (x >> rot) | (x << ((_S64 - rot) & _S63))


@cuda.jit(**CACHED)
def stream_outputs(table, state_hi, state_lo, positions, out):
    """``out[k]``: the generator's output number ``positions[k]`` (uint64; 0 is the first
    output of the state ``(state_hi, state_lo)``), each jumped to on its own: numpy's
    ``PCG64.advance(positions[k])`` then ``random_raw()``, to check the stream."""
    for k in range(cuda.grid(1), positions.shape[0], cuda.gridsize(1)):
        hi, lo = jump(table, state_hi, state_lo, positions[k] + _ONE)
        out[k] = output(hi, lo)


@lru_cache(maxsize=None)
def lay_out_kernel(n_systems: int, max_order: int):
    """The kernel that lays out the pairs' rows, for ``n_systems`` systems of
    ``max_order`` orders (compile-time sizes, as :func:`randomization_sums_kernel`):
    ``kernel[blocks, threads](rows, diff, scratch, n_trials)`` with ``rows = (baseline,
    *systems)`` writes ``diff[i, s * w + c] = baseline[i, c] - system_s[i, c]`` (``w`` the
    row width) and adds into ``scratch`` (zeroed, ``n_trials`` rows of trials first) the
    systems' column totals (row ``n_trials + SYSTEM_TOTALS``), the baseline's (``+
    BASELINE_TOTALS``, its first ``w`` columns) and the number of malformed rows (a
    negative first column; ``+ MALFORMED_ROWS``, column 0).  A thread sums its rows in
    registers, a block in shared memory, then one atomic add per block and column."""
    systems = int(n_systems)
    width = 2 + 2 * int(max_order)
    columns = systems * width
    sums = columns + width + 1  # the systems' totals, the baseline's, the malformed rows

    @cuda.jit
    def lay_out_pairs(rows, diff, scratch, n_trials):
        acc = cuda.local.array(sums, np.int64)
        block = cuda.shared.array(sums, np.int64)
        t = cuda.threadIdx.x
        for c in range(sums):
            acc[c] = 0
        for c in range(t, sums, cuda.blockDim.x):
            block[c] = 0
        cuda.syncthreads()
        baseline = rows[0]
        for i in range(cuda.grid(1), diff.shape[0], cuda.gridsize(1)):
            bad = baseline[i, 0] < 0
            for c in range(width):
                acc[columns + c] += baseline[i, c]
            for s in range(systems):
                system = rows[s + 1]
                if system[i, 0] < 0:
                    bad = True
                for c in range(width):
                    value = system[i, c]
                    acc[s * width + c] += value
                    diff[i, s * width + c] = baseline[i, c] - value
            if bad:
                acc[sums - 1] += 1
        for c in range(sums):
            if acc[c] != 0:
                cuda.atomic.add(block, c, acc[c])
        cuda.syncthreads()
        for c in range(t, sums, cuda.blockDim.x):
            if block[c] != 0:
                if c < columns:
                    cuda.atomic.add(scratch, (n_trials + SYSTEM_TOTALS, c), block[c])
                elif c < columns + width:
                    cuda.atomic.add(scratch, (n_trials + BASELINE_TOTALS, c - columns),
                                    block[c])
                else:
                    cuda.atomic.add(scratch, (n_trials + MALFORMED_ROWS, 0), block[c])

    return lay_out_pairs


@lru_cache(maxsize=None)
def randomization_sums_kernel(n_systems: int, max_order: int):
    """The kernel that adds the flipped ``diff`` rows of every trial, for ``n_systems``
    systems of ``max_order`` orders (made once per shape: the row sums stay in registers):
    ``kernel[blocks, threads](diff, table, state_hi, state_lo, n_trials, scratch)`` adds,
    for each trial ``t``, the ``diff`` rows of the segments whose coin is set into
    ``scratch[t]`` (zeroed).  ``table`` is :func:`jump_table` of the generator's
    increment, ``(state_hi, state_lo)`` its state before the first output.

    A block takes a contiguous stretch of the outputs and its threads take every
    ``blockDim``-th output of it (a warp's coins are 2,048 consecutive segments); a
    thread jumps once to its first output, then ``blockDim`` steps (one multiply-add
    for a power of two) to each next one.  A thread flushes its sums when its coins
    cross into another trial: into shared memory for the block's first two trials
    (one global atomic add per column and block at the end: a stretch lies within
    two trials unless trials are shorter than it), else straight to ``scratch``."""
    columns = int(n_systems) * (2 + 2 * int(max_order))
    slots = 2 * columns  # shared sums of a block's first two trials

    @cuda.jit
    def randomization_sums(diff, table, state_hi, state_lo, n_trials, scratch):
        acc = cuda.local.array(columns, np.int64)
        shared = cuda.shared.array(slots, np.int64)
        tid = cuda.threadIdx.x
        for c in range(columns):
            acc[c] = 0
        for c in range(tid, slots, cuda.blockDim.x):
            shared[c] = 0
        cuda.syncthreads()
        n = diff.shape[0]
        coins = n_trials * n
        outputs = (coins + 63) // 64
        stretch = (outputs + cuda.gridDim.x - 1) // cuda.gridDim.x
        lo = cuda.blockIdx.x * stretch
        hi_output = min(outputs, lo + stretch)
        first_trial = lo * 64 // n
        first = lo + tid
        trial = -1
        if first < hi_output:
            hi, lo_state = jump(table, state_hi, state_lo, np.uint64(first + 1))
            for o in range(first, hi_output, cuda.blockDim.x):
                x = output(hi, lo_state)
                c0 = o * 64
                t = c0 // n
                i = c0 - t * n
                if t != trial:
                    if trial >= 0:
                        flush(acc, columns, trial, first_trial, shared, scratch)
                    trial = t
                for b in range(min(64, coins - c0)):
                    if (x >> np.uint64(b)) & _ONE:
                        for c in range(columns):
                            acc[c] += diff[i, c]
                    i += 1
                    if i == n:  # the next coin is the next trial's
                        flush(acc, columns, trial, first_trial, shared, scratch)
                        i = 0
                        trial += 1
                hi, lo_state = jump(table, hi, lo_state, np.uint64(cuda.blockDim.x))
            if trial < n_trials:
                flush(acc, columns, trial, first_trial, shared, scratch)
        cuda.syncthreads()
        for k in range(tid, slots, cuda.blockDim.x):
            if shared[k] != 0:
                slot = k // columns
                cuda.atomic.add(scratch, (first_trial + slot, k - slot * columns), shared[k])

    return randomization_sums


@cuda.jit(device=True)
def flush(acc, columns, trial, first_trial, shared, scratch):
    """Add a thread's sums of ``trial`` to the block's shared ones (its first two trials)
    or to ``scratch``, and zero them."""
    slot = trial - first_trial
    for c in range(columns):
        if acc[c] != 0:
            if slot < 2:
                cuda.atomic.add(shared, slot * columns + c, acc[c])
            else:
                cuda.atomic.add(scratch, (trial, c), acc[c])
            acc[c] = 0


@cuda.jit(**CACHED)
def score_trials(scratch, n_systems, max_order, smooth, smooth_value, effective_order,
                 compensated, weights, ref_scale, out_a, out_b):
    """``out_a[s, t]`` and ``out_b[s, t]``: BLEU of trial ``t``'s pseudo-systems A (the
    system's totals + ``scratch[t]``) and B (the pair's totals - A) of system ``s`` (a
    thread per trial and system); NaN everywhere when a row was malformed."""
    row = cuda.local.array(_ROW, np.int64)
    precisions = cuda.local.array(MAX_ORDER, np.float64)
    n_trials = out_a.shape[1]
    row_width = 2 + 2 * max_order
    malformed = scratch[n_trials + MALFORMED_ROWS, 0] != 0
    for k in range(cuda.grid(1), n_trials * n_systems, cuda.gridsize(1)):
        t = k // n_systems
        s = k - t * n_systems
        if malformed:
            out_a[s, t] = math.nan
            out_b[s, t] = math.nan
            continue
        for c in range(row_width):
            row[c] = scratch[n_trials + SYSTEM_TOTALS, s * row_width + c] + \
                scratch[t, s * row_width + c]
        out_a[s, t] = bleu_of_row(row, max_order, smooth, smooth_value, effective_order,
                                  compensated, weights, ref_scale, precisions)
        for c in range(row_width):
            column = s * row_width + c
            row[c] = scratch[n_trials + SYSTEM_TOTALS, column] + \
                scratch[n_trials + BASELINE_TOTALS, c] - row[c]
        out_b[s, t] = bleu_of_row(row, max_order, smooth, smooth_value, effective_order,
                                  compensated, weights, ref_scale, precisions)
