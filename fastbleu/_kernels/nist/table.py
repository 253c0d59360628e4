"""NIST kernels (Doddington, 2002): information weights and per-segment weighted matches.

Two steps over token hashes in the layout of :mod:`fastbleu._kernels.counting`
(segment ``i``'s hypothesis is ``hyp_hashes[hyp_start[i]:][:hyp_count[i]]``,
reference ``r`` likewise with ``ref_start[r, i]``/``ref_count[r, i]``, a
negative count marking a missing reference):

* :func:`information_weights` counts every reference n-gram of the whole input
  (orders 1..N, every present reference, a repeated reference counted each
  time, as NLTK counts them) and gives each n-gram occurrence its
  information weight ``Info(w1..wk) = log2(count(w1..wk-1) / count(w1..wk))``,
  the count of the empty prefix being the number of reference words (n-grams
  whose prefix occurs once weigh exactly 0 and are left out);
* :func:`segment_matches` gives every segment and order its information-weighted
  matches, its hypothesis n-gram count and the reference length it uses.

N-grams are 64-bit polynomial keys of the token hashes
(:func:`~fastbleu._kernels.hashing.extend_key`), held with their order in one
open-addressing table of the whole input's reference n-grams, each with a
dense id (its count and weight are indexed by it).  Unlike BLEU's per-segment
tables, keys here meet every reference n-gram of the input: two distinct
n-grams of one order share a key with probability about ``D**2 / 2**65`` for
``D`` distinct n-grams of that order (3e-8 for a million), and would then
share a count.

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

from ..text.hashing import extend_key, table_slot
from ..threads import for_chunks
from ..bleu.counting import AVERAGE_SCALE

#: Mixed into a key's table position so that the orders of one key spread out.
_ORDER_MIX = np.uint64(0xD6E8FEB86659FD93)
_S32 = np.uint64(32)
_LOW32 = np.uint64(0xFFFFFFFF)


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
def _find(table, key, order, shift, next_id):
    """The dense id of n-gram ``(key, order)`` in the open-addressing table: a row is
    ``[key, (order + 1) << 32 | id]`` (0: empty).  A new n-gram gets id ``next_id[0]``
    (which then grows) when ``next_id`` has an element, else -1."""
    mask = table.shape[0] - 1
    tag = np.uint64(order + 1) << _S32
    i = table_slot(key ^ (np.uint64(order + 1) * _ORDER_MIX), shift)
    while True:
        word = table[i, 1]
        if word == 0:
            if next_id.size == 0:
                return -1
            new = next_id[0]
            next_id[0] = new + 1
            table[i, 0] = key
            table[i, 1] = tag | np.uint64(new)
            return new
        if (word >> _S32) == (tag >> _S32) and table[i, 0] == key:
            return np.int64(word & _LOW32)
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def _grown(table, shift):
    """The entries of ``table`` in a table twice its size (``shift`` is the new one's)."""
    bigger = np.zeros((2 * table.shape[0], 2), dtype=np.uint64)
    mask = bigger.shape[0] - 1
    for j in range(table.shape[0]):
        word = table[j, 1]
        if word == 0:
            continue
        key = table[j, 0]
        i = table_slot(key ^ ((word >> _S32) * _ORDER_MIX), shift)
        while bigger[i, 1] != 0:
            i = (i + 1) & mask
        bigger[i, 0] = key
        bigger[i, 1] = word
    return bigger


@njit(cache=True, nogil=True)
def information_weights(ref_hashes, ref_start, ref_count, max_order, mteval, zero_hash):
    """Count every reference n-gram of the input; the information weight of each.

    With ``mteval``, the weights are mteval-v13a's expression, including its
    quirk: a bigram whose first word is ``0`` (token hash ``zero_hash``;
    0 for none) is weighed as a unigram (``count / reference words``),
    because Perl reads the prefix string ``"0"`` as false.

    Returns
    -------
    base : int64 (n_refs, n_segments)
        Where each reference's tokens start in a compact numbering.
    rows : int64 (max_order, n_tokens)
        ``rows[k, base[r, i] + p]``: the dense id of the (k+1)-gram starting at
        token ``p`` of reference ``r`` of segment ``i`` (-1 where it does not fit).
    table : uint64 (size, 2)
        The open-addressing table of reference n-grams (see :func:`_find`).
    weight : float64
        The information weight of each n-gram id.
    shift : uint64
        The table's Fibonacci-hashing shift.
    """
    base, total = _slot_bases(ref_count)
    n_refs, n = ref_count.shape
    bits = 10  # about 3 distinct n-grams a reference word at N = 5; doubled when half full
    while (1 << bits) < 4 * total and bits < 40:
        bits += 1
    shift = np.uint64(64 - bits)
    table = np.zeros((1 << bits, 2), dtype=np.uint64)
    next_id = np.zeros(1, dtype=np.int64)
    counts = np.zeros(max_order * max(total, 1), dtype=np.int64)
    # per id: its prefix's id (-1: the empty prefix, or mteval's "0")
    prefix_of = np.empty(max_order * max(total, 1), dtype=np.int64)
    rows = np.full((max_order, max(total, 1)), -1, dtype=np.int64)
    keys = np.zeros(max(total, 1), dtype=np.uint64)  # each position's key, order by order
    # Order by order.  An n-gram whose prefix occurs once occurs once itself, so its
    # weight is log2(1 / 1) = 0, and so are its extensions': such n-grams add exactly
    # nothing to any sum (x + 0.0 == x, and Neumaier's term stays 0), so they are left
    # out of the table (rows -1) and a hypothesis n-gram not found counts nothing.
    for k in range(max_order):
        for i in range(n):
            for r in range(n_refs):
                c = ref_count[r, i]
                b = base[r, i]
                s = ref_start[r, i]
                for p in range(c - k):
                    q = b + p
                    prefix = -1
                    if k > 0:
                        prefix = rows[k - 1, q]
                        if prefix < 0:
                            continue
                        # mteval weighs "0 w" against all words, whatever "0"'s count
                        zero = mteval and k == 1 and zero_hash != 0 and keys[q] == zero_hash
                        if counts[prefix] < 2 and not zero:
                            continue
                        if zero:
                            prefix = -1
                    keys[q] = extend_key(keys[q], ref_hashes[s + p + k])
                    known = next_id[0]
                    row = _find(table, keys[q], k, shift, next_id)
                    if row == known:  # a new n-gram
                        prefix_of[row] = prefix
                    counts[row] += 1
                    rows[k, q] = row
                    if 2 * next_id[0] > table.shape[0]:
                        bits += 1
                        shift = np.uint64(64 - bits)
                        table = _grown(table, shift)
    n_ids = next_id[0]
    weight = np.zeros(max(n_ids, 1), dtype=np.float64)
    log2 = math.log(2.0)
    for row in range(n_ids):
        prefix = total if prefix_of[row] < 0 else counts[prefix_of[row]]
        # NLTK: math.log(prefix / count, 2) = log(prefix / count) / log(2.0);
        # mteval: - log(count / prefix) / log 2
        if mteval:
            weight[row] = -math.log(counts[row] / prefix) / log2
        else:
            weight[row] = math.log(prefix / counts[row]) / log2
    return base, rows, table, weight, shift


@njit(cache=True, nogil=True)
def _chunk_matches(hyp_hashes, hyp_start, hyp_count, ref_count, base, rows, table, weight,
                   shift, max_order, mteval, compensated, num, den, ref_len, first, last):
    n_refs = ref_count.shape[0]
    size = weight.size
    lookup_only = np.zeros(0, dtype=np.int64)
    hyp_seen = np.zeros(size, dtype=np.int64)  # per table row: count in the hypothesis
    ref_seen = np.zeros(size, dtype=np.int64)  # count in the current reference
    ref_max = np.zeros(size, dtype=np.int64)  # mteval: the most in any reference
    for i in range(first, last):
        m0 = hyp_count[i]
        s = hyp_start[i]
        # the hypothesis' reference n-grams, in order of first appearance, per order
        distinct = np.empty((max_order, max(m0, 1)), dtype=np.int64)
        n_distinct = np.zeros(max_order, dtype=np.int64)
        for k in range(max_order):
            den[i, k] = max(m0 - k, 0)
        for p in range(m0):
            key = np.uint64(0)
            for k in range(min(max_order, m0 - p)):
                key = extend_key(key, hyp_hashes[s + p + k])
                row = _find(table, key, k, shift, lookup_only)
                if row < 0:
                    break  # no longer n-gram from here is in the table either
                if hyp_seen[row] == 0:
                    distinct[k, n_distinct[k]] = row
                    n_distinct[k] += 1
                hyp_seen[row] += 1
        # NLTK: the best reference of each order; mteval: counts clipped by the maximum
        best_prec = np.full(max_order, -1.0)
        best_num = np.zeros(max_order)
        best_len = np.zeros(max_order, dtype=np.int64)
        length_sum = 0
        present = 0
        for r in range(n_refs):
            c = ref_count[r, i]
            if c < 0:
                continue
            present += 1
            length_sum += c
            b = base[r, i]
            for k in range(max_order):
                for p in range(c - k):
                    if rows[k, b + p] >= 0:
                        ref_seen[rows[k, b + p]] += 1
            for k in range(max_order):
                total = 0.0
                comp = 0.0
                for t in range(n_distinct[k]):
                    row = distinct[k, t]
                    in_ref = ref_seen[row]
                    if in_ref == 0:
                        continue
                    if mteval:
                        if in_ref > ref_max[row]:
                            ref_max[row] = in_ref
                        continue
                    # NLTK: weight * min(hyp count, ref count), summed as Python's sum()
                    x = weight[row] * min(hyp_seen[row], in_ref)
                    sm = total + x
                    if compensated:
                        if abs(total) >= abs(x):
                            comp += (total - sm) + x
                        else:
                            comp += (x - sm) + total
                    total = sm
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
                for p in range(c - k):
                    if rows[k, b + p] >= 0:
                        ref_seen[rows[k, b + p]] = 0
        for k in range(max_order):
            if mteval:
                total = 0.0
                for t in range(n_distinct[k]):
                    row = distinct[k, t]
                    clipped = min(hyp_seen[row], ref_max[row])
                    if clipped > 0:
                        total += weight[row] * clipped
                num[i, k] = total
                # the mean reference length, exactly: the sum times AVERAGE_SCALE / present
                ref_len[i, k] = length_sum * (AVERAGE_SCALE // present) if present else 0
            else:
                num[i, k] = best_num[k]
                ref_len[i, k] = best_len[k]
            for t in range(n_distinct[k]):
                hyp_seen[distinct[k, t]] = 0
                ref_max[distinct[k, t]] = 0


def segment_matches(hyp_hashes, hyp_start, hyp_count, ref_count, weights, max_order, mteval,
                    compensated):
    """Per segment and order: information-weighted matches, hypothesis n-grams, reference length.

    ``weights`` is what :func:`information_weights` returned for these references.

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
    base, rows, table, weight, shift = weights
    n = hyp_start.size
    num = np.zeros((n, max_order), dtype=np.float64)
    den = np.zeros((n, max_order), dtype=np.int64)
    ref_len = np.zeros((n, max_order), dtype=np.int64)
    # shift as information_weights has it (uint64): one signature of _find and table_slot
    for_chunks(_chunk_matches, n, hyp_hashes, hyp_start, hyp_count, ref_count, base, rows,
               table, weight, np.uint64(shift), max_order, bool(mteval),
               bool(compensated), num, den, ref_len, min_chunk=1024)
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
