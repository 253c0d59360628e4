"""Text columns -> token hashes -> per-segment BLEU statistics.

This module drives the kernels batch by batch so that scratch memory is
bounded by the batch, not by the corpus:

* :func:`tokenize` turns a :class:`~fastbleu.text.TextColumn` into
  :class:`Tokens` (token hashes with a start and a count per segment);
* :class:`References` holds the tokens of every reference stream of a
  corpus, compacted, so that many systems can be scored against them
  (``BLEU(references=...)``);
* :func:`iter_statistics` yields the int64 statistics rows
  ``[hyp_len, ref_len, match_1..N, total_1..N]`` batch by batch;
  :class:`BufferPairs` lends hash scratch to batches that run side by side
  (:func:`fastbleu._kernels.threads.ordered_map`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

# The kernels through fastbleu._native: compiled ahead of time when installed so (no numba
# import for a small input), else numba's JIT kernels of fastbleu._kernels.
from .._native import segment_statistics, tokenize_column
from .._native.codes import REF_CLOSEST, row_width
from ..inputs.text import TextColumn, lowercase as lowercase_column
from ..tokenizers import Tokenizer

#: Segments per batch of text (converted from Python lists, read from tables).
BATCH_SIZE = 1 << 16
#: Segments the kernels take at a time: about 16 MB of token-hash scratch a side
#: for WMT-like text, mostly still in cache when the counting kernel reads it.
KERNEL_BATCH_SIZE = 1 << 14


@dataclass(frozen=True)
class Tokens:
    """Token hashes of a column: segment ``i`` is ``hashes[start[i]:start[i] + count[i]]``.

    A count of -1 marks a missing segment (a ``None`` reference).
    """

    hashes: np.ndarray
    start: np.ndarray
    count: np.ndarray


class HashBuffer:
    """Scratch for token hashes, reused from batch to batch.

    The kernels write each chunk's hashes back to back from the chunk's first
    byte offset, so a batch needs one slot per byte; reusing the buffer saves
    the page faults of a fresh allocation for every batch.
    """

    def __init__(self):
        self._buffer = np.empty(0, dtype=np.uint64)

    def take(self, size: int) -> np.ndarray:
        if self._buffer.size < size:
            self._buffer = np.empty(max(size, int(self._buffer.size * 1.5)), dtype=np.uint64)
        return self._buffer[:size]


class BufferPairs:
    """(hypothesis, reference) :class:`HashBuffer` pairs lent to batches that run at once.

    A batch borrows a pair for its duration (:meth:`lend`, :meth:`borrowed`)
    and gives it back, so there are only as many pairs as batches ever ran
    side by side (the pool's threads), each reused by later batches; ``first``
    is a caller's pair, lent first.  A table job hands one object to all of
    its record batches (:meth:`of`), so that the pairs outlive a record batch:
    a fresh pair would cost its page faults again in every batch.
    """

    def __init__(self, first: tuple[HashBuffer, HashBuffer] | None = None):
        self._free: list[tuple[HashBuffer, HashBuffer]] = [] if first is None else [first]

    @classmethod
    def of(cls, buffers: BufferPairs | tuple[HashBuffer, HashBuffer] | None) -> BufferPairs:
        """``buffers`` itself if it is a BufferPairs, else one that lends that pair first."""
        return buffers if isinstance(buffers, BufferPairs) else cls(buffers)

    @contextmanager
    def borrowed(self) -> Iterator[tuple[HashBuffer, HashBuffer]]:
        """A free pair (a new one if none is free) for the ``with`` block."""
        try:
            pair = self._free.pop()  # atomic: list.pop and append hold the GIL
        except IndexError:
            pair = (HashBuffer(), HashBuffer())
        try:
            yield pair
        finally:
            self._free.append(pair)

    def lend(self, work):
        """``work`` with a free pair as its last argument, giving the pair back after."""
        def run(*args):
            with self.borrowed() as pair:
                return work(*args, pair)
        return run


def _span(column: TextColumn) -> int:
    return int(column.offsets[-1] - column.offsets[0])


def _tokenize_into(column: TextColumn, tokenizer: Tokenizer, hashes: np.ndarray) -> Tokens:
    """Tokenize a (lowercased if need be) column into ``hashes`` (``_span(column)`` slots)."""
    offsets = column.offsets
    n = len(column)
    count = np.empty(n, dtype=np.int64)
    start = np.empty(n, dtype=np.int64)
    if n:
        tokenize_column(column.data, offsets, tokenizer.kernel, hashes, count, start)
    if column.valid is not None:
        count[~column.valid] = -1
    return Tokens(hashes, start, count)


def _prepare(column: TextColumn, tokenizer: Tokenizer, lowercase: bool) -> TextColumn:
    """The text the kernel reads: lowercased if asked (sacrebleu lowercases first), then
    run through the tokenizer's Python stage if it has one (MeCab, sentencepiece)."""
    if lowercase:
        column = lowercase_column(column)
    if tokenizer.transform is not None:
        column = tokenizer.transform(column)
    return column


def tokenize(column: TextColumn, tokenizer: Tokenizer, lowercase: bool,
             buffer: HashBuffer | None = None) -> Tokens:
    """Tokenize every segment of ``column`` into 64-bit token hashes.

    The hashes go to ``buffer`` when one is given (it is reused by the next
    call), else to a new array.
    """
    column = _prepare(column, tokenizer, lowercase)
    return _tokenize_into(column, tokenizer, (buffer or HashBuffer()).take(_span(column)))


def compact(tokens: Tokens) -> Tokens:
    """The same tokens with the unused scratch slots between segments removed."""
    count = np.maximum(tokens.count, 0)
    new_start = np.cumsum(count) - count
    gather = np.arange(int(count.sum()), dtype=np.int64)
    gather += np.repeat(tokens.start - new_start, count)
    return Tokens(tokens.hashes[gather], new_start, tokens.count)


def _tokenize_streams(streams: list[TextColumn], tokenizer: Tokenizer, lowercase: bool,
                      buffer: HashBuffer | None = None
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Tokenize several aligned streams into one hash buffer (not compacted)."""
    streams = [_prepare(stream, tokenizer, lowercase) for stream in streams]
    # Each stream straight into its own slice of one buffer: their sizes are
    # known once they are lowercased (and through a Python tokenizer).
    bases = np.cumsum([0] + [_span(stream) for stream in streams])
    hashes = (buffer or HashBuffer()).take(int(bases[-1]))
    parts = [_tokenize_into(stream, tokenizer, hashes[base:base + _span(stream)])
             for stream, base in zip(streams, bases)]
    start = np.stack([part.start + base for part, base in zip(parts, bases)])
    count = np.stack([part.count for part in parts])
    return hashes, start, count


def reference_presence(streams: list[TextColumn]) -> np.ndarray:
    """``bool`` array (streams x segments): whether each reference is present."""
    n = len(streams[0])
    return np.stack([np.ones(n, dtype=bool) if s.valid is None else s.valid for s in streams])


def check_references(present: np.ndarray) -> int:
    """Validate reference presence; return sacrebleu's ``num_refs`` (-1 = variable).

    Raises
    ------
    ValueError
        If a segment has no reference at all (every stream is None there);
        sacrebleu would fail on it with an unrelated error.
    """
    per_segment = present.sum(axis=0)
    if per_segment.size == 0:
        return present.shape[0]
    if (per_segment == 0).any():
        i = int(np.flatnonzero(per_segment == 0)[0])
        raise ValueError(f"segment {i} has no reference: every reference stream is None there")
    low, high = int(per_segment.min()), int(per_segment.max())
    return low if low == high else -1


class References:
    """The tokenized reference streams of a corpus.

    Reference ``r`` of segment ``i`` is ``hashes[start[r, i]:start[r, i] + count[r, i]]``;
    a count of -1 marks a missing (``None``) reference, which is dropped,
    while an empty string is a real zero-length reference (as in sacrebleu).
    """

    def __init__(self, hashes: np.ndarray, start: np.ndarray, count: np.ndarray):
        self.hashes = hashes
        self.start = start
        self.count = count

    @classmethod
    def tokenized(cls, streams: list[TextColumn], tokenizer: Tokenizer, lowercase: bool,
                  buffer: HashBuffer | None = None) -> References:
        """Tokenize aligned streams for one batch of segments (into ``buffer`` if given)."""
        return cls(*_tokenize_streams(streams, tokenizer, lowercase, buffer))

    @classmethod
    def cached(cls, streams: list[TextColumn], tokenizer: Tokenizer, lowercase: bool,
               batch_size: int = BATCH_SIZE) -> References:
        """Tokenize and compact whole streams, batch by batch, to keep for many systems."""
        n = len(streams[0])
        hashes, starts, counts = [], [], []
        offset = 0
        for first in range(0, max(n, 1), batch_size):
            last = min(n, first + batch_size)
            h, s, c = _tokenize_streams([x.slice(first, last) for x in streams],
                                        tokenizer, lowercase)
            flat = compact(Tokens(h, s.ravel(), c.ravel()))
            hashes.append(flat.hashes)
            starts.append(flat.start.reshape(s.shape) + offset)
            counts.append(c)
            offset += flat.hashes.size
        return cls(np.concatenate(hashes), np.concatenate(starts, axis=1),
                   np.concatenate(counts, axis=1))

    def __len__(self) -> int:
        return self.count.shape[1]

    def presence(self) -> np.ndarray:
        """``bool`` array (streams x segments): whether each reference is present."""
        return self.count >= 0

    def slice(self, first: int, last: int) -> References:
        """Segments ``first:last``, sharing the hash buffer."""
        return References(self.hashes, np.ascontiguousarray(self.start[:, first:last]),
                          np.ascontiguousarray(self.count[:, first:last]))


def iter_statistics(hypotheses: TextColumn, references: References | list[TextColumn],
                    tokenizer: Tokenizer, lowercase: bool, max_order: int,
                    batch_size: int = KERNEL_BATCH_SIZE,
                    buffers: BufferPairs | tuple[HashBuffer, HashBuffer] | None = None,
                    ref_length: int = REF_CLOSEST) -> Iterator[np.ndarray]:
    """Yield the statistics rows of consecutive batches of segments.

    ``references`` is either a cached :class:`References` or the reference
    streams as text, which are then tokenized batch by batch with the
    hypotheses.  ``buffers``, a (hypothesis, reference) pair or a
    :class:`BufferPairs`, lets a caller that streams a table reuse the hash
    scratch across its own batches; a BufferPairs also keeps the pairs of the
    batches that ran beside the first.

    The batches are of even sizes (:func:`even_bounds`).  When there are
    several, each runs whole on a thread of the pool, as many at once as it
    has threads (:func:`fastbleu._kernels.threads.ordered_map`): one
    hand-over per batch rather than a fork-join per kernel call.
    """
    n = len(hypotheses)
    lend = BufferPairs.of(buffers).lend
    if n <= batch_size:  # one batch, here (no numba import for a small input)
        if n:
            yield lend(_batch_rows)(hypotheses, references, tokenizer, lowercase, max_order,
                                    ref_length)
        return
    from .._kernels.threads import ordered_map, pool_size  # imports numba; large inputs use it

    bounds = even_bounds(n, batch_size, pool_size())

    def rows(k: int, pair: tuple[HashBuffer, HashBuffer]) -> np.ndarray:
        first, last = bounds[k], bounds[k + 1]
        refs = references.slice(first, last) if isinstance(references, References) else \
            [s.slice(first, last) for s in references]
        return _batch_rows(hypotheses.slice(first, last), refs, tokenizer, lowercase, max_order,
                           ref_length, pair)

    yield from ordered_map(lend(rows), range(len(bounds) - 1))


def _batch_rows(hypotheses: TextColumn, references: References | list[TextColumn],
                tokenizer: Tokenizer, lowercase: bool, max_order: int, ref_length: int,
                pair: tuple[HashBuffer, HashBuffer]) -> np.ndarray:
    """The rows of one batch: tokenize both sides (into ``pair``), then count."""
    hyp = tokenize(hypotheses, tokenizer, lowercase, pair[0])
    if not isinstance(references, References):
        references = References.tokenized(references, tokenizer, lowercase, pair[1])
    return batch_rows(hyp, references, max_order, ref_length)


def even_bounds(n: int, batch_size: int, threads: int = 1) -> list[int]:
    """Bounds ``[0, ..., n]`` of batches of even sizes, at most ``batch_size`` segments.

    The fewest such batches, but up to ``4 * threads`` if each still has
    ``batch_size // 2`` segments, so that a mid-size input keeps a many-core
    pool busy to its end (a thread that finishes early takes another batch
    instead of waiting for the slowest).  Even sizes leave no small last
    batch: each batch is a pool thread's job, and with the ahead-of-time
    kernels a job under ``2 * MIN_CHUNK`` segments would run them holding the GIL.
    """
    pieces = max(1, -(-n // batch_size), min(4 * threads, n // max(1, batch_size // 2)))
    return [n * k // pieces for k in range(pieces + 1)]


def batch_rows(hyp: Tokens, refs: References, max_order: int, ref_length: int) -> np.ndarray:
    """The statistics rows of one batch of tokenized segments (the counting kernel)."""
    stats = np.empty((hyp.count.size, row_width(max_order)), dtype=np.int64)
    segment_statistics(hyp.hashes, hyp.start, hyp.count, refs.hashes, refs.start,
                       refs.count, max_order, stats, ref_length)
    return stats


def stacked(batches, max_order: int) -> np.ndarray:
    """Batches of statistics rows as one int64 array (no copy for a single batch)."""
    batches = list(batches)
    if not batches:
        return np.zeros((0, row_width(max_order)), dtype=np.int64)
    return np.concatenate(batches) if len(batches) > 1 else batches[0]


def compute_statistics(hypotheses: TextColumn, references: References | list[TextColumn],
                       tokenizer: Tokenizer, lowercase: bool, max_order: int,
                       buffers: BufferPairs | tuple[HashBuffer, HashBuffer] | None = None,
                       ref_length: int = REF_CLOSEST) -> np.ndarray:
    """All statistics rows of :func:`iter_statistics` in one int64 array."""
    return stacked(iter_statistics(hypotheses, references, tokenizer, lowercase, max_order,
                                   buffers=buffers, ref_length=ref_length), max_order)
