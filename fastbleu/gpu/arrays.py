"""CUDA arrays of other libraries as numba device arrays, and results handed back in kind.

Inputs are read where they are: an object with ``__cuda_array_interface__``
(torch, CuPy, numba, JAX on a GPU) is viewed by numba without a copy; one
with only DLPack goes through CuPy or torch, whichever is installed; a numpy
array is copied to the device.  Scratch and results are allocated by the
library the input came from (torch's or CuPy's caching allocator: no
``cudaMalloc`` per call), kernels run on that library's current stream, and
results are returned as that library's arrays (no copy); otherwise as numba
device arrays, which every CUDA library reads through
``__cuda_array_interface__``.

Nothing here imports numba.cuda before it is needed: :func:`on_device`
looks only at the object.
"""

from __future__ import annotations

import numpy as np

_CUDA_DEVICES = (2, 13)  # DLPack's kDLCUDA, kDLCUDAManaged
_STREAMS: dict = {}


def _library(value) -> str:
    return type(value).__module__.split(".")[0]


def on_device(value) -> bool:
    """Whether ``value`` is an array in CUDA device memory (or :class:`DeviceIds`).

    Cheap: it asks the object (DLPack's ``__dlpack_device__``, else the
    presence of ``__cuda_array_interface__``) and imports nothing.
    """
    from .inputs import DeviceIds

    if isinstance(value, DeviceIds):
        return True
    if isinstance(value, (np.ndarray, str, bytes, list, tuple)) or value is None:
        return False
    if hasattr(type(value), "__dlpack_device__"):
        try:
            return int(value.__dlpack_device__()[0]) in _CUDA_DEVICES
        except Exception:  # a library that raises for some arrays: not ours to judge
            pass
    try:
        return hasattr(value, "__cuda_array_interface__")
    except Exception:  # torch raises RuntimeError for tensors that require grad
        return False


def to_host(array) -> np.ndarray:
    """A (small) device array of any library as a numpy array on the host."""
    if hasattr(array, "cpu"):  # torch
        return array.cpu().numpy()
    if hasattr(array, "get"):  # CuPy
        return array.get()
    if hasattr(array, "copy_to_host"):  # numba
        return array.copy_to_host()
    return np.asarray(array)  # JAX and others that numpy reads


def threads() -> int:
    """Threads per block of the row kernels: 256, or 8 on the simulator (a Python thread
    each)."""
    from .._kernels.cuda.loader import simulated

    return 8 if simulated() else 256


def blocks(items: int) -> int:
    """Blocks of :func:`threads` threads for ``items`` items of a grid-stride kernel: enough
    for one item a thread, at most 65,536 (2 on the simulator, where a block costs ~0.1 s)."""
    from .._kernels.cuda.loader import simulated

    return max(1, min(2 if simulated() else 1 << 16, -(-items // threads())))


class Context:
    """Where a call's kernels run and who allocates: the library of its first CUDA input.

    Attributes
    ----------
    cuda : module
        numba.cuda.
    library : {"torch", "cupy", None}
    stream : numba stream
        That library's current stream (the default stream otherwise).
    """

    def __init__(self, cuda, template=None):
        self.cuda = cuda
        self.keep = []  # scratch owners of a call, alive until its kernels are queued
        self.library = None
        self.device = None
        # numba's built-in simulator has neither default nor external streams.
        self.stream = cuda.default_stream() if hasattr(cuda, "default_stream") else cuda.stream()
        module = _library(template) if template is not None else None
        if module == "torch" and getattr(template, "is_cuda", False):
            import torch

            self.library, self.device = "torch", template.device
            self.stream = self._external(torch.cuda.current_stream(template.device).cuda_stream)
        elif module == "cupy":
            import cupy

            self.library, self.device = "cupy", template.device
            self.stream = self._external(cupy.cuda.get_current_stream().ptr)

    def _external(self, pointer: int):
        if not pointer:
            return self.cuda.default_stream()
        stream = _STREAMS.get(pointer)
        if stream is None:  # one numba object per stream handle, made once
            stream = _STREAMS[pointer] = self.cuda.external_stream(pointer)
        return stream

    def view(self, value, name: str):
        """``value`` as a numba device array (no copy for CUDA arrays; numpy is copied)."""
        cuda = self.cuda
        if _library(value) == "numba" and hasattr(value, "copy_to_host"):
            return value  # numba's own device array (the simulator's too)
        if hasattr(cuda, "is_cuda_array") and cuda.is_cuda_array(value):
            # torch and CuPy arrays are read on their library's current stream (ours); any
            # other producer's stream is waited for, as its __cuda_array_interface__ asks.
            return cuda.as_cuda_array(value, sync=self.library is None)
        if isinstance(value, np.ndarray):
            return cuda.to_device(np.ascontiguousarray(value), stream=self.stream)
        if hasattr(value, "__dlpack__"):
            for module in ("cupy", "torch"):
                try:
                    library = __import__(module)
                except ImportError:
                    continue
                return cuda.as_cuda_array(library.from_dlpack(value), sync=False)
            raise TypeError(f"{name} is a DLPack array without __cuda_array_interface__; "
                            "install CuPy or torch to read it, or pass a CuPy/torch array")
        raise TypeError(f"{name} must be a CUDA array (torch, CuPy, JAX, numba: "
                        "__cuda_array_interface__ or DLPack) or a numpy array, got "
                        f"{type(value).__name__}")

    def empty(self, shape, dtype):
        """An uninitialised device array: ``(numba view, the owning object)``."""
        dtype = np.dtype(dtype)
        if self.library == "torch":
            import torch

            # uint64 scratch is allocated as int64 (not every torch exports uint64) and viewed.
            kind = np.dtype(np.int64) if dtype == np.uint64 else dtype
            owner = torch.empty(shape, dtype=getattr(torch, kind.name), device=self.device)
            array = self.cuda.as_cuda_array(owner, sync=False)
            return (array.view(np.uint64) if dtype == np.uint64 else array), owner
        if self.library == "cupy":
            import cupy

            with self.device:
                owner = cupy.empty(shape, dtype=dtype)
            return self.cuda.as_cuda_array(owner, sync=False), owner
        array = self.cuda.device_array(shape, dtype=dtype, stream=self.stream)
        return array, array

    def full(self, shape, dtype, value):
        """A device array of ``value``: ``(numba view, owner)``."""
        array, owner = self.empty(shape, dtype)
        if array.size:
            from .._kernels.cuda.reduce import fill

            flat = array.reshape(array.size)
            fill[blocks(array.size), threads(), self.stream](flat, value)
        return array, owner

    def host(self, array) -> np.ndarray:
        """A small device array's values on the host (waits for the stream)."""
        values = array.copy_to_host(stream=self.stream)
        self.stream.synchronize()
        return values

    def result(self, array, owner):
        """A result in the caller's library: its own tensor/array, or the numba array."""
        return owner if self.library is not None else array
