"""The report's numba kernels: resample counts, their weighted sums, sums by code, and
the fold of a table's reference columns that tells rows of one segment with the same
references.

Private kernels behind :mod:`fastbleu.compare.resampled` and
:mod:`fastbleu.compare.breakdown`; they trust their inputs (shapes and
dtypes are checked by the callers).  ``stats`` is the report's statistics
array: one row per segment, every metric's columns for every system side by
side, uint16 or int32 where every value fits (a quarter or half the memory of int64),
else int64.

Sums are exact: :func:`resample_sums` adds ``counts[b, i] * stats[i]`` in
int64, a block of :data:`BLOCK` segments at a time (the block's rows stay in
the cache), each row read once for four resamples.  It serves what the
float32 products of :mod:`fastbleu.compare.resampled` cannot hold exactly
(TER's scaled reference lengths, a segment of hundreds of thousands of
characters).
"""

import numpy as np
from numba import njit

from .._kernels.text.hashing import finish

#: Segments per block of :func:`resample_sums` (a block's rows stay in the cache).
BLOCK = 512


@njit(cache=True, nogil=True)
def count_draws(idx, counts, first, last):
    """``counts[r, j]`` = how often segment ``j`` occurs in ``idx[r]``, for rows
    ``first <= r < last`` (zeroed here).  Returns the largest count, or -1 if one passed
    its type's largest value (it wrapped: the caller counts that resample again in int64)."""
    largest = 0
    for r in range(first, last):
        row = counts[r]
        row[:] = 0
        for i in range(idx.shape[1]):
            j = idx[r, i]
            row[j] += 1
            if row[j] == 0:
                return -1
    for r in range(first, last):
        row = counts[r]
        for j in range(row.shape[0]):
            if row[j] > largest:
                largest = row[j]
    return largest


@njit(cache=True, nogil=True)
def resample_sums(stats, counts, n_rows, sums, first, last):
    """``sums[b] += counts[b, first:last] @ stats[first:last]`` for ``b < n_rows``, in int64
    (exact for any statistics; the float32 products of
    :func:`fastbleu.compare.resampled.float_sums` serve the usual, small ones)."""
    width = stats.shape[1]
    acc = np.zeros((4, width), dtype=np.int64)
    for block in range(first, last, BLOCK):
        end = min(block + BLOCK, last)
        b = 0
        while b < n_rows:
            m = min(4, n_rows - b)
            acc[:] = 0
            for i in range(block, end):
                row = stats[i]
                for q in range(m):  # each row read once for four resamples
                    c = np.int64(counts[b + q, i])
                    if c:
                        for col in range(width):
                            acc[q, col] += c * np.int64(row[col])
            for q in range(m):
                for col in range(width):
                    sums[b + q, col] += acc[q, col]
            b += 4


@njit(cache=True, nogil=True)
def code_sums(stats, codes, n_codes, first, last):
    """int64 ``(n_codes, width)``: the sum of the rows ``first..last`` of ``stats`` with each
    code (``codes[i]`` in ``[0, n_codes)``)."""
    out = np.zeros((n_codes, stats.shape[1]), dtype=np.int64)
    for i in range(first, last):
        row = stats[i]
        target = out[codes[i]]
        for col in range(stats.shape[1]):
            target[col] += row[col]
    return out


@njit(cache=True, nogil=True)
def float_columns(stats, first, last, columns, out):
    """``out[i - first, k] = stats[i, columns[k]]`` as float32 for ``first <= i < last`` (the
    values of one block of a float32 product: numpy's ``stats[first:last, columns]`` makes
    a copy first, several times slower)."""
    for i in range(first, last):
        row = stats[i]
        target = out[i - first]
        for k in range(columns.shape[0]):
            target[k] = np.float32(row[columns[k]])


@njit(cache=True, nogil=True)
def text_hashes(data, offsets, valid, has_valid, hashes):
    """Fold each segment of one text column (its length, its bytes eight at a time, whether
    it is present) into ``hashes`` (uint64, one per segment): rows whose reference columns
    fold alike have the same references (up to a 64-bit collision)."""
    prime = np.uint64(0x100000001B3)
    for i in range(hashes.size):
        if has_valid and not valid[i]:
            hashes[i] = finish((hashes[i] ^ np.uint64(0xFFFFFFFFFFFFFFFF)) * prime)
            continue
        start, end = offsets[i], offsets[i + 1]
        h = finish((hashes[i] ^ np.uint64(end - start)) * prime)
        j = start
        while j + 8 <= end:
            word = np.uint64(0)
            for k in range(8):
                word |= np.uint64(data[j + k]) << np.uint64(8 * k)
            h = (h ^ word) * prime
            h ^= h >> np.uint64(29)
            j += 8
        word = np.uint64(0)
        for k in range(end - j):
            word |= np.uint64(data[j + k]) << np.uint64(8 * k)
        hashes[i] = finish((h ^ word) * prime)


@njit(cache=True, nogil=True)
def gather_text(data, offsets, rows, slots, out, out_offsets):
    """Copy the text of ``rows`` (``data[offsets[r]:offsets[r + 1]]``) to their ``slots`` of
    ``out`` (``out[out_offsets[s]:out_offsets[s + 1]]``, as long: a null row's slot is
    empty)."""
    for k in range(rows.size):
        s = slots[k]
        target, end = out_offsets[s], out_offsets[s + 1]
        begin = offsets[rows[k]]
        out[target:end] = data[begin:begin + (end - target)]


@njit(cache=True, nogil=True)
def store_rows(array, first, column, rows):
    """``array[first + i, column + k] = rows[i, k]``, and the largest value of ``rows``:
    the caller stores them again in a wider array if it does not fit ``array``'s type."""
    largest = 0
    for i in range(rows.shape[0]):
        target = array[first + i]
        row = rows[i]
        for k in range(rows.shape[1]):
            value = row[k]
            largest = max(largest, value)
            target[column + k] = value
    return largest
