"""Pairwise sentence scores for MBR on the device: n-gram profiles once per sentence, then
every (candidate, pseudo-reference) pair of a source by merging two sorted profiles.

:func:`profiles` (a thread per sentence and n-gram kind/order) builds the
keys of one order from the sentence's unit hashes (the CPU's ``extend_key``:
the CPU path's keys), heap-sorts them in place and folds equal keys into
``(key, count)`` runs: the sentence's *profile* of that order.  Each
sentence is profiled once, whatever the number of pairs it is in.

:func:`pair_scores` (a block per source, a thread per pair) walks the two
sorted profiles of a pair side by side, adding ``min(count_c, count_r)`` for
every common key: the clipped match count of each order (Papineni et al.,
2002; Popović, 2015).  The row it makes is the CPU kernel's
(:mod:`fastbleu._kernels.pairwise`), scored by the CPU's own chrF F-score
compiled for the device (:func:`fastbleu._kernels.chrf.formula.f_score_order`
and ``f_score_total``; no ``log``/``exp``: the CPU's value to the last bit)
or BLEU (:func:`.formula.bleu_of_row`, with CUDA's ``log``/``exp``).
"""

import numpy as np

from ..chrf.formula import f_score_order as host_f_score_order
from ..chrf.formula import f_score_total as host_f_score_total
from .formula import MAX_ORDER, bleu_of_row
from .loader import cuda
from .tokens import device_function, extend_key

METRIC_CHRF = 0
METRIC_BLEU = 1
#: The CPU's chrF F-score (sacrebleu's arithmetic), an order at a time, on the device.
f_score_order = device_function(host_f_score_order)
f_score_total = device_function(host_f_score_total)
_ROW = 2 + 2 * MAX_ORDER  # local arrays take literal sizes


@cuda.jit(device=True)
def _sift(keys, base, root, end):
    """Restore the max-heap ``keys[base:base + end]`` below ``root``."""
    while True:
        child = 2 * root + 1
        if child >= end:
            return
        if child + 1 < end and keys[base + child + 1] > keys[base + child]:
            child += 1
        if keys[base + root] >= keys[base + child]:
            return
        keys[base + root], keys[base + child] = keys[base + child], keys[base + root]
        root = child


@cuda.jit
def profiles(hashes, start, count, region, kinds, orders, n, keys, counts, lengths):
    """Profile ``g`` (kind ``kinds[g]``, order ``orders[g]``) of sentence ``x`` for every
    ``g * n + x``: sorted distinct keys at ``keys[g * region + (start[k, x] - k * region):]``,
    their counts alongside, their number in ``lengths[g, x]``."""
    for t in range(cuda.grid(1), kinds.shape[0] * n, cuda.gridsize(1)):
        g = t // n
        x = t - g * n
        k = kinds[g]
        o = orders[g]
        at = start[k, x]
        size = max(count[k, x] - o, 0)
        base = g * region + (at - k * region)
        for p in range(size):
            key = hashes[at + p]
            for j in range(1, o + 1):
                key = extend_key(key, hashes[at + p + j])
            keys[base + p] = key
        for root in range(size // 2 - 1, -1, -1):
            _sift(keys, base, root, size)
        for end in range(size - 1, 0, -1):
            keys[base], keys[base + end] = keys[base + end], keys[base]
            _sift(keys, base, 0, end)
        distinct = 0
        p = 0
        while p < size:
            key = keys[base + p]
            q = p + 1
            while q < size and keys[base + q] == key:
                q += 1
            keys[base + distinct] = key
            counts[base + distinct] = q - p
            distinct += 1
            p = q
        lengths[g, x] = distinct


@cuda.jit(device=True)
def _matches(keys, counts, a, a_len, b, b_len):
    """``sum(min(count_a, count_b))`` over the keys of two sorted profiles."""
    total = 0
    i = 0
    j = 0
    while i < a_len and j < b_len:
        ka = keys[a + i]
        kb = keys[b + j]
        if ka == kb:
            total += min(counts[a + i], counts[b + j])
            i += 1
            j += 1
        elif ka < kb:
            i += 1
        else:
            j += 1
    return total


@cuda.jit
def pair_scores(keys, counts, lengths, start, count, region, kinds, orders, c_bounds, r_base,
                r_bounds, metric, factor, one_plus_factor, eps_smoothing, smooth,
                smooth_value, effective_order, compensated, weights, out, out_start,
                out_stride):
    """``out[out_start[s] + i * out_stride[s] + j]`` = the score of candidate ``i`` of source
    ``s`` against its pseudo-reference ``j`` (a block per source, a thread per pair)."""
    row = cuda.local.array(_ROW, np.int64)
    precisions = cuda.local.array(MAX_ORDER, np.float64)
    n_orders = kinds.shape[0]
    for s in range(cuda.blockIdx.x, c_bounds.shape[0] - 1, cuda.gridDim.x):
        c0 = c_bounds[s]
        n = c_bounds[s + 1] - c0
        r0 = r_base + r_bounds[s]
        m = r_bounds[s + 1] - r_bounds[s]
        for pair in range(cuda.threadIdx.x, n * m, cuda.blockDim.x):
            i = pair // m
            j = pair - i * m
            c = c0 + i
            r = r0 + j
            score = 0.0
            effective = 0
            avg_prec = 0.0
            avg_rec = 0.0
            for g in range(n_orders):
                k = kinds[g]
                o = orders[g]
                a = g * region + (start[k, c] - k * region)
                b = g * region + (start[k, r] - k * region)
                match = _matches(keys, counts, a, lengths[g, c], b, lengths[g, r])
                hyp_total = max(count[k, c] - o, 0)
                ref_total = max(count[k, r] - o, 0)
                if metric == METRIC_BLEU:
                    row[2 + g] = match
                    row[2 + n_orders + g] = hyp_total
                    continue
                n_hyp = hyp_total if ref_total > 0 else 0  # the CPU kernel's row
                score, effective, avg_prec, avg_rec = f_score_order(
                    n_hyp, ref_total, match, factor, one_plus_factor, eps_smoothing, score,
                    effective, avg_prec, avg_rec)
            if metric == METRIC_BLEU:
                row[0] = count[0, c]
                row[1] = count[0, r]
                score = bleu_of_row(row, n_orders, smooth, smooth_value, effective_order,
                                    compensated, weights, 1.0, precisions)
            else:
                score = f_score_total(score, effective, avg_prec, avg_rec, n_orders, factor,
                                      one_plus_factor, eps_smoothing)
            out[out_start[s] + i * out_stride[s] + j] = score
