"""BLEU's byte tokenizers (13a, none, char) run on the device, against the CPU's tokenizer.

:func:`fastbleu.gpu.pairwise.device_tokens` copies a column's UTF-8 bytes
and offsets and tokenizes every sentence in one launch with the CPU
tokenizer's own scalar functions; its hashes must be the CPU's
(``fastbleu.statistics.tokens.tokenize``, whose flat fast paths the device
does not take) for every input, so the text here is built from the pieces
13a's replacements and rules look at.
"""

from __future__ import annotations

import numpy as np
import pytest
from gpu_device import SIMULATED, host, skip_without_device
from hypothesis import HealthCheck, given, settings, strategies as st
from launches import DeviceCalls

import fastbleu
from fastbleu import gpu, pairwise

pytestmark = skip_without_device

#: 13a's replacements (whole and cut short), its rules' punctuation and digits, Python's
#: whitespace of every width (and U+200B, which is not whitespace), CJK and an emoji.
PIECES = ["<skipped>", "<skip", "&quot;", "&amp;", "&lt;", "&gt;", "&amp", "&", "<", ">",
          ";", "-\n", "-", "\n", "\r", "\t", " ", "  ", "\u00a0", "\u0085", "\u2003",
          "\u3000", "\u2028", "\u200b", "1", "9", ".", ",", "a", "Q", "é", "ß", "!", "(",
          "/", "中", "文", "😀"]
TEXT = st.lists(st.sampled_from(PIECES), max_size=10).map("".join)
KINDS = ("13a", "none", "char")


def cpu_and_device(texts, tokenize):
    from fastbleu.gpu import _cpu
    from fastbleu.gpu.pairwise import device_tokens

    tokenizer = fastbleu.BLEU(tokenize=tokenize).tokenizer
    column = _cpu.as_text_column(texts, "texts")
    return (_cpu.tokenize(column, tokenizer, False),
            device_tokens(column, tokenizer.kernel))


def assert_same_tokens(texts, tokenize):
    tokens, (d_hashes, d_start, d_count, region) = cpu_and_device(texts, tokenize)
    d_hashes, d_start, d_count = host(d_hashes), host(d_start), host(d_count)
    assert d_start.shape == d_count.shape == (1, len(texts))
    assert region == len("".join(texts).encode("utf-8"))
    np.testing.assert_array_equal(d_count[0], tokens.count)
    for i in range(len(texts)):
        a, c = d_start[0, i], d_count[0, i]
        assert c <= len(texts[i].encode("utf-8"))  # within the sentence's own bytes
        np.testing.assert_array_equal(
            d_hashes[a:a + c], tokens.hashes[tokens.start[i]:tokens.start[i] + c])


@settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.lists(TEXT, min_size=1, max_size=4), st.sampled_from(KINDS))
def test_device_tokens_equal_the_cpu_tokenizer(texts, tokenize):
    assert_same_tokens(texts, tokenize)


@pytest.mark.parametrize("tokenize", KINDS)
def test_device_tokens_of_hostile_sentences(tokenize):
    # Each of 13a's replacements, trailing whitespace of every kind, the digit rules,
    # empty and whitespace-only sentences, HTML, CJK and emoji, side by side.
    texts = ["", "a &quot;b&quot; <skipped>c-\nd &amp;&lt;&gt;  ", "1.5,3-4 x. y,z 7-",
             "..,,1..2,,3", "中文 😀\u3000a\u00a0b\u2003 \u2028", " \t\u3000\n",
             "<script>alert('x')</script> &lt;b&gt;", "end-\n", "x<skipped>y&quot",
             "é.ß, 9.é"]
    assert_same_tokens(texts, tokenize)


def test_device_tokens_refuse_a_tokenizer_of_the_cpu():
    from fastbleu.gpu import _cpu
    from fastbleu.gpu.pairwise import device_tokens

    column = _cpu.as_text_column(["a b"], "texts")
    with pytest.raises(ValueError, match="does not run on the device"):
        device_tokens(column, fastbleu.BLEU(tokenize="intl").tokenizer.kernel)


SOURCES = [["The cat &quot;sat&quot; on the mat.", "the cat sat on the mat", "A cat-\nsat.",
            "1,000.5 dogs <skipped> bark!  "],
           ["", "x", "X x\u3000x y"],
           ["中文 😀 文", "Ünïcode wörds, and punctuation...", "unicode 😀"]]
REFERENCES = [["the mat .", "a cat on the mat"], ["x y", ""], ["UNICODE words", "中文"]]


def same(gpu_values, cpu_values):
    gpu_values = host(gpu_values)
    if SIMULATED:
        np.testing.assert_array_equal(gpu_values, cpu_values)
    else:  # CUDA's log and exp: within a few units in the last place
        np.testing.assert_allclose(gpu_values, cpu_values, rtol=1e-14, atol=0)


@pytest.mark.parametrize("options", [{}, {"tokenize": "none"},
                                     {"tokenize": "char", "max_ngram_order": 2},
                                     {"lowercase": True}, {"tokenize": "intl"}])
def test_bleu_matrix_of_device_tokens_equals_cpu(options):
    same(gpu.bleu_matrix(SOURCES, **options), pairwise.bleu_matrix(SOURCES, **options))
    ours = gpu.bleu_matrix(SOURCES, REFERENCES, ragged=True, **options)
    theirs = pairwise.bleu_matrix(SOURCES, REFERENCES, ragged=True, **options)
    for a, b in zip(ours, theirs):
        same(a, b)


def test_tokenizing_is_one_launch_and_nothing_read_back():
    from fastbleu.gpu import _cpu
    from fastbleu.gpu.pairwise import device_tokens

    column = _cpu.as_text_column(["a &amp; b.", "c-\nd", ""], "texts")
    kind = fastbleu.BLEU().tokenizer.kernel
    device_tokens(column, kind)  # compiled outside the count
    with DeviceCalls() as calls:
        device_tokens(column, kind)
    assert dict(calls.kernels) == {"bleu_tokens": 1}
    assert (calls.readbacks, calls.waits) == (0, 0)
    with DeviceCalls() as calls:  # the matrix: the tokens are not read back either
        gpu.bleu_matrix([["a &amp; b.", "c-\nd"]])
    assert calls.kernels["bleu_tokens"] == 1 and calls.readbacks == 0
    with DeviceCalls() as calls:  # intl tokenizes on the CPU
        gpu.bleu_matrix([["a b.", "c d"]], tokenize="intl")
    assert "bleu_tokens" not in calls.kernels
