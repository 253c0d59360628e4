"""Bootstrap resamples on the device from numpy's own draws, summed as they are drawn.

Resample ``b`` is row ``b`` of ``numpy.random.default_rng(seed).choice(n,
size=(n_samples, n))`` (sacrebleu's ``_paired_bs_test``), to the last index.
numpy draws each index with Lemire's method (Lemire, 2019, "Fast random
integer generation in an interval") on 32-bit words of its PCG64 stream,
taken from each 64-bit output low half first: ``m = word * n``, the index
is ``m >> 32``, and the word is rejected (the next one tried) when ``m``'s
low 32 bits are below ``2**32 mod n``.  This is the device's version of
:mod:`fastbleu._kernels.draws` (``rejected_words``, ``bounded_draws``); the
stream itself is :mod:`.randomization`'s (:func:`~.randomization.jump` from
a host-made table of the step's powers, :func:`~.randomization.output`).

Whether a word is rejected depends on the word alone, so the draws are the
stream's words without the rejected ones, and draw ``d`` comes from word
``d + k``, ``k`` the rejected words before it.  Two kernels over the same
cut of the words, each thread a stretch of ``stretch`` (even) words from
word ``thread * stretch`` (:func:`plan`):

1. :func:`count_rejected` counts each thread's rejected words, and each
   block's, and zeroes the sums.
2. :func:`sums_kernel`'s kernel adds the block totals of the blocks before
   and, with a prefix sum in shared memory (Hillis and Steele), the counts of
   the threads before (:func:`rejected_before`): a thread's first accepted
   word is draw ``thread * stretch - rejected before``.  It then makes its
   words one after the other, skips the rejected ones (:func:`next_draw`)
   and adds the drawn rows into registers, flushing them to the resample's
   sums when its draws cross into the next resample: into shared memory for
   the block's first two resamples, else with global atomic adds.

The words scanned are the draws plus a margin for the rejected ones (the
expected count and eight standard deviations, :func:`plan`).  Should more
words be rejected than the margin holds, the thread that holds the last
scanned word goes on past it, word after word, until every draw is made
(:func:`walk`): the result is exact whatever the margin, and nothing is read
back.  :func:`draw_indices` writes the draws themselves with the same device
functions, to check them against numpy for any ``n`` (no rows needed).
``n`` is at most ``2**32`` (numpy draws larger ranges from 64-bit words).
"""

import math
from functools import lru_cache

import numpy as np

from .loader import CACHED, cuda
from .randomization import MULTIPLIER, add128, jump, mul128, output

_LOW = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_TWO32 = np.uint64(1 << 32)
_ZERO = np.uint64(0)
_MUL_HI = np.uint64(MULTIPLIER >> 64)
_MUL_LO = np.uint64(MULTIPLIER & ((1 << 64) - 1))
#: The largest block the shared prefix sum holds (CUDA's limit).
MAX_THREADS = 1024
#: The largest ``n`` drawn as numpy draws it here (numpy's 32-bit Lemire method).
MAX_N = 1 << 32


def threshold_of(n: int) -> int:
    """Lemire's threshold for ``n``: ``2**32 mod n`` (numpy's ``(UINT32_MAX - rng) %
    rng_excl``); a word whose ``word * n`` has low 32 bits below it is rejected."""
    return ((1 << 32) - n) % n


def plan(n_draws: int, n: int, threads: int, max_blocks: int, min_stretch: int,
         margin: int | None = None) -> tuple[int, int, int]:
    """``(words, stretch, blocks)`` for ``n_draws`` draws of ``0..n-1``: the words scanned
    (the draws and a margin for the rejected ones: by default their expected count and
    eight standard deviations, plus 32), the words of a thread (even, at least
    ``min_stretch``, and more where ``max_blocks`` blocks would not hold them all) and the
    blocks of ``threads`` threads that cover them."""
    if margin is None:
        p = threshold_of(n) / 2.0 ** 32
        expected = n_draws * p / (1.0 - p)
        margin = int(expected + 8.0 * math.sqrt(expected)) + 32
    words = n_draws + margin
    per_thread = -(-words // (threads * max_blocks))
    stretch = max(min_stretch, per_thread)
    stretch += stretch % 2  # every thread starts at an output's low word
    blocks = max(1, -(-words // (stretch * threads)))
    return words, stretch, blocks


@cuda.jit(device=True)
def next_word(inc_hi, inc_lo, hi, lo, x, half):
    """The next 32-bit word, as numpy's ``next_uint32`` takes them (an output's low word,
    then its high word): ``(hi, lo, x, half, word)``, ``x`` the current output and
    ``half`` 1 when its high word is next."""
    if half == 0:
        hi, lo = mul128(hi, lo, _MUL_HI, _MUL_LO)
        hi, lo = add128(hi, lo, inc_hi, inc_lo)
        x = output(hi, lo)
        return hi, lo, x, 1, x & _LOW
    return hi, lo, x, 0, x >> _S32


@cuda.jit(device=True)
def next_draw(inc_hi, inc_lo, hi, lo, x, half, bound, threshold):
    """The next draw: words are made until one is accepted (its ``word * bound`` has low
    32 bits at least ``threshold``); returns ``(hi, lo, x, half, words used, index)``."""
    hi, lo, x, half, value = next_word(inc_hi, inc_lo, hi, lo, x, half)
    used = 1
    m = value * bound
    while (m & _LOW) < threshold:
        hi, lo, x, half, value = next_word(inc_hi, inc_lo, hi, lo, x, half)
        used += 1
        m = value * bound
    return hi, lo, x, half, used, np.int64(m >> _S32)


@cuda.jit(**CACHED)
def count_rejected(table, state_hi, state_lo, n, words, stretch, counts, block_counts, sums):
    """``counts[thread]``: the rejected words among words ``thread * stretch`` to the next
    thread's (the first ``words`` words of the stream whose state before its first output
    is ``(state_hi, state_lo)``; ``table`` is :func:`.randomization.jump_table` of its
    increment); ``block_counts[block]``: the block's total.  Every thread of the grid
    writes its count (0 past ``words``).  Also zeroes ``sums`` (2-D)."""
    total = cuda.shared.array(1, np.int64)
    t = cuda.threadIdx.x
    if t == 0:
        total[0] = 0
    g = cuda.grid(1)
    columns = sums.shape[1]
    for i in range(g, sums.shape[0] * columns, cuda.gridsize(1)):
        r = i // columns
        sums[r, i - r * columns] = 0
    cuda.syncthreads()
    bound = np.uint64(n)
    threshold = (_TWO32 - bound) % bound
    inc_hi, inc_lo = table[0, 2], table[0, 3]
    first = g * stretch
    last = min(words, first + stretch)
    found = 0
    if first < last:
        hi, lo = jump(table, state_hi, state_lo, np.uint64(first // 2))
        x = _ZERO
        half = 0
        for _ in range(first, last):
            hi, lo, x, half, value = next_word(inc_hi, inc_lo, hi, lo, x, half)
            if ((value * bound) & _LOW) < threshold:
                found += 1
    counts[g] = found
    if found != 0:
        cuda.atomic.add(total, 0, found)
    cuda.syncthreads()
    if t == 0:
        block_counts[cuda.blockIdx.x] = total[0]


@cuda.jit(device=True)
def rejected_before(counts, block_counts, scan, prior):
    """The rejected words before this thread's stretch and before its block's (every
    thread of the block calls it): the block totals of the blocks before, plus an
    exclusive prefix sum of the block's thread counts in shared memory (``scan``, a
    slot a thread; ``prior``, one slot)."""
    t = np.int64(cuda.threadIdx.x)
    width = np.int64(cuda.blockDim.x)
    block = np.int64(cuda.blockIdx.x)
    if t == 0:
        prior[0] = 0
    part = np.int64(0)
    for k in range(t, block, width):
        part += block_counts[k]
    mine = counts[block * width + t]
    scan[t] = mine
    cuda.syncthreads()
    if part != 0:
        cuda.atomic.add(prior, 0, part)
    step = np.int64(1)
    while step < width:
        below = scan[t - step] if t >= step else np.int64(0)
        cuda.syncthreads()
        scan[t] += below
        cuda.syncthreads()
        step *= 2
    cuda.syncthreads()
    return prior[0] + scan[t] - mine, prior[0]


@cuda.jit(device=True)
def walk(inc_hi, inc_lo, hi, lo, x, half, word, end, last, bound, threshold):
    """The thread's next draw: ``(hi, lo, x, half, word, index)``, ``word`` the position
    after the draw's word; ``index`` -1 when that word is past the thread's stretch
    (``end``) and the thread is not the ``last`` one, which goes on past the scanned
    words for the draws that more rejections than the margin pushed beyond them."""
    hi, lo, x, half, used, index = next_draw(inc_hi, inc_lo, hi, lo, x, half, bound,
                                             threshold)
    word += used
    if word > end and not last:
        index = np.int64(-1)
    return hi, lo, x, half, word, index


@cuda.jit(device=True)
def start(table, state_hi, state_lo, words, stretch, before):
    """A thread's start: ``(hi, lo, first word, end of its stretch, last)`` with the
    state jumped to just before its first word (an output's low word)."""
    first = np.int64(cuda.grid(1)) * stretch
    end = min(words, first + stretch)
    last = first < words and first + stretch >= words
    hi, lo = state_hi, state_lo
    if first < words:
        hi, lo = jump(table, state_hi, state_lo, np.uint64(first // 2))
    return hi, lo, first, end, last


@cuda.jit(**CACHED)
def draw_indices(table, state_hi, state_lo, n, words, stretch, counts, block_counts, out):
    """``out[d]``: draw ``d`` of ``Generator.integers(0, n, size=len(out))`` from the same
    stream and cut as :func:`count_rejected` (run first), made as the sums kernel makes
    them: to check the draws for any ``n`` (up to ``2**32``)."""
    scan = cuda.shared.array(MAX_THREADS, np.int64)
    prior = cuda.shared.array(1, np.int64)
    before, _ = rejected_before(counts, block_counts, scan, prior)
    hi, lo, word, end, last = start(table, state_hi, state_lo, words, stretch, before)
    bound = np.uint64(n)
    threshold = (_TWO32 - bound) % bound
    inc_hi, inc_lo = table[0, 2], table[0, 3]
    n_draws = out.shape[0]
    d = word - before
    x = _ZERO
    half = 0
    if word < words:
        while d < n_draws:
            hi, lo, x, half, word, index = walk(inc_hi, inc_lo, hi, lo, x, half, word, end,
                                                last, bound, threshold)
            if index < 0:
                break
            out[d] = index
            d += 1


@cuda.jit(device=True)
def flush(acc, columns, resample, first_resample, shared, sums):
    """Add a thread's sums of ``resample`` to its block's shared ones (the block's first
    two resamples) or to ``sums``, and zero them."""
    slot = resample - first_resample
    for c in range(columns):
        if acc[c] != 0:
            if slot < 2:
                cuda.atomic.add(shared, slot * columns + c, acc[c])
            else:
                cuda.atomic.add(sums, (resample, c), acc[c])
            acc[c] = 0


@lru_cache(maxsize=None)
def sums_kernel(n_systems: int, max_order: int):
    """The kernel that makes the draws and sums the drawn rows of ``n_systems`` systems of
    ``max_order`` orders (made once per shape, whose sizes are compile-time constants: the
    loops over columns unroll and the sums stay in registers):
    ``kernel[blocks, threads](side, compact, flag, table, state_hi, state_lo, words,
    stretch, counts, block_counts, sums)`` adds into ``sums[b]`` (int64 ``(n_samples,
    n_systems * row_width)``, zeroed by :func:`count_rejected`, which ran on the same
    cut) the rows of resample ``b``'s draws.  Where ``flag[0]`` is 0 it reads the
    compact rows (about a third of the bytes) and adds the totals from the hypothesis
    lengths; else the full rows (:func:`.bootstrap.lay_out`)."""
    systems = int(n_systems)
    order = int(max_order)
    row_width = 2 + 2 * order
    compact_width = 2 + order
    columns = systems * row_width
    slots = 2 * columns  # shared sums of a block's first two resamples

    @cuda.jit
    def resample_sums(side, compact, flag, table, state_hi, state_lo, words, stretch, counts,
                      block_counts, sums):
        acc = cuda.local.array(columns, np.int64)
        shared = cuda.shared.array(slots, np.int64)
        scan = cuda.shared.array(MAX_THREADS, np.int64)
        prior = cuda.shared.array(1, np.int64)
        t = cuda.threadIdx.x
        for c in range(columns):
            acc[c] = 0
        for c in range(t, slots, cuda.blockDim.x):
            shared[c] = 0
        before, before_block = rejected_before(counts, block_counts, scan, prior)
        n = np.int64(side.shape[0])
        n_draws = sums.shape[0] * n
        first_resample = (np.int64(cuda.blockIdx.x) * cuda.blockDim.x * stretch
                          - before_block) // n
        hi, lo, word, end, last = start(table, state_hi, state_lo, words, stretch, before)
        bound = np.uint64(n)
        threshold = (_TWO32 - bound) % bound
        inc_hi, inc_lo = table[0, 2], table[0, 3]
        compact_rows = flag[0] == 0
        d = word - before
        x = _ZERO
        half = 0
        if word < words and d < n_draws:
            resample = d // n
            j = d - resample * n
            while d < n_draws:
                hi, lo, x, half, word, row = walk(inc_hi, inc_lo, hi, lo, x, half, word, end,
                                                  last, bound, threshold)
                if row < 0:
                    break
                if compact_rows:
                    for s in range(systems):
                        hyp_len = np.int64(compact[row, s * compact_width])
                        acc[s * row_width] += hyp_len
                        for c in range(1, compact_width):
                            acc[s * row_width + c] += np.int64(compact[row, s * compact_width + c])
                        for m in range(order):
                            acc[s * row_width + 2 + order + m] += max(hyp_len - m, 0)
                else:
                    for c in range(columns):
                        acc[c] += np.int64(side[row, c])
                d += 1
                j += 1
                if j == n:  # the next draw is the next resample's
                    flush(acc, columns, resample, first_resample, shared, sums)
                    resample += 1
                    j = 0
            if j != 0:
                flush(acc, columns, resample, first_resample, shared, sums)
        cuda.syncthreads()
        for k in range(t, slots, cuda.blockDim.x):
            if shared[k] != 0:
                slot = k // columns
                cuda.atomic.add(sums, (first_resample + slot, k - slot * columns), shared[k])

    return resample_sums

