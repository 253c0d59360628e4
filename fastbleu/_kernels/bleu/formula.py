"""Statistics row -> BLEU, bit for bit as sacrebleu 2.6 computes it.

BLEU = BP * exp(sum_n log p_n / N) (Papineni et al., 2002) with the
smoothing methods of Chen & Cherry (2014) as sacrebleu names them.  For
parity every operation follows ``sacrebleu.metrics.bleu.BLEU.compute_bleu``
in the same order and precision:

* ``BP = exp(1 - ref_len / sys_len)`` when ``sys_len < ref_len``, ``0.0`` for
  an empty hypothesis side;
* ``p_n = 100 * correct / total`` (a percentage), with ``add-k`` adding k to
  both for n > 1 before the ``total == 0`` test, ``floor`` giving
  ``100 * k / total`` and ``exp`` giving ``100 / (2**j * total)`` for the
  j-th order without matches;
* ``log`` of a zero precision is sacrebleu's ``-9999999999`` (``my_log``);
* the logs are added with Python's ``sum()``: plain left-to-right addition
  before Python 3.12, Neumaier's compensated summation from 3.12 on
  (``compensated``), with the first term entering as ``0 + x``;
* ``score = BP * exp(total_log / eff_order)``.

Two options leave sacrebleu's formula, and are used only when asked for:
``ref_scale`` > 1 divides the reference length (the exact average of
several references, see :mod:`.counting`), and non-empty ``weights`` give
``exp(sum_n w_n log p_n / sum_n w_n)`` over the orders in use instead of
the plain mean of the logs (Papineni et al., 2002, eq. 1).  An order of
weight 0 does not enter that mean at all (so ``weights=(0, 1, 0, 0)`` is the
individual bigram score, ``BP * p_2``), and the score is 0 when effective
order stops before the first order of positive weight.

Counts are int64 and are converted to float64 exactly (they stay far below
2**53), which is what Python's ``int * float`` does.
"""

import math

import numpy as np
from numba import njit

from ..._native.codes import SMOOTH_ADD_K, SMOOTH_EXP, SMOOTH_FLOOR, SMOOTH_NONE  # noqa: F401
from ..threads import for_chunks

_LOG_ZERO = -9999999999.0


@njit(cache=True, nogil=True)
def bleu_from_row(row, max_order, smooth, smooth_value, effective_order,
                  compensated, precisions, weights, ref_scale):
    """Score one statistics row; fills ``precisions`` and returns ``(score, bp)``."""
    return _bleu(row, max_order, smooth, smooth_value, effective_order, compensated,
                 precisions, weights, ref_scale, False)


@njit(cache=True, nogil=True)
def bleu_from_float32_row(row, max_order, smooth, smooth_value, effective_order,
                          compensated, precisions, weights, ref_scale):
    """``bleu_from_row`` for a float32 row, with sacrebleu's float32 precisions.

    sacrebleu's bootstrap sums resampled statistics into a float32 array and
    passes its elements to ``compute_bleu``; under numpy's promotion rules
    (NEP 50) ``100. * correct / total`` on float32 scalars is then float32
    arithmetic, rounded after every operation.  This reproduces those
    roundings (a float64 operation on float32 operands rounded to float32 is
    the correctly rounded float32 result); everything else is float64 as in
    ``bleu_from_row``.
    """
    return _bleu(row, max_order, smooth, smooth_value, effective_order, compensated,
                 precisions, weights, ref_scale, True)


@njit(cache=True, nogil=True)
def _f32(x, single):
    """``x`` rounded to float32 (and widened again) when ``single``; else ``x``."""
    return float(np.float32(x)) if single else x


@njit(cache=True, nogil=True)
def _bleu(row, max_order, smooth, smooth_value, effective_order, compensated, precisions,
          weights, ref_scale, single):
    sys_len = row[0]
    # Exact for the default ref_scale of 1: float(int) / 1.0, and sacrebleu's
    # int / int is the correctly rounded quotient of the same two integers.
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
        return 0.0, bp

    smooth_mteval = 1.0
    eff_order = max_order
    for m in range(max_order):
        correct = float(row[2 + m])
        total = float(row[2 + max_order + m])
        if smooth == SMOOTH_ADD_K and m > 0:
            # float32 += Python number: the number is cast to float32 first (NEP 50)
            correct = _f32(correct + _f32(smooth_value, single), single)
            total = _f32(total + _f32(smooth_value, single), single)
        if total == 0.0:
            break
        if effective_order:
            eff_order = m + 1
        if correct == 0.0:
            if smooth == SMOOTH_EXP:
                smooth_mteval *= 2.0
                precisions[m] = _f32(100.0 / _f32(smooth_mteval * total, single), single)
            elif smooth == SMOOTH_FLOOR:
                # 100. * smooth_value is a Python float product, then / float32
                precisions[m] = _f32(_f32(100.0 * smooth_value, single) / total, single)
        else:
            precisions[m] = _f32(_f32(100.0 * correct, single) / total, single)

    # Python's sum() over [my_log(p) for p in precisions[:eff_order]].  When a
    # term is my_log(0) the total is below -1e9 and exp() underflows to 0.0
    # however the terms are added, so the integer-vs-float subtleties of
    # sum() for that term cannot change the score.
    if weights.size:
        weighted = 0.0
        weight_sum = 0.0
        for m in range(eff_order):
            if weights[m] == 0.0:
                # A zero weight leaves the order out of the mean altogether: not even a
                # zero precision (0 * log 0) may reach it.
                continue
            x = math.log(precisions[m]) if precisions[m] != 0.0 else _LOG_ZERO
            weighted += weights[m] * x
            weight_sum += weights[m]
        if weight_sum == 0.0:
            # Effective order stopped before every weighted order (a hypothesis too
            # short for them): no weighted precision is defined, and the score is 0.
            return 0.0, bp
        return bp * math.exp(weighted / weight_sum), bp

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
    return bp * math.exp(log_sum / eff_order), bp


@njit(cache=True, nogil=True)
def chunk_scores(stats, max_order, smooth, smooth_value, effective_order, compensated,
                  weights, ref_scale, out, first, last):
    precisions = np.empty(max_order, dtype=np.float64)
    for i in range(first, last):
        out[i] = bleu_from_row(stats[i], max_order, smooth, smooth_value, effective_order,
                               compensated, precisions, weights, ref_scale)[0]


def bleu_per_row(stats, max_order, smooth, smooth_value, effective_order, compensated,
                 weights, ref_scale, out):
    """``out[i]`` = BLEU of statistics row ``i`` (sentence BLEU), on several threads."""
    for_chunks(chunk_scores, stats.shape[0], stats, max_order, smooth, smooth_value,
               effective_order, compensated, weights, ref_scale, out)


# -- the score of resampled sums (bootstrap resamples, randomization trials) ------------
#
# The resampling engines (:mod:`fastbleu.resampling`, today in
# :mod:`fastbleu.significance`) sum the statistics of a batch of resamples with the
# metric-agnostic kernels of :mod:`.resample`, then make ONE call per batch to the
# kernel below through ``BLEUFormula.resampled_scores``.  A kernel per metric, not a
# generic kernel taking the formula as a jitted function: numba compiles such a kernel
# per dispatcher type and misses its on-disk cache on every process start.
#
# ``sums[b]`` is ``[row of system 0 | row of system 1 | ...]`` (each row
# ``2 + 2 * max_order`` wide); ``out[s, offset + b]`` receives system ``s``'s BLEU.

@njit(cache=True, nogil=True)
def _score_systems(acc, n_systems, max_order, smooth, smooth_value, effective_order,
                   compensated, weights, ref_scale, precisions, out, column, single):
    width = acc.size // n_systems
    for s in range(n_systems):
        out[s, column] = _bleu(acc[s * width:(s + 1) * width], max_order, smooth, smooth_value,
                               effective_order, compensated, precisions, weights, ref_scale,
                               single)[0]


@njit(cache=True, nogil=True)
def bleu_of_sums(sums, n_systems, max_order, smooth, smooth_value, effective_order,
                 compensated, weights, ref_scale, out, offset):
    """``out[s, offset + b]`` = BLEU of system ``s`` from the int64 summed row ``sums[b]``.

    Exactly ``bleu_from_row`` of each system's slice (float64 arithmetic,
    sacrebleu's order of operations).
    """
    precisions = np.empty(max_order, dtype=np.float64)
    for b in range(sums.shape[0]):
        _score_systems(sums[b], n_systems, max_order, smooth, smooth_value, effective_order,
                       compensated, weights, ref_scale, precisions, out, offset + b, False)


@njit(cache=True, nogil=True)
def bleu_of_float32_sums(sums, n_systems, max_order, smooth, smooth_value, effective_order,
                         compensated, weights, ref_scale, out, offset):
    """``bleu_of_sums`` for float32 sums, scored as ``bleu_from_float32_row`` does.

    sacrebleu's bootstrap passes float32 sums to ``compute_bleu``, whose
    precisions are then float32 arithmetic (see ``bleu_from_float32_row``).
    """
    precisions = np.empty(max_order, dtype=np.float64)
    for b in range(sums.shape[0]):
        _score_systems(sums[b], n_systems, max_order, smooth, smooth_value, effective_order,
                       compensated, weights, ref_scale, precisions, out, offset + b, True)
