"""Bootstrap resampling of statistics already on the GPU (Koehn, 2004).

:func:`bootstrap_scores` scores every system on the same resamples of the
segments: the resampled sums are made by
:func:`fastbleu._kernels.cuda.reduce.bootstrap_sums` (draws from a
counter-based generator on the device, see there) and scored by the
formula's kernel, so nothing but the seed crosses to the device and the
scores stay there.

The draws are not numpy's (sacrebleu's ``default_rng(seed).choice``): for the
same seed, the resampled scores are not those of
:func:`fastbleu.significance.paired_bootstrap`, though they estimate the same
distribution.  Sums are int64 (exact).
"""

from __future__ import annotations

import numpy as np

from .arrays import Context, blocks, on_device, threads

#: Resamples per launch: bounds the int64 sums kept on the device.
BATCH = 4096


def bootstrap_scores(systems, formula=None, n_samples: int = 1000, seed: int = 12345):
    """Sentence-level statistics of several systems -> their BLEU on each bootstrap resample.

    Parameters
    ----------
    systems : list of CUDA arrays
        Each system's int64 statistics rows ``(n_segments, 2 + 2 * N)`` of
        the same segments (:func:`fastbleu.gpu.bleu_statistics`).
    formula : BLEUFormula, optional
        ``BLEU(...).formula``; default ``BLEU(max_ngram_order=N).formula``.
    n_samples : int
        Resamples (each draws ``n_segments`` segments with replacement).
    seed : int
        Seed of the device's generator (0 .. 2**64 - 1).

    Returns
    -------
    array
        float64 ``(n_systems, n_samples)`` on the device: system ``s``'s
        corpus BLEU on resample ``b``.
    """
    from .._kernels.cuda import formula as kernels, reduce
    from .._kernels.cuda.loader import cuda

    if not isinstance(systems, (list, tuple)) or not systems:
        raise TypeError("systems must be a non-empty list of statistics arrays")
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or \
            n_samples < 1:
        raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or \
            not 0 <= int(seed) < 2 ** 64:
        raise ValueError(f"seed must be an int from 0 to 2**64 - 1, got {seed!r}")
    context = Context(cuda, next((s for s in systems if on_device(s)), None))
    views = [context.view(s, f"systems[{k}]") for k, s in enumerate(systems)]
    n, width = views[0].shape
    if formula is None:
        from ..metrics.bleu.formula import BLEUFormula

        formula = BLEUFormula((width - 2) // 2)
    for k, view in enumerate(views):
        if view.shape != (n, formula.row_width) or view.dtype != np.int64:
            raise ValueError(f"systems[{k}] must be int64 rows of shape ({n}, "
                             f"{formula.row_width}), got {view.dtype} {tuple(view.shape)}")
    if n == 0:
        raise ValueError("bootstrap needs at least one segment")
    n_systems = len(views)
    total = n_systems * width
    if total > reduce.MAX_COLUMNS:
        raise ValueError(f"at most {reduce.MAX_COLUMNS // width} systems at once")
    # int32 rows halve the bytes of every draw's gather (a row's counts are at most its
    # segment's length); the "average" reference length is scaled by 720720, so not then.
    narrow = formula.ref_length != "average"
    side, owner_side = context.empty((n, total), np.int32 if narrow else np.int64)
    for k, view in enumerate(views):  # the systems' rows side by side, one row a segment
        reduce.side_by_side[blocks(n * width), threads(),
                            context.stream](view, k * width, side)
    out, owner = context.empty((n_systems, n_samples), np.float64)
    order, smooth, value, effective, compensated, weights, scale = formula.kernel_args
    weights = cuda.to_device(np.ascontiguousarray(weights, dtype=np.float64),
                             stream=context.stream)
    draws = 1 << 14 if n > 1 << 16 else max(1, -(-n // 4))
    keep = [owner_side]  # numba's own arrays free their memory when dropped: keep them
    for first in range(0, n_samples, BATCH):
        k = min(BATCH, n_samples - first)
        sums, owner_sums = context.full(k * total, np.int64, 0)
        keep.append(owner_sums)
        sums = sums.reshape(k, total)
        reduce.bootstrap_sums[(-(-n // draws), k), threads(), context.stream](
            side, np.uint64(seed), first, draws, sums)
        scored, owner_scored = context.empty(k * n_systems, np.float64)
        keep.append(owner_scored)
        rows = sums.reshape(k * n_systems, width)  # resample b, system s -> row b * S + s
        kernels.bleu_scores[blocks(k * n_systems), threads(),
                            context.stream](rows, order, smooth, value, effective,
                                            compensated, weights, float(scale), scored)
        _transpose_into(context, scored, out, first, k, n_systems)
    if context.library is None:
        context.stream.synchronize()
    return context.result(out, owner)


def _transpose_into(context, scored, out, first, k, n_systems):
    """``out[s, first + b] = scored[b * S + s]``."""
    from .._kernels.cuda.reduce import scatter_scores

    scatter_scores[blocks(k * n_systems), threads(), context.stream](
        scored, n_systems, first, out)
