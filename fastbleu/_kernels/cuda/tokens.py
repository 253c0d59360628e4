"""Token ids on the device -> 64-bit token hashes, as :mod:`fastbleu._kernels.ids` makes them.

A segment's kept ids are those after its leading run of ``pad_id``, before
the first ``eos_id`` after that run, and not ``pad_id`` themselves; each
becomes ``finish(id + 1)`` (splitmix64's finaliser, the CPU path's token
hash), so an n-gram key here equals the CPU path's key for the same ids and
the statistics are the same, hash collisions included.

:func:`fastbleu._kernels.cuda.counting.prepare_segment` is run by a group
of ``group`` threads per segment (the fused kernel
:func:`~fastbleu._kernels.cuda.counting.bleu_rows` has several groups per
block; every thread of the block calls it, as it meets at ``syncthreads``).
It lives beside the kernel: numba's simulator swaps the ``cuda`` module of
a device function's own module on every call, which races between threads
when that module is not the kernel's.  The group walks its segment a chunk
of ``group`` ids at a time: it finds the end of the leading padding and the
first ``eos_id`` with shared-memory minima, and places the kept ids with a
prefix sum of the chunk's keep flags (Hillis and Steele), so the hashes land
compacted at the segment's own position in the output (never more than it
has ids).  Without ``pad_id`` and ``eos_id`` every id is kept and the chunk
is copied as it is.  Only ``syncthreads`` and shared-memory atomics are used
(no warp intrinsics), so the kernel runs unchanged on numba's CUDA simulator.
"""

import numpy as np

from .loader import cuda

_BIG = np.int64(1 << 62)
_ONE = np.uint64(1)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)

# Slots of the int64 ``summary`` array that the kernel reports malformed input through
# (read by the host only when it checks).
MISSING = 0  # the first segment without any reference
NEGATIVE = 1  # NEGATIVE + 2 * s: the first segment of stream s that keeps a negative id
BAD_OFFSETS = 2  # BAD_OFFSETS + 2 * s: the first segment of stream s with offsets out of order
#: The value of a minimum slot that nothing has lowered.
NONE = _BIG


@cuda.jit(device=True)
def token_hash(value):
    """``finish(value + 1)``: the CPU path's hash of a non-negative id."""
    h = np.uint64(value) + _ONE
    h ^= h >> _S30
    h *= _MIX_1
    h ^= h >> _S27
    h *= _MIX_2
    h ^= h >> _S31
    return h
