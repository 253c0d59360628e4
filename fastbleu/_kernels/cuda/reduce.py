"""Sums on the device: the column sums of statistics rows, and paired bootstrap resamples.

:func:`column_sums` adds the rows of a statistics array (int64, exact).

:func:`bootstrap_sums` sums resampled rows of several systems at once (their
rows side by side, as :mod:`fastbleu._kernels.resample` lays them out).  The
draws are made on the device by a counter-based generator: draw ``j`` of
resample ``b`` is segment ``mulhi(h, n)`` with ``h = finish(finish(seed + b) +
j)`` (splitmix64's finaliser; ``mulhi`` the high word of the 128-bit product,
which maps 64 random bits to ``0..n-1`` with a bias below ``n / 2**64``).  The
same seed gives the same resamples on every device and on the simulator, but
not numpy's draws (sacrebleu's), which would have to be made on the host and
copied.  A block sums a stretch of draws of one resample and adds its
column sums to ``sums[b]`` with one atomic per column.
"""

import numpy as np

from .loader import cuda

#: The most columns a row of summed systems may have (bootstrap; column sums take any).
MAX_COLUMNS = 64
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)
_S32 = np.uint64(32)
_LOW = np.uint64(0xFFFFFFFF)


@cuda.jit
def column_sums(rows, out):
    """``out[c] += rows[:, c].sum()`` (``out`` zeroed by the caller)."""
    block = cuda.shared.array(MAX_COLUMNS, np.int64)
    t = cuda.threadIdx.x
    width = rows.shape[1]
    for c0 in range(0, width, MAX_COLUMNS):
        for c in range(t, MAX_COLUMNS, cuda.blockDim.x):
            block[c] = 0
        cuda.syncthreads()
        for c in range(c0, min(width, c0 + MAX_COLUMNS)):
            local = 0
            for i in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
                local += rows[i, c]
            if local != 0:
                cuda.atomic.add(block, c - c0, local)
        cuda.syncthreads()
        for c in range(t, min(MAX_COLUMNS, width - c0), cuda.blockDim.x):
            if block[c] != 0:
                cuda.atomic.add(out, c0 + c, block[c])
        cuda.syncthreads()


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
    lo_lo = a_lo * b_lo
    hi_lo = a_hi * b_lo
    lo_hi = a_lo * b_hi
    hi_hi = a_hi * b_hi
    cross = (lo_lo >> _S32) + (hi_lo & _LOW) + lo_hi
    return hi_hi + (hi_lo >> _S32) + (cross >> _S32)


@cuda.jit(device=True)
def draw(seed, b, j, n):
    """Segment of draw ``j`` of resample ``b`` (``0 <= result < n``)."""
    return np.int64(high_word(mix(mix(seed + np.uint64(b)) + np.uint64(j)), np.uint64(n)))


@cuda.jit
def bootstrap_sums(stats, seed, first, draws_per_block, sums):
    """``sums[b - first] += stats[draws of resample b]`` for the resamples ``first..``:
    ``blockIdx.y`` is the resample, ``blockIdx.x`` a stretch of ``draws_per_block`` of
    its ``n`` draws (``sums`` zeroed by the caller)."""
    block = cuda.shared.array(MAX_COLUMNS, np.int64)
    local = cuda.local.array(MAX_COLUMNS, np.int64)
    t = cuda.threadIdx.x
    n = stats.shape[0]
    width = stats.shape[1]
    b = cuda.blockIdx.y
    resample = first + b
    for c in range(t, width, cuda.blockDim.x):
        block[c] = 0
    for c in range(width):
        local[c] = 0
    cuda.syncthreads()
    lo = cuda.blockIdx.x * draws_per_block
    hi = min(n, lo + draws_per_block)
    for j in range(lo + t, hi, cuda.blockDim.x):
        row = draw(seed, resample, j, n)
        for c in range(width):
            local[c] += np.int64(stats[row, c])
    for c in range(width):
        if local[c] != 0:
            cuda.atomic.add(block, c, local[c])
    cuda.syncthreads()
    for c in range(t, width, cuda.blockDim.x):
        if block[c] != 0:
            cuda.atomic.add(sums, (b, c), block[c])


@cuda.jit
def resample_counts(n, seed, first, counts):
    """``counts[b, j]`` = how often resample ``first + b`` draws segment ``j`` (a check of
    :func:`bootstrap_sums`'s draws; ``counts`` zeroed by the caller)."""
    b = cuda.blockIdx.y
    for j in range(cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x, n,
                   cuda.gridDim.x * cuda.blockDim.x):
        cuda.atomic.add(counts, (b, draw(seed, first + b, j, n)), 1)


@cuda.jit
def fill(array, value):
    """``array[:] = value`` (1-D)."""
    for i in range(cuda.grid(1), array.shape[0], cuda.gridsize(1)):
        array[i] = value


@cuda.jit
def scatter_scores(scored, n_systems, first, out):
    """``out[s, first + b] = scored[b * n_systems + s]``."""
    for i in range(cuda.grid(1), scored.shape[0], cuda.gridsize(1)):
        out[i % n_systems, first + i // n_systems] = scored[i]


@cuda.jit
def side_by_side(rows, column, out):
    """``out[:, column:column + width] = rows`` (one system's rows into the joint array)."""
    width = rows.shape[1]
    for i in range(cuda.grid(1), rows.shape[0] * width, cuda.gridsize(1)):
        out[i // width, column + i % width] = rows[i // width, i % width]


@cuda.jit(cache=True)
def widen(values, out):
    """``out[:] = values`` as int64 (1-D, any strides): ids or offsets of one stream in the
    others' type."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        out[i] = np.int64(values[i])


@cuda.jit(cache=True)
def widen_rows(values, out):
    """``out[:, :] = values`` as int64 (2-D, any strides)."""
    width = values.shape[1]
    for k in range(cuda.grid(1), values.shape[0] * width, cuda.gridsize(1)):
        out[k // width, k % width] = np.int64(values[k // width, k % width])
