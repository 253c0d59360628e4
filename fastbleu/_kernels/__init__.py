"""Private numba kernels: nopython, ``cache=True``, no Python objects inside.

Each module is one stage of the pipeline::

    hashing    token bytes -> 64-bit token hashes; n-gram keys from token hashes
    tokenize   UTF-8 buffers -> token hashes per segment: codes, chunk kernels
               (tokenize_13a: byte classes, none and 13a; tokenize_unicode:
               UTF-8 decoding, whitespace, intl and zh)
    counting   token hashes -> clipped n-gram statistics, one row per segment
    formula    statistics row -> BLEU score (sacrebleu's order of operations)

Kernels trust their inputs; the public modules validate and convert.
"""
