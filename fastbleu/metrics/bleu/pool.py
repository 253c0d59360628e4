"""BLEU against a shared reference pool, and Self-BLEU, in linear time.

Two uses of sentence BLEU (Papineni et al., 2002) that peers run in
quadratic time:

* **a shared pool**: every hypothesis against the same ``M`` references,
  sacrebleu's ``BLEU.sentence_score(hypothesis, pool)`` (Post, 2018) for
  each hypothesis;
* **Self-BLEU** (the diversity of generated text, as in Texygen): every
  sentence against all the others, ``sentence_score(s_i, [s_j, j != i])``.

Both make ordinary BLEU statistics rows ``[hyp_len, ref_len, match_1..N,
total_1..N]``, so any :class:`~fastbleu.metrics.bleu_formula.BLEUFormula`
scores them.  The clipped matches come from one table of per-n-gram maxima
over the pool (:mod:`fastbleu._kernels.pool`): O(N + M) n-grams.  The
reference length is the pool length closest to the hypothesis length, ties
to the shorter (sacrebleu's rule), found by binary search in the sorted
lengths; for Self-BLEU the sentence's own length is left out of them.

The functions on :class:`~fastbleu.statistics.Tokens` (:func:`pool_rows`,
:func:`self_rows`) are the seam for any tokenization: text through a
metric's tokenizer, or token ids.
"""

from __future__ import annotations

import numpy as np

from ..._kernels.bleu.counting import REF_CLOSEST, REF_SHORTEST, row_width
from ..._kernels.bleu.pool import PART_RECORDS, pool_matches
from ...statistics.id_tokens import id_tokens_or_none
from ...statistics.token_ids import IDS_SIGNATURE
from ...statistics.tokens import References, Tokens
from ...inputs.text import as_text_column

__all__ = ["pool_rows", "self_rows", "closest_lengths", "closest_other_lengths",
           "text_tokens", "pool_statistics", "self_statistics"]


def closest_lengths(pool_lengths: np.ndarray, hyp_lengths: np.ndarray,
                    ref_length: int = REF_CLOSEST) -> np.ndarray:
    """Per hypothesis, the pool length closest to its length, ties to the shorter.

    With ``ref_length=REF_SHORTEST``, the shortest pool length instead.
    ``pool_lengths`` must not be empty.
    """
    lengths = np.sort(np.asarray(pool_lengths, dtype=np.int64))
    hyp = np.asarray(hyp_lengths, dtype=np.int64)
    if ref_length == REF_SHORTEST:
        return np.full(hyp.shape, lengths[0], dtype=np.int64)
    at = np.searchsorted(lengths, hyp, side="left")  # first pool length >= hyp
    above = lengths[np.minimum(at, lengths.size - 1)]
    below = lengths[np.maximum(at - 1, 0)]
    # ``below`` when it exists and is no farther than ``above`` (ties to the shorter).
    take_below = (at == lengths.size) | ((at > 0) & (hyp - below <= above - hyp))
    return np.where(take_below, below, above)


def closest_other_lengths(lengths: np.ndarray, ref_length: int = REF_CLOSEST) -> np.ndarray:
    """Per sentence, the closest length among the *other* sentences, ties to the shorter.

    With ``ref_length=REF_SHORTEST``, the shortest of the others.  Needs at
    least two sentences.
    """
    lengths = np.asarray(lengths, dtype=np.int64)
    ordered = np.sort(lengths)
    # The answer depends only on the length and on whether another sentence has it, so
    # work on the distinct lengths (few) and look each sentence's up among them.
    runs = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    values = ordered[runs]
    shared = np.diff(np.append(runs, ordered.size)) >= 2  # another sentence has the length
    d = values.size
    if ref_length == REF_SHORTEST:
        # The shortest length, unless this sentence alone has it.
        answer = np.full(d, values[0])
        if not shared[0]:
            answer[0] = values[min(1, d - 1)]
    else:
        # A length no other sentence has: the neighbouring distinct lengths.
        at = np.arange(d)
        below = values[np.maximum(at - 1, 0)]
        above = values[np.minimum(at + 1, d - 1)]
        take_below = (at > 0) & ((at == d - 1) | (values - below <= above - values))
        answer = np.where(shared, values, np.where(take_below, below, above))
    return answer[np.searchsorted(values, lengths)]


def _rows(hyp_count: np.ndarray, ref_len: np.ndarray, max_order: int) -> np.ndarray:
    out = np.empty((hyp_count.size, row_width(max_order)), dtype=np.int64)
    out[:, 0] = hyp_count
    out[:, 1] = ref_len
    for m in range(max_order):
        out[:, 2 + max_order + m] = np.maximum(hyp_count - m, 0)
    return out


def _check_tokens(tokens: Tokens, what: str) -> None:
    if tokens.count.size and int(tokens.count.min()) < 0:
        raise ValueError(f"{what} has a missing (None) sentence at index "
                         f"{int(np.argmin(tokens.count))}")


def pool_rows(hypotheses: Tokens, pool: Tokens, max_order: int,
              ref_length: int = REF_CLOSEST, part_records: int = PART_RECORDS) -> np.ndarray:
    """Statistics rows of every hypothesis against the whole pool.

    Parameters
    ----------
    hypotheses, pool : Tokens
        Token keys of the hypotheses and of the pool sentences, made the same
        way (the same tokenizer, or ids).
    max_order : int
        Highest n-gram order.
    ref_length : int
        ``REF_CLOSEST`` (sacrebleu's closest length, ties to the shorter) or
        ``REF_SHORTEST``.
    part_records : int
        The kernel's partition size in n-gram occurrences (tests lower it).

    Returns
    -------
    numpy.ndarray
        int64, ``(len(hypotheses), 2 + 2 * max_order)``: the rows sacrebleu's
        ``sentence_score(hypothesis, pool)`` computes its score from.
    """
    _check_tokens(hypotheses, "hypotheses")
    _check_tokens(pool, "the pool")
    if pool.count.size == 0:
        raise ValueError("the pool is empty: it needs at least one reference sentence")
    rows = _rows(hypotheses.count, closest_lengths(pool.count, hypotheses.count, ref_length),
                 max_order)
    if rows.shape[0]:
        pool_matches(hypotheses.hashes, hypotheses.start, hypotheses.count, pool.hashes,
                     pool.start, pool.count, max_order, False, rows, part_records)
    return rows


def self_rows(sentences: Tokens, max_order: int, ref_length: int = REF_CLOSEST,
              part_records: int = PART_RECORDS) -> np.ndarray:
    """Statistics rows of every sentence against all the other sentences (Self-BLEU).

    Parameters and rows as for :func:`pool_rows`; the clip counts and the
    reference length of sentence ``i`` leave sentence ``i`` out (one copy of
    it: a duplicate of sentence ``i`` is another sentence).

    Raises
    ------
    ValueError
        With fewer than two sentences: one sentence has no others to be
        scored against (sacrebleu and NLTK fail on an empty reference list).
    """
    _check_tokens(sentences, "sentences")
    n = sentences.count.size
    if n == 0:
        return _rows(sentences.count, sentences.count, max_order)
    if n == 1:
        raise ValueError("Self-BLEU needs at least two sentences: a single sentence has no "
                         "other sentences to be scored against")
    rows = _rows(sentences.count, closest_other_lengths(sentences.count, ref_length), max_order)
    pool_matches(sentences.hashes, sentences.start, sentences.count, sentences.hashes,
                 sentences.start, sentences.count, max_order, True, rows, part_records)
    return rows


# -- text, through a BLEU metric's tokenizer -----------------------------------------------


def text_tokens(bleu, values, name: str) -> tuple[Tokens, str]:
    """``values`` (strings) tokenized as ``bleu`` tokenizes, compacted batch by batch; or
    token ids (:class:`fastbleu.TokenIds` and the forms it takes), hashed.  Also the
    signature's ``tok`` field of this input (``"ids"``, or the tokenizer's)."""
    ids = id_tokens_or_none(values, name, bleu.lowercase)
    if ids is not None:
        return ids, IDS_SIGNATURE
    column = as_text_column(values, name)
    refs = References.cached([column], bleu.tokenizer, bleu.lowercase)
    return (Tokens(refs.hashes, np.ascontiguousarray(refs.start[0]),
                   np.ascontiguousarray(refs.count[0])), bleu.tokenizer_signature)


def _ref_length_code(bleu) -> int:
    formula = bleu.formula
    if formula.ref_length not in ("closest", "shortest"):
        raise ValueError(f"pool and Self-BLEU scores support ref_length='closest' or "
                         f"'shortest', not {formula.ref_length!r}")
    return formula.ref_length_code


def pool_statistics(bleu, hypotheses, pool) -> tuple[np.ndarray, str]:
    """Rows of :meth:`fastbleu.BLEU.pool_statistics` (see there), and the input's ``tok``."""
    if isinstance(pool, str):
        raise TypeError("pool must be a sequence of reference strings, got a single str")
    code = _ref_length_code(bleu)
    hyps, kind = text_tokens(bleu, hypotheses, "hypotheses")
    refs, pool_kind = text_tokens(bleu, pool, "pool")
    if pool_kind != kind and hyps.count.size:
        raise TypeError("hypotheses and pool must both be text or both token ids")
    return pool_rows(hyps, refs, bleu.formula.max_order, code), kind


def self_statistics(bleu, sentences) -> tuple[np.ndarray, str]:
    """Rows of :meth:`fastbleu.BLEU.self_statistics` (see there), and the input's ``tok``."""
    code = _ref_length_code(bleu)
    tokens, kind = text_tokens(bleu, sentences, "sentences")
    return self_rows(tokens, bleu.formula.max_order, code), kind
