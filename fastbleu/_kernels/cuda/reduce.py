"""Sums and copies on the device: column sums of statistics rows, and small helpers.

:func:`column_sums` adds the rows of a statistics array (int64, exact);
:func:`widen` and :func:`widen_rows` copy ids or rows into C-contiguous
int64; :func:`fill` sets an array.
"""

import numpy as np

from .loader import CACHED, cuda

#: The most columns of the bootstrap's summed systems (column sums take any).
MAX_COLUMNS = 64


@cuda.jit
def column_sums(rows, out):
    """``out[c] += rows[:, c].sum()`` (``out`` zeroed by the caller); where ``out`` has one
    more entry, it counts the malformed rows (a negative first column: the rows of -1 that
    :func:`.counting.bleu_rows` gives a malformed segment)."""
    block = cuda.shared.array(MAX_COLUMNS, np.int64)
    t = cuda.threadIdx.x
    width = rows.shape[1]
    if out.shape[0] > width:
        bad = 0
        for i in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
            if rows[i, 0] < 0:
                bad += 1
        if bad:
            cuda.atomic.add(out, width, bad)
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


@cuda.jit
def fill(array, value):
    """``array[:] = value`` (1-D)."""
    for i in range(cuda.grid(1), array.shape[0], cuda.gridsize(1)):
        array[i] = value


@cuda.jit(**CACHED)
def widen(values, out):
    """``out[:] = values`` as int64 (1-D, any strides): ids or offsets of one stream in the
    others' type."""
    for i in range(cuda.grid(1), values.shape[0], cuda.gridsize(1)):
        out[i] = np.int64(values[i])


@cuda.jit(**CACHED)
def widen_rows(values, out):
    """``out[:, :] = values`` as int64 (2-D, any strides)."""
    width = values.shape[1]
    for k in range(cuda.grid(1), values.shape[0] * width, cuda.gridsize(1)):
        out[k // width, k % width] = np.int64(values[k // width, k % width])
