"""NIST's formula kernel: statistics rows -> scores (Doddington, 2002, eq. 3).

See :class:`fastbleu.metrics.nist.formula.NISTFormula` for the row layout.
"""

import math

from numba import njit

from ..bleu.counting import AVERAGE_SCALE


@njit(cache=True, nogil=True)
def nist_scores(rows, max_order, mteval, out):
    """NIST of every statistics row (see :class:`fastbleu.metrics.nist.formula.NISTFormula`).

    A row is ``[hyp_len, ref_len, (info_int, info_hi, info_lo) * N, total_1..N]``;
    the information sums are fixed point, ``int + hi * 2**-32 + lo * 2**-64``.
    """
    two32 = 4294967296.0
    for j in range(rows.shape[0]):
        precision = 0.0
        for k in range(max_order):
            a = rows[j, 2 + 3 * k]
            b = rows[j, 3 + 3 * k]
            c = rows[j, 4 + 3 * k]
            # carry the low limbs up so that each is below 2**32, then one rounding each
            b += c >> 32
            c &= 0xFFFFFFFF
            a += b >> 32
            b &= 0xFFFFFFFF
            info = a + (b / two32 + c / (two32 * two32))
            d = rows[j, 2 + 3 * max_order + k]
            if d > 0:
                precision += info / d
        hyp_len = rows[j, 0]
        if mteval:
            ratio = hyp_len / (rows[j, 1] / AVERAGE_SCALE) if rows[j, 1] > 0 else 0.0
        else:
            ratio = (max_order * hyp_len) / rows[j, 1] if rows[j, 1] > 0 else 0.0
        if 0.0 < ratio < 1.0:
            if mteval:  # mteval-v13a's nist_length_penalty, in its order
                beta = -math.log(0.5) / math.log(1.5) / math.log(1.5)
                penalty = math.exp(-beta * math.log(ratio) * math.log(ratio))
            else:  # NLTK's
                beta = math.log(0.5) / math.log(1.5) ** 2
                penalty = math.exp(beta * math.log(ratio) ** 2)
        elif ratio >= 1.0:
            penalty = 1.0
        else:
            penalty = 0.0
        out[j] = precision * penalty
