"""Integer token ids -> token hashes: the tokenizer stage for input that is already tokens.

One pass per segment, with no Python objects: skip the leading run of
padding, end the segment at the first end-of-sequence id after it (the eos
itself excluded), drop padding ids in what remains, and write
``finish(id + 1)`` (:mod:`fastbleu._kernels.hashing`, the splitmix64
finaliser, a bijection on 64-bit words) for every other id.  The hashes
are thus injective over ids, and spread over all 64 bits as the n-gram
tables (``extend_key``, ``table_slot``) want them.

A segment writes its hashes at its own position in the batch
(``offsets[i] - offsets[0]``), as the text tokenizers do: it never emits
more hashes than it has ids, so no counting pass is needed.  A segment that
keeps a negative id gets the count ``NEGATIVE_ID`` for the caller to report.

``values`` is int32 or int64 (two compiled specialisations; the caller casts
other integer types to int64).
"""

import numpy as np
from numba import njit

from .hashing import finish
from ..threads import for_chunks

#: ``out_count`` of a segment holding a negative id (-1 is a missing segment).
NEGATIVE_ID = -2


@njit(cache=True, nogil=True)
def _hash_ids_chunk(values, offsets, pad_id, use_pad, eos_id, use_eos, unsigned, out_hashes,
                    out_count, first, last):
    base = offsets[0]
    one = np.uint64(1)
    for i in range(first, last):
        start = offsets[i]
        end = offsets[i + 1]
        if use_pad:
            while start < end and values[start] == pad_id:
                start += 1
        if use_eos:
            stop = start
            while stop < end and values[stop] != eos_id:
                stop += 1
            end = stop
        pos = offsets[i] - base
        count = 0
        negative = False
        for p in range(start, end):
            v = np.int64(values[p])
            if use_pad and v == pad_id:
                continue
            if v < 0 and not unsigned:  # uint64 ids of 2**63 or more are ids too
                negative = True
            out_hashes[pos + count] = finish(np.uint64(v) + one)
            count += 1
        out_count[i] = NEGATIVE_ID if negative else count


def hash_ids(values, offsets, pad_id, eos_id, out_hashes, out_count, unsigned=False):
    """Hash the ids of segments ``values[offsets[i]:offsets[i + 1]]`` into ``out_hashes``.

    ``values`` are int64; ``unsigned`` says they are the bits of uint64 ids, so that
    one of 2**63 or more (negative as int64) is an id like any other: it hashes as
    the same 64 bits, which no accepted int64 id (never negative) has.

    Segment ``i``'s kept ids become ``out_hashes[offsets[i] - offsets[0]:][:out_count[i]]``.
    ``pad_id``/``eos_id`` are ints or None.  Chunks of segments run on the
    thread pool.
    """
    n = offsets.size - 1
    if n <= 0:
        return
    for_chunks(_hash_ids_chunk, n, values, offsets,
               np.int64(0 if pad_id is None else pad_id), pad_id is not None,
               np.int64(0 if eos_id is None else eos_id), eos_id is not None,
               bool(unsigned), out_hashes, out_count)
