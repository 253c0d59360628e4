"""Pairwise chrF and BLEU matrices for minimum-Bayes-risk decoding, counted on the GPU.

The GPU counterparts of :func:`fastbleu.pairwise.chrf_matrix` and
:func:`~fastbleu.pairwise.bleu_matrix`, with the same arguments and values
(chrF to the last bit; BLEU within CUDA's ``log``/``exp``, see
:mod:`fastbleu._kernels.cuda.formula`).  For chrF the text's UTF-8 bytes
and offsets go to the device once and are cut into units there
(:mod:`fastbleu._kernels.cuda.units`: characters and words, the CPU's 64-bit
hashes).  So do BLEU's byte tokenizers ``13a``, ``none`` and ``char``
(:mod:`fastbleu._kernels.cuda.tokenize`: the CPU's token hashes); the others
(``intl``, ``zh``, and those that run a Python library: ``ja-mecab``,
``ko-mecab``, ``spm``, ``flores101``, ``flores200``, ``spBLEU-1K``) tokenize on
the CPU and their hashes are copied.  Then every sentence's n-grams are counted once
(:func:`.profiles`) and every pair of a source is matched (:func:`.pair_scores`).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain

import numpy as np

from .._native.codes import TOKENIZE_13A, TOKENIZE_CHAR, TOKENIZE_NONE
from .arrays import Context, blocks, threads


def _sources(values, name: str):
    """A flat list of sentences and the bounds of each source's."""
    if isinstance(values, (str, bytes)):
        raise TypeError(f"{name} must be a list of sources (lists of strings), got a single "
                        f"{type(values).__name__}")
    if type(values).__module__.split(".")[0] == "pyarrow":
        values = values.to_pylist()
    sources = []
    for s, source in enumerate(values):
        if isinstance(source, np.ndarray):
            source = source.tolist()
        if isinstance(source, (str, bytes)) or not isinstance(source, Sequence):
            raise TypeError(f"{name}[{s}] must be a list of strings, got "
                            f"{type(source).__name__}")
        if len(source) == 0:
            raise ValueError(f"{name}[{s}] is empty: every source needs at least one sentence")
        for i, text in enumerate(source):
            if not isinstance(text, str):  # worded as fastbleu.pairwise's own
                what = "None" if text is None else type(text).__name__
                raise TypeError(f"{name}[{s}][{i}] is {what}, not str")
        sources.append(source)
    bounds = np.zeros(len(sources) + 1, dtype=np.int64)
    np.cumsum([len(source) for source in sources], out=bounds[1:])
    return list(chain.from_iterable(sources)), bounds


def chrf_matrix(candidates, references=None, *, char_order: int = 6, word_order: int = 0,
                beta: int = 2, lowercase: bool = False, whitespace: bool = False,
                eps_smoothing: bool = False, ragged: bool = False):
    """Sentence chrF (chrF++ with ``word_order=2``) of every candidate against every
    pseudo-reference of its source, on the GPU (Popović, 2015, 2017).

    Arguments and values as :func:`fastbleu.pairwise.chrf_matrix`: element
    ``[s, i, j]`` is ``CHRF(**options).sentence_score(candidates[s][i],
    [references[s][j]]).score``, NaN where a source has fewer candidates or
    references than the largest (or a list of ``(N_s, M_s)`` arrays with
    ``ragged=True``).  Returns numba device arrays (``__cuda_array_interface__``:
    ``torch.as_tensor(m, device="cuda")`` or ``cupy.asarray(m)`` read them
    without a copy).
    """
    from ..metrics.chrf.metric import CHRF
    from . import _cpu

    metric = CHRF(char_order=char_order, word_order=word_order, beta=beta,
                  lowercase=lowercase, whitespace=whitespace, eps_smoothing=eps_smoothing)
    formula = metric.formula

    def units(column):
        if metric.lowercase:
            column = _cpu.lowercase(column)
        return device_units(column, formula.char_order, formula.word_order, metric.whitespace)

    kinds, orders = [], []
    for kind, top in enumerate(o for o in (formula.char_order, formula.word_order) if o > 0):
        kinds += [kind] * top
        orders += list(range(top))
    _, factor, one_plus_factor, eps = formula.kernel_args
    return _matrices(candidates, references, units, kinds, orders, 0,
                     (factor, one_plus_factor, eps), (0, 0.0, False, False, np.zeros(0)),
                     ragged)


def device_units(column, char_order: int, word_order: int, whitespace: bool):
    """chrF's units of a text column, cut on the device from its UTF-8 bytes (one launch):
    ``(hashes, start, count, region)`` as :func:`fastbleu._kernels.pairwise.chrf_units`
    gives them, the arrays on the device."""
    from .._kernels.cuda import units as kernels
    from .._kernels.cuda.loader import cuda

    context = Context(cuda)
    stream = context.stream
    offsets = np.ascontiguousarray(column.offsets, dtype=np.int64)
    n = offsets.size - 1
    kinds = int(char_order > 0) + int(word_order > 0)
    region = int(offsets[-1] - offsets[0])
    char_kind = 0 if char_order > 0 else -1
    word_kind = (1 if char_order > 0 else 0) if word_order > 0 else -1
    data = np.ascontiguousarray(column.data, dtype=np.uint8)
    hashes = cuda.device_array(max(1, kinds * region), dtype=np.uint64, stream=stream)
    start = cuda.device_array((kinds, n), dtype=np.int64, stream=stream)
    count = cuda.device_array((kinds, n), dtype=np.int64, stream=stream)
    if n:
        kernels.chrf_units[blocks(n), threads(), stream](
            cuda.to_device(data if data.size else np.zeros(1, np.uint8), stream=stream),
            cuda.to_device(offsets, stream=stream), char_kind, word_kind, bool(whitespace),
            region, hashes, start, count)
    return hashes, start, count, region


def bleu_matrix(candidates, references=None, *, ragged: bool = False, **bleu_options):
    """Sentence BLEU of every candidate against every pseudo-reference of its source, on the
    GPU: :func:`fastbleu.pairwise.bleu_matrix`'s arguments and values (Papineni et al.,
    2002; sacrebleu's ``BLEU(**bleu_options).sentence_score``).

    With the tokenizers ``13a`` (the default), ``none`` and ``char`` the text's
    UTF-8 bytes and offsets are copied to the device once and tokenized there
    (:func:`device_tokens`; lowercased first on the host with
    ``lowercase=True``); every other tokenizer (``intl``, ``zh``, ``ja-mecab``,
    ``ko-mecab``, ``spm``, ``flores101``, ``flores200``, ``spBLEU-1K``) tokenizes
    on the CPU and its token hashes are copied.
    """
    from ..metrics.bleu.metric import BLEU
    from . import _cpu

    metric = BLEU(**bleu_options)
    order, smooth, value, effective, compensated, weights, _ = metric.formula.kernel_args
    tokenizer = metric.tokenizer
    on_device = tokenizer.transform is None and tokenizer.kernel in _DEVICE_TOKENIZERS

    def units(column):
        if on_device:
            if metric.lowercase:
                column = _cpu.lowercase(column)
            return device_tokens(column, tokenizer.kernel)
        tokens = _cpu.tokenize(column, tokenizer, metric.lowercase)
        return tokens.hashes, tokens.start.reshape(1, -1), tokens.count.reshape(1, -1), \
            int(tokens.hashes.size)

    return _matrices(candidates, references, units, [0] * order, list(range(order)), 1,
                     (1.0, 2.0, False), (smooth, value, effective, compensated, weights),
                     ragged)


#: The tokenizer kernels (``Tokenizer.kernel``) that run on the device: 13a, none, char.
_DEVICE_TOKENIZERS = (TOKENIZE_13A, TOKENIZE_NONE, TOKENIZE_CHAR)


def device_tokens(column, kind: int):
    """BLEU's token hashes of a text column, tokenized on the device from its UTF-8 bytes
    (one launch) by the byte tokenizer ``kind`` (``13a``, ``none`` or ``char``'s
    ``Tokenizer.kernel``): ``(hashes, start, count, region)`` laid out as
    :func:`device_units` lays out chrF's units (one kind), the arrays on the device.
    The hashes are those of the CPU's tokenizer (``fastbleu.statistics.tokens.tokenize``).
    """
    from .._kernels.cuda import tokenize as kernels
    from .._kernels.cuda.loader import cuda

    if kind not in _DEVICE_TOKENIZERS:
        raise ValueError(f"tokenizer kernel {kind!r} does not run on the device: only 13a "
                         f"({TOKENIZE_13A}), none ({TOKENIZE_NONE}) and char "
                         f"({TOKENIZE_CHAR}) do")
    context = Context(cuda)
    stream = context.stream
    offsets = np.ascontiguousarray(column.offsets, dtype=np.int64)
    n = offsets.size - 1
    region = int(offsets[-1] - offsets[0])
    data = np.ascontiguousarray(column.data, dtype=np.uint8)
    if not data.size:
        data = np.zeros(1, np.uint8)
    hashes = cuda.device_array(max(1, region), dtype=np.uint64, stream=stream)
    start = cuda.device_array((1, n), dtype=np.int64, stream=stream)
    count = cuda.device_array((1, n), dtype=np.int64, stream=stream)
    if n:
        # The 13a segments that need preprocessing are copied into their own stretch of
        # ``scratch`` on the device, so it is allocated, not copied.
        scratch = cuda.device_array(data.size, dtype=np.uint8, stream=stream)
        kernels.bleu_tokens[blocks(n), threads(), stream](
            cuda.to_device(data, stream=stream), cuda.to_device(offsets, stream=stream),
            int(kind), scratch, hashes, start, count)
    return hashes, start, count, region


def _matrices(candidates, references, units, kinds, orders, metric, chrf_args, bleu_args,
              ragged):
    from .._kernels.cuda import pairwise as kernels
    from .._kernels.cuda.loader import cuda
    from . import _cpu

    cands, c_bounds = _sources(candidates, "candidates")
    r_bounds = c_bounds
    flat = cands
    if references is not None:
        refs, r_bounds = _sources(references, "references")
        if r_bounds.size != c_bounds.size:
            raise ValueError(f"candidates have {c_bounds.size - 1} sources but references "
                             f"have {r_bounds.size - 1}")
        flat = cands + refs
    r_base = 0 if references is None else len(cands)
    n_sizes, m_sizes = np.diff(c_bounds), np.diff(r_bounds)
    context = Context(cuda)
    stream = context.stream
    n_sources = n_sizes.size
    if ragged:
        cells = n_sizes * m_sizes
        out_start = np.concatenate(([0], np.cumsum(cells)[:-1])).astype(np.int64)
        out_stride = m_sizes.astype(np.int64)
        shape = (int(cells.sum()),)
    else:
        n_max, m_max = int(n_sizes.max(initial=0)), int(m_sizes.max(initial=0))
        out_start = np.arange(n_sources, dtype=np.int64) * (n_max * m_max)
        out_stride = np.full(n_sources, m_max, dtype=np.int64)
        shape = (n_sources, n_max, m_max)
    out, _ = context.full(shape, np.float64, np.nan)
    if flat:
        hashes, start, count, region = units(_cpu.as_text_column(flat, "candidates"))
        g, n = len(kinds), len(flat)
        to = lambda a: cuda.to_device(np.ascontiguousarray(a), stream=stream)  # noqa: E731
        on = lambda a: a if hasattr(a, "copy_to_host") else to(a)  # noqa: E731 (chrF's: there)
        d_hashes = on(hashes if hashes.size else np.zeros(1, np.uint64))
        d_start, d_count = on(start), on(count)
        d_kinds, d_orders = to(np.array(kinds, np.int64)), to(np.array(orders, np.int64))
        keys, _ = context.empty(max(1, g * region), np.uint64)
        counts, _ = context.empty(max(1, g * region), np.int32)
        lengths, _ = context.empty((g, n), np.int32)
        kernels.profiles[blocks(g * n), threads(), stream](
            d_hashes, d_start, d_count, region, d_kinds, d_orders, n, keys, counts, lengths)
        smooth, value, effective, compensated, weights = bleu_args
        kernels.pair_scores[blocks(n_sources * threads()), max(1, threads() // 2), stream](
            keys, counts, lengths, d_start, d_count, region, d_kinds, d_orders, to(c_bounds),
            r_base, to(r_bounds), metric, *chrf_args, smooth, value, effective, compensated,
            to(np.asarray(weights, np.float64)), out.reshape(out.size), to(out_start),
            to(out_stride))
        # The call waits here on purpose.  The dozen scratch arrays above are dropped at
        # return, and numba queues each free (driver._alloc_finalizer ->
        # _PendingDeallocs.add_item) and flushes the queue with cuMemFree once it holds
        # more than NUMBA_CUDA_MAX_PENDING_DEALLOCS_COUNT (10) frees, which a call of this
        # size always passes; cuMemFree waits for the device, so returning without this
        # wait would still wait, inside numba.  Keeping the scratch alive with the result
        # instead would hold ~12 bytes per text byte and order for as long as the matrix
        # lives.  This wait is explicit, and safe under an external memory manager too.
        stream.synchronize()
    if ragged:
        return [out[a:a + n * m].reshape(n, m)
                for a, n, m in zip(out_start.tolist(), n_sizes.tolist(), m_sizes.tolist())]
    return out
