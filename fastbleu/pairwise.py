"""Pairwise sentence chrF and BLEU matrices, for minimum-Bayes-risk (MBR) decoding.

For each source, the ``N x M`` matrix of sentence scores between its ``N``
candidates and its ``M`` pseudo-references (the job of ``fastchrf.pairwise_chrf``
and of the ``mbrs`` library), each value equal to sacrebleu 2.6's
``CHRF(**options).sentence_score(candidate, [reference]).score`` (or BLEU's).
Each distinct sentence of a source is profiled once, whatever the number of
pairs it is in (see :mod:`fastbleu._kernels.pairwise`).

>>> from fastbleu.pairwise import chrf_matrix
>>> m = chrf_matrix([["a cat", "the cat", "a dog"]])   # MBR: candidates = references
>>> m.shape, float(m[0, 0, 0])
((1, 3, 3), 100.0)
>>> int(m[0].sum(axis=1).argmax())                    # the MBR choice: "the cat"
1
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from ._kernels.pairwise import METRIC_BLEU, METRIC_CHRF, chrf_units, pairwise_scores
from .metrics.bleu.metric import BLEU
from .metrics.chrf.metric import CHRF
from .statistics.tokens import tokenize
from .inputs.text import TextColumn, as_text_column, lowercase as lowercase_column

__all__ = ["chrf_matrix", "bleu_matrix"]

#: Candidates and pseudo-references per batch of sources: bounds the unit scratch
#: (8 bytes per UTF-8 byte and unit kind) whatever the size of the job.
BATCH_SEGMENTS = 1 << 14
_NO_BLEU = (0, 0.0, False, False, np.zeros(0, dtype=np.float64))
_NO_CHRF = (1.0, 2.0, False)


def chrf_matrix(candidates, references=None, *, char_order: int = 6, word_order: int = 0,
                beta: int = 2, lowercase: bool = False, whitespace: bool = False,
                eps_smoothing: bool = False, ragged: bool = False):
    """Sentence chrF of every candidate against every pseudo-reference, source by source.

    Parameters
    ----------
    candidates : list of lists of str, or an Arrow ``list<string>`` array
        For each source, its candidates (at least one).
    references : same as ``candidates``, optional
        For each source, its pseudo-references (at least one); ``None``: the
        candidates themselves (the usual MBR set-up).
    char_order, word_order, beta, lowercase, whitespace, eps_smoothing
        As for :class:`fastbleu.CHRF` (and ``sacrebleu.metrics.CHRF``);
        ``word_order=2`` is chrF++.
    ragged : bool
        Return a list of ``(N_s, M_s)`` arrays instead of one padded array.

    Returns
    -------
    numpy.ndarray or list of numpy.ndarray
        float64 ``(sources, N, M)``: element ``[s, i, j]`` is
        ``CHRF(**options).sentence_score(candidates[s][i], [references[s][j]]).score``.
        Sources with fewer candidates or references than the largest are
        padded with NaN (or, with ``ragged=True``, each has its own shape).

    Raises
    ------
    TypeError
        For inputs that are not lists of lists of strings (the message names
        the source and position), or options ``CHRF`` refuses.
    ValueError
        For an empty source, or candidates and references with different
        numbers of sources.
    """
    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta,
                  lowercase=lowercase, whitespace=whitespace, eps_smoothing=eps_smoothing)
    formula = metric.formula
    kinds = [o for o in (formula.char_order, formula.word_order) if o > 0]

    def units(column: TextColumn):
        if metric.lowercase:
            column = lowercase_column(column)
        return chrf_units(column.data, column.offsets, formula.char_order, formula.word_order,
                          metric.whitespace)

    return _matrices(candidates, references, units, np.array(kinds, dtype=np.int64),
                     METRIC_CHRF, formula.kernel_args[1:], _NO_BLEU, ragged)


def bleu_matrix(candidates, references=None, *, ragged: bool = False, **bleu_options):
    """Sentence BLEU of every candidate against every pseudo-reference, source by source.

    Parameters
    ----------
    candidates, references, ragged
        As for :func:`chrf_matrix`.
    **bleu_options
        :class:`fastbleu.BLEU`'s options (``tokenize``, ``lowercase``,
        ``smooth_method``, ``smooth_value``, ``max_ngram_order``,
        ``effective_order``, ``weights``, ...).  Defaults are sacrebleu's,
        so ``effective_order`` is False unless given, as in
        ``sacrebleu.metrics.BLEU().sentence_score``.

    Returns
    -------
    numpy.ndarray or list of numpy.ndarray
        As :func:`chrf_matrix`: element ``[s, i, j]`` is
        ``BLEU(**bleu_options).sentence_score(candidates[s][i], [references[s][j]]).score``.
    """
    metric = BLEU(**bleu_options)
    formula = metric.formula
    max_order, smooth, smooth_value, effective_order, compensated, weights, _ = \
        formula.kernel_args

    def units(column: TextColumn):
        tokens = tokenize(column, metric.tokenizer, metric.lowercase)
        return tokens.hashes, tokens.start.reshape(1, -1), tokens.count.reshape(1, -1)

    return _matrices(candidates, references, units, np.array([max_order], dtype=np.int64),
                     METRIC_BLEU, _NO_CHRF,
                     (smooth, smooth_value, effective_order, compensated, weights), ragged)


# -- inputs -----------------------------------------------------------------------------


def _is_arrow(values) -> bool:
    return type(values).__module__.split(".")[0] == "pyarrow" and hasattr(values, "type")


def _from_arrow(values, name: str) -> tuple[TextColumn, np.ndarray]:
    import pyarrow as pa

    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    kind = values.type
    if not (pa.types.is_list(kind) or pa.types.is_large_list(kind)
            or pa.types.is_fixed_size_list(kind)):
        raise TypeError(f"{name} must be a list<string> column (one list per source), got "
                        f"an Arrow column of type {kind}")
    if values.null_count:
        s = int(np.flatnonzero(~np.asarray(values.is_valid()))[0])
        raise TypeError(f"{name}[{s}] is null; every source needs a list of strings")
    if pa.types.is_fixed_size_list(kind):
        size = kind.list_size
        bounds = np.arange(len(values) + 1, dtype=np.int64) * size
    else:
        offsets = np.asarray(values.offsets, dtype=np.int64)
        bounds = offsets - offsets[0]
    flat = values.flatten()
    try:
        column = as_text_column(flat, name, allow_null=True)
    except TypeError:
        raise TypeError(f"{name} must be a list<string> column, got an Arrow column of type "
                        f"{kind}") from None
    return column, bounds


def _from_python(values, name: str) -> tuple[TextColumn, np.ndarray]:
    if isinstance(values, np.ndarray) or hasattr(values, "tolist"):
        values = values.tolist()
    if not isinstance(values, Sequence):
        values = list(values)
    sources = []
    for s, source in enumerate(values):
        if isinstance(source, np.ndarray):
            source = source.tolist()
        if isinstance(source, (str, bytes)) or not isinstance(source, Sequence):
            raise TypeError(f"{name}[{s}] must be a list of strings, got "
                            f"{type(source).__name__}")
        sources.append(source)
    bounds = np.zeros(len(sources) + 1, dtype=np.int64)
    np.cumsum([len(source) for source in sources], out=bounds[1:])
    flat = list(chain.from_iterable(sources))
    try:
        column = as_text_column(flat, name, allow_null=True)
    except TypeError:
        column = None
    bad = (range(len(flat)) if column is None else
           [] if column.valid is None else np.flatnonzero(~column.valid))
    for k in bad:
        value = flat[k]
        if column is not None or not isinstance(value, str):
            s = int(np.searchsorted(bounds, k, side="right")) - 1
            what = "None" if value is None else type(value).__name__
            raise TypeError(f"{name}[{s}][{k - bounds[s]}] is {what}, not str")
    return column, bounds


def _sources(values, name: str) -> tuple[TextColumn, np.ndarray]:
    """A flat text column of all sources' sentences and the bounds of each source."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a list of sources (lists of strings), got a single "
                        f"{type(values).__name__}")
    column, bounds = _from_arrow(values, name) if _is_arrow(values) else \
        _from_python(values, name)
    sizes = np.diff(bounds)
    if sizes.size and sizes.min() == 0:
        s = int(np.argmin(sizes))
        raise ValueError(f"{name}[{s}] is empty: every source needs at least one sentence")
    return column, bounds


# -- the job ----------------------------------------------------------------------------


def _batches(bounds: np.ndarray, r_bounds: np.ndarray | None) -> list[tuple[int, int]]:
    """Consecutive source ranges of at most ``BATCH_SEGMENTS`` sentences (at least one
    source each)."""
    sizes = np.diff(bounds) + (0 if r_bounds is None else np.diff(r_bounds))
    ends = np.cumsum(sizes)
    out, first = [], 0
    while first < sizes.size:
        limit = (ends[first - 1] if first else 0) + BATCH_SEGMENTS
        last = max(first + 1, int(np.searchsorted(ends, limit, side="right")))
        out.append((first, last))
        first = last
    return out


def _matrices(candidates, references, units, orders, metric, chrf_args, bleu_args, ragged):
    cands, c_bounds = _sources(candidates, "candidates")
    if references is None:
        refs, r_bounds = None, None
    else:
        refs, r_bounds = _sources(references, "references")
        if r_bounds.size != c_bounds.size:
            raise ValueError(f"candidates have {c_bounds.size - 1} sources but references "
                             f"have {r_bounds.size - 1}")
    n_sizes = np.diff(c_bounds)
    m_sizes = n_sizes if r_bounds is None else np.diff(r_bounds)
    n_sources = n_sizes.size
    if ragged:
        cells = n_sizes * m_sizes
        out = np.empty(int(cells.sum()), dtype=np.float64)
        out_start = np.concatenate(([0], np.cumsum(cells)[:-1])).astype(np.int64)
        out_stride = m_sizes.astype(np.int64)
    else:
        n_max = int(n_sizes.max(initial=0))
        m_max = int(m_sizes.max(initial=0))
        shaped = np.full((n_sources, n_max, m_max), np.nan, dtype=np.float64)
        out = shaped.reshape(-1)
        out_start = np.arange(n_sources, dtype=np.int64) * (n_max * m_max)
        out_stride = np.full(n_sources, m_max, dtype=np.int64)
    for first, last in _batches(c_bounds, r_bounds):
        c_lo, c_hi = int(c_bounds[first]), int(c_bounds[last])
        hashes, start, count = units(cands.slice(c_lo, c_hi))
        cb = c_bounds[first:last + 1] - c_lo
        if refs is None:
            r_base, rb = 0, cb
        else:
            r_lo, r_hi = int(r_bounds[first]), int(r_bounds[last])
            r_hashes, r_start, r_count = units(refs.slice(r_lo, r_hi))
            r_base, rb = c_hi - c_lo, r_bounds[first:last + 1] - r_lo
            start = np.concatenate((start, r_start + hashes.size), axis=1)
            count = np.concatenate((count, r_count), axis=1)
            hashes = np.concatenate((hashes, r_hashes))
        pairwise_scores(hashes, np.ascontiguousarray(start), np.ascontiguousarray(count),
                        orders, np.ascontiguousarray(cb), r_base, np.ascontiguousarray(rb),
                        metric, chrf_args, bleu_args, out, out_start[first:last],
                        out_stride[first:last])
    if ragged:
        return [out[a:a + n * m].reshape(n, m)
                for a, n, m in zip(out_start.tolist(), n_sizes.tolist(), m_sizes.tolist())]
    return shaped
