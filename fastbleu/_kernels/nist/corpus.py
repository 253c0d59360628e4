"""NIST kernels for weights fixed beforehand: count reference n-grams in pieces, look them up.

:func:`fastbleu._kernels.nist.information_weights` counts and weighs the
references of one call.  For a corpus read in pieces (a table's record
batches, Dask partitions, an accumulator's updates) the counts are taken
piece by piece (:func:`count_ngrams`: every distinct reference n-gram with
its count and its prefix's key, summable across pieces: :func:`aggregate_counts`
adds pieces' counts per n-gram), the weights are
computed once from the merged counts
(:class:`fastbleu.metrics.nist_weights.NISTCounts`), and every piece then
finds its references' n-grams in that fixed table (:func:`weight_table`,
:func:`reference_rows`), giving the ``(base, rows, table, weight, shift)``
that :func:`fastbleu._kernels.nist.segment_matches` takes.

Keys are those of :mod:`fastbleu._kernels.nist` (64-bit polynomial keys,
:func:`~fastbleu._kernels.hashing.extend_key`, held with their order in the
same open-addressing layout, :func:`~fastbleu._kernels.nist._find`).
"""

import numpy as np
from numba import njit

from ..text.hashing import extend_key
from .table import _find, _grown, _slot_bases


@njit(cache=True, nogil=True)
def count_ngrams(ref_hashes, ref_start, ref_count, max_order):
    """Every distinct reference n-gram (orders 1..N, every present reference) and its count.

    A repeated reference is counted each time, as NLTK counts them.

    Returns
    -------
    keys : uint64
        The n-gram's key.
    orders : int64
        Its order minus one.
    prefixes : uint64
        Its prefix's key (0 for a unigram).
    counts : int64
        Occurrences.
    words : int
        Reference words (the count of the empty prefix).
    """
    n_refs, n = ref_count.shape
    words = 0
    for i in range(n):
        for r in range(n_refs):
            if ref_count[r, i] > 0:
                words += ref_count[r, i]
    bits = 10
    while (1 << bits) < 2 * max_order * words and bits < 40:
        bits += 1
    shift = np.uint64(64 - bits)
    table = np.zeros((1 << bits, 2), dtype=np.uint64)
    next_id = np.zeros(1, dtype=np.int64)
    size = max(max_order * words, 1)
    keys = np.zeros(size, dtype=np.uint64)
    orders = np.zeros(size, dtype=np.int64)
    prefixes = np.zeros(size, dtype=np.uint64)
    counts = np.zeros(size, dtype=np.int64)
    for i in range(n):
        for r in range(n_refs):
            c = ref_count[r, i]
            s = ref_start[r, i]
            for p in range(c):
                key = np.uint64(0)
                for k in range(min(max_order, c - p)):
                    prefix = key
                    key = extend_key(key, ref_hashes[s + p + k])
                    known = next_id[0]
                    row = _find(table, key, k, shift, next_id)
                    if row == known:
                        keys[row] = key
                        orders[row] = k
                        prefixes[row] = prefix
                    counts[row] += 1
                    if 2 * next_id[0] > table.shape[0]:
                        bits += 1
                        shift = np.uint64(64 - bits)
                        table = _grown(table, shift)
    m = next_id[0]
    return keys[:m].copy(), orders[:m].copy(), prefixes[:m].copy(), counts[:m].copy(), words


@njit(cache=True, nogil=True)
def weight_table(keys, orders):
    """The open-addressing table of distinct n-grams ``(keys[j], orders[j])``, n-gram ``j``
    having id ``j``; returns ``(table, shift)``."""
    bits = 10
    while (1 << bits) < 4 * keys.size and bits < 40:
        bits += 1
    shift = np.uint64(64 - bits)
    table = np.zeros((1 << bits, 2), dtype=np.uint64)
    next_id = np.zeros(1, dtype=np.int64)
    for j in range(keys.size):
        _find(table, keys[j], orders[j], shift, next_id)
    return table, shift


@njit(cache=True, nogil=True)
def reference_rows(ref_hashes, ref_start, ref_count, max_order, table, shift):
    """The id in a fixed ``table`` of every reference n-gram occurrence (-1: not there).

    Returns ``(base, rows)`` as :func:`fastbleu._kernels.nist.information_weights`
    does.  An n-gram not in the table weighs 0 and so do its extensions
    (their prefix occurs once in the corpus), so the search stops there.
    """
    base, total = _slot_bases(ref_count)
    n_refs, n = ref_count.shape
    rows = np.full((max_order, max(total, 1)), -1, dtype=np.int64)
    lookup_only = np.zeros(0, dtype=np.int64)
    for i in range(n):
        for r in range(n_refs):
            c = ref_count[r, i]
            b = base[r, i]
            s = ref_start[r, i]
            for p in range(c):
                key = np.uint64(0)
                for k in range(min(max_order, c - p)):
                    key = extend_key(key, ref_hashes[s + p + k])
                    row = _find(table, key, k, shift, lookup_only)
                    if row < 0:
                        break
                    rows[k, b + p] = row
    return base, rows


@njit(cache=True, nogil=True)
def aggregate_counts(keys, orders, prefixes, counts):
    """Entries of several pieces' :func:`count_ngrams` (concatenated) with one entry per
    n-gram ``(key, order)``, counts added, in order of first appearance."""
    n = keys.size
    bits = 10
    while (1 << bits) < 2 * n and bits < 40:
        bits += 1
    shift = np.uint64(64 - bits)
    table = np.zeros((1 << bits, 2), dtype=np.uint64)
    next_id = np.zeros(1, dtype=np.int64)
    out_keys = np.zeros(max(n, 1), dtype=np.uint64)
    out_orders = np.zeros(max(n, 1), dtype=np.int64)
    out_prefixes = np.zeros(max(n, 1), dtype=np.uint64)
    out_counts = np.zeros(max(n, 1), dtype=np.int64)
    for j in range(n):
        known = next_id[0]
        row = _find(table, keys[j], orders[j], shift, next_id)
        if row == known:
            out_keys[row] = keys[j]
            out_orders[row] = orders[j]
            out_prefixes[row] = prefixes[j]
        out_counts[row] += counts[j]
        if 2 * next_id[0] > table.shape[0]:
            bits += 1
            shift = np.uint64(64 - bits)
            table = _grown(table, shift)
    m = next_id[0]
    return out_keys[:m].copy(), out_orders[:m].copy(), out_prefixes[:m].copy(), \
        out_counts[:m].copy()
