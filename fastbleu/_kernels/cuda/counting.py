"""Token ids on the device -> BLEU statistics rows, in one kernel sized to the work.

Rows are sacrebleu's ``[hyp_len, ref_len, match_1..N, total_1..N]`` (int64),
equal to :func:`fastbleu._kernels.counting.segment_statistics`'s: the same
n-gram keys (the CPU's ``extend_key``, left to right), the same
clipping (each hypothesis n-gram matches while its count stays within the
largest count in any single reference; Papineni et al., 2002) and the same
reference-length rules (closest with ties to the shorter, shortest, or the
scaled average).  Stream 0 of ``start``/``count`` is the hypotheses, streams
``1..R`` the references (count -1: missing).

:func:`bleu_rows` is the whole call in one launch: a block takes ``groups``
segments at a time, a group of threads each.  The group hashes its
segment's ids (:func:`prepare_segment`), its first thread fills the row's
lengths and totals, zeroes the matches and picks how the segment is counted
(:func:`segment_row`), by its tokens:

* ``SHORT`` (hypothesis and references together at most ``short_tokens``):
  :func:`count_short`, by the segment's own group.  The group keeps the keys
  of the current order in shared memory and compares them directly: a
  hypothesis n-gram at position ``p`` is a match when its rank among the
  equal n-grams before it is within its largest count in a reference.  No
  table, no atomics but one sum per order; the work is quadratic in the
  length, so only short segments come here.
* ``BLOCK`` (references at most ``shared_slots / 2`` tokens):
  :func:`count_segment` by the whole block, with an open-addressing table in
  shared memory, one order at a time: references insert their n-grams with
  ``atomic.cas`` and count them (a later reference counts into ``cur`` and
  folds it into ``refmax`` with ``atomic.exch``/``atomic.max``), then each
  hypothesis n-gram takes a rank with ``atomic.add`` and matches while the
  rank is within ``refmax``.
* ``GLOBAL`` (longer): the same with the table in global memory, at a region
  fixed by the segment's position in the streams (:func:`region_base`), so
  that no segment waits on another's size.

A malformed segment (a negative id, offsets out of order, no reference) gets
a row of -1 and reports itself in ``summary``, which the host reads only
when it checks.

A table has one extra slot for the key ``EMPTY`` (which marks free slots), so
every 64-bit key is counted exactly.  ``spread`` masks the key before it
picks its first slot: all ones in use, 0 in tests (every key then probes from
slot 0, the worst case of collisions).  Only ``syncthreads`` and
shared-memory or global atomics are used (no warp intrinsics), so the
kernels run unchanged on numba's CUDA simulator.
"""

import numpy as np
from numba import types

from .loader import CACHED, cuda
from .tokens import BAD_OFFSETS, MISSING, NEGATIVE, extend_key, token_hash

#: The most segments a block of :func:`bleu_rows` takes at once (a group of threads each).
GROUPS = 4
#: The most ``short_tokens`` may be (keys a group holds in shared memory).
SHORT_CAPACITY = 256
#: The most ``shared_slots`` may be (a block's table in shared memory).
SHARED_CAPACITY = 2048
#: Slots of a segment's global-memory table are at most this many per reference position,
#: plus ``REGION_EXTRA`` (see :func:`region_base`).
REGION_SCALE = 4
REGION_EXTRA = 65
#: The per-stream fields of ``params`` (an int64 tuple, ``PARAMS`` fields a stream).
RAGGED, WIDTH, PAD, USE_PAD, EOS, USE_EOS, HAS_VALID, BASE = range(8)
PARAMS = 8
NONE, SHORT, BLOCK, GLOBAL = 0, 1, 2, 3
REF_CLOSEST, REF_SHORTEST, REF_AVERAGE = 0, 1, 2
_MIN_SLOTS = 64
_BIG = np.int64(1 << 62)
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)


@cuda.jit(device=True)
def table_size(ref_tokens):
    """Slots of a segment's table: a power of two, at least twice its reference tokens."""
    size = _MIN_SLOTS
    while size < 2 * ref_tokens:
        size *= 2
    return size


@cuda.jit(device=True)
def ngram_key(hashes, at, m):
    """Key of the n-gram of order ``m + 1`` starting at ``hashes[at]`` (``extend_key``'s)."""
    key = hashes[at]
    for j in range(1, m + 1):
        key = extend_key(key, hashes[at + j])
    return key


@cuda.jit(device=True)
def find_slot(keys, base, size, key, spread, insert):
    """Slot of ``key`` in the table ``keys[base:base + size + 1]``, inserting it if asked;
    -1 when absent and not inserted."""
    if key == EMPTY:
        return base + size
    mask = size - 1
    slot = np.int64(key & spread) & mask
    while True:
        held = keys[base + slot]
        if held == key:
            return base + slot
        if held == EMPTY:
            if not insert:
                return -1
            held = cuda.atomic.cas(keys, base + slot, EMPTY, key)
            if held == EMPTY or held == key:
                return base + slot
        slot = (slot + 1) & mask


@cuda.jit(device=True)
def count_segment(hashes, start, count, max_order, seg, keys, counts, at_ref, at_cur, at_hyp,
                  base, spread, tally, out):
    """A block's count of one segment's matches, order by order, in the table whose keys
    start at ``keys[base]``; a slot's reference maximum, current reference count and
    hypothesis count are ``counts[at_ref + slot]``, ``[at_cur + slot]`` and
    ``[at_hyp + slot]`` (``slot`` counted from ``keys[0]``)."""
    t = cuda.threadIdx.x
    threads = cuda.blockDim.x
    streams = count.shape[0]
    hyp_len = count[0, seg]
    total = 0
    for s in range(1, streams):
        total += max(count[s, seg], 0)
    size = table_size(total)
    for m in range(max_order):
        longest = 0
        for s in range(1, streams):
            longest = max(longest, count[s, seg])
        if hyp_len - m <= 0 or longest - m <= 0:
            break  # no n-gram of this order on one side: the rest stay 0
        for x in range(t, size + 1, threads):
            keys[base + x] = EMPTY
            counts[at_ref + base + x] = 0
            counts[at_cur + base + x] = 0
            counts[at_hyp + base + x] = 0
        if t == 0:
            tally[0] = 0
        cuda.syncthreads()
        first = True
        for s in range(1, streams):
            length = count[s, seg]
            if length - m <= 0:
                continue
            at = start[s, seg]
            for p in range(t, length - m, threads):
                slot = find_slot(keys, base, size, ngram_key(hashes, at + p, m), spread, True)
                if first:
                    cuda.atomic.add(counts, at_ref + slot, 1)
                else:
                    cuda.atomic.add(counts, at_cur + slot, 1)
            cuda.syncthreads()
            if not first:  # fold this reference's counts into the maxima (one thread each)
                for p in range(t, length - m, threads):
                    slot = find_slot(keys, base, size, ngram_key(hashes, at + p, m), spread,
                                     False)
                    c = cuda.atomic.exch(counts, at_cur + slot, 0)
                    if c > 0:
                        cuda.atomic.max(counts, at_ref + slot, c)
                cuda.syncthreads()
            first = False
        found = 0
        at = start[0, seg]
        for p in range(t, hyp_len - m, threads):
            slot = find_slot(keys, base, size, ngram_key(hashes, at + p, m), spread, False)
            if slot >= 0:
                if cuda.atomic.add(counts, at_hyp + slot, 1) < counts[at_ref + slot]:
                    found += 1
        if found:
            cuda.atomic.add(tally, 0, found)
        cuda.syncthreads()
        if t == 0:
            out[seg, 2 + m] = tally[0]
        cuda.syncthreads()


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


@cuda.jit(device=True)
def segment_row(count, i, max_order, ref_length, average_scale, short_tokens, shared_slots,
                bad, out, summary, present_refs):
    """Row ``i``'s lengths, totals and zero matches, and its references present in
    ``present_refs[i]`` (sacrebleu's ``num_refs`` is their minimum where it equals their
    maximum); returns how its matches are counted (``NONE`` for none, or a malformed
    segment, whose row is all -1)."""
    hyp_len = count[0, i]
    closest_diff = _BIG
    closest_len = -1
    shortest = _BIG
    total = 0
    present = 0
    longest = 0
    for s in range(1, count.shape[0]):
        ref_len = count[s, i]
        if ref_len < 0:
            continue
        diff = abs(hyp_len - ref_len)
        if diff < closest_diff or (diff == closest_diff and ref_len < closest_len):
            closest_diff = diff
            closest_len = ref_len
        shortest = min(shortest, ref_len)
        total += ref_len
        present += 1
        longest = max(longest, ref_len)
    present_refs[i] = present
    if present == 0:
        cuda.atomic.min(summary, MISSING, i)
    if present == 0 or bad:
        for c in range(2 + 2 * max_order):
            out[i, c] = -1
        return NONE
    out[i, 0] = hyp_len
    if ref_length == REF_SHORTEST:
        out[i, 1] = shortest
    elif ref_length == REF_AVERAGE:
        out[i, 1] = total * (average_scale // present)
    else:
        out[i, 1] = closest_len
    for m in range(max_order):
        out[i, 2 + m] = 0
        out[i, 2 + max_order + m] = max(hyp_len - m, 0)
    if hyp_len == 0 or longest == 0:
        return NONE
    if hyp_len + total <= short_tokens:
        return SHORT
    if 2 * total <= shared_slots:
        return BLOCK
    return GLOBAL


@cuda.jit(device=True)
def count_short(hashes, start, count, max_order, seg, active, g, lane, group, keys, stride,
                tally, orders, out):
    """Group ``g``'s count of its ``SHORT`` segment (when ``active``): the keys of one order
    at a time in ``keys[g * stride:]``, compared directly (see the module).  Every thread of
    the block calls it."""
    streams = count.shape[0]
    own = g * stride
    hyp_len = count[0, seg] if active else 0
    if cuda.threadIdx.x == 0:
        orders[0] = 0
    if active and lane == 0:
        tally[g] = 0
    cuda.syncthreads()
    if active and lane == 0:
        cuda.atomic.max(orders, 0, min(max_order, hyp_len))
    cuda.syncthreads()
    for m in range(orders[0]):
        if active:  # this order's keys, each thread extending its own positions
            at = own
            for s in range(streams):
                length = count[s, seg]
                if length <= 0:
                    continue
                first = start[s, seg]
                for p in range(lane, length - m, group):
                    if m == 0:
                        keys[at + p] = hashes[first + p]
                    else:
                        keys[at + p] = extend_key(keys[at + p], hashes[first + p + m])
                at += length
        cuda.syncthreads()
        if active:
            found = 0
            for p in range(lane, hyp_len - m, group):
                key = keys[own + p]
                most = 0
                at = own + hyp_len
                for s in range(1, streams):
                    length = count[s, seg]
                    if length <= 0:
                        continue
                    c = 0
                    for q in range(at, at + length - m):
                        if keys[q] == key:
                            c += 1
                    most = max(most, c)
                    at += length
                if most > 0:
                    rank = 1
                    for q in range(own, own + p):
                        if keys[q] == key:
                            rank += 1
                            if rank > most:
                                break
                    if rank <= most:
                        found += 1
            if found:
                cuda.atomic.add(tally, g, found)
        cuda.syncthreads()
        if active and lane == 0:
            out[seg, 2 + m] = tally[g]
            tally[g] = 0
    cuda.syncthreads()


@cuda.jit(device=True)
def region_base(start, params, seg):
    """Where segment ``seg``'s global-memory table starts: ``REGION_SCALE`` slots for each
    reference position before it, and ``REGION_EXTRA`` for each segment before it.  A table
    of ``table_size(t) + 1 <= REGION_SCALE * t + REGION_EXTRA`` slots for ``t`` kept
    reference tokens then fits before the next segment's (it keeps at most the positions
    it spans)."""
    base = REGION_EXTRA * seg
    for s in range(1, start.shape[0]):
        base += REGION_SCALE * (start[s, seg] - params[s * PARAMS + BASE])
    return base


@cuda.jit(device=True)
def key_room(groups, short_tokens, shared_slots):
    """uint64 words of dynamic shared memory for keys: the short segments' keys
    (``short_tokens`` a group) or the shared table's (``shared_slots + 1``), whichever is
    more; the table's three int32 counts follow them."""
    table = shared_slots + 1 if shared_slots else 0
    return max(groups * short_tokens, table)


@cuda.jit(**CACHED)
def bleu_rows(values, offsets, valid, params, n, groups, max_order, ref_length, average_scale,
              short_tokens, shared_slots, spread, hashes, start, count, keys_g, counts_g, out,
              summary, present_refs):
    """Token ids of every stream -> statistics rows, in one launch.

    ``values``, ``offsets`` and ``valid`` are tuples with an array per stream
    (stream 0 the hypotheses; placeholders where a stream has no offsets or
    mask), ``params`` its ``PARAMS`` int64 fields per stream.  A block takes
    ``groups`` segments at a time, a group of ``blockDim.x // groups``
    threads each: the group hashes its segment's kept ids of every stream
    (:func:`prepare_segment`), its first thread fills the row
    (:func:`segment_row`), a ``SHORT`` segment is counted by its group
    (:func:`count_short`), and then the block counts its ``BLOCK`` and
    ``GLOBAL`` segments one after the other, all its threads on each, with
    the table in shared memory or at :func:`region_base` in ``keys_g`` (its
    counts in ``counts_g``: three runs of ``keys_g.size`` int32).  No
    segment waits on another's, so nothing is read back between kernels.
    ``present_refs[i]`` gets segment ``i``'s number of references present (int64, ``n``).

    Shared memory is dynamic, sized by the launch to what the shapes allow
    (``8 * key_room + 12 * (shared_slots + 1)`` bytes when a segment may use the
    shared table, at least ``4 * blockDim.x`` for :func:`prepare_segment`'s
    prefix sums), so that blocks of short segments alone stay small.
    """
    # numba types, not numpy's: the simulator sizes dynamic shared arrays by their itemsize
    keys = cuda.shared.array(0, types.uint64)  # the dynamic shared memory, as 64-bit words
    words = cuda.shared.array(0, types.int32)  # the same memory as 32-bit words
    tally = cuda.shared.array(GROUPS, np.int64)
    kinds = cuda.shared.array(GROUPS, np.int64)
    bad = cuda.shared.array(GROUPS, np.int64)
    first = cuda.shared.array(GROUPS, np.int64)
    stop = cuda.shared.array(GROUPS, np.int64)
    kept = cuda.shared.array(GROUPS, np.int64)
    chunks = cuda.shared.array(1, np.int64)
    group = cuda.blockDim.x // groups
    t = cuda.threadIdx.x
    g = t // group
    lane = t - g * group
    in_group = g < groups
    streams = count.shape[0]
    at_ref = 2 * key_room(groups, short_tokens, shared_slots)
    at_cur = at_ref + shared_slots + 1
    at_hyp = at_cur + shared_slots + 1
    slots_g = keys_g.shape[0]
    for base in range(cuda.blockIdx.x * groups, n, cuda.gridDim.x * groups):
        seg = base + g
        if in_group and lane == 0:
            bad[g] = 0
            kinds[g] = NONE
        for s in range(streams):
            at = s * PARAMS
            prepare_segment(values[s], offsets[s], valid[s], params[at + RAGGED] != 0,
                            params[at + WIDTH], params[at + PAD], params[at + USE_PAD] != 0,
                            params[at + EOS], params[at + USE_EOS] != 0,
                            params[at + HAS_VALID] != 0, n, seg, g, lane, group, in_group, s,
                            hashes, params[at + BASE], start, count, words, first, stop, kept,
                            chunks, bad, summary)
        active = in_group and seg < n
        if active and lane == 0:
            kinds[g] = segment_row(count, seg, max_order, ref_length, average_scale,
                                   short_tokens, shared_slots, bad[g] != 0, out, summary,
                                   present_refs)
        cuda.syncthreads()
        short = active and kinds[g] == SHORT
        count_short(hashes, start, count, max_order, seg, short, g, lane, group, keys,
                    short_tokens, tally, chunks, out)
        for k in range(groups):
            kind = kinds[k]
            if kind == BLOCK:
                count_segment(hashes, start, count, max_order, base + k, keys, words, at_ref,
                              at_cur, at_hyp, 0, spread, tally, out)
            elif kind == GLOBAL:
                count_segment(hashes, start, count, max_order, base + k, keys_g, counts_g, 0,
                              slots_g, 2 * slots_g, region_base(start, params, base + k),
                              spread, tally, out)
        cuda.syncthreads()
