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
extended by one token per order, :func:`~.hashing.extend_key`).  A pool of a
million sentences has tens of millions of distinct n-grams of an order, far
more than any cache holds, and a probe into one table that size misses the
cache twice (build, then score).  So the n-gram occurrences of the order are
first scattered, by the low bits of their key, into partitions of about
``PART_RECORDS`` occurrences (a counting sort, stable, so each partition
keeps the sentences' order); every partition is then counted in a small
open-addressing table that stays in cache, built from its pool occurrences
and then probed by its hypothesis occurrences.  The table's rows carry a
stamp of their partition (so it is never cleared), it starts at
``2**_MIN_BITS`` rows and doubles when more than 5/8 full, and it is kept
from partition to partition.

A sentence's count of an n-gram is kept in the row while its occurrences are
read (``_LAST``, ``_RUN``: the number of the sentence counting it and its
count so far), which works because a partition lists each sentence's
occurrences together.  Against a pool, each occurrence is one probe when the
table is built and one when the hypotheses are scored, where a hypothesis
occurrence is a match while the hypothesis's running count does not exceed
the clip count (``min(count, clip)`` in all); a hypothesis without a match
of order ``m - 1`` has none of order ``m`` and is skipped.  In Self-BLEU the
hypothesis occurrences are the pool occurrences, in the same order, so the
build notes each occurrence's row and running count and the scoring reads
them back without probing again.

**Pruning (Self-BLEU).**  An n-gram that occurs in one sentence only cannot
match: its own sentence is left out and no other has it.  If either of its
two (n-1)-grams occurs in one sentence only, so does the n-gram.  So the
occurrences counted are *candidates*, positions kept in a list compacted in
place from order to order: every token for unigrams, then only the
positions whose (n-1)-gram and the next one in the sentence were both
marked while order n - 1 was scored (``shared[pos]``: ``_SECOND > 0``, some
sentence other than the holder has it).  A mark is the order's number, so
the marks are never cleared.  Of 10,000 WMT22 system outputs (several
systems translating the same sources) 97%, 84% and 75% of the occurrences of
orders 2 to 4 stay; of less repetitive text, fewer.  Keeping and scattering
the candidates is split between threads by runs of sentences, each thread's
records of a partition after those of the threads before it.

The candidates and records live in one block allocated once per call,
positions and sentence numbers as int32 below ``2**31``: fresh memory costs a
page fault per 4 KiB, which was a quarter of the kernel's time.

Keys are the 64-bit polynomial hashes of the rest of fastbleu; here they are
compared across the whole pool rather than within one segment, so a
collision among ``D`` distinct n-grams of one order has probability about
``D**2 / 2**65`` (1e-5 for 2e7 distinct 4-grams).
"""

import numba
import numpy as np
from numba import njit

from .. import threads
from .counting import _KEY, _STAMP, _find
from ..text.hashing import extend_key

# _KEY (0): the n-gram key's bits; _STAMP (1): the partition that owns the row (rows of
# other partitions are free); both, and the probe _find, are counting's.
_TOP = 2  # largest count in one sentence
_HOLDER = 3  # the first sentence that reached _TOP
_SECOND = 4  # largest count in any sentence other than _HOLDER
_LAST = 5  # the sentence (or n_pool + hypothesis) counting this n-gram last
_RUN = 6  # its count in that sentence so far
_COLUMNS = 7
_MIN_BITS = 10
#: Occurrences per partition: their table (at most 2**13 rows of 56 bytes) fits in L2.
PART_RECORDS = 4096


@njit(cache=True, nogil=True)
def _grown(table, bits, stamp):
    """The rows stamped ``stamp`` in a table twice as large."""
    new = np.zeros((1 << (bits + 1), _COLUMNS), dtype=np.int64)
    for row in range(table.shape[0]):
        if table[row, _STAMP] == stamp:
            slot = _find(new, bits + 1, np.uint64(table[row, _KEY]), stamp)
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
def _partition(keys, base, count, m, part_bits, alive, index):
    """The order-``m`` n-grams of the ``alive`` sentences, scattered by the low bits of their key.

    Returns ``(bounds, record_keys, record_sentences)``: partition ``q`` is
    records ``bounds[q]:bounds[q + 1]``, in sentence order; the sentence
    numbers have ``index``'s dtype.
    """
    parts = 1 << part_bits
    mask = np.uint64(parts - 1)
    bounds = np.zeros(parts + 1, dtype=np.int64)
    for j in range(count.size):
        if alive[j]:
            for p in range(count[j] - m):
                bounds[np.int64(keys[base[j] + p] & mask) + 1] += 1
    for q in range(parts):
        bounds[q + 1] += bounds[q]
    cursor = bounds[:parts].copy()
    record_keys = np.empty(bounds[parts], dtype=np.uint64)
    record_sentences = np.empty(bounds[parts], dtype=index.dtype)
    for j in range(count.size):
        if alive[j]:
            for p in range(count[j] - m):
                key = keys[base[j] + p]
                q = np.int64(key & mask)
                record_keys[cursor[q]] = key
                record_sentences[cursor[q]] = j
                cursor[q] += 1
    return bounds, record_keys, record_sentences


@njit(cache=True, nogil=True)
def _order_records(pool_keys, pool_base, pool_hashes, pool_start, pool_count, hyp_keys,
                   hyp_base, hyp_hashes, hyp_start, hyp_count, m, alive, part_records, index):
    """Extend the keys to order ``m`` and partition its occurrences (pool, then hypotheses)."""
    if m > 0:
        _extend(pool_keys, pool_base, pool_hashes, pool_start, pool_count, m)
        _extend(hyp_keys, hyp_base, hyp_hashes, hyp_start, hyp_count, m)
    total = 0
    for j in range(pool_count.size):
        total += max(pool_count[j] - m, 0)
    every = np.ones(pool_count.size, dtype=np.bool_)
    bits = _part_bits(total, part_records)
    pool_bounds, pool_rk, pool_rs = _partition(pool_keys, pool_base, pool_count, m, bits, every,
                                               index)
    hyp_bounds, hyp_rk, hyp_rs = _partition(hyp_keys, hyp_base, hyp_count, m, bits, alive, index)
    return pool_bounds, pool_rk, pool_rs, hyp_bounds, hyp_rk, hyp_rs


@njit(cache=True, nogil=True)
def _part_bits(total, part_records):
    """Bits of the partition number: about ``part_records`` of ``total`` occurrences each."""
    bits = 0
    while (total >> bits) > part_records:
        bits += 1
    return bits


# -- leave-one-out (Self-BLEU) ------------------------------------------------------------


@njit(cache=True, nogil=True)
def _self_keep(hashes, start, count, base, cand, keys, low, n_cand, first, last, shared, m,
               part_bits):
    """Order ``m``'s candidates among sentences ``first:last``, and how many per partition.

    The candidates are ``cand[low:low + n_cand]``, increasing positions
    ``base[j] + p`` of the n-gram at token ``p`` of sentence ``j``, with their
    keys in ``keys``; at order 0 they are every token of the sentences.  At
    order ``m > 0`` an order ``m - 1`` candidate stays if its n-gram and the
    next one in its sentence are both marked ``shared[pos] == m`` (in two
    sentences or more), its key extended by one token; the list is compacted
    in place.  Returns the number kept and their count per partition (the low
    ``part_bits`` bits of the key).
    """
    mask = np.uint64((1 << part_bits) - 1)
    sizes = np.zeros(1 << part_bits, dtype=np.int64)
    k = low
    if m == 0:
        for j in range(first, last):
            for p in range(count[j]):
                key = hashes[start[j] + p]
                cand[k] = base[j] + p
                keys[k] = key
                sizes[np.int64(key & mask)] += 1
                k += 1
        return k - low, sizes
    mark = np.uint8(m & 255)
    j = first
    for c in range(low, low + n_cand):
        pos = cand[c]
        while base[j + 1] <= pos:  # the sentence of pos
            j += 1
        p = pos - base[j]
        if p + m < count[j] and shared[pos] == mark and shared[pos + 1] == mark:
            key = extend_key(keys[c], hashes[start[j] + p + m])
            keys[k] = key
            cand[k] = pos
            sizes[np.int64(key & mask)] += 1
            k += 1
    return k - low, sizes


@njit(cache=True, nogil=True)
def _self_scatter(base, cand, keys, low, n_cand, first, cursor, record_keys, record_sentences,
                  record_positions):
    """Write the records (key, sentence, position) of ``cand[low:low + n_cand]`` (sentences
    from ``first`` on), each to its partition's ``cursor``: a stable counting sort."""
    mask = np.uint64(cursor.size - 1)
    j = first
    for c in range(low, low + n_cand):
        pos = cand[c]
        while base[j + 1] <= pos:
            j += 1
        key = keys[c]
        q = np.int64(key & mask)
        r = cursor[q]
        record_keys[r] = key
        record_sentences[r] = j
        record_positions[r] = pos
        cursor[q] = r + 1


@njit(cache=True, nogil=True)
def _count_parts(table, bits, stamp, pool_bounds, pool_rk, pool_rs, hyp_bounds, hyp_rk, hyp_rs,
                 alive, n_pool, leave_one_out, positions, shared, mark, matches, first, last):
    """Add the clipped matches of partitions ``first:last`` to ``matches``.

    ``table`` (``2**bits`` rows) is this caller's own scratch; rows stamped
    ``<= stamp`` are free.  With ``leave_one_out`` the hypotheses are the pool
    records (the ``hyp_*`` and ``alive`` arguments are not read), and
    ``shared[positions[r]]`` is set to ``mark`` when record ``r``'s n-gram is
    in two sentences or more.  Returns the table (grown, maybe), its bits and the
    last stamp used.
    """
    longest = 0
    for q in range(first, last):
        longest = max(longest, pool_bounds[q + 1] - pool_bounds[q])
    slots = np.empty(longest, dtype=np.int64)  # per pool record: its row, and
    runs = np.empty(longest, dtype=np.int64)  # its sentence's count of the n-gram so far
    for q in range(first, last):
        stamp += 1
        used = 0
        grew = False  # rows have moved since their slots were noted
        low = pool_bounds[q]
        for r in range(low, pool_bounds[q + 1]):
            key = pool_rk[r]
            j = pool_rs[r]
            slot = _find(table, bits, key, stamp)
            if table[slot, _STAMP] != stamp:
                table[slot, _STAMP] = stamp
                table[slot, _KEY] = np.int64(key)
                table[slot, _TOP] = 1
                table[slot, _HOLDER] = j
                table[slot, _SECOND] = 0
                table[slot, _LAST] = j
                table[slot, _RUN] = 1
                slots[r - low] = slot
                runs[r - low] = 1
                used += 1
                if 8 * used > 5 * (1 << bits):
                    table = _grown(table, bits, stamp)
                    bits += 1
                    grew = True
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
            slots[r - low] = slot
            runs[r - low] = run

        if leave_one_out:
            # The same records in the same order: sentence i's running count of the n-gram
            # is its run above, a match while it does not exceed the clip (min(count, clip)).
            for r in range(low, pool_bounds[q + 1]):
                i = pool_rs[r]
                slot = _find(table, bits, pool_rk[r], stamp) if grew else np.uint64(slots[r - low])
                second = table[slot, _SECOND]
                clip = second if table[slot, _HOLDER] == i else table[slot, _TOP]
                if runs[r - low] <= clip:
                    matches[i] += 1
                if second > 0:
                    shared[positions[r]] = mark
            continue
        for r in range(hyp_bounds[q], hyp_bounds[q + 1]):
            i = hyp_rs[r]
            if not alive[i]:
                continue  # no (m-1)-gram matched, so no m-gram can
            slot = _find(table, bits, hyp_rk[r], stamp)
            if table[slot, _STAMP] != stamp:
                continue  # no pool sentence has this n-gram
            clip = table[slot, _TOP]
            running = n_pool + i  # never a pool sentence's number
            if table[slot, _LAST] == running:
                table[slot, _RUN] += 1
            else:
                table[slot, _LAST] = running
                table[slot, _RUN] = 1
            if table[slot, _RUN] <= clip:
                matches[i] += 1
    return table, bits, stamp


#: Fewest partitions of an order worth splitting between threads (32768 occurrences by default).
PARALLEL_PARTS = 8


def _run(calls):
    """``kernel(*args)`` for every ``(kernel, args)``, the first here, the others on the pool."""
    futures = [threads.submit(kernel, *args) for kernel, args in calls[1:]]
    return [calls[0][0](*calls[0][1])] + [f.result() for f in futures]


def _spread(scratch, n, parts, args):
    """Run ``_count_parts(table, bits, stamp, *args, matches, first, last)`` over ``parts``
    partitions, split between threads; the summed matches of the ``n`` sentences."""
    pieces = numba.config.NUMBA_NUM_THREADS
    if parts < PARALLEL_PARTS:
        pieces = 1
    pieces = max(min(pieces, parts), 1)
    bounds = [parts * k // pieces for k in range(pieces + 1)]
    while len(scratch) < pieces:
        scratch.append([np.zeros((1 << _MIN_BITS, _COLUMNS), dtype=np.int64), _MIN_BITS, 0])
    matches = [np.zeros(n, dtype=np.int64) for _ in range(pieces)]
    results = _run([(_count_parts, (*scratch[k], *args, matches[k], bounds[k], bounds[k + 1]))
                    for k in range(pieces)])
    for k in range(pieces):
        scratch[k] = list(results[k])
    total = matches[0]
    for k in range(1, pieces):
        total += matches[k]
    return total


def _self_matches(hashes, start, count, max_order, out, part_records, scratch):
    """Leave-one-out matches of every sentence (see :func:`pool_matches`).

    Each thread keeps and scatters the candidates of its own run of
    sentences (``pieces``), thread ``k``'s records of a partition after those
    of threads ``< k``, so every partition stays in position order.
    """
    n = count.size
    base = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(count, out=base[1:])
    n_tokens = int(base[n])
    pieces = numba.config.NUMBA_NUM_THREADS if n_tokens >= PARALLEL_PARTS * part_records else 1
    first = np.searchsorted(base, [n_tokens * k // pieces for k in range(pieces)] + [n_tokens])
    first[-1] = n
    low = base[first]
    kept = (low[1:] - low[:-1]).tolist()  # candidates per piece
    # Candidates (position, key) and an order's records (key, sentence, position): one block,
    # which glibc keeps for the next call (below its 32 MiB mmap limit) rather than unmapping.
    index = _index_dtype(n_tokens + 1)
    block = np.empty(n_tokens * (16 + 3 * np.dtype(index).itemsize), dtype=np.uint8)
    keys, rk = block[:16 * n_tokens].view(np.uint64).reshape(2, n_tokens)
    cand, rs, rp = block[16 * n_tokens:].view(index).reshape(3, n_tokens)
    shared = np.zeros(n_tokens + 1, dtype=np.uint8)
    unread = np.zeros(0, dtype=np.bool_)
    for m in range(max_order):
        part_bits = _part_bits(sum(kept), part_records)
        done = _run([(_self_keep, (hashes, start, count, base, cand, keys, low[k], kept[k],
                                   first[k], first[k + 1], shared, m, part_bits))
                     for k in range(pieces)])
        kept = [d[0] for d in done]
        sizes = np.array([d[1] for d in done])  # pieces x partitions
        bounds = np.zeros(sizes.shape[1] + 1, dtype=np.int64)
        np.cumsum(sizes.sum(axis=0), out=bounds[1:])
        cursors = bounds[:-1] + np.cumsum(sizes, axis=0) - sizes  # each piece's first slot
        _run([(_self_scatter, (base, cand, keys, low[k], kept[k], first[k], cursors[k], rk, rs,
                               rp)) for k in range(pieces)])
        out[:, 2 + m] = _spread(scratch, n, bounds.size - 1,
                                (bounds, rk, rs, bounds, rk, rs, unread, 0, True, rp, shared,
                                 (m + 1) & 255))


def _index_dtype(n):
    """Sentence numbers and positions below ``n`` as int32 (less memory to fault in and
    to move), int64 past its range; one kernel signature for all but huge inputs."""
    return np.int32 if n < 2**31 else np.int64


def pool_matches(hyp_hashes, hyp_start, hyp_count, pool_hashes, pool_start, pool_count,
                 max_order, leave_one_out, out, part_records=PART_RECORDS):
    """Write the clipped matches of every hypothesis to ``out[i, 2:2 + max_order]``.

    Hypothesis ``i`` is ``hyp_hashes[hyp_start[i]:hyp_start[i] + hyp_count[i]]``,
    pool sentence ``j`` likewise.  With ``leave_one_out`` the hypotheses *are*
    the pool sentences (pass the same arrays) and sentence ``i``'s clip counts
    leave sentence ``i`` out.  Counts must be >= 0.  Other columns of ``out``
    are not touched.  ``part_records`` is the partitions' target size (tests
    lower it to cut small inputs into many partitions).

    The partitions of an order are independent, so large orders are split
    between the threads of :mod:`.threads` (each with its own table and match
    counts, summed afterwards: the same integers in any order).
    """
    n_hyp = hyp_count.size
    scratch = []  # per thread: [table, bits, stamp]
    if leave_one_out:
        _self_matches(pool_hashes, pool_start, pool_count, max_order, out, part_records, scratch)
        return
    pool_keys, pool_base = _compact_keys(pool_hashes, pool_start, pool_count)
    hyp_keys, hyp_base = _compact_keys(hyp_hashes, hyp_start, hyp_count)
    alive = np.ones(n_hyp, dtype=np.bool_)  # has a match of the previous order
    index = np.zeros(0, dtype=_index_dtype(max(n_hyp, pool_count.size)))
    no_marks = np.zeros(0, dtype=np.uint8)
    for m in range(max_order):
        records = _order_records(pool_keys, pool_base, pool_hashes, pool_start, pool_count,
                                 hyp_keys, hyp_base, hyp_hashes, hyp_start, hyp_count, m,
                                 alive, part_records, index)
        total = _spread(scratch, n_hyp, records[0].size - 1,
                        (*records, alive, pool_count.size, False, index, no_marks, 0))
        out[:, 2 + m] = total
        alive = total > 0
