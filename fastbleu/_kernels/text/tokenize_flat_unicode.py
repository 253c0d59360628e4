"""``intl`` and ``zh`` without a data-dependent branch per token.

:func:`_scan_unicode_flat` computes the tokens and hashes of
:func:`fastbleu._kernels.tokenize_unicode._split_unicode` the way
:mod:`fastbleu._kernels.tokenize_flat` does 13a's: in one loop, here over
code points, whose branches depend on the text's script (ASCII or not) and
not on where its tokens end.

The two tokenizers share ``_split_unicode``'s rules and differ only in the
role table (:mod:`fastbleu._kernels.unicode_classes`).  A code point is
*isolated* (a token of its own) if it is

* ``ISOLATE``;
* a ``DASH`` after a ``NUMBER``;
* a ``PUNCT`` that was matched from the left (its left neighbour exists,
  is not a ``NUMBER`` and is not itself a ``PUNCT`` matched from the left)
  or whose right neighbour exists and is not a ``NUMBER``.

Only the last condition's "matched from the left" depends on more than the
neighbours: on the parity of a run of ``PUNCT``.  It matters only for a
``PUNCT`` whose left neighbour is a ``PUNCT`` and whose right neighbour is a
``NUMBER`` (such a segment is handed back, see below).  With a ``PUNCT`` on
the left and anything else on the right the mark is isolated by its right
neighbour; with nothing on the right (the end of the segment) its status
decides no boundary: the ``PUNCT`` before it is isolated by it, and the end
of the segment ends the token anyway.  For any other left neighbour, matched
from the left means that the neighbour exists and is not a ``NUMBER``.

So, as in ``tokenize_flat``, whether a token ends before code point ``j`` or
starts at it depends only on the roles of code points ``j - 2`` to
``j + 1`` (there is a *cut* before ``j`` if code point ``j - 1`` or ``j`` is
whitespace or isolated; a token ends there if ``j - 1`` is not whitespace and
starts if ``j`` is not), with an ``EDGE`` role for the places outside the
segment: there is no padding, so a mark first in the segment has no left
neighbour and one last has no right one.  The loop keeps the last four roles
in a 12-bit window and reads both answers from :data:`_WINDOW`, built below
from the rules.  The FNV-1a state is reset by a select where a token starts
and fed every byte of every code point; the state before each code point is
stored at the token count, which advances only where a token ended.

The loop has two parts.  While the current and the next code point are
ASCII (most of European text), an inner loop takes them two a step, then one;
a byte's role is ``roles[b]``, and the loop's only branches are its own and
the test for a byte >= 0x80.  Otherwise one general step
decodes the next code point (three-byte sequences, CJK and most non-Latin
punctuation, inline; the others with ``tokenize_unicode``'s helpers) and feeds
all bytes of the current one to the hash: its branches follow the script,
not the tokens.  The hash code is written inline: a helper taking ``buf``
would cost a reference count at every call.

A segment is handed back (-1, having written garbage at
``out[pos:pos + end - start]`` at most) when a ``PUNCT`` stands between a
``PUNCT`` and a ``NUMBER`` (28 of WMT22's 149,234 en/de segments for
``intl``, none for ``zh``) or when a code point's bytes run past the
segment's end; the caller then runs ``_split_unicode``.
"""

import numpy as np
from numba import njit

from .hashing import FNV_OFFSET, finish, fnv_step
from .tokenize_unicode import _code_point3, _role_at, utf8_length
from .unicode_classes import ROLE_DASH, ROLE_ISOLATE, ROLE_NUMBER, ROLE_PUNCT, ROLE_SPACE

_EDGE = 7  # outside the segment (roles are 0-5)

_ENDS = 1  # a token ends before this code point
_STARTS = 2  # a token starts at this code point
_SLOW = 4  # a PUNCT between a PUNCT and a NUMBER: the segment goes to _split_unicode


def _isolated(left, here, right):
    """Whether ``here`` is a token of its own, given its neighbours' roles; None if
    that depends on more than them."""
    if here == ROLE_ISOLATE:
        return True
    if here == ROLE_DASH:
        return left == ROLE_NUMBER
    if here != ROLE_PUNCT:
        return False
    if left == ROLE_PUNCT:
        # Isolated by its right neighbour, or (at the end) deciding nothing.
        return None if right == ROLE_NUMBER else True
    return left not in (_EDGE, ROLE_NUMBER) or right not in (_EDGE, ROLE_NUMBER)


def _window_table():
    """What happens at code point j for each window of roles ``r[j-2]`` (bits 0-2)
    to ``r[j+1]`` (bits 9-11)."""
    table = np.zeros(1 << 12, dtype=np.uint8)
    for window in range(1 << 12):
        before2, before, here, after = ((window >> shift) & 7 for shift in (0, 3, 6, 9))
        left_isolated = _isolated(before2, before, here)
        here_isolated = _isolated(before, here, after)
        blank_before = before in (ROLE_SPACE, _EDGE)
        blank_here = here in (ROLE_SPACE, _EDGE)
        # None (unknown) counts as a cut; such a window is flagged slow below or one step
        # earlier, when the unknown mark was ``here``.
        cut = (blank_before or blank_here or left_isolated is not False
               or here_isolated is not False)
        code = 0
        if cut and not blank_before:
            code |= _ENDS
        if cut and not blank_here:
            code |= _STARTS
        if here_isolated is None:
            code |= _SLOW
        table[window] = code
    return table


_WINDOW = _window_table()
# uint64 constants: numba would take ``uint64 op int`` to float64.
_U_BITS = np.uint64(3)
_U_NEXT = np.uint64(9)  # where the window takes the next code point's role
_U_HERE = np.uint64(6)  # where the window holds the current code point's role
_U_EDGE = np.uint64(_EDGE)
_U_ENDS = np.uint64(_ENDS)
_U_STARTS = np.uint64(_STARTS)
_U_SLOW = np.uint64(_SLOW)
_U_ONE = np.uint64(1)
_U_TWO = np.uint64(2)
_U_THREE = np.uint64(3)
_U_ASCII = np.uint8(0x80)
_U_LEAD3 = np.uint8(0xE0)
_U_LEAD4 = np.uint8(0xF0)
_U_HIGH4 = np.uint8(0xF0)


@njit(cache=True, nogil=True)
def _scan_unicode_flat(buf, start, end, out, pos, roles):
    """``intl`` or ``zh`` tokens of ``buf[start:end]`` as hashes at ``out[pos:]``; their
    number, or -1 (having written garbage) if the segment needs ``_split_unicode``.

    ``roles`` is ``intl_roles()`` or ``zh_roles()``.  Writes at most
    ``end - start`` slots from ``pos``, as ``_split_unicode`` does.
    """
    if start >= end:
        return 0
    stop = np.uint64(end)
    k = np.uint64(pos)  # where the next token's hash goes
    h = FNV_OFFSET
    seen = np.uint64(0)  # union of the codes met
    # The current code point is buf[j:nxt]; the window holds the edge twice, then its
    # role as the next one's, moved down by the first step.
    j = np.uint64(start)
    b = buf[j]
    if b < _U_ASCII:
        nxt = j + _U_ONE
        role = roles[b]
    else:
        nxt = j + np.uint64(utf8_length(b))
        if nxt > stop:
            return -1
        role = _role_at(buf, np.int64(j), np.int64(nxt - j), roles)
    window = (_U_EDGE << _U_BITS) | (_U_EDGE << _U_HERE) | (np.uint64(role) << _U_NEXT)
    while True:
        if nxt - j == _U_ONE:
            # The current code point is ASCII: take the next ones while they are too,
            # two at a time, then one.
            while nxt + _U_ONE < stop:
                b_next = buf[nxt]
                b_after = buf[nxt + _U_ONE]
                if (b_next | b_after) >= _U_ASCII:
                    break
                window = (window >> _U_BITS) | (np.uint64(roles[b_next]) << _U_NEXT)
                code = np.uint64(_WINDOW[window])
                out[k] = h
                k += code & _U_ENDS
                h = fnv_step(FNV_OFFSET if code & _U_STARTS else h, buf[nxt - _U_ONE])
                seen |= code
                window = (window >> _U_BITS) | (np.uint64(roles[b_after]) << _U_NEXT)
                code = np.uint64(_WINDOW[window])
                out[k] = h
                k += code & _U_ENDS
                h = fnv_step(FNV_OFFSET if code & _U_STARTS else h, b_next)
                seen |= code
                nxt += _U_TWO
            while nxt < stop:
                b_next = buf[nxt]
                if b_next >= _U_ASCII:
                    break
                window = (window >> _U_BITS) | (np.uint64(roles[b_next]) << _U_NEXT)
                code = np.uint64(_WINDOW[window])
                out[k] = h  # the token that ended before this code point, if any
                k += code & _U_ENDS
                h = fnv_step(FNV_OFFSET if code & _U_STARTS else h, buf[nxt - _U_ONE])
                seen |= code
                nxt += _U_ONE
            j = nxt - _U_ONE
        elif nxt - j == _U_THREE:
            # The current code point has three bytes (CJK): the same while the next do.
            while nxt + _U_THREE <= stop:
                b_next = buf[nxt]
                if (b_next & _U_HIGH4) != _U_LEAD3:
                    break
                role = roles[_code_point3(b_next, buf[nxt + _U_ONE], buf[nxt + _U_TWO])]
                window = (window >> _U_BITS) | (np.uint64(role) << _U_NEXT)
                code = np.uint64(_WINDOW[window])
                out[k] = h
                k += code & _U_ENDS
                h = fnv_step(FNV_OFFSET if code & _U_STARTS else h, buf[nxt - _U_THREE])
                h = fnv_step(h, buf[nxt - _U_TWO])
                h = fnv_step(h, buf[nxt - _U_ONE])
                seen |= code
                nxt += _U_THREE
            j = nxt - _U_THREE
        if nxt >= stop:
            break
        # The same step where the current or the next code point has several bytes.
        b_next = buf[nxt]
        if b_next < _U_ASCII:
            length = _U_ONE
            role = roles[b_next]
        elif b_next >= _U_LEAD3 and b_next < _U_LEAD4 and nxt + _U_THREE <= stop:
            # three bytes (CJK, most punctuation beyond Latin-1), without _role_at's call
            length = _U_THREE
            role = roles[_code_point3(b_next, buf[nxt + _U_ONE], buf[nxt + _U_TWO])]
        else:
            length = np.uint64(utf8_length(b_next))
            if nxt + length > stop:
                return -1
            role = _role_at(buf, np.int64(nxt), np.int64(length), roles)
        window = (window >> _U_BITS) | (np.uint64(role) << _U_NEXT)
        code = np.uint64(_WINDOW[window])
        out[k] = h
        k += code & _U_ENDS
        h = fnv_step(FNV_OFFSET if code & _U_STARTS else h, buf[j])
        # The rest of the code point (at most 3 bytes; inline: a helper taking ``buf``
        # would cost a reference count a call).
        if nxt - j > _U_ONE:
            h = fnv_step(h, buf[j + _U_ONE])
            if nxt - j > _U_TWO:
                h = fnv_step(h, buf[j + _U_TWO])
                if nxt - j > _U_THREE:
                    h = fnv_step(h, buf[j + _U_THREE])
        seen |= code
        j = nxt
        nxt += length
    # The last code point, followed by the edge, which ends its token.
    window = (window >> _U_BITS) | (_U_EDGE << _U_NEXT)
    code = np.uint64(_WINDOW[window])
    out[k] = h
    k += code & _U_ENDS
    h = fnv_step(FNV_OFFSET if code & _U_STARTS else h, buf[j])
    for i in range(j + _U_ONE, nxt):
        h = fnv_step(h, buf[i])
    seen |= code
    out[k] = h
    k += np.uint64(((window >> _U_HERE) & np.uint64(7)) != np.uint64(ROLE_SPACE))
    if seen & _U_SLOW:
        return -1
    for t in range(np.uint64(pos), k):
        out[t] = finish(out[t])
    return np.int64(k) - pos
