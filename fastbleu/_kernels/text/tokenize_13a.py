"""13a on UTF-8 bytes: byte classes, the scanner, and 13a's replacements.

``13a``
    ``Tokenizer13a``: on the right-stripped line, remove ``<skipped>``, remove
    ``-\\n``, unescape ``&quot; &amp; &lt; &gt;`` (each a separate
    ``str.replace`` pass, in that order), pad with a space on both sides and
    apply the four ``re.sub`` rules of ``TokenizerRegexp``, then split.

The four 13a rules only ever insert spaces, so the tokens are the original
characters with boundaries added.  Working through ``re.sub``'s
left-to-right, non-overlapping matching gives these boundaries:

* rule 1 isolates every character of ``{|}~[\\]^_`` ``!"#$%&()*+:;<=>?@/``;
* rule 2 (``([^0-9])([.,])``) isolates a ``.``/``,`` whose left neighbour is
  not an ASCII digit, unless that neighbour is itself a ``.``/``,`` isolated
  by rule 2 (its match consumed the character);
* rule 3 (``([.,])([^0-9])``) isolates every other ``.``/``,`` whose right
  neighbour is not an ASCII digit (the padding space counts);
* rule 4 (``([0-9])(-)``) isolates a ``-`` whose left neighbour is an ASCII
  digit.

Neighbours are those of the preprocessed line: the spaces that rule 1 adds
around a punctuation mark are non-digits, as the mark itself is, so rules
2-4 see the same digit/non-digit pattern.  The property-based tests check
this derivation against sacrebleu on adversarial text.

The byte classes also serve ``none`` (only whitespace is special) and
``char`` (:mod:`fastbleu._kernels.tokenize`).
"""

import numpy as np
from numba import njit

from .hashing import FNV_OFFSET, finish, fnv_step
from .tokenize_unicode import is_space_at, utf8_length

# Byte classes.  Runs of _GLUE/_DIGIT bytes are the inside of tokens and are
# consumed by a tight inner loop; everything else is decided one byte (or one
# code point) at a time.
_GLUE = 0  # stays inside a token (letters, most punctuation, UTF-8 bytes)
_DIGIT = 1  # stays inside a token; decides 13a's rules 2-4
SPACE = 2  # ASCII whitespace: ends a token
MAYBE_SPACE = 3  # lead byte of a UTF-8 sequence that may be whitespace (C2, E1, E2, E3)
_PUNCT = 4  # 13a rule 1: a token of its own
_DOT_COMMA = 5  # 13a rules 2 and 3
_DASH = 6  # 13a rule 4
_TRIGGER = 7  # '<', '&', newline: 13a's replacements may apply; preprocess and rescan


def _byte_classes(tokenizer_13a, triggers=False):
    table = np.zeros(256, dtype=np.uint8)
    for c in [*range(0x09, 0x0E), *range(0x1C, 0x21)]:
        table[c] = SPACE
    for c in (0xC2, 0xE1, 0xE2, 0xE3):
        table[c] = MAYBE_SPACE
    if tokenizer_13a:
        for c in range(ord("0"), ord("9") + 1):
            table[c] = _DIGIT
        for c in [*range(0x7B, 0x7F), *range(0x5B, 0x61), *range(0x21, 0x27),
                  *range(0x28, 0x2C), *range(0x3A, 0x41), 0x2F]:
            table[c] = _PUNCT
        table[ord(".")] = _DOT_COMMA
        table[ord(",")] = _DOT_COMMA
        table[ord("-")] = _DASH
    if triggers:
        for c in b"<&\n":
            table[c] = _TRIGGER
    return table


CLASS_13A_RAW = _byte_classes(True, triggers=True)  # a segment as it comes
CLASS_13A = _byte_classes(True)  # a segment after 13a's replacements
CLASS_SPLIT = _byte_classes(False)  # the none tokenizer: only whitespace matters

# 13a's language-independent replacements, applied in this order.
_SKIPPED = np.frombuffer(b"<skipped>", dtype=np.uint8)
_DASH_NEWLINE = np.frombuffer(b"-\n", dtype=np.uint8)
_ENTITY_QUOT = np.frombuffer(b"&quot;", dtype=np.uint8)
_ENTITY_AMP = np.frombuffer(b"&amp;", dtype=np.uint8)
_ENTITY_LT = np.frombuffer(b"&lt;", dtype=np.uint8)
_ENTITY_GT = np.frombuffer(b"&gt;", dtype=np.uint8)
_EMPTY = np.frombuffer(b"", dtype=np.uint8)
_QUOT = np.frombuffer(b'"', dtype=np.uint8)
_AMP = np.frombuffer(b"&", dtype=np.uint8)
_LT = np.frombuffer(b"<", dtype=np.uint8)
_GT = np.frombuffer(b">", dtype=np.uint8)



@njit(cache=True, nogil=True)
def split_tokens(buf, start, end, out, pos, classes):
    """Tokens of ``buf[start:end]`` as hashes at ``out[pos:]``; their number.

    ``classes`` decides the tokenizer: ``CLASS_SPLIT`` is ``str.split()``
    (only whitespace is special), ``CLASS_13A`` is 13a on a preprocessed
    segment, and ``CLASS_13A_RAW`` is 13a on a segment as it comes, which
    returns -1 (having written garbage) as soon as it meets a byte that 13a's
    replacements look at (``<``, ``&``, newline): the caller then
    preprocesses the segment and scans it again with ``CLASS_13A``.
    """
    count = 0
    in_token = False
    h = FNV_OFFSET  # FNV state of the token being built
    prev_digit = False  # left neighbour is an ASCII digit (the padding is not)
    prev_rule2 = False  # left neighbour is a '.'/',' that rule 2 matched
    j = start
    while j < end:
        b = buf[np.uint64(j)]
        cls = classes[b]
        if cls <= _DIGIT:
            if not in_token:
                h = FNV_OFFSET
                in_token = True
            h = fnv_step(h, b)
            prev_digit = cls == _DIGIT
            j += 1
            while j < end:  # the rest of the run of word bytes
                b = buf[np.uint64(j)]
                cls = classes[b]
                if cls > _DIGIT:
                    break
                h = fnv_step(h, b)
                prev_digit = cls == _DIGIT
                j += 1
            prev_rule2 = False
            continue
        if cls == _TRIGGER:
            return -1
        if cls == MAYBE_SPACE:
            length = utf8_length(b)
            if is_space_at(buf, j, length):
                cls = SPACE
            else:
                if not in_token:
                    h = FNV_OFFSET
                    in_token = True
                for k in range(j, j + length):
                    h = fnv_step(h, buf[np.uint64(k)])
                prev_digit = False
                prev_rule2 = False
                j += length
                continue
        else:
            length = 1
        if cls == SPACE:
            if in_token:
                out[np.uint64(pos + count)] = finish(h)
                count += 1
                in_token = False
            prev_digit = False
            prev_rule2 = False
            j += length
            continue
        isolated = True
        if cls == _DOT_COMMA:
            rule2 = not prev_digit and not prev_rule2
            if not rule2:
                nxt = buf[np.uint64(j + 1)] if j + 1 < end else 0x20
                isolated = not (0x30 <= nxt <= 0x39)
            prev_rule2 = rule2
        else:
            if cls == _DASH:
                isolated = prev_digit
            prev_rule2 = False
        prev_digit = False
        if isolated:
            if in_token:
                out[np.uint64(pos + count)] = finish(h)
                count += 1
                in_token = False
            out[np.uint64(pos + count)] = finish(fnv_step(FNV_OFFSET, b))
            count += 1
        else:
            if not in_token:
                h = FNV_OFFSET
                in_token = True
            h = fnv_step(h, b)
        j += 1
    if in_token:
        out[np.uint64(pos + count)] = finish(h)
        count += 1
    return count


@njit(cache=True, nogil=True)
def _replace(buf, length, pattern, replacement):
    """``str.replace`` in place on ``buf[:length]``; the replacement is not longer."""
    m = pattern.size
    read = 0
    write = 0
    while read < length:
        if buf[read] == pattern[0] and read + m <= length:
            hit = True
            for k in range(1, m):
                if buf[read + k] != pattern[k]:
                    hit = False
                    break
            if hit:
                for k in range(replacement.size):
                    buf[write + k] = replacement[k]
                write += replacement.size
                read += m
                continue
        buf[write] = buf[read]
        write += 1
        read += 1
    return write


@njit(cache=True, nogil=True)
def preprocess_13a(buf, length):
    """13a's language-independent part; ``\\n`` -> space is left to the scanner,
    which treats both as whitespace."""
    length = _replace(buf, length, _SKIPPED, _EMPTY)
    length = _replace(buf, length, _DASH_NEWLINE, _EMPTY)
    length = _replace(buf, length, _ENTITY_QUOT, _QUOT)
    length = _replace(buf, length, _ENTITY_AMP, _AMP)
    length = _replace(buf, length, _ENTITY_LT, _LT)
    length = _replace(buf, length, _ENTITY_GT, _GT)
    return length
