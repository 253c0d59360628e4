"""Token ids -> TER statistics ``[edits, ref_length * scale]``, one row per segment.

Translation edit rate (Snover et al., 2006) as sacrebleu 2.6's
``sacrebleu/metrics/lib_ter.py`` computes it, which follows Tercom: a greedy
search that applies, one at a time, the block shift (a run of at most
``MAX_SHIFT_SIZE`` hypothesis words moved to where the reference has them)
that lowers a banded edit distance the most, until no shift helps; the
edits are the shifts plus the edit distance of the shifted hypothesis.

Every rule that can change a number is kept, in sacrebleu's order:

* the edit distance is computed in a band around the length-scaled
  diagonal (``BEAM_WIDTH`` cells each side, wider for very unequal
  lengths; the last row is whole), cells outside it being ``INF``; ties
  prefer a match or substitution, then a deletion, then an insertion, and
  the alignment read back from that trace decides which words count as
  errors and where a shifted block may go;
* candidate shifts are visited in sacrebleu's order (hypothesis start,
  reference start, growing length, then each target position once) and
  ranked by (edit-distance gain, length, earliest start, earliest target),
  the first best kept;
* a sentence stops after ``MAX_SHIFT_CANDIDATES`` candidates in all, and
  the best shift of the search that reaches that count is not applied.

What sacrebleu does only for speed is done differently, with the same
results:

* its trie cache of edit-distance rows becomes the rows of the current
  hypothesis, which every candidate shares up to the first word the shift
  moves;
* a candidate's edit distance is abandoned as soon as a whole row's
  minimum (a lower bound of the final distance) shows that the candidate
  cannot become the best shift that lowers the distance, because a
  candidate that does not lower it is never applied;
* when the band holds the whole matrix (references of up to about 24
  words, most sentences) and the reference fits in 63 bits, a candidate's
  distance is plain Levenshtein's and is computed a row per machine word,
  with the bit-parallel algorithm of Myers (1999) in Hyyrö's form for
  global distance; the rows of the current hypothesis are kept, so each
  candidate again starts where the shift begins.  Only the trace, which
  needs each cell's operation, uses the full matrix.

The distances themselves are in :mod:`fastbleu._kernels.ter_distance`
(compiled into these kernels: after editing it, touch this file).  Tokens
are compared by their 64-bit hashes (as BLEU's n-grams are).  Segments run
in chunks on the thread pool.
"""

import numpy as np
from numba import njit

from ..threads import submit_chunks
from .distance import (_alignment, _band, _bit_distance, _bit_rows, _edit_matrix, _match_masks,
                       _shifted_distance, _unbanded)

# sacrebleu's (Tercom's) limits; the band's width is in ter_distance
MAX_SHIFT_SIZE = 10
MAX_SHIFT_DIST = 50
MAX_SHIFT_CANDIDATES = 1000
#: Segments per chunk of the thread pool: a segment costs tens of microseconds.
MIN_CHUNK = 64


@njit(cache=True, nogil=True)
def _shift_into(words, n, start, length, target, out):
    """``out`` = ``words`` with ``words[start:start + length]`` moved to ``target``, as
    sacrebleu's ``_perform_shift`` slices (including its third case, a target inside
    or just after the block)."""
    k = 0
    if target < start:
        pieces = ((0, target), (start, start + length), (target, start),
                  (start + length, n))
    elif target > start + length:
        pieces = ((0, start), (start + length, target), (start, start + length),
                  (target, n))
    else:
        middle = min(n, length + target)
        pieces = ((0, start), (start + length, middle), (start, start + length),
                  (middle, n))
    for low, high in pieces:
        for t in range(low, high):
            out[k] = words[t]
            k += 1


@njit(cache=True, nogil=True)
def _better(length, start, target, best_length, best_start, best_target):
    """sacrebleu's tie-break among shifts of equal gain: longer, then earlier start, then
    earlier target."""
    if length != best_length:
        return length > best_length
    if start != best_start:
        return start < best_start
    return target < best_target


@njit(cache=True, nogil=True)
def translation_edits(hyp, ref, scratch):
    """sacrebleu's ``translation_edit_rate(hyp, ref)[0]``: shifts plus the edit distance
    of the shifted hypothesis (-1 if a trace leaves the band, where sacrebleu raises).

    ``scratch`` is a :func:`new_scratch` at least as large as these two segments need.
    """
    n, m = hyp.size, ref.size
    if m == 0:
        return n
    (words, shifted, path, align, hyp_errors, ref_errors, rows, cost, op, masks, moved,
     vp, vn, last) = scratch
    ratio, width = _band(n, m)
    unbanded = _unbanded(n, m, ratio, width)
    w = m + 1
    for t in range(n):
        words[t] = hyp[t]
    buffer_a, buffer_b = rows[:w], rows[w:2 * w]
    shifts = 0
    checked = 0
    while True:
        distance = _edit_matrix(words, ref, n, m, ratio, width, cost, op)
        if not _alignment(op, n, m, path, align, hyp_errors, ref_errors):
            return -1
        if unbanded:  # candidates' distances a word-wide row at a time
            _match_masks(words, n, ref, m, masks)
            _bit_rows(masks, n, m, vp, vn, last)
        # The best shift that lowers the distance: gain, length, start, target.  One that
        # does not lower it is never applied, so it need not be ranked.
        gain = 0
        # int64 zeros, not literals: numba would compile _better and _shift_into first
        # for Literal[int](0) arguments and then again for int64 (wasted first-run compiles)
        best_length, best_start, best_target = np.int64(0), np.int64(0), np.int64(0)
        full = False
        for start_h in range(n):
            for start_r in range(max(0, start_h - MAX_SHIFT_DIST),
                                 min(m, start_h + MAX_SHIFT_DIST + 1)):
                length = 0
                while length < MAX_SHIFT_SIZE and words[start_h + length] == \
                        ref[start_r + length]:
                    length += 1
                    # sacrebleu shifts only a block with a wrong hypothesis word, to a
                    # place with a wrong reference word, outside the block itself.
                    if hyp_errors[start_h + length] != hyp_errors[start_h] and \
                            ref_errors[start_r + length] != ref_errors[start_r] and \
                            not start_h <= align[start_r] < start_h + length:
                        previous = -1
                        for offset in range(-1, length):
                            target = 0 if start_r + offset == -1 else \
                                align[start_r + offset] + 1
                            if target == previous:
                                continue
                            previous = target
                            checked += 1
                            wins_ties = gain == 0 or _better(length, start_h, target,
                                                             best_length, best_start,
                                                             best_target)
                            # the largest distance with which this shift would be the best
                            limit = distance - gain - (0 if wins_ties else 1)
                            if gain == 0:
                                limit = distance - 1
                            first = min(start_h, target)
                            if unbanded:
                                _shift_into(masks, n, start_h, length, target, moved)
                                new = _bit_distance(moved, first, n, m, vp, vn, last)
                            else:
                                _shift_into(words, n, start_h, length, target, shifted)
                                new = _shifted_distance(shifted, ref, n, m, ratio, width,
                                                        cost, first, limit, buffer_a,
                                                        buffer_b)
                            if new <= limit:
                                gain = distance - new
                                best_length, best_start, best_target = \
                                    length, start_h, target
                        if checked >= MAX_SHIFT_CANDIDATES:
                            full = True
                            break
                    if n == start_h + length or m == start_r + length:
                        break
                if full:
                    break
            if full:
                break
        # sacrebleu checks the count before the gain: the search that reaches it
        # applies nothing.
        if full or gain <= 0:
            break
        _shift_into(words, n, best_start, best_length, best_target, shifted)
        for t in range(n):
            words[t] = shifted[t]
        shifts += 1
    return shifts + distance


@njit(cache=True, nogil=True)
def _scratch(n, m, cells):
    """Work arrays of :func:`translation_edits` for at most ``n`` hypothesis and ``m``
    reference words and ``cells`` matrix cells (``(n + 1) * (m + 1)`` of one pair)."""
    return (np.empty(n, np.uint64), np.empty(n, np.uint64), np.empty(n + m, np.int8),
            np.empty(m, np.int64), np.empty(n + 1, np.int64), np.empty(m + 1, np.int64),
            np.empty(2 * (m + 1), np.int64), np.empty(cells, np.int64),
            np.empty(cells, np.int8), np.empty(n, np.uint64), np.empty(n, np.uint64),
            np.empty(n + 1, np.uint64), np.empty(n + 1, np.uint64), np.empty(n + 1, np.int64))


def new_scratch(n: int, m: int):
    """Work arrays for :func:`translation_edits` on a segment of ``n`` hypothesis and
    ``m`` reference words (or fewer)."""
    return _scratch(max(n, 1), max(m, 1), (max(n, 1) + 1) * (max(m, 1) + 1))


@njit(cache=True, nogil=True)
def _statistics_chunk(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count, out,
                      scale, first, last):
    """``out[i] = [edits, ref_length * scale]`` for segments ``first..last``.

    The edits are the fewest of any present reference (count >= 0); the reference
    length is the mean over them, times ``scale`` (exact where the number of
    references divides it: the caller checks).  ``edits`` is -1 where sacrebleu would raise (see
    :func:`translation_edits`).  Scratch grows to the largest segment of the chunk.
    """
    # int64, not literals: _scratch is then compiled once (not for Literal[int] first)
    cap_n, cap_m, cap_cells = np.int64(1), np.int64(1), np.int64(4)
    scratch = _scratch(cap_n, cap_m, cap_cells)
    for i in range(first, last):
        n = hyp_count[i]
        hyp = hyp_hashes[hyp_start[i]:hyp_start[i] + n]
        best = -2
        total = 0
        present = 0
        for r in range(ref_start.shape[0]):
            m = ref_count[r, i]
            if m < 0:
                continue
            present += 1
            total += m
            cells = (n + 1) * (m + 1)
            if n > cap_n or m > cap_m or cells > cap_cells:
                cap_n, cap_m, cap_cells = max(cap_n, n), max(cap_m, m), max(cap_cells, cells)
                scratch = _scratch(cap_n, cap_m, cap_cells)
            edits = translation_edits(hyp, ref_hashes[ref_start[r, i]:ref_start[r, i] + m],
                                      scratch)
            if edits < 0:
                best = -1
                break
            if best == -2 or edits < best:
                best = edits
        out[i, 0] = best
        out[i, 1] = total * (scale // max(present, 1))


def ter_statistics(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count, out,
                   scale):
    """Fill ``out`` (int64, ``(n, 2)``) with TER statistics on the thread pool, the mean
    reference length times ``scale``.

    Hypothesis ``i`` is ``hyp_hashes[hyp_start[i]:hyp_start[i] + hyp_count[i]]``;
    reference ``r`` likewise with ``ref_start[r, i]`` and ``ref_count[r, i]``, a
    count below zero marking a missing reference.  The caller checks that every
    segment has at least one reference, that its number of references divides
    ``scale`` and that no pair's matrix is too large.
    """
    for future in submit_chunks(_statistics_chunk, out.shape[0], hyp_hashes, hyp_start,
                                hyp_count, ref_hashes, ref_start, ref_count, out,
                                np.int64(scale), min_chunk=MIN_CHUNK):
        future.result()
