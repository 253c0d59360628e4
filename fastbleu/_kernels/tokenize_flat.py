"""``13a`` and ``none`` without a data-dependent branch per token.

:func:`fastbleu._kernels.tokenize_13a._split_tokens` decides every token
boundary with a branch, and those branches are what it spends its time on:
the predictor misses about one per token (benchmarks/README.md, issue 17).
:func:`_scan_flat` computes the same tokens and the same hashes in one loop
over the segment's bytes whose only branch is the loop's own:

* each byte's class is a set of flags (``_FLAGS_13A``, ``_FLAGS_SPLIT``,
  derived from the scanner's byte classes so that the two cannot drift);
* 13a's rules (see :mod:`fastbleu._kernels.tokenize_13a`) become boolean
  arithmetic on the flags of a byte and its neighbours: a byte is
  *isolated* if it is rule-1 punctuation, a ``-`` after a digit, or a
  ``.``/``,`` that matches rule 2 (left neighbour not a digit and not a
  rule-2 ``.``/``,``: one bit carried from byte to byte) or rule 3 (right
  neighbour not a digit); there is a *cut* between two bytes if either is
  whitespace or isolated;
* a token starts at a byte that is not whitespace with a cut before it, and
  ends before a cut; the FNV-1a state is reset by a select at a start and
  fed every byte, and the state before each byte is stored at the token
  count, which only advances after a token's last byte: the stores that do
  not count are overwritten by the next one;
* ``finish`` is applied to the segment's hashes afterwards, one per token.

The hashes are bit for bit those of ``_split_tokens`` (``hash_bytes`` of
each token's bytes).  Segments this loop does not handle return -1 and go
to ``_split_tokens`` as before: any 13a trigger (``<``, ``&``, newline),
and any lead byte that may start Unicode whitespace (C2, E1, E2, E3) unless
every one of them is checked, after the loop, to start a code point that is
not whitespace and whose continuation bytes are all non-ASCII and inside
the segment (``_split_tokens`` takes such a code point as a whole into the
token; here its bytes are ordinary token bytes, which is the same).  On
WMT22 en/de about 10 % of the segments have such lead bytes (curly quotes
and dashes) and 0.1 % fall back.
"""

import numpy as np
from numba import njit

from .hashing import FNV_OFFSET, finish, fnv_step
from .tokenize_13a import (_CLASS_13A_RAW, _CLASS_SPLIT, _DASH, _DIGIT, _DOT_COMMA,
                           _MAYBE_SPACE, _PUNCT, _SPACE, _TRIGGER)
from .tokenize_unicode import _is_space_at, _utf8_length

_F_DIGIT = 1
_F_SPACE = 2  # ASCII whitespace
_F_PUNCT = 4  # 13a rule 1: always isolated
_F_DOT_COMMA = 8  # 13a rules 2 and 3
_F_DASH = 16  # 13a rule 4
_F_MAYBE_SPACE = 32  # lead byte that may start Unicode whitespace: checked after the loop
_F_TRIGGER = 64  # 13a's replacements may apply: the slow path
_F_CHECK = _F_MAYBE_SPACE | _F_TRIGGER


def _flags(classes):
    """The flag table of a byte-class table (every other class is 0: a token byte)."""
    flag_of = {_SPACE: _F_SPACE, _DIGIT: _F_DIGIT, _PUNCT: _F_PUNCT,
               _DOT_COMMA: _F_DOT_COMMA, _DASH: _F_DASH, _MAYBE_SPACE: _F_MAYBE_SPACE,
               _TRIGGER: _F_TRIGGER}
    return np.array([flag_of.get(int(c), 0) for c in classes], dtype=np.uint8)


# uint64 constants: numba would take ``uint64 op int`` to float64.
_U1 = np.uint64(1)
_U2 = np.uint64(2)
_U3 = np.uint64(3)
_U4 = np.uint64(4)
_U_CHECK = np.uint64(_F_CHECK)
_U_TRIGGER = np.uint64(_F_TRIGGER)
_FLAGS_13A = _flags(_CLASS_13A_RAW)
_FLAGS_SPLIT = _flags(_CLASS_SPLIT)


@njit(cache=True, nogil=True)
def _plain_code_points(buf, start, end, flags):
    """Whether every maybe-whitespace lead byte of ``buf[start:end]`` starts a
    code point that is not whitespace, inside the segment, continued by
    non-ASCII bytes: ``_split_tokens`` would take it whole into a token."""
    for j in range(start, end):
        if flags[buf[j]] & _F_MAYBE_SPACE:
            length = _utf8_length(buf[j])
            if j + length > end:
                return False
            for k in range(j + 1, j + length):
                if buf[k] < 0x80:
                    return False
            if _is_space_at(buf, j, length):
                return False
    return True


@njit(cache=True, nogil=True)
def _boundaries(f, digit_next, space_p, digit_p, isolated_p, rule2_p):
    """13a's rules for one byte of flags ``f``, its neighbours' flags as 0/1:
    (isolated, rule2, a token ends before it, a token starts at it)."""
    space = (f >> _U1) & _U1
    dot_comma = (f >> _U3) & _U1
    rule2 = dot_comma & ~(digit_p | rule2_p)
    isolated = (((f >> _U2) & _U1) | ((f >> _U4) & digit_p)
                | (dot_comma & (rule2 | (digit_next ^ _U1))))
    cut = space_p | space | isolated_p | isolated
    return isolated, rule2, cut & (space_p ^ _U1), cut & (space ^ _U1)


@njit(cache=True, nogil=True)
def _scan_flat(buf, start, end, out, pos, flags):
    """Tokens of ``buf[start:end]`` as hashes at ``out[pos:]``; their number, or
    -1 (having written garbage) if the segment needs ``_split_tokens``.

    ``flags`` is ``_FLAGS_13A`` or ``_FLAGS_SPLIT`` (``none``).  Writes at
    most ``end - start`` slots from ``pos``, as ``_split_tokens`` does.
    Indices are unsigned, which spares numba's negative-index arithmetic.
    """
    if start >= end:
        return 0
    k = np.uint64(pos)  # where the next token's hash goes
    h = FNV_OFFSET
    seen = np.uint64(0)  # union of the flags met
    # The previous byte's flags as 0/1 (the padding space before the first one).
    space_p = _U1
    digit_p = np.uint64(0)
    isolated_p = np.uint64(0)
    rule2_p = np.uint64(0)
    b = buf[np.uint64(start)]
    f = np.uint64(flags[b])
    for j in range(np.uint64(start) + _U1, np.uint64(end)):
        b_next = buf[j]
        f_next = np.uint64(flags[b_next])
        isolated, rule2, ends, starts = _boundaries(f, f_next & _U1, space_p,
                                                    digit_p, isolated_p, rule2_p)
        out[k] = h  # the token that ended before this byte, if any; else overwritten
        k += ends
        reset = np.uint64(0) - starts  # all ones where a token starts
        h = fnv_step((h & ~reset) | (FNV_OFFSET & reset), b)
        seen |= f
        space_p = (f >> _U1) & _U1
        digit_p = f & _U1
        isolated_p = isolated
        rule2_p = rule2
        f = f_next
        b = b_next
    # The last byte: the padding space after it is no digit, and ends its token.
    isolated, rule2, ends, starts = _boundaries(f, np.uint64(0), space_p, digit_p, isolated_p,
                                                rule2_p)
    out[k] = h
    k += ends
    reset = np.uint64(0) - starts
    h = fnv_step((h & ~reset) | (FNV_OFFSET & reset), b)
    seen |= f
    out[k] = h
    k += ((f >> _U1) & _U1) ^ _U1
    if seen & _U_CHECK:
        if seen & _U_TRIGGER or not _plain_code_points(buf, start, end, flags):
            return -1
    for t in range(np.uint64(pos), k):
        out[t] = finish(out[t])
    return np.int64(k) - pos
