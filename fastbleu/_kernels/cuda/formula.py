"""Statistics rows on the device -> sentence scores: sacrebleu's BLEU and NLTK's sentence BLEU.

:func:`bleu_scores` is :func:`fastbleu._kernels.formula.bleu_from_row`
operation for operation (Papineni et al., 2002; smoothing of Chen & Cherry,
2014, as sacrebleu names it), a thread per row.  The integer-to-float
conversions, divisions, additions and multiplications are IEEE double
operations in the same order, so they round the same; ``math.log`` and
``math.exp`` are CUDA's (libdevice, within 1-2 units in the last place)
instead of the C library's, so a score can differ from the CPU path's in its
last bit or two.

:func:`nltk_scores` is NLTK's ``sentence_bleu`` as
:func:`fastbleu.nltk.sentence_bleu_many` computes it: the smoothing methods
0-7 in ``fastbleu.nltk.smoothing.smooth_many``'s float arithmetic, the brevity
penalty, and ``exp(fsum(w_i * log p_i))`` over the positive precisions with
CPython's ``math.fsum`` (as NLTK's scalar ``sentence_bleu``; the vectorized
CPU function adds with numpy).  Where NLTK raises (method 6 with a zero
trigram precision) the score is NaN.
"""

import math

import numpy as np

from .loader import cuda

SMOOTH_NONE, SMOOTH_FLOOR, SMOOTH_ADD_K, SMOOTH_EXP = 0, 1, 2, 3
#: The most n-gram orders a row may have (``fastbleu._limits.MAX_NGRAM_ORDER_LIMIT``).
MAX_ORDER = 100
# Local arrays take literal sizes.
_ORDERS_1 = MAX_ORDER + 1
_ORDERS_2 = MAX_ORDER + 2
_LOG_ZERO = -9999999999.0
#: ``sys.float_info.min``: NLTK's method 0 value for a zero precision.
_FLOAT_MIN = 2.2250738585072014e-308


@cuda.jit(device=True)
def bleu_of_row(row, max_order, smooth, smooth_value, effective_order, compensated, weights,
                ref_scale, precisions):
    sys_len = row[0]
    ref_len = row[1] / ref_scale
    bp = 1.0
    if sys_len < ref_len:
        bp = math.exp(1.0 - ref_len / sys_len) if sys_len > 0 else 0.0
    any_correct = False
    for m in range(max_order):
        precisions[m] = 0.0
        if row[2 + m] != 0:
            any_correct = True
    if not any_correct:
        return 0.0
    smooth_mteval = 1.0
    eff_order = max_order
    for m in range(max_order):
        correct = float(row[2 + m])
        total = float(row[2 + max_order + m])
        if smooth == SMOOTH_ADD_K and m > 0:
            correct = correct + smooth_value
            total = total + smooth_value
        if total == 0.0:
            break
        if effective_order:
            eff_order = m + 1
        if correct == 0.0:
            if smooth == SMOOTH_EXP:
                smooth_mteval *= 2.0
                precisions[m] = 100.0 / (smooth_mteval * total)
            elif smooth == SMOOTH_FLOOR:
                precisions[m] = (100.0 * smooth_value) / total
        else:
            precisions[m] = (100.0 * correct) / total
    if weights.size:
        weighted = 0.0
        weight_sum = 0.0
        for m in range(eff_order):
            if weights[m] == 0.0:
                continue
            x = math.log(precisions[m]) if precisions[m] != 0.0 else _LOG_ZERO
            weighted += weights[m] * x
            weight_sum += weights[m]
        if weight_sum == 0.0:
            return 0.0
        return bp * math.exp(weighted / weight_sum)
    log_sum = 0.0
    compensation = 0.0
    for m in range(eff_order):
        x = math.log(precisions[m]) if precisions[m] != 0.0 else _LOG_ZERO
        if m == 0:
            log_sum = x
        elif compensated:
            t = log_sum + x
            if abs(log_sum) >= abs(x):
                compensation += (log_sum - t) + x
            else:
                compensation += (x - t) + log_sum
            log_sum = t
        else:
            log_sum = log_sum + x
    if compensated and compensation != 0.0 and math.isfinite(compensation):
        log_sum += compensation
    return bp * math.exp(log_sum / eff_order)


@cuda.jit
def bleu_scores(rows, max_order, smooth, smooth_value, effective_order, compensated, weights,
                ref_scale, out):
    """``out[i]`` = sacrebleu's BLEU of ``rows[i]`` (the formula's ``kernel_args``); NaN
    for a malformed segment's row of -1."""
    precisions = cuda.local.array(MAX_ORDER, np.float64)
    for i in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        if rows[i, 0] < 0:  # a malformed segment's row of -1 (counting.bleu_rows)
            out[i] = math.nan
            continue
        out[i] = bleu_of_row(rows[i], max_order, smooth, smooth_value, effective_order,
                             compensated, weights, ref_scale, precisions)


@cuda.jit(device=True)
def fsum(values, k, partials):
    """``math.fsum(values[:k])`` for finite values, as CPython computes it (Shewchuk)."""
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


@cuda.jit
def nltk_scores(rows, n, weights, method, epsilon, alpha, k, auto_reweigh, out):
    """``out[i]`` = NLTK's ``sentence_bleu`` of ``rows[i]`` with ``weights`` (``n`` orders,
    ``n <= MAX_ORDER``; methods 5 and 7 read order 5 of the row too)."""
    p = cuda.local.array(_ORDERS_1, np.float64)
    terms = cuda.local.array(MAX_ORDER, np.float64)
    partials = cuda.local.array(_ORDERS_2, np.float64)
    width = (rows.shape[1] - 2) // 2
    for i in range(cuda.grid(1), rows.shape[0], cuda.gridsize(1)):
        out[i] = 0.0
        if rows[i, 0] < 0:  # a malformed segment's row of -1 (counting.bleu_rows)
            out[i] = math.nan
            continue
        if rows[i, 2] == 0:
            continue  # no unigram match: NLTK returns 0 before smoothing
        hyp_len = rows[i, 0]
        ref_len = rows[i, 1]
        power = 1.0  # 2 ** (the zero counts smoothed so far), NLTK's incvnt
        for m in range(n):
            num = rows[i, 2 + m]
            den = float(max(rows[i, 2 + width + m], 1))
            p[m] = num / den
            if num == 0:
                if method == 0:
                    p[m] = _FLOAT_MIN
                elif method == 1:
                    p[m] = (0 + epsilon) / den
                elif method == 3:
                    power *= 2.0
                    p[m] = 1 / (den * power)
                elif (method == 4 or method == 7) and hyp_len > 1:
                    power *= 2.0
                    p[m] = 1 / (power * k / math.log(float(hyp_len))) / den
            if method == 2 and m > 0:
                p[m] = (num + 1) / (den + 1)
        if method == 5 or method == 7:
            p[n] = rows[i, 6] / float(max(rows[i, 2 + width + 4], 1))
            previous = p[0] + 1
            for m in range(n):
                previous = (previous + p[m] + p[m + 1]) / 3
                p[m] = previous
        elif method == 6:
            if rows[i, 4] == 0:
                out[i] = math.nan  # NLTK's assertion
                continue
            for m in range(2, n):
                before = p[m - 2]
                pi0 = 0.0 if before == 0 else p[m - 1] * p[m - 1] / before
                grams = max(hyp_len - m, 0)
                p[m] = (rows[i, 2 + m] + alpha * pi0) / (grams + alpha)
        bp = 1.0
        if hyp_len <= ref_len:
            bp = math.exp(1 - ref_len / hyp_len)
        count = 0
        if auto_reweigh and hyp_len < 4:
            for m in range(hyp_len):
                if p[m] > 0:
                    terms[count] = (1 / hyp_len) * math.log(p[m])
                    count += 1
        else:
            for m in range(n):
                if p[m] > 0:
                    terms[count] = weights[m] * math.log(p[m])
                    count += 1
        out[i] = bp * math.exp(fsum(terms, count, partials))
