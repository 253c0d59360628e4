"""chrF and chrF++ against sacrebleu 2.6: random nasty text for every option, the float32
arithmetic of sacrebleu's resampling, and the API's refusals."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from testkit.text import chrf_options
from hypothesis import given
from hypothesis import strategies as st
from sacrebleu.metrics import CHRF as SacreCHRF

import fastbleu
from fastbleu import CHRF
from fastbleu.metrics import get_metric
from fastbleu.metrics.chrf.formula import CHRFFormula
from testkit.text import WHITESPACE, corpora, examples, line, random_lines
from testkit.marks import quick_and_full



def _sacre_rows(theirs, hyps, streams):
    return theirs._extract_corpus_statistics(hyps, streams)


def _statistics_and_scores(corpus, options):
    hyps, streams = corpus
    ours, theirs = CHRF(**options), SacreCHRF(**options)
    stats = ours.segment_statistics(hyps, streams)
    assert stats.tolist() == _sacre_rows(theirs, hyps, streams)
    sentence = ours.sentence_scores(hyps, streams)
    for i, hyp in enumerate(hyps):
        refs = [s[i] for s in streams]
        expected = theirs.sentence_score(hyp, refs)
        assert sentence[i] == expected.score
        assert str(ours.sentence_score(hyp, refs)) == str(expected)
    ours_corpus, theirs_corpus = ours.corpus_score(hyps, streams), theirs.corpus_score(hyps,
                                                                                        streams)
    assert ours_corpus.score == theirs_corpus.score
    assert ours_corpus.name == theirs_corpus.name
    expected_signature = theirs.get_signature().format().rsplit("|", 1)[0]
    assert ours.get_signature().format().rsplit("|", 1)[0] == expected_signature
    assert ours.get_signature().format(short=True).rsplit("|", 1)[0] == \
        theirs.get_signature().format(short=True).rsplit("|", 1)[0]


def _statistics_and_scores_at(size):
    drawn = given(corpora(max_segments=5), chrf_options)
    return examples(size)(drawn(_statistics_and_scores))


# 100 examples in the quick run, 300 with -m slow (issue 28).
test_statistics_and_scores_equal_sacrebleu, test_statistics_and_scores_equal_sacrebleu_full = \
    quick_and_full(_statistics_and_scores_at, 100, 300)


@examples(100)
@given(st.lists(st.tuples(line, line), min_size=1, max_size=4), st.integers(1, 3))
def test_long_repetitive_lines(pairs, repeat):
    """Lines repeated into long ones: many equal n-grams, so counts are clipped."""
    hyps = [(h + " ") * (7 * repeat) for h, _ in pairs]
    refs = [(h + " " + r) * (5 * repeat) for h, r in pairs]
    for options in ({}, {"word_order": 2}, {"whitespace": True}):
        ours, theirs = CHRF(**options), SacreCHRF(**options)
        assert ours.segment_statistics(hyps, [refs]).tolist() == \
            _sacre_rows(theirs, hyps, [refs])


def test_whitespace_only_empty_and_single_characters():
    hyps = ["", " ", "a", "\u3000\t", "(", "a.", ".a", "((a))", "é", "e\u0301", "😀!", "a , b"]
    refs = [["", "a", " ", "b", "(", "a", "a", "(a)", "é.", "e", "!😀", "a, b"]]
    for options in ({}, {"word_order": 2}, {"whitespace": True, "word_order": 1},
                    {"eps_smoothing": True}, {"word_order": 2, "eps_smoothing": True}):
        ours, theirs = CHRF(**options), SacreCHRF(**options)
        assert ours.segment_statistics(hyps, refs).tolist() == _sacre_rows(theirs, hyps, refs)
        assert ours.corpus_score(hyps, refs).score == theirs.corpus_score(hyps, refs).score


def test_a_huge_segment():
    """A segment of 300,000 characters (tables sized for it, then for the next ones)."""
    rng = np.random.default_rng(5)
    words = ["alpha", "beta", "gamma", "delta", "ε", "ζήτα", "(x)", "y."]
    big_h = " ".join(rng.choice(words, 50_000))
    big_r = " ".join(rng.choice(words, 40_000))
    hyps, refs = ["a b", big_h, "c d"], [["a c", big_r, "d c"]]
    ours, theirs = CHRF(word_order=2), SacreCHRF(word_order=2)
    assert ours.segment_statistics(hyps, refs).tolist() == _sacre_rows(theirs, hyps, refs)


@examples(200)
@given(st.lists(st.integers(0, 40), min_size=3, max_size=3 * 8).filter(lambda v: len(v) % 3
                                                                         == 0),
       st.booleans(), st.sampled_from([1, 2, 3]), st.integers(1, 50))
def test_float32_sums_follow_sacrebleus_arithmetic(values, eps_smoothing, beta, scale):
    """sacrebleu's bootstrap scores float32 sums with numpy float32 scalars (NEP 50); the
    float32 kernel gives the same float32 values."""
    triples = np.array(values, dtype=np.int64).reshape(-1, 3) * scale
    triples[:, 2] = np.minimum(triples[:, 2], triples[:, :2].min(axis=1))
    row = triples.ravel()
    orders = row.size // 3
    theirs = SacreCHRF(char_order=orders, word_order=0, beta=beta, eps_smoothing=eps_smoothing)
    expected = theirs._compute_f_score(row.astype(np.float32))
    formula = CHRFFormula(orders, 0, beta, eps_smoothing)
    out = np.empty((1, 1))
    formula.resampled_scores(row.astype(np.float32)[None, :], 1, out, 0)
    assert out[0, 0] == float(expected)
    assert np.float32(out[0, 0]) == expected
    formula.resampled_scores(row[None, :], 1, out, 0)
    assert out[0, 0] == theirs._compute_f_score(row.tolist())


def test_resampled_scores_of_several_systems():
    rng = np.random.default_rng(0)
    formula = CHRFFormula(3, 1)
    rows = rng.integers(0, 30, (5, 3, 4, 3))
    rows[..., 2] = np.minimum(rows[..., 2], rows[..., :2].min(axis=-1))
    sums = rows.reshape(5, 3 * formula.row_width)
    out = np.full((3, 7), np.nan)
    formula.resampled_scores(sums, 3, out, 2)
    for b in range(5):
        for s in range(3):
            assert out[s, 2 + b] == formula.score(rows[b, s].ravel()).score


# -- the API ---------------------------------------------------------------------------------

@pytest.mark.parametrize("options, error, message", [
    ({"char_order": -1}, ValueError, "char_order must be between 0 and 100"),
    ({"word_order": 101}, ValueError, "word_order must be between 0 and 100"),
    ({"char_order": 0, "word_order": 0}, ValueError, "at least one n-gram order"),
    ({"char_order": 2.5}, TypeError, "char_order must be an int"),
    ({"word_order": True}, TypeError, "word_order must be an int"),
    ({"beta": float("nan")}, ValueError, "beta must be a finite number"),
    ({"beta": "2"}, TypeError, "beta must be a number"),
    ({"beta": np.float32(2)}, TypeError, "numpy float32"),
])
def test_bad_options_are_refused(options, error, message):
    with pytest.raises(error, match=message):
        CHRF(**options)


def test_refusals_of_inputs():
    chrf = CHRF()
    with pytest.raises(ValueError, match="segment 1 has no reference"):
        chrf.corpus_score(["a", "b"], [["a", None], [None, None]])
    with pytest.raises(ValueError, match="references\\[0\\] has 1 segments but the hypotheses "
                                         "have 2"):
        chrf.corpus_score(["a", "b"], [["a"]])
    with pytest.raises(RuntimeError, match="cache is empty"):
        chrf.corpus_score(["a"], None)
    with pytest.raises(TypeError, match="hypothesis must be a str"):
        chrf.sentence_score(None, ["a"])
    with pytest.raises(TypeError, match="references must be a sequence"):
        chrf.sentence_score("a", "a")
    with pytest.raises(TypeError, match="n_bootstrap must be an int"):
        chrf.corpus_score(["a"], [["a"]], n_bootstrap=2.0)
    with pytest.raises(ValueError, match="Number of references unknown"):
        CHRF().get_signature()
    with pytest.raises(ValueError, match="cached references have 2 segments"):
        CHRF(references=[["a", "b"]]).corpus_score(["a"], None)


def test_empty_corpus_scores_zero_like_sacrebleu_cannot():
    # sacrebleu fails on an empty corpus (its sum of no lists); fastbleu's sum is zeros.
    score = CHRF().corpus_score([], [[]])
    assert score.score == 0.0 and score.name == "chrF2"
    assert CHRF().sentence_scores([], [[]]).shape == (0,)


def test_check_rows_names_the_bad_cell():
    formula = CHRF(char_order=2, word_order=1).formula
    assert formula.statistics_names == ("char1_hyp", "char1_ref", "char1_match", "char2_hyp",
                                        "char2_ref", "char2_match", "word1_hyp", "word1_ref",
                                        "word1_match")
    good = np.array([[3, 4, 2, 2, 3, 1, 1, 1, 1]])
    assert formula.check_rows(good).dtype == np.int64
    with pytest.raises(ValueError, match="have 8 columns.*need 9"):
        formula.check_rows(good[:, :8])
    with pytest.raises(ValueError, match="row 0, char2_ref = -3"):
        formula.check_rows(good * [1, 1, 1, 1, -1, 1, 1, 1, 1])
    with pytest.raises(ValueError, match="row 0: char1_match = 9 exceeds char1_hyp"):
        formula.check_rows(good + [0, 0, 7, 0, 0, 0, 0, 0, 0])
    with pytest.raises(ValueError, match="fractional"):
        formula.check_rows(good + 0.5)
    with pytest.raises(TypeError, match="integer array"):
        formula.check_rows(good.astype(object))
    with pytest.raises(ValueError, match="must be one row of 9 counts"):
        formula.score(good)


def test_signature_name_options_and_pickling():
    chrf = CHRF(word_order=2, lowercase=True, whitespace=True, eps_smoothing=True, beta=3)
    chrf.corpus_score(["a b", "c"], [["a b", "c"], [None, "d"]])
    assert chrf.get_signature().format().rsplit("|", 1)[0] == \
        "nrefs:var|case:lc|eff:no|nc:6|nw:2|space:yes"
    assert chrf.get_signature().format().endswith(f"version:fastbleu-{fastbleu.__version__}")
    assert chrf.formula.name == "chrF3++"
    again = get_metric("chrf", **chrf.options())
    assert again.options() == chrf.options() and again.formula == chrf.formula
    formula = pickle.loads(pickle.dumps(chrf.formula))
    assert formula == chrf.formula and formula.kernel_args == chrf.formula.kernel_args
    # sacrebleu's attributes may be assigned; the formula follows.
    chrf.word_order = 0
    assert chrf.formula.name == "chrF3" and chrf.formula.row_width == 18


def test_bootstrap_confidence_has_sacrebleus_fields():
    hyps = ["the cat sat on the mat", "a dog", "hello there", "x y z"] * 5
    refs = [["the cat is on the mat", "the dog", "hello", "x z y"] * 5]
    score = CHRF().corpus_score(hyps, refs, n_bootstrap=50)
    assert score.mean is not None and score.ci is not None and "μ = " in str(score)
    signature = CHRF()
    signature.corpus_score(hyps, refs, n_bootstrap=50)
    assert "|bs:50|seed:12345|" in signature.get_signature().format()


def test_whitespace_alphabet_is_python_whitespace():
    """Every str.isspace() character is removed without whitespace=True, kept with it."""
    hyp = "a" + "".join(WHITESPACE) + "b"
    for whitespace in (False, True):
        ours, theirs = CHRF(whitespace=whitespace), SacreCHRF(whitespace=whitespace)
        assert ours.segment_statistics([hyp], [["a b"]]).tolist() == \
            _sacre_rows(theirs, [hyp], [["a b"]])


def test_python_lists_are_converted_a_batch_at_a_time():
    """Lists longer than a batch are converted batch by batch while the kernels run: the
    score, num_refs and every error message are those of the whole input at once."""
    import pyarrow as pa

    from fastbleu.statistics.tokens import BATCH_SIZE

    n = BATCH_SIZE + 1_000
    rng = np.random.default_rng(3)
    words = np.array(["the", "cat", "sat", "(on)", "mat.", "é", "中文", ""])
    hyps, first = random_lines(rng, words, n, 0, 8), random_lines(rng, words, n, 1, 8)
    second = [None if i % 5 else "the mat" for i in range(n)]
    for refs in ([first], [first, second]):
        listed = CHRF(word_order=2)
        score = listed.corpus_score(hyps, refs)
        arrow = CHRF(word_order=2)
        assert score.score == arrow.corpus_score(pa.array(hyps),
                                                 [pa.array(r) for r in refs]).score
        assert score.score == arrow.formula.score(
            arrow.segment_statistics(hyps, refs).sum(axis=0)).score
        assert listed.num_refs == arrow.num_refs == (1 if len(refs) == 1 else -1)
        np.testing.assert_array_equal(CHRF(word_order=2).sentence_scores(hyps, refs),
                                      arrow.sentence_scores(pa.array(hyps),
                                                            [pa.array(r) for r in refs]))
    bad = list(hyps)
    bad[BATCH_SIZE + 7] = None
    with pytest.raises(TypeError, match=f"hypotheses\\[{BATCH_SIZE + 7}\\] is None"):
        CHRF().corpus_score(bad, [first])
    holes = list(first)
    holes[BATCH_SIZE + 9] = None
    with pytest.raises(ValueError, match=f"segment {BATCH_SIZE + 9} has no reference"):
        CHRF().corpus_score(hyps, [holes, [None] * n])
    with pytest.raises(ValueError, match=f"references\\[0\\] has {n - 1} segments"):
        CHRF().corpus_score(hyps, [first[:-1]])
