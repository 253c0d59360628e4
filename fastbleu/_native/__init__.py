"""Plain BLEU's kernels without starting numba, when an ahead-of-time build is installed.

Importing numba takes about 0.3 s and loading its first cached kernel about as
long again, more than sacrebleu needs to score a 2,000-line file.  So the
kernels of plain BLEU on text (13a/none/char tokenizing, counting, the
formula) are also compiled when fastbleu is installed (``setup.py``,
:mod:`fastbleu._kernels.aot`) into the extension module
``fastbleu._native.compiled``, from the same Python source; the functions
here call that module when

* it is installed, was built from exactly this source and numpy ABI
  (:func:`source_digest`), and ``FASTBLEU_NO_AOT`` is not set;
* the work is one piece: fewer than ``2 * MIN_CHUNK`` segments, which the JIT
  kernels would also run as one piece in the calling thread, or a whole input of
  one batch (up to :data:`SERIAL_LIMIT` segments) in the main thread (the compiled
  module holds the GIL, so it does not take work from the thread pool);
* every array has exactly the dtype, dimensions and layout of the compiled
  signature (the compiled module does not check them), every number the
  exact type (a float32 ``smooth_value`` would get a float32 JIT kernel).

Anything else goes to numba's JIT kernels of :mod:`fastbleu._kernels`, which
are imported then and only then.  Either way the numbers are those of one
implementation; ``tests/kernels/test_native.py`` holds the two builds against each other.
"""

from __future__ import annotations

import hashlib
import os
import threading
from importlib import import_module
from pathlib import Path

import numpy as np

from .codes import (LARGE_ABOVE, MIN_CHUNK, REF_CLOSEST, TOKENIZE_13A, TOKENIZE_CHAR,
                    TOKENIZE_NONE)

#: The files (relative to the package) the compiled module is built from.
SOURCES = ("_native/codes.py", "_kernels/aot.py", "_kernels/text/hashing.py",
           "_kernels/text/tokenize.py", "_kernels/text/tokenize_13a.py",
           "_kernels/text/tokenize_flat.py", "_kernels/text/tokenize_unicode.py",
           "_kernels/text/unicode_classes.py", "_kernels/bleu/counting.py",
           "_kernels/bleu/formula.py")
PACKAGE = Path(__file__).resolve().parent.parent
#: ``FASTBLEU_NO_AOT=1``: never use the compiled module (benchmarks, tests of the fallback).
DISABLE = "FASTBLEU_NO_AOT"

#: Segments the compiled module takes at once from the main thread: the batch
#: pipeline's batch (``fastbleu.statistics.tokens.KERNEL_BATCH_SIZE``), so that a whole
#: input of one batch never starts numba (see :func:`_one_piece`).
SERIAL_LIMIT = 1 << 14
_TOKENIZERS = (TOKENIZE_NONE, TOKENIZE_13A, TOKENIZE_CHAR)
_UNSET = object()
_module = _UNSET
_status = "not loaded yet"
_calls = {"tokenize_chunk": 0, "chunk_statistics": 0, "bleu_from_row": 0, "chunk_scores": 0}


def source_digest() -> int:
    """A signed 64-bit digest of :data:`SOURCES` and numpy's major version."""
    digest = hashlib.sha256(f"numpy {np.__version__.split('.')[0]}".encode())
    for name in SOURCES:
        digest.update(b"\0" + name.encode() + b"\0")
        digest.update((PACKAGE / name).read_bytes())
    return int.from_bytes(digest.digest()[:8], "little", signed=True)


def _load():
    global _status
    if os.environ.get(DISABLE, "") not in ("", "0"):
        _status = f"disabled by {DISABLE}"
        return None
    try:
        module = import_module(".compiled", __name__)
    except ImportError as error:
        _status = f"not built ({error})"
        return None
    try:
        built_from = module.build_id()
        current = source_digest()
    except (AttributeError, OSError) as error:
        _status = f"unusable ({error})"
        return None
    if built_from != current:
        _status = "built from other source; the JIT kernels are used"
        return None
    _status = "in use"
    return module


def compiled_module():
    """The compiled module if it may be used in this process, else None (decided once)."""
    global _module
    if _module is _UNSET:
        _module = _load()
    return _module


def report() -> dict:
    """Whether the compiled module is used, why not, and how often each kernel ran."""
    compiled_module()
    return {"status": _status, "calls": dict(_calls)}


def _array(a, dtype, ndim: int, out: bool = False) -> bool:
    return (type(a) is np.ndarray and a.dtype == dtype and a.ndim == ndim
            and a.flags.c_contiguous and a.flags.aligned and (a.flags.writeable or not out))


def _int(x) -> bool:
    return type(x) is int or type(x) is np.int64


def _formula_args(max_order, smooth, smooth_value, effective_order, compensated,
                  weights, ref_scale) -> bool:
    return (_int(max_order) and _int(smooth) and type(smooth_value) in (float, np.float64)
            and type(effective_order) in (bool, np.bool_)
            and type(compensated) in (bool, np.bool_)
            and _array(weights, np.float64, 1) and _int(ref_scale))


def _one_piece(n: int):
    """The compiled module if ``n`` segments are one piece of work and it may be used.

    One piece is fewer than ``2 * MIN_CHUNK`` segments, or, in the main thread, up to
    :data:`SERIAL_LIMIT`: a batch that the batch pipeline runs in the calling thread
    because it is the whole input.  Serially, the compiled kernels score 10,010 lines in
    well under 0.1 s, less than numba's import and cache load (about 0.6 s warm; the
    whole run took 0.29 against 1.06 CPU seconds warm, benchmarks/bench_first_run.py)
    and far less than its first compile (12 CPU seconds), and no other thread of
    fastbleu's waits for the GIL they hold: pool threads, which batches of larger inputs
    run on, get the JIT kernels.
    """
    if n < 2 * MIN_CHUNK or (n <= SERIAL_LIMIT
                             and threading.current_thread() is threading.main_thread()):
        return compiled_module()
    return None


def tokenize_column(data, offsets, kind, out_hashes, out_count, out_start) -> None:
    """:func:`fastbleu._kernels.tokenize.tokenize_column`, ahead-of-time compiled if it fits."""
    n = offsets.size - 1
    module = _one_piece(n)
    if (module is not None and _int(kind) and kind in _TOKENIZERS
            and _array(data, np.uint8, 1) and _array(offsets, np.int64, 1)
            and _array(out_hashes, np.uint64, 1, out=True)
            and _array(out_count, np.int64, 1, out=True)
            and _array(out_start, np.int64, 1, out=True)):
        _calls["tokenize_chunk"] += 1
        module.tokenize_chunk(data, offsets, kind, out_hashes, out_count, out_start, 0, n)
        return
    from .._kernels.text.tokenize import tokenize_column as jit

    jit(data, offsets, kind, out_hashes, out_count, out_start)


def segment_statistics(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count,
                       max_order, out, ref_length=REF_CLOSEST, large_above=LARGE_ABOVE) -> None:
    """:func:`fastbleu._kernels.counting.segment_statistics`, compiled ahead of time if it
    fits."""
    n = hyp_start.size
    module = _one_piece(n)
    if (module is not None and _int(max_order) and _int(ref_length) and _int(large_above)
            and _array(hyp_hashes, np.uint64, 1) and _array(hyp_start, np.int64, 1)
            and _array(hyp_count, np.int64, 1) and _array(ref_hashes, np.uint64, 1)
            and _array(ref_start, np.int64, 2) and _array(ref_count, np.int64, 2)
            and _array(out, np.int64, 2, out=True)):
        _calls["chunk_statistics"] += 1
        module.chunk_statistics(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start,
                                ref_count, max_order, ref_length, large_above, out, 0, n)
        return
    from .._kernels.bleu.counting import segment_statistics as jit

    jit(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count, max_order, out,
        ref_length, large_above)


def bleu_from_row(row, max_order, smooth, smooth_value, effective_order, compensated,
                  precisions, weights, ref_scale) -> tuple[float, float]:
    """:func:`fastbleu._kernels.formula.bleu_from_row`, compiled ahead of time if it fits."""
    module = compiled_module()
    if (module is not None and _array(row, np.int64, 1)
            and _array(precisions, np.float64, 1, out=True)
            and _formula_args(max_order, smooth, smooth_value, effective_order, compensated,
                              weights, ref_scale)):
        _calls["bleu_from_row"] += 1
        return module.bleu_from_row(row, max_order, smooth, smooth_value, effective_order,
                                    compensated, precisions, weights, ref_scale)
    from .._kernels.bleu.formula import bleu_from_row as jit

    return jit(row, max_order, smooth, smooth_value, effective_order, compensated,
               precisions, weights, ref_scale)


def bleu_per_row(stats, max_order, smooth, smooth_value, effective_order, compensated,
                 weights, ref_scale, out) -> None:
    """:func:`fastbleu._kernels.formula.bleu_per_row`, compiled ahead of time if it fits."""
    n = stats.shape[0]
    module = _one_piece(n)
    if (module is not None and _array(stats, np.int64, 2)
            and _array(out, np.float64, 1, out=True)
            and _formula_args(max_order, smooth, smooth_value, effective_order, compensated,
                              weights, ref_scale)):
        _calls["chunk_scores"] += 1
        module.chunk_scores(stats, max_order, smooth, smooth_value, effective_order,
                            compensated, weights, ref_scale, out, 0, n)
        return
    from .._kernels.bleu.formula import bleu_per_row as jit

    jit(stats, max_order, smooth, smooth_value, effective_order, compensated, weights,
        ref_scale, out)
