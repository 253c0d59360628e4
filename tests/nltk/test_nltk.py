"""fastbleu.nltk against NLTK itself (``nltk.translate.bleu_score``).

* ``sentence_bleu`` and ``corpus_bleu`` must give *the same* result as NLTK's,
  compared with ``==`` and the same type (NLTK returns the int 0 when nothing
  matches), the same warnings (text and order) and the same exceptions, on
  random token lists for all 8 smoothing methods x several weight tuples x
  1-4 references, with empty hypotheses and references;
* ``sentence_bleu_many`` must equal NLTK's ``sentence_bleu`` loop to 1e-12
  (relative), with Python lists and Arrow columns;
* hand-computed values from Papineni et al. (2002).

Run more examples while hunting for bugs::

    FASTBLEU_HYPOTHESIS_EXAMPLES=2000 python -m pytest tests/nltk/test_nltk.py -x -q
"""

from __future__ import annotations

import doctest
import os
import random
import sys
import warnings
from fractions import Fraction as PlainFraction

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

nltk_bleu = pytest.importorskip("nltk.translate.bleu_score")

import fastbleu.nltk as fb  # noqa: E402
from fastbleu.nltk import segments as fb_segments  # noqa: E402
from testkit.data import WMT22, needs_wmt22, read_lines  # noqa: E402
from testkit.marks import quick_and_full  # noqa: E402

# Without smoothing NLTK warns about orders without matches; tests that compare the
# warnings record them, the others need not print them.
pytestmark = pytest.mark.filterwarnings(r"ignore:\s*The hypothesis contains 0 counts:UserWarning")

# -- settings ------------------------------------------------------------------------------

_DEFAULT_EXAMPLES = 150
_EXAMPLES = int(os.environ.get("FASTBLEU_HYPOTHESIS_EXAMPLES", "0") or 0) or _DEFAULT_EXAMPLES


def examples(n: int) -> settings:
    """``n`` examples at the default size, scaled by FASTBLEU_HYPOTHESIS_EXAMPLES."""
    return settings(max_examples=max(1, round(n * _EXAMPLES / _DEFAULT_EXAMPLES)),
                    deadline=None, database=None, print_blob=True,
                    suppress_health_check=list(HealthCheck))


METHODS = tuple(range(8))
WEIGHTS = [
    (0.25, 0.25, 0.25, 0.25),
    (0.5, 0.5),
    (1 / 3, 1 / 3, 1 / 3),
    (0.1, 0.3, 0.5, 0.1),
    (0.2, 0.2, 0.2, 0.2, 0.2),
    (1.0,),
    (0.1, 0.2, 0.3, 0.2, 0.1, 0.1),
    [(0.5, 0.5), (1 / 3, 1 / 3, 1 / 3), (0.25, 0.25, 0.25, 0.25)],  # a list of scores
    [(0.25, 0.25, 0.25, 0.25)],  # a one-item list: a single score, as in NLTK
]
WEIGHT_IDS = ["bleu4", "bleu2", "bleu3", "skewed", "bleu5", "bleu1", "bleu6", "list", "list1"]


def smoothing_pair(method: int):
    """NLTK's smoothing function and ours, with the same non-default parameters."""
    params = dict(epsilon=0.2, alpha=3, k=4)
    return (getattr(nltk_bleu.SmoothingFunction(**params), f"method{method}"),
            getattr(fb.SmoothingFunction(**params), f"method{method}"))


def outcome(function, *args, **kwargs):
    """``(result or exception, warnings)`` of a call, comparable with ``==``."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = ("value", _typed(function(*args, **kwargs)))
        except (AssertionError, IndexError) as error:  # method 6's conditions
            result = ("raised", type(error).__name__, str(error) if
                      isinstance(error, AssertionError) else "")
    return result, [(w.category, str(w.message)) for w in caught]


def _typed(value):
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value), value)


def nltk_loop(list_of_references, hypotheses, *args):
    """NLTK's sentence_bleu of every segment; warnings as (distinct texts in order)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scores = [nltk_bleu.sentence_bleu(r, h, *args)
                      for r, h in zip(list_of_references, hypotheses)]
        except (AssertionError, IndexError) as error:
            return type(error), _distinct(caught)
    return scores, _distinct(caught)


def ours_many(list_of_references, hypotheses, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            scores = fb.sentence_bleu_many(list_of_references, hypotheses, *args)
        except (AssertionError, IndexError) as error:
            return type(error), _distinct(caught)
    return scores, _distinct(caught)


def _distinct(caught):
    return list(dict.fromkeys((w.category, str(w.message)) for w in caught))


def assert_close_to_loop(ours, theirs, weights):
    if isinstance(theirs, type):
        assert ours is theirs
        return
    expected = np.array(theirs, dtype=np.float64)
    assert ours.dtype == np.float64 and ours.shape == expected.shape
    np.testing.assert_allclose(ours, expected, rtol=1e-12, atol=0)


# -- strategies ----------------------------------------------------------------------------

small_vocab = st.sampled_from(["a", "b", "c", "d"])
tokens = st.one_of(st.lists(small_vocab, max_size=10),
                   st.lists(st.sampled_from(["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"]),
                            max_size=14))
references = st.lists(tokens, min_size=1, max_size=4)
segment = st.tuples(references, tokens)
corpus = st.lists(segment, min_size=1, max_size=8)
method = st.sampled_from(METHODS)
weights = st.sampled_from(WEIGHTS)


# -- sentence level ------------------------------------------------------------------------

@given(segment, method, weights, st.booleans())
@examples(300)
@example((([], ["a"]), []), 0, WEIGHTS[0], False)  # empty hypothesis and reference
@example(([["a", "b", "c"]], ["a", "b", "c"]), 6, WEIGHTS[0], False)  # method 6 passes
@example(([["a", "b", "c"]], ["a", "b", "d"]), 6, WEIGHTS[0], False)  # method 6 asserts
@example(([["a", "b", "c"]], ["a", "b", "c"]), 6, WEIGHTS[1], False)  # method 6, 2 orders
@example(([["a", "b"]], ["a", "b"]), 0, WEIGHTS[0], True)  # auto_reweigh, short hypothesis
@example(([["a", "a", "b"], ["a", "b", "b"]], ["b", "a"]), 4, WEIGHTS[0], True)
@example(([["b"]], ["a"]), 1, WEIGHTS[7], False)  # nothing matches: [0, 0, 0]
def test_sentence_bleu_equals_nltk(seg, method, weights, auto_reweigh):
    refs, hyp = seg
    theirs_sf, ours_sf = smoothing_pair(method)
    theirs = outcome(nltk_bleu.sentence_bleu, refs, hyp, weights, theirs_sf, auto_reweigh)
    ours = outcome(fb.sentence_bleu, refs, hyp, weights, ours_sf, auto_reweigh)
    assert ours == theirs


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("weights", WEIGHTS, ids=WEIGHT_IDS)
def test_sentence_bleu_grid_equals_nltk(method, weights):
    """Every method x weight tuple on the same fixed, varied segments (no shrinking luck)."""
    rng = random.Random(f"{method}-{weights}")
    theirs_sf, ours_sf = smoothing_pair(method)
    for _ in range(25):
        refs = [[rng.choice("abcd") for _ in range(rng.randint(0, 9))]
                for _ in range(rng.randint(1, 4))]
        hyp = [rng.choice("abcd") for _ in range(rng.randint(0, 9))]
        for auto_reweigh in (False, True):
            assert outcome(fb.sentence_bleu, refs, hyp, weights, ours_sf, auto_reweigh) == \
                outcome(nltk_bleu.sentence_bleu, refs, hyp, weights, theirs_sf, auto_reweigh)


@given(st.lists(st.text("ab c", max_size=10), min_size=1, max_size=3),
       st.text("ab c", max_size=10), method)
@examples(100)
def test_strings_are_scored_by_character(refs, hyp, method):
    theirs_sf, ours_sf = smoothing_pair(method)
    assert outcome(fb.sentence_bleu, refs, hyp, WEIGHTS[0], ours_sf) == \
        outcome(nltk_bleu.sentence_bleu, refs, hyp, WEIGHTS[0], theirs_sf)


def test_a_string_of_references_is_a_list_of_one_character_references():
    # NLTK iterates whatever it gets: "abc" is three references "a", "b", "c".
    args = ("abc", "cab", (0.5, 0.5), nltk_bleu.SmoothingFunction().method1)
    assert fb.sentence_bleu(*args) == nltk_bleu.sentence_bleu(*args)


def test_tokens_compare_like_python():
    # 1, 1.0 and True are one token for Counter, so for us; "1" is another.
    refs, hyp = [[1, 2, 3, "1"]], [True, 2.0, 3, 1]
    assert outcome(fb.sentence_bleu, refs, hyp) == outcome(nltk_bleu.sentence_bleu, refs, hyp)


# -- corpus level --------------------------------------------------------------------------

@example([(([], ["a"]), ["a"]), ([["b"]], [])], 5, WEIGHTS[0], False)
@example([([["a", "b", "c", "d", "e"]], ["a", "b", "c", "d", "e"]), ([["x"]], ["y", "z"])],
         6, WEIGHTS[0], False)  # method 6 uses the last hypothesis only
def _corpus_bleu_equals_nltk(segments, method, weights, auto_reweigh):
    list_of_references = [refs for refs, _ in segments]
    hypotheses = [hyp for _, hyp in segments]
    theirs_sf, ours_sf = smoothing_pair(method)
    theirs = outcome(nltk_bleu.corpus_bleu, list_of_references, hypotheses, weights, theirs_sf,
                     auto_reweigh)
    ours = outcome(fb.corpus_bleu, list_of_references, hypotheses, weights, ours_sf,
                   auto_reweigh)
    assert ours == theirs


def _corpus_bleu_at(size):
    drawn = given(corpus, method, weights, st.booleans())
    return examples(size)(drawn(_corpus_bleu_equals_nltk))


# 100 examples in the quick run, 300 with -m slow (issue 28).
test_corpus_bleu_equals_nltk, test_corpus_bleu_equals_nltk_full = \
    quick_and_full(_corpus_bleu_at, 100, 300)


def test_methods_5_and_6_see_only_the_last_segment_at_corpus_level():
    good = (["a b c d e f".split()], "a b c d e f".split())
    bad = (["p q r s t u v w".split()], "p q x y z".split())  # shorter, fewer matches
    for method in (5, 6, 7):
        theirs_sf, ours_sf = smoothing_pair(method)
        scores = {}
        for order in ([good, bad], [bad, good]):
            refs, hyps = [s[0] for s in order], [s[1] for s in order]
            scores[order[-1] is good] = fb.corpus_bleu(refs, hyps, smoothing_function=ours_sf)
            assert scores[order[-1] is good] == \
                nltk_bleu.corpus_bleu(refs, hyps, smoothing_function=theirs_sf)
        # Same statistics summed over the corpus, different scores: the last segment counts.
        assert scores[True] != scores[False], method


# -- many segments -------------------------------------------------------------------------

def _sentence_bleu_many_equals_nltk_loop(segments, method, weights, auto_reweigh):
    list_of_references = [refs for refs, _ in segments]
    hypotheses = [hyp for _, hyp in segments]
    theirs_sf, ours_sf = smoothing_pair(method)
    theirs, theirs_warned = nltk_loop(list_of_references, hypotheses, weights, theirs_sf,
                                      auto_reweigh)
    ours, ours_warned = ours_many(list_of_references, hypotheses, weights, ours_sf,
                                  auto_reweigh)
    assert_close_to_loop(ours, theirs, weights)
    if not isinstance(theirs, type):
        assert ours_warned == theirs_warned


def _sentence_bleu_many_at(size):
    drawn = given(corpus, method, weights, st.booleans())
    return examples(size)(drawn(_sentence_bleu_many_equals_nltk_loop))


# 60 examples in the quick run, 200 with -m slow (issue 28).
test_sentence_bleu_many_equals_nltk_loop, test_sentence_bleu_many_equals_nltk_loop_full = \
    quick_and_full(_sentence_bleu_many_at, 60, 200)


def _random_corpus(rng, n, vocabulary="abcdefgh", max_len=12):
    def sentence():
        return [rng.choice(vocabulary) for _ in range(rng.randint(0, max_len))]
    return ([[sentence() for _ in range(rng.randint(1, 4))] for _ in range(n)],
            [sentence() for _ in range(n)])


@pytest.mark.parametrize("method", METHODS)
def test_many_segments_equal_nltk(method):
    rng = random.Random(method)
    list_of_references, hypotheses = _random_corpus(rng, 700, "abcd")
    weights = WEIGHTS[0] if method != 6 else WEIGHTS[1] + (0.0,)
    theirs_sf, ours_sf = smoothing_pair(method)
    if method == 6:  # keep method 6 clear of its assertion
        keep = [i for i, (r, h) in enumerate(zip(list_of_references, hypotheses))
                if fb.modified_precision(r, h, 3).numerator or
                not fb.modified_precision(r, h, 1).numerator]
        list_of_references = [list_of_references[i] for i in keep]
        hypotheses = [hypotheses[i] for i in keep]
        assert len(hypotheses) > 200
    theirs, _ = nltk_loop(list_of_references, hypotheses, weights, theirs_sf)
    ours, _ = ours_many(list_of_references, hypotheses, weights, ours_sf)
    assert_close_to_loop(ours, theirs, weights)
    assert fb.corpus_bleu(list_of_references, hypotheses, weights, ours_sf) == \
        nltk_bleu.corpus_bleu(list_of_references, hypotheses, weights, theirs_sf)


def test_large_corpora_split_across_kernel_threads():
    """Large inputs are counted in chunks on several threads; the numbers must not change."""
    from fastbleu._kernels import threads

    n = 2 * getattr(threads, "_MIN_CHUNK", 4096) + 101
    rng = random.Random(5)
    list_of_references, hypotheses = _random_corpus(rng, n, "abc", max_len=6)
    for method in (1, 7):
        theirs_sf, ours_sf = smoothing_pair(method)
        theirs, _ = nltk_loop(list_of_references, hypotheses, WEIGHTS[0], theirs_sf)
        ours, _ = ours_many(list_of_references, hypotheses, WEIGHTS[0], ours_sf)
        assert_close_to_loop(ours, theirs, WEIGHTS[0])
    assert fb.corpus_bleu(list_of_references, hypotheses) == \
        nltk_bleu.corpus_bleu(list_of_references, hypotheses)


def test_other_smoothing_functions_are_called_per_segment():
    rng = random.Random(7)
    list_of_references, hypotheses = _random_corpus(rng, 40, "abc")

    def custom(p_n, references, hypothesis, hyp_len):
        return [(p.numerator + 0.5) / (p.denominator + len(references)) for p in p_n]

    class Sub(fb.SmoothingFunction):  # overrides method4, which method7 calls
        def method4(self, p_n, *args, **kwargs):
            return [p if p.numerator else 0.01 for p in p_n]

    class NltkSub(nltk_bleu.SmoothingFunction):
        def method4(self, p_n, *args, **kwargs):
            return [p if p.numerator else 0.01 for p in p_n]

    pairs = [(custom, custom), (NltkSub().method7, Sub().method7),
             # NLTK's own methods are recognised and vectorized
             (nltk_bleu.SmoothingFunction().method5, nltk_bleu.SmoothingFunction().method5)]
    for theirs_sf, ours_sf in pairs:
        theirs, _ = nltk_loop(list_of_references, hypotheses, WEIGHTS[0], theirs_sf)
        ours, _ = ours_many(list_of_references, hypotheses, WEIGHTS[0], ours_sf)
        assert_close_to_loop(ours, theirs, WEIGHTS[0])
        assert fb.corpus_bleu(list_of_references, hypotheses, smoothing_function=ours_sf) == \
            nltk_bleu.corpus_bleu(list_of_references, hypotheses, smoothing_function=theirs_sf)


def test_shared_reference_objects_count_once_per_segment():
    """Systems scored against the same reference lists: each object is converted once."""
    rng = random.Random(3)
    refs, hyps = _random_corpus(rng, 30, "abc")
    shared = refs + [refs[i] for i in range(29, -1, -1)] + [[refs[0][0]] * 3 for _ in range(5)]
    hypotheses = hyps + [rng.choice(hyps) for _ in range(len(shared) - len(hyps))]
    copies = [[list(r) for r in rs] for rs in shared]
    method1 = fb.SmoothingFunction().method1
    ours_shared = fb.sentence_bleu_many(shared, hypotheses, smoothing_function=method1)
    ours_copies = fb.sentence_bleu_many(copies, hypotheses, smoothing_function=method1)
    theirs, _ = nltk_loop(copies, hypotheses, WEIGHTS[0], nltk_bleu.SmoothingFunction().method1)
    assert np.array_equal(ours_shared, ours_copies)
    assert_close_to_loop(ours_shared, theirs, WEIGHTS[0])
    assert fb.corpus_bleu(shared, hypotheses) == nltk_bleu.corpus_bleu(copies, hypotheses)


def test_token_number_zero_does_not_alias_ngrams():
    """A bigram starting with the first token seen must not share the key of a unigram."""
    statistics = fb_segments.prepare([[["b"]]], [["a", "b"]]).statistics(2)
    # [hyp_len, ref_len, match_1, match_2, total_1, total_2]
    assert statistics.tolist() == [[2, 1, 1, 0, 2, 1]]


# -- Arrow columns -------------------------------------------------------------------------

LIST_TYPES = [pa.list_(pa.string()), pa.large_list(pa.large_string())]


@given(corpus, method, st.sampled_from([0, 1]), st.integers(1, 3))
@examples(60)
def test_arrow_columns_equal_python_lists(segments, method, list_type, chunks):
    list_of_references = [refs for refs, _ in segments]
    hypotheses = [hyp for _, hyp in segments]
    _, ours_sf = smoothing_pair(method)
    if method == 6:
        ours_sf = fb.SmoothingFunction().method1
    list_type = LIST_TYPES[list_type]
    step = max(1, -(-len(hypotheses) // chunks))
    hyp_column = pa.chunked_array(
        [pa.array(hypotheses[i:i + step], list_type) for i in range(0, len(hypotheses), step)],
        type=list_type)
    nested = pa.array(list_of_references, pa.list_(list_type))
    # The same references as streams: stream r holds each segment's r-th reference or null.
    width = max(len(refs) for refs in list_of_references)
    streams = [pa.array([refs[r] if r < len(refs) else None for refs in list_of_references],
                        list_type) for r in range(width)]
    expected_corpus = fb.corpus_bleu(list_of_references, hypotheses, smoothing_function=ours_sf)
    expected_many = fb.sentence_bleu_many(list_of_references, hypotheses,
                                          smoothing_function=ours_sf)
    for refs in (nested, streams):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert fb.corpus_bleu(refs, hyp_column, smoothing_function=ours_sf) == \
                expected_corpus
            assert np.array_equal(
                fb.sentence_bleu_many(refs, hyp_column, smoothing_function=ours_sf),
                expected_many)


def test_arrow_slices_and_generic_smoothing():
    rng = random.Random(11)
    list_of_references, hypotheses = _random_corpus(rng, 50, "abcd")
    hyp_column = pa.array(hypotheses, pa.list_(pa.string())).slice(10, 30)
    ref_column = pa.array(list_of_references, pa.list_(pa.list_(pa.string()))).slice(10, 30)

    def custom(p_n, references, hypothesis, hyp_len):
        return [(p.numerator + 1) / (p.denominator + len(hypothesis)) for p in p_n]

    theirs, _ = nltk_loop(list_of_references[10:40], hypotheses[10:40], WEIGHTS[0], custom)
    ours = fb.sentence_bleu_many(ref_column, hyp_column, smoothing_function=custom)
    assert_close_to_loop(ours, theirs, WEIGHTS[0])
    method5 = fb.SmoothingFunction().method5
    assert fb.corpus_bleu(ref_column, hyp_column, smoothing_function=method5) == \
        nltk_bleu.corpus_bleu(list_of_references[10:40], hypotheses[10:40],
                              smoothing_function=nltk_bleu.SmoothingFunction().method5)


def test_arrow_input_errors():
    hyps = pa.array([["a"], ["b"]], pa.list_(pa.string()))
    with pytest.raises(TypeError, match="list<string>"):
        fb.corpus_bleu(pa.array([[["a"]], [["b"]]]), pa.array(["a", "b"]))
    with pytest.raises(TypeError, match="list<list<string>>"):
        fb.corpus_bleu(pa.array([["a"], ["b"]]), hyps)
    with pytest.raises(TypeError, match="Arrow"):
        fb.corpus_bleu([[["a"]], [["b"]]], hyps)
    with pytest.raises(TypeError, match="hypotheses as an Arrow"):
        fb.corpus_bleu(pa.array([[["a"]], [["b"]]]), [["a"], ["b"]])
    with pytest.raises(ValueError, match=r"hypotheses\[1\] is null"):
        fb.corpus_bleu(pa.array([[["a"]], [["b"]]]), pa.array([["a"], None]))
    with pytest.raises(ValueError, match="null tokens"):
        fb.corpus_bleu(pa.array([[["a"]], [["b"]]]), pa.array([["a"], [None]]))
    with pytest.raises(ValueError, match="segment 1 has no reference"):
        fb.corpus_bleu([pa.array([["a"], None]), pa.array([["a"], None])], hyps)
    with pytest.raises(ValueError, match="aligned"):
        fb.corpus_bleu([pa.array([["a"]])], hyps)


# -- corner cases and errors ---------------------------------------------------------------

def test_return_types_follow_nltk():
    refs, hyp = [["a", "b", "c"]], ["x"]
    assert fb.sentence_bleu(refs, hyp) == 0 and type(fb.sentence_bleu(refs, hyp)) is int
    assert fb.sentence_bleu(refs, hyp, [(0.5, 0.5), (1.0,)]) == [0, 0]
    assert fb.sentence_bleu(refs, [], WEIGHTS[0]) == 0
    assert fb.sentence_bleu(refs, ["a", "b", "c"], [(0.5, 0.5)]) == 1.0  # one-item list: float
    assert fb.sentence_bleu(refs, ["a", "b", "c"], [(0.5, 0.5), (1.0,)]) == [1.0, 1.0]
    assert fb.sentence_bleu(refs, ["a", "b", "c"], ()) == 0  # no orders: NLTK's 0
    assert fb.sentence_bleu_many([refs, refs], [hyp, ["a", "b", "c"]], (0.5, 0.5)).tolist() == \
        [0.0, 1.0]
    assert fb.sentence_bleu_many([refs], [hyp], [(0.5, 0.5), (1.0,)]).shape == (1, 2)
    assert fb.sentence_bleu_many([], [], (0.5, 0.5)).shape == (0,)


def test_method0_warning_text_is_nltks():
    refs, hyp = [["a", "b", "c", "d"]], ["a", "b", "x", "d"]
    _, ours = outcome(fb.sentence_bleu, refs, hyp)
    _, theirs = outcome(nltk_bleu.sentence_bleu, refs, hyp)
    assert ours == theirs and len(ours) == 2
    assert "0 counts of 3-gram overlaps" in ours[0][1]


def test_method6_assertion_and_order_check():
    refs, hyp = [["a", "b", "c", "d"]], ["a", "b", "x", "d"]
    method6 = fb.SmoothingFunction().method6
    with pytest.raises(AssertionError, match="requires non-zero precision for bigrams"):
        fb.sentence_bleu(refs, hyp, smoothing_function=method6)
    with pytest.raises(AssertionError, match="requires non-zero precision for bigrams"):
        fb.sentence_bleu_many([refs], [hyp], smoothing_function=method6)
    with pytest.raises(IndexError, match="at least 3 n-gram orders"):
        fb.sentence_bleu(refs, refs[0], (0.5, 0.5), smoothing_function=method6)
    with pytest.raises(IndexError, match="at least 3 n-gram orders"):
        fb.sentence_bleu_many([refs], [refs[0]], (0.5, 0.5), smoothing_function=method6)
    # Not reached when nothing matches, as in NLTK.
    assert fb.sentence_bleu(refs, ["z"], (0.5, 0.5), smoothing_function=method6) == 0


def test_fraction_keeps_numerator_and_denominator():
    p = fb.modified_precision([["a", "a", "b", "b"]], ["a", "a", "b", "b"], 1)
    assert (p.numerator, p.denominator) == (4, 4) and float(p) == 1.0
    q = fb.Fraction(2, 4, _normalize=False)
    assert (q.numerator, q.denominator) == (2, 4) and float(q) == 0.5
    assert q < PlainFraction(2, 3) and q > 0
    # Before Python 3.12 the unnormalised fraction 2/4 is not == 1/2 (fractions compares
    # numerator and denominator); NLTK's class behaves the same, so BLEU does too.
    theirs = nltk_bleu.Fraction(2, 4, _normalize=False)
    assert (q == PlainFraction(1, 2)) == (theirs == PlainFraction(1, 2))
    assert (q == PlainFraction(1, 2)) == (sys.version_info >= (3, 12))
    assert fb.modified_precision([["a"]], ["a"], 3) == 0
    assert fb.modified_precision([["a"]], ["a"], 3).denominator == 1  # max(1, 0)


@pytest.mark.parametrize("call, error, match", [
    (lambda: fb.corpus_bleu([[["a"]]], [["a"], ["b"]]), ValueError, "one list of references"),
    (lambda: fb.corpus_bleu([[]], [["a"]]), ValueError, r"list_of_references\[0\] is empty"),
    (lambda: fb.sentence_bleu([], ["a"]), ValueError, "references is empty"),
    (lambda: fb.corpus_bleu([], []), ValueError, "at least one hypothesis"),
    (lambda: fb.corpus_bleu([[["a"]]], [5]), TypeError, r"hypotheses\[0\] must be a sequence"),
    (lambda: fb.corpus_bleu([[["a"]]], [[["a"]]]), TypeError, r"hypotheses\[0\] contains an "
                                                              "unhashable token"),
    (lambda: fb.corpus_bleu([[5]], [["a"]]), TypeError, r"list_of_references\[0\]\[0\]"),
    (lambda: fb.corpus_bleu(5, [["a"]]), TypeError, "list_of_references must be a sequence"),
    (lambda: fb.sentence_bleu([["a"]], ["a"], weights=("a", "b")), TypeError, "real numbers"),
    (lambda: fb.sentence_bleu([["a"]], ["a"], weights={1: 1.0}), TypeError, "tuple of floats"),
    (lambda: fb.sentence_bleu([["a"]], ["a"], smoothing_function=3), TypeError, "callable"),
    (lambda: fb.modified_precision([["a"]], ["a"], 0), ValueError, "at least 1"),
    (lambda: fb.modified_precision([], ["a"], 1), ValueError, "at least one reference"),
    (lambda: fb.closest_ref_length([], 3), ValueError, "at least one reference"),
    (lambda: fb.brevity_penalty("6", 3), TypeError, "closest_ref_len must be a number"),
])
def test_errors_are_actionable(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_nltk_accepts_what_we_accept_in_the_corner_cases():
    # Empty hypotheses and references everywhere: NLTK returns 0, so do we.
    assert fb.corpus_bleu([[[]], [[], []]], [[], []]) == \
        nltk_bleu.corpus_bleu([[[]], [[], []]], [[], []]) == 0
    assert fb.modified_precision([], [], 1) == nltk_bleu.modified_precision([], [], 1) == 0


# -- Papineni et al. (2002) ----------------------------------------------------------------

PAPINENI_REFS = ["the cat is on the mat".split(), "there is a cat on the mat".split()]


def test_papineni_modified_unigram_precision_is_2_7():
    p = fb.modified_precision(PAPINENI_REFS, "the the the the the the the".split(), 1)
    assert (p.numerator, p.denominator) == (2, 7)
    assert float(p) == 2 / 7
    # Unclipped precision would be 7/7: every "the" occurs in a reference.
    assert fb.sentence_bleu(PAPINENI_REFS, ["the"] * 7, (1.0,)) == 2 / 7


def test_papineni_example_1_precisions():
    """Section 2.1: candidate 1 gets 17/18 and 10/17, candidate 2 gets 8/14 and 1/13."""
    refs = [
        "It is a guide to action that ensures that the military will forever heed Party "
        "commands".split(),
        "It is the guiding principle which guarantees the military forces always being under "
        "the command of the Party".split(),
        "It is the practical guide for the army always to heed the directions of the "
        "party".split(),
    ]
    candidate1 = ("It is a guide to action which ensures that the military always obeys the "
                  "commands of the party").split()
    candidate2 = ("It is to insure the troops forever hearing the activity guidebook that "
                  "party direct").split()
    expected = {(1, 1): (17, 18), (1, 2): (10, 17), (2, 1): (8, 14), (2, 2): (1, 13)}
    for (which, n), fraction in expected.items():
        p = fb.modified_precision(refs, candidate1 if which == 1 else candidate2, n)
        assert (p.numerator, p.denominator) == fraction


# Brevity penalty of c "the" against "the cat is on the mat" (r = 6): exp(1 - 6/c) for
# c <= 6, else 1 -- written out by hand: e^-5, e^-2, e^-1, e^-0.5, e^-0.2, e^0.
PAPINENI_BP = {1: 0.006737946999085467, 2: 0.1353352832366127, 3: 0.36787944117144233,
               4: 0.6065306597126334, 5: 0.8187307530779818, 6: 1.0, 7: 1, 8: 1}


@pytest.mark.parametrize("c", range(1, 9))
def test_papineni_brevity_penalty_table(c):
    hyp = ["the"] * c
    r = fb.closest_ref_length([PAPINENI_REFS[0]], len(hyp))
    assert r == 6
    bp = fb.brevity_penalty(r, c)
    assert bp == pytest.approx(PAPINENI_BP[c], rel=1e-15)
    assert type(bp) is type(PAPINENI_BP[c])  # NLTK's int 1 above r, float at or below
    assert bp == nltk_bleu.brevity_penalty(r, c)
    # BLEU-1 of those hypotheses is BP x min(c, 2)/c (two "the" in the reference).
    assert fb.sentence_bleu([PAPINENI_REFS[0]], hyp, (1.0,)) == pytest.approx(
        PAPINENI_BP[c] * min(c, 2) / c, rel=1e-15)


def test_closest_reference_length_ties_to_the_shorter():
    assert fb.closest_ref_length([["a"] * 13, ["a"] * 11], 12) == 11
    assert fb.closest_ref_length([["a"] * 11, ["a"] * 13], 12) == 11
    stats = fb_segments.prepare([[["a"] * 13, ["a"] * 11]], [["a"] * 12]).statistics(1)
    assert stats[0, 1] == 11


@pytest.mark.parametrize("module", ["fastbleu.nltk", "fastbleu.nltk.bleu",
                                    "fastbleu.nltk.precision", "fastbleu.nltk.smoothing"])
def test_docstring_examples(module):
    result = doctest.testmod(sys.modules[module], optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0


# -- WMT22 ---------------------------------------------------------------------------------

def _wmt22_slice(n=400):
    references = [[line.split() for line in read_lines(path)][:n] for path in
                  sorted((WMT22 / "references").glob("generaltest2022.de-en.ref.*.en"))]
    hypotheses = [line.split() for line in read_lines(
        WMT22 / "system-outputs" / "generaltest2022.de-en.hyp.Online-B.en")][:n]
    return [list(refs) for refs in zip(*references)], hypotheses


@needs_wmt22
@pytest.mark.parametrize("method", METHODS)
def test_wmt22_corpus_bleu_equals_nltk(method):
    list_of_references, hypotheses = _wmt22_slice()
    assert len(list_of_references[0]) == 2
    theirs_sf, ours_sf = smoothing_pair(method)
    assert outcome(fb.corpus_bleu, list_of_references, hypotheses, WEIGHTS[7], ours_sf) == \
        outcome(nltk_bleu.corpus_bleu, list_of_references, hypotheses, WEIGHTS[7], theirs_sf)


@needs_wmt22
@pytest.mark.parametrize("method", [0, 1, 2, 3, 4, 5, 7])
def test_wmt22_sentence_bleu_many_equals_nltk_loop(method):
    list_of_references, hypotheses = _wmt22_slice(300)
    theirs_sf, ours_sf = smoothing_pair(method)
    theirs, theirs_warned = nltk_loop(list_of_references, hypotheses, WEIGHTS[0], theirs_sf)
    ours, ours_warned = ours_many(list_of_references, hypotheses, WEIGHTS[0], ours_sf)
    assert_close_to_loop(ours, theirs, WEIGHTS[0])
    assert ours_warned == theirs_warned
    column = pa.array(hypotheses, pa.list_(pa.string()))
    streams = [pa.array([refs[r] for refs in list_of_references], pa.list_(pa.string()))
               for r in range(2)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(fb.sentence_bleu_many(streams, column, WEIGHTS[0], ours_sf), ours)
