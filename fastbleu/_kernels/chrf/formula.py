"""chrF statistics -> scores, in sacrebleu 2.6's order of floating-point operations.

The F-score (Popović, 2015) of a row of ``[hyp, ref, match]`` triples is
sacrebleu's ``CHRF._compute_f_score``, step for step, so that results agree
to the last bit:

* per order, precision and recall (``eps = 1e-16`` for an empty side) and
  their F-beta, summed; with ``eps_smoothing`` the score is ``100 *
  sum / orders`` (chrF++.py, NLTK and Moses);
* otherwise precision and recall are averaged over the orders where both
  sides have n-grams (sacrebleu's "effective order") and the score is the
  F-beta of the averages.

``factor`` is ``beta ** 2`` and ``one_plus_factor`` ``1 + beta ** 2``,
computed by the caller in Python (exactly, for an int ``beta``).

**float32.**  sacrebleu's bootstrap and paired tests sum resampled
statistics as ``float32`` and score those sums with the same Python code,
whose arithmetic numpy then carries out in ``float32`` wherever a float32
operand meets a Python number (NEP 50; ``eps`` and the Python ints stay
"weak").  :func:`f_score_float32` follows every operand's type through the
formula to give the same float32 results.
"""

import numpy as np
from numba import njit

_EPS = 1e-16


@njit(cache=True, nogil=True)
def f_score_order(n_hyp, n_ref, n_match, factor, one_plus_factor, eps_smoothing, score,
                  effective, avg_prec, avg_rec):
    """One order's part of :func:`f_score`: ``(score, effective, avg_prec, avg_rec)`` after
    adding an order of ``n_hyp``, ``n_ref`` and ``n_match`` n-grams (scalars only, so the
    device's pairwise kernel runs it too, without a row)."""
    prec = n_match / n_hyp if n_hyp > 0 else _EPS
    rec = n_match / n_ref if n_ref > 0 else _EPS
    if eps_smoothing:
        denom = factor * prec + rec
        score += (one_plus_factor * prec * rec / denom) if denom > 0 else _EPS
    if n_hyp > 0 and n_ref > 0:
        avg_prec += prec
        avg_rec += rec
        effective += 1
    return score, effective, avg_prec, avg_rec


@njit(cache=True, nogil=True)
def f_score_total(score, effective, avg_prec, avg_rec, orders, factor, one_plus_factor,
                  eps_smoothing):
    """:func:`f_score` from the sums :func:`f_score_order` made over ``orders`` orders."""
    if eps_smoothing:
        return 100 * score / orders
    if effective == 0:
        return 0.0
    avg_prec /= effective
    avg_rec /= effective
    if avg_prec + avg_rec:
        score = one_plus_factor * avg_prec * avg_rec
        score /= (factor * avg_prec) + avg_rec
        return 100 * score
    return 0.0


@njit(cache=True, nogil=True)
def f_score(row, column, orders, factor, one_plus_factor, eps_smoothing):
    """chrF of the ``orders`` triples of ``row`` from ``column`` on (float64)."""
    score = 0.0
    effective = 0
    avg_prec = 0.0
    avg_rec = 0.0
    for i in range(orders):
        score, effective, avg_prec, avg_rec = f_score_order(
            row[column + 3 * i], row[column + 3 * i + 1], row[column + 3 * i + 2], factor,
            one_plus_factor, eps_smoothing, score, effective, avg_prec, avg_rec)
    return f_score_total(score, effective, avg_prec, avg_rec, orders, factor,
                         one_plus_factor, eps_smoothing)


@njit(cache=True, nogil=True)
def _f32(x):
    return np.float64(np.float32(x))


@njit(cache=True, nogil=True)
def _mul(a, a32, b, b32):
    if a32 or b32:
        return np.float64(np.float32(a) * np.float32(b)), True
    return a * b, False


@njit(cache=True, nogil=True)
def _div(a, a32, b, b32):
    if a32 or b32:
        return np.float64(np.float32(a) / np.float32(b)), True
    return a / b, False


@njit(cache=True, nogil=True)
def _add(a, a32, b, b32):
    if a32 or b32:
        return np.float64(np.float32(a) + np.float32(b)), True
    return a + b, False


@njit(cache=True, nogil=True)
def f_score_float32(row, column, orders, factor, one_plus_factor, eps_smoothing):
    """chrF of float32 statistics as sacrebleu computes it on numpy float32 values.

    Each intermediate is a float64 holding either a Python float (``eps``,
    the ints) or a float32 value, with a flag saying which; an operation
    with a float32 operand rounds both operands to float32 and computes in
    float32 (numpy's rule for a float32 scalar and a Python number).
    """
    score, score32 = 0.0, False
    effective = 0
    avg_prec, prec32_sum = 0.0, False
    avg_rec, rec32_sum = 0.0, False
    for i in range(orders):
        n_hyp = _f32(row[column + 3 * i])
        n_ref = _f32(row[column + 3 * i + 1])
        n_match = _f32(row[column + 3 * i + 2])
        if n_hyp > 0:
            prec, prec32 = _div(n_match, True, n_hyp, True)
        else:
            prec, prec32 = _EPS, False
        if n_ref > 0:
            rec, rec32 = _div(n_match, True, n_ref, True)
        else:
            rec, rec32 = _EPS, False
        if eps_smoothing:
            a, a32 = _mul(factor, False, prec, prec32)
            denom, denom32 = _add(a, a32, rec, rec32)
            if denom > 0:
                t, t32 = _mul(one_plus_factor, False, prec, prec32)
                t, t32 = _mul(t, t32, rec, rec32)
                t, t32 = _div(t, t32, denom, denom32)
            else:
                t, t32 = _EPS, False
            score, score32 = _add(score, score32, t, t32)
        if n_hyp > 0 and n_ref > 0:
            avg_prec, prec32_sum = _add(avg_prec, prec32_sum, prec, prec32)
            avg_rec, rec32_sum = _add(avg_rec, rec32_sum, rec, rec32)
            effective += 1
    if eps_smoothing:
        s, s32 = _mul(100.0, False, score, score32)
        return _div(s, s32, float(orders), False)[0]
    if effective == 0:
        return 0.0
    avg_prec, prec32_sum = _div(avg_prec, prec32_sum, float(effective), False)
    avg_rec, rec32_sum = _div(avg_rec, rec32_sum, float(effective), False)
    total, _ = _add(avg_prec, prec32_sum, avg_rec, rec32_sum)
    if total:
        s, s32 = _mul(one_plus_factor, False, avg_prec, prec32_sum)
        s, s32 = _mul(s, s32, avg_rec, rec32_sum)
        d, d32 = _mul(factor, False, avg_prec, prec32_sum)
        d, d32 = _add(d, d32, avg_rec, rec32_sum)
        s, s32 = _div(s, s32, d, d32)
        return _mul(100.0, False, s, s32)[0]
    return 0.0


@njit(cache=True, nogil=True)
def chrf_per_row(rows, orders, factor, one_plus_factor, eps_smoothing, out):
    """``out[i]`` = chrF of ``rows[i]`` (int64 statistics)."""
    for i in range(rows.shape[0]):
        out[i] = f_score(rows[i], 0, orders, factor, one_plus_factor, eps_smoothing)


@njit(cache=True, nogil=True)
def chrf_of_sums(sums, n_systems, orders, factor, one_plus_factor, eps_smoothing, out,
                 offset):
    """``out[s, offset + b]`` = chrF of system ``s``'s row in ``sums[b]`` (int64 sums)."""
    width = 3 * orders
    for b in range(sums.shape[0]):
        for s in range(n_systems):
            out[s, offset + b] = f_score(sums[b], s * width, orders, factor,
                                         one_plus_factor, eps_smoothing)


@njit(cache=True, nogil=True)
def chrf_of_float32_sums(sums, n_systems, orders, factor, one_plus_factor, eps_smoothing,
                         out, offset):
    """As :func:`chrf_of_sums` for float32 sums, with sacrebleu's float32 arithmetic."""
    width = 3 * orders
    for b in range(sums.shape[0]):
        for s in range(n_systems):
            out[s, offset + b] = f_score_float32(sums[b], s * width, orders, factor,
                                                 one_plus_factor, eps_smoothing)
