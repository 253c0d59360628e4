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

from types import CellType, FunctionType

import numpy as np
from numba.core.registry import CPUDispatcher

from ..text.hashing import extend_key as host_extend_key
from ..text.hashing import finish as host_finish
from ..text.hashing import fnv_step as host_fnv_step
from ..text.tokenize_unicode import utf8_length as host_utf8_length
from .loader import cuda

_BIG = np.int64(1 << 62)
_ONE = np.uint64(1)
_ON_DEVICE: dict = {}


def device_function(host):
    """An ``@njit`` function of the CPU kernels compiled for the device, so that the CPU and
    the GPU run one copy of its logic.

    Every ``@njit`` function it calls is compiled for the device the same way
    (once each) and called in its place: a copy of the function whose
    globals (and closure) name those device functions.  The host function must take only
    scalars and arrays and allocate nothing; its module must hold no
    ``cuda`` name (numba's simulator swaps that name in a device function's
    globals on every call).  Global numpy arrays it reads become constant
    arrays on the device.
    """
    made = _ON_DEVICE.get(host)
    if made is None:
        fn = host.py_func
        callees = {}
        for name in fn.__code__.co_names:  # the functions it calls by their global names
            value = fn.__globals__.get(name)
            if isinstance(value, CPUDispatcher):
                callees[name] = device_function(value)
        cells = fn.__closure__ or ()  # and those it holds in a closure
        swapped = tuple(CellType(device_function(cell.cell_contents))
                        if isinstance(cell.cell_contents, CPUDispatcher) else cell
                        for cell in cells)
        if callees or swapped != cells:
            fn = FunctionType(fn.__code__, {**fn.__globals__, **callees}, fn.__name__,
                              fn.__defaults__, swapped or None)
        made = _ON_DEVICE[host] = cuda.jit(device=True)(fn)
    return made


#: The host kernels' own functions compiled for the device, so that every hash and n-gram
#: key is the CPU's by construction: splitmix64's finaliser, an FNV-1a step, a UTF-8 lead
#: byte's length, an n-gram's key from its prefix's (``key * golden + token_hash``).
finish = device_function(host_finish)
extend_key = device_function(host_extend_key)
fnv_step = device_function(host_fnv_step)
utf8_length = device_function(host_utf8_length)

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
