"""Statistics rows on the device -> sentence scores: sacrebleu's BLEU and NLTK's sentence BLEU.

:func:`bleu_scores` runs :func:`fastbleu._kernels.bleu.formula.bleu_from_row`
itself, compiled for the device (Papineni et al., 2002; smoothing of Chen &
Cherry, 2014, as sacrebleu names it), a thread per row.  The
integer-to-float conversions, divisions, additions and multiplications are
the same IEEE double operations in the same order, so they round the
same; ``math.log`` and ``math.exp`` are CUDA's (libdevice, within 1-2 units
in the last place) instead of the C library's, so a score can differ from
the CPU path's in its last bit or two.

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

from ..bleu.formula import bleu_from_row as host_bleu_from_row
from ..bleu.nltk_formula import fsum as host_fsum
from .loader import cuda
from .tokens import device_function

#: The most n-gram orders a row may have (``fastbleu._limits.MAX_NGRAM_ORDER_LIMIT``).
MAX_ORDER = 100
#: The CPU's sacrebleu BLEU of a row (``(score, bp)``), compiled for the device.
bleu_from_row = device_function(host_bleu_from_row)
#: CPython's ``math.fsum`` of the first ``k`` values (Shewchuk), the NLTK formula's sum: the
#: CPU kernel's own function, compiled for the device.
fsum = device_function(host_fsum)
# Local arrays take literal sizes.
_ORDERS_1 = MAX_ORDER + 1
_ORDERS_2 = MAX_ORDER + 2
#: ``sys.float_info.min``: NLTK's method 0 value for a zero precision.
_FLOAT_MIN = 2.2250738585072014e-308


@cuda.jit(device=True)
def bleu_of_row(row, max_order, smooth, smooth_value, effective_order, compensated, weights,
                ref_scale, precisions):
    """sacrebleu's BLEU of one statistics row: the CPU's
    :func:`~fastbleu._kernels.bleu.formula.bleu_from_row`, compiled for the device."""
    return bleu_from_row(row, max_order, smooth, smooth_value, effective_order, compensated,
                         precisions, weights, ref_scale)[0]


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
