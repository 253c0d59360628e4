"""Bootstrap resampling and approximate randomization of statistics already on the GPU.

Paired bootstrap resampling (Koehn, 2004) and approximate randomization
(Riezler & Maxwell, 2005), as sacrebleu's paired tests use them, on numpy's
own draws: for the same seed, the resamples and coins are sacrebleu's.

:func:`bootstrap_scores` scores every system on the same resamples of the
segments, ``numpy.random.default_rng(seed).choice(n, size=(n_samples, n))``
as one call (sacrebleu's ``_paired_bs_test``), in four launches: the
systems' rows are laid side by side (in full, and compact where they fit);
:mod:`fastbleu._kernels.cuda.resamples` counts the words of numpy's PCG64
stream that Lemire's method rejects, a stretch a thread (and zeroes the
sums); then each thread finds its first draw from those counts, makes its
draws (skipping the rejected words) and adds their rows in registers into
their resamples' sums; then every system of every resample is scored.  Only
the generator's state and a table of its jumps cross to the device, nothing
is read back, and the scores stay there.  The sums are int64 and equal to
:func:`fastbleu.significance.resampling.bootstrap_scores`'s for
``numpy.random.default_rng(seed)``.

:func:`randomization_scores` makes numpy's coins (sacrebleu's
``default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)``) on the
device from the same stream (:mod:`fastbleu._kernels.cuda.randomization`),
so its A and B are those of
:func:`fastbleu.significance.resampling.randomization_scores` for the same
seed, in four launches and nothing read back.
"""

from __future__ import annotations

import numpy as np

from .arrays import Context, blocks, on_device, threads

_M64 = (1 << 64) - 1


def bootstrap_scores(systems, formula=None, n_samples: int = 1000, seed: int = 12345):
    """Sentence-level statistics of several systems -> their BLEU on each bootstrap resample.

    Resample ``b`` is row ``b`` of numpy's
    ``numpy.random.default_rng(seed).choice(n_segments, size=(n_samples, n_segments))``
    (sacrebleu's paired bootstrap, Koehn, 2004, "Statistical significance
    tests for machine translation evaluation"), drawn on the device: the
    summed rows are those of
    :func:`fastbleu.significance.resampling.bootstrap_scores` with
    ``numpy.random.default_rng(seed)`` (int64, exact), and so are the scores,
    BLEU's formula in the same IEEE operations except ``math.log`` and
    ``math.exp``, which are CUDA's (libdevice, within 1-2 units in the last
    place) on a GPU; on numba's simulator they are Python's and the scores
    are equal to the bit.  p-values and confidence intervals computed from
    them are sacrebleu's for the same seed.

    Parameters
    ----------
    systems : list of CUDA arrays
        Each system's int64 statistics rows ``(n_segments, 2 + 2 * N)`` of
        the same segments (:func:`fastbleu.gpu.bleu_statistics`), at most
        ``2**32`` segments.
    formula : BLEUFormula, optional
        ``BLEU(...).formula``; default ``BLEU(max_ngram_order=N).formula``.
    n_samples : int
        Resamples (each draws ``n_segments`` segments with replacement).
    seed : int
        numpy's seed (``numpy.random.default_rng(seed)``), a non-negative int;
        sacrebleu's default is 12345.

    Returns
    -------
    array
        float64 ``(n_systems, n_samples)`` on the device: system ``s``'s
        corpus BLEU on resample ``b`` (all NaN if a system has a malformed
        segment's row of -1, see :func:`fastbleu.gpu.bleu_statistics`, or,
        except with ``ref_length="average"``, a value beyond ``2**31 - 1``,
        which no segment of real text has: the rows are laid out as int32).
    """
    from .._kernels.cuda import bootstrap, randomization, resamples
    from .._kernels.cuda.loader import cuda

    if not isinstance(systems, (list, tuple)) or not systems:
        raise TypeError("systems must be a non-empty list of statistics arrays")
    if isinstance(n_samples, bool) or not isinstance(n_samples, (int, np.integer)) or \
            n_samples < 1:
        raise ValueError(f"n_samples must be a positive int, got {n_samples!r}")
    _check_count(n_samples, "n_samples")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative int (numpy's default_rng seed), "
                         f"got {seed!r}")
    n_samples, seed = int(n_samples), int(seed)
    from ..metrics.bleu.formula import BLEUFormula

    if formula is not None and not isinstance(formula, BLEUFormula):
        raise TypeError(f"formula must be a BLEU formula (BLEU(...).formula), got "
                        f"{type(formula).__name__}")
    context = Context(cuda, next((s for s in systems if on_device(s)), None))
    views = [context.view(s, f"systems[{k}]") for k, s in enumerate(systems)]
    n, width = views[0].shape if len(views[0].shape) == 2 else (0, -1)
    if formula is None:
        formula = BLEUFormula(max(1, (width - 2) // 2))
    _check_rows(views, [f"systems[{k}]" for k in range(len(views))], formula, n, width,
                "bootstrap", len(views))
    if n > resamples.MAX_N:
        raise ValueError(f"the GPU bootstrap draws numpy's indices for at most 2**32 segments, "
                         f"got {n:,}")
    n_systems = len(views)
    total = n_systems * width
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
    state = np.random.default_rng(seed).bit_generator.state["state"]
    value, inc = int(state["state"]), int(state["inc"])
    table = cuda.to_device(randomization.jump_table(inc), stream=context.stream)
    words, stretch, grid = resamples.plan(n_samples * n, n, threads(), *_cut())
    counts, owner_counts = context.empty(grid * threads(), np.int64)
    block_counts, owner_blocks = context.empty(grid, np.int64)
    sums, owner_sums = context.empty((n_samples, total), np.int64)
    out, owner = context.empty((n_systems, n_samples), np.float64)
    _, smooth, smooth_value, effective, compensated, weights, scale = formula.kernel_args
    weights = cuda.to_device(np.ascontiguousarray(weights, dtype=np.float64),
                             stream=context.stream)
    keep += [table, owner_counts, owner_blocks, owner_sums, weights]
    state_hi, state_lo = np.uint64(value >> 64), np.uint64(value & _M64)
    resamples.count_rejected[grid, threads(), context.stream](
        table, state_hi, state_lo, n, words, stretch, counts, block_counts, sums)
    resamples.sums_kernel(n_systems, order)[grid, threads(), context.stream](
        side, compact, flag, table, state_hi, state_lo, words, stretch, counts, block_counts,
        sums)
    bootstrap.score_resamples[blocks(n_samples * n_systems), threads(), context.stream](
        sums, flag, n_systems, order, smooth, smooth_value, effective, compensated, weights,
        float(scale), out)
    return context.result(out, owner)


def randomization_scores(baseline, systems, formula=None, n_trials: int = 10000,
                         seed: int = 12345):
    """Approximate randomization of systems against a baseline, statistics already on the GPU.

    For every system and trial, pseudo-system A takes the baseline's row of
    each segment whose coin is set and the system's row otherwise, B the
    other one (sacrebleu's ``_paired_ar_test``; Riezler & Maxwell, 2005,
    "On some pitfalls in automatic evaluation and significance testing for
    MT").  The coins are numpy's own,
    ``numpy.random.default_rng(seed).integers(2, size=(n_trials, n), dtype=bool)``
    as one call, made on the device (PCG64 jumped to each thread's place in
    the stream), so A and B are those of
    :func:`fastbleu.significance.resampling.randomization_scores` with
    ``numpy.random.default_rng(seed)``: the summed rows are equal (int64,
    exact) and the scores are BLEU's formula in the same IEEE operations,
    except ``math.log`` and ``math.exp``, which are CUDA's (libdevice, within
    1-2 units in the last place) on a GPU; on numba's simulator they are
    Python's and the scores are equal to the bit.

    Parameters
    ----------
    baseline : CUDA array
        The baseline's int64 statistics rows ``(n_segments, 2 + 2 * N)``
        (:func:`fastbleu.gpu.bleu_statistics`).
    systems : list of CUDA arrays
        Each system's rows of the same segments, in the same shape.
    formula : BLEUFormula, optional
        ``BLEU(...).formula``; default ``BLEU(max_ngram_order=N).formula``.
    n_trials : int
        Trials (sacrebleu's default is 10,000).
    seed : int
        numpy's seed (``numpy.random.default_rng(seed)``), a non-negative int.

    Returns
    -------
    (array, array)
        A and B, float64 ``(n_systems, n_trials)`` on the device (all NaN if
        any row is a malformed segment's row of -1, see
        :func:`fastbleu.gpu.bleu_statistics`).
    """
    from .._kernels.cuda import randomization
    from .._kernels.cuda.loader import cuda
    from ..metrics.bleu.formula import BLEUFormula

    if not isinstance(systems, (list, tuple)) or not systems:
        raise TypeError("systems must be a non-empty list of statistics arrays")
    if isinstance(n_trials, bool) or not isinstance(n_trials, (int, np.integer)) or \
            n_trials < 1:
        raise ValueError(f"n_trials must be a positive int, got {n_trials!r}")
    _check_count(n_trials, "n_trials")
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or int(seed) < 0:
        raise ValueError(f"seed must be a non-negative int (numpy's default_rng seed), "
                         f"got {seed!r}")
    n_trials, seed = int(n_trials), int(seed)
    if formula is not None and not isinstance(formula, BLEUFormula):
        raise TypeError(f"formula must be a BLEU formula (BLEU(...).formula), got "
                        f"{type(formula).__name__}")
    template = next((s for s in [baseline, *systems] if on_device(s)), None)
    context = Context(cuda, template)
    views = [context.view(baseline, "baseline")]
    views += [context.view(s, f"systems[{k}]") for k, s in enumerate(systems)]
    n, width = views[0].shape if len(views[0].shape) == 2 else (0, -1)
    if formula is None:
        formula = BLEUFormula(max(1, (width - 2) // 2))
    _check_rows(views, ["baseline"] + [f"systems[{k}]" for k in range(len(systems))],
                formula, n, width, "approximate randomization", len(systems))
    n_systems = len(systems)
    columns = n_systems * width
    state = np.random.default_rng(seed).bit_generator.state["state"]
    value, inc = int(state["state"]), int(state["inc"])
    order = int(formula.kernel_args[0])
    _, smooth, smooth_value, effective, compensated, weights, scale = formula.kernel_args
    keep = []
    views = _one_type(context, views, keep)
    table = cuda.to_device(randomization.jump_table(inc), stream=context.stream)
    weights = cuda.to_device(np.ascontiguousarray(weights, dtype=np.float64),
                             stream=context.stream)
    diff, owner_diff = context.empty((n, columns), np.int64)
    scratch, owner_scratch = context.full((n_trials + randomization.EXTRA_ROWS, columns),
                                          np.int64, 0)
    keep += [table, weights, owner_diff, owner_scratch]
    randomization.lay_out_kernel(n_systems, order)[
        min(blocks(n), 1024), threads(), context.stream](tuple(views), diff, scratch, n_trials)
    outputs = -(-n_trials * n // 64)
    randomization.randomization_sums_kernel(n_systems, order)[
        min(blocks(outputs), 1024), threads(), context.stream](
            diff, table, np.uint64(value >> 64), np.uint64(value & _M64), n_trials, scratch)
    out_a, owner_a = context.empty((n_systems, n_trials), np.float64)
    out_b, owner_b = context.empty((n_systems, n_trials), np.float64)
    randomization.score_trials[blocks(n_trials * n_systems), threads(), context.stream](
        scratch, n_systems, order, smooth, smooth_value, effective, compensated, weights,
        float(scale), out_a, out_b)
    return context.result(out_a, owner_a), context.result(out_b, owner_b)



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


def _check_count(value, name: str) -> None:
    """At most the CPU's ``MAX_SAMPLES``: refused before the scores (or AR's sums) are
    allocated on the device."""
    from .._limits import MAX_SAMPLES

    if value > MAX_SAMPLES:
        raise ValueError(f"{name} must be at most {MAX_SAMPLES:,} (as on the CPU), "
                         f"got {value:,}")


def _check_rows(views, names, formula, n, width, what, n_summed) -> None:
    """Every view int64 rows of ``formula``'s width and one length, at least one segment,
    and not more systems than one kernel's columns hold."""
    from .._kernels.cuda import reduce

    for name, view in zip(names, views):
        if tuple(view.shape) != (n, formula.row_width) or view.dtype != np.int64:
            raise ValueError(f"{name} must be int64 rows of shape ({n}, {formula.row_width}), "
                             f"got {view.dtype} {tuple(view.shape)}")
    if n == 0:
        raise ValueError(f"{what} needs at least one segment")
    if n_summed * width > reduce.MAX_COLUMNS:
        raise ValueError(f"at most {reduce.MAX_COLUMNS // width} systems at once")


def _cut() -> tuple[int, int]:
    """``(max_blocks, min_stretch)`` of the bootstrap's draws
    (:func:`fastbleu._kernels.cuda.resamples.plan`): about 1,024 blocks fill the device,
    and a thread takes at least 256 words (its jump into the stream and its share of the
    prefix sum then cost little); 2 blocks and 2 words on the simulator, where a block
    costs ~0.1 s and small tests still cut the draws many ways."""
    from .._kernels.cuda.loader import simulated

    return (2, 2) if simulated() else (1024, 256)
