"""What ``pip install`` compiles ahead of time: plain BLEU's kernels as the extension
module ``fastbleu._native.compiled``, and the kernel cache's seed (:func:`build_seed`).

At install time, ``setup.py`` calls :func:`build`, which compiles the kernels
below from **this package's own source** with ``numba.pycc`` into an extension
module that needs numpy but not numba.  At run time :mod:`fastbleu._native`
calls them for inputs they fit (one piece of work; arrays of exactly these
types); everything else, and every kernel not listed here, is numba's JIT
compilation of the same functions, as before.  So the numbers have one
implementation: the functions are the same Python source, compiled by the
same numba and LLVM once ahead of time and once just in time
(tests/kernels/test_native.py holds the two against each other).

The module records :func:`fastbleu._native.source_digest` of the source it was
built from; a module built from other source (an edited checkout, another
numpy ABI) is not used.

Adding a kernel here is optional: a kernel that is not exported simply runs
through the JIT.  Exporting one means a line in ``EXPORTS`` with the exact
argument types the JIT gives it on its usual path, and a caller in
:mod:`fastbleu._native` that checks those types before the call (the compiled
module does not: a wrong dtype there is a crash, not an error).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import warnings
from pathlib import Path

from .. import _native
from . import seed
from .bleu.counting import chunk_statistics
from .bleu.formula import chunk_scores, bleu_from_row
from .text.tokenize import tokenize_chunk

_U8 = "uint8[::1]"
_U64 = "uint64[::1]"
_I64 = "int64[::1]"
_I64_2D = "int64[:, ::1]"
_F64 = "float64[::1]"
#: The formula's arguments after the row (``BLEUFormula.kernel_args``): max_order,
#: smooth code, smooth value, effective order, compensated sum, weights, ref_scale.
_FORMULA = f"int64, int64, float64, boolean, boolean, {_F64}, {_F64}, int64"
_FORMULA_ROWS = f"int64, int64, float64, boolean, boolean, {_F64}, int64"

#: Name in the compiled module -> (kernel, signature).
EXPORTS = {
    "tokenize_chunk": (tokenize_chunk,
                       f"void({_U8}, {_I64}, int64, {_U64}, {_I64}, {_I64}, int64, int64)"),
    "chunk_statistics": (chunk_statistics,
                         f"void({_U64}, {_I64}, {_I64}, {_U64}, {_I64_2D}, {_I64_2D}, "
                         f"int64, int64, int64, {_I64_2D}, int64, int64)"),
    "bleu_from_row": (bleu_from_row, f"UniTuple(float64, 2)({_I64}, {_FORMULA})"),
    "chunk_scores": (chunk_scores,
                     f"void({_I64_2D}, {_FORMULA_ROWS}, {_F64}, int64, int64)"),
}


def _identity(digest: int):
    def build_id():
        return digest

    return build_id


def build(target: Path | str, verbose: bool = False) -> Path:
    """Compile :data:`EXPORTS` into the extension module file ``target``.

    ``target`` is the full path the module is to have (e.g.
    ``.../fastbleu/_native/compiled.cpython-311-x86_64-linux-gnu.so``, as
    ``build_ext.get_ext_fullpath`` gives it).  Takes about ten seconds.
    """
    with warnings.catch_warnings():  # pycc is deprecated (numba 0.68 still ships it)
        warnings.simplefilter("ignore")
        from numba.pycc import CC

    target = Path(target)
    cc = CC(target.name.split(".")[0])
    cc.output_dir = str(target.parent)
    cc.output_file = target.name
    cc.verbose = verbose
    for name, (kernel, signature) in EXPORTS.items():
        cc.export(name, signature)(kernel.py_func)
    cc.export("build_id", "int64()")(_identity(_native.source_digest()))
    target.parent.mkdir(parents=True, exist_ok=True)
    cc.compile()
    return target


def build_or_warn(target: Path | str, compiler=None, verbose: bool = False) -> bool:
    """:func:`build`, or a warning on standard error and ``False`` if it fails.

    ``setup.py`` calls this: fastbleu installs and works without the compiled
    module.  ``compiler`` (a distutils ``CCompiler``, as ``build_ext`` has it)
    is first tried on a one-line C file, so that a machine without a working
    C compiler gives up at once rather than after numba's ten seconds.
    """
    target = Path(target)
    try:
        if compiler is not None:
            with tempfile.TemporaryDirectory() as folder:
                probe = Path(folder) / "probe.c"
                probe.write_text("int fastbleu_probe(void) { return 0; }\n")
                compiler.compile([str(probe)], output_dir=folder)
        build(target, verbose)
    except Exception as error:  # any failure: the JIT kernels will do
        target.unlink(missing_ok=True)
        print(f"warning: fastbleu's ahead-of-time kernels were not built "
              f"({type(error).__name__}: {error}); fastbleu works without them, "
              "compiling its kernels with numba on first use", file=sys.stderr)
        return False
    return True


# ---------------------------------------------------------------------------------------
# The kernel cache's seed (fastbleu._kernels.seed)
# ---------------------------------------------------------------------------------------


def build_seed(package_dir: Path, target_root: Path, work_root: Path, *,
          timeout: float = 1200.0) -> int:
    """Compile the seed of ``package_dir``'s kernels (:mod:`.seed`) into ``target_root``;
    the number of files.  Raises on failure (:func:`build_seed_or_warn` is what
    ``setup.py`` calls).

    The warm-up (:mod:`fastbleu._native.warmup`) runs in a child process with
    ``NUMBA_CACHE_DIR`` set to a fresh folder; its files, one folder per source
    folder, become ``target_root/<seed_name>/<folder_key>/``.  ``work_root`` keeps
    that result between builds (``pip install .`` then ``pip install -e .`` compile
    once): a finished seed of the same name there is reused.
    """
    from .cache import numba_cache_dir_folder, source_digest

    package_dir = Path(package_dir).resolve()
    digest = source_digest()
    name = seed.seed_name(digest)
    warmup = hashlib.sha1((package_dir / "_native" / "warmup.py").read_bytes()).hexdigest()
    finished = Path(work_root) / f"{name}-warmup-{warmup[:12]}"
    if not (finished / "complete").is_file():
        Path(work_root).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=work_root) as scratch:
            numba_dir = Path(scratch) / "numba"
            # This source tree first, then every folder this process imports from: pip's
            # isolated build environment adds its packages to sys.path, not to the
            # interpreter the child starts as.
            path = os.pathsep.join([str(package_dir.parent), *filter(None, sys.path)])
            environment = {**os.environ, "NUMBA_CACHE_DIR": str(numba_dir), seed.DISABLE: "1",
                           "PYTHONPATH": path, "PYTHONWARNINGS": "ignore"}
            environment.pop("XDG_CACHE_HOME", None)
            done = subprocess.run([sys.executable, "-m", "fastbleu._native.warmup"],
                                  cwd=scratch, env=environment, timeout=timeout,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            if done.returncode != 0:
                tail = done.stdout.decode(errors="replace").strip().splitlines()[-3:]
                raise RuntimeError(f"the warm-up exited {done.returncode}: {' / '.join(tail)}")
            staged = Path(scratch) / "seed"
            for source_dir in sorted({p.parent for p in package_dir.rglob("*.py")}):
                compiled = numba_cache_dir_folder(numba_dir, source_dir)
                if compiled.is_dir():
                    shutil.copytree(compiled, staged / seed.folder_key(source_dir, package_dir),
                                    ignore=shutil.ignore_patterns("*.tmp.*"))
            (staged / "complete").write_text(f"{name}\n")
            shutil.rmtree(finished, ignore_errors=True)
            os.replace(staged, finished)
        for old in Path(work_root).iterdir():  # seeds of earlier source: never used again
            if old.name != finished.name and not old.name.startswith("tmp"):
                shutil.rmtree(old, ignore_errors=True)
    target = Path(target_root) / name
    shutil.rmtree(Path(target_root), ignore_errors=True)
    shutil.copytree(finished, target, ignore=shutil.ignore_patterns("complete"))
    return sum(1 for p in target.rglob("*") if p.is_file())


def build_seed_or_warn(package_dir: Path, target_root: Path, work_root: Path) -> bool:
    """:func:`build_seed`, or a warning line and ``False``: the install never fails for it, and
    without a seed the kernels are compiled on first use."""
    try:
        count = build_seed(package_dir, target_root, work_root)
    except Exception as error:  # any failure: the JIT compiles on first use
        print(f"warning: fastbleu's compiled kernel cache was not built "
              f"({type(error).__name__}: {error}); fastbleu works without it, compiling "
              "its kernels on first use", file=sys.stderr)
        return False
    print(f"fastbleu: {count} compiled kernel files kept for first runs", file=sys.stderr)
    return True
