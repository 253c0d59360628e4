"""Token hashes -> BLEU sufficient statistics, one row per segment.

Row layout (sacrebleu's): ``[hyp_len, ref_len, match_1..match_N,
total_1..total_N]``, int64.

For each segment the reference n-grams go into a small open-addressing
table that records, per n-gram key, the largest count in any single
reference (sacrebleu's ``max`` merge of the reference Counters).  Each
hypothesis n-gram then takes one from that maximum and is a match while it
stays at zero or above, which sums ``min(hyp_count, max_ref_count)`` over
n-grams (Papineni et al., 2002, modified n-gram precision).  Table slots carry the number of the segment
that wrote them, so the table is never cleared between segments.  A
reference n-gram with a token the hypothesis lacks is never inserted (a bit
set of the hypothesis's tokens tells), and a hypothesis n-gram missing from
the table ends its extensions: most n-grams of orders 2 to 4 cost a bit test
rather than a probe.  The references are walked by each n-gram's last token,
so that each token's bit is tested once; a row is found from the key's top
bits (keys are already well mixed), in a flat table whose rows are named by
their first word.  Segments too large for that table are counted after the
others (``_large_segments``).

That table holds every order at once, with eight to sixteen rows of 64 bytes
per reference n-gram, so that probes are short and a WMT-size segment's
table stays in cache; but a segment of a million tokens would need
gigabytes.  A segment whose references have more than ``LARGE_ABOVE``
n-grams is counted in a second, compact table instead
(``_large_segment``): one order at a time, so that it needs 1.5 to 3
rows of 32 bytes per reference token (no order has more distinct n-grams
than the references have tokens), plus the running n-gram keys of the hypothesis and references
(8 bytes a token).  The small table thus never grows past
``8 * LARGE_ABOVE`` rows (4 MB), and one huge segment costs 64 to 112 bytes
per reference token (sacrebleu's Counters take several hundred).  The
compact table is kept for the chunk's later large segments, stamped per
segment and order like the small one.

Indices into arrays are cast to ``np.uint64`` where the kernels' loops run:
numba gives a signed index Python's meaning (``-1`` is the last element), so
each access with a signed index LLVM cannot prove non-negative costs a
fix-up of three instructions.  Unsigned, it is a plain load; that took a
third of this kernel's instructions away.

The reference length is the closest one to the hypothesis length, ties to
the shorter (sacrebleu's ``_get_closest_ref_len``, ``REF_CLOSEST``); or the
shortest reference (``REF_SHORTEST``, the original IBM script's choice); or
the mean of the references' lengths (``REF_AVERAGE``), kept exact in int64
as ``sum_of_lengths * (AVERAGE_SCALE // n_refs)``, so that sums over
segments stay exact and the formula divides by ``AVERAGE_SCALE``.
"""

import numpy as np
from numba import njit

# The codes live in a module without numba (the ahead-of-time path imports them).
from ..._native.codes import (AVERAGE_SCALE, LARGE_ABOVE, MAX_AVERAGED_REFERENCES, REF_AVERAGE,
                              REF_CLOSEST, REF_SHORTEST, row_width)
from ..text.hashing import extend_key, table_slot
from ..threads import for_chunks

_MIN_BITS = 6
# Columns of the n-gram table; one row per n-gram, so a probe touches one cache line.
_KEY = 0  # the n-gram key's bits
_STAMP = 1  # number of the segment that owns the row (rows of older segments are free)
_LAST_REF = 2  # the (segment, reference) that counted it last, after the first reference
_REF_RUN = 3  # its count in that reference so far
_REF_MAX = 4  # its largest count in any single reference; the hypothesis counts it down
_COLUMNS = 8  # five used; eight make a row one cache line and its address a shift
_U_STAMP, _U_LAST_REF, _U_REF_RUN, _U_REF_MAX = (np.uint64(c) for c in (_STAMP, _LAST_REF,
                                                                       _REF_RUN, _REF_MAX))
_U_COLUMNS = np.uint64(_COLUMNS)
# Columns of the compact table of large segments, one order at a time (the
# first two as in the table above; ``_find`` probes it, and pool.py's table).
_L_KEY = _KEY
_L_STAMP = _STAMP  # (segment, order) that owns the row
_L_REF_MAX = 2  # largest count in any single reference
_L_RUN = 3  # count in the current reference (after the first); then in the hypothesis
_L_COLUMNS = 4
# The hypothesis's token bit set: 16 words of 64 bits; a hash's top 4 bits pick the
# word (one shift), its low 6 bits the bit (``bt`` and ``shlx`` take them as they are).
_WORDS = 16
_S60 = np.uint64(60)
_BIG = np.iinfo(np.int64).max
_ZERO = np.uint64(0)
_ONE = np.uint64(1)
_S63 = np.uint64(63)


@njit(cache=True, nogil=True)
def _ngram_count(length, max_order):
    """N-grams of orders 1 to ``max_order`` in ``length`` tokens (``length >= 0``)."""
    if length >= max_order:
        return max_order * length - (max_order * (max_order - 1)) // 2
    return (length * (length + 1)) // 2


@njit(cache=True, nogil=True)
def _find(table, bits, key, stamp):
    """Row of ``key`` among the first ``2**bits`` rows, or the free row where it belongs."""
    mask = np.uint64((1 << bits) - 1)
    slot = np.uint64(table_slot(key, np.uint64(64 - bits)))
    bits = np.int64(key)
    while table[slot, _STAMP] == stamp and table[slot, _KEY] != bits:
        slot = (slot + _ONE) & mask
    return slot


@njit(cache=True, nogil=True)
def _large_segment(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count,
                   max_order, out, i, table, bits, stamps):
    """Add segment ``i``'s clipped matches to ``out[i]``, counting one order at a time.

    ``table`` has at least ``2**bits`` rows, at least 1.5 times the segment's
    reference tokens (so it is at most two thirds full).  ``hyp_keys[p]``
    (``ref_keys`` likewise) holds the key of the n-gram of the current order
    that starts at token ``p``, extended by one token per order.  The first
    reference counts straight into ``_L_REF_MAX``; each later one counts into
    ``_L_RUN``, then a second walk folds that into the maximum and clears it
    for the hypothesis, which counts there too.  Rows of order ``m`` carry
    the stamp ``stamps + m``.
    """
    n_refs = ref_start.shape[0]
    hyp_base = hyp_start[i]
    hyp_len = hyp_count[i]
    ref_total = 0
    for r in range(n_refs):
        ref_total += max(ref_count[r, i], 0)
    hyp_keys = np.empty(hyp_len, dtype=hyp_hashes.dtype)
    for p in range(hyp_len):
        hyp_keys[p] = hyp_hashes[hyp_base + p]
    ref_keys = np.empty(ref_total, dtype=hyp_hashes.dtype)
    at = 0
    for r in range(n_refs):
        for p in range(ref_count[r, i]):
            ref_keys[at] = ref_hashes[ref_start[r, i] + p]
            at += 1

    for m in range(max_order):
        if hyp_len - m <= 0:
            break
        stamp = stamps + m
        first = True
        at = 0
        for r in range(n_refs):
            ref_len = ref_count[r, i]
            if ref_len <= m:
                at += max(ref_len, 0)
                continue
            base = ref_start[r, i]
            for p in range(ref_len - m):
                if m > 0:
                    ref_keys[at + p] = extend_key(ref_keys[at + p], ref_hashes[base + p + m])
                key = ref_keys[at + p]
                slot = _find(table, bits, key, stamp)
                if table[slot, _L_STAMP] != stamp:
                    table[slot, _L_STAMP] = stamp
                    table[slot, _L_KEY] = np.int64(key)
                    table[slot, _L_REF_MAX] = 0
                    table[slot, _L_RUN] = 0
                if first:
                    table[slot, _L_REF_MAX] += 1
                else:
                    table[slot, _L_RUN] += 1
            if not first:
                for p in range(ref_len - m):
                    slot = _find(table, bits, ref_keys[at + p], stamp)
                    if table[slot, _L_RUN] > table[slot, _L_REF_MAX]:
                        table[slot, _L_REF_MAX] = table[slot, _L_RUN]
                    table[slot, _L_RUN] = 0
            first = False
            at += ref_len
        if first:  # no reference has an n-gram of this order
            break
        matches = 0
        for p in range(hyp_len - m):
            if m > 0:
                hyp_keys[p] = extend_key(hyp_keys[p], hyp_hashes[hyp_base + p + m])
            slot = _find(table, bits, hyp_keys[p], stamp)
            if table[slot, _L_STAMP] == stamp:
                table[slot, _L_RUN] += 1
                if table[slot, _L_RUN] <= table[slot, _L_REF_MAX]:
                    matches += 1
        out[i, 2 + m] = matches


@njit(cache=True, nogil=True)
def _probe(table, shift, mask, key, stamp):
    """(row of ``key``, True), or (the free row where it belongs, False).

    The small table is flat, ``_COLUMNS`` words a row, and a row is named by
    the index of its first word.  Token hashes are splitmix64 outputs and an
    n-gram key adds a token hash to a multiple of its prefix's key, so a key's
    top bits are already uniform: shifted right by ``shift`` and masked by
    ``mask`` (the table's rows times ``_COLUMNS``, less one row), they give
    its first row without another multiply.
    """
    row = (key >> shift) & mask
    bits = np.int64(key)
    while True:
        if table[row + _U_STAMP] != stamp:
            return row, False
        if table[row] == bits:
            return row, True
        row = (row + _U_COLUMNS) & mask


@njit(cache=True, nogil=True)
def chunk_statistics(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start,
                      ref_count, max_order, ref_length, large_above, out, first, last):
    """Statistics of segments ``first:last``; owns its n-gram tables."""
    n_refs = ref_start.shape[0]
    table = np.zeros(_COLUMNS << _MIN_BITS, dtype=np.int64)
    stamp = 0
    any_large = False
    orders = np.uint64(max_order)
    in_hyp = np.zeros(_WORDS, dtype=np.uint64)
    keys = np.zeros(max(max_order, 1), dtype=np.uint64)
    for i in range(first, last):
        stamp += 1
        hyp_len = hyp_count[i]
        closest_diff = _BIG
        closest_len = -1
        shortest = _BIG
        length_sum = 0
        present = 0
        ref_ngrams = 0
        for r in range(n_refs):
            ref_len = ref_count[r, i]
            if ref_len < 0:
                continue
            diff = abs(hyp_len - ref_len)
            if diff < closest_diff or (diff == closest_diff and ref_len < closest_len):
                closest_diff = diff
                closest_len = ref_len
            shortest = min(shortest, ref_len)
            length_sum += ref_len
            present += 1
            ref_ngrams += _ngram_count(ref_len, max_order)

        out[i, 0] = hyp_len
        if ref_length == REF_SHORTEST:
            out[i, 1] = shortest if present else -1
        elif ref_length == REF_AVERAGE:
            out[i, 1] = length_sum * (AVERAGE_SCALE // max(present, 1))
        else:
            out[i, 1] = closest_len
        for m in range(max_order):
            out[i, 2 + m] = 0
            out[i, 2 + max_order + m] = max(hyp_len - m, 0)
        if ref_ngrams == 0 or hyp_len == 0:
            continue
        if ref_ngrams > large_above:
            any_large = True  # counted after this loop
            continue

        # A table at most half full, and only as large as this segment needs,
        # so that its rows stay in the L1 cache.
        bits = _MIN_BITS
        while 8 * ref_ngrams > (1 << bits):
            bits += 1
        if table.shape[0] < (_COLUMNS << bits):
            table = np.zeros(_COLUMNS << bits, dtype=np.int64)
        shift = np.uint64(64 - bits - 3)  # _COLUMNS is 2**3
        mask = np.uint64((_COLUMNS << bits) - _COLUMNS)

        # The hypothesis's tokens as a set of 1,024 bits (a bit stands for every
        # token whose hash has the same top 4 and low 6 bits).  A reference n-gram with a token that the
        # hypothesis lacks cannot match, so it is not inserted: a bit test
        # instead of a probe for most reference n-grams of orders 2 to 4 (the
        # pruning pays only for orders above 1).  A set bit may stand for
        # another token; that only costs an n-gram inserted in vain.
        in_hyp[:] = 0
        hyp_base = np.uint64(hyp_start[i])
        for p in range(hyp_len):
            h = hyp_hashes[hyp_base + np.uint64(p)]
            in_hyp[h >> _S60] |= _ONE << (h & _S63)

        # Reference n-grams by their last token: ``keys[j]`` is the key of the
        # n-gram of order ``j + 1`` that ends at the current token, ``run`` how
        # many tokens the hypothesis has in a row up to it (at most max_order),
        # so each token is tested once.  The first reference counts straight
        # into _REF_MAX; a later one counts its run in _REF_RUN, restarted when
        # _LAST_REF names another (segment, reference) pair: ``ref_id`` grows
        # with both, so a row's stale _LAST_REF never names the current pair.
        ref_id = stamp * n_refs
        for r in range(n_refs):
            ref_len = ref_count[r, i]
            base = np.uint64(ref_start[r, i])
            run = _ZERO
            for p in range(ref_len):
                h = ref_hashes[base + np.uint64(p)]
                if in_hyp[h >> _S60] & (_ONE << (h & _S63)) == 0:
                    run = _ZERO
                    continue
                if run < orders:
                    run += _ONE
                j = run
                while j > _ZERO:
                    j -= _ONE
                    key = h
                    if j > _ZERO:
                        key = extend_key(keys[j - _ONE], h)
                        keys[j] = key
                    row, found = _probe(table, shift, mask, key, stamp)
                    if not found:
                        table[row + _U_STAMP] = stamp
                        table[row] = np.int64(key)
                        table[row + _U_REF_MAX] = 1
                        if r > 0:
                            table[row + _U_LAST_REF] = ref_id
                            table[row + _U_REF_RUN] = 1
                    elif r == 0:
                        table[row + _U_REF_MAX] += 1
                    elif table[row + _U_LAST_REF] == ref_id:
                        count = table[row + _U_REF_RUN] + 1
                        table[row + _U_REF_RUN] = count
                        if count > table[row + _U_REF_MAX]:
                            table[row + _U_REF_MAX] = count
                    else:
                        table[row + _U_LAST_REF] = ref_id
                        table[row + _U_REF_RUN] = 1
                keys[0] = h
            ref_id += 1

        # Each hypothesis n-gram takes one of its reference maximum's count
        # (_REF_MAX counts down): a match while that stays at zero or above.
        for p in range(hyp_len):
            at = hyp_base + np.uint64(p)
            key = hyp_hashes[at]
            top = min(orders, np.uint64(hyp_len - p))
            m = _ONE
            while True:
                row, found = _probe(table, shift, mask, key, stamp)
                if not found:
                    # No reference has this n-gram, so none has its extensions.
                    break
                left = table[row + _U_REF_MAX] - 1
                table[row + _U_REF_MAX] = left
                if left >= 0:
                    out[i, _ONE + m] += 1
                if m == top:
                    break
                key = extend_key(key, hyp_hashes[at + m])
                m += _ONE

    if any_large:
        _large_segments(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count,
                        max_order, large_above, out, first, last)


@njit(cache=True, nogil=True)
def _large_segments(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count,
                    max_order, large_above, out, first, last):
    """Matches of the segments of ``first:last`` with more than ``large_above`` n-grams."""
    n_refs = ref_start.shape[0]
    large = np.zeros((0, _L_COLUMNS), dtype=np.int64)
    large_stamps = 0
    for i in range(first, last):
        ref_tokens = 0
        ref_ngrams = 0
        for r in range(n_refs):
            ref_len = ref_count[r, i]
            if ref_len >= 0:
                ref_tokens += ref_len
                ref_ngrams += _ngram_count(ref_len, max_order)
        if ref_ngrams == 0 or ref_ngrams <= large_above or hyp_count[i] == 0:
            continue
        bits = _MIN_BITS
        while 3 * ref_tokens > (2 << bits):  # at least 1.5 rows a reference token
            bits += 1
        if large.shape[0] < (1 << bits):
            large = np.zeros((1 << bits, _L_COLUMNS), dtype=np.int64)
        large_stamps += max_order
        _large_segment(hyp_hashes, hyp_start, hyp_count, ref_hashes, ref_start, ref_count,
                       max_order, out, i, large, bits, large_stamps)


def segment_statistics(hyp_hashes, hyp_start, hyp_count,
                       ref_hashes, ref_start, ref_count, max_order, out,
                       ref_length=REF_CLOSEST, large_above=LARGE_ABOVE):
    """Fill ``out[i]`` with the statistics of segment ``i``.

    Hypothesis ``i`` is ``hyp_hashes[hyp_start[i]:hyp_start[i] + hyp_count[i]]``;
    reference ``r`` of segment ``i`` likewise with ``ref_start[r, i]`` and
    ``ref_count[r, i]``, where a count below zero marks a missing reference.
    Every segment must have at least one reference (at most
    ``MAX_AVERAGED_REFERENCES`` with ``REF_AVERAGE``).  Chunks of segments
    run on several threads, each with its own tables.  Segments whose
    references have more than ``large_above`` n-grams go to the compact
    table (the same counts in far less memory; tests lower it to try that
    table on small segments).
    """
    for_chunks(chunk_statistics, hyp_start.size, hyp_hashes, hyp_start, hyp_count,
               ref_hashes, ref_start, ref_count, max_order, ref_length, large_above, out)
