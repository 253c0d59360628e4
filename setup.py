"""Build fastbleu's ahead-of-time kernels, ``fastbleu._native.compiled``, when it can.

The metadata is in ``pyproject.toml``; this file only adds one optional
extension module.  It is compiled by numba (``numba.pycc``, through
:func:`fastbleu._kernels.aot.build_or_warn`) from the package's own kernel
source, which takes about ten seconds and needs a C compiler.  Without one, or
if the build fails for any other reason, the install still succeeds with a
warning, and fastbleu compiles the same kernels with numba's JIT on first use
instead (as it does for every kernel that is not built ahead of time).
"""

import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
NAME = "fastbleu._native.compiled"


class BuildKernels(build_ext):
    """``build_ext`` that compiles the kernels with numba and never fails the install."""

    def build_extension(self, ext):
        if ext.name != NAME:
            return super().build_extension(ext)
        target = Path(self.get_ext_fullpath(ext.name))
        sys.path.insert(0, str(ROOT))  # this source tree's fastbleu, not an installed one
        try:
            from fastbleu._kernels.aot import build_or_warn
        except Exception as error:  # numba missing (no build isolation), a broken tree
            print(f"warning: fastbleu's ahead-of-time kernels were not built "
                  f"({type(error).__name__}: {error}); fastbleu works without them",
                  file=sys.stderr)
            return
        finally:
            sys.path.remove(str(ROOT))
        build_or_warn(target, self.compiler, verbose=self.verbose > 1)


setup(ext_modules=[Extension(NAME, sources=[], optional=True)],
      cmdclass={"build_ext": BuildKernels})
