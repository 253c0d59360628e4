"""UTF-8 text on the device -> chrF's units: character and chrF++ word hashes, per segment.

The device copy of :func:`fastbleu._kernels.pairwise.chrf_units`: a thread
reads one segment's bytes once with the CPU's own reader,
:func:`fastbleu._kernels.chrf.statistics.read_units` compiled for the
device (:func:`.tokens.device_function`), which writes each character (its
UTF-8 bytes packed into one word) and each chrF++ word (FNV-1a of its bytes,
finalised; one ASCII punctuation character split off the end, or else off
the start, of a word longer than one character, as sacrebleu's
``_remove_punctuation``), Python's whitespace (``str.split()``'s) skipped
unless ``whitespace``.  The characters are then finalised with
splitmix64's finaliser in place, as the CPU's ``chrf_units`` does.  The
hashes are the CPU's, so the matrices built on them are too; only the
text's bytes and offsets cross to the device, not the hashes (eight bytes a
unit).
"""

from ..chrf.statistics import read_units as host_read_units
from .loader import CACHED, cuda
from .tokens import device_function, finish

read_units = device_function(host_read_units)


@cuda.jit(**CACHED)
def chrf_units(data, offsets, char_kind, word_kind, whitespace, region, out, start, count):
    """Units of every segment ``data[offsets[i]:offsets[i + 1]]``, a thread each: unit
    ``u`` of kind ``k`` (characters ``char_kind``, words ``word_kind``; -1: not wanted) is
    ``out[start[k, i] + u]`` for ``u < count[k, i]``, with ``start[k, i] = k * region +
    offsets[i] - offsets[0]`` (a segment has at most as many units as bytes)."""
    base = offsets[0]
    chars = char_kind >= 0
    words = word_kind >= 0
    for i in range(cuda.grid(1), offsets.shape[0] - 1, cuda.gridsize(1)):
        at = offsets[i] - base
        w_at = word_kind * region + at
        # Without characters they are read into the words' region, above the words
        # (``word_units``'s way: a word is written below the characters read so far).
        c_at = char_kind * region + at if chars else w_at
        n_chars, n_words = read_units(data, offsets[i], offsets[i + 1], whitespace and chars,
                                      words, out[c_at:], out[w_at:] if words else out[c_at:])
        if chars:
            for u in range(c_at, c_at + n_chars):
                out[u] = finish(out[u])
            start[char_kind, i] = c_at
            count[char_kind, i] = n_chars
        if words:
            start[word_kind, i] = w_at
            count[word_kind, i] = n_words
