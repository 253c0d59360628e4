"""TER against sacrebleu 2.6: the shift search on text built to provoke shifts, the Tercom
tokenizer on nasty text for every option, the float32 arithmetic of sacrebleu's
resampling, and the API's refusals."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sacrebleu.metrics import TER as SacreTER
from sacrebleu.metrics.lib_ter import translation_edit_rate
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

import fastbleu
from fastbleu import TER
from fastbleu._kernels.ter.shifts import MAX_SHIFT_CANDIDATES, new_scratch, translation_edits
from fastbleu.metrics import get_metric
from fastbleu.metrics.ter.formula import TERFormula
from fastbleu.tokenizers.tercom import tercom_line
from testkit.text import corpora, examples, line
from testkit.marks import quick_and_full, slow

ter_options = st.fixed_dictionaries({
    "normalized": st.booleans(),
    "no_punct": st.booleans(),
    "asian_support": st.booleans(),
    "case_sensitive": st.booleans(),
})

#: Text for the Tercom rules: entities, punctuation around digits, possessives, CJK
#: ideographs, kana runs, CJK and full-width punctuation, and mixed case.
TERCOM_PIECES = ["&quot;", "&amp;", "&amp;lt;", "&lt;", "&gt;", "'s", "'S", "1.5", "1,000",
                 "3-4", "a-b", "x.", ".y", ",", "(a)", "[b]", "{c}", "\n-", "\n", "漢字",
                 "中文。", "ひらがな", "カタカナ", "ㇰㇱ", "、", "「」", "．", "，", "？",
                 "！", "（）", "㈱", "\u3300", "\uf900", "Ǆ", "İ", "ΣΑΣ", "ß", "e\u0301"]
tercom_text = st.lists(st.one_of(st.sampled_from(TERCOM_PIECES), line),
                       max_size=8).map(" ".join)


def _ids(words, vocabulary):
    return np.array([vocabulary.setdefault(w, len(vocabulary)) for w in words], np.uint64)


def _edits(hyp: list[str], ref: list[str]) -> int:
    vocabulary = {}
    return translation_edits(_ids(hyp, vocabulary), _ids(ref, vocabulary),
                             new_scratch(len(hyp), len(ref)))


@st.composite
def shifted_pairs(draw):
    """A reference and a hypothesis made from it by moving, repeating and replacing blocks
    over a small vocabulary (many equal words: many candidate shifts and ties)."""
    vocabulary = draw(st.integers(2, 8))
    word = st.integers(0, vocabulary - 1).map(str)
    ref = draw(st.lists(word, max_size=40))
    hyp = list(ref)
    for _ in range(draw(st.integers(0, 4))):
        if not hyp:
            break
        a = draw(st.integers(0, len(hyp) - 1))
        b = draw(st.integers(a, min(len(hyp), a + 12)))
        block, rest = hyp[a:b], hyp[:a] + hyp[b:]
        at = draw(st.integers(0, len(rest)))
        kind = draw(st.sampled_from(["move", "repeat", "replace", "drop"]))
        if kind == "move":
            hyp = rest[:at] + block + rest[at:]
        elif kind == "repeat":
            hyp = hyp[:b] + block + hyp[b:]
        elif kind == "replace":
            hyp = hyp[:a] + draw(st.lists(word, max_size=3)) + hyp[b:]
        else:
            hyp = rest
    if draw(st.booleans()):
        hyp, ref = ref, hyp
    return hyp, ref


@examples(400)
@given(shifted_pairs())
def test_shift_search_equals_sacrebleu(pair):
    hyp, ref = pair
    assert _edits(hyp, ref) == translation_edit_rate(hyp, ref)[0]


# 60-60 (five seconds of sacrebleu's search) runs with -m slow (issue 28).
@pytest.mark.parametrize("hyp_length, ref_length", [slow(60, 60), (120, 45), (45, 120),
                                                    (3, 160), (160, 3)])
def test_long_and_unequal_lengths_equal_sacrebleu(hyp_length, ref_length):
    """Past the shift size, distance and candidate limits, and with a band wider than
    the default (length ratio above 50)."""
    rng = np.random.default_rng(hyp_length * 1000 + ref_length)
    for vocabulary in (3, 12):
        ref = [str(w) for w in rng.integers(0, vocabulary, ref_length)]
        hyp = list(ref[:hyp_length]) + [str(w) for w in
                                         rng.integers(0, vocabulary, max(0, hyp_length -
                                                                         ref_length))]
        hyp = hyp[hyp_length // 2:] + hyp[:hyp_length // 2]  # one big swap
        assert _edits(hyp, ref) == translation_edit_rate(hyp, ref)[0]


def test_the_candidate_limit_is_reached_and_honoured(monkeypatch):
    """A repetitive pair whose search reaches MAX_SHIFT_CANDIDATES: sacrebleu then drops
    the best shift of that search, and so must we."""
    import sacrebleu.metrics.lib_ter as lib_ter

    hyp = "b a b b b b a b a b a b a b b a a b a b b b a b a".split()
    ref = "b a b b a a b a b b b a b a b a b b b b a b a b a".split()
    expected = translation_edit_rate(hyp, ref)[0]
    assert _edits(hyp, ref) == expected == 7
    monkeypatch.setattr(lib_ter, "_MAX_SHIFT_CANDIDATES", 1100)
    assert translation_edit_rate(hyp, ref)[0] == 3  # the limit decided this one
    assert MAX_SHIFT_CANDIDATES == 1000


def test_empty_sides():
    assert _edits([], []) == translation_edit_rate([], [])[0] == 0
    assert _edits(["a", "b"], []) == 2
    assert _edits([], ["a", "b", "c"]) == translation_edit_rate([], ["a", "b", "c"])[0] == 3


def _tercom_tokenizer_equals_sacrebleu(text, options):
    theirs = TercomTokenizer(**options)
    ours = TER(**options)
    lowered = text if options["case_sensitive"] else text.lower()
    expected = theirs(text.rstrip())
    assert tercom_line(lowered.rstrip(), options["normalized"], options["no_punct"],
                       options["asian_support"]) == expected
    # and through the whole pipeline: the sentence's statistics against itself
    assert ours.segment_statistics([text], [[expected]])[0, 0] == \
        SacreTER(**options)._extract_corpus_statistics([text], [[expected]])[0][0]


def _tercom_tokenizer_at(size):
    return examples(size)(given(tercom_text, ter_options)(_tercom_tokenizer_equals_sacrebleu))


# 60 examples in the quick run, 200 with -m slow (issue 28).
test_tercom_tokenizer_equals_sacrebleu, test_tercom_tokenizer_equals_sacrebleu_full = \
    quick_and_full(_tercom_tokenizer_at, 60, 200)


def _statistics_and_scores(corpus, options):
    hyps, streams = corpus
    ours, theirs = TER(**options), SacreTER(**options)
    stats = ours.segment_statistics(hyps, streams)
    expected = theirs._extract_corpus_statistics(hyps, streams)
    assert stats[:, 0].tolist() == [row[0] for row in expected]
    assert (stats[:, 1] / 720720).tolist() == [row[1] for row in expected]
    sentence = ours.sentence_scores(hyps, streams)
    for i, hyp in enumerate(hyps):
        refs = [s[i] for s in streams]
        want = theirs.sentence_score(hyp, refs)
        assert sentence[i] == want.score
        assert str(ours.sentence_score(hyp, refs)) == str(want)
    ours_corpus, theirs_corpus = ours.corpus_score(hyps, streams), \
        theirs.corpus_score(hyps, streams)
    assert ours_corpus.score == pytest.approx(theirs_corpus.score, rel=1e-13, abs=1e-13)
    assert ours_corpus.num_edits == theirs_corpus.num_edits
    assert ours.get_signature().format().rsplit("|", 1)[0] == \
        theirs.get_signature().format().rsplit("|", 1)[0]
    assert ours.get_signature().format(short=True).rsplit("|", 1)[0] == \
        theirs.get_signature().format(short=True).rsplit("|", 1)[0]


def _statistics_and_scores_at(size):
    drawn = given(corpora(max_segments=4, text=tercom_text), ter_options)
    return examples(size)(drawn(_statistics_and_scores))


# 50 examples in the quick run, 150 with -m slow (issue 28).
test_statistics_and_scores_equal_sacrebleu, test_statistics_and_scores_equal_sacrebleu_full = \
    quick_and_full(_statistics_and_scores_at, 50, 150)


def test_three_references_average_and_fewest_edits():
    hyps = ["the cat sat on the mat", "", "a b c d", "x y"]
    refs = [["the mat sat on the cat", "a", "d c b a", None],
            ["on the mat the cat sat", "", "a b c d e", "x"],
            ["cat", "b c", "a b", "y x y"]]
    ours, theirs = TER(), SacreTER()
    assert ours.corpus_score(hyps, refs).score == pytest.approx(
        theirs.corpus_score(hyps, refs).score, rel=1e-14)
    assert str(ours.get_signature()).startswith("nrefs:var|")
    for i, hyp in enumerate(hyps):
        assert ours.sentence_score(hyp, [r[i] for r in refs]).score == \
            theirs.sentence_score(hyp, [r[i] for r in refs]).score


def test_cached_references_and_several_systems():
    refs = [["the cat sat on the mat", "a b c"], ["on the mat sat the cat", "c b a"]]
    cached, plain = TER(references=refs), TER()
    for hyps in (["the cat on the mat sat", "a c b"], ["mat the", ""]):
        assert cached.corpus_score(hyps, None).score == plain.corpus_score(hyps, refs).score
    with pytest.raises(ValueError, match="cached references have 2 segments"):
        cached.corpus_score(["a"], None)
    with pytest.raises(RuntimeError, match="cache is empty"):
        TER().corpus_score(["a"], None)


def test_bootstrap_and_float32_sums_equal_sacrebleu():
    from sacrebleu.significance import _bootstrap_resample

    from fastbleu.significance.resampling import bootstrap_scores

    hyps = ["the cat sat on the mat", "a b c", "x y z w", "", "one two three"] * 7
    refs = [["the mat sat on the cat", "c b a", "x z y", "q", "one three two four"] * 7,
            ["on the mat the cat sat", "a b", "w x y z", "", "two"] * 7,
            ["cat mat", "a", "x", "r s", "three"] * 7]
    theirs = SacreTER()
    stats = theirs._extract_corpus_statistics(hyps, refs)
    theirs.n_bootstrap = 50
    expected = _bootstrap_resample(stats, theirs, 50)
    ours = TER().segment_statistics(hyps, refs)
    rng = np.random.default_rng(12345)  # sacrebleu's default seed
    got = bootstrap_scores([ours], TERFormula(), 50, rng, sacrebleu_compat=True)[0]
    want = np.array([s.score for s in expected[1]])
    assert got.tolist() == want.astype(np.float64).tolist()


def test_corpus_score_with_confidence_prints_as_sacrebleu():
    hyps = ["the cat sat on the mat", "a b c", "x y z w", "one two three"] * 5
    refs = [["the mat sat on the cat", "c b a", "x z y", "one three two four"] * 5]
    ours = TER().corpus_score(hyps, refs, n_bootstrap=100)
    theirs = SacreTER().corpus_score(hyps, refs, n_bootstrap=100)
    assert str(ours) == str(theirs)


def test_formula_scores_and_edges():
    formula = TERFormula()
    assert formula.score([0, 0]).score == 0.0
    assert formula.score([3, 0]).score == 100.0
    assert formula.score([1, 4 * 720720]).score == 25.0
    rows = np.array([[0, 0], [3, 0], [1, 4 * 720720], [2, 720720 * 3 // 3]])
    assert formula.scores(rows).tolist() == [formula.score(r).score for r in rows]
    assert formula == TERFormula() and pickle.loads(pickle.dumps(formula)) == formula
    with pytest.raises(ValueError, match="negative"):
        formula.score([-1, 5])
    with pytest.raises(ValueError, match="2 columns|columns"):
        formula.scores(np.zeros((2, 3), dtype=np.int64))
    with pytest.raises(TypeError):
        formula.score(["a", "b"])


def test_refusals():
    with pytest.raises(ValueError, match="segment 0 has no reference"):
        TER().corpus_score(["a"], [[None]])
    with pytest.raises(TypeError, match="hypotheses"):
        TER().corpus_score([1], [["a"]])
    with pytest.raises(ValueError):
        TER().corpus_score(["a", "b"], [["a"]])


def test_a_segment_too_long_is_refused_with_its_number():
    big = " ".join(["w"] * 9000)
    with pytest.raises(ValueError, match="segment 1: too long for TER"):
        TER().corpus_score(["a", big], [["a", big]])


def test_empty_corpus_and_metric_seam():
    assert TER().corpus_score([], [[]]).score == 0.0
    metric = get_metric("ter", case_sensitive=True, no_punct=True)
    assert metric.options() == {"normalized": False, "no_punct": True, "asian_support": False,
                                "case_sensitive": True}
    assert get_metric("ter", **metric.options()).options() == metric.options()
    assert isinstance(fastbleu.TER(), TER)
    assert TER().sentence_scores(["a b", "b a"], [["a b", "a b"]]).tolist() == [0.0, 50.0]
