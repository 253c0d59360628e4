"""Build fastbleu's ahead-of-time kernels, ``fastbleu._native.compiled``, when it can.

The metadata is in ``pyproject.toml``; this file only adds one optional
extension module.  It is compiled by numba (``numba.pycc``, through
:func:`fastbleu._kernels.aot.build`) from the package's own kernel source,
which takes about ten seconds and needs a C compiler.  Without one, or if the
build fails for any other reason, the install still succeeds with a warning,
and fastbleu compiles the same kernels with numba's JIT on first use instead
(as it does for every kernel that is not built ahead of time).
"""

import sys
import tempfile
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
NAME = "fastbleu._native.compiled"


class BuildKernels(build_ext):
    """``build_ext`` that compiles the kernels with numba, never failing the install."""

    def build_extension(self, ext):
        if ext.name != NAME:
            return super().build_extension(ext)
        target = Path(self.get_ext_fullpath(ext.name))
        try:
            self._check_compiler()
            sys.path.insert(0, str(ROOT))
            try:
                from fastbleu._kernels.aot import build
                build(target, verbose=self.verbose > 1)
            finally:
                sys.path.remove(str(ROOT))
        except Exception as error:  # any failure: the JIT kernels will do
            target.unlink(missing_ok=True)
            print(f"warning: fastbleu's ahead-of-time kernels were not built "
                  f"({type(error).__name__}: {error}); fastbleu works without them, "
                  "compiling its kernels with numba on first use", file=sys.stderr)

    def _check_compiler(self):
        """Fail in a second, not after numba's ten seconds, when there is no C compiler."""
        with tempfile.TemporaryDirectory() as folder:
            probe = Path(folder) / "probe.c"
            probe.write_text("int fastbleu_probe(void) { return 0; }\n")
            self.compiler.compile([str(probe)], output_dir=folder)


setup(ext_modules=[Extension(NAME, sources=[], optional=True)],
      cmdclass={"build_ext": BuildKernels})
