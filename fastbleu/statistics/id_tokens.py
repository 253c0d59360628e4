"""Token ids -> per-segment BLEU statistics, batch by batch (no tokenizer).

The id counterpart of :func:`fastbleu.statistics.iter_statistics`: each
batch of hypotheses and references is hashed (:meth:`TokenIds.tokens`) into
reused scratch and counted by the same kernel
(:func:`fastbleu._kernels.counting.segment_statistics`), so memory is
bounded by the batch and the statistics are those of the ids as
space-separated words under ``tokenize="none"``.

BLEU takes ids in two steps: :func:`prepare_ids` when it converts its input,
then :func:`id_batch_rows` for each batch of segments.
:func:`ids_to_tokens` is the entry point for other code that takes ids (a
whole column as :class:`~fastbleu.statistics.Tokens`).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from . import tokens as text_statistics
from .._native.codes import REF_CLOSEST
from .tokens import KERNEL_BATCH_SIZE, HashBuffer, References, Tokens, batch_rows, stacked
from .token_ids import IDS_SIGNATURE, TokenIds, as_token_ids, is_token_ids


def ids_to_tokens(values, name: str = "hypotheses", allow_null: bool = False) -> Tokens:
    """Token ids in any form :class:`~fastbleu.token_ids.TokenIds` takes -> :class:`Tokens`.

    The same structure as :func:`fastbleu.statistics.tokenize` returns for
    text (segment ``i`` is ``hashes[start[i]:start[i] + count[i]]``, count
    -1 for a missing segment; not compacted when padding was dropped), for
    kernels that read token hashes (pool and self-BLEU).

    Parameters
    ----------
    values
        Token ids: lists of ints, a 2-D array or DLPack tensor, an Arrow
        ``list<int>`` column, or a :class:`TokenIds` (offsets, ``pad_id``,
        ``eos_id``).
    name : str
        The argument's name in error messages.
    allow_null : bool
        Whether missing segments are allowed (references) or refused.
    """
    return as_token_ids(values, name, allow_null).tokens()


def id_tokens_or_none(values, name: str, lowercase: bool) -> Tokens | None:
    """``values`` as :class:`Tokens` if they are token ids, or None for text: pool and
    Self-BLEU inputs (the caller records ``tok:ids`` on itself).

    Raises
    ------
    ValueError
        With ``lowercase``, or for malformed ids.
    """
    if not is_token_ids(values):
        return None
    _check_case(lowercase)
    return ids_to_tokens(values, name)


def _check_case(lowercase: bool) -> None:
    if lowercase:
        raise ValueError("lowercase=True does not apply to token ids (ids have no case); "
                         "score them with BLEU(lowercase=False), or lowercase the text "
                         "before tokenizing it")


def id_reference_streams(references, n_segments: int) -> list[TokenIds]:
    """Reference streams of token ids, each ``n_segments`` long (None/null: missing).

    Raises
    ------
    TypeError
        If ``references`` is not a list of streams, or a stream is text.
    ValueError
        If it is empty or a stream's length differs from the hypotheses'.
    """
    if not isinstance(references, (list, tuple)):
        raise TypeError("references must be a list of reference streams, each holding the "
                        "token ids of every segment; for a single stream write [refs]")
    if len(references) == 0:
        raise ValueError("references is empty: give at least one reference stream")
    streams = []
    for r, stream in enumerate(references):
        name = f"references[{r}]"
        if not is_token_ids(stream) and not (isinstance(stream, (list, tuple)) and
                                             all(row is None for row in stream)):
            raise TypeError(f"{name} must be token ids like the hypotheses (a sequence of "
                            "ids per segment), got text or another form; for a single "
                            "stream write [refs]")
        streams.append(as_token_ids(stream, name, allow_null=True))
        if len(streams[-1]) != n_segments:
            raise ValueError(f"{name} has {len(streams[-1])} segments but the hypotheses "
                             f"have {n_segments}")
    return streams


def check_text_references(references, why: str = "the hypotheses are text; give both as "
                          "token ids or both as strings") -> None:
    """Refuse reference streams of token ids where text is needed (``why`` says why).

    Raises
    ------
    TypeError
        If a stream of ``references`` is token ids.
    """
    if isinstance(references, (list, tuple)):
        for r, stream in enumerate(references):
            if is_token_ids(stream):
                raise TypeError(f"references[{r}] holds token ids but {why}")


def prepare_ids(hypotheses, references, lowercase: bool) -> tuple[TokenIds, list[TokenIds]]:
    """A metric's arguments as token ids: the hypotheses and the reference streams.

    Raises
    ------
    ValueError
        With ``lowercase`` (ids have no case), or for malformed ids.
    TypeError
        If the references are missing (text references cached by the
        constructor do not serve ids) or not token ids.
    """
    _check_case(lowercase)
    hyps = as_token_ids(hypotheses, "hypotheses")
    if references is None:
        raise TypeError("token-id hypotheses need token-id references, given to this call "
                        "(references cached by the metric's constructor are text only)")
    return hyps, id_reference_streams(references, len(hyps))


def reference_tokens(streams: list[TokenIds], first: int, last: int,
                     buffer: HashBuffer) -> References:
    """The hashed references of segments ``first:last``, every stream in one buffer."""
    spans = [stream.span(first, last) for stream in streams]
    bases = np.cumsum([0] + spans)
    hashes = buffer.take(int(bases[-1]))
    parts = [stream.tokens(first, last, hashes[base:base + span])
             for stream, base, span in zip(streams, bases, spans)]
    start = np.stack([part.start + base for part, base in zip(parts, bases)])
    return References(hashes, start, np.stack([part.count for part in parts]))


def id_batch_rows(hypotheses: TokenIds, references: list[TokenIds], first: int, last: int,
                  max_order: int, ref_length: int,
                  buffers: tuple[HashBuffer, HashBuffer]) -> np.ndarray:
    """The rows of segments ``first:last`` of token ids, hashed into ``buffers``."""
    hyp_buffer, ref_buffer = buffers
    hyp = hypotheses.tokens(first, last, hyp_buffer.take(hypotheses.span(first, last)))
    return batch_rows(hyp, reference_tokens(references, first, last, ref_buffer), max_order,
                      ref_length)


def iter_id_statistics(hypotheses: TokenIds, references: list[TokenIds], tokenizer=None,
                       lowercase: bool = False, max_order: int = 4,
                       batch_size: int = KERNEL_BATCH_SIZE,
                       buffers: tuple[HashBuffer, HashBuffer] | None = None,
                       ref_length: int = REF_CLOSEST) -> Iterator[np.ndarray]:
    """Yield the statistics rows of consecutive batches of id segments.

    The arguments are those of :func:`fastbleu.statistics.iter_statistics`
    (``tokenizer`` and ``lowercase`` unused: ids are tokens already).
    """
    n = len(hypotheses)
    buffers = buffers or (HashBuffer(), HashBuffer())
    for first in range(0, n, batch_size):
        yield id_batch_rows(hypotheses, references, first, min(n, first + batch_size),
                            max_order, ref_length, buffers)


def compute_id_statistics(hypotheses: TokenIds, references: list[TokenIds], tokenizer=None,
                          lowercase: bool = False, max_order: int = 4,
                          buffers: tuple[HashBuffer, HashBuffer] | None = None,
                          ref_length: int = REF_CLOSEST) -> np.ndarray:
    """All statistics rows of :func:`iter_id_statistics` in one int64 array."""
    return stacked(iter_id_statistics(hypotheses, references, tokenizer, lowercase, max_order,
                                      buffers=buffers, ref_length=ref_length), max_order)


def iter_statistics(hypotheses, references, tokenizer, lowercase: bool, max_order: int,
                    batch_size: int = KERNEL_BATCH_SIZE,
                    buffers: tuple[HashBuffer, HashBuffer] | None = None,
                    ref_length: int = REF_CLOSEST) -> Iterator[np.ndarray]:
    """:func:`fastbleu.statistics.iter_statistics` for text, :func:`iter_id_statistics`
    for :class:`TokenIds` hypotheses (same arguments)."""
    run = iter_id_statistics if isinstance(hypotheses, TokenIds) else \
        text_statistics.iter_statistics
    return run(hypotheses, references, tokenizer, lowercase, max_order, batch_size, buffers,
               ref_length)

