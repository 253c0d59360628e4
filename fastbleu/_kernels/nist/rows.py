"""Reference rows as 64-bit fingerprints, and multisets of them: what NIST's first pass over
a table counts before it counts any n-gram.

A weight group's reference n-gram counts are the sum, over its rows, of
each row's n-grams; rows with the same reference texts give the same
n-grams.  So the pass first reads every row's fingerprint (a hash of its
reference texts, and of which are missing: :func:`mix_stream`), keeps every
group's multiset of fingerprints (:func:`add_fingerprints`, a table of
``[fingerprint, count, first row + 1]`` rows, probed linearly, second word 0:
empty), and then counts the n-grams of each distinct row once, times its
multiplicity.  Groups whose multisets are proportional (systems scored on
the same references) get the same weights, and are counted once.

Two distinct rows share a fingerprint with probability about ``R**2 /
2**65`` for ``R`` distinct rows (3e-8 for a million); they would then be
counted as one.
"""

import numpy as np
from numba import njit

from ..text.hashing import finish, fnv_step, table_slot, FNV_OFFSET

_MISSING = np.uint64(0x5851F42D4C957F2D)  # times a stream's number, mixed into its texts
_STREAM = np.uint64(0x9E3779B97F4A7C15)


@njit(cache=True, nogil=True)
def mix_stream(fingerprints, data, offsets, valid, has_valid, stream):
    """Mix reference stream ``stream`` (a text column's bytes) into every row's fingerprint.

    A missing reference changes nothing (a row's n-grams are those of its
    present references): a list column's rows then print alike whatever the
    widest list of their batch, and a present one is mixed in with its
    stream's number.
    """
    tag = np.uint64(stream + 1) * _MISSING
    for i in range(fingerprints.size):
        if has_valid and not valid[i]:
            continue
        h = FNV_OFFSET
        for b in range(offsets[i], offsets[i + 1]):
            h = fnv_step(h, data[b])
        h = finish(h ^ np.uint64(offsets[i + 1] - offsets[i]) ^ tag)
        fingerprints[i] = finish(fingerprints[i] * _STREAM + h)


@njit(cache=True, nogil=True)
def add_fingerprints(table, size, limit, fingerprints, rows, base_row):
    """Add rows ``rows`` (``fingerprints[rows]``, table row numbers ``base_row + rows``) to a
    group's multiset, in place; stops before ``size`` would pass ``limit`` and returns
    ``(stop, size)`` (``rows.size``: done)."""
    mask = table.shape[0] - 1
    shift = np.uint64(64)
    n = table.shape[0]
    while n > 1:
        n >>= 1
        shift -= np.uint64(1)
    for j in range(rows.size):
        f = fingerprints[rows[j]]
        at = table_slot(f, shift)
        while True:
            if table[at, 1] == 0:
                if size + 1 > limit:
                    return j, size
                table[at, 0] = f
                table[at, 1] = 1
                table[at, 2] = np.uint64(base_row + rows[j] + 1)
                size += 1
                break
            if table[at, 0] == f:
                table[at, 1] += np.uint64(1)
                break
            at = (at + 1) & mask
    return rows.size, size


@njit(cache=True, nogil=True)
def rehash_fingerprints(table, bigger):
    """Put the rows of a fingerprint table into ``bigger`` (empty, a larger power of two)."""
    mask = bigger.shape[0] - 1
    shift = np.uint64(64)
    n = bigger.shape[0]
    while n > 1:
        n >>= 1
        shift -= np.uint64(1)
    for j in range(table.shape[0]):
        if table[j, 1] == 0:
            continue
        at = table_slot(table[j, 0], shift)
        while bigger[at, 1] != 0:
            at = (at + 1) & mask
        bigger[at, 0] = table[j, 0]
        bigger[at, 1] = table[j, 1]
        bigger[at, 2] = table[j, 2]


@njit(cache=True, nogil=True)
def multiset_digest(fingerprints, counts, divisor, seed):
    """A sum (mod 2**64) of a mix of every (fingerprint, count // divisor): the same for the
    same multiset in any order."""
    total = np.uint64(0)
    d = np.uint64(divisor)
    for j in range(fingerprints.size):
        total += finish((fingerprints[j] ^ seed) + (np.uint64(counts[j]) // d) * _STREAM)
    return total
