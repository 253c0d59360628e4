"""64-bit hashes for tokens and n-grams.

A token is identified by the hash of its UTF-8 bytes: FNV-1a, fed one byte
at a time while the tokenizer scans (``FNV_OFFSET``, ``fnv_step``), then
the splitmix64 finaliser (``finish``) so that every input bit reaches every
output bit.  ``hash_bytes`` computes the same value for a whole byte range.

An n-gram key is a polynomial in the hashes of its tokens modulo 2**64,
built left to right (``extend_key``), so one pass over a segment yields
every order.  Keys are only ever compared within one segment and its
references; see the README's exactness note for the collision bound.

All arithmetic is on ``uint64`` and wraps modulo 2**64; every constant is
typed explicitly, because numba promotes ``uint64 op int64`` to ``float64``.
"""

import numpy as np
from numba import njit

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit(cache=True, nogil=True)
def fnv_step(h, byte):
    """Feed one byte to an FNV-1a state."""
    return (h ^ np.uint64(byte)) * _FNV_PRIME


@njit(cache=True, nogil=True)
def finish(h):
    """splitmix64's finaliser: a bijection on 64-bit words with full avalanche."""
    h ^= h >> _S30
    h *= _MIX_1
    h ^= h >> _S27
    h *= _MIX_2
    h ^= h >> _S31
    return h


def finish_keys(ids: np.ndarray) -> np.ndarray:
    """Token keys for dense token numbers, vectorized in numpy: ``finish(id + 1)`` of each.

    The same bijection as :func:`finish` (splitmix64's finaliser), for callers
    that number tokens themselves (NLTK's token lists) rather than hash bytes.

    Parameters
    ----------
    ids : numpy.ndarray
        Non-negative integers.

    Returns
    -------
    numpy.ndarray
        uint64, the shape of ``ids``.
    """
    h = ids.astype(np.uint64)
    h += np.uint64(1)
    h ^= h >> _S30
    h *= _MIX_1
    h ^= h >> _S27
    h *= _MIX_2
    h ^= h >> _S31
    return h


@njit(cache=True, nogil=True)
def hash_bytes(buf, start, end):
    """Hash of the token made of the bytes ``buf[start:end]``."""
    h = FNV_OFFSET
    for i in range(start, end):
        h = fnv_step(h, buf[i])
    return finish(h)


@njit(cache=True, nogil=True)
def extend_key(prefix_key, token_hash):
    """Key of the n-gram made of the (n-1)-gram ``prefix_key`` and one more token."""
    return prefix_key * _GOLDEN + token_hash


#: The fewest bits of an n-gram table's slots (64 slots).
MIN_TABLE_BITS = 6


@njit(cache=True, nogil=True)
def table_bits(n):
    """``(mask, shift)`` of an open-addressing table for ``n`` keys: the fewest slots, a
    power of two and at least ``2 ** MIN_TABLE_BITS``, that keep it at most half full;
    ``shift`` is :func:`table_slot`'s for that size."""
    bits = MIN_TABLE_BITS
    while (1 << bits) < 2 * n:
        bits += 1
    return (1 << bits) - 1, np.uint64(64 - bits)


@njit(cache=True, nogil=True)
def table_slot(key, shift):
    """Fibonacci hashing: the top bits of ``key * golden`` index a table of ``2**(64 - shift)``."""
    return np.int64((key * _GOLDEN) >> shift)
