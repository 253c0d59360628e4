"""Build fastbleu's ahead-of-time kernels when it can: ``fastbleu._native.compiled``
and the kernel cache's seed ``fastbleu/_native/kernel_cache``.

The metadata is in ``pyproject.toml``; this file only adds one optional
extension module and, beside it, the seed.  The module is compiled by numba
(``numba.pycc``, through :func:`fastbleu._kernels.aot.build_or_warn`) from the
package's own kernel source, which takes about ten seconds and needs a C
compiler.  The seed is what numba's JIT caches while every common path runs
once on tiny inputs (:mod:`fastbleu._kernels.seed`, built by
:func:`fastbleu._kernels.aot.build_seed_or_warn`, about a minute on 2 cores),
so that no user's first run waits for a compile.  If either build fails, the install still succeeds with a warning, and fastbleu compiles the
same kernels with numba's JIT on first use instead.
"""

import os
import shutil
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
NAME = "fastbleu._native.compiled"
#: The seed's folder beside the compiled module (fastbleu._kernels.seed.SEED_DIR).
SEED = "kernel_cache"


class BuildKernels(build_ext):
    """``build_ext`` that compiles the kernels with numba and never fails the install."""

    def build_extension(self, ext):
        if ext.name != NAME:
            return super().build_extension(ext)
        target = Path(self.get_ext_fullpath(ext.name))
        sys.path.insert(0, str(ROOT))  # this source tree's fastbleu, not an installed one
        try:
            from fastbleu._kernels import aot
        except Exception as error:  # numba missing (no build isolation), a broken tree
            print(f"warning: fastbleu's ahead-of-time kernels were not built "
                  f"({type(error).__name__}: {error}); fastbleu works without them",
                  file=sys.stderr)
            return
        finally:
            sys.path.remove(str(ROOT))
        aot.build_or_warn(target, self.compiler, verbose=self.verbose > 1)
        # The kernel cache's seed: every other kernel, compiled once here rather than on
        # each user's first run; kept in build/ so that `pip install .` and then
        # `pip install -e .` compile it once.
        work = ROOT / "build" if os.access(ROOT, os.W_OK) else Path(self.build_temp)
        if aot.build_seed_or_warn(ROOT / "fastbleu", target.parent / SEED,
                              work.resolve() / "kernel-cache"):
            self._seed = target.parent / SEED

    def run(self):
        self._seed = None
        super().run()
        if self.inplace and self._seed is not None:  # an editable install: into the tree
            inplace = ROOT / "fastbleu" / "_native" / SEED
            if self._seed.resolve() != inplace.resolve():
                shutil.rmtree(inplace, ignore_errors=True)
                shutil.copytree(self._seed, inplace)


setup(ext_modules=[Extension(NAME, sources=[], optional=True)],
      cmdclass={"build_ext": BuildKernels})
