"""sacrebleu's module functions (``sacrebleu.corpus_bleu`` ... ``sentence_ter``): the same
arguments, defaults and numbers from ``fastbleu``'s."""

from __future__ import annotations

import inspect
import logging

import pytest
import sacrebleu

import fastbleu

HYPS = ["The cat sat on the mat .", "a b c d", "Hello, world!", "", "x y z"]
REFS = [["The cat is on the mat.", "a b d c", "Hello world!", "nothing", "x z y"],
        ["A cat sat on a mat .", "a b c", "hello, World !", "", "y x"]]
FUNCTIONS = ["corpus_bleu", "raw_corpus_bleu", "sentence_bleu", "corpus_chrf", "sentence_chrf",
             "corpus_ter", "sentence_ter"]

logging.getLogger("sacrebleu").setLevel(logging.CRITICAL)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_same_signature_as_sacrebleu(name):
    ours, theirs = inspect.signature(getattr(fastbleu, name)), \
        inspect.signature(getattr(sacrebleu, name))
    assert list(ours.parameters) == list(theirs.parameters)
    for parameter in ours.parameters.values():
        assert parameter.default == theirs.parameters[parameter.name].default, parameter.name


@pytest.mark.parametrize("name, options", [
    ("corpus_bleu", {}), ("corpus_bleu", {"lowercase": True, "tokenize": "intl"}),
    ("corpus_bleu", {"smooth_method": "floor", "smooth_value": 0.2,
                     "use_effective_order": True, "force": True}),
    ("raw_corpus_bleu", {}), ("raw_corpus_bleu", {"smooth_value": 0.3}),
    ("corpus_chrf", {}), ("corpus_chrf", {"word_order": 2, "remove_whitespace": False}),
    ("corpus_chrf", {"char_order": 4, "beta": 1, "eps_smoothing": True}),
    ("corpus_ter", {}), ("corpus_ter", {"normalized": True, "no_punct": True,
                                        "case_sensitive": True}),
])
def test_corpus_functions_equal_sacrebleu(name, options):
    ours = getattr(fastbleu, name)(HYPS, REFS, **options)
    theirs = getattr(sacrebleu, name)(HYPS, REFS, **options)
    assert str(ours) == str(theirs)
    assert ours.score == theirs.score


@pytest.mark.parametrize("name, options", [
    ("sentence_bleu", {}), ("sentence_bleu", {"use_effective_order": False,
                                              "smooth_method": "add-k"}),
    ("sentence_chrf", {}), ("sentence_chrf", {"word_order": 2}),
    ("sentence_ter", {}), ("sentence_ter", {"normalized": True}),
])
def test_sentence_functions_equal_sacrebleu(name, options):
    for i, hyp in enumerate(HYPS):
        refs = [stream[i] for stream in REFS]
        ours = getattr(fastbleu, name)(hyp, refs, **options)
        theirs = getattr(sacrebleu, name)(hyp, refs, **options)
        assert str(ours) == str(theirs)
        assert ours.score == theirs.score


def test_bad_arguments_are_the_metrics_errors():
    with pytest.raises(ValueError, match="smooth"):
        fastbleu.corpus_bleu(HYPS, REFS, smooth_method="nope")
    with pytest.raises(TypeError, match="hypotheses"):
        fastbleu.corpus_ter([1, 2, 3, 4, 5], REFS)
    with pytest.raises(ValueError):
        fastbleu.corpus_chrf(HYPS, REFS, char_order=0, word_order=0)
