"""Self-BLEU on token lists (issue 15): NLTK's loop bit for bit, and fast-bleu's SelfBLEU.

``fastbleu.nltk.self_bleu`` must equal ``[nltk sentence_bleu(others_i, s_i, ...)]``
exactly (``==`` on floats), for every smoothing method, several weight sets,
``auto_reweigh``, duplicated and empty sentences and ties in length.
``fastbleu.nltk.SelfBLEU`` must equal ``fast_bleu.SelfBLEU`` where fast-bleu is
deterministic (see ``test_fast_bleu_selfbleu``).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastbleu.nltk import SelfBLEU, SmoothingFunction, self_bleu

nltk_bleu = pytest.importorskip("nltk.translate.bleu_score")

NLTK_SMOOTHING = nltk_bleu.SmoothingFunction()
METHODS = [None] + [getattr(NLTK_SMOOTHING, f"method{i}") for i in range(1, 8)] + \
    [SmoothingFunction().method1, SmoothingFunction(epsilon=0.3).method1,
     SmoothingFunction().method0]
WEIGHTS = [(0.25, 0.25, 0.25, 0.25), (0.5, 0.5), (1 / 3, 1 / 3, 1 / 3), (1, 0),
           [(0.25, 0.25, 0.25, 0.25), (0.5, 0.5)], (0.2, 0.2, 0.2, 0.2, 0.2)]

tokens = st.lists(st.sampled_from(["a", "b", "c", "a"]), min_size=0, max_size=7)
sentences = st.lists(st.tuples(tokens, st.integers(0, 9)), min_size=2, max_size=7).map(
    lambda pairs: [s if k < 6 or i == 0 else list(pairs[k % i][0])
                   for i, (s, k) in enumerate(pairs)])


def nltk_loop(sents, weights, smoothing, auto_reweigh):
    out = []
    for i, s in enumerate(sents):
        try:
            out.append(nltk_bleu.sentence_bleu(sents[:i] + sents[i + 1:], s, weights, smoothing,
                                               auto_reweigh))
        except (AssertionError, IndexError) as error:  # method 6's checks
            return type(error)
    return np.array(out, dtype=np.float64)


@settings(max_examples=150, deadline=None)
@given(sentences, st.sampled_from(WEIGHTS), st.sampled_from(METHODS), st.booleans())
def test_equals_nltk_loop_bit_for_bit(sents, weights, smoothing, auto_reweigh):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = nltk_loop(sents, weights, smoothing, auto_reweigh)
        if isinstance(expected, type):
            with pytest.raises(expected):
                self_bleu(sents, weights, smoothing, auto_reweigh)
            return
        ours = self_bleu(sents, weights, smoothing, auto_reweigh)
    assert ours.shape == expected.shape
    assert ours.tolist() == expected.tolist()


def test_custom_smoothing_receives_the_others():
    seen = []

    def smoothing(p_n, references, hypothesis, hyp_len):
        seen.append((len(references), hyp_len))
        return NLTK_SMOOTHING.method1(p_n)

    sents = ["a b c".split(), "a b".split(), "c".split()]
    ours = self_bleu(sents, smoothing_function=smoothing)
    expected = nltk_loop(sents, (0.25,) * 4, smoothing, False)
    assert ours.tolist() == expected.tolist()
    assert seen[:3] == [(2, 3), (2, 2), (2, 1)]


def test_texygen_recipe_on_text():
    sents = [s.split() for s in ["the cat sat on the mat", "the cat sat on the mat",
                                 "a dog ran in the park", "", "the dog sat"]]
    method1 = NLTK_SMOOTHING.method1
    expected = nltk_loop(sents, (0.25,) * 4, method1, False)
    assert self_bleu(sents, smoothing_function=method1).tolist() == expected.tolist()
    assert expected[0] == 1.0  # its duplicate is among the others


def _warned(call) -> list[tuple]:
    """Every warning ``call()`` gives (none escapes to the test run's summary)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
    return [(w.category, str(w.message)) for w in caught]


def test_method0_warns_like_nltk():
    """NLTK's UserWarning for each order without a match, the same messages as NLTK's loop
    (which repeats them for every sentence); all are caught here, none leaks."""
    sents = ["a b".split(), "a c".split()]
    ours = _warned(lambda: self_bleu(sents))
    theirs = _warned(lambda: [nltk_bleu.sentence_bleu([sents[1 - i]], sents[i])
                              for i in range(2)])
    assert [c for c, _ in ours] == [UserWarning] * 3
    assert "0 counts of 2-gram overlaps" in ours[0][1]
    assert set(ours) == set(theirs)


def test_errors_and_corner_cases():
    with pytest.raises(ValueError, match="at least two sentences"):
        self_bleu([["a", "b"]])
    assert self_bleu([]).shape == (0,)
    with pytest.raises(TypeError, match=r"sentences\[1\]"):
        self_bleu([["a"], 3])
    with pytest.raises(TypeError, match="unhashable"):
        self_bleu([["a"], [["x"]]])
    with pytest.raises(TypeError, match="sequence of sentences"):
        self_bleu("abc")
    with pytest.raises(TypeError, match="smoothing_function"):
        self_bleu([["a"], ["a"]], smoothing_function=3)


def test_selfbleu_interface_and_errors():
    lines = [["a", "b", "c"], ["a", "b", "d"], ["b", "c", "d"]]
    scores = SelfBLEU(lines, {"bi": (0.5, 0.5), "tri": (1 / 3, 1 / 3, 1 / 3)}).get_score()
    assert list(scores) == ["bi", "tri"] and all(len(v) == 3 for v in scores.values())
    assert isinstance(scores["bi"], list) and isinstance(scores["bi"][0], float)
    with pytest.raises(ValueError, match="sum to one"):
        SelfBLEU(lines, {"x": (0.5, 0.6)})
    with pytest.raises(ValueError, match="at least 2"):
        SelfBLEU(lines, {"x": (1.0,)})
    with pytest.raises(ValueError, match="smoothing_func"):
        SelfBLEU(lines, smoothing_func=2)
    with pytest.raises(ValueError, match="two sentences"):
        SelfBLEU(lines[:1])


@settings(max_examples=25, deadline=None)
@given(st.integers(2, 6), st.integers(1, 7), st.data(),
       st.sampled_from([{4: (0.25,) * 4}, {"b": (0.5, 0.5), "t": (1 / 3,) * 3},
                        {"x": (0.1, 0.2, 0.3, 0.4)}]), st.sampled_from([0, 1]))
def test_fast_bleu_selfbleu(n, length, data, weights, smoothing):
    """Equal to fast-bleu 0.0.90 to 1e-15 when every sentence has the same length.

    fast-bleu's brevity penalty reads one length past its array of the N - 1
    other lengths (uninitialized memory), so its scores are not reproducible
    when lengths differ; with equal lengths no value there can be closer.
    """
    fast_bleu = pytest.importorskip("fast_bleu")
    sents = [data.draw(st.lists(st.sampled_from("abcd"), min_size=length, max_size=length))
             for _ in range(n)]
    ours = SelfBLEU(sents, weights, smoothing).get_score()
    theirs = fast_bleu.SelfBLEU(sents, weights, smoothing).get_score()
    for name in weights:
        np.testing.assert_allclose(ours[name], theirs[name], rtol=1e-14, atol=0)


class Loud(str):
    """A str subclass with its own ``__str__``: fast-bleu compares ``str(token)``."""

    def __str__(self):
        return self.upper()


@pytest.mark.parametrize("lines, as_text", [
    ([[Loud("x"), "b", "c"], ["X", "b", "c"], ["y", "X", "b"]],
     [["X", "b", "c"], ["X", "b", "c"], ["y", "X", "b"]]),
    ([[1, 2, 3], ["1", 2, "3"], [2, 3, 4]], [["1", "2", "3"]] * 2 + [["2", "3", "4"]]),
])
def test_selfbleu_compares_tokens_as_str(lines, as_text):
    """Plain str tokens skip the renumbering by ``str``; other tokens go through it."""
    assert SelfBLEU(lines).get_score() == SelfBLEU(as_text).get_score()
    assert SelfBLEU(lines).get_score() != SelfBLEU([[repr(t) for t in s] for s in lines]
                                                   ).get_score()


def test_selfbleu_tells_equal_tokens_apart_by_their_str():
    """1 == 1.0 == True (one dict key), but fast-bleu compares '1', '1.0' and 'True'."""
    lines = [[1, 2, 3], [1.0, 2, 3], [True, 2, 3], [1, 2, 4]]
    as_str = [[str(t) for t in s] for s in lines]
    assert SelfBLEU(lines).get_score() == SelfBLEU(as_str).get_score()
    assert SelfBLEU(lines).get_score() != SelfBLEU([["1", *s[1:]] for s in as_str]).get_score()
