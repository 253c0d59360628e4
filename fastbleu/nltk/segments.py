"""Hypotheses and references -> the arrays of fastbleu's counting kernel.

NLTK's inputs (a sequence of hypotheses, each a sequence of tokens, and per
hypothesis a sequence of references) or Arrow ``list<string>`` columns
become :class:`Segments`: token keys with a start and a count per
hypothesis and per reference, in the layout of
:func:`fastbleu._kernels.counting.segment_statistics`, which then counts the
clipped n-gram matches of every segment in parallel.

Tokens are compared as Python compares them (``==`` and ``hash``, like
NLTK's ``Counter``): every distinct token gets a dense number in order of
first appearance, so two different tokens never share a key.  The kernel
combines token keys into n-gram keys with a polynomial hash; the numbers
pass through the splitmix64 finaliser (a bijection) first, so that those
n-gram keys behave like the random token hashes of the rest of fastbleu
(see the README's note on hashing).  Plain dense numbers would not: the
number 0 would make the bigram "x y" share the key of the unigram "y".
"""

from __future__ import annotations

import sys
from collections import defaultdict
from dataclasses import dataclass
from itertools import chain
from typing import Any, Callable

import numpy as np

from .._kernels.bleu.counting import row_width
from .._kernels.text.hashing import finish_keys
from ..inputs.text import is_string_type

__all__ = ["Segments", "prepare", "is_arrow"]


@dataclass
class Segments:
    """Tokens of ``n`` segments in the kernel's layout.

    Hypothesis ``i`` is ``hyp_keys[hyp_start[i]:hyp_start[i] + hyp_count[i]]``;
    reference ``r`` of segment ``i`` likewise with ``ref_start[r, i]`` and
    ``ref_count[r, i]`` (``-1``: segment ``i`` has fewer than ``r + 1``
    references).  ``segment(i)`` returns NLTK's ``(references, hypothesis)``
    objects of segment ``i``, for smoothing functions that need them.
    """

    hyp_keys: np.ndarray
    hyp_start: np.ndarray
    hyp_count: np.ndarray
    ref_keys: np.ndarray
    ref_start: np.ndarray
    ref_count: np.ndarray
    segment: Callable[[int], tuple[Any, Any]]

    def __len__(self) -> int:
        return self.hyp_count.size

    def statistics(self, max_order: int) -> np.ndarray:
        """``int64`` rows ``[hyp_len, closest_ref_len, match_1..N, total_1..N]``, N = ``max_order``.

        ``match_n`` is NLTK's modified precision numerator; ``total_n`` is the
        number of hypothesis n-grams (NLTK's denominator is ``max(1, total_n)``).
        """
        from .._kernels.bleu.counting import segment_statistics

        out = np.empty((len(self), row_width(max_order)), dtype=np.int64)
        if len(self):
            segment_statistics(self.hyp_keys, self.hyp_start, self.hyp_count, self.ref_keys,
                               self.ref_start, self.ref_count, max_order, out)
        return out


def numbering() -> defaultdict:
    """A dict that gives a new key the next number (0, 1, ...) when it is looked up."""
    numbers: defaultdict = defaultdict()
    numbers.default_factory = numbers.__len__
    return numbers


def _starts(counts: np.ndarray) -> np.ndarray:
    starts = np.zeros(counts.size, dtype=np.int64)
    np.cumsum(counts[:-1], out=starts[1:])
    return starts


def _reference_layout(n_refs: np.ndarray, ref_len: np.ndarray, ref_first: np.ndarray | None = None
                      ) -> tuple[np.ndarray, np.ndarray]:
    """(max refs, segments) start and count arrays for references listed segment by segment.

    Reference ``k`` (in segment order) starts at ``ref_first[k]``, by default
    right after reference ``k - 1``.
    """
    n = n_refs.size
    width = int(n_refs.max()) if n else 1
    ref_start = np.zeros((max(width, 1), n), dtype=np.int64)
    ref_count = np.full((max(width, 1), n), -1, dtype=np.int64)
    segment = np.repeat(np.arange(n, dtype=np.int64), n_refs)
    rank = np.arange(segment.size, dtype=np.int64) - np.repeat(_starts(n_refs), n_refs)
    ref_start[rank, segment] = _starts(ref_len) if ref_first is None else ref_first
    ref_count[rank, segment] = ref_len
    return ref_start, ref_count


# -- Python sequences --------------------------------------------------------------------------


def _sequence_error(value, what: str) -> TypeError:
    return TypeError(f"{what} must be a sequence of tokens (a list of str, or a str to score "
                     f"characters), not {type(value).__name__}")


def _diagnose_python(list_of_references, hypotheses, sentence: bool) -> Exception:
    """The first problem in inputs that failed the fast conversion, as a clear error."""
    hyp_name = "hypothesis" if sentence else "hypotheses[{}]"
    refs_name = "references" if sentence else "list_of_references[{}]"
    for i, hypothesis in enumerate(hypotheses):
        what = hyp_name.format(i)
        if not hasattr(hypothesis, "__len__") or not hasattr(hypothesis, "__iter__"):
            return _sequence_error(hypothesis, what)
        for token in hypothesis:
            try:
                hash(token)
            except TypeError:
                return TypeError(f"{what} contains an unhashable token {token!r} "
                                 f"({type(token).__name__}); tokens must be hashable, e.g. str")
    for i, references in enumerate(list_of_references):
        what = refs_name.format(i)
        if not hasattr(references, "__len__") or not hasattr(references, "__iter__"):
            return TypeError(f"{what} must be a sequence of references (each a sequence of "
                             f"tokens), not {type(references).__name__}")
        for j, reference in enumerate(references):
            if not hasattr(reference, "__len__") or not hasattr(reference, "__iter__"):
                return _sequence_error(reference, f"{what}[{j}]")
            for token in reference:
                try:
                    hash(token)
                except TypeError:
                    return TypeError(f"{what}[{j}] contains an unhashable token {token!r} "
                                     f"({type(token).__name__}); tokens must be hashable")
    return TypeError("the inputs changed while they were read, or a sequence's len() does "
                     "not match its items")


def _from_python(list_of_references, hypotheses, sentence: bool) -> Segments:
    # Positional access later on (a pandas Series would index by label).
    hypotheses, list_of_references = list(hypotheses), list(list_of_references)
    n = len(hypotheses)
    vocabulary = numbering()  # a new token gets the next number
    number = vocabulary.__getitem__
    try:
        hyp_count = np.fromiter(map(len, hypotheses), dtype=np.int64, count=n)
        hyp_ids = np.fromiter(map(number, chain.from_iterable(hypotheses)), dtype=np.int64,
                              count=int(hyp_count.sum()))
        n_refs = np.fromiter(map(len, list_of_references), dtype=np.int64, count=n)
        references = list(chain.from_iterable(list_of_references))
        ref_len = np.fromiter(map(len, references), dtype=np.int64, count=len(references))
        # Several systems scored against the same references share the reference
        # objects: number the tokens of each distinct object once.
        objects = np.fromiter(map(id, references), dtype=np.uint64, count=len(references))
        _, first, inverse = np.unique(objects, return_index=True, return_inverse=True)
        ref_first = None
        distinct, distinct_len = references, ref_len
        if first.size < len(references):
            order = np.argsort(first)  # distinct references in order of first appearance
            rank = np.empty_like(order)
            rank[order] = np.arange(order.size)
            distinct = [references[k] for k in first[order]]
            distinct_len = ref_len[first[order]]
            ref_first = _starts(distinct_len)[rank[inverse.reshape(-1)]]
        ref_ids = np.fromiter(map(number, chain.from_iterable(distinct)), dtype=np.int64,
                              count=int(distinct_len.sum()))
    except (TypeError, ValueError):
        raise _diagnose_python(list_of_references, hypotheses, sentence) from None
    if n and n_refs.min() == 0:
        i = int(np.argmin(n_refs))
        what = "references" if sentence else f"list_of_references[{i}]"
        raise ValueError(f"{what} is empty: every hypothesis needs at least one reference")
    ref_start, ref_count = _reference_layout(n_refs, ref_len, ref_first)
    keys = finish_keys(np.arange(len(vocabulary)))  # one key per distinct token
    return Segments(keys[hyp_ids], _starts(hyp_count), hyp_count, keys[ref_ids],
                    ref_start, ref_count,
                    lambda i: (list_of_references[i], hypotheses[i]))


# -- Arrow columns -----------------------------------------------------------------------------


def is_arrow(value) -> bool:
    """Whether ``value`` is a pyarrow Array or ChunkedArray (without importing pyarrow)."""
    pa = sys.modules.get("pyarrow")
    return pa is not None and isinstance(value, (pa.Array, pa.ChunkedArray))


def _combined(column):
    import pyarrow as pa

    if isinstance(column, pa.ChunkedArray):
        if column.num_chunks == 1:
            return column.chunk(0)
        return pa.concat_arrays(column.chunks) if column.num_chunks else \
            pa.array([], type=column.type)
    return column


def _is_list(type_) -> bool:
    import pyarrow as pa

    return pa.types.is_list(type_) or pa.types.is_large_list(type_)


def _token_lists(column, what: str):
    """``(lengths with -1 for nulls, string values)`` of a ``list<string>`` array."""
    import pyarrow as pa
    import pyarrow.compute as pc

    column = _combined(column)
    if not (_is_list(column.type) and is_string_type(column.type.value_type)):
        raise TypeError(f"{what} must be an Arrow list<string> column (one list of tokens per "
                        f"segment), not {column.type}; split the text first, e.g. with "
                        "pyarrow.compute.utf8_split_whitespace")
    lengths = pc.list_value_length(column).fill_null(-1)
    values = pc.list_flatten(column)
    if values.null_count:
        raise ValueError(f"{what} contains null tokens; drop them or replace them with strings")
    return lengths.to_numpy(zero_copy_only=False).astype(np.int64), \
        values.cast(pa.large_string())


def _dense_ids(value_arrays) -> np.ndarray:
    """Dense token numbers of the strings of several arrays, in one numbering."""
    import pyarrow as pa
    import pyarrow.compute as pc

    values = pa.concat_arrays(value_arrays) if value_arrays else pa.array([], pa.large_string())
    if len(values) == 0:
        return np.zeros(0, dtype=np.intp)
    return pc.dictionary_encode(values).indices.to_numpy(zero_copy_only=False)


def _from_arrow(list_of_references, hypotheses, sentence: bool) -> Segments:
    hyp_count, hyp_values = _token_lists(hypotheses, "hypotheses")
    n = hyp_count.size
    if n and hyp_count.min() < 0:
        raise ValueError(f"hypotheses[{int(np.argmin(hyp_count))}] is null; use an empty list "
                         "for an empty hypothesis")
    hypotheses = _combined(hypotheses)

    if is_arrow(list_of_references):
        # NLTK's layout: list<list<string>>, the references of each segment.
        outer = _combined(list_of_references)
        if not (_is_list(outer.type) and _is_list(outer.type.value_type)):
            raise TypeError("list_of_references must be an Arrow list<list<string>> column (the "
                            "references of each segment) or a list of list<string> columns (one "
                            f"per reference stream), not {outer.type}")
        if len(outer) != n:
            raise ValueError(f"list_of_references has {len(outer)} segments but hypotheses has "
                             f"{n}; they must be aligned")
        import pyarrow.compute as pc

        n_refs = pc.list_value_length(outer).fill_null(0).to_numpy(
            zero_copy_only=False).astype(np.int64)
        if n and n_refs.min() == 0:
            raise ValueError(f"list_of_references[{int(np.argmin(n_refs))}] is null or empty: "
                             "every hypothesis needs at least one reference")
        ref_len, ref_values = _token_lists(pc.list_flatten(outer), "the references")
        if ref_len.size and ref_len.min() < 0:
            raise ValueError("list_of_references contains a null reference; use an empty list "
                             "for an empty reference")
        ids = _dense_ids([hyp_values, ref_values])
        ref_start, ref_count = _reference_layout(n_refs, ref_len)

        def segment(i):
            return outer[i].as_py(), hypotheses[i].as_py()
    else:
        # Reference streams: one list<string> column per reference, nulls = missing.
        try:
            streams = list(list_of_references)
        except TypeError:
            raise TypeError("with Arrow hypotheses, list_of_references must be an Arrow "
                            "list<list<string>> column or a list of list<string> columns, not "
                            f"{type(list_of_references).__name__}") from None
        if not streams or not all(is_arrow(s) for s in streams):
            raise TypeError("with Arrow hypotheses, list_of_references must be an Arrow "
                            "list<list<string>> column or a non-empty list of Arrow "
                            "list<string> columns (one per reference stream)")
        streams = [_combined(s) for s in streams]
        counts, values = [], []
        for r, stream in enumerate(streams):
            if len(stream) != n:
                raise ValueError(f"reference stream {r} has {len(stream)} segments but "
                                 f"hypotheses has {n}; they must be aligned")
            count, value = _token_lists(stream, f"reference stream {r}")
            counts.append(count)
            values.append(value)
        ref_count = np.ascontiguousarray(np.stack(counts))
        if n and (ref_count < 0).all(axis=0).any():
            i = int(np.argmax((ref_count < 0).all(axis=0)))
            raise ValueError(f"segment {i} has no reference: every reference stream is null there")
        ref_start = np.empty_like(ref_count)
        base = 0
        for r in range(len(streams)):
            present = np.maximum(ref_count[r], 0)
            ref_start[r] = _starts(present) + base
            base += int(present.sum())
        ids = _dense_ids([hyp_values] + values)

        def segment(i):
            references = [s[i].as_py() for s in streams if s[i].is_valid]
            return references, hypotheses[i].as_py()

    keys = finish_keys(np.arange(int(ids.max()) + 1 if ids.size else 0))[ids]
    n_hyp_tokens = len(hyp_values)
    return Segments(keys[:n_hyp_tokens], _starts(hyp_count), hyp_count, keys[n_hyp_tokens:],
                    ref_start, ref_count, segment)


# -- entry point -------------------------------------------------------------------------------


def prepare(list_of_references, hypotheses, sentence: bool = False) -> Segments:
    """Validate NLTK-style or Arrow inputs and lay them out for the kernel.

    Parameters
    ----------
    list_of_references
        Per hypothesis, a sequence of references (each a sequence of hashable
        tokens); or, with Arrow hypotheses, an Arrow ``list<list<string>>``
        column or a list of Arrow ``list<string>`` columns (one per reference
        stream; a null is a missing reference).
    hypotheses
        A sequence of hypotheses (each a sequence of hashable tokens; a
        ``str`` is scored character by character, as in NLTK), or an Arrow
        ``list<string>`` column.
    sentence : bool
        Word error messages for ``sentence_bleu``'s single segment.

    Raises
    ------
    TypeError
        If an input has the wrong type (the message names the first culprit).
    ValueError
        If the inputs are not aligned, or a hypothesis has no reference.
    """
    if is_arrow(hypotheses):
        return _from_arrow(list_of_references, hypotheses, sentence)
    if is_arrow(list_of_references):
        raise TypeError("list_of_references is an Arrow column but hypotheses is not; pass "
                        "hypotheses as an Arrow list<string> column too")
    for name, value in (("hypotheses", hypotheses), ("list_of_references", list_of_references)):
        if not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
            raise TypeError(f"{name} must be a sequence (e.g. a list) with one item per "
                            f"segment, not {type(value).__name__}")
    if len(list_of_references) != len(hypotheses):
        raise ValueError(f"list_of_references has {len(list_of_references)} items but "
                         f"hypotheses has {len(hypotheses)}; there must be one list of "
                         "references per hypothesis")
    return _from_python(list_of_references, hypotheses, sentence)
