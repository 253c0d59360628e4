"""Run the GPU tests of this folder on numba's CUDA simulator, in a child process.

``NUMBA_ENABLE_CUDASIM`` must be set before numba is imported, and must not
reach the rest of the suite, so the simulated run gets a process of its own.
numba's built-in CUDA target (numba >= 0.59) ships the simulator; nothing
beyond ``pip install -e '.[test]'`` is needed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from gpu_device import SIMULATED

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent

pytestmark = pytest.mark.slow  # the CUDA simulator in a child process: about a minute


@pytest.mark.skipif(SIMULATED, reason="this is the simulated run")
def test_gpu_tests_pass_on_the_simulator():
    env = dict(os.environ, NUMBA_ENABLE_CUDASIM="1")
    files = sorted(str(p) for p in HERE.glob("test_gpu_*.py") if p.name != Path(__file__).name)
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
         "-W", "ignore::RuntimeWarning", *files],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)
    output = result.stdout + result.stderr
    assert result.returncode == 0, output[-6000:]
    assert " passed" in output.splitlines()[-1], output[-2000:]
