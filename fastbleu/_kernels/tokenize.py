"""UTF-8 buffers -> token hashes, one segment at a time, without Python strings.

The kernels walk an Arrow-style string column (a ``uint8`` data buffer and
``int64`` offsets) and write one 64-bit hash per token.  They reproduce
sacrebleu 2.6's tokenizers exactly:

``none``
    ``line.split()``: runs of characters that are not Python whitespace.
``char``
    ``" ".join(line).split()``: every non-whitespace code point is a token.
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

Whitespace is Python's ``str.isspace()`` set, which ``str.split()`` and
``str.rstrip()`` use: U+0009-U+000D, U+001C-U+0020, U+0085, U+00A0, U+1680,
U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000 (a test derives it
from Python).

``intl`` and ``zh``
    decided per code point from a role table (see
    :mod:`fastbleu._kernels.unicode_classes`) by :func:`_split_unicode`.

    ``intl`` (``TokenizerV14International``) applies, with the ``regex``
    module, ``(\\P{N})(\\p{P})`` -> ``\\1 \\2 ``, then ``(\\p{P})(\\P{N})``
    -> `` \\1 \\2``, then spaces around every ``\\p{S}``, then splits.  Only
    spaces are inserted, and working through the non-overlapping matches
    gives: a symbol is a token of its own; a punctuation mark is one if
    (pass 1) it has a left neighbour that is not a number and is not itself
    a mark matched by pass 1, or (pass 2) it has a right neighbour that is
    not a number.  (A mark that pass 2 could skip because the previous
    match consumed it always matched pass 1 already.)  There is no padding,
    so the first character has no left neighbour and the last no right one.

    ``zh`` (``TokenizerZh``) strips the line, spaces out every character of
    its range table and applies 13a's four rules without 13a's replacements
    and without padding: the same boundary rules as ``13a`` with the
    spaced-out characters acting like rule-1 punctuation, except at the
    ends of the line (a ``.``/``,`` first on the line cannot match rule 2,
    one last on the line cannot match rule 3).

Every tokenizer emits at most one token per input byte, so segment ``i``
writes its hashes at ``out[offsets[i] - offsets[0]:]`` without a counting
pass.
"""

import numpy as np
from numba import njit

from .hashing import FNV_OFFSET, finish, fnv_step
from .threads import for_chunks
from .unicode_classes import (ROLE_DASH, ROLE_NUMBER, ROLE_PUNCT, ROLE_SPACE, intl_roles,
                              zh_roles)

TOKENIZE_NONE = 0
TOKENIZE_13A = 1
TOKENIZE_CHAR = 2
TOKENIZE_INTL = 3
TOKENIZE_ZH = 4

# Byte classes.  Runs of _GLUE/_DIGIT bytes are the inside of tokens and are
# consumed by a tight inner loop; everything else is decided one byte (or one
# code point) at a time.
_GLUE = 0  # stays inside a token (letters, most punctuation, UTF-8 bytes)
_DIGIT = 1  # stays inside a token; decides 13a's rules 2-4
_SPACE = 2  # ASCII whitespace: ends a token
_MAYBE_SPACE = 3  # lead byte of a UTF-8 sequence that may be whitespace (C2, E1, E2, E3)
_PUNCT = 4  # 13a rule 1: a token of its own
_DOT_COMMA = 5  # 13a rules 2 and 3
_DASH = 6  # 13a rule 4
_TRIGGER = 7  # '<', '&', newline: 13a's replacements may apply; preprocess and rescan


def _byte_classes(tokenizer_13a, triggers=False):
    table = np.zeros(256, dtype=np.uint8)
    for c in [*range(0x09, 0x0E), *range(0x1C, 0x21)]:
        table[c] = _SPACE
    for c in (0xC2, 0xE1, 0xE2, 0xE3):
        table[c] = _MAYBE_SPACE
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


_CLASS_13A_RAW = _byte_classes(True, triggers=True)  # a segment as it comes
_CLASS_13A = _byte_classes(True)  # a segment after 13a's replacements
_CLASS_SPLIT = _byte_classes(False)  # the none tokenizer: only whitespace matters

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
def _utf8_length(lead):
    if lead < 0x80:
        return 1
    if lead < 0xE0:
        return 2
    if lead < 0xF0:
        return 3
    return 4


@njit(cache=True, nogil=True)
def _is_space_at(buf, j, length):
    """Whether the ``length``-byte code point at ``buf[j]`` is Python whitespace."""
    b0 = buf[j]
    if length == 1:
        return (0x09 <= b0 <= 0x0D) or (0x1C <= b0 <= 0x20)
    if length == 2:
        # U+0085, U+00A0
        return b0 == 0xC2 and (buf[j + 1] == 0x85 or buf[j + 1] == 0xA0)
    if length != 3:
        return False
    b1 = buf[j + 1]
    b2 = buf[j + 2]
    if b0 == 0xE2:
        if b1 == 0x80:
            # U+2000-U+200A, U+2028, U+2029, U+202F
            return b2 <= 0x8A or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF
        return b1 == 0x81 and b2 == 0x9F  # U+205F
    if b0 == 0xE1:
        return b1 == 0x9A and b2 == 0x80  # U+1680
    return b0 == 0xE3 and b1 == 0x80 and b2 == 0x80  # U+3000


@njit(cache=True, nogil=True)
def _rstrip_end(buf, start, end):
    """End of ``buf[start:end]`` after ``str.rstrip()``."""
    while end > start:
        j = end - 1
        while j > start and (buf[j] & 0xC0) == 0x80:
            j -= 1
        if not _is_space_at(buf, j, end - j):
            break
        end = j
    return end


@njit(cache=True, nogil=True)
def _split_tokens(buf, start, end, out, pos, classes):
    """Tokens of ``buf[start:end]`` as hashes at ``out[pos:]``; their number.

    ``classes`` decides the tokenizer: ``_CLASS_SPLIT`` is ``str.split()``
    (only whitespace is special), ``_CLASS_13A`` is 13a on a preprocessed
    segment, and ``_CLASS_13A_RAW`` is 13a on a segment as it comes, which
    returns -1 (having written garbage) as soon as it meets a byte that 13a's
    replacements look at (``<``, ``&``, newline): the caller then
    preprocesses the segment and scans it again with ``_CLASS_13A``.
    """
    count = 0
    in_token = False
    h = FNV_OFFSET  # FNV state of the token being built
    prev_digit = False  # left neighbour is an ASCII digit (the padding is not)
    prev_rule2 = False  # left neighbour is a '.'/',' that rule 2 matched
    j = start
    while j < end:
        b = buf[j]
        cls = classes[b]
        if cls <= _DIGIT:
            if not in_token:
                h = FNV_OFFSET
                in_token = True
            h = fnv_step(h, b)
            prev_digit = cls == _DIGIT
            j += 1
            while j < end:  # the rest of the run of word bytes
                b = buf[j]
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
        if cls == _MAYBE_SPACE:
            length = _utf8_length(b)
            if _is_space_at(buf, j, length):
                cls = _SPACE
            else:
                if not in_token:
                    h = FNV_OFFSET
                    in_token = True
                for k in range(j, j + length):
                    h = fnv_step(h, buf[k])
                prev_digit = False
                prev_rule2 = False
                j += length
                continue
        else:
            length = 1
        if cls == _SPACE:
            if in_token:
                out[pos + count] = finish(h)
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
                nxt = buf[j + 1] if j + 1 < end else 0x20
                isolated = not (0x30 <= nxt <= 0x39)
            prev_rule2 = rule2
        else:
            if cls == _DASH:
                isolated = prev_digit
            prev_rule2 = False
        prev_digit = False
        if isolated:
            if in_token:
                out[pos + count] = finish(h)
                count += 1
                in_token = False
            out[pos + count] = finish(fnv_step(FNV_OFFSET, b))
            count += 1
        else:
            if not in_token:
                h = FNV_OFFSET
                in_token = True
            h = fnv_step(h, b)
        j += 1
    if in_token:
        out[pos + count] = finish(h)
        count += 1
    return count


@njit(cache=True, nogil=True)
def _lstrip_start(buf, start, end):
    """Start of ``buf[start:end]`` after ``str.lstrip()``."""
    while start < end:
        length = _utf8_length(buf[start])
        if not _is_space_at(buf, start, length):
            break
        start += length
    return start


@njit(cache=True, nogil=True)
def _code_point(buf, j, length):
    """The code point of the ``length``-byte UTF-8 sequence at ``buf[j]``."""
    b0 = np.int64(buf[j])
    if length == 1:
        return b0
    b1 = np.int64(buf[j + 1]) & 0x3F
    if length == 2:
        return ((b0 & 0x1F) << 6) | b1
    b2 = np.int64(buf[j + 2]) & 0x3F
    if length == 3:
        return ((b0 & 0x0F) << 12) | (b1 << 6) | b2
    return ((b0 & 0x07) << 18) | (b1 << 12) | (b2 << 6) | (np.int64(buf[j + 3]) & 0x3F)


@njit(cache=True, nogil=True)
def _role_at(buf, j, length, roles):
    cp = _code_point(buf, j, length)
    return roles[cp] if cp < roles.size else np.uint8(0)


@njit(cache=True, nogil=True)
def _split_unicode(buf, start, end, out, pos, roles):
    """``intl`` or ``zh`` tokens of ``buf[start:end]`` at ``out[pos:]``; their number.

    ``roles`` (one ``uint8`` per code point) decides which of the two it is.
    """
    count = 0
    in_token = False
    h = FNV_OFFSET
    prev_number = False  # left neighbour is a number
    prev_matched = True  # left neighbour is a mark matched from the left (or there is none)
    j = start
    while j < end:
        b = buf[j]
        length = 1 if b < 0x80 else _utf8_length(b)
        role = roles[b] if b < 0x80 else _role_at(buf, j, length, roles)
        if role <= ROLE_NUMBER:  # inside a token
            if not in_token:
                h = FNV_OFFSET
                in_token = True
            for k in range(j, j + length):
                h = fnv_step(h, buf[k])
            prev_number = role == ROLE_NUMBER
            prev_matched = False
            j += length
            continue
        if role == ROLE_SPACE:
            if in_token:
                out[pos + count] = finish(h)
                count += 1
                in_token = False
            prev_number = False
            prev_matched = False
            j += length
            continue
        if role == ROLE_PUNCT:
            matched = not prev_number and not prev_matched
            isolated = matched
            if not matched:
                nxt = j + length
                if nxt < end:
                    nb = buf[nxt]
                    nlength = 1 if nb < 0x80 else _utf8_length(nb)
                    isolated = _role_at(buf, nxt, nlength, roles) != ROLE_NUMBER
            prev_matched = matched
        elif role == ROLE_DASH:
            isolated = prev_number
            prev_matched = False
        else:  # ROLE_ISOLATE
            isolated = True
            prev_matched = False
        prev_number = False
        if isolated:
            if in_token:
                out[pos + count] = finish(h)
                count += 1
                in_token = False
            t = FNV_OFFSET
            for k in range(j, j + length):
                t = fnv_step(t, buf[k])
            out[pos + count] = finish(t)
            count += 1
        else:
            if not in_token:
                h = FNV_OFFSET
                in_token = True
            for k in range(j, j + length):
                h = fnv_step(h, buf[k])
        j += length
    if in_token:
        out[pos + count] = finish(h)
        count += 1
    return count


@njit(cache=True, nogil=True)
def _tokens_char(buf, start, end, out, pos):
    count = 0
    j = start
    while j < end:
        b = buf[j]
        cls = _CLASS_SPLIT[b]
        length = 1 if b < 0x80 else _utf8_length(b)
        if cls != _SPACE and not (cls == _MAYBE_SPACE and _is_space_at(buf, j, length)):
            h = FNV_OFFSET
            for k in range(j, j + length):
                h = fnv_step(h, buf[k])
            out[pos + count] = finish(h)
            count += 1
        j += length
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
def _preprocess_13a(buf, length):
    """13a's language-independent part; ``\\n`` -> space is left to the scanner,
    which treats both as whitespace."""
    length = _replace(buf, length, _SKIPPED, _EMPTY)
    length = _replace(buf, length, _DASH_NEWLINE, _EMPTY)
    length = _replace(buf, length, _ENTITY_QUOT, _QUOT)
    length = _replace(buf, length, _ENTITY_AMP, _AMP)
    length = _replace(buf, length, _ENTITY_LT, _LT)
    length = _replace(buf, length, _ENTITY_GT, _GT)
    return length


@njit(cache=True, nogil=True)
def _tokenize_chunk(data, offsets, kind, out_hashes, out_count, first, last):
    """Tokenize segments ``first:last``; owns its 13a scratch buffer."""
    base = offsets[0]
    scratch = np.empty(256, dtype=np.uint8)
    for i in range(first, last):
        start = offsets[i]
        end = _rstrip_end(data, start, offsets[i + 1])
        pos = start - base
        if kind == TOKENIZE_CHAR:
            out_count[i] = _tokens_char(data, start, end, out_hashes, pos)
            continue
        classes = _CLASS_SPLIT if kind == TOKENIZE_NONE else _CLASS_13A_RAW
        count = _split_tokens(data, start, end, out_hashes, pos, classes)
        if count < 0:
            length = end - start
            if scratch.size < length:
                scratch = np.empty(2 * length, dtype=np.uint8)
            scratch[:length] = data[start:end]
            length = _preprocess_13a(scratch, length)
            count = _split_tokens(scratch, 0, length, out_hashes, pos, _CLASS_13A)
        out_count[i] = count


@njit(cache=True, nogil=True)
def _tokenize_chunk_unicode(data, offsets, strip_left, roles, out_hashes, out_count, first,
                            last):
    """``intl`` (``strip_left`` false) or ``zh`` (true) for segments ``first:last``.

    A kernel of its own, so that the other tokenizers' first run does not
    compile it.
    """
    base = offsets[0]
    for i in range(first, last):
        start = offsets[i]
        end = _rstrip_end(data, start, offsets[i + 1])
        pos = start - base
        if strip_left:
            start = _lstrip_start(data, start, end)
        out_count[i] = _split_unicode(data, start, end, out_hashes, pos, roles)


def tokenize_column(data, offsets, kind, out_hashes, out_count):
    """Tokenize every segment of a string column into token hashes.

    Segment ``i`` is ``data[offsets[i]:offsets[i + 1]]``; its hashes go to
    ``out_hashes[offsets[i] - offsets[0]:]`` and their number to
    ``out_count[i]``.  ``out_hashes`` needs ``offsets[-1] - offsets[0]`` slots.
    Chunks of segments run on several threads.
    """
    n = offsets.size - 1
    if kind == TOKENIZE_INTL:
        for_chunks(_tokenize_chunk_unicode, n, data, offsets, False, intl_roles(), out_hashes,
                   out_count)
    elif kind == TOKENIZE_ZH:
        for_chunks(_tokenize_chunk_unicode, n, data, offsets, True, zh_roles(), out_hashes,
                   out_count)
    else:
        for_chunks(_tokenize_chunk, n, data, offsets, kind, out_hashes, out_count)
