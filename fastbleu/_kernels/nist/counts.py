"""NIST's reference n-gram counts: one open-addressing table per corpus, counted in place.

NIST's information weights (Doddington, 2002) come from the count of every
reference n-gram of a corpus and of its prefix.  Those counts live in one
table of ``2**bits`` rows, ``[key, order + 1 << 40 | count]`` (second word 0:
empty), probed linearly from a Fibonacci hash of the key mixed with its
order; keys are :mod:`fastbleu._kernels.text.hashing`'s 64-bit polynomial
n-gram keys.  The table is the weights: a weight is computed from two counts
when a match needs it (:mod:`fastbleu._kernels.nist.matches`), so nothing
per n-gram is kept but its key and count, 16 bytes a row.

Kernels here never allocate by surprise: :func:`count_references` and
:func:`add_table` stop before the table would pass its load limit and say
where, so that the caller (which checks the memory first) allocates a larger
one, fills it with :func:`rehash` and goes on.

Two distinct n-grams of one order share a key with probability about
``D**2 / 2**65`` for ``D`` distinct n-grams of that order (3e-8 for a
million); they would then share a count.
"""

import numpy as np
from numba import njit

from ..text.hashing import extend_key, table_slot

#: Mixed into a key's table position so that the orders of one key spread out.
ORDER_MIX = np.uint64(0xD6E8FEB86659FD93)
#: The order tag's place in a row's second word; the count is below it.
TAG_SHIFT = np.uint64(40)
COUNT_MASK = np.uint64((1 << 40) - 1)
#: The fewest rows of a table (2**MIN_BITS).
MIN_BITS = 6


def rows_for(distinct: int) -> int:
    """The bits of the smallest table that holds ``distinct`` n-grams at most 3/4 full."""
    bits = MIN_BITS
    while (3 << bits) // 4 < distinct:
        bits += 1
    return bits


def load_limit(table: np.ndarray) -> int:
    """How many n-grams ``table`` may hold (3/4 of its rows)."""
    return (3 * table.shape[0]) // 4


@njit(cache=True, nogil=True)
def ngram_total(length, max_order):
    """N-grams of orders 1 to ``max_order`` in ``length`` tokens (0 for ``length <= 0``)."""
    if length <= 0:
        return 0
    if length >= max_order:
        return max_order * length - (max_order * (max_order - 1)) // 2
    return (length * (length + 1)) // 2


@njit(cache=True, nogil=True)
def slot_of(key, order, shift):
    """The first row probed for n-gram ``(key, order)`` (``order`` from 0)."""
    return table_slot(key ^ (np.uint64(order + 1) * ORDER_MIX), shift)


@njit(cache=True, nogil=True)
def lookup(table, shift, key, order):
    """The count of n-gram ``(key, order)`` in the table (0: not there)."""
    mask = table.shape[0] - 1
    tag = np.uint64(order + 1)
    i = slot_of(key, order, shift)
    while True:
        word = table[i, 1]
        if word == 0:
            return 0
        if (word >> TAG_SHIFT) == tag and table[i, 0] == key:
            return np.int64(word & COUNT_MASK)
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def _add(table, mask, shift, key, order, count):
    """Add ``count`` to n-gram ``(key, order)``; 1 if it was new, else 0."""
    tag = np.uint64(order + 1)
    i = slot_of(key, order, shift)
    while True:
        word = table[i, 1]
        if word == 0:
            table[i, 0] = key
            table[i, 1] = (tag << TAG_SHIFT) | np.uint64(count)
            return 1
        if (word >> TAG_SHIFT) == tag and table[i, 0] == key:
            table[i, 1] = word + np.uint64(count)
            return 0
        i = (i + 1) & mask


@njit(cache=True, nogil=True)
def count_references(table, shift, size, limit, ref_hashes, ref_start, ref_count, rows, times,
                     first, max_order):
    """Count the reference n-grams of segments ``rows[first:]`` into ``table`` (in place),
    segment ``rows[j]`` ``times[j]`` times.

    Every order 1..``max_order`` of every present reference (``ref_count <
    0``: missing), a repeated reference counted each time, as NLTK counts
    them.  Stops before a segment whose n-grams, were they all new, would
    take the table past ``limit`` n-grams.

    Returns
    -------
    stop : int
        Where to go on in ``rows`` (``rows.size``: done).
    size : int
        Distinct n-grams in the table now.
    words : int
        Reference words counted (the count of the empty prefix).
    """
    n_refs = ref_count.shape[0]
    mask = table.shape[0] - 1
    words = 0
    for j in range(first, rows.size):
        i = rows[j]
        need = 0
        for r in range(n_refs):
            need += ngram_total(ref_count[r, i], max_order)
        if size + need > limit:
            return j, size, words
        m = np.uint64(times[j])
        for r in range(n_refs):
            c = ref_count[r, i]
            s = ref_start[r, i]
            if c > 0:
                words += c * times[j]
            for p in range(c):
                key = np.uint64(0)
                for k in range(min(max_order, c - p)):
                    key = extend_key(key, ref_hashes[s + p + k])
                    # _add written out: a call taking the table costs reference counting
                    tag = np.uint64(k + 1)
                    at = slot_of(key, k, shift)
                    while True:
                        word = table[at, 1]
                        if word == 0:
                            table[at, 0] = key
                            table[at, 1] = (tag << TAG_SHIFT) | m
                            size += 1
                            break
                        if (word >> TAG_SHIFT) == tag and table[at, 0] == key:
                            table[at, 1] = word + m
                            break
                        at = (at + 1) & mask
    return rows.size, size, words


@njit(cache=True, nogil=True)
def add_table(table, shift, size, limit, other, first):
    """Add the counts of ``other`` (rows ``first:``) to ``table``, in place, stopping before
    ``size`` would pass ``limit``; returns ``(stop, size)`` as :func:`count_references`."""
    mask = table.shape[0] - 1
    for j in range(first, other.shape[0]):
        word = other[j, 1]
        if word == 0:
            continue
        if size + 1 > limit:
            return j, size
        order = np.int64(word >> TAG_SHIFT) - 1
        size += _add(table, mask, shift, other[j, 0], order, np.int64(word & COUNT_MASK))
    return other.shape[0], size


@njit(cache=True, nogil=True)
def rehash(table, bigger):
    """Put the rows of ``table`` into ``bigger`` (empty, a power of two at least as large).

    The caller allocates ``bigger`` (numpy asks the kernel for huge pages for
    a large array, sparing the TLB misses of a table probed at random).
    """
    shift = np.uint64(64 - _bits(bigger.shape[0]))
    mask = bigger.shape[0] - 1
    for j in range(table.shape[0]):
        word = table[j, 1]
        if word == 0:
            continue
        key = table[j, 0]
        i = slot_of(key, np.int64(word >> TAG_SHIFT) - 1, shift)
        while bigger[i, 1] != 0:
            i = (i + 1) & mask
        bigger[i, 0] = key
        bigger[i, 1] = word


@njit(cache=True, nogil=True)
def _bits(rows):
    """log2 of a power of two."""
    bits = 0
    while (1 << bits) < rows:
        bits += 1
    return bits


@njit(cache=True, nogil=True)
def counts_gcd(table, words):
    """The greatest common divisor of every count in the table and of ``words``."""
    g = words
    for j in range(table.shape[0]):
        word = table[j, 1]
        if word == 0:
            continue
        a = np.int64(word & COUNT_MASK)
        b = g
        while b:
            a, b = b, a % b
        g = a
        if g == 1:
            break
    return g


@njit(cache=True, nogil=True)
def _mixed(x):
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@njit(cache=True, nogil=True)
def digest_sums(table, divisor, seeds):
    """Per seed, the sum (mod 2**64) of a mix of every row, its count divided by ``divisor``:
    the same for the same n-grams and counts, whatever the table's size and layout."""
    sums = np.zeros(seeds.size, dtype=np.uint64)
    d = np.uint64(divisor)
    for j in range(table.shape[0]):
        word = table[j, 1]
        if word == 0:
            continue
        reduced = (word & ~COUNT_MASK) | ((word & COUNT_MASK) // d)
        entry = table[j, 0] ^ (reduced * np.uint64(0xC2B2AE3D27D4EB4F))
        for s in range(seeds.size):
            sums[s] += _mixed(entry ^ seeds[s])
    return sums


@njit(cache=True, nogil=True)
def divide(out, divisor):
    """Divide every count of table ``out`` by ``divisor`` (which divides them), in place."""
    d = np.uint64(divisor)
    for j in range(out.shape[0]):
        word = out[j, 1]
        if word != 0:
            out[j, 1] = (word & ~COUNT_MASK) | ((word & COUNT_MASK) // d)
