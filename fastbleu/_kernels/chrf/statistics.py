"""UTF-8 text -> chrF statistics, one row per segment (Popović 2015; chrF++ 2017).

A row holds, for every order, sacrebleu 2.6's triple ``[hyp, ref, match]``:
character orders ``1..char_order`` first, then word orders
``1..word_order``.  ``hyp`` and ``ref`` are the numbers of n-grams of the
hypothesis and of the chosen reference (``hyp`` is 0 when the reference has
no n-gram of that order, as sacrebleu counts it); ``match`` is
``sum(min(hyp_count, ref_count))`` over the n-grams they share.

**Characters.**  Read from the UTF-8 bytes, Python whitespace
(``str.split()``'s) skipped unless ``whitespace`` is set; a character is its
UTF-8 bytes packed into one word.  **Words** (chrF++) are the
whitespace-separated words with one ASCII punctuation character split off
the end, or else off the start, of every word longer than one character
(sacrebleu's ``_remove_punctuation``), identified by
:func:`~fastbleu._kernels.hashing.hash_bytes`.  One pass over a segment's
bytes yields both (:func:`read_units`).

**Ids.**  Every distinct reference n-gram of an order gets a small id.  An
ASCII character is its own unigram id; another unigram is found by its unit
in a hashed table.  A longer n-gram is its prefix's id and its last unit:
when the id is below 128 and the unit an ASCII character, the pair indexes
a 128 x 128 table directly (most n-grams of most segments); otherwise each
prefix keeps its first continuation beside it, so most lookups are two
array reads, and other continuations go to the hashed table, keyed by the
prefix's id and the unit.  Character keys (id and packed bytes side by side
in 64 bits) are exact: no two character n-grams share one.  Word keys
combine the id with a 64-bit word hash
(:func:`~fastbleu._kernels.hashing.extend_key`), exact up to word hash
collisions, as BLEU's tokens are.

**Counting, one order at a time.**  The reference's n-grams of an order are
counted by id (and whether the hypothesis hit them), then the hypothesis's
n-grams of that order are looked up; a hit while its count lasts is a
match.  An n-gram can only be shared if both of its (n-1)-grams are shared,
so a position whose (n-1)-gram was not found (on either side) is dropped
from every higher order (the reference's through the hit flags of the order
before, which take turns with this order's): on dissimilar pairs most of
orders 2..6 are never looked up.  Table rows carry a stamp, new for every
(segment, reference, order), so nothing is cleared between segments; the
table needs two rows per reference n-gram of one order, so a huge segment
costs tens of bytes per character (besides the fixed 256 KiB pair table),
not a table of every order.

**Several references.**  Each reference is counted in turn and the row of
the one with the highest sentence chrF is kept, the first on ties
(sacrebleu's ``_compute_segment_statistics``); the F-score is
:func:`~fastbleu._kernels.chrf_formula.f_score`, sacrebleu's arithmetic.
"""

import numpy as np
from numba import njit

from .formula import f_score
from ..text.hashing import (FNV_OFFSET, MIN_TABLE_BITS, extend_key, finish, fnv_step,
                            table_bits, table_slot)
from ..threads import submit_chunks
from ..text.tokenize_13a import CLASS_SPLIT, MAYBE_SPACE, SPACE
from ..text.tokenize_unicode import is_space_at, utf8_length

#: ASCII characters are their own unigram ids (no hashing); other ids start here.
_DIRECT = 128
#: ``string.punctuation``, the characters sacrebleu's chrF++ splits off word edges.
_PUNCT = np.zeros(128, dtype=np.bool_)
for _c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~":
    _PUNCT[ord(_c)] = True
del _c


@njit(cache=True, nogil=True)
def _is_space(buf, j, length):
    cls = CLASS_SPLIT[buf[j]]
    return cls == SPACE or (cls == MAYBE_SPACE and is_space_at(buf, j, length))


@njit(cache=True, nogil=True)
def _word_end(out, count, h, h_last, h_tail, characters, lead, last):
    """Write the hashes of the word that just ended to ``out[count:]``; return the count.

    ``h`` is the FNV state of all its bytes, ``h_last`` of all but its last
    character, ``h_tail`` of all but its first; ``lead`` and ``last`` are its
    first and last bytes.  sacrebleu's ``_remove_punctuation``: one ASCII
    punctuation character is split off the end, or else off the start, of a
    word longer than one character.
    """
    if characters > 1 and last < 0x80 and _PUNCT[last]:  # 'word.' -> 'word', '.'
        out[count] = finish(h_last)
        out[count + 1] = finish(fnv_step(FNV_OFFSET, last))
        return count + 2
    if characters > 1 and lead < 0x80 and _PUNCT[lead]:  # '(word' -> '(', 'word'
        out[count] = finish(fnv_step(FNV_OFFSET, lead))
        out[count + 1] = finish(h_tail)
        return count + 2
    out[count] = finish(h)
    return count + 1


@njit(cache=True, nogil=True)
def read_units(buf, start, end, keep_space, words, chars, word_hashes):
    """Read ``buf[start:end]`` once: write each character to ``chars`` (its UTF-8 bytes
    packed into one word) and, if ``words``, one hash per chrF++ word to
    ``word_hashes``; return both counts.  Scalars and arrays only, no allocation: the
    device's unit reader is this function compiled for the GPU
    (:mod:`fastbleu._kernels.cuda.units`).

    A word's hash is :func:`~fastbleu._kernels.hashing.hash_bytes` of its
    bytes, fed byte by byte while the characters are read.
    """
    # np.int64, not a literal 0: numba would first compile _word_end for Literal[int](0)
    # arguments, then again for int64 (a wasted compile on every first run).
    n_chars = 0
    n_words = np.int64(0)
    in_word = False
    h = h_last = h_tail = FNV_OFFSET
    characters = np.int64(0)
    lead = np.int64(0)
    j = start
    while j < end:
        b = buf[j]
        cls = CLASS_SPLIT[b]
        if b < 0x80:
            length = 1
            space = cls == SPACE
            packed = np.uint64(b)
        else:
            length = utf8_length(b)
            space = cls == MAYBE_SPACE and is_space_at(buf, j, length)
            packed = np.uint64(0)
            for k in range(length):
                packed = (packed << np.uint64(8)) | np.uint64(buf[j + k])
        if space:
            if keep_space:
                chars[n_chars] = packed
                n_chars += 1
            if in_word:
                n_words = _word_end(word_hashes, n_words, h, h_last, h_tail, characters, lead,
                                    buf[j - 1])
                in_word = False
        else:
            chars[n_chars] = packed
            n_chars += 1
            if words:
                if not in_word:
                    in_word = True
                    characters = 0
                    lead = b
                    h = h_tail = FNV_OFFSET
                elif lead < 0x80 and _PUNCT[lead]:  # only needed after a punctuation lead
                    for k in range(length):
                        h_tail = fnv_step(h_tail, buf[j + k])
                h_last = h
                for k in range(length):
                    h = fnv_step(h, buf[j + k])
                characters += 1
        j += length
    if in_word:
        n_words = _word_end(word_hashes, n_words, h, h_last, h_tail, characters, lead,
                            buf[end - 1])
    return n_chars, n_words


@njit(cache=True, nogil=True)
def char_units(buf, start, end, keep_space, out):
    """Write each character of ``buf[start:end]`` to ``out``; return the count (for
    :mod:`~fastbleu._kernels.pairwise`)."""
    return read_units(buf, start, end, keep_space, False, out, out)[0]


@njit(cache=True, nogil=True)
def word_units(buf, start, end, out):
    """Write one hash per chrF++ word of ``buf[start:end]`` to ``out``; return the count
    (for :mod:`~fastbleu._kernels.pairwise`).

    ``out`` also takes the characters :func:`read_units` reads: a word's hashes
    are written below the characters read so far and characters only ever
    above, so no word hash is overwritten.
    """
    return read_units(buf, start, end, False, True, out, out)[1]


@njit(cache=True, nogil=True)
def prefixed_key(prefix, unit, exact):
    """The hashed key of an n-gram: the id of its (n-1)-gram prefix, then its last unit."""
    if exact:  # a character: at most 32 bits, so the key is exact
        return (np.uint64(prefix) << np.uint64(32)) | unit
    return extend_key(np.uint64(prefix), unit)


@njit(cache=True, nogil=True)
def _find(keys, stamps, key, stamp, shift, mask):
    """The row of ``key`` in the hashed table, or the free row where it belongs."""
    slot = table_slot(key, shift)
    while stamps[slot] == stamp and keys[slot] != key:
        slot = (slot + 1) & mask
    return slot


@njit(cache=True, nogil=True)
def _count(keys, stamps, slot_id, counts, hit, key, stamp, shift, mask, ids):
    """Count one more reference n-gram ``key`` in the hashed table (a new one gets the id
    ``ids``); return its id and the next free id."""
    slot = _find(keys, stamps, key, stamp, shift, mask)
    if stamps[slot] == stamp:
        ident = slot_id[slot]
        counts[ident] += 1
        return ident, ids
    stamps[slot] = stamp
    keys[slot] = key
    slot_id[slot] = ids
    counts[ids] = 1
    hit[ids] = False
    return ids, ids + 1


@njit(cache=True, nogil=True)
def _match_orders(hyp, n_hyp, ref, n_ref, orders, exact, tables, stamp, out, column):
    """Write ``[hyp, ref, match]`` of orders ``1..orders`` to ``out[column:]``; return the
    last stamp used.

    ``hyp[:n_hyp]`` and ``ref[:n_ref]`` are units: characters (their UTF-8
    bytes packed into one word, ``exact``) or word hashes.  Every distinct
    reference n-gram of an order gets an id (0, 1, ...); ``hyp_id[p]``
    (``ref_id``) is the id of the n-gram at ``p`` of the order just
    counted, -1 once that n-gram is not shared.  An ASCII character is its
    own unigram id (``direct`` stamps them); another unigram is found by its
    unit in a hashed table.  A longer n-gram is its prefix's id and its last
    unit: a prefix id below 128 with an ASCII character is a row of
    ``pairs`` (stamp, id); otherwise the first continuation of each prefix
    is kept beside the prefix (``next_unit``, ``next_id``), so most lookups
    are two array reads, and any other continuation goes to the hashed
    table, keyed by the prefix's id and the unit (exact for characters).
    ``hit`` flags this order's ids the hypothesis has, ``seen`` the last
    order's.  ``tables`` is :func:`_scratch`'s.
    """
    (keys, stamps, slot_id, counts, hit, seen, next_stamp, next_unit, next_id, hyp_id,
     ref_id, direct, pairs) = tables
    mask, shift = table_bits(n_ref)
    for m in range(orders):
        hyp_total = max(n_hyp - m, 0)
        ref_total = max(n_ref - m, 0)
        at = column + 3 * m
        out[at] = hyp_total if ref_total > 0 else 0
        out[at + 1] = ref_total
        out[at + 2] = 0
        if hyp_total == 0 or ref_total == 0:
            continue
        stamp += 1
        ids = _DIRECT if exact and m == 0 else 0
        # The reference's n-grams.  ``hit`` (this order's ids) and ``seen`` (the last
        # order's: whether the hypothesis has that (n-1)-gram) take turns.
        if m == 0:
            for p in range(ref_total):
                unit = ref[p]
                if exact and unit < _DIRECT:  # an ASCII character is its own id
                    if direct[unit] == stamp:
                        counts[unit] += 1
                    else:
                        direct[unit] = stamp
                        counts[unit] = 1
                        hit[unit] = False
                    ref_id[p] = np.int64(unit)
                else:
                    ref_id[p], ids = _count(keys, stamps, slot_id, counts, hit, unit, stamp,
                                            shift, mask, ids)
        else:  # only where both (n-1)-grams are shared
            prefix = ref_id[0]
            shared = prefix >= 0 and seen[prefix]
            for p in range(ref_total):
                following = ref_id[p + 1]
                shared_next = following >= 0 and seen[following]
                if not (shared and shared_next):
                    ref_id[p] = -1
                    prefix = following
                    shared = shared_next
                    continue
                unit = ref[p + m]
                if exact and prefix < _DIRECT and unit < _DIRECT:
                    at_pair = 2 * ((prefix << 7) | np.int64(unit))  # small id, ASCII unit
                    if pairs[at_pair] == stamp:
                        ident = pairs[at_pair + 1]
                        counts[ident] += 1
                    else:
                        pairs[at_pair] = stamp
                        pairs[at_pair + 1] = ids
                        ident = ids
                        counts[ident] = 1
                        hit[ident] = False
                        ids += 1
                elif next_stamp[prefix] != stamp:  # the prefix's first continuation
                    next_stamp[prefix] = stamp
                    next_unit[prefix] = unit
                    ident = ids
                    next_id[prefix] = ident
                    counts[ident] = 1
                    hit[ident] = False
                    ids += 1
                elif next_unit[prefix] == unit:
                    ident = next_id[prefix]
                    counts[ident] += 1
                else:
                    ident, ids = _count(keys, stamps, slot_id, counts, hit,
                                        prefixed_key(prefix, unit, exact), stamp, shift, mask,
                                        ids)
                ref_id[p] = ident
                prefix = following
                shared = shared_next
        # The hypothesis's n-grams: a match while the reference's count lasts.
        match = 0
        if m == 0:
            for p in range(hyp_total):
                unit = hyp[p]
                ident = -1
                if exact and unit < _DIRECT:
                    if direct[unit] == stamp:
                        ident = np.int64(unit)
                else:
                    slot = _find(keys, stamps, unit, stamp, shift, mask)
                    if stamps[slot] == stamp:
                        ident = slot_id[slot]
                hyp_id[p] = ident
                if ident >= 0:
                    hit[ident] = True
                    if counts[ident] > 0:
                        counts[ident] -= 1
                        match += 1
        else:
            following = hyp_id[0]
            for p in range(hyp_total):
                prefix = following
                following = hyp_id[p + 1]
                ident = -1
                if prefix >= 0 and following >= 0:
                    unit = hyp[p + m]
                    if exact and prefix < _DIRECT and unit < _DIRECT:
                        at_pair = 2 * ((prefix << 7) | np.int64(unit))
                        if pairs[at_pair] == stamp:
                            ident = pairs[at_pair + 1]
                    elif next_stamp[prefix] == stamp:
                        if next_unit[prefix] == unit:
                            ident = next_id[prefix]
                        else:
                            slot = _find(keys, stamps, prefixed_key(prefix, unit, exact), stamp,
                                         shift, mask)
                            if stamps[slot] == stamp:
                                ident = slot_id[slot]
                hyp_id[p] = ident
                if ident >= 0:
                    hit[ident] = True
                    if counts[ident] > 0:
                        counts[ident] -= 1
                        match += 1
        out[at + 2] = match
        hit, seen = seen, hit
    return stamp


@njit(cache=True, nogil=True)
def _scratch(units):
    """The table and scratch of :func:`_match_orders` for segments of up to ``units`` units."""
    size = 1 << MIN_TABLE_BITS
    while size < 2 * units:
        size *= 2
    n = units + 1 + _DIRECT  # ids: the ASCII characters' own, then one per n-gram
    return (np.empty(size, dtype=np.uint64), np.full(size, -1, dtype=np.int64),
            np.empty(size, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.bool_), np.empty(n, dtype=np.bool_),
            np.full(n, -1, dtype=np.int64), np.empty(n, dtype=np.uint64), np.empty(n, dtype=np.int64),
            np.empty(n, dtype=np.int64), np.empty(n, dtype=np.int64),
            np.full(_DIRECT, -1, dtype=np.int64),
            np.full(2 * _DIRECT * _DIRECT, -1, dtype=np.int64))


@njit(cache=True, nogil=True)
def _statistics_chunk(hyp_data, hyp_start, hyp_end, ref_data, ref_start, ref_end,
                      char_order, word_order, whitespace, factor, one_plus_factor,
                      eps_smoothing, out, first, last):
    n_refs = ref_start.shape[0]
    width = out.shape[1]
    # bytes: at least the characters (and words) of any segment of the chunk; an int64, not
    # the literal 64, so that _scratch is compiled once (not for Literal[int](64) first)
    longest = np.int64(64)
    for i in range(first, last):
        longest = max(longest, hyp_end[i] - hyp_start[i])
        for r in range(n_refs):
            longest = max(longest, ref_end[r, i] - ref_start[r, i])
    units = longest
    tables = _scratch(units)
    hyp_chars = np.empty(units, dtype=np.uint64)
    ref_chars = np.empty(units, dtype=np.uint64)
    hyp_words = np.empty(units, dtype=np.uint64)
    ref_words = np.empty(units, dtype=np.uint64)
    row = np.empty(width, dtype=np.int64)
    stamp = np.int64(0)
    for i in range(first, last):
        n_hyp, n_hyp_words = read_units(hyp_data, hyp_start[i], hyp_end[i], whitespace,
                                        word_order > 0, hyp_chars, hyp_words)
        best = -1.0
        for r in range(n_refs):
            if ref_start[r, i] < 0:  # a missing reference
                continue
            n_ref, n_ref_words = read_units(ref_data, ref_start[r, i], ref_end[r, i],
                                            whitespace, word_order > 0, ref_chars, ref_words)
            stamp = _match_orders(hyp_chars, n_hyp, ref_chars, n_ref, char_order, True,
                                  tables, stamp, row, 0)
            if word_order > 0:
                stamp = _match_orders(hyp_words, n_hyp_words, ref_words, n_ref_words,
                                      word_order, False, tables, stamp, row, 3 * char_order)
            if n_refs == 1:
                out[i, :] = row
                break
            score = f_score(row, np.int64(0), char_order + word_order, factor,
                            one_plus_factor, eps_smoothing)  # the formula kernel's signature
            if score > best:
                best = score
                out[i, :] = row


def chrf_statistics(hyp_data, hyp_start, hyp_end, ref_data, ref_start, ref_end, char_order,
                    word_order, whitespace, factor, one_plus_factor, eps_smoothing, out):
    """Start filling ``out`` (int64, ``(n, 3 * (char_order + word_order))``) on the thread
    pool; return the futures to wait on (none when the work was done here and now).

    Segment ``i``'s hypothesis is ``hyp_data[hyp_start[i]:hyp_end[i]]``
    (UTF-8, already lowercased if asked); reference ``r`` is
    ``ref_data[ref_start[r, i]:ref_end[r, i]]``, missing when its start is
    -1.  Every segment needs at least one reference (the caller checks).
    ``factor`` and ``one_plus_factor`` are ``beta ** 2`` and ``1 + beta ** 2``
    as floats, for choosing among several references.
    """
    return submit_chunks(_statistics_chunk, out.shape[0], hyp_data, hyp_start, hyp_end,
                         ref_data, ref_start, ref_end, np.int64(char_order),
                         np.int64(word_order), bool(whitespace), float(factor),
                         float(one_plus_factor), bool(eps_smoothing), out, min_chunk=1024)
