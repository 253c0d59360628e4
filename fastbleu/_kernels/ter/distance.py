"""The edit distances of TER's shift search: banded with a trace, banded, and bit-parallel.

sacrebleu 2.6 (``sacrebleu/metrics/lib_ter.py``, after Tercom) computes the
edit distance between a hypothesis and a reference in a band around the
length-scaled diagonal: ``BEAM_WIDTH`` cells each side (more for very
unequal lengths), the last row whole, every cell outside the band ``INF``.
The band changes distances on long, unequal sentences, so it is kept.

* :func:`_edit_matrix` fills the whole banded matrix with each cell's
  operation (ties: match or substitution, then deletion, then insertion,
  sacrebleu's order), and :func:`_alignment` reads the trace back into the
  alignment and error flags the shift search needs.
* :func:`_shifted_distance` gives a candidate's distance from a row the
  candidate shares with the current hypothesis, two rows of the band at a
  time, and stops once a row's minimum exceeds what could still win.
* When the band holds every cell and the reference fits in 63 bits
  (:func:`_unbanded`), the distance is plain Levenshtein's, computed a row
  per machine word (:func:`_bit_row`: Myers, 1999, in Hyyrö's form for
  global distance).

The search in :mod:`fastbleu._kernels.ter` compiles these in; numba's
on-disk cache checks only the file of the kernel it loads, so after editing
this file touch that one (or clear the cache).
"""

import math

import numpy as np
from numba import njit

BEAM_WIDTH = 25
#: sacrebleu's ``_INT_INFINITY``: the cost of a cell outside the band.
INF = 10 ** 16

# Edit operations of the trace (sacrebleu's ' ', 's', 'i', 'd', 'x').
_NOP = 0
_SUB = 1
_INS = 2  # consumes a reference word
_DEL = 3  # consumes a hypothesis word
_UNDEF = 4


@njit(cache=True, nogil=True)
def _band(n, m):
    """sacrebleu's length ratio and band half-width for ``n`` hypothesis and ``m`` reference
    words (a shift keeps ``n``, so every candidate uses the same band)."""
    ratio = m / n if n > 0 else 1.0
    width = BEAM_WIDTH
    if BEAM_WIDTH < ratio / 2:
        width = int(math.ceil(ratio / 2 + BEAM_WIDTH))
    return ratio, width


@njit(cache=True, nogil=True)
def _row_bounds(i, n, m, ratio, width):
    """The columns ``[low, high)`` row ``i`` computes (the last row: all from ``low``)."""
    diagonal = int(math.floor(i * ratio))
    low = max(0, diagonal - width)
    high = min(m + 1, diagonal + width)
    if i == n:
        high = m + 1
    return low, high


@njit(cache=True, nogil=True)
def _edit_matrix(words, ref, n, m, ratio, width, cost, op):
    """The banded edit-distance matrix of ``words`` against ``ref`` with each cell's
    operation (row-major, ``m + 1`` columns); returns the distance."""
    w = m + 1
    for j in range(w):
        cost[j] = j
        op[j] = _INS
    for i in range(1, n + 1):
        row = i * w
        above = row - w
        low, high = _row_bounds(i, n, m, ratio, width)
        for j in range(low):  # outside the band (inside, every cell is written below)
            cost[row + j] = INF
            op[row + j] = _UNDEF
        for j in range(high, w):
            cost[row + j] = INF
            op[row + j] = _UNDEF
        word = words[i - 1]
        for j in range(low, high):
            if j == 0:
                cost[row] = cost[above] + 1
                op[row] = _DEL
                continue
            # sacrebleu tries match/substitution, deletion, insertion, keeping the first
            # strictly cheaper one: that order decides the trace, hence the alignment.
            best = INF
            best_op = _UNDEF
            if word == ref[j - 1]:
                diagonal, diagonal_op = cost[above + j - 1], _NOP
            else:
                diagonal, diagonal_op = cost[above + j - 1] + 1, _SUB
            if best > diagonal:
                best, best_op = diagonal, diagonal_op
            if best > cost[above + j] + 1:
                best, best_op = cost[above + j] + 1, _DEL
            if best > cost[row + j - 1] + 1:
                best, best_op = cost[row + j - 1] + 1, _INS
            cost[row + j] = best
            op[row + j] = best_op
    return cost[n * w + m]


@njit(cache=True, nogil=True)
def _alignment(op, n, m, path, align, hyp_errors, ref_errors):
    """Read the trace back from the matrix's last cell; fill ``align`` (reference word ->
    the hypothesis position before which it sits, sacrebleu's ``align``) and the
    running error counts ``hyp_errors`` (``n + 1``) and ``ref_errors`` (``m + 1``).

    Returns False if the trace meets a cell outside the band (sacrebleu raises).
    """
    w = m + 1
    i, j, k = n, m, 0
    while i > 0 or j > 0:
        o = op[i * w + j]
        path[k] = o
        k += 1
        if o == _NOP or o == _SUB:
            i -= 1
            j -= 1
        elif o == _INS:
            j -= 1
        elif o == _DEL:
            i -= 1
        else:
            return False
    # sacrebleu flips the trace (insertions <-> deletions) and reads it forwards.
    h, r = -1, -1
    hyp_errors[0] = 0
    ref_errors[0] = 0
    for t in range(k - 1, -1, -1):
        o = path[t]
        if o == _NOP or o == _SUB:
            error = 1 if o == _SUB else 0
            h += 1
            r += 1
            align[r] = h
            hyp_errors[h + 1] = hyp_errors[h] + error
            ref_errors[r + 1] = ref_errors[r] + error
        elif o == _DEL:
            h += 1
            hyp_errors[h + 1] = hyp_errors[h] + 1
        else:
            r += 1
            align[r] = h
            ref_errors[r + 1] = ref_errors[r] + 1
    return True


@njit(cache=True, nogil=True)
def _shifted_distance(shifted, ref, n, m, ratio, width, cost, first, limit, buffer_a, buffer_b):
    """The banded edit distance of ``shifted``, from row ``first`` of ``cost`` (the rows
    of a hypothesis with the same first ``first`` words) on; any value above ``limit``
    once a whole row's minimum exceeds ``limit`` (no later cell can be lower).

    Only the band of a row is computed, and only the cells the next row reads outside
    it are set to ``INF`` (sacrebleu's rows are ``INF`` outside the band).
    """
    w = m + 1
    above = cost[first * w:(first + 1) * w]  # whole: INF outside its band
    lowest = INF
    for j in range(w):
        lowest = min(lowest, above[j])
    if lowest > limit:
        return lowest
    row = buffer_a
    above_high = w
    in_a = True
    for i in range(first + 1, n + 1):
        low, high = _row_bounds(i, n, m, ratio, width)
        for j in range(above_high, high):
            above[j] = INF
        if low > 0:
            row[low - 1] = INF
        word = shifted[i - 1]
        lowest = INF
        for j in range(low, high):
            if j == 0:
                value = above[0] + 1
            else:
                value = min(INF, above[j - 1] + (0 if word == ref[j - 1] else 1))
                value = min(value, above[j] + 1)
                value = min(value, row[j - 1] + 1)
            row[j] = value
            lowest = min(lowest, value)
        if lowest > limit:
            return lowest
        above_high = high
        above = row
        in_a = not in_a
        row = buffer_a if in_a else buffer_b
    return above[m]


_ONE = np.uint64(1)


@njit(cache=True, nogil=True)
def _unbanded(n, m, ratio, width):
    """Whether the band holds every cell (then the distance is plain Levenshtein's) and the
    reference fits in a machine word: the case of the bit-parallel distance."""
    if m > 63:
        return False
    for i in range(1, n + 1):
        low, high = _row_bounds(i, n, m, ratio, width)
        if low != 0 or high != m + 1:
            return False
    return True


@njit(cache=True, nogil=True)
def _match_masks(words, n, ref, m, masks):
    """``masks[i]``: bit ``j`` set where ``ref[j] == words[i]``."""
    for i in range(n):
        mask = np.uint64(0)
        word = words[i]
        for j in range(m):
            if ref[j] == word:
                mask |= _ONE << np.uint64(j)
        masks[i] = mask


@njit(cache=True, nogil=True)
def _bit_row(mask, positive, negative, score, top):
    """One row of the Levenshtein matrix, a machine word at a time (Myers, 1999, in Hyyrö's
    global-distance form): ``positive``/``negative`` flag the columns where the row rises
    or falls by one from the column before, ``score`` is its last cell, ``mask`` the
    columns whose reference word equals this row's word."""
    x = mask | negative
    d0 = (((x & positive) + positive) ^ positive) | x
    h_negative = positive & d0
    h_positive = negative | ~(d0 | positive)
    if h_positive & top:
        score += 1
    elif h_negative & top:
        score -= 1
    x = (h_positive << _ONE) | _ONE  # column 0 grows by one a row
    return (h_negative << _ONE) | ~(x | d0), x & d0, score


@njit(cache=True, nogil=True)
def _bit_rows(masks, n, m, vp, vn, last):
    """Every row of the Levenshtein matrix of the words with these ``masks``: row ``i`` is
    ``vp[i], vn[i], last[i]`` (see :func:`_bit_row`)."""
    top = _ONE << np.uint64(m - 1)
    positive, negative, score = (_ONE << np.uint64(m)) - _ONE, np.uint64(0), m
    vp[0], vn[0], last[0] = positive, negative, score
    for i in range(1, n + 1):
        positive, negative, score = _bit_row(masks[i - 1], positive, negative, score, top)
        vp[i], vn[i], last[i] = positive, negative, score


@njit(cache=True, nogil=True)
def _bit_distance(masks, first, n, m, vp, vn, last):
    """The Levenshtein distance of words with these ``masks`` whose first ``first`` words
    are those of the rows ``vp``, ``vn``, ``last`` (of :func:`_bit_rows`)."""
    top = _ONE << np.uint64(m - 1)
    positive, negative, score = vp[first], vn[first], last[first]
    for i in range(first + 1, n + 1):
        positive, negative, score = _bit_row(masks[i - 1], positive, negative, score, top)
    return score
