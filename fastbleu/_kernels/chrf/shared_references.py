"""chrF statistics of every system's hypothesis of a segment, its references counted once.

A report (:mod:`fastbleu.compare.shared`) scores each segment once per system against
the same references.
:func:`fastbleu.metrics.chrf` counts a pair at a time: each of the
``n_systems`` pairs reads the reference's characters again and counts its
n-grams again (those that could match that hypothesis).  Here each segment's
references are read and counted once, every n-gram of every order, and each
hypothesis only looks its own n-grams up; a hypothesis equal to an earlier
one of the same segment copies that row.

The rows are those of :meth:`fastbleu.CHRF.column_statistics`, bit for bit:
``[hyp, ref, match]`` per order (character orders, then word orders), ``hyp``
0 when the reference has no n-gram of the order, ``match`` the clipped count
``sum(min(hyp_count, ref_count))`` (Popović, 2015; 2017), and of several
references the row of the best sentence chrF, the first on ties (sacrebleu's
``_compute_segment_statistics``, scored by the same
:func:`~fastbleu._kernels.chrf.formula.f_score`).  Characters are read by
the same unit readers (:func:`~fastbleu._kernels.chrf.statistics.char_units`,
``word_units``).

**Ids.**  Every distinct reference n-gram of an order gets a dense id of
that order.  An ASCII character is its own unigram id; another unigram is
found by its unit in the order's hashed table.  A longer n-gram is its
prefix's id (one order lower) and its last unit: a prefix id below 128 with
an ASCII character indexes the order's 128 x 128 pair table; otherwise each
prefix keeps its first continuation beside it, and other continuations go to
the order's hashed table, keyed as the metric keys them (character keys
exact, word keys up to 64-bit hash collisions).  Tables carry a stamp per
(segment, reference, kind), so nothing is cleared between segments.

**Matching.**  A hypothesis's n-gram of an order is looked up only where
both of its (n-1)-grams were found (an n-gram of the reference has both of
its (n-1)-grams in the reference); its clipped match uses a per-hypothesis
count of each id, stamped, so the reference's counts stay as they are for
the next hypothesis.
"""

import numpy as np
from numba import njit

from ..text.hashing import MIN_TABLE_BITS, table_bits, table_slot
from .formula import f_score
from .statistics import char_units, prefixed_key, word_units

_DIRECT = 128
#: Stamps of a chunk before its tables are made afresh (the pair tables hold int32 stamps;
#: a segment takes two a reference).
_STAMP_LIMIT = (1 << 31) - 1024


@njit(cache=True, nogil=True)
def _slot(keys, stamps, o, key, stamp, shift, mask):
    slot = table_slot(key, shift)
    while stamps[o, slot] == stamp and keys[o, slot] != key:
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, nogil=True)
def _build(ref, n_ref, orders, exact, tables, stamp, shift, mask):
    """Give every n-gram of ``ref[:n_ref]`` of orders ``1..orders`` its id and count it
    (``tables`` stamped ``stamp``)."""
    (keys, stamps, slot_id, counts, _, _, next_stamp, next_unit, next_id, ids_a, ids_b,
     _, _, direct, pairs) = tables
    prev, cur = ids_a, ids_b
    for m in range(orders):
        total = n_ref - m
        if total <= 0:
            break
        ids = _DIRECT if exact and m == 0 else 0
        for p in range(total):
            unit = ref[p + m]
            if m == 0:
                if exact and unit < _DIRECT:
                    if direct[unit] == stamp:
                        counts[0, unit] += 1
                    else:
                        direct[unit] = stamp
                        counts[0, unit] = 1
                    cur[p] = np.int64(unit)
                    continue
                key = unit
            else:
                prefix = prev[p]
                if exact and prefix < _DIRECT and unit < _DIRECT:
                    at = 2 * ((prefix << 7) | np.int64(unit))
                    if pairs[m, at] == stamp:
                        ident = np.int64(pairs[m, at + 1])
                        counts[m, ident] += 1
                    else:
                        pairs[m, at] = np.int32(stamp)
                        pairs[m, at + 1] = np.int32(ids)
                        ident = ids
                        counts[m, ident] = 1
                        ids += 1
                    cur[p] = ident
                    continue
                if next_stamp[m, prefix] != stamp:  # the prefix's first continuation
                    next_stamp[m, prefix] = stamp
                    next_unit[m, prefix] = unit
                    next_id[m, prefix] = ids
                    counts[m, ids] = 1
                    cur[p] = ids
                    ids += 1
                    continue
                if next_unit[m, prefix] == unit:
                    ident = next_id[m, prefix]
                    counts[m, ident] += 1
                    cur[p] = ident
                    continue
                key = prefixed_key(prefix, unit, exact)
            slot = _slot(keys, stamps, m, key, stamp, shift, mask)
            if stamps[m, slot] == stamp:
                ident = slot_id[m, slot]
                counts[m, ident] += 1
            else:
                stamps[m, slot] = stamp
                keys[m, slot] = key
                slot_id[m, slot] = ids
                ident = ids
                counts[m, ident] = 1
                ids += 1
            cur[p] = ident
        prev, cur = cur, prev


@njit(cache=True, nogil=True)
def _match(hyp, n_hyp, n_ref, orders, exact, tables, stamp, hstamp, shift, mask, out,
           column):
    """Write ``[hyp, ref, match]`` of orders ``1..orders`` to ``out[column:]`` for the
    hypothesis units ``hyp[:n_hyp]`` against the reference counted by :func:`_build`."""
    (keys, stamps, slot_id, counts, used_stamp, used, next_stamp, next_unit, next_id,
     _, _, hyp_a, hyp_b, direct, pairs) = tables
    prev, cur = hyp_a, hyp_b
    alive = True
    for m in range(orders):
        hyp_total = max(n_hyp - m, 0)
        ref_total = max(n_ref - m, 0)
        at = column + 3 * m
        out[at] = hyp_total if ref_total > 0 else 0
        out[at + 1] = ref_total
        out[at + 2] = 0
        if hyp_total == 0 or ref_total == 0 or not alive:
            continue
        match = 0
        found = 0
        for p in range(hyp_total):
            unit = hyp[p + m]
            ident = -1
            if m == 0:
                if exact and unit < _DIRECT:
                    if direct[unit] == stamp:
                        ident = np.int64(unit)
                else:
                    slot = _slot(keys, stamps, 0, unit, stamp, shift, mask)
                    if stamps[0, slot] == stamp:
                        ident = slot_id[0, slot]
            else:
                prefix = prev[p]
                if prefix >= 0 and prev[p + 1] >= 0:
                    if exact and prefix < _DIRECT and unit < _DIRECT:
                        at_pair = 2 * ((prefix << 7) | np.int64(unit))
                        if pairs[m, at_pair] == stamp:
                            ident = np.int64(pairs[m, at_pair + 1])
                    elif next_stamp[m, prefix] == stamp:
                        if next_unit[m, prefix] == unit:
                            ident = next_id[m, prefix]
                        else:
                            slot = _slot(keys, stamps, m, prefixed_key(prefix, unit, exact), stamp,
                                         shift, mask)
                            if stamps[m, slot] == stamp:
                                ident = slot_id[m, slot]
            cur[p] = ident
            if ident >= 0:
                found += 1
                if used_stamp[m, ident] != hstamp:
                    used_stamp[m, ident] = hstamp
                    used[m, ident] = 0
                if used[m, ident] < counts[m, ident]:
                    used[m, ident] += 1
                    match += 1
        out[at + 2] = match
        alive = found > 0
        prev, cur = cur, prev


@njit(cache=True, nogil=True)
def _scratch(units, orders):
    size = 1 << MIN_TABLE_BITS
    while size < 2 * units:
        size *= 2
    n = units + 1 + _DIRECT
    return (np.empty((orders, size), dtype=np.uint64),
            np.full((orders, size), -1, dtype=np.int64),
            np.empty((orders, size), dtype=np.int64),
            np.empty((orders, n), dtype=np.int64),
            np.full((orders, n), -1, dtype=np.int64),
            np.empty((orders, n), dtype=np.int64),
            np.full((orders, n), -1, dtype=np.int64),
            np.empty((orders, n), dtype=np.uint64),
            np.empty((orders, n), dtype=np.int64),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.full(_DIRECT, -1, dtype=np.int64),
            np.full((orders, 2 * _DIRECT * _DIRECT), -1, dtype=np.int32))


@njit(cache=True, nogil=True)
def _same(data, a_start, a_end, b_start, b_end):
    if a_end - a_start != b_end - b_start:
        return False
    for k in range(a_end - a_start):
        if data[a_start + k] != data[b_start + k]:
            return False
    return True


@njit(cache=True, nogil=True)
def shared_chunk(hyp_data, hyp_start, hyp_end, ref_data, ref_start, ref_end, seg_rows,
                 char_order, word_order, whitespace, factor, one_plus_factor, eps_smoothing,
                 out, first, last):
    """Rows ``seg_rows[g]:seg_rows[g + 1]`` of ``out`` for segments ``first <= g < last``:
    hypothesis ``i`` is ``hyp_data[hyp_start[i]:hyp_end[i]]``, reference ``r`` of segment
    ``g`` is ``ref_data[ref_start[r, g]:ref_end[r, g]]`` (missing when the start is -1)."""
    n_refs = ref_start.shape[0]
    width = out.shape[1]
    n_orders = char_order + word_order
    longest = np.int64(64)
    widest = np.int64(64)
    most = np.int64(1)
    for g in range(first, last):
        for r in range(n_refs):
            longest = max(longest, ref_end[r, g] - ref_start[r, g])
        here = np.int64(0)
        for i in range(seg_rows[g], seg_rows[g + 1]):
            span = hyp_end[i] - hyp_start[i]
            longest = max(longest, span)
            here += span + 1
        widest = max(widest, here)
        most = max(most, seg_rows[g + 1] - seg_rows[g])
    orders = max(char_order, word_order, 1)
    tables = _scratch(longest, orders)
    ref_chars = np.empty(longest, dtype=np.uint64)
    ref_words = np.empty(longest, dtype=np.uint64)
    hyp_chars = np.empty(widest, dtype=np.uint64)
    hyp_words = np.empty(widest, dtype=np.uint64)
    at_units = np.empty(most, dtype=np.int64)
    n_chars = np.empty(most, dtype=np.int64)
    n_words = np.empty(most, dtype=np.int64)
    same_as = np.empty(most, dtype=np.int64)
    best = np.empty(most, dtype=np.float64)
    rows = np.empty((most, width), dtype=np.int64)
    stamp = np.int64(0)
    hstamp = np.int64(0)
    for g in range(first, last):
        if stamp > _STAMP_LIMIT:  # the pair tables' int32 stamps: start afresh
            tables = _scratch(longest, orders)
            stamp = np.int64(0)
        lo, hi = seg_rows[g], seg_rows[g + 1]
        k = hi - lo
        at = np.int64(0)
        for j in range(k):  # each distinct hypothesis's units, once
            i = lo + j
            same_as[j] = -1
            for e in range(j):
                if same_as[e] < 0 and _same(hyp_data, hyp_start[lo + e], hyp_end[lo + e],
                                            hyp_start[i], hyp_end[i]):
                    same_as[j] = e
                    break
            best[j] = -1.0
            if same_as[j] >= 0:
                continue
            at_units[j] = at
            n_chars[j] = char_units(hyp_data, hyp_start[i], hyp_end[i], whitespace,
                                    hyp_chars[at:])
            n_words[j] = word_units(hyp_data, hyp_start[i], hyp_end[i], hyp_words[at:]) \
                if word_order > 0 else 0
            at += hyp_end[i] - hyp_start[i] + 1
        for r in range(n_refs):
            if ref_start[r, g] < 0:  # a missing reference
                continue
            # one reference's statistics for every distinct hypothesis: to ``out`` directly
            # with one reference stream, else to ``rows`` and kept if its chrF is the best
            n_ref = char_units(ref_data, ref_start[r, g], ref_end[r, g], whitespace, ref_chars)
            stamp += 1
            mask, shift = table_bits(n_ref)
            _build(ref_chars, n_ref, char_order, True, tables, stamp, shift, mask)
            for j in range(k):
                if same_as[j] < 0:
                    hstamp += 1
                    _match(hyp_chars[at_units[j]:], n_chars[j], n_ref, char_order, True,
                           tables, stamp, hstamp, shift, mask,
                           out[lo + j] if n_refs == 1 else rows[j], 0)
            if word_order > 0:
                n_ref_words = word_units(ref_data, ref_start[r, g], ref_end[r, g], ref_words)
                stamp += 1
                mask, shift = table_bits(n_ref_words)
                _build(ref_words, n_ref_words, word_order, False, tables, stamp, shift, mask)
                for j in range(k):
                    if same_as[j] < 0:
                        hstamp += 1
                        _match(hyp_words[at_units[j]:], n_words[j], n_ref_words, word_order,
                               False, tables, stamp, hstamp, shift, mask,
                               out[lo + j] if n_refs == 1 else rows[j], 3 * char_order)
            if n_refs == 1:
                break
            for j in range(k):
                if same_as[j] < 0:
                    score = f_score(rows[j], np.int64(0), n_orders, factor, one_plus_factor,
                                    eps_smoothing)
                    if score > best[j]:
                        best[j] = score
                        out[lo + j, :] = rows[j]
        for j in range(k):
            if same_as[j] >= 0:
                out[lo + j, :] = out[lo + same_as[j]]


def chrf_shared(hyp_data, hyp_start, hyp_end, ref_data, ref_start, ref_end, seg_rows,
                char_order, word_order, whitespace, factor, one_plus_factor, eps_smoothing,
                out):
    """Fill ``out`` (int64, ``(len(hyp_start), 3 * (char_order + word_order))``) on the
    thread pool (:func:`shared_chunk`'s arguments; ``factor`` and ``one_plus_factor`` are
    ``beta ** 2`` and ``1 + beta ** 2`` as floats)."""
    from ..threads import for_chunks

    for_chunks(shared_chunk, seg_rows.size - 1, hyp_data, hyp_start, hyp_end, ref_data,
               ref_start, ref_end, seg_rows, np.int64(char_order), np.int64(word_order),
               bool(whitespace), float(factor), float(one_plus_factor), bool(eps_smoothing),
               out, min_chunk=256)
