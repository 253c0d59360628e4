"""Clipped n-gram matches against a shared pool of references, and leave-one-out (Self-BLEU).

Every hypothesis is scored against the same ``M`` pool sentences, so the
per-n-gram clip count (the largest count in any single pool sentence, the
modified precision's clip of Papineni et al., 2002) is one table for all
hypotheses: building it reads each pool n-gram once and scoring reads each
hypothesis n-gram once, O(N + M) n-grams in all instead of N * M.

Self-BLEU scores every sentence against all the others.  Each table row
keeps, per n-gram key, the top count over the sentences (``_TOP``), the
sentence that reached it first (``_HOLDER``) and the largest count of any
*other* sentence (``_SECOND``).  Sentence ``i``'s clip count with itself
left out is then ``_SECOND`` when ``i`` holds the top, else ``_TOP``; when
two sentences share the top count, ``_SECOND`` equals ``_TOP`` and the
leave-one-out maximum is still the top.

Orders are counted one at a time (the running n-gram keys of every token are
extended by one token per order, :func:`~.hashing.extend_key`), so the table
only ever holds the distinct n-grams of one order; it is an open-addressing
table of ``2**bits`` rows of four int64 (one cache line per probe), grown
by doubling when it is more than 5/8 full, so its size follows the pool's
distinct n-grams rather than its tokens.  Within a sentence, its n-gram
keys of the order are sorted (insertion sort up to ``_SMALL_SORT`` keys) so
that equal keys form runs: a run's length is the sentence's count of that
n-gram, and each (sentence, n-gram) pair touches the table once.

Keys are the 64-bit polynomial hashes of the rest of fastbleu; here they are
compared across the whole pool rather than within one segment, so a
collision among ``D`` distinct n-grams of one order has probability about
``D**2 / 2**65`` (1e-5 for 2e7 distinct 4-grams).
"""

import numpy as np
from numba import njit

from .hashing import extend_key, table_slot

_KEY = 0  # the n-gram key's bits
_TOP = 1  # largest count in one sentence (0: a free row)
_HOLDER = 2  # the first sentence that reached _TOP
_SECOND = 3  # largest count in any sentence other than _HOLDER
_COLUMNS = 4
_MIN_BITS = 10
_SMALL_SORT = 32


@njit(cache=True, nogil=True)
def _sort_head(buf, k):
    """Sort ``buf[:k]`` in place."""
    if k <= _SMALL_SORT:
        for a in range(1, k):
            x = buf[a]
            b = a - 1
            while b >= 0 and buf[b] > x:
                buf[b + 1] = buf[b]
                b -= 1
            buf[b + 1] = x
    else:
        buf[:k] = np.sort(buf[:k])


@njit(cache=True, nogil=True)
def _find(table, bits, key):
    """Row of ``key``, or the free row where it belongs."""
    mask = (1 << bits) - 1
    slot = table_slot(key, np.uint64(64 - bits))
    word = np.int64(key)
    while table[slot, _TOP] != 0 and table[slot, _KEY] != word:
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, nogil=True)
def _grown(table, bits):
    """The same rows in a table twice as large."""
    new_bits = bits + 1
    new = np.zeros((1 << new_bits, _COLUMNS), dtype=np.int64)
    for row in range(table.shape[0]):
        if table[row, _TOP] != 0:
            slot = _find(new, new_bits, np.uint64(table[row, _KEY]))
            for c in range(_COLUMNS):
                new[slot, c] = table[row, c]
    return new


@njit(cache=True, nogil=True)
def _compact_keys(hashes, start, count):
    """Each sentence's token hashes, back to back, and where each sentence begins."""
    n = count.size
    base = np.zeros(n + 1, dtype=np.int64)
    for j in range(n):
        base[j + 1] = base[j] + max(count[j], 0)
    keys = np.empty(base[n], dtype=np.uint64)
    for j in range(n):
        for p in range(max(count[j], 0)):
            keys[base[j] + p] = hashes[start[j] + p]
    return keys, base


@njit(cache=True, nogil=True)
def _extend(keys, base, hashes, start, count, m):
    """Turn every sentence's (m-1)-gram keys into m-gram keys (``m`` 0-based)."""
    for j in range(count.size):
        for p in range(count[j] - m):
            keys[base[j] + p] = extend_key(keys[base[j] + p], hashes[start[j] + p + m])


@njit(cache=True, nogil=True)
def pool_matches(hyp_hashes, hyp_start, hyp_count, pool_hashes, pool_start, pool_count,
                 max_order, leave_one_out, out):
    """Write the clipped matches of every hypothesis to ``out[i, 2:2 + max_order]``.

    Hypothesis ``i`` is ``hyp_hashes[hyp_start[i]:hyp_start[i] + hyp_count[i]]``,
    pool sentence ``j`` likewise.  With ``leave_one_out`` the hypotheses *are*
    the pool sentences (pass the same arrays) and sentence ``i``'s clip counts
    leave sentence ``i`` out.  Counts must be >= 0.  Other columns of ``out``
    are not touched.
    """
    n_hyp = hyp_count.size
    pool_keys, pool_base = _compact_keys(pool_hashes, pool_start, pool_count)
    if leave_one_out:
        hyp_keys, hyp_base = pool_keys, pool_base
    else:
        hyp_keys, hyp_base = _compact_keys(hyp_hashes, hyp_start, hyp_count)
    longest = 1
    for j in range(pool_count.size):
        longest = max(longest, pool_count[j])
    for i in range(n_hyp):
        longest = max(longest, hyp_count[i])
        for m in range(max_order):
            out[i, 2 + m] = 0
    buf = np.empty(longest, dtype=np.uint64)
    bits = _MIN_BITS
    table = np.zeros((1 << bits, _COLUMNS), dtype=np.int64)

    for m in range(max_order):
        if m > 0:
            _extend(pool_keys, pool_base, pool_hashes, pool_start, pool_count, m)
            if not leave_one_out:
                _extend(hyp_keys, hyp_base, hyp_hashes, hyp_start, hyp_count, m)
            table[:, _TOP] = 0
        used = 0
        for j in range(pool_count.size):
            k = pool_count[j] - m
            if k <= 0:
                continue
            for p in range(k):
                buf[p] = pool_keys[pool_base[j] + p]
            _sort_head(buf, k)
            p = 0
            while p < k:
                key = buf[p]
                run = 1
                while p + run < k and buf[p + run] == key:
                    run += 1
                p += run
                slot = _find(table, bits, key)
                top = table[slot, _TOP]
                if top == 0:
                    table[slot, _KEY] = np.int64(key)
                    table[slot, _TOP] = run
                    table[slot, _HOLDER] = j
                    table[slot, _SECOND] = 0
                    used += 1
                    if 8 * used > 5 * (1 << bits):
                        table = _grown(table, bits)
                        bits += 1
                elif run > top:
                    table[slot, _SECOND] = top
                    table[slot, _TOP] = run
                    table[slot, _HOLDER] = j
                elif run > table[slot, _SECOND]:
                    table[slot, _SECOND] = run

        for i in range(n_hyp):
            k = hyp_count[i] - m
            if k <= 0 or (m > 0 and out[i, 1 + m] == 0):
                continue  # no (m-1)-gram matched, so no m-gram can
            for p in range(k):
                buf[p] = hyp_keys[hyp_base[i] + p]
            _sort_head(buf, k)
            matches = 0
            p = 0
            while p < k:
                key = buf[p]
                run = 1
                while p + run < k and buf[p + run] == key:
                    run += 1
                p += run
                slot = _find(table, bits, key)
                clip = table[slot, _TOP]
                if clip == 0:
                    continue  # no pool sentence has this n-gram
                if leave_one_out and table[slot, _HOLDER] == i:
                    clip = table[slot, _SECOND]
                matches += min(run, clip)
            out[i, 2 + m] = matches
