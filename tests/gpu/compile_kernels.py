"""Compile every CUDA kernel of fastbleu to PTX (sm_90) with numba-cuda and NVVM, no GPU needed.

The simulator runs the kernels as Python, so it cannot catch what only
numba's CUDA compiler refuses (types, literal array sizes).  This script
compiles each kernel for the argument types fastbleu launches it with;
``test_gpu_compile.py`` runs it in a child process where numba-cuda and the
CUDA compiler libraries (``numba-cuda[cu12]``, or ``nvidia-cuda-nvcc-cu12``
and ``nvidia-cuda-nvrtc-cu12``) are installed.  It patches numba (the
current device's compute capability), hence the child process.
"""

import sys
import time
from pathlib import Path


class _Device:
    compute_capability = (9, 0)


def main() -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent.parent))
    import numba.cuda.dispatcher as dispatcher
    from numba import cuda, types as t

    cuda.is_available = lambda: True  # compile only: no device is needed, nor used
    dispatcher.get_current_device = lambda: _Device()  # device functions compile for sm_90
    from fastbleu._kernels.cuda import (bootstrap, counting, formula, pairwise, randomization,
                                        reduce, resamples, tokenize, units)

    i8, u8, i4, f8, b1 = t.int64, t.uint64, t.int32, t.float64, t.boolean

    def A(dtype, ndim=1):  # noqa: N802 - an array type, as numba names them
        return t.Array(dtype, ndim, "C")

    rows = A(i8, 2)

    def fused(values, offsets, valid, streams):  # bleu_rows for one kind of input
        tup = t.UniTuple
        return (tup(values, streams), tup(offsets, streams), tup(valid, streams),
                tup(i8, 8 * streams), i8, i8, i8, i8, i8, i8, i8, u8, A(u8), rows, rows,
                A(u8), A(i4), rows, A(i8), A(i8))

    table = (A(u8), A(i8, 2), A(i8, 2))  # hashes, start, count
    checks = {
        "bleu_rows": (counting.bleu_rows, [
            fused(A(i8, 2), A(i8), A(i8), 2),  # padded int64, one reference
            fused(A(i4, 2), A(i8), A(b1), 3),  # ragged int32, two references, a mask
            fused(t.Array(i8, 2, "A"), A(i4), A(i8), 2)]),  # strided torch slices
        "chrf_units": (units.chrf_units, [(A(t.uint8), A(i8), i8, i8, b1, i8, A(u8),
                                           A(i8, 2), A(i8, 2))]),
        "bleu_tokens": (tokenize.bleu_tokens, [(A(t.uint8), A(i8), i8, A(t.uint8), A(u8),
                                                A(i8, 2), A(i8, 2))]),
        "widen": (reduce.widen, [(t.Array(i4, 1, "A"), A(i8))]),
        "widen_rows": (reduce.widen_rows, [(t.Array(i4, 2, "A"), rows)]),
        "bleu_scores": (formula.bleu_scores, [(rows, i8, i8, f8, b1, b1, A(f8), f8, A(f8))]),
        "nltk_scores": (formula.nltk_scores, [(rows, i8, A(f8), i8, f8, f8, f8, b1, A(f8))]),
        "column_sums": (reduce.column_sums, [(rows, A(i8))]),
        "lay_out": (bootstrap.lay_out, [(t.UniTuple(rows, 2), i8, A(i4, 2), A(t.int16, 2),
                                         A(i4))]),
        "count_rejected": (resamples.count_rejected, [
            (A(u8, 2), u8, u8, i8, i8, i8, A(i8), A(i8), rows)]),
        "resample_sums": (resamples.sums_kernel(2, 4), [
            (rows, A(t.int16, 2), A(i4), A(u8, 2), u8, u8, i8, i8, A(i8), A(i8), rows),
            (A(i4, 2), A(t.int16, 2), A(i4), A(u8, 2), u8, u8, i8, i8, A(i8), A(i8), rows)]),
        "draw_indices": (resamples.draw_indices, [
            (A(u8, 2), u8, u8, i8, i8, i8, A(i8), A(i8), A(i8))]),
        "score_resamples": (bootstrap.score_resamples, [
            (rows, A(i4), i8, i8, i8, f8, b1, b1, A(f8), f8, A(f8, 2))]),
        "lay_out_pairs": (randomization.lay_out_kernel(2, 4), [
            (t.UniTuple(rows, 3), rows, rows, i8)]),
        "randomization_sums": (randomization.randomization_sums_kernel(2, 4), [
            (rows, A(u8, 2), u8, u8, i8, rows)]),
        "score_trials": (randomization.score_trials, [
            (rows, i8, i8, i8, f8, b1, b1, A(f8), f8, A(f8, 2), A(f8, 2))]),
        "stream_outputs": (randomization.stream_outputs, [(A(u8, 2), u8, u8, A(u8), A(u8))]),
        "fill": (reduce.fill, [(A(f8), f8), (A(i8), i8)]),
        "profiles": (pairwise.profiles, [
            (*table, i8, A(i8), A(i8), i8, A(u8), A(i4), A(i4, 2))]),
        "pair_scores": (pairwise.pair_scores, [
            (A(u8), A(i4), A(i4, 2), rows, rows, i8, A(i8), A(i8), A(i8), i8, A(i8), i8, f8,
             f8, b1, i8, f8, b1, b1, A(f8), A(f8), A(i8), A(i8))]),
    }
    ok = True
    for name, (kernel, sigs) in checks.items():
        for sig in sigs:
            start = time.time()
            try:
                ptx, _ = cuda.compile_ptx(kernel.py_func, sig, cc=(9, 0))
                print(f"ok   {name:16s} {time.time() - start:5.1f}s  {len(ptx) // 1024} KB of PTX")
            except Exception as error:  # report every kernel, then fail
                ok = False
                print(f"FAIL {name}: {type(error).__name__}: {str(error)[:2000]}")
    print("ALL OK" if ok else "FAILURES")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
