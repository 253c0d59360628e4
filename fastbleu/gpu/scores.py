"""Statistics rows on the GPU -> scores and sums on the GPU.

The formulas are the CPU path's, a thread per row (see
:mod:`fastbleu._kernels.cuda.formula` for where float operations can differ:
``log`` and ``exp`` are CUDA's, so a score may differ from the CPU path's in
its last bit or two; every other operation is the same IEEE operation in the
same order).
"""

from __future__ import annotations

import numpy as np

from .arrays import Context, blocks, on_device, threads

_UNIFORM_4 = (0.25, 0.25, 0.25, 0.25)


def _kernels():
    from .._kernels.cuda import formula, reduce
    from .._kernels.cuda.loader import cuda

    return cuda, formula, reduce


def _rows(context, rows, width=None):
    view = context.view(rows, "rows")
    if len(view.shape) != 2 or (width is not None and view.shape[1] != width):
        raise ValueError(f"rows must be 2-D with {width or 'row_width'} columns, got shape "
                         f"{tuple(view.shape)}")
    if view.dtype != np.int64:
        raise TypeError(f"rows must be int64 statistics rows, got {view.dtype}")
    return view


def sentence_scores(rows, formula=None):
    """sacrebleu's sentence BLEU of every statistics row, on the GPU (NaN for a malformed
    segment's row of -1, see :func:`fastbleu.gpu.bleu_statistics`).

    Parameters
    ----------
    rows : CUDA array of int64
        ``(n, 2 + 2 * N)`` rows (:func:`fastbleu.gpu.bleu_statistics`).
    formula : fastbleu.metrics.bleu_formula.BLEUFormula, optional
        ``BLEU(...).formula`` (smoothing, effective order, weights); default
        ``BLEU(max_ngram_order=N).formula``.  sacrebleu recommends
        ``effective_order=True`` for sentence scores.

    Returns
    -------
    array
        float64 ``(n,)`` on the device, in the input's library.
    """
    cuda, kernels, _ = _kernels()
    context = Context(cuda, rows if on_device(rows) else None)
    if formula is None:
        from ..metrics.bleu.formula import BLEUFormula

        formula = BLEUFormula((int(np.shape(rows)[1]) - 2) // 2)
    view = _rows(context, rows, formula.row_width)
    order, smooth, value, effective, compensated, weights, scale = formula.kernel_args
    out, owner = context.empty(view.shape[0], np.float64)
    if view.shape[0]:
        weights = cuda.to_device(np.ascontiguousarray(weights, dtype=np.float64),
                                 stream=context.stream)
        kernels.bleu_scores[blocks(view.shape[0]), threads(), context.stream](
            view, order, smooth, value, effective, compensated, weights, float(scale), out)
    return context.result(out, owner)


def _column_sums(rows):
    """``(context, view, out)``: the rows' column sums and, after them, the count of
    malformed rows, on the device (out zeroed, then one launch when there are rows)."""
    cuda, _, reduce = _kernels()
    context = Context(cuda, rows if on_device(rows) else None)
    view = context.view(rows, "rows")
    out, owner = context.full(view.shape[1] + 1, np.int64, 0)
    if view.shape[0]:
        reduce.column_sums[blocks(view.shape[0]), threads(), context.stream](view, out)
    return context, view, (out, owner)


def _refuse_malformed(bad: int, n: int) -> None:
    if bad:
        raise ValueError(f"{bad} of {n} segments have malformed ids (a negative id, offsets "
                         "out of order or no reference: rows of -1); bleu_statistics(..., "
                         "check=True) names the first")


def corpus_statistics(rows, check: bool = True):
    """The column sums of statistics rows (the corpus's row), int64 on the GPU.

    Parameters
    ----------
    rows : CUDA array of int64
        Statistics rows (:func:`fastbleu.gpu.bleu_statistics`).
    check : bool
        Read back (one small copy, one wait) how many rows are malformed (a
        segment with a negative id, offsets out of order or no reference:
        its row is -1) and raise if any is; ``False`` leaves the sums on the
        device without waiting, malformed rows added in.

    Raises
    ------
    ValueError
        With ``check``, for malformed rows.
    """
    context, view, (out, owner) = _column_sums(rows)
    width = view.shape[1]
    if check and view.shape[0]:
        _refuse_malformed(int(context.host(out[width:])[0]), view.shape[0])
    return context.result(out, owner)[:width]


def summed_row(rows) -> np.ndarray:
    """The column sums of statistics rows on the host: :func:`corpus_statistics` with its
    check, read back in one copy (the sums and the malformed rows' count together), which
    is all a corpus score needs from the device.

    Returns
    -------
    numpy.ndarray
        int64, one entry per column.

    Raises
    ------
    ValueError
        For malformed rows (rows of -1, see :func:`corpus_statistics`).
    """
    context, view, (out, _) = _column_sums(rows)
    width = view.shape[1]
    if not view.shape[0]:
        return np.zeros(width, dtype=np.int64)
    values = context.host(out)
    _refuse_malformed(int(values[width]), view.shape[0])
    return np.ascontiguousarray(values[:width], dtype=np.int64)


def smoothing_code(smoothing_function) -> tuple[int, object]:
    """NLTK's smoothing method as ``(number, SmoothingFunction)``: None, an int 0-7, or a
    method of ``SmoothingFunction`` (fastbleu.nltk's or NLTK's)."""
    from ..nltk import SmoothingFunction
    from ..nltk.smoothing import vectorized_method

    if isinstance(smoothing_function, (int, np.integer)) and \
            not isinstance(smoothing_function, bool):
        if not 0 <= smoothing_function <= 7:
            raise ValueError(f"smoothing method must be 0..7, got {smoothing_function}")
        return int(smoothing_function), SmoothingFunction()
    plan = vectorized_method(smoothing_function)
    if plan is None:
        raise TypeError("on the GPU the smoothing function must be None, 0-7 or a method of "
                        "SmoothingFunction (its methods 0-7), not a custom callable")
    name, params = plan
    return int(name[-1]), params


def nltk_scores(rows, weights=_UNIFORM_4, smoothing_function=None, auto_reweigh=False):
    """NLTK's ``sentence_bleu`` of every statistics row, on the GPU (float64).

    The rows must have at least ``len(weights)`` orders (5 for smoothing
    methods 5 and 7, which read the 5-gram precision).  A malformed segment's
    row of -1 scores NaN; a row without a unigram match scores 0; with method
    6, a row whose trigram precision is 0 scores NaN (NLTK raises there).
    Method 0's warnings are not given.
    """
    cuda, kernels, _ = _kernels()
    context = Context(cuda, rows if on_device(rows) else None)
    weights = tuple(float(w) for w in weights)
    method, params = smoothing_code(smoothing_function)
    n = len(weights)
    if not 1 <= n <= 100:
        raise ValueError(f"weights must have 1 to 100 orders, got {n}")
    if method == 6 and n < 3:
        raise IndexError(f"smoothing method 6 needs weights for at least 3 n-gram orders, got {n}")
    view = _rows(context, rows)
    need = max(n, 5) if method in (5, 7) else n
    if (view.shape[1] - 2) // 2 < need:
        raise ValueError(f"rows have {(view.shape[1] - 2) // 2} orders; these weights and "
                         f"smoothing need {need} (compute them with max_order={need})")
    out, owner = context.empty(view.shape[0], np.float64)
    if view.shape[0]:
        w = cuda.to_device(np.asarray(weights, dtype=np.float64), stream=context.stream)
        kernels.nltk_scores[blocks(view.shape[0]), threads(), context.stream](
            view, n, w, method, float(params.epsilon), float(params.alpha), float(params.k),
            bool(auto_reweigh and weights == _UNIFORM_4), out)
    return context.result(out, owner)
