"""64-bit hashes for tokens and n-grams.

A token is identified by the hash of its UTF-8 bytes (FNV-1a, then the
splitmix64 finaliser so that every input bit reaches every output bit).
An n-gram key is built left to right from the key of its (n-1)-gram prefix
and the hash of its last token, so one pass over a segment yields every
order.  Keys are only ever compared within one segment and its references,
which bounds the chance of a false match (see the README's exactness note).

All arithmetic is on ``uint64`` and wraps modulo 2**64; every constant is
typed explicitly, because numba promotes ``uint64 op int64`` to ``float64``.
"""

import numpy as np
from numba import njit

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)


@njit(cache=True, nogil=True)
def mix64(x):
    """splitmix64's finaliser: a bijection on 64-bit words with full avalanche."""
    x ^= x >> _S30
    x *= _MIX_1
    x ^= x >> _S27
    x *= _MIX_2
    x ^= x >> _S31
    return x


@njit(cache=True, nogil=True)
def hash_bytes(buf, start, end):
    """Hash the bytes ``buf[start:end]`` of one token."""
    h = _FNV_OFFSET
    for i in range(start, end):
        h ^= np.uint64(buf[i])
        h *= _FNV_PRIME
    return mix64(h)


@njit(cache=True, nogil=True)
def extend_key(prefix_key, token_hash):
    """Key of the n-gram made of the (n-1)-gram ``prefix_key`` and one more token."""
    return mix64(prefix_key * _GOLDEN + token_hash)
