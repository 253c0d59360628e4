"""Every CUDA kernel compiles to PTX with numba-cuda's compiler (skipped where it is absent)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_device import SIMULATED

HERE = Path(__file__).resolve().parent


@pytest.mark.skipif(SIMULATED or importlib.util.find_spec("numba_cuda") is None,
                    reason="needs numba-cuda and the CUDA compiler libraries (fastbleu[gpu])")
def test_every_kernel_compiles_to_ptx():
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_ENABLE_CUDASIM"}
    result = subprocess.run([sys.executable, str(HERE / "compile_kernels.py")], env=env,
                            capture_output=True, text=True, timeout=600)
    output = result.stdout + result.stderr
    if "Failure finding" in output or "NVVM" in output and "ALL OK" not in output:
        pytest.skip("the CUDA compiler libraries (NVVM, NVRTC) are not installed")
    assert result.returncode == 0 and "ALL OK" in output, output[-4000:]
