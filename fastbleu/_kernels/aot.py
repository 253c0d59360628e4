"""The ahead-of-time build of plain BLEU's kernels: ``fastbleu._native.compiled``.

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

import sys
import tempfile
import warnings
from pathlib import Path

from .. import _native
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
