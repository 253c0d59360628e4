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

from ..text.hashing import finish as host_finish
from ..text.hashing import fnv_step as host_fnv_step
from ..text.tokenize_unicode import utf8_length as host_utf8_length
from .loader import cuda

_BIG = np.int64(1 << 62)
_ONE = np.uint64(1)

#: The host kernels' own functions compiled for the device, so that every hash is the
#: CPU's by construction: splitmix64's finaliser, an FNV-1a step, a UTF-8 lead byte's
#: length.  (Their modules hold no ``cuda`` name, so the simulator has nothing to swap.)
finish = cuda.jit(device=True)(host_finish.py_func)
fnv_step = cuda.jit(device=True)(host_fnv_step.py_func)
utf8_length = cuda.jit(device=True)(host_utf8_length.py_func)

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
    return finish(np.uint64(value) + _ONE)
