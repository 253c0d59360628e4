"""UTF-8 text on the device -> BLEU's token hashes for ``13a``, ``none`` and ``char``.

The device copy of :func:`fastbleu._kernels.text.tokenize.tokenize_chunk`
for its byte tokenizers: a thread tokenizes one segment with the CPU
tokenizer's own scalar functions compiled for the device
(:func:`.tokens.device_function`).  ``none`` and ``13a`` right-strip the
segment (:func:`~fastbleu._kernels.text.tokenize_unicode.rstrip_end`) and
split it (:func:`~fastbleu._kernels.text.tokenize_13a.split_tokens`) with
the raw byte classes; a ``13a`` segment holding a byte that 13a's
replacements look at (``<``, ``&``, newline) is copied into the thread's
own stretch of ``scratch`` (a buffer as long as the text), preprocessed in
place there (:func:`~fastbleu._kernels.text.tokenize_13a.preprocess_13a`,
never longer) and split again with the preprocessed classes.  ``char`` is
:func:`~fastbleu._kernels.text.tokenize.tokens_char` on the right-stripped
segment.  The CPU scans most segments with its branch-free loops
(``tokenize_flat``) first; they give these same hashes, and the device
takes the branchy path for every segment.

A token is at least one byte, so segment ``i``'s hashes go to
``out[offsets[i] - offsets[0]:]`` and never reach the next segment's; the
layout is :func:`.units.chrf_units`', so the pairwise kernels read either.
"""

from ..._native.codes import TOKENIZE_CHAR, TOKENIZE_NONE
from ..text.tokenize import tokens_char as host_tokens_char
from ..text.tokenize_13a import CLASS_13A, CLASS_13A_RAW, CLASS_SPLIT
from ..text.tokenize_13a import preprocess_13a as host_preprocess_13a
from ..text.tokenize_13a import split_tokens as host_split_tokens
from ..text.tokenize_unicode import rstrip_end as host_rstrip_end
from .loader import CACHED, cuda
from .tokens import device_function

split_tokens = device_function(host_split_tokens)
preprocess_13a = device_function(host_preprocess_13a)
tokens_char = device_function(host_tokens_char)
rstrip_end = device_function(host_rstrip_end)


@cuda.jit(**CACHED)
def bleu_tokens(data, offsets, kind, scratch, out, start, count):
    """Token hashes of every segment ``data[offsets[i]:offsets[i + 1]]``, a thread each,
    for the tokenizer ``kind`` (``TOKENIZE_13A``, ``TOKENIZE_NONE`` or ``TOKENIZE_CHAR``):
    token ``u`` is ``out[start[0, i] + u]`` for ``u < count[0, i]``, with ``start[0, i] =
    offsets[i] - offsets[0]``.  ``scratch`` is as long as ``data``; only the bytes of the
    13a segments that need preprocessing are written to it."""
    base = offsets[0]
    for i in range(cuda.grid(1), offsets.shape[0] - 1, cuda.gridsize(1)):
        first = offsets[i]
        end = rstrip_end(data, first, offsets[i + 1])
        pos = first - base
        if kind == TOKENIZE_CHAR:
            n = tokens_char(data, first, end, out, pos)
        elif kind == TOKENIZE_NONE:
            n = split_tokens(data, first, end, out, pos, CLASS_SPLIT)
        else:
            n = split_tokens(data, first, end, out, pos, CLASS_13A_RAW)
            if n < 0:  # a replacement may apply: preprocess a copy, then split it
                for j in range(first, end):
                    scratch[j] = data[j]
                length = preprocess_13a(scratch[first:end], end - first)
                n = split_tokens(scratch, first, first + length, out, pos, CLASS_13A)
        start[0, i] = pos
        count[0, i] = n
