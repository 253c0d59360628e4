"""The GPU kernels are cached under the same rules as the CPU's.

numba-cuda (what ``fastbleu[gpu]`` installs) keeps its own copy of numba's
caching classes; without :func:`fastbleu._kernels.cache.register_cuda` the
kernels of :mod:`fastbleu._kernels.cuda` (``cuda.jit(cache=True)``) would be
cached where it chooses: the ``__pycache__`` beside the installed source,
``~/.cache/numba`` or ``$NUMBA_CACHE_DIR`` as given, a folder other users may
write, none of it checked.  The check runs in a child process on numba's CUDA
simulator (no GPU needed), with whichever CUDA target is installed: numba's
built-in one here, numba-cuda where the ``gpu`` extra is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

CHILD = r"""
import json, sys, tempfile
from pathlib import Path
from fastbleu._kernels import cache
from fastbleu._kernels.cuda import loader, counting
try:
    from numba.cuda.core import caching as module  # numba-cuda's own copy
except ImportError:
    from numba.core import caching as module  # numba's built-in CUDA target
impl = getattr(module, "CacheImpl", None) or module._CacheImpl
first = impl._locator_classes[0]
py_func = getattr(counting.bleu_rows, "py_func", None) or counting.bleu_rows.fn
locator = first.from_function(py_func, counting.__file__)
path = locator.get_cache_path()
other = tempfile.mkdtemp()
print(json.dumps({
    "module": module.__name__,
    "first": first.__name__,
    "path": path,
    "guarded_class": type(module.IndexDataCacheFile(path, "k", ("sha1", "x"))).__name__,
    "guarded_reads": [getattr(type(module.IndexDataCacheFile(path, "k", ("sha1", "x"))), name)
                      .__module__ for name in ("load", "_load_index", "_load_data", "save")],
    "other_class": type(module.IndexDataCacheFile(other, "k", ("sha1", "x"))).__module__,
    "kernel_folder_mode": oct(Path(path).stat().st_mode & 0o777) if Path(path).is_dir() else None,
}))
"""


def _child(tmp_path, **env):
    environment = {k: v for k, v in os.environ.items()
                   if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME")}
    environment.update(NUMBA_ENABLE_CUDASIM="1", XDG_CACHE_HOME=str(tmp_path / "xdg"),
                       PYTHONPATH=str(ROOT), **env)
    done = subprocess.run([sys.executable, "-c", CHILD], env=environment, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_cuda_kernels_take_fastbleus_locator_and_guarded_files(tmp_path):
    found = _child(tmp_path)
    assert found["first"] == "FastbleuCacheLocator"
    assert found["guarded_class"] == "GuardedCacheFiles"
    assert set(found["guarded_reads"]) == {"fastbleu._kernels.cache_files"}  # checked reads
    assert Path(found["path"]).is_relative_to(tmp_path / "xdg" / "fastbleu")
    assert Path(found["path"]).name.startswith("src-")  # one folder per kernel source
    assert found["kernel_folder_mode"] == "0o700"
    # any other folder keeps the CUDA target's own class, unchanged
    assert found["other_class"] == found["module"]


def test_a_cache_dir_others_may_write_is_not_used_for_cuda_kernels(tmp_path):
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    found = _child(tmp_path, NUMBA_CACHE_DIR=str(shared))
    assert not Path(found["path"]).is_relative_to(shared)
    assert Path(found["path"]).is_relative_to(tmp_path / "xdg" / "fastbleu")
    assert list(shared.iterdir()) == []  # nothing written there either
