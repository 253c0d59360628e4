"""What the GPU path checks before any kernel: inputs, limits, and a CUDA stack that fails.

These run in the main test process (no simulator, usually no GPU).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gpu_device import REASON, SIMULATED

from fastbleu import gpu

ROOT = Path(__file__).resolve().parent.parent.parent
#: A child process without the simulator, importing this checkout's fastbleu.
ENV = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
ENV["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])


class FakeCudaArray:
    """An object that says it is in device memory, as torch/CuPy arrays do."""

    def __init__(self, shape=(2, 3), typestr="<i8"):
        self.__cuda_array_interface__ = {"shape": shape, "typestr": typestr, "data": (0, False),
                                         "version": 3, "strides": None}


class FakeDLPack:
    def __init__(self, device):
        self.device = device

    def __dlpack_device__(self):
        return self.device


def test_on_device_looks_at_the_object_only():
    assert gpu.on_device(FakeCudaArray())
    assert gpu.on_device(FakeDLPack((2, 0)))  # kDLCUDA
    assert gpu.on_device(gpu.DeviceIds(FakeCudaArray()))
    for value in (np.zeros((2, 3)), [[1, 2]], None, "text", FakeDLPack((1, 0)), object()):
        assert not gpu.on_device(value)


def test_on_device_imports_no_cuda():
    code = ("import sys, numpy as np; from fastbleu import gpu; gpu.on_device(np.zeros(3)); "
            "print('numba.cuda' in sys.modules, 'numba' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, env=ENV, cwd=ROOT).stdout
    assert out.split() == ["False", "False"]


@pytest.mark.parametrize("values, kwargs, message", [
    (FakeCudaArray((2, 3), "<f4"), {}, "integer token ids"),
    (FakeCudaArray((6,)), {}, "2-D"),
    (FakeCudaArray((2, 3)), {"offsets": np.array([0, 3])}, "1-D with offsets"),
    (FakeCudaArray((6,)), {"offsets": np.array([[0, 3]])}, "one more entry"),
    (FakeCudaArray((2, 3)), {"valid": np.array([True])}, "one entry per segment"),
    (FakeCudaArray((2, 3)), {"valid": np.array([1, 0])}, "bools"),
    (FakeCudaArray((2, 3)), {"pad_id": True}, "pad_id must be an int"),
    (FakeCudaArray((2, 3)), {"eos_id": 2 ** 63}, "eos_id must fit"),
    ("ids", {}, "must be an array"),
])
def test_device_ids_refuse(values, kwargs, message):
    with pytest.raises((TypeError, ValueError), match=message):
        gpu.DeviceIds(values, **kwargs)


@pytest.mark.parametrize("kwargs", [{"short_tokens": 300}, {"shared_slots": 100},
                                    {"shared_slots": 4096}, {"group": 0}, {"block": 2048},
                                    {"grid": 0}])
def test_kernel_limits_refuse(kwargs):
    with pytest.raises(ValueError):
        gpu.KernelLimits(**kwargs)


@pytest.mark.skipif(REASON is None or SIMULATED, reason="a CUDA device is available here")
def test_no_gpu_is_one_line_naming_the_way_out():
    with pytest.raises(gpu.GPUUnavailable) as error:
        gpu.bleu_statistics(np.array([[1, 2]]), np.array([[1, 2]]))
    message = str(error.value)
    assert "\n" not in message and ("NUMBA_ENABLE_CUDASIM" in message or "pip install" in message)
    assert error.value.__context__ is None or error.value.__suppress_context__


def test_failing_cuda_import_is_one_line():
    # numba-cuda <= 0.30.4 under numpy >= 2.5 fails on np.row_stack; any import failure of
    # the CUDA stack becomes one line that names a fix, without numba's traceback.
    code = """
import sys, types
broken = types.ModuleType("numba.cuda")
def __getattr__(name):
    raise AttributeError("module 'numpy' has no attribute 'row_stack'")
broken.__getattr__ = __getattr__
import numba
sys.modules["numba.cuda"] = broken
numba.cuda = broken
from fastbleu import gpu
import numpy as np
try:
    gpu.bleu_statistics(np.array([[1]]), np.array([[1]]))
except gpu.GPUUnavailable as error:
    print(error)
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=ENV, cwd=ROOT, check=True)
    assert out.stderr == ""
    line, = out.stdout.splitlines()
    assert "row_stack" in line and "numpy<2.5" in line
