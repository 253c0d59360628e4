"""Token ids on the device -> 64-bit token hashes, as :mod:`fastbleu._kernels.ids` makes them.

A segment's kept ids are those after its leading run of ``pad_id``, before
the first ``eos_id`` after that run, and not ``pad_id`` themselves; each
becomes ``finish(id + 1)`` (splitmix64's finaliser, the CPU path's token
hash), so an n-gram key here equals the CPU path's key for the same ids and
the statistics are the same, hash collisions included.

:func:`prepare_segment` is run by a group of ``group`` threads per segment
(the fused kernel :func:`fastbleu._kernels.cuda.counting.bleu_rows` has
several groups per block; every thread of the block calls it, as it meets
at ``syncthreads``).  The group walks its segment a chunk
of ``group`` ids at a time: it finds the end of the leading padding and the
first ``eos_id`` with shared-memory minima, and places the kept ids with a
prefix sum of the chunk's keep flags (Hillis and Steele), so the hashes land
compacted at the segment's own position in the output (never more than it
has ids).  Without ``pad_id`` and ``eos_id`` every id is kept and the chunk
is copied as it is.  Only ``syncthreads`` and shared-memory atomics are used
(no warp intrinsics), so the kernel runs unchanged on numba's CUDA simulator.
"""

import numpy as np

from .loader import cuda

_BIG = np.int64(1 << 62)
_ONE = np.uint64(1)
_MIX_1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX_2 = np.uint64(0x94D049BB133111EB)
_S30 = np.uint64(30)
_S27 = np.uint64(27)
_S31 = np.uint64(31)

# Slots of the int64 ``summary`` array that the kernel reports malformed input through
# (read by the host only when it checks).
MISSING = 0  # the first segment without any reference
NEGATIVE = 1  # NEGATIVE + 2 * s: the first segment of stream s that keeps a negative id
BAD_OFFSETS = 2  # BAD_OFFSETS + 2 * s: the first segment of stream s with offsets out of order
#: The value of a minimum slot that nothing has lowered.
NONE = _BIG


@cuda.jit(device=True)
def token_hash(value):
    """``finish(value + 1)``: the CPU path's hash of a non-negative id."""
    h = np.uint64(value) + _ONE
    h ^= h >> _S30
    h *= _MIX_1
    h ^= h >> _S27
    h *= _MIX_2
    h ^= h >> _S31
    return h


@cuda.jit(device=True)
def prepare_segment(values, offsets, valid, ragged, width, pad_id, use_pad, eos_id, use_eos,
                    has_valid, n, seg, g, lane, group, in_group, stream, out, out_base, start,
                    count, flags, first, stop, kept, chunks, bad, summary):
    """Hash the kept ids of segment ``seg`` (group ``g``'s) of one stream.

    Segment ``i`` is ``values[0, offsets[i]:offsets[i + 1]]`` when ``ragged``,
    else ``values[i, :width]``.  Its hashes go to ``out[start[stream, i]:]``
    (``start = out_base`` plus the segment's position in ``values``) and their
    number to ``count[stream, i]`` (-1 where ``valid[i]`` is false with
    ``has_valid``).  A segment that keeps a negative id, or whose offsets
    decrease or leave ``values``, sets ``bad[g]`` and lowers
    ``summary[NEGATIVE + 2 * stream]`` or ``summary[BAD_OFFSETS + 2 * stream]``
    to its index.  ``flags`` holds ``group`` int32 per group; ``first``,
    ``stop``, ``kept`` one int64 per group, ``chunks`` one.
    """
    active = in_group and seg < n
    length = 0
    col0 = 0
    row = 0
    position = 0
    if active:
        if ragged:
            col0 = offsets[seg]
            length = offsets[seg + 1] - col0
            position = col0 - offsets[0]
            if col0 < 0 or length < 0 or col0 + length > values.shape[1] or position < 0:
                if lane == 0:
                    cuda.atomic.min(summary, BAD_OFFSETS + 2 * stream, seg)
                    bad[g] = 1
                col0 = 0
                length = 0
                position = 0
        else:
            row = seg
            length = width
            position = seg * width
        if has_valid and not valid[seg]:
            active = False
            if lane == 0:
                start[stream, seg] = out_base + position
                count[stream, seg] = -1
    cuda.syncthreads()  # the callers' shared state is read by all before it is reset
    if cuda.threadIdx.x == 0:
        chunks[0] = 0
    if in_group and lane == 0:
        first[g] = _BIG if use_pad else 0
        stop[g] = _BIG
        kept[g] = 0
    cuda.syncthreads()
    if active and lane == 0:
        cuda.atomic.max(chunks, 0, (length + group - 1) // group)
    cuda.syncthreads()
    negative = False
    at_flag = g * group + lane
    for c in range(chunks[0]):
        idx = c * group + lane
        inside = active and idx < length
        value = np.int64(values[row, col0 + idx]) if inside else np.int64(0)
        if not use_pad and not use_eos:
            if inside:
                if value < 0:
                    negative = True
                else:
                    out[out_base + position + idx] = token_hash(value)
            continue
        # The state before this chunk, read by all before any thread changes it.
        begun = in_group and first[g] != _BIG
        ended = in_group and stop[g] != _BIG
        cuda.syncthreads()
        if use_pad and inside and not begun and value != pad_id:
            cuda.atomic.min(first, g, idx)
        cuda.syncthreads()
        if use_eos and inside and not ended and idx >= first[g] and value == eos_id:
            cuda.atomic.min(stop, g, idx)
        cuda.syncthreads()
        keep = inside and idx >= first[g] and idx < stop[g] and \
            not (use_pad and value == pad_id)
        if in_group:
            flags[at_flag] = 1 if keep else 0
        d = 1
        while d < group:  # inclusive prefix sum of the group's flags
            cuda.syncthreads()
            add = 0
            if in_group and lane >= d:
                add = flags[at_flag - d]
            cuda.syncthreads()
            if in_group:
                flags[at_flag] += add
            d *= 2
        cuda.syncthreads()
        if keep:
            if value < 0:
                negative = True
            else:
                at = kept[g] + flags[at_flag] - 1
                out[out_base + position + at] = token_hash(value)
        cuda.syncthreads()
        if in_group and lane == group - 1:
            kept[g] += flags[at_flag]
        cuda.syncthreads()
    if negative:
        cuda.atomic.min(summary, NEGATIVE + 2 * stream, seg)
        bad[g] = 1
    if active and lane == 0:
        start[stream, seg] = out_base + position
        count[stream, seg] = length if not use_pad and not use_eos else kept[g]
    cuda.syncthreads()
