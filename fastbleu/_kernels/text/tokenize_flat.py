"""``13a``, ``none`` and ``char`` without a data-dependent branch per token.

:func:`fastbleu._kernels.tokenize_13a.split_tokens` decides every token
boundary with a branch, and those branches are what it spends its time on:
the predictor misses about one per token (benchmarks/README.md, issue 17).
:func:`_scan_flat` computes the same tokens and the same hashes in one loop
over the segment's bytes whose only branch is the loop's own.

Whether a token ends before byte ``j`` and whether one starts at it depends
only on the byte classes of ``tokenize_13a`` (3 bits each) of bytes
``j - 2`` to ``j + 1``, given that no ``.``/``,`` follows another:

* there is a *cut* before byte ``j`` if byte ``j - 1`` or ``j`` is
  whitespace or *isolated*;
* a byte is isolated if it is rule-1 punctuation, a ``-`` after a digit
  (rule 4), or a ``.``/``,`` whose left neighbour is not a digit (rule 2:
  that neighbour is not a ``.``/``,`` either, so it cannot have been
  consumed by an earlier rule-2 match) or whose right neighbour is not a
  digit (rule 3);
* a token ends before byte ``j`` if byte ``j - 1`` is not whitespace and
  there is a cut, and starts at ``j`` if byte ``j`` is not whitespace and
  there is a cut.

So the loop keeps the last four classes in a 12-bit window and reads both
answers from a 4,096-entry table (:data:`_WINDOW`), built below from the
classes' meaning.  The FNV-1a state is reset by a select where a token
starts and fed every byte; the state before each byte is stored at the
token count, which advances only where a token ended, so the stores that do
not count are overwritten by the next one.  ``finish`` is applied to the
segment's hashes afterwards, one per token.  The padding spaces of 13a
stand before the first byte and after the last.

:func:`_scan_char_flat` does the same for ``char``: a lead byte ends the
code point before it (a token unless it was whitespace) and starts the next.

The hashes are bit for bit those of ``split_tokens`` (``hash_bytes`` of
each token's bytes).  A segment this loop does not handle returns -1 and is
scanned by ``split_tokens`` as before: one with a 13a trigger (``<``, ``&``,
newline), with a ``.``/``,`` after a ``.``/``,`` (rule 2 then depends on the
whole run; about 1 % of WMT22 en/de segments), or with Unicode whitespace.
A lead byte that may start Unicode whitespace (C2, E1, E2, E3: curly quotes
and dashes are E2) is checked after the loop: if its code point is not
whitespace, lies inside the segment and has non-ASCII continuation bytes,
``split_tokens`` would take it whole into the token, as this loop does
byte by byte.  The table is shared by ``none``, whose class table has only
token bytes, whitespace and those lead bytes.
"""

import numpy as np
from numba import njit

from .hashing import FNV_OFFSET, finish, fnv_step
from .tokenize_13a import (CLASS_SPLIT, _DASH, _DIGIT, _DOT_COMMA, MAYBE_SPACE, _PUNCT, SPACE,
                           _TRIGGER)
from .tokenize_unicode import is_space_at, utf8_length

_ENDS = 1  # a token ends before this byte
_STARTS = 2  # a token starts at this byte
_CHECK = 4  # a lead byte that may start Unicode whitespace: check the segment's code points
_SLOW = 8  # a trigger, or a '.'/',' after a '.'/',': the segment goes to split_tokens


def _window_table():
    """What happens at byte j for each window of classes ``c[j-2]`` (bits 0-2) to
    ``c[j+1]`` (bits 9-11)."""
    table = np.zeros(1 << 12, dtype=np.uint8)
    for window in range(1 << 12):
        before2, before, here, after = ((window >> shift) & 7 for shift in (0, 3, 6, 9))

        def isolated(left, c, right):
            return (c == _PUNCT or (c == _DASH and left == _DIGIT)
                    or (c == _DOT_COMMA and (left != _DIGIT or right != _DIGIT)))

        cut = (before == SPACE or here == SPACE or isolated(before2, before, here)
               or isolated(before, here, after))
        code = 0
        if cut and before != SPACE:
            code |= _ENDS
        if cut and here != SPACE:
            code |= _STARTS
        if here == MAYBE_SPACE:
            code |= _CHECK
        if here == _TRIGGER or (here == _DOT_COMMA and before == _DOT_COMMA):
            code |= _SLOW
        table[window] = code
    return table


_WINDOW = _window_table()
# uint64 constants: numba would take ``uint64 op int`` to float64.
_U_CLASS_BITS = np.uint64(3)
_U_NEXT = np.uint64(9)  # where the window takes the next byte's class
_U_HERE = np.uint64(6)  # where the window holds the current byte's class
_U_SPACE = np.uint64(SPACE)
_U_ENDS = np.uint64(_ENDS)
_U_STARTS = np.uint64(_STARTS)
_U_CHECK = np.uint64(_CHECK)
_U_SLOW = np.uint64(_SLOW)


@njit(cache=True, nogil=True)
def _plain_code_points(buf, start, end, classes):
    """Whether every maybe-whitespace lead byte of ``buf[start:end]`` starts a
    code point that is not whitespace, inside the segment, continued by
    non-ASCII bytes: ``split_tokens`` would take it whole into a token."""
    for j in range(start, end):
        if classes[buf[j]] == MAYBE_SPACE:
            length = utf8_length(buf[j])
            if j + length > end:
                return False
            for k in range(j + 1, j + length):
                if buf[k] < 0x80:
                    return False
            if is_space_at(buf, j, length):
                return False
    return True


@njit(cache=True, nogil=True)
def _scan_flat(buf, start, end, out, pos, classes):
    """Tokens of ``buf[start:end]`` as hashes at ``out[pos:]``; their number, or
    -1 (having written garbage) if the segment needs ``split_tokens``.

    ``classes`` is ``CLASS_13A_RAW`` or ``CLASS_SPLIT`` (``none``).  Writes
    at most ``end - start`` slots from ``pos``, as ``split_tokens`` does.
    Indices are unsigned, which spares numba's negative-index arithmetic.
    """
    if start >= end:
        return 0
    k = np.uint64(pos)  # where the next token's hash goes
    h = FNV_OFFSET
    seen = np.uint64(0)  # union of the codes met
    # The padding space twice, then the first byte, moved down by the first step.
    b = buf[np.uint64(start)]
    window = ((_U_SPACE << _U_CLASS_BITS) | (_U_SPACE << _U_HERE)
              | (np.uint64(classes[b]) << _U_NEXT))
    for j in range(np.uint64(start) + np.uint64(1), np.uint64(end)):
        b_next = buf[j]
        # shifting right drops the oldest class: no mask on the loop-carried chain
        window = (window >> _U_CLASS_BITS) | (np.uint64(classes[b_next]) << _U_NEXT)
        code = np.uint64(_WINDOW[window])
        out[k] = h  # the token that ended before this byte, if any; else overwritten
        k += code & _U_ENDS
        h = fnv_step(FNV_OFFSET if code & _U_STARTS else h, b)
        seen |= code
        b = b_next
    # The last byte, followed by the padding space, which ends its token.
    window = (window >> _U_CLASS_BITS) | (_U_SPACE << _U_NEXT)
    code = np.uint64(_WINDOW[window])
    out[k] = h
    k += code & _U_ENDS
    h = fnv_step(FNV_OFFSET if code & _U_STARTS else h, b)
    seen |= code
    out[k] = h
    k += np.uint64(((window >> _U_HERE) & np.uint64(7)) != _U_SPACE)
    if seen & (_U_CHECK | _U_SLOW):
        if seen & _U_SLOW or not _plain_code_points(buf, start, end, classes):
            return -1
    for t in range(np.uint64(pos), k):
        out[t] = finish(out[t])
    return np.int64(k) - pos


@njit(cache=True, nogil=True)
def _scan_char_flat(buf, start, end, out, pos):
    """``char`` (every code point that is not whitespace is a token) as :func:`_scan_flat`
    does 13a: the same hashes as ``tokenize.tokens_char``, no branch per token; -1 for a
    segment with a lead byte that may start Unicode whitespace and does, or is cut off.

    A lead byte (not ``10xxxxxx``) ends the code point before it, which was a
    token unless it was ASCII whitespace, and starts the next one.
    """
    if start >= end:
        return 0
    k = np.uint64(pos)
    h = FNV_OFFSET
    token = np.uint64(0)  # 1 while the current code point is a token
    seen = np.uint64(0)  # 1 once a lead byte of possible Unicode whitespace is met
    for j in range(np.uint64(start), np.uint64(end)):
        b = buf[j]
        cls = CLASS_SPLIT[b]
        lead = np.uint64((b & 0xC0) != 0x80)
        out[k] = h  # the code point before this byte, if this byte starts one; else overwritten
        k += lead & token
        token = np.uint64(cls != SPACE) if lead else token
        h = fnv_step(FNV_OFFSET if lead else h, b)
        seen |= np.uint64(cls == MAYBE_SPACE)
    out[k] = h
    k += token
    if seen and not _plain_code_points(buf, start, end, CLASS_SPLIT):
        return -1
    for t in range(np.uint64(pos), k):
        out[t] = finish(out[t])
    return np.int64(k) - pos
