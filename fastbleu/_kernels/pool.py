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
table of ``2**bits`` rows of six int64 (48 bytes, one probe reads one
row), grown by doubling when it is more than 5/8 full, so its size follows
the pool's distinct n-grams rather than its tokens.  A sentence's count of an
n-gram is kept in the row itself while the sentence is read (``_LAST``,
``_RUN``: the number of the sentence counting it and its count so far), so
no per-sentence table or sort is needed: each n-gram occurrence is one probe
when the table is built and one when the hypotheses are scored, where a
hypothesis occurrence is a match while the hypothesis's running count of it
does not exceed the clip count (``min(count, clip)`` in all).

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
_LAST = 4  # the sentence (or n_pool + hypothesis) counting this n-gram last
_RUN = 5  # its count in that sentence so far
_COLUMNS = 6
_MIN_BITS = 10


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
    n_pool = pool_count.size
    pool_keys, pool_base = _compact_keys(pool_hashes, pool_start, pool_count)
    if leave_one_out:
        hyp_keys, hyp_base = pool_keys, pool_base
    else:
        hyp_keys, hyp_base = _compact_keys(hyp_hashes, hyp_start, hyp_count)
    for i in range(n_hyp):
        for m in range(max_order):
            out[i, 2 + m] = 0
    bits = _MIN_BITS
    table = np.zeros((1 << bits, _COLUMNS), dtype=np.int64)

    for m in range(max_order):
        if m > 0:
            _extend(pool_keys, pool_base, pool_hashes, pool_start, pool_count, m)
            if not leave_one_out:
                _extend(hyp_keys, hyp_base, hyp_hashes, hyp_start, hyp_count, m)
            table[:, _TOP] = 0
        used = 0
        for j in range(n_pool):
            for p in range(pool_count[j] - m):
                key = pool_keys[pool_base[j] + p]
                slot = _find(table, bits, key)
                if table[slot, _TOP] == 0:
                    table[slot, _KEY] = np.int64(key)
                    table[slot, _TOP] = 1
                    table[slot, _HOLDER] = j
                    table[slot, _SECOND] = 0
                    table[slot, _LAST] = j
                    table[slot, _RUN] = 1
                    used += 1
                    if 8 * used > 5 * (1 << bits):
                        table = _grown(table, bits)
                        bits += 1
                    continue
                # This sentence's count so far, then the top two counts with it.
                if table[slot, _LAST] == j:
                    table[slot, _RUN] += 1
                else:
                    table[slot, _LAST] = j
                    table[slot, _RUN] = 1
                run = table[slot, _RUN]
                if run > table[slot, _TOP]:
                    if table[slot, _HOLDER] != j:
                        table[slot, _SECOND] = table[slot, _TOP]
                        table[slot, _HOLDER] = j
                    table[slot, _TOP] = run
                elif table[slot, _HOLDER] != j and run > table[slot, _SECOND]:
                    table[slot, _SECOND] = run

        for i in range(n_hyp):
            if m > 0 and out[i, 1 + m] == 0:
                continue  # no (m-1)-gram matched, so no m-gram can
            stamp = n_pool + i  # never a pool sentence's number
            matches = 0
            for p in range(hyp_count[i] - m):
                slot = _find(table, bits, hyp_keys[hyp_base[i] + p])
                clip = table[slot, _TOP]
                if clip == 0:
                    continue  # no pool sentence has this n-gram
                if leave_one_out and table[slot, _HOLDER] == i:
                    clip = table[slot, _SECOND]
                if table[slot, _LAST] == stamp:
                    table[slot, _RUN] += 1
                else:
                    table[slot, _LAST] = stamp
                    table[slot, _RUN] = 1
                if table[slot, _RUN] <= clip:
                    matches += 1
            out[i, 2 + m] = matches
