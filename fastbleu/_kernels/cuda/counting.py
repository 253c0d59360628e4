"""Token hashes on the device -> BLEU statistics rows, with kernels sized to the work.

Rows are sacrebleu's ``[hyp_len, ref_len, match_1..N, total_1..N]`` (int64),
equal to :func:`fastbleu._kernels.counting.segment_statistics`'s: the same
n-gram keys (``key * GOLDEN + token_hash``, left to right), the same
clipping (each hypothesis n-gram matches while its count stays within the
largest count in any single reference; Papineni et al., 2002) and the same
reference-length rules (closest with ties to the shorter, shortest, or the
scaled average).  Stream 0 of ``start``/``count`` is the hypotheses, streams
``1..R`` the references (count -1: missing).

:func:`statistics_rows` (a thread per segment) fills the lengths and totals,
zeroes the matches and sorts each segment into one of three kernels by its
tokens:

* ``SHORT`` (hypothesis and references together at most ``short_tokens``):
  :func:`count_short`, a group of ``blockDim.x // GROUPS`` threads per
  segment and ``GROUPS`` segments per block.  The group keeps the keys of the
  current order in shared memory and compares them directly: a hypothesis
  n-gram at position ``p`` is a match when its rank among the equal
  n-grams before it is within its largest count in a reference.  No table,
  no atomics but one sum per order; the work is quadratic in the length, so
  only short segments come here.
* ``BLOCK`` (references at most ``shared_slots / 2`` tokens):
  :func:`count_shared`, a block per segment and an open-addressing table in
  shared memory, one order at a time: references insert their n-grams with
  ``atomic.cas`` and count them (a later reference counts into ``cur`` and
  folds it into ``refmax`` with ``atomic.exch``/``atomic.max``), then each
  hypothesis n-gram takes a rank with ``atomic.add`` and matches while the
  rank is within ``refmax``.
* ``GLOBAL`` (longer): :func:`count_global`, the same with the table in
  global memory, a region per segment of ``2 * reference tokens`` slots
  (rounded up to a power of two) reserved by :func:`statistics_rows`.

A table has one extra slot for the key ``EMPTY`` (which marks free slots), so
every 64-bit key is counted exactly.  ``spread`` masks the key before it
picks its first slot: all ones in use, 0 in tests (every key then probes from
slot 0, the worst case of collisions).  Only ``syncthreads`` and
shared-memory or global atomics are used (no warp intrinsics), so the
kernels run unchanged on numba's CUDA simulator.
"""

import numpy as np

from .loader import cuda
from .tokens import GLOBAL_SLOTS, MISSING, N_BLOCK, N_GLOBAL, N_SHORT

#: Segments per block of :func:`count_short`.
GROUPS = 4
#: Shared key slots of a group of :func:`count_short` (the most ``short_tokens`` may be).
SHORT_CAPACITY = 256
#: Shared table slots of :func:`count_shared` (the most ``shared_slots`` may be).
SHARED_CAPACITY = 2048
_TABLE = SHARED_CAPACITY + 1  # and the slot of the key EMPTY (shared arrays take literal sizes)
NONE, SHORT, BLOCK, GLOBAL = 0, 1, 2, 3
REF_CLOSEST, REF_SHORTEST, REF_AVERAGE = 0, 1, 2
_MIN_SLOTS = 64
_BIG = np.int64(1 << 62)
GOLDEN = np.uint64(0x9E3779B97F4A7C15)
EMPTY = np.uint64(0xFFFFFFFFFFFFFFFF)


@cuda.jit(device=True)
def table_size(ref_tokens):
    """Slots of a segment's table: a power of two, at least twice its reference tokens."""
    size = _MIN_SLOTS
    while size < 2 * ref_tokens:
        size *= 2
    return size


@cuda.jit
def statistics_rows(count, n, max_order, ref_length, average_scale, short_tokens,
                    shared_slots, out, category, block_list, global_list, global_base, summary):
    """Lengths, totals and zero matches of every row; each segment's kernel, listed."""
    tally = cuda.shared.array(4, np.int64)
    offset = cuda.shared.array(4, np.int64)
    t = cuda.threadIdx.x
    for first in range(cuda.blockIdx.x * cuda.blockDim.x, n, cuda.gridDim.x * cuda.blockDim.x):
        if t < 4:
            tally[t] = 0
        cuda.syncthreads()
        i = first + t
        kind = NONE
        local = 0
        region_at = 0
        if i < n:
            kind = _row(count, i, max_order, ref_length, average_scale, short_tokens,
                        shared_slots, out, summary)
            category[i] = kind
            if kind == SHORT:
                cuda.atomic.add(tally, 0, 1)
            elif kind == BLOCK:
                local = cuda.atomic.add(tally, 1, 1)
            elif kind == GLOBAL:
                local = cuda.atomic.add(tally, 2, 1)
                total = 0
                for s in range(1, count.shape[0]):
                    total += max(count[s, i], 0)
                region_at = cuda.atomic.add(tally, 3, table_size(total) + 1)
        cuda.syncthreads()
        if t == 0:  # one global atomic per block and list
            cuda.atomic.add(summary, N_SHORT, tally[0])
            offset[1] = cuda.atomic.add(summary, N_BLOCK, tally[1])
            offset[2] = cuda.atomic.add(summary, N_GLOBAL, tally[2])
            offset[3] = cuda.atomic.add(summary, GLOBAL_SLOTS, tally[3])
        cuda.syncthreads()
        if kind == BLOCK:
            block_list[offset[1] + local] = i
        elif kind == GLOBAL:
            global_list[offset[2] + local] = i
            global_base[offset[2] + local] = offset[3] + region_at
        cuda.syncthreads()


@cuda.jit(device=True)
def _row(count, i, max_order, ref_length, average_scale, short_tokens, shared_slots, out,
         summary):
    """Row ``i``'s lengths, totals and zero matches; returns its kernel."""
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
    out[i, 0] = hyp_len
    if ref_length == REF_SHORTEST:
        out[i, 1] = shortest if present else -1
    elif ref_length == REF_AVERAGE:
        out[i, 1] = total * (average_scale // max(present, 1))
    else:
        out[i, 1] = closest_len
    for m in range(max_order):
        out[i, 2 + m] = 0
        out[i, 2 + max_order + m] = max(hyp_len - m, 0)
    if present == 0:
        cuda.atomic.min(summary, MISSING, i)
    if hyp_len == 0 or longest == 0:
        return NONE
    if hyp_len + total <= short_tokens:
        return SHORT
    if 2 * total <= shared_slots:
        return BLOCK
    return GLOBAL


@cuda.jit(device=True)
def ngram_key(hashes, at, m):
    """Key of the n-gram of order ``m + 1`` starting at ``hashes[at]`` (``extend_key``'s)."""
    key = hashes[at]
    for j in range(1, m + 1):
        key = key * GOLDEN + hashes[at + j]
    return key


@cuda.jit
def count_short(hashes, start, count, n, max_order, category, out):
    """Matches of the ``SHORT`` segments, a group of threads each (see the module)."""
    keys = cuda.shared.array((GROUPS, SHORT_CAPACITY), np.uint64)
    tally = cuda.shared.array(GROUPS, np.int64)
    orders = cuda.shared.array(1, np.int64)
    group = cuda.blockDim.x // GROUPS
    t = cuda.threadIdx.x
    g = t // group
    lane = t - g * group
    streams = count.shape[0]
    for base in range(cuda.blockIdx.x * GROUPS, n, cuda.gridDim.x * GROUPS):
        seg = base + g
        active = g < GROUPS and seg < n
        if active:
            active = category[seg] == SHORT
        hyp_len = count[0, seg] if active else 0
        if t == 0:
            orders[0] = 0
        if active and lane == 0:
            tally[g] = 0
        cuda.syncthreads()
        if active and lane == 0:
            cuda.atomic.max(orders, 0, min(max_order, hyp_len))
        cuda.syncthreads()
        for m in range(orders[0]):
            if active:  # this order's keys, each thread extending its own positions
                at = 0
                for s in range(streams):
                    length = count[s, seg]
                    if length <= 0:
                        continue
                    first = start[s, seg]
                    for p in range(lane, length - m, group):
                        if m == 0:
                            keys[g, at + p] = hashes[first + p]
                        else:
                            keys[g, at + p] = keys[g, at + p] * GOLDEN + hashes[first + p + m]
                    at += length
            cuda.syncthreads()
            if active:
                found = 0
                for p in range(lane, hyp_len - m, group):
                    key = keys[g, p]
                    most = 0
                    at = hyp_len
                    for s in range(1, streams):
                        length = count[s, seg]
                        if length <= 0:
                            continue
                        c = 0
                        for q in range(at, at + length - m):
                            if keys[g, q] == key:
                                c += 1
                        most = max(most, c)
                        at += length
                    if most > 0:
                        rank = 1
                        for q in range(p):
                            if keys[g, q] == key:
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
def count_segment(hashes, start, count, max_order, seg, keys, refmax, cur, hyp, base, spread,
                  tally, out):
    """A block's count of one segment's matches, order by order, in the given table."""
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
            refmax[base + x] = 0
            cur[base + x] = 0
            hyp[base + x] = 0
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
                    cuda.atomic.add(refmax, slot, 1)
                else:
                    cuda.atomic.add(cur, slot, 1)
            cuda.syncthreads()
            if not first:  # fold this reference's counts into the maxima (one thread each)
                for p in range(t, length - m, threads):
                    slot = find_slot(keys, base, size, ngram_key(hashes, at + p, m), spread,
                                     False)
                    c = cuda.atomic.exch(cur, slot, 0)
                    if c > 0:
                        cuda.atomic.max(refmax, slot, c)
                cuda.syncthreads()
            first = False
        found = 0
        at = start[0, seg]
        for p in range(t, hyp_len - m, threads):
            slot = find_slot(keys, base, size, ngram_key(hashes, at + p, m), spread, False)
            if slot >= 0:
                if cuda.atomic.add(hyp, slot, 1) < refmax[slot]:
                    found += 1
        if found:
            cuda.atomic.add(tally, 0, found)
        cuda.syncthreads()
        if t == 0:
            out[seg, 2 + m] = tally[0]
        cuda.syncthreads()


@cuda.jit
def count_shared(hashes, start, count, max_order, segments, n_segments, spread, out):
    """Matches of the listed ``BLOCK`` segments, a block each, tables in shared memory."""
    keys = cuda.shared.array(_TABLE, np.uint64)
    refmax = cuda.shared.array(_TABLE, np.int32)
    cur = cuda.shared.array(_TABLE, np.int32)
    hyp = cuda.shared.array(_TABLE, np.int32)
    tally = cuda.shared.array(1, np.int64)
    for j in range(cuda.blockIdx.x, n_segments, cuda.gridDim.x):
        count_segment(hashes, start, count, max_order, segments[j], keys, refmax, cur, hyp, 0,
                      spread, tally, out)


@cuda.jit
def count_global(hashes, start, count, max_order, segments, bases, n_segments, keys, refmax,
                 cur, hyp, spread, out):
    """Matches of the listed ``GLOBAL`` segments, a block each, tables in global memory."""
    tally = cuda.shared.array(1, np.int64)
    for j in range(cuda.blockIdx.x, n_segments, cuda.gridDim.x):
        count_segment(hashes, start, count, max_order, segments[j], keys, refmax, cur, hyp,
                      bases[j], spread, tally, out)
