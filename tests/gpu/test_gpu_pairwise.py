"""MBR matrices on the GPU against fastbleu.pairwise's CPU matrices."""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import SIMULATED, host, skip_without_device
from hypothesis import HealthCheck, given, settings, strategies as st

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
    ([["a", 3]], None, TypeError, "candidates\\[0\\]\\[1\\] is int, not str"),
    ([["a"]], [["a"], ["b"]], ValueError, "1 sources but references have 2"),
])
def test_matrices_refuse(candidates, references, error, message):
    with pytest.raises(error, match=message):
        gpu.chrf_matrix(candidates, references)


@pytest.mark.parametrize("candidates, references", [
    ([["a", 3]], None), ([["a"], [None]], None), ([[b"a"]], None), ([["a"]], [["b", 2.5]]),
])
@pytest.mark.parametrize("matrix", ["chrf_matrix", "bleu_matrix"])
def test_a_sentence_that_is_not_text_is_named_as_on_the_cpu(matrix, candidates, references):
    """The GPU said ``is a int, not a str`` and ``is a NoneType`` where the CPU says
    ``is int, not str`` and ``is None``: one message for one mistake."""
    with pytest.raises(TypeError) as cpu_error:
        getattr(pairwise, matrix)(candidates, references)
    with pytest.raises(TypeError) as gpu_error:
        getattr(gpu, matrix)(candidates, references)
    assert str(gpu_error.value) == str(cpu_error.value)


TEXT = st.text(alphabet=st.sampled_from(list("ab c.,(!-xyÄé中😀") + ["\t", "\n", "\x1c",
                                                                       "\u00a0", "\u0085",
                                                                       "\u2003", "\u2028",
                                                                       "\u205f", "\u1680",
                                                                       "\u3000", "\u200b"]),
               max_size=14)


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(TEXT, min_size=1, max_size=5), st.integers(0, 6), st.integers(0, 2),
       st.booleans())
def test_units_cut_on_the_device_equal_the_cpu(texts, char_order, word_order, whitespace):
    # Python whitespace of every kind (and U+200B, which is not), punctuation at word
    # edges, multi-byte characters: the device's hashes are the CPU kernel's.
    from fastbleu.gpu import _cpu
    from fastbleu.gpu.pairwise import device_units

    if char_order == 0 and word_order == 0:
        char_order = 1
    column = _cpu.as_text_column(texts, "texts")
    hashes, start, count = _cpu.chrf_units(column.data, column.offsets, char_order,
                                           word_order, whitespace)
    d_hashes, d_start, d_count, region = device_units(column, char_order, word_order,
                                                      whitespace)
    np.testing.assert_array_equal(host(d_count), count)
    np.testing.assert_array_equal(host(d_start), start)
    d_hashes = host(d_hashes)
    for k in range(count.shape[0]):
        for i in range(count.shape[1]):
            a, c = start[k, i], count[k, i]
            np.testing.assert_array_equal(d_hashes[a:a + c], hashes[a:a + c])
