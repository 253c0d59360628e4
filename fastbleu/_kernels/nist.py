"""NIST kernels (Doddington, 2002): information weights and per-segment weighted matches.

Two steps over token hashes in the layout of :mod:`fastbleu._kernels.counting`
(segment ``i``'s hypothesis is ``hyp_hashes[hyp_start[i]:][:hyp_count[i]]``,
reference ``r`` likewise with ``ref_start[r, i]``/``ref_count[r, i]``, a
negative count marking a missing reference):

* :func:`information_weights` counts every reference n-gram of the whole input
  (orders 1..N, every present reference, a repeated reference counted each
  time, as NLTK counts them) and gives each n-gram occurrence its
  information weight ``Info(w1..wk) = log2(count(w1..wk-1) / count(w1..wk))``,
  the count of the empty prefix being the number of reference words;
* :func:`segment_matches` gives every segment and order its information-weighted
  matches, its hypothesis n-gram count and the reference length it uses.

N-grams are 64-bit polynomial keys of the token hashes
(:func:`~fastbleu._kernels.hashing.extend_key`), compared only within one
order, as everywhere in fastbleu (see the README's note on hashing).

Float arithmetic follows the reference implementations operation by
operation, because NLTK's numbers are reproduced bit for bit:

* NLTK's weight is ``math.log(prefix / count, 2)``, which CPython computes as
  ``log(prefix / count) / log(2.0)``; mteval-v13a's is
  ``-log(count / prefix) / log(2)`` (Perl's unary minus binds first);
* NLTK's numerator of a (segment, reference, order) is Python's
  ``sum(weight * count ...)`` over the clipped n-grams in order of first
  appearance in the hypothesis; ``sum`` of floats adds left to right up to
  Python 3.11 and uses Neumaier's compensated summation from 3.12 on
  (``compensated``), both reproduced here.
"""

import math

import numpy as np
from numba import njit

from .hashing import extend_key
from .threads import for_chunks
from .counting import AVERAGE_SCALE


@njit(cache=True, nogil=True)
def _slot_bases(ref_count):
    """Per (reference, segment) slot, where its tokens start in a compact numbering."""
    n_refs, n = ref_count.shape
    base = np.zeros((n_refs, n), dtype=np.int64)
    total = 0
    for i in range(n):
        for r in range(n_refs):
            base[r, i] = total
            if ref_count[r, i] > 0:
                total += ref_count[r, i]
    return base, total


@njit(cache=True, nogil=True)
def _ngram_keys(hashes, start, length, max_order, keys):
    """``keys[k, p]`` = key of the (k+1)-gram starting at token ``p`` (where it fits)."""
    for p in range(length):
        key = np.uint64(0)
        for k in range(min(max_order, length - p)):
            key = extend_key(key, hashes[start + p + k])
            keys[k, p] = key


@njit(cache=True, nogil=True)
def information_weights(ref_hashes, ref_start, ref_count, max_order, mteval,
                        zero_hash=np.uint64(0)):
    """Information weight of every reference n-gram occurrence.

    With ``mteval``, the weights are mteval-v13a's expression, including its
    quirk: a bigram whose first word is ``0`` (token hash ``zero_hash``;
    0 for none) is weighed as a unigram (``count / reference words``),
    because Perl reads the prefix string ``"0"`` as false.

    Returns
    -------
    base : int64 (n_refs, n_segments)
        Where each reference's tokens start in the compact numbering.
    weights : float64 (max_order, n_tokens)
        ``weights[k, base[r, i] + p]``: the weight of the (k+1)-gram starting
        at token ``p`` of reference ``r`` of segment ``i`` (where it fits).
    """
    base, total = _slot_bases(ref_count)
    n_refs, n = ref_count.shape
    keys = np.zeros((max_order, total), dtype=np.uint64)
    remaining = np.zeros(total, dtype=np.int64)  # tokens from here to the reference's end
    for i in range(n):
        for r in range(n_refs):
            c = ref_count[r, i]
            if c <= 0:
                continue
            b = base[r, i]
            _ngram_keys(ref_hashes, ref_start[r, i], c, max_order, keys[:, b:b + c])
            for p in range(c):
                remaining[b + p] = c - p
    counts = np.zeros((max_order, total), dtype=np.int64)
    for k in range(max_order):
        where = np.flatnonzero(remaining > k)
        m = where.size
        if m == 0:
            continue
        sub = keys[k][where]
        order = np.argsort(sub)
        j = 0
        while j < m:
            key = sub[order[j]]
            e = j + 1
            while e < m and sub[order[e]] == key:
                e += 1
            for t in range(j, e):
                counts[k, where[order[t]]] = e - j
            j = e
    weights = np.zeros((max_order, total), dtype=np.float64)
    log2 = math.log(2.0)
    for k in range(max_order):
        for q in range(total):
            if remaining[q] <= k:
                continue
            prefix = total if k == 0 else counts[k - 1, q]
            if mteval and k == 1 and zero_hash != 0 and keys[0, q] == zero_hash:
                prefix = total
            if mteval:
                weights[k, q] = -math.log(counts[k, q] / prefix) / log2
            else:
                weights[k, q] = math.log(prefix / counts[k, q]) / log2
    return base, weights


@njit(cache=True, nogil=True)
def _distinct_in_order(keys, m, out_keys, out_counts):
    """Distinct values of ``keys[:m]`` in order of first appearance, with their counts."""
    order = np.argsort(keys[:m], kind="mergesort")  # stable: a run starts at its first
    firsts = np.empty(m, dtype=np.int64)
    runs = np.empty(m, dtype=np.int64)
    g = 0
    j = 0
    while j < m:
        key = keys[order[j]]
        e = j + 1
        while e < m and keys[order[e]] == key:
            e += 1
        firsts[g] = order[j]
        runs[g] = e - j
        g += 1
        j = e
    by_first = np.argsort(firsts[:g])
    for t in range(g):
        out_keys[t] = keys[firsts[by_first[t]]]
        out_counts[t] = runs[by_first[t]]
    return g


@njit(cache=True, nogil=True)
def _chunk_matches(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count, base,
                   weights, max_order, mteval, compensated, num, den, ref_len, first, last):
    n_refs = ref_count.shape[0]
    for i in range(first, last):
        m0 = hyp_count[i]
        hyp_keys = np.zeros((max_order, max(m0, 1)), dtype=np.uint64)
        _ngram_keys(hyp_hashes, hyp_start[i], m0, max_order, hyp_keys)
        uniq = np.zeros((max_order, max(m0, 1)), dtype=np.uint64)
        uniq_count = np.zeros((max_order, max(m0, 1)), dtype=np.int64)
        n_uniq = np.zeros(max_order, dtype=np.int64)
        for k in range(max_order):
            m = m0 - k
            den[i, k] = max(m, 0)
            if m > 0:
                n_uniq[k] = _distinct_in_order(hyp_keys[k], m, uniq[k], uniq_count[k])
        # NLTK: the best reference of each order; mteval: counts clipped by the maximum
        best_prec = np.full(max_order, -1.0)
        best_num = np.zeros(max_order)
        best_len = np.zeros(max_order, dtype=np.int64)
        ref_max = np.zeros((max_order, max(m0, 1)), dtype=np.int64)
        ref_weight = np.zeros((max_order, max(m0, 1)))
        length_sum = 0
        present = 0
        for r in range(n_refs):
            c = ref_count[r, i]
            if c < 0:
                continue
            present += 1
            length_sum += c
            ref_keys = np.zeros((max_order, max(c, 1)), dtype=np.uint64)
            _ngram_keys(ref_hashes, ref_start[r, i], c, max_order, ref_keys)
            for k in range(max_order):
                m_ref = c - k
                total = 0.0
                comp = 0.0
                g = n_uniq[k]
                if m_ref > 0 and g > 0:
                    order = np.argsort(ref_keys[k, :m_ref])
                    sorted_keys = ref_keys[k, :m_ref][order]
                    for t in range(g):
                        key = uniq[k, t]
                        lo = np.searchsorted(sorted_keys, key)
                        hi = lo
                        while hi < m_ref and sorted_keys[hi] == key:
                            hi += 1
                        if hi == lo:
                            continue
                        weight = weights[k, base[r, i] + order[lo]]
                        if mteval:
                            if hi - lo > ref_max[k, t]:
                                ref_max[k, t] = hi - lo
                            ref_weight[k, t] = weight
                            continue
                        # NLTK: weight * min(hyp count, ref count), summed as Python's sum()
                        x = weight * min(uniq_count[k, t], hi - lo)
                        s = total + x
                        if compensated:
                            if abs(total) >= abs(x):
                                comp += (total - s) + x
                            else:
                                comp += (x - s) + total
                        total = s
                if mteval:
                    continue
                if compensated and comp != 0.0:
                    total += comp
                d = den[i, k]
                precision = total / d if d > 0 else 0.0
                # max() of NLTK's (precision, numerator, denominator, ref_len) tuples; the
                # denominator is the same for every reference; the first maximum is kept.
                if (precision > best_prec[k]
                        or (precision == best_prec[k] and (total > best_num[k] or (
                            total == best_num[k] and c > best_len[k])))):
                    best_prec[k] = precision
                    best_num[k] = total
                    best_len[k] = c
        for k in range(max_order):
            if mteval:
                total = 0.0
                for t in range(n_uniq[k]):
                    clipped = min(uniq_count[k, t], ref_max[k, t])
                    if clipped > 0:
                        total += ref_weight[k, t] * clipped
                num[i, k] = total
                # the mean reference length, exactly: the sum times AVERAGE_SCALE / present
                ref_len[i, k] = length_sum * (AVERAGE_SCALE // present) if present else 0
            else:
                num[i, k] = best_num[k]
                ref_len[i, k] = best_len[k]


def segment_matches(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count,
                    base, weights, max_order, mteval, compensated):
    """Per segment and order: information-weighted matches, hypothesis n-grams, reference length.

    Returns
    -------
    num : float64 (n, max_order)
        NLTK: the numerator of the best reference of that order (highest
        precision, then numerator, then longest reference); mteval: the sum
        over hypothesis n-grams of weight times the count clipped by the
        largest count in any reference.
    den : int64 (n, max_order)
        Hypothesis n-grams of that order.
    ref_len : int64 (n, max_order)
        NLTK: the length of that order's best reference; mteval: the mean
        reference length times ``AVERAGE_SCALE`` (the same in every column).
    """
    n = hyp_start.size
    num = np.zeros((n, max_order), dtype=np.float64)
    den = np.zeros((n, max_order), dtype=np.int64)
    ref_len = np.zeros((n, max_order), dtype=np.int64)
    for_chunks(_chunk_matches, n, hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start,
               ref_count, base, weights, max_order, bool(mteval), bool(compensated), num, den,
               ref_len, min_chunk=1024)
    return num, den, ref_len


@njit(cache=True, nogil=True)
def nist_scores(rows, max_order, mteval, out):
    """NIST of every statistics row (see :class:`fastbleu.metrics.nist_formula.NISTFormula`).

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
