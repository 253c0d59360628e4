"""Plain-Python reference statistics (Counters), the oracle the counting kernel is held against."""

from __future__ import annotations
import math
import subprocess
import sys
import textwrap
from collections import Counter
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from fastbleu._kernels.bleu.counting import (AVERAGE_SCALE, LARGE_ABOVE, REF_AVERAGE, REF_CLOSEST,
                                             REF_SHORTEST, segment_statistics)
from fastbleu._kernels.bleu.formula import SMOOTH_EXP, SMOOTH_NONE, bleu_from_row
from fastbleu._kernels.text.hashing import hash_bytes
from fastbleu._kernels.text.tokenize_13a import _replace
from fastbleu.statistics.tokens import tokenize
from fastbleu.inputs.text import as_text_column
from fastbleu.tokenizers import get_tokenizer
from sacrebleu.metrics import BLEU as SacreBLEU

from .text import token_hash


def reference_statistics(hyp, refs, max_order, ref_length=REF_CLOSEST):
    """sacrebleu's statistics for token sequences, with Counters (clipped counts,
    Papineni et al. 2002); the reference length by ``ref_length``'s rule."""
    def ngrams(tokens):
        return Counter(tuple(tokens[i:i + n]) for n in range(1, max_order + 1)
                       for i in range(len(tokens) - n + 1))
    present = [r for r in refs if r is not None]
    ref_max = Counter()
    for ref in present:
        for gram, count in ngrams(ref).items():
            ref_max[gram] = max(ref_max[gram], count)
    lengths = [len(r) for r in present]
    if ref_length == REF_SHORTEST:
        ref_len = min(lengths)
    elif ref_length == REF_AVERAGE:
        ref_len = sum(lengths) * (AVERAGE_SCALE // len(lengths))
    else:
        ref_len = min(lengths, key=lambda length: (abs(length - len(hyp)), length))
    correct = [0] * max_order
    total = [max(len(hyp) - n, 0) for n in range(max_order)]
    for gram, count in ngrams(hyp).items():
        correct[len(gram) - 1] += min(count, ref_max[gram])
    return [len(hyp), ref_len] + correct + total


def kernel_statistics(segments, max_order, vocab_size=7, vocab=None, **options):
    """The counting kernel's rows for ``(hyp, refs)`` segments of token numbers (None: no ref).

    Token ``t`` hashes to ``vocab[t]`` (default: the hash of ``str(t)``).
    """
    n_refs = max(len(refs) for _, refs in segments)
    segments = [(hyp, refs + [None] * (n_refs - len(refs))) for hyp, refs in segments]
    if vocab is None:
        vocab = np.array([token_hash(str(t)) for t in range(vocab_size)], dtype=np.uint64)
    flat, hyp_start, hyp_count = [], [], []
    ref_start = np.zeros((n_refs, len(segments)), dtype=np.int64)
    ref_count = np.full((n_refs, len(segments)), -1, dtype=np.int64)
    for i, (hyp, refs) in enumerate(segments):
        hyp_start.append(len(flat))
        hyp_count.append(len(hyp))
        flat.extend(hyp)
        for r, ref in enumerate(refs):
            if ref is not None:
                ref_start[r, i], ref_count[r, i] = len(flat), len(ref)
                flat.extend(ref)
    hashes = vocab[np.array(flat, dtype=np.int64)] if flat else np.zeros(0, dtype=np.uint64)
    out = np.empty((len(segments), 2 + 2 * max_order), dtype=np.int64)
    segment_statistics(hashes, np.array(hyp_start, dtype=np.int64),
                       np.array(hyp_count, dtype=np.int64), hashes, ref_start, ref_count,
                       max_order, out, **options)
    return out

