"""UTF-8 text on the device -> chrF's units: character and chrF++ word hashes, per segment.

The device copy of :func:`fastbleu._kernels.pairwise.chrf_units` (and of
the byte reader it calls, ``fastbleu._kernels.chrf.statistics``): a thread
reads one segment's bytes once and writes, in the same layout, each
character (its UTF-8 bytes packed into one word, then splitmix64's
finaliser) and each chrF++ word (FNV-1a of its bytes, finalised; one ASCII
punctuation character split off the end, or else off the start, of a word
longer than one character, as sacrebleu's ``_remove_punctuation``).
Whitespace is Python's (``str.split()``'s), skipped unless ``whitespace``.
The hashes are the CPU's, so the matrices built on them are too; only the
text's bytes and offsets cross to the device, not the hashes (eight bytes a
unit).
"""

import numpy as np

from ..text.tokenize_13a import CLASS_SPLIT, MAYBE_SPACE, SPACE
from .loader import CACHED, cuda
from .tokens import finish, fnv_step, utf8_length

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_S8 = np.uint64(8)
#: ``str.split()``'s byte classes (``SPACE``, ``MAYBE_SPACE``: a lead byte of a UTF-8
#: sequence that may be whitespace), read from constant memory.
_CLASSES = np.ascontiguousarray(CLASS_SPLIT, dtype=np.uint8)
#: ``string.punctuation``, the characters sacrebleu's chrF++ splits off word edges.
_PUNCT = np.zeros(128, dtype=np.uint8)
for _c in "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~":
    _PUNCT[ord(_c)] = 1
del _c


@cuda.jit(device=True)
def is_space_at(buf, j, length):
    """Whether the ``length``-byte code point at ``buf[j]`` is Python whitespace."""
    b0 = buf[j]
    if length == 1:
        return (0x09 <= b0 <= 0x0D) or (0x1C <= b0 <= 0x20)
    if length == 2:  # U+0085, U+00A0
        return b0 == 0xC2 and (buf[j + 1] == 0x85 or buf[j + 1] == 0xA0)
    if length != 3:
        return False
    b1 = buf[j + 1]
    b2 = buf[j + 2]
    if b0 == 0xE2:
        if b1 == 0x80:  # U+2000-U+200A, U+2028, U+2029, U+202F
            return b2 <= 0x8A or b2 == 0xA8 or b2 == 0xA9 or b2 == 0xAF
        return b1 == 0x81 and b2 == 0x9F  # U+205F
    if b0 == 0xE1:
        return b1 == 0x9A and b2 == 0x80  # U+1680
    return b0 == 0xE3 and b1 == 0x80 and b2 == 0x80  # U+3000


@cuda.jit(device=True)
def word_end(out, at, n, h, h_last, h_tail, characters, lead, last, punct):
    """Write the hashes of the word that just ended to ``out[at + n:]``; return the new
    count (``h``: FNV state of all its bytes, ``h_last`` of all but its last character,
    ``h_tail`` of all but its first)."""
    if characters > 1 and last < 0x80 and punct[last]:  # 'word.' -> 'word', '.'
        out[at + n] = finish(h_last)
        out[at + n + 1] = finish(fnv_step(_FNV_OFFSET, last))
        return n + 2
    if characters > 1 and lead < 0x80 and punct[lead]:  # '(word' -> '(', 'word'
        out[at + n] = finish(fnv_step(_FNV_OFFSET, lead))
        out[at + n + 1] = finish(h_tail)
        return n + 2
    out[at + n] = finish(h)
    return n + 1


@cuda.jit(**CACHED)
def chrf_units(data, offsets, char_kind, word_kind, whitespace, region, out, start, count):
    """Units of every segment ``data[offsets[i]:offsets[i + 1]]``, a thread each: unit
    ``u`` of kind ``k`` (characters ``char_kind``, words ``word_kind``; -1: not wanted) is
    ``out[start[k, i] + u]`` for ``u < count[k, i]``, with ``start[k, i] = k * region +
    offsets[i] - offsets[0]`` (a segment has at most as many units as bytes)."""
    classes = cuda.const.array_like(_CLASSES)
    punct = cuda.const.array_like(_PUNCT)
    base = offsets[0]
    for i in range(cuda.grid(1), offsets.shape[0] - 1, cuda.gridsize(1)):
        end = offsets[i + 1]
        at = offsets[i] - base
        c_at = char_kind * region + at
        w_at = word_kind * region + at
        n_chars = 0
        n_words = 0
        in_word = False
        h = _FNV_OFFSET
        h_last = _FNV_OFFSET
        h_tail = _FNV_OFFSET
        characters = 0
        lead = 0
        j = offsets[i]
        while j < end:
            b = data[j]
            cls = classes[b]
            if b < 0x80:
                length = 1
                space = cls == SPACE
                packed = np.uint64(b)
            else:
                length = utf8_length(b)
                space = cls == MAYBE_SPACE and is_space_at(data, j, length)
                packed = np.uint64(0)
                for k in range(length):
                    packed = (packed << _S8) | np.uint64(data[j + k])
            if space:
                if whitespace and char_kind >= 0:
                    out[c_at + n_chars] = finish(packed)
                    n_chars += 1
                if in_word:
                    n_words = word_end(out, w_at, n_words, h, h_last, h_tail, characters,
                                       lead, data[j - 1], punct)
                    in_word = False
            else:
                if char_kind >= 0:
                    out[c_at + n_chars] = finish(packed)
                    n_chars += 1
                if word_kind >= 0:
                    if not in_word:
                        in_word = True
                        characters = 0
                        lead = b
                        h = _FNV_OFFSET
                        h_tail = _FNV_OFFSET
                    elif lead < 0x80 and punct[lead]:  # only needed after a punctuation lead
                        for k in range(length):
                            h_tail = fnv_step(h_tail, data[j + k])
                    h_last = h
                    for k in range(length):
                        h = fnv_step(h, data[j + k])
                    characters += 1
            j += length
        if in_word:
            n_words = word_end(out, w_at, n_words, h, h_last, h_tail, characters, lead,
                               data[end - 1], punct)
        if char_kind >= 0:
            start[char_kind, i] = c_at
            count[char_kind, i] = n_chars
        if word_kind >= 0:
            start[word_kind, i] = w_at
            count[word_kind, i] = n_words
