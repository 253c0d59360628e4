"""Pairwise chrF and BLEU matrices (MBR) against a loop of sacrebleu 2.6 sentence scores:
real WMT22 outputs of several systems for one source, random nasty text for every option,
Arrow input, ragged sources, and the refusals."""

from __future__ import annotations

import functools

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU as SacreBLEU, CHRF as SacreCHRF

from fastbleu import pairwise
from fastbleu.pairwise import bleu_matrix, chrf_matrix
from testkit.data import WMT22_TOKENIZER, needs_wmt22, read_lines, wmt22_system, wmt22_systems
from testkit.text import examples, line
from testkit.text import chrf_options
from testkit.marks import quick_and_full


def _loop(metric, candidates, references=None):
    """The matrices as a loop of sacrebleu sentence scores (a list of 2-D arrays)."""
    references = candidates if references is None else references
    return [np.array([[metric.sentence_score(c, [r]).score for r in refs] for c in cands],
                     dtype=np.float64).reshape(len(cands), len(refs))
            for cands, refs in zip(candidates, references)]


def _assert_equal(got, expected):
    assert len(got) == len(expected)
    for s, (a, b) in enumerate(zip(got, expected)):
        a = np.asarray(a)
        assert a.shape == b.shape, f"source {s}"
        if not np.array_equal(a, b):
            i, j = np.argwhere(a != b)[0]
            raise AssertionError(f"source {s}, pair ({i}, {j}): {a[i, j]!r} != {b[i, j]!r}")


def _padded(got, expected):
    """``got`` (padded array) holds each of ``expected`` in its corner, NaN elsewhere."""
    assert got.dtype == np.float64 and got.shape[0] == len(expected)
    for s, b in enumerate(expected):
        n, m = b.shape
        assert np.array_equal(got[s, :n, :m], b), f"source {s}"
        assert np.isnan(got[s, n:, :]).all() and np.isnan(got[s, :, m:]).all()


CHRF_OPTIONS = [{}, {"word_order": 2}, {"eps_smoothing": True},
                {"char_order": 4, "beta": 1, "lowercase": True, "whitespace": True},
                {"char_order": 0, "word_order": 3}]
BLEU_OPTIONS = [{}, {"effective_order": True}, {"smooth_method": "floor", "lowercase": True},
                {"smooth_method": "add-k", "max_ngram_order": 2, "tokenize": "intl"}]


# -- real text ------------------------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def _wmt22_sources(pair: str, segments: tuple[int, ...]) -> list[list[str]]:
    """For each segment: the outputs of every system of the pair (the MBR candidates)."""
    systems = [read_lines(wmt22_system(pair, name)) for name in wmt22_systems(pair)]
    return [[system[i] for system in systems] for i in segments]


@needs_wmt22
@pytest.mark.parametrize("pair", ["de-en", "en-zh"])
def test_wmt22_matrices_equal_sacrebleu(pair):
    sources = _wmt22_sources(pair, (0, 7, 100, 501, 1500))
    others = [list(reversed(s))[:5] + s[:1] for s in sources]  # some shared, some not
    for options in CHRF_OPTIONS[:3]:
        metric = SacreCHRF(**options)
        _assert_equal(chrf_matrix(sources, **options), _loop(metric, sources))
        _assert_equal(chrf_matrix(sources, others, **options), _loop(metric, sources, others))
    tokenize = WMT22_TOKENIZER.get(pair.split("-")[1], "13a")
    for options in ({"tokenize": tokenize}, {"tokenize": tokenize, "effective_order": True}):
        metric = SacreBLEU(**options)
        _assert_equal(bleu_matrix(sources, **options), _loop(metric, sources))
        _assert_equal(bleu_matrix(sources, others, **options), _loop(metric, sources, others))


# -- random nasty text ------------------------------------------------------------------------

bleu_options = st.fixed_dictionaries({
    "tokenize": st.sampled_from(["13a", "none", "char", "intl", "zh"]),
    "lowercase": st.booleans(),
    "smooth_method": st.sampled_from(["none", "floor", "add-k", "exp"]),
    "max_ngram_order": st.integers(1, 5),
    "effective_order": st.booleans(),
})


@st.composite
def jobs(draw, text=line):
    """Sources of candidates and references; each reference drawn from the source's own
    candidates or new text (MBR's pseudo-references are often the candidates), sizes vary."""
    n_sources = draw(st.integers(1, 3))
    candidates, references = [], []
    for _ in range(n_sources):
        cands = draw(st.lists(text, min_size=1, max_size=5))
        refs = draw(st.lists(st.one_of(st.sampled_from(cands), text), min_size=1, max_size=5))
        candidates.append(cands)
        references.append(refs)
    return candidates, references


def _chrf_matrices_equal_sacrebleu(job, options):
    candidates, references = job
    metric = SacreCHRF(**options)
    expected = _loop(metric, candidates, references)
    _assert_equal(chrf_matrix(candidates, references, ragged=True, **options), expected)
    _padded(chrf_matrix(candidates, references, **options), expected)
    _assert_equal(chrf_matrix(candidates, ragged=True, **options), _loop(metric, candidates))


def _chrf_matrices_at(size):
    return examples(size)(given(jobs(), chrf_options)(_chrf_matrices_equal_sacrebleu))


# 40 examples in the quick run, 120 with -m slow (issue 28).
test_chrf_matrices_equal_sacrebleu, test_chrf_matrices_equal_sacrebleu_full = \
    quick_and_full(_chrf_matrices_at, 40, 120)


@examples(80)
@given(jobs(), bleu_options)
def test_bleu_matrices_equal_sacrebleu(job, options):
    candidates, references = job
    metric = SacreBLEU(**options)
    expected = _loop(metric, candidates, references)
    _assert_equal(bleu_matrix(candidates, references, ragged=True, **options), expected)
    _assert_equal(bleu_matrix(candidates, ragged=True, **options), _loop(metric, candidates))


@examples(40)
@given(st.lists(line, min_size=1, max_size=3), st.integers(2, 8), chrf_options)
def test_repeated_text(pieces, repeat, options):
    """Long repetitive sentences: counts above 1 (several bits per n-gram) and long
    shared n-grams; duplicates among the candidates."""
    cands = [p * repeat for p in pieces] + [pieces[0] * (repeat + 1), pieces[0] * repeat]
    expected = _loop(SacreCHRF(**options), [cands])
    _assert_equal(chrf_matrix([cands], ragged=True, **options), expected)


def test_many_sources_in_several_batches(monkeypatch):
    """Batches of sources (a small batch size here) give the same matrices as one."""
    candidates = [[f"the cat {i} sat", f"a cat {i} sat down", "the mat"] for i in range(30)]
    references = [[f"the cat {i}", "cats"] for i in range(30)]
    whole = chrf_matrix(candidates, references)
    monkeypatch.setattr(pairwise, "BATCH_SEGMENTS", 7)
    assert np.array_equal(chrf_matrix(candidates, references), whole)
    assert np.array_equal(chrf_matrix(candidates), chrf_matrix(candidates, candidates))
    _assert_equal(whole, _loop(SacreCHRF(), candidates, references))


# -- inputs ---------------------------------------------------------------------------------

CANDS = [["The cat sat on the mat.", "A cat sat.", "The cat sat on the mat."],
         ["Hello world", "héllo wörld 🙂"]]
REFS = [["The cat is on the mat.", "A cat sat."], ["Hello, world!"]]


def test_arrow_list_columns():
    expected = chrf_matrix(CANDS, REFS)
    for kind in (pa.list_(pa.string()), pa.large_list(pa.large_string())):
        c, r = pa.array(CANDS, kind), pa.array(REFS, kind)
        assert np.array_equal(chrf_matrix(c, r), expected, equal_nan=True)
        assert np.array_equal(chrf_matrix(pa.chunked_array([c[:1], c[1:]]), r), expected,
                              equal_nan=True)
        assert np.array_equal(bleu_matrix(c, r), bleu_matrix(CANDS, REFS), equal_nan=True)
    sliced = pa.array([["x"]] + CANDS, pa.list_(pa.string()))[1:]  # an offset into the values
    assert np.array_equal(chrf_matrix(sliced, REFS), expected, equal_nan=True)
    fixed = pa.array([["a b", "a c"], ["b", "c"]], pa.list_(pa.string(), 2))
    assert np.array_equal(chrf_matrix(fixed), chrf_matrix([["a b", "a c"], ["b", "c"]]))


def test_ragged_padding_and_lists():
    padded = chrf_matrix(CANDS, REFS)
    assert padded.shape == (2, 3, 2)
    assert np.isnan(padded[1, 2, :]).all() and np.isnan(padded[1, :, 1]).all()
    listed = chrf_matrix(CANDS, REFS, ragged=True)
    assert [m.shape for m in listed] == [(3, 2), (2, 1)]
    _assert_equal(listed, _loop(SacreCHRF(), CANDS, REFS))
    assert chrf_matrix([]).shape == (0, 0, 0) and chrf_matrix([], ragged=True) == []
    same = chrf_matrix(np.array([["a b", "a c"], ["b c", "c"]]))  # a 2-D numpy array
    assert same.shape == (2, 2, 2) and not np.isnan(same).any()


def test_self_matrix_is_the_candidates_against_themselves():
    assert np.array_equal(chrf_matrix(CANDS), chrf_matrix(CANDS, CANDS), equal_nan=True)
    diagonal = chrf_matrix([["abc def", "xyz", ""]])[0].diagonal()
    assert diagonal.tolist() == [100.0, 100.0, 0.0]  # as sacrebleu: empty vs empty is 0


@pytest.mark.parametrize("candidates, references, error, message", [
    ("a b", None, TypeError, "candidates must be a list of sources"),
    (["a b"], None, TypeError, r"candidates\[0\] must be a list of strings, got str"),
    ([["a"], ["b", 3]], None, TypeError, r"candidates\[1\]\[1\] is int, not str$"),
    ([["a"], [None]], None, TypeError, r"candidates\[1\]\[0\] is None, not str$"),
    ([["a"], []], None, ValueError, r"candidates\[1\] is empty"),
    ([["a"], ["b"]], [["a"]], ValueError, "candidates have 2 sources but references have 1"),
    ([["a"]], [[b"a"]], TypeError, r"references\[0\]\[0\] is bytes, not str$"),
    ([["a"]], [["a", None]], TypeError, r"references\[0\]\[1\] is None"),
    (pa.array([["a"], None], pa.list_(pa.string())), None, TypeError,
     r"candidates\[1\] is null"),
    (pa.array(["a", "b"]), None, TypeError, "must be a list<string> column"),
    (pa.array([[1]], pa.list_(pa.int64())), None, TypeError, "must be a list<string> column"),
])
def test_hostile_inputs(candidates, references, error, message):
    for fn in (chrf_matrix, bleu_matrix):
        with pytest.raises(error, match=message):
            fn(candidates, references)


def test_options_are_checked():
    with pytest.raises(ValueError, match="char_order and word_order are both 0"):
        chrf_matrix(CANDS, char_order=0)
    with pytest.raises(ValueError, match="beta"):
        chrf_matrix(CANDS, beta=float("nan"))
    with pytest.raises(ValueError, match="smooth_method"):
        bleu_matrix(CANDS, smooth_method="nope")
    with pytest.raises(TypeError, match="unexpected keyword"):
        bleu_matrix(CANDS, spm=True)
    with pytest.raises(TypeError):
        chrf_matrix(CANDS, REFS, True)  # options are keyword-only


def test_chrf0_matrix_equals_sacrebleu_chrf0():
    """beta=0 (precision-only chrF, which sacrebleu scores) in the MBR matrix as well."""
    import sacrebleu

    cands = [["The cat sat on the mat.", "A cat sat.", "x"]]
    refs = [["The cat is on the mat.", "A cat sat.", ""]]
    found = np.asarray(chrf_matrix(cands, refs, beta=0)[0])
    sacre = sacrebleu.metrics.CHRF(beta=0)
    expected = [[sacre.sentence_score(c, [r]).score for r in refs[0]] for c in cands[0]]
    np.testing.assert_array_equal(found, expected)
