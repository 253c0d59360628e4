"""NLTK's sentence BLEU of statistics rows, bit for bit, for smoothing methods 0 and 1.

``nltk.translate.bleu_score.sentence_bleu`` ends with
``bp * math.exp(math.fsum(w_i * math.log(p_i) for ...))`` (Papineni et al.,
2002; smoothing of Chen & Cherry, 2014).  For parity this kernel follows it
operation for operation:

* ``p_i`` is ``match_i / max(1, total_i)`` as a correctly rounded double
  (what ``float()`` of NLTK's ``Fraction`` gives: both counts are exact in
  float64); a zero count becomes ``sys.float_info.min`` (method 0) or
  ``(0 + epsilon) / denominator`` (method 1);
* ``math.log`` and ``math.exp`` are the C library's, as in CPython;
* the terms are added with :func:`fsum`, CPython's ``math.fsum``
  (Shewchuk's exact partials and its final half-even correction);
* the brevity penalty is ``1`` when ``hyp_len > ref_len``, else
  ``exp(1 - ref_len / hyp_len)``;
* a row without unigram matches scores 0 (NLTK's early return), and
  ``auto_reweigh`` replaces the uniform 4-gram weights by ``1 / hyp_len``
  over the first ``hyp_len`` orders when ``hyp_len < 4``.
"""

import math

import numpy as np
from numba import njit

from ..threads import for_chunks

#: ``sys.float_info.min``: NLTK's method 0 value for a zero precision.
FLOAT_MIN = 2.2250738585072014e-308


@njit(cache=True, nogil=True)
def fsum(values, k, partials):
    """``math.fsum(values[:k])`` for finite values, as CPython computes it."""
    n = 0
    for v in range(k):
        x = values[v]
        i = 0
        for j in range(n):
            y = partials[j]
            if abs(x) < abs(y):
                x, y = y, x
            hi = x + y
            lo = y - (hi - x)
            if lo != 0.0:
                partials[i] = lo
                i += 1
            x = hi
        n = i
        if x != 0.0:
            partials[n] = x
            n += 1
    hi = 0.0
    lo = 0.0
    if n > 0:
        n -= 1
        hi = partials[n]
        while n > 0:
            x = hi
            n -= 1
            y = partials[n]
            hi = x + y
            yr = hi - x
            lo = y - yr
            if lo != 0.0:
                break
        if n > 0 and ((lo < 0.0 and partials[n - 1] < 0.0) or
                      (lo > 0.0 and partials[n - 1] > 0.0)):
            y = lo * 2.0
            x = hi + y
            yr = x - hi
            if y == yr:
                hi = x
    return hi


@njit(cache=True, nogil=True)
def _chunk(rows, n, weights, lengths, reweigh, method, epsilon, out, first, last):
    max_order = (rows.shape[1] - 2) // 2
    terms = np.empty(n + 1, dtype=np.float64)
    partials = np.empty(n + 2, dtype=np.float64)
    logs = np.empty(n, dtype=np.float64)
    for r in range(first, last):
        for k in range(weights.shape[0]):
            out[r, k] = 0.0
        if rows[r, 2] == 0:
            continue  # no unigram match: NLTK returns 0 before smoothing
        hyp_len = rows[r, 0]
        ref_len = rows[r, 1]
        for m in range(n):
            matches = rows[r, 2 + m]
            denominator = max(rows[r, 2 + max_order + m], 1)
            if matches != 0:
                p = matches / denominator
            elif method == 0:
                p = FLOAT_MIN
            else:
                p = (0 + epsilon) / denominator
            logs[m] = math.log(p)
        bp = 1.0
        if hyp_len <= ref_len:
            bp = math.exp(1 - ref_len / hyp_len)
        for k in range(weights.shape[0]):
            if reweigh[k] and hyp_len < 4:
                count = hyp_len
                for m in range(count):
                    terms[m] = (1 / hyp_len) * logs[m]
            else:
                count = lengths[k]
                for m in range(count):
                    terms[m] = weights[k, m] * logs[m]
            out[r, k] = bp * math.exp(fsum(terms, count, partials))


def nltk_sentence_scores(rows, n, weights, lengths, reweigh, method, epsilon, out):
    """NLTK's ``sentence_bleu`` of every row, for each weight tuple ``k``, into ``out[row, k]``.

    ``rows`` are int64 statistics rows (at least ``n`` orders); ``weights``
    float64 ``(k, n)``, tuple ``k`` being ``weights[k, :lengths[k]]``;
    ``reweigh[k]`` is ``auto_reweigh and tuple k == (0.25,) * 4``; ``method``
    0 or 1, ``epsilon`` method 1's value as a float.
    """
    for_chunks(_chunk, rows.shape[0], rows, n, weights, lengths, reweigh, method, epsilon, out)
