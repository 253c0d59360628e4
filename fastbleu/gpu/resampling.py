"""Bootstrap resampling of statistics already on the GPU (Koehn, 2004).

:func:`bootstrap_scores` scores every system on the same resamples of the
segments in three launches: the systems' rows are laid side by side (in
full, and compact where they fit), then :mod:`fastbleu._kernels.cuda.bootstrap` draws each
resample's segments with a counter-based generator on the device and sums
their rows in registers, a few blocks per resample (no index array, no
zeroed sums), then adds the blocks' partial rows and scores every system of
every resample.  Nothing but the seed crosses to the device and the scores
stay there.

The draws are not numpy's (sacrebleu's ``default_rng(seed).choice``): for the
same seed, the resampled scores are not those of
:func:`fastbleu.significance.paired_bootstrap`, though they estimate the same
distribution.  Sums are int64 (exact).
"""

from __future__ import annotations

import numpy as np

from .arrays import Context, blocks, on_device, threads

#: Resamples per launch (a grid's second dimension takes at most 65,535 blocks).
BATCH = 65535


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
        corpus BLEU on resample ``b`` (all NaN if a system has a malformed
        segment's row of -1, see :func:`fastbleu.gpu.bleu_statistics`).
    """
    from .._kernels.cuda import bootstrap, reduce
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
    order = int(formula.kernel_args[0])
    compact, owner_compact = context.empty((n, n_systems * (2 + order)), np.int16)
    flag = cuda.to_device(np.zeros(1, np.int32), stream=context.stream)
    keep = [owner_side, owner_compact, flag]  # alive until the kernels are queued
    views = _one_type(context, views, keep)
    bootstrap.lay_out[blocks(n * n_systems), threads(), context.stream](
        tuple(views), order, side, compact, flag)
    out, owner = context.empty((n_systems, n_samples), np.float64)
    _, smooth, value, effective, compensated, weights, scale = formula.kernel_args
    weights = cuda.to_device(np.ascontiguousarray(weights, dtype=np.float64),
                             stream=context.stream)
    sums = bootstrap.sums_kernel(n_systems, order)
    for first in range(0, n_samples, BATCH):
        k = min(BATCH, n_samples - first)
        parts = split(n, k)
        partials, owner_partials = context.empty((k, parts, total), np.int64)
        keep.append(owner_partials)
        sums[(parts, k), threads(), context.stream](side, compact, flag, np.uint64(seed),
                                                    first, partials)
        bootstrap.score_resamples[blocks(k * n_systems), threads(), context.stream](
            partials, flag, n_systems, first, order, smooth, value, effective, compensated, weights,
            float(scale), out)
    return context.result(out, owner)


def _one_type(context, views, keep):
    """The systems' rows as one kernel tuple takes them (one layout): strided views are
    copied to C-contiguous ones on the device (a launch each)."""
    if all(v.is_c_contiguous() for v in views):
        return views
    from .._kernels.cuda.reduce import widen_rows

    out = []
    for view in views:
        if not view.is_c_contiguous():
            copy, owner = context.empty(view.shape, np.int64)
            keep.append(owner)
            widen_rows[blocks(view.size), threads(), context.stream](view, copy)
            view = copy
        out.append(view)
    return out


def split(n: int, k: int) -> int:
    """Blocks per resample: enough blocks in all to fill the device (about 1,024), none with
    fewer than 4,096 draws (2 on the simulator, where a block costs ~0.1 s)."""
    from .._kernels.cuda.loader import simulated

    if simulated():
        return 2 if n >= 2 else 1
    return max(1, min(-(-1024 // k), -(-n // 4096)))
