"""numba's CUDA target, imported once and checked: a failure is one line that names the fix.

Every kernel module of :mod:`fastbleu._kernels.cuda` takes ``cuda`` from here,
so that nothing else in fastbleu imports ``numba.cuda`` (the CPU path never
does).  Two known failures are turned into :class:`GPUUnavailable`, an
``ImportError`` whose message is one line and whose traceback does not chain
numba's:

* numba-cuda 0.30.4 and older (the latest release when this was written;
  the project is in maintenance mode and the guard, NVIDIA/numba-cuda#916,
  was not merged) register an overload for ``np.row_stack``, which numpy 2.5
  removed, when the CUDA target is first set up.  The loader sets the target
  up right away and, if that fails for this reason, sets it up again with
  ``numpy.row_stack`` bound to ``numpy.vstack`` (what it was before numpy 2.5)
  for the duration of that import only; the alias is removed afterwards.  If
  even that fails, the message says to install ``numpy<2.5``.
* No CUDA driver or GPU: the message says so, and how to run the kernels on
  numba's CUDA simulator instead (``NUMBA_ENABLE_CUDASIM=1``, set before
  numba is imported; slow, for tests).
"""

from __future__ import annotations

import os

import numpy as np

from ...gpu.errors import GPUUnavailable
from ..cache import register_cuda

_ROW_STACK_FIX = ("numba-cuda <= 0.30.4 does not load with numpy >= 2.5 (np.row_stack is "
                  "gone): pip install 'numpy<2.5', or pip uninstall numba-cuda to use numba's "
                  "built-in CUDA target (numba >= 0.67)")


def simulated() -> bool:
    """Whether numba's CUDA simulator is on (``NUMBA_ENABLE_CUDASIM=1``)."""
    return os.environ.get("NUMBA_ENABLE_CUDASIM", "0") not in ("", "0")


def _set_up_target() -> None:
    """Import the modules of numba-cuda's target that register numpy overloads (they are
    otherwise imported at the first compilation, where a failure would be far harder to read)."""
    import numba.cuda.np.arraymath  # noqa: F401
    import numba.cuda.np.arrayobj  # noqa: F401
    import numba.cuda.np.npyimpl  # noqa: F401


def _numba_cuda_target(cuda) -> None:
    if getattr(cuda, "implementation", "Built-in") != "NVIDIA" or simulated():
        return  # numba's built-in target (numba >= 0.67 guards np.row_stack itself)
    try:
        _set_up_target()
        return
    except AttributeError as error:
        if "row_stack" not in str(error) or hasattr(np, "row_stack"):
            raise
    np.row_stack = np.vstack  # numpy < 2.5's alias, for numba-cuda's import only
    try:
        _set_up_target()
    except Exception:
        raise GPUUnavailable(_ROW_STACK_FIX) from None
    finally:
        del np.row_stack


def load():
    """``numba.cuda``, checked.

    Raises
    ------
    GPUUnavailable
        If numba's CUDA target does not import or finds no GPU (one line).
    """
    try:
        from numba import cuda

        _numba_cuda_target(cuda)
        available = simulated() or cuda.is_available()
    except GPUUnavailable:
        raise
    except Exception as error:  # any import failure of a third-party stack
        detail = f"{type(error).__name__}: {error}".splitlines()[0]
        fix = _ROW_STACK_FIX if "row_stack" in detail else \
            "pip install 'fastbleu[gpu]' (numba-cuda with the CUDA 12 libraries)"
        raise GPUUnavailable(f"numba's CUDA target failed to import ({detail}); {fix}") from None
    if not available:
        raise GPUUnavailable("no CUDA GPU is available (numba.cuda.is_available() is False: no "
                             "driver or no device); set NUMBA_ENABLE_CUDASIM=1 before importing "
                             "numba to run fastbleu.gpu on the CPU simulator (slow, for tests)")
    return cuda


def _cache_option(jit) -> dict:
    """``{"cache": True}`` where this numba's ``cuda.jit`` takes ``cache`` (numba >= 0.57,
    numba-cuda, the simulator), else nothing: kernels are then compiled once a process."""
    import inspect

    try:
        return {"cache": True} if "cache" in inspect.signature(jit).parameters else {}
    except (TypeError, ValueError):
        return {}


cuda = load()
# numba-cuda caches kernels with its own copy of numba's caching classes: fastbleu's
# locator and guarded files go there too, before any kernel module defines a kernel.
register_cuda()
#: ``cuda.jit(**CACHED)``: the kernels' compiled code kept on disk where numba can.
CACHED = _cache_option(cuda.jit)
