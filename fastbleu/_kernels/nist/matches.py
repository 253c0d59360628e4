"""NIST's per-segment statistics: information-weighted matches against fixed counts.

Token hashes are in the layout of :mod:`fastbleu._kernels.bleu.counting`
(segment ``i``'s hypothesis is ``hyp_hashes[hyp_start[i]:][:hyp_count[i]]``,
reference ``r`` likewise with ``ref_start[r, i]``/``ref_count[r, i]``, a
negative count marking a missing reference).  The corpus's reference
n-gram counts are a table of :mod:`fastbleu._kernels.nist.counts`.

Per segment, the hypothesis's n-grams go into a small table of their own
(in cache), each with its count and its prefix; every reference is counted
against it; and only an n-gram that a reference matches is looked up in
the corpus's counts, once per segment, for its information weight
(Doddington, 2002)::

    Info(w1..wk) = log2(count(w1..wk-1) / count(w1..wk))

the count of the empty prefix being the number of reference words.

Float arithmetic follows the reference implementations operation by
operation, because NLTK's numbers are reproduced bit for bit:

* NLTK's weight is ``math.log(prefix / count, 2)``, which CPython computes as
  ``log(prefix / count) / log(2.0)``; mteval-v13a's is
  ``-log(count / prefix) / log(2)`` (Perl's unary minus binds first), a
  bigram whose first word is ``0`` weighed against all words (Perl reads
  the prefix ``"0"`` as false);
* NLTK's numerator of a (segment, reference, order) is Python's
  ``sum(weight * count ...)`` over the clipped n-grams in order of first
  appearance in the hypothesis; ``sum`` of floats adds left to right up to
  Python 3.11 and uses Neumaier's compensated summation from 3.12 on
  (``compensated``), both reproduced here.

An n-gram whose prefix occurs once in the corpus occurs once itself and
weighs ``log2(1 / 1) = 0``: adding it changes no sum (``x + 0.0 == x``, and
Neumaier's term stays 0), as NLTK's own sum of that zero does not.
"""

import math

import numpy as np
from numba import njit

from ..text.hashing import extend_key, table_slot
from ..threads import for_chunks
from ..bleu.counting import AVERAGE_SCALE
from .counts import COUNT_MASK, ORDER_MIX, TAG_SHIFT, ngram_total

_UNKNOWN = -1
#: A row of a segment's own table of hypothesis n-grams: (segment stamp * 16 + order + 1,
#: key, id); hot helpers are written out in the loops (a call taking arrays costs
#: reference counting).
_TAG, _KEY, _ID = 0, 1, 2
#: A set of tokens as 1,024 bits: a bit stands for every token hash with the same top 4 and
#: low 6 bits (a set bit may stand for another token: that only costs a probe in vain).
_WORDS = 16
_S60 = np.uint64(60)
_S63 = np.uint64(63)
_ONE = np.uint64(1)


@njit(cache=True, nogil=True, inline="always")
def _local_slot(local, key, k, tag, fresh, shift, mask):
    """The slot of the order-``k`` n-gram ``key`` in a segment's local table: the one that
    holds it (tagged ``tag``), or the empty one (tagged below ``fresh``) where it goes."""
    at = table_slot(key ^ (np.uint64(k + 1) * ORDER_MIX), shift)
    while local[at, _TAG] >= fresh and not (
            local[at, _TAG] == tag and local[at, _KEY] == np.int64(key)):
        at = (at + 1) & mask
    return at


@njit(cache=True, nogil=True)
def _chunk_matches(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count, table,
                   shift, words, zero_hash, max_order, mteval, compensated, num, den, ref_len,
                   first, last):
    n_refs = ref_count.shape[0]
    log2 = math.log(2.0)
    table_mask = table.shape[0] - 1
    # per distinct hypothesis n-gram of the segment (its id), grown for a longer segment
    cap = 0
    ids_key = np.zeros(0, dtype=np.uint64)
    ids_order = np.zeros(0, dtype=np.int64)
    ids_hyp = np.zeros(0, dtype=np.int64)  # count in the hypothesis
    ids_ref = np.zeros(0, dtype=np.int64)  # count in the current reference
    ids_max = np.zeros(0, dtype=np.int64)  # mteval: the most in any reference
    ids_prefix = np.zeros(0, dtype=np.int64)  # the prefix's id; -1: all words
    ids_count = np.zeros(0, dtype=np.int64)  # the corpus count (_UNKNOWN: not looked up)
    ids_weight = np.zeros(0, dtype=np.float64)
    by_order = np.zeros(0, dtype=np.int64)  # ids of each order, in order of first appearance
    local = np.zeros((0, 3), dtype=np.int64)
    local_mask = 0
    local_shift = np.uint64(63)
    stamp = 0
    order_base = np.zeros(max_order + 1, dtype=np.int64)
    n_distinct = np.zeros(max_order, dtype=np.int64)
    best_prec = np.zeros(max_order)
    best_num = np.zeros(max_order)
    best_len = np.zeros(max_order, dtype=np.int64)
    in_refs = np.zeros(_WORDS, dtype=np.uint64)  # the tokens of the segment's references
    in_hyp = np.zeros(_WORDS, dtype=np.uint64)  # of its hypothesis
    for i in range(first, last):
        m0 = max(hyp_count[i], 0)
        s = hyp_start[i]
        total_ngrams = ngram_total(m0, max_order)
        if total_ngrams > cap:
            cap = max(total_ngrams, 2 * cap, 64)
            ids_key = np.zeros(cap, dtype=np.uint64)
            ids_order = np.zeros(cap, dtype=np.int64)
            ids_hyp = np.zeros(cap, dtype=np.int64)
            ids_ref = np.zeros(cap, dtype=np.int64)
            ids_max = np.zeros(cap, dtype=np.int64)
            ids_prefix = np.zeros(cap, dtype=np.int64)
            ids_count = np.zeros(cap, dtype=np.int64)
            ids_weight = np.zeros(cap, dtype=np.float64)
            by_order = np.zeros(cap, dtype=np.int64)
            bits = 7
            while (1 << bits) < 2 * cap:
                bits += 1
            local = np.zeros((1 << bits, 3), dtype=np.int64)
            local_mask = (1 << bits) - 1
            local_shift = np.uint64(64 - bits)
            stamp = 0
        stamp += 1
        fresh = stamp << 4  # a row's tag below this: free in this segment
        for k in range(max_order):
            den[i, k] = max(m0 - k, 0)
            order_base[k + 1] = order_base[k] + max(m0 - k, 0)
            n_distinct[k] = 0
        # The hypothesis's n-grams that a reference may match (each token in some
        # reference): counts, prefixes, order of first appearance.  An n-gram with a token
        # no reference has matches nothing, nor does any extension; it weighs nothing.
        in_refs[:] = 0
        in_hyp[:] = 0
        for r in range(n_refs):
            rs = ref_start[r, i]
            for p in range(ref_count[r, i]):
                h = ref_hashes[rs + p]
                in_refs[h >> _S60] |= _ONE << (h & _S63)
        for p in range(m0):
            h = hyp_hashes[s + p]
            in_hyp[h >> _S60] |= _ONE << (h & _S63)
        n_ids = 0
        for p in range(m0):
            key = np.uint64(0)
            prefix = -1
            for k in range(min(max_order, m0 - p)):
                h = hyp_hashes[s + p + k]
                if in_refs[h >> _S60] & (_ONE << (h & _S63)) == 0:
                    break
                key = extend_key(key, h)
                tag = fresh + k + 1
                at = _local_slot(local, key, k, tag, fresh, local_shift, local_mask)
                if local[at, _TAG] == tag:
                    j = local[at, _ID]
                    ids_hyp[j] += 1
                else:
                    j = n_ids
                    n_ids += 1
                    local[at, _TAG] = tag
                    local[at, _KEY] = np.int64(key)
                    local[at, _ID] = j
                    ids_key[j] = key
                    ids_order[j] = k
                    ids_hyp[j] = 1
                    ids_ref[j] = 0
                    ids_max[j] = 0
                    # mteval weighs "0 w" against all words, whatever "0"'s count
                    zero = mteval and k == 1 and zero_hash != np.uint64(0) and \
                        hyp_hashes[s + p] == zero_hash
                    ids_prefix[j] = -1 if zero else prefix
                    ids_count[j] = _UNKNOWN
                    by_order[order_base[k] + n_distinct[k]] = j
                    n_distinct[k] += 1
                prefix = j
        # NLTK: the best reference of each order; mteval: counts clipped by the maximum
        for k in range(max_order):
            best_prec[k] = -1.0
            best_num[k] = 0.0
            best_len[k] = 0
        length_sum = 0
        present = 0
        for r in range(n_refs):
            c = ref_count[r, i]
            if c < 0:
                continue
            present += 1
            length_sum += c
            rs = ref_start[r, i]
            if n_ids == 0:
                c = 0  # nothing to match; its length still counts
            matched = False
            for p in range(c):
                key = np.uint64(0)
                for k in range(min(max_order, c - p)):
                    h = ref_hashes[rs + p + k]
                    if in_hyp[h >> _S60] & (_ONE << (h & _S63)) == 0:
                        break
                    key = extend_key(key, h)
                    tag = fresh + k + 1
                    at = _local_slot(local, key, k, tag, fresh, local_shift, local_mask)
                    if local[at, _TAG] != tag:
                        break  # not in the hypothesis, nor is any extension
                    ids_ref[local[at, _ID]] += 1
                    matched = True
            c = ref_count[r, i]
            # The corpus counts of the matched n-grams not yet weighed, order by order: the
            # lookups of one order are independent (their cache misses overlap), and an
            # n-gram's prefix (also matched) has its count from the order before.
            if matched:
                for k in range(max_order):
                    for t in range(order_base[k], order_base[k] + n_distinct[k]):
                        j = by_order[t]
                        if ids_ref[j] == 0 or ids_count[j] != _UNKNOWN:
                            continue
                        if ids_prefix[j] >= 0 and ids_count[ids_prefix[j]] <= 1:
                            # its prefix occurs once (or not at all) in the corpus, so it
                            # does too: it weighs log2(1 / 1) = 0 (nothing to look up)
                            ids_count[j] = ids_count[ids_prefix[j]]
                            ids_weight[j] = 0.0
                            continue
                        key = ids_key[j]
                        tag = np.uint64(k + 1)
                        at = table_slot(key ^ (tag * ORDER_MIX), shift)
                        count = 0
                        while True:
                            word = table[at, 1]
                            if word == 0:
                                break
                            if (word >> TAG_SHIFT) == tag and table[at, 0] == key:
                                count = np.int64(word & COUNT_MASK)
                                break
                            at = (at + 1) & table_mask
                        ids_count[j] = count
                        prefix = words if ids_prefix[j] < 0 else ids_count[ids_prefix[j]]
                        # 0 for an n-gram the counts lack (fixed weights of another corpus)
                        # or whose prefix occurs once (then so does the n-gram: log2(1 / 1)).
                        # NLTK: math.log(prefix / count, 2) = log(prefix / count) / log(2.0);
                        # mteval: - log(count / prefix) / log 2
                        if count <= 0 or prefix <= 1:
                            ids_weight[j] = 0.0
                        elif mteval:
                            ids_weight[j] = -math.log(count / prefix) / log2
                        else:
                            ids_weight[j] = math.log(prefix / count) / log2
            for k in range(max_order):
                total = 0.0
                comp = 0.0
                if matched:
                    for t in range(order_base[k], order_base[k] + n_distinct[k]):
                        j = by_order[t]
                        in_ref = ids_ref[j]
                        if in_ref == 0:
                            continue
                        if mteval:
                            if in_ref > ids_max[j]:
                                ids_max[j] = in_ref
                            continue
                        # NLTK: weight * min(hyp count, ref count), summed as Python's sum()
                        x = ids_weight[j] * min(ids_hyp[j], in_ref)
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
            if matched:
                for j in range(n_ids):
                    ids_ref[j] = 0
        for k in range(max_order):
            if mteval:
                total = 0.0
                for t in range(order_base[k], order_base[k] + n_distinct[k]):
                    j = by_order[t]
                    clipped = min(ids_hyp[j], ids_max[j])
                    if clipped > 0:
                        total += ids_weight[j] * clipped
                num[i, k] = total
                # the mean reference length, exactly: the sum times AVERAGE_SCALE / present
                ref_len[i, k] = length_sum * (AVERAGE_SCALE // present) if present else 0
            else:
                num[i, k] = best_num[k]
                ref_len[i, k] = best_len[k]


def segment_matches(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count, table,
                    shift, words, zero_hash, max_order, mteval, compensated):
    """Per segment and order: information-weighted matches, hypothesis n-grams, reference length.

    ``table``, ``shift`` and ``words`` are a corpus's reference counts
    (:class:`fastbleu.metrics.nist.weights.NISTCounts`); ``zero_hash`` is the
    token hash of ``0`` for mteval's quirk (0: none).

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
    for_chunks(_chunk_matches, n, hyp_hashes, np.ascontiguousarray(hyp_start),
               np.ascontiguousarray(hyp_count), ref_hashes, np.ascontiguousarray(ref_start),
               np.ascontiguousarray(ref_count), table, np.uint64(shift), int(words),
               np.uint64(zero_hash), int(max_order), bool(mteval), bool(compensated), num, den,
               ref_len, min_chunk=1024)
    return num, den, ref_len
