"""MBR matrices on the GPU against fastbleu.pairwise's CPU matrices."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import SIMULATED, host, skip_without_device

from fastbleu import gpu, pairwise

pytestmark = skip_without_device

SOURCES = [["the cat sat on the mat", "a cat sat on a mat", "the cat sat on the mat",
            "dogs bark loudly!"],
           ["", "x", "x x x y"],
           ["Ünïcode wörds, and punctuation...", "unicode words and punctuation"]]
REFERENCES = [["the mat", "a cat on the mat"], ["x y", ""], ["UNICODE words"]]


def same(gpu_values, cpu_values, exact=True):
    gpu_values = host(gpu_values)
    if exact:
        np.testing.assert_array_equal(gpu_values, cpu_values)
    else:
        np.testing.assert_allclose(gpu_values, cpu_values, rtol=1e-14, atol=0)


@pytest.mark.parametrize("options", [{}, {"word_order": 2}, {"char_order": 3, "beta": 1},
                                     {"lowercase": True, "whitespace": True},
                                     {"word_order": 2, "eps_smoothing": True},
                                     {"char_order": 0, "word_order": 2}])
def test_chrf_matrix_equals_cpu(options):
    same(gpu.chrf_matrix(SOURCES, **options), pairwise.chrf_matrix(SOURCES, **options))
    same(gpu.chrf_matrix(SOURCES, REFERENCES, **options),
         pairwise.chrf_matrix(SOURCES, REFERENCES, **options))


@pytest.mark.parametrize("options", [{}, {"effective_order": True},
                                     {"tokenize": "char", "max_ngram_order": 2},
                                     {"smooth_method": "floor", "lowercase": True}])
def test_bleu_matrix_equals_cpu(options):
    same(gpu.bleu_matrix(SOURCES, **options), pairwise.bleu_matrix(SOURCES, **options),
         exact=SIMULATED)
    ours = gpu.bleu_matrix(SOURCES, REFERENCES, ragged=True, **options)
    theirs = pairwise.bleu_matrix(SOURCES, REFERENCES, ragged=True, **options)
    for a, b in zip(ours, theirs):
        same(a, b, exact=SIMULATED)


@pytest.mark.parametrize("candidates, references, error, message", [
    ("text", None, TypeError, "single str"),
    ([["a"], []], None, ValueError, "candidates\\[1\\] is empty"),
    ([["a", 3]], None, TypeError, "candidates\\[0\\]\\[1\\] is a int"),
    ([["a"]], [["a"], ["b"]], ValueError, "1 sources but references have 2"),
])
def test_matrices_refuse(candidates, references, error, message):
    with pytest.raises(error, match=message):
        gpu.chrf_matrix(candidates, references)
