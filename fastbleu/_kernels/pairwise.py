"""Pairwise sentence scores for minimum-Bayes-risk decoding: every candidate of a
source against every pseudo-reference of the same source.

The work is done once per *distinct sentence* of a source, not once per pair:

1. **Distinct sentences.**  Candidates and pseudo-references of a source (in
   MBR usually the same strings) are compared by their unit sequences
   (characters and/or words for chrF, tokens for BLEU: 64-bit hashes); equal
   sequences give equal statistics with every partner, so each is profiled
   once and its row of scores copied.
2. **Profiles, one order at a time.**  Each distinct sentence's n-grams of an
   order go through one open-addressing table of the source (stamped per
   source and order, never cleared) that numbers the source's distinct
   n-grams densely; a sentence's profile for the order is the list of its
   n-gram numbers with their counts.  An n-gram in only one distinct sentence
   can only match that sentence itself, whose statistics are its own totals,
   so it is dropped from the profiles, and the positions it covers are not
   extended to the next order (an n-gram can only be shared if both of its
   (n-1)-grams are): on dissimilar sentences most high orders are never hashed.
3. **Pairs.**  For each distinct candidate its counts are scattered into a
   dense array indexed by n-gram number; each distinct pseudo-reference then
   sums ``min(candidate count, its count)`` over its profile, order by order,
   which is the clipped match count of the pair (Papineni et al., 2002;
   Popović, 2015).  The statistics row is the metric's (sacrebleu's layout)
   and is scored by the metric's own kernel: :func:`.chrf_formula.f_score`
   or :func:`.formula.bleu_from_row`, so every value is bit for bit the
   sentence score sacrebleu gives the pair.

Sources run in chunks on the thread pool (:func:`.threads.for_chunks`).
"""

import numpy as np
from numba import njit, types
from numba.extending import intrinsic

from .chrf.statistics import char_units, word_units
from .chrf.formula import f_score
from .bleu.formula import bleu_from_row
from .text.hashing import MIN_TABLE_BITS, extend_key, finish, table_bits, table_slot
from .threads import for_chunks

METRIC_CHRF = 0
METRIC_BLEU = 1
_FINGERPRINT = np.uint64(0x2545F4914F6CDD1D)


@intrinsic
def popcount(typingctx, word):
    """The number of set bits of a uint64 (LLVM's ``ctpop``: one instruction)."""
    if word != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


@njit(cache=True, nogil=True)
def _units_chunk(data, offsets, char_kind, word_kind, whitespace, region, out, start, count,
                 first, last):
    base = offsets[0]
    for i in range(first, last):
        at = offsets[i] - base
        if char_kind >= 0:
            s = char_kind * region + at
            start[char_kind, i] = s
            n_chars = char_units(data, offsets[i], offsets[i + 1], whitespace, out[s:])
            for u in range(s, s + n_chars):  # packed bytes -> hashes, for polynomial keys
                out[u] = finish(out[u])
            count[char_kind, i] = n_chars
        if word_kind >= 0:
            s = word_kind * region + at
            start[word_kind, i] = s
            count[word_kind, i] = word_units(data, offsets[i], offsets[i + 1], out[s:])


def chrf_units(data, offsets, char_order, word_order, whitespace):
    """chrF's units of every segment: character hashes (kind 0, when ``char_order``) and
    chrF++ word hashes (next kind, when ``word_order``).

    Returns ``(hashes, start, count)``: unit ``u`` of kind ``k`` of segment
    ``i`` is ``hashes[start[k, i] + u]`` for ``u < count[k, i]``.
    """
    n = offsets.size - 1
    kinds = int(char_order > 0) + int(word_order > 0)
    region = int(offsets[-1] - offsets[0])
    out = np.empty(kinds * region, dtype=np.uint64)
    start = np.zeros((kinds, n), dtype=np.int64)
    count = np.zeros((kinds, n), dtype=np.int64)
    char_kind = 0 if char_order > 0 else -1
    word_kind = (1 if char_order > 0 else 0) if word_order > 0 else -1
    for_chunks(_units_chunk, n, data, offsets, np.int64(char_kind), np.int64(word_kind),
               bool(whitespace), np.int64(region), out, start, count, min_chunk=1024)
    return out, start, count


@njit(cache=True, nogil=True)
def _same_units(hashes, start, count, a, b):
    for k in range(start.shape[0]):
        if count[k, a] != count[k, b]:
            return False
    for k in range(start.shape[0]):
        sa, sb = start[k, a], start[k, b]
        for u in range(count[k, a]):
            if hashes[sa + u] != hashes[sb + u]:
                return False
    return True


@njit(cache=True, nogil=True)
def _fingerprint(hashes, start, count, seg):
    h = _FINGERPRINT
    for k in range(start.shape[0]):
        h = extend_key(h, np.uint64(count[k, seg]))
        s = start[k, seg]
        for u in range(count[k, seg]):
            h = extend_key(h, hashes[s + u])
    return h


@njit(cache=True, nogil=True)
def _score(metric, count, totals, rep, dc, dr, match, n_orders, row, precisions, factor,
           one_plus_factor, eps_smoothing, smooth, smooth_value, effective_order, compensated,
           weights):
    if metric == METRIC_CHRF:
        for g in range(n_orders):
            ref_total = totals[dr, g]
            row[3 * g] = totals[dc, g] if ref_total > 0 else 0
            row[3 * g + 1] = ref_total
            row[3 * g + 2] = match[g]
        return f_score(row, 0, n_orders, factor, one_plus_factor, eps_smoothing)
    row[0] = count[0, rep[dc]]
    row[1] = count[0, rep[dr]]
    for g in range(n_orders):
        row[2 + g] = match[g]
        row[2 + n_orders + g] = totals[dc, g]
    return bleu_from_row(row, n_orders, smooth, smooth_value, effective_order, compensated,
                         precisions, weights, 1.0)[0]


@njit(cache=True, nogil=True)
def _pairwise_chunk(hashes, start, count, orders, c_bounds, r_base, r_bounds, metric, factor,
                    one_plus_factor, eps_smoothing, smooth, smooth_value, effective_order,
                    compensated, weights, out, out_start, out_stride, first, last):
    kinds = orders.size
    n_orders = 0
    for k in range(kinds):
        n_orders += orders[k]
    # Scratch for the largest source of the chunk.
    most_sentences = 1
    most_units = 1
    for s in range(first, last):
        sentences = (c_bounds[s + 1] - c_bounds[s]) + (r_bounds[s + 1] - r_bounds[s])
        most_sentences = max(most_sentences, sentences)
        units = 0
        for x in range(c_bounds[s], c_bounds[s + 1]):
            for k in range(kinds):
                units += count[k, x]
        for x in range(r_base + r_bounds[s], r_base + r_bounds[s + 1]):
            for k in range(kinds):
                units += count[k, x]
        most_units = max(most_units, units)
    size = 1 << MIN_TABLE_BITS
    while size < 2 * most_units:
        size *= 2
    table_keys = np.empty(size, dtype=np.uint64)
    table_stamps = np.full(size, -1, dtype=np.int64)
    table_ids = np.empty(size, dtype=np.int64)
    most_ids = most_units + 1
    seen = np.empty(most_ids, dtype=np.int64)
    feature_at = np.empty(most_ids, dtype=np.int64)
    df = np.empty(most_ids, dtype=np.int64)
    most = np.empty(most_ids, dtype=np.int64)
    bit_at = np.empty(most_ids, dtype=np.int64)
    feature_id = np.empty(most_ids, dtype=np.int64)
    feature_count = np.empty(most_ids, dtype=np.int64)
    # Bits of the shared n-grams, order after order (an order has at most one per unit
    # of the distinct sentences); grown when a source needs more.
    profile = np.empty((most_sentences, most_units // 64 + n_orders + 1), dtype=np.uint64)
    word_at = np.empty(n_orders + 1, dtype=np.int64)
    keys = np.empty(most_units + 1, dtype=np.uint64)
    alive = np.zeros(most_units + 1, dtype=np.bool_)
    position_id = np.empty(most_units + 1, dtype=np.int64)
    rep = np.empty(most_sentences, dtype=np.int64)
    fingerprints = np.empty(most_sentences, dtype=np.uint64)
    distinct_of = np.empty(most_sentences, dtype=np.int64)
    candidate_index = np.empty(most_sentences, dtype=np.int64)
    reference_index = np.empty(most_sentences, dtype=np.int64)
    candidates = np.empty(most_sentences, dtype=np.int64)
    references = np.empty(most_sentences, dtype=np.int64)
    unit_base = np.empty((most_sentences, kinds), dtype=np.int64)
    totals = np.empty((most_sentences, max(n_orders, 1)), dtype=np.int64)
    f_start = np.empty(most_sentences + 1, dtype=np.int64)
    match = np.empty(max(n_orders, 1), dtype=np.int64)
    row = np.empty(3 * max(n_orders, 1) + 2, dtype=np.int64)
    precisions = np.empty(max(n_orders, 1), dtype=np.float64)
    scores = np.empty((most_sentences, most_sentences), dtype=np.float64)
    stamp = np.int64(0)
    for s in range(first, last):
        c0, n = c_bounds[s], c_bounds[s + 1] - c_bounds[s]
        r0, m = r_base + r_bounds[s], r_bounds[s + 1] - r_bounds[s]
        # 1. Distinct sentences (by their units), candidates first.
        n_distinct = 0
        n_cand = 0
        n_ref = 0
        for x in range(n + m):
            seg = c0 + x if x < n else r0 + (x - n)
            fp = _fingerprint(hashes, start, count, seg)
            d = -1
            for e in range(n_distinct):
                if fingerprints[e] == fp and (rep[e] == seg or
                                              _same_units(hashes, start, count, rep[e], seg)):
                    d = e
                    break
            if d < 0:
                d = n_distinct
                n_distinct += 1
                rep[d] = seg
                fingerprints[d] = fp
                candidate_index[d] = -1
                reference_index[d] = -1
            distinct_of[x] = d
            if x < n and candidate_index[d] < 0:
                candidate_index[d] = n_cand
                candidates[n_cand] = d
                n_cand += 1
            elif x >= n and reference_index[d] < 0:
                reference_index[d] = n_ref
                references[n_ref] = d
                n_ref += 1
        # 2. Profiles, kind by kind, order by order, as bitsets.
        used = 0
        for d in range(n_distinct):
            for k in range(kinds):
                unit_base[d, k] = used
                used += count[k, rep[d]]
        words = 0
        column = 0
        for k in range(kinds):
            units = 0
            for d in range(n_distinct):
                units += count[k, rep[d]]
            mask, shift = table_bits(units)
            for d in range(n_distinct):
                b, u0 = unit_base[d, k], start[k, rep[d]]
                for p in range(count[k, rep[d]]):
                    keys[b + p] = hashes[u0 + p]
                    alive[b + p] = True
            for o in range(orders[k]):
                g = column + o
                stamp += 1
                n_ids = 0
                n_features = 0
                for d in range(n_distinct):
                    b, u0 = unit_base[d, k], start[k, rep[d]]
                    total = max(count[k, rep[d]] - o, 0)
                    totals[d, g] = total
                    f_start[d] = n_features
                    for p in range(total):
                        if o > 0:
                            if not (alive[b + p] and alive[b + p + 1]):
                                alive[b + p] = False
                                continue
                            keys[b + p] = extend_key(keys[b + p], hashes[u0 + p + o])
                        key = keys[b + p]
                        slot = table_slot(key, shift)
                        while table_stamps[slot] == stamp and table_keys[slot] != key:
                            slot = (slot + 1) & mask
                        if table_stamps[slot] != stamp:
                            table_stamps[slot] = stamp
                            table_keys[slot] = key
                            table_ids[slot] = n_ids
                            seen[n_ids] = -1
                            df[n_ids] = 0
                            most[n_ids] = 0
                            bit_at[n_ids] = -1
                            n_ids += 1
                        i = table_ids[slot]
                        position_id[b + p] = i
                        if seen[i] != d:
                            seen[i] = d
                            feature_at[i] = n_features
                            feature_id[n_features] = i
                            feature_count[n_features] = 1
                            n_features += 1
                            df[i] += 1
                        else:
                            feature_count[feature_at[i]] += 1
                    f_start[d + 1] = n_features
                # An n-gram of one distinct sentence only matches that sentence (whose
                # statistics are its totals): no bits, and no extension to the next order.
                for d in range(n_distinct):
                    b = unit_base[d, k]
                    for p in range(totals[d, g]):
                        if alive[b + p] and df[position_id[b + p]] < 2:
                            alive[b + p] = False
                # A shared n-gram gets as many bits as its largest count: count c sets the
                # first c, so that popcount(a & b) sums min(count_a, count_b).
                for f in range(n_features):
                    i = feature_id[f]
                    if df[i] >= 2:
                        most[i] = max(most[i], feature_count[f])
                n_bits = 0
                for f in range(n_features):
                    i = feature_id[f]
                    if df[i] >= 2 and bit_at[i] < 0:
                        bit_at[i] = n_bits
                        n_bits += most[i]
                word_at[g] = words
                words += (n_bits + 63) >> 6
                word_at[g + 1] = words
                if words > profile.shape[1]:  # grow: one order's worth more at least
                    wider = np.empty((most_sentences, max(words, 2 * profile.shape[1])),
                                     dtype=np.uint64)
                    wider[:, :word_at[g]] = profile[:, :word_at[g]]
                    profile = wider
                for d in range(n_distinct):
                    for w in range(word_at[g], words):
                        profile[d, w] = np.uint64(0)
                    for f in range(f_start[d], f_start[d + 1]):
                        i = feature_id[f]
                        if df[i] < 2:
                            continue
                        for bit in range(bit_at[i], bit_at[i] + feature_count[f]):
                            w = word_at[g] + (bit >> 6)
                            profile[d, w] |= np.uint64(1) << np.uint64(bit & 63)
            column += orders[k]
        # 3. Pairs of distinct sentences, 4. copied to every (candidate, reference).
        base, stride = out_start[s], out_stride[s]
        for ci in range(n_cand):
            dc = candidates[ci]
            for ri in range(n_ref):
                dr = references[ri]
                if dr == dc:
                    for g in range(n_orders):
                        match[g] = totals[dc, g]
                else:
                    for g in range(n_orders):
                        total = 0
                        for w in range(word_at[g], word_at[g + 1]):
                            total += np.int64(popcount(profile[dc, w] & profile[dr, w]))
                        match[g] = total
                scores[ci, ri] = _score(metric, count, totals, rep, dc, dr, match, n_orders,
                                        row, precisions, factor, one_plus_factor,
                                        eps_smoothing, smooth, smooth_value, effective_order,
                                        compensated, weights)
        for i in range(n):
            ci = candidate_index[distinct_of[i]]
            at = base + i * stride
            for j in range(m):
                out[at + j] = scores[ci, reference_index[distinct_of[n + j]]]


def pairwise_scores(hashes, start, count, orders, c_bounds, r_base, r_bounds, metric,
                    chrf_args, bleu_args, out, out_start, out_stride):
    """Fill ``out`` with the score of every (candidate, pseudo-reference) pair of every source.

    Parameters
    ----------
    hashes, start, count : numpy.ndarray
        Units (uint64 hashes): unit ``u`` of kind ``k`` of segment ``x`` is
        ``hashes[start[k, x] + u]``, ``u < count[k, x]``.
    orders : numpy.ndarray
        int64, the n-gram orders of each kind (chrF: characters then words;
        BLEU: one kind, tokens).
    c_bounds, r_bounds : numpy.ndarray
        Source ``s``'s candidates are segments ``c_bounds[s]:c_bounds[s + 1]``,
        its pseudo-references ``r_base + r_bounds[s]:r_base + r_bounds[s + 1]``.
    metric : int
        ``METRIC_CHRF`` or ``METRIC_BLEU``.
    chrf_args : tuple
        ``(factor, one_plus_factor, eps_smoothing)`` of ``CHRFFormula.kernel_args``.
    bleu_args : tuple
        ``(smooth, smooth_value, effective_order, compensated, weights)`` of
        ``BLEUFormula.kernel_args``.
    out : numpy.ndarray
        float64, flat: pair ``(i, j)`` of source ``s`` goes to
        ``out[out_start[s] + i * out_stride[s] + j]``.
    """
    factor, one_plus_factor, eps_smoothing = chrf_args
    smooth, smooth_value, effective_order, compensated, weights = bleu_args
    for_chunks(_pairwise_chunk, c_bounds.size - 1, hashes, start, count, orders, c_bounds,
               np.int64(r_base), r_bounds, np.int64(metric), float(factor),
               float(one_plus_factor), bool(eps_smoothing), np.int64(smooth),
               float(smooth_value), bool(effective_order), bool(compensated),
               np.ascontiguousarray(weights, dtype=np.float64), out, out_start, out_stride,
               min_chunk=4)
