"""The device the GPU tests run on: a real GPU, or numba's CUDA simulator in a subprocess.

``test_simulator.py`` runs this folder's tests again in a child process with
``NUMBA_ENABLE_CUDASIM=1`` (set before numba is imported, and only there, so
the rest of the suite never sees it).  In the parent process without a GPU,
:data:`skip_without_device` skips them (cleanly, with the loader's one-line
reason).
"""

from __future__ import annotations

import os
import sys

import numpy as np
import pytest

SIMULATED = os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")
if SIMULATED:
    # numba's simulator swaps the ``cuda`` module in a device function's globals on every
    # call, iterating over those globals while other simulated threads may add to them
    # ("dictionary changed size during iteration", seen once in CI): iterate a snapshot.
    from contextlib import contextmanager

    from numba.cuda.simulator import kernel as _sim_kernel

    @contextmanager
    def _swapped_cuda_module(fn, fake_cuda_module):
        from numba import cuda

        fn_globs = fn.__globals__
        orig = {k: v for k, v in list(fn_globs.items()) if v is cuda}
        fn_globs.update({k: fake_cuda_module for k in orig})
        try:
            yield
        finally:
            fn_globs.update(orig)

    _sim_kernel.swapped_cuda_module = _swapped_cuda_module

    # The simulator runs a block's threads as Python threads that meet at every
    # syncthreads; a short switch interval hands the GIL over at once (10x faster).
    sys.setswitchinterval(1e-6)
    # numba's built-in simulator creates a shared array on its first request without a
    # lock, so two threads can get two arrays (numba-cuda fixed this, #690); serialise it.
    import threading

    from numba.cuda.simulator import kernelapi

    _original = kernelapi.FakeCUDAShared.array
    _lock = threading.Lock()

    def _locked_array(self, shape, dtype):
        if shape == 0:  # dynamic shared memory: no allocation to race on
            return _original(self, shape, dtype)
        frame = sys._getframe(1)  # the kernel's line names the array, as in numba
        caller = (frame.f_code.co_filename, frame.f_lineno)
        with _lock:
            array = self._allocations.get(caller)
            if array is None:
                array = np.empty(shape, np.dtype(str(dtype)) if not isinstance(dtype, type)
                                 else dtype)
                self._allocations[caller] = array
        return array

    kernelapi.FakeCUDAShared.array = _locked_array


def device_reason() -> str | None:
    """None if kernels can run here (GPU or simulator), else why not (one line)."""
    try:
        from fastbleu._kernels.cuda.loader import cuda  # noqa: F401
    except ImportError as error:  # GPUUnavailable
        return str(error)
    return None


REASON = device_reason()
skip_without_device = pytest.mark.skipif(
    REASON is not None, reason=f"no GPU here ({REASON}); test_gpu_simulator.py runs these on the "
    "CUDA simulator")

#: Small blocks and one block per launch: every kernel's loops run, and the simulator
#: (a Python thread per GPU thread) stays fast.
if SIMULATED:
    from fastbleu.gpu import KernelLimits

    SHORT = KernelLimits(group=2, block=4, grid=1)
    SHARED = KernelLimits(short_tokens=0, shared_slots=64, group=2, block=4, grid=1)
    GLOBAL = KernelLimits(short_tokens=0, shared_slots=0, group=2, block=3, grid=1, collide=True)
    MIXED = KernelLimits(short_tokens=12, shared_slots=64, group=3, block=5, grid=2)
    # One segment a block at a time (what long segments get), and all four kinds of work.
    ALONE = KernelLimits(short_tokens=12, shared_slots=64, block=5, grid=2, groups=1)
    LIMITS = [SHORT, SHARED, GLOBAL, MIXED, ALONE]
else:
    from fastbleu.gpu import KernelLimits

    LIMITS = [KernelLimits(), KernelLimits(short_tokens=0),
              KernelLimits(short_tokens=0, shared_slots=0, collide=True),
              KernelLimits(short_tokens=12, shared_slots=64),
              KernelLimits(short_tokens=12, shared_slots=64, groups=1)]


def host(array) -> np.ndarray:
    """A device result as a numpy array."""
    return array.copy_to_host() if hasattr(array, "copy_to_host") else np.asarray(array)
