"""The GPU path's one exception, importable without numba."""


class GPUUnavailable(ImportError):
    """numba's CUDA target cannot run here; the message (one line) says why and what to do."""
