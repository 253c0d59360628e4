"""UTF-8 buffers -> token hashes, one segment at a time, without Python strings.

The kernels walk an Arrow-style string column (a ``uint8`` data buffer and
``int64`` offsets) and write one 64-bit hash per token.  They reproduce
sacrebleu 2.6's tokenizers exactly:

``none``
    ``line.split()``: runs of characters that are not Python whitespace.
``char``
    ``" ".join(line).split()``: every non-whitespace code point is a token.
``13a``
    ``Tokenizer13a``: see :mod:`fastbleu._kernels.tokenize_13a`, which also
    holds the byte classes that ``none`` and ``char`` split on.  ``13a``,
    ``none`` and ``char`` scan most segments with the branch-free loops of
    :mod:`fastbleu._kernels.tokenize_flat` and the rest with ``tokenize_13a``'s
    scanner (``tokens_char`` for ``char``); the two give the same hashes.
``intl`` and ``zh``
    ``TokenizerV14International`` and ``TokenizerZh``: see
    :mod:`fastbleu._kernels.tokenize_unicode`, which also holds the UTF-8
    decoding and Python-whitespace helpers every tokenizer uses.  Most
    segments are scanned by the branch-free loop of
    :mod:`fastbleu._kernels.tokenize_flat_unicode`, the rest by
    ``tokenize_unicode``'s scanner; the two give the same hashes.

This module holds the tokenizer codes (defined in :mod:`fastbleu._native.codes`,
which imports no numba), the chunk kernels that dispatch on
them (the ``char`` tokenizer, a few lines, sits with its one caller), and
:func:`tokenize_column`.

Every tokenizer emits at most one token per input byte, so a chunk of
segments can write its hashes back to back from the chunk's first byte
offset (``out[offsets[first] - offsets[0]:]``) without a counting pass: the
hashes written before segment ``i`` never pass its own byte offset.  Back to
back, the counting kernel reads them from a few cache lines instead of
one spread over eight bytes per byte of text (memory traffic was a third of
its time).

The chunk kernels here compile in the helpers of ``tokenize_13a``,
``tokenize_flat``, ``tokenize_flat_unicode``, ``tokenize_unicode`` and
``hashing``.  numba's on-disk cache checks only the file of the kernel it
loads, so :mod:`.cache` keys the cache by a digest of every kernel source: an
edit to any of them recompiles.
"""

import numpy as np
from numba import njit

from ..._native.codes import (TOKENIZE_13A, TOKENIZE_CHAR, TOKENIZE_INTL, TOKENIZE_NONE,
                              TOKENIZE_ZH)
from .hashing import FNV_OFFSET, finish, fnv_step
from ..threads import for_chunks
from .tokenize_13a import (CLASS_13A, CLASS_13A_RAW, CLASS_SPLIT, MAYBE_SPACE, SPACE,
                           preprocess_13a, split_tokens)
from .tokenize_flat import _scan_char_flat, _scan_flat
from .tokenize_flat_unicode import _scan_unicode_flat
from .tokenize_unicode import (is_space_at, _lstrip_start, rstrip_end, _split_unicode,
                               utf8_length)
from .unicode_classes import intl_roles, zh_roles


@njit(cache=True, nogil=True)
def tokens_char(buf, start, end, out, pos):
    count = 0
    j = start
    while j < end:
        b = buf[np.uint64(j)]
        cls = CLASS_SPLIT[b]
        length = 1 if b < 0x80 else utf8_length(b)
        if cls != SPACE and not (cls == MAYBE_SPACE and is_space_at(buf, j, length)):
            h = FNV_OFFSET
            for k in range(j, j + length):
                h = fnv_step(h, buf[np.uint64(k)])
            out[np.uint64(pos + count)] = finish(h)
            count += 1
        j += length
    return count


@njit(cache=True, nogil=True)
def tokenize_chunk(data, offsets, kind, out_hashes, out_count, out_start, first, last):
    """Tokenize segments ``first:last``; owns its 13a scratch buffer."""
    pos = offsets[first] - offsets[0]
    scratch = np.empty(256, dtype=np.uint8)
    for i in range(first, last):
        start = offsets[i]
        end = offsets[i + 1]
        out_start[i] = pos
        # The flat scanners take the segment as it is: ASCII whitespace at its end makes
        # no token, and Unicode whitespace sends it to the branchy scanners, which get
        # the end after ``str.rstrip()`` (13a's "-\n" rule needs it).
        if kind == TOKENIZE_CHAR:
            count = _scan_char_flat(data, start, end, out_hashes, pos)
            if count < 0:  # Unicode whitespace in the segment
                count = tokens_char(data, start, rstrip_end(data, start, end), out_hashes, pos)
            out_count[i] = count
            pos += count
            continue
        classes = CLASS_SPLIT if kind == TOKENIZE_NONE else CLASS_13A_RAW
        count = _scan_flat(data, start, end, out_hashes, pos, classes)
        if count < 0:  # see tokenize_flat: the rare segments the branchy scanner takes
            end = rstrip_end(data, start, end)
            count = split_tokens(data, start, end, out_hashes, pos, classes)
        if count < 0:
            length = end - start
            if scratch.size < length:
                scratch = np.empty(2 * length, dtype=np.uint8)
            scratch[:length] = data[start:end]
            length = preprocess_13a(scratch, length)
            count = split_tokens(scratch, 0, length, out_hashes, pos, CLASS_13A)
        out_count[i] = count
        pos += count


@njit(cache=True, nogil=True)
def _tokenize_chunk_unicode(data, offsets, strip_left, roles, out_hashes, out_count, out_start,
                            first, last):
    """``intl`` (``strip_left`` false) or ``zh`` (true) for segments ``first:last``.

    A kernel of its own, so that the other tokenizers' first run does not
    compile it.
    """
    pos = offsets[first] - offsets[0]
    for i in range(first, last):
        start = offsets[i]
        end = offsets[i + 1]
        out_start[i] = pos
        # Both strip the right (an intl "." last on the line has no right neighbour) and
        # zh the left too; a printable ASCII byte at that end (most lines) has nothing
        # to strip, and skipping the call saves its reference counts (8 ns a segment).
        if start < end and not (0x20 < data[end - 1] < 0x80):
            end = rstrip_end(data, start, end)
        if strip_left and start < end and not (0x20 < data[start] < 0x80):
            start = _lstrip_start(data, start, end)
        count = _scan_unicode_flat(data, start, end, out_hashes, pos, roles)
        if count < 0:  # see tokenize_flat_unicode: the rare segments the branchy scanner takes
            count = _split_unicode(data, start, end, out_hashes, pos, roles)
        out_count[i] = count
        pos += count


def tokenize_column(data, offsets, kind, out_hashes, out_count, out_start):
    """Tokenize every segment of a string column into token hashes.

    Segment ``i`` is ``data[offsets[i]:offsets[i + 1]]``; its hashes go to
    ``out_hashes[out_start[i]:]``, their number to ``out_count[i]``.
    ``out_hashes`` needs ``offsets[-1] - offsets[0]`` slots; the hashes of
    each chunk are back to back, from its first segment's byte offset.
    Chunks of segments run on several threads.
    """
    n = offsets.size - 1
    if kind == TOKENIZE_INTL:
        for_chunks(_tokenize_chunk_unicode, n, data, offsets, False, intl_roles(), out_hashes,
                   out_count, out_start)
    elif kind == TOKENIZE_ZH:
        for_chunks(_tokenize_chunk_unicode, n, data, offsets, True, zh_roles(), out_hashes,
                   out_count, out_start)
    else:
        for_chunks(tokenize_chunk, n, data, offsets, kind, out_hashes, out_count, out_start)
