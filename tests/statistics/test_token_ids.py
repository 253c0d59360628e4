"""BLEU on token ids (issue 15, item 5): equal to the ids joined by spaces under tokenize='none'.

Every accepted form (Python lists, numpy values + offsets, 2-D padded arrays,
Arrow list columns, DLPack-only objects) must give exactly the statistics,
sentence scores and corpus score of the space-joined ids scored as text with
``tokenize="none"`` by fastbleu and by sacrebleu; padding and end-of-sequence
ids must act as the documented rule written here in plain Python; bad input
must fail with a message naming the argument.
"""

from __future__ import annotations

import pickle

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU, TokenIds
from fastbleu._kernels.bleu.counting import LARGE_ABOVE
from fastbleu.statistics.id_tokens import ids_to_tokens, iter_id_statistics
from fastbleu.statistics.token_ids import as_token_ids

SETTINGS = settings(max_examples=40, deadline=None)


def joined(rows):
    return [None if row is None else " ".join(str(int(t)) for t in row) for row in rows]


def text_metric(**options):
    return BLEU(tokenize="none", **options)


class DLPackOnly:
    """A tensor as torch or jax expose it to numpy: nothing but the DLPack protocol."""

    def __init__(self, array, device=(1, 0)):
        self._array, self._device = np.ascontiguousarray(array), device

    def __dlpack__(self, **kwargs):
        return self._array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self._device


# -- strategies ---------------------------------------------------------------------------

ids = st.integers(0, 5)  # a small vocabulary, so that n-grams match and repeat
row = st.lists(ids, max_size=9)


@st.composite
def corpora(draw, max_refs=3):
    n = draw(st.integers(0, 8))
    hyps = draw(st.lists(row, min_size=n, max_size=n))
    n_refs = draw(st.integers(1, max_refs))
    refs = [draw(st.lists(st.one_of(row, st.none()) if r else row, min_size=n, max_size=n))
            for r in range(n_refs)]
    return hyps, refs


options = st.fixed_dictionaries({
    "smooth_method": st.sampled_from(["exp", "floor", "add-k", "none"]),
    "effective_order": st.booleans(),
    "max_ngram_order": st.integers(1, 5),
})


# -- exactness against the space-joined text ----------------------------------------------

@SETTINGS
@given(corpus=corpora(), opts=options)
def test_lists_equal_joined_text(corpus, opts):
    hyps, refs = corpus
    ids_metric, text = BLEU(**opts), text_metric(**opts)
    stats = ids_metric.segment_statistics(hyps, refs)
    expected = text.segment_statistics(joined(hyps), [joined(r) for r in refs])
    np.testing.assert_array_equal(stats, expected)
    np.testing.assert_array_equal(ids_metric.sentence_scores(hyps, refs),
                                  text.sentence_scores(joined(hyps), [joined(r) for r in refs]))
    if hyps:
        assert str(ids_metric.corpus_score(hyps, refs)) == \
            str(text.corpus_score(joined(hyps), [joined(r) for r in refs]))
        assert ids_metric.get_signature().format() == \
            text.get_signature().format().replace("tok:none", "tok:ids")


@settings(max_examples=15, deadline=None)
@given(corpus=corpora(max_refs=2))
def test_sacrebleu_on_joined_text(corpus):
    hyps, refs = corpus
    sacre = SacreBLEU(tokenize="none", effective_order=True)
    scores = BLEU(effective_order=True).sentence_scores(hyps, refs)
    for i, hyp in enumerate(joined(hyps)):
        present = [r for r in joined([stream[i] for stream in refs]) if r is not None]
        if present:
            assert scores[i] == sacre.sentence_score(hyp, present).score


def test_long_segments_use_the_large_table():
    rng = np.random.default_rng(5)
    n = LARGE_ABOVE // 2
    hyp, ref = rng.integers(0, 50, n), rng.integers(0, 50, n)
    stats = BLEU().segment_statistics([hyp.tolist()], [[ref.tolist()], [ref[::-1].tolist()]])
    expected = text_metric().segment_statistics(joined([hyp]), [joined([ref]),
                                                                joined([ref[::-1]])])
    np.testing.assert_array_equal(stats, expected)


# -- every input form ---------------------------------------------------------------------

def padded(rows, pad, dtype=np.int64):
    width = max([len(r) for r in rows] + [1])
    out = np.full((len(rows), width), pad, dtype=dtype)
    for i, r in enumerate(rows):
        out[i, :len(r)] = r
    return out


def flat(rows, dtype=np.int64):
    values = np.array([t for r in rows for t in r], dtype=dtype)
    return values, np.cumsum([0] + [len(r) for r in rows])


def forms(rows):
    """Every way to give the same rows (no missing ones)."""
    values, offsets = flat(rows)
    arrow = pa.array(rows, type=pa.list_(pa.int32()))
    return {
        "lists": rows,
        "tuples": tuple(tuple(r) for r in rows),
        "arrays": [np.array(r, dtype=np.int16) for r in rows],
        "dlpack rows": [DLPackOnly(np.array(r, dtype=np.int64)) for r in rows],
        "values+offsets": TokenIds(values, offsets),
        "int32 values": TokenIds(values.astype(np.int32), offsets.astype(np.int32)),
        "uint16 values": TokenIds(values.astype(np.uint16), offsets),
        "offset list": TokenIds(values, offsets.tolist()),
        "offsets inside": TokenIds(np.r_[9, 9, values, 9].astype(np.int32), offsets + 2),
        "padded": TokenIds(padded(rows, 99), pad_id=99),
        "padded fortran": TokenIds(np.asfortranarray(padded(rows, 99)), pad_id=99),
        "padded int32": TokenIds(padded(rows, 99, np.int32), pad_id=99),
        "dlpack 2-D": TokenIds(DLPackOnly(padded(rows, 99)), pad_id=99),
        "dlpack 1-D": TokenIds(DLPackOnly(values), DLPackOnly(offsets)),
        "arrow": arrow,
        "arrow large": pa.array(rows, type=pa.large_list(pa.int64())),
        "arrow sliced": pa.array([[7, 7]] + rows, type=pa.list_(pa.int64())).slice(1),
        "arrow chunks": pa.chunked_array([arrow.slice(0, 2), arrow.slice(2, 0),
                                          arrow.slice(2)]),
        "nested TokenIds": TokenIds(TokenIds(padded(rows, 99)), pad_id=99),
        "object array": objects(rows),
        "pandas": pd.Series(rows),
        "pandas arrow": pd.Series(arrow, dtype=pd.ArrowDtype(arrow.type)),
        "polars": pl.Series(rows),
    }


def objects(rows):
    out = np.empty(len(rows), dtype=object)
    out[:] = [np.array(r, dtype=np.int64) for r in rows]
    return out


ROWS_H = [[1, 2, 3, 4], [], [5, 5, 5], [1, 2], [7, 8, 9, 1, 2, 3], [3]]
ROWS_R = [[1, 2, 3, 5], [4], [5, 5], [2, 1], [7, 8, 9, 1, 2], [3]]
EXPECTED = text_metric().segment_statistics(joined(ROWS_H), [joined(ROWS_R)])


@pytest.mark.parametrize("form", list(forms(ROWS_H)))
def test_every_form(form):
    bleu = BLEU()
    hyps, refs = forms(ROWS_H)[form], forms(ROWS_R)[form]
    np.testing.assert_array_equal(bleu.segment_statistics(hyps, [refs]), EXPECTED)
    assert bleu.get_signature().format().split("|")[3] == "tok:ids"


def test_plain_2d_arrays_and_batches_across_chunks():
    rng = np.random.default_rng(1)
    hyp, ref = rng.integers(0, 4, (50, 6)), rng.integers(0, 4, (50, 7))
    expected = text_metric().segment_statistics(joined(hyp), [joined(ref)])
    np.testing.assert_array_equal(BLEU().segment_statistics(hyp, [ref]), expected)
    np.testing.assert_array_equal(BLEU().segment_statistics(DLPackOnly(hyp), [DLPackOnly(ref)]),
                                  expected)
    chunked = pa.chunked_array([pa.array(ref[a:b].tolist(), pa.list_(pa.int64())) for a, b in
                                ((0, 7), (7, 7), (7, 30), (30, 50))])
    values, offsets = flat(ref, np.int32)
    inside = TokenIds(np.r_[7, values, 7], offsets + 1)
    for refs in (chunked, inside):
        rows = np.concatenate(list(iter_id_statistics(as_token_ids(hyp, "h"),
                                                      [as_token_ids(refs, "r")],
                                                      max_order=4, batch_size=4)))
        np.testing.assert_array_equal(rows, expected)


def test_python_lists_longer_than_a_batch():
    from fastbleu.statistics.tokens import BATCH_SIZE

    rows = np.arange(2 * (BATCH_SIZE + 3)).reshape(-1, 2) % 7
    hyps, refs = rows.tolist(), rows[:, ::-1].tolist()
    bleu = BLEU()
    np.testing.assert_array_equal(bleu.segment_statistics(hyps, [refs]),
                                  BLEU().segment_statistics(rows, [rows[:, ::-1]]))
    assert str(bleu.corpus_score(hyps, [refs])) == str(BLEU().corpus_score(rows, [rows[:, ::-1]]))


def test_missing_references():
    refs_b = [None, [4], None, [1, 2], None, [3, 3]]
    expected = text_metric().segment_statistics(joined(ROWS_H), [joined(ROWS_R), joined(refs_b)])
    bleu = BLEU()
    for stream in (refs_b, pa.array(refs_b, type=pa.list_(pa.int64())),
                   TokenIds(padded([r or [] for r in refs_b], 0), pad_id=0,
                            valid=[r is not None for r in refs_b])):
        np.testing.assert_array_equal(bleu.segment_statistics(ROWS_H, [ROWS_R, stream]),
                                      expected)
        assert bleu.num_refs == -1


@SETTINGS
@given(hyps=st.lists(row, max_size=6), pool=st.lists(row, min_size=2, max_size=6),
       opts=options)
def test_pool_and_self_scores_of_ids(hyps, pool, opts):
    ids_metric, text = BLEU(**opts), text_metric(**opts)
    np.testing.assert_array_equal(ids_metric.pool_statistics(hyps, TokenIds(pool)),
                                  text.pool_statistics(joined(hyps), joined(pool)))
    np.testing.assert_array_equal(ids_metric.self_scores(pool),
                                  text.self_scores(joined(pool)))
    assert ids_metric.input_tokenizer_signature == "ids"


def test_pool_refuses_text_with_ids():
    with pytest.raises(TypeError, match="must both be text or both token ids"):
        BLEU().pool_scores([[1, 2]], ["1 2"])


# -- padding and end of sequence ----------------------------------------------------------

PAD, EOS = 0, 1


def cleaned(r, pad, eos):
    """The documented rule: skip leading pads, end at the first eos after them, drop pads."""
    r = list(r)
    while pad is not None and r and r[0] == pad:
        r.pop(0)
    if eos is not None and eos in r:
        r = r[:r.index(eos)]
    return [t for t in r if t != pad]


@SETTINGS
@given(corpus=corpora(max_refs=2), pad=st.sampled_from([None, PAD]),
       eos=st.sampled_from([None, EOS, PAD]))
def test_pad_and_eos(corpus, pad, eos):
    hyps, refs = corpus
    refs = [[r or [] for r in stream] for stream in refs]
    bleu = BLEU()
    got = bleu.segment_statistics(TokenIds(hyps, pad_id=pad, eos_id=eos),
                                  [TokenIds(padded(r, PAD), pad_id=pad, eos_id=eos) if pad
                                   is not None else TokenIds(r, eos_id=eos) for r in refs])
    expected = text_metric().segment_statistics(
        joined([cleaned(h, pad, eos) for h in hyps]),
        [joined([cleaned(r, pad, eos) for r in stream]) for stream in refs])
    np.testing.assert_array_equal(got, expected)


def test_label_padding_is_dropped_not_refused():
    labels = np.array([[4, 5, 6, -100], [4, -100, -100, -100]])
    scores = BLEU(effective_order=True).sentence_scores([[4, 5, 6], [4]],
                                                        [TokenIds(labels, pad_id=-100)])
    np.testing.assert_array_equal(scores, text_metric(effective_order=True).sentence_scores(
        ["4 5 6", "4"], [["4 5 6", "4"]]))


# -- signature, accumulator, tokens -------------------------------------------------------

def test_signature_follows_the_last_input():
    bleu = BLEU()
    bleu.corpus_score(ROWS_H, [ROWS_R])
    assert "tok:ids" in bleu.get_signature().format()
    bleu.corpus_score(["a b"], [["a b"]])
    assert "tok:13a" in bleu.get_signature().format()


def test_accumulator_of_ids():
    acc = BLEU().accumulator().update(ROWS_H[:3], [ROWS_R[:3]])
    other = pickle.loads(pickle.dumps(BLEU().accumulator().update(ROWS_H[3:], [ROWS_R[3:]])))
    acc.merge(other)
    assert str(acc.score()) == str(BLEU().corpus_score(ROWS_H, [ROWS_R]))
    assert "tok:ids" in pickle.loads(pickle.dumps(acc)).signature().format()
    with pytest.raises(ValueError, match="token ids and text do not mix"):
        acc.update(["1 2"], [["1 2"]])


def test_ids_to_tokens():
    tokens = ids_to_tokens(TokenIds([[3, 0, 4, 3], [0, 0]], pad_id=0))
    np.testing.assert_array_equal(tokens.count, [3, 0])
    first = tokens.hashes[tokens.start[0]:tokens.start[0] + 3]
    assert first[0] == first[2] != first[1]
    refs = ids_to_tokens([[1], None], "references[0]", allow_null=True)
    np.testing.assert_array_equal(refs.count, [1, -1])


# -- validation ---------------------------------------------------------------------------

@pytest.mark.parametrize("hyps, refs, error, message", [
    (np.ones((2, 3)), [np.ones((2, 3), dtype=int)], TypeError, "hypotheses must hold integer"),
    ([[1, 2]], [[[1.5, 2]]], TypeError, r"references\[0\]\[0\] holds a float"),
    ([[1, 2]], [[["a", "b"]]], TypeError, r"references\[0\]\[0\] holds a str"),
    ([[1, -2]], [[[1]]], ValueError, "hypotheses: segment 0 holds a negative token id"),
    ([[1], [2]], [[[1]]], ValueError, r"references\[0\] has 1 segments but the hypotheses"),
    (TokenIds(np.arange(4), [0, 1, 2]), [[[1], [2], [3]]], ValueError,
     r"references\[0\] has 3 segments"),
    (np.zeros((2, 2, 2), dtype=int), [[[1], [2]]], ValueError, "hypotheses must be a 2-D"),
    (np.arange(3), [[[1]]], TypeError, "hypotheses is a 1-D array of dtype int64"),
    ([[1], None], [[[1], [2]]], ValueError, r"hypotheses\[1\] is missing"),
    ([[1]], [["1"]], TypeError, r"references\[0\] must be token ids"),
    ([[1]], [[1]], TypeError, r"references\[0\] must be token ids.*write \[refs\]"),
    ([[1]], [[[1], 2]], TypeError, r"references\[0\]\[1\] is int:"),
    ([[1]], np.ones((1, 1, 1), dtype=int), TypeError, "references must be a list"),
    (["1"], [[[1]]], TypeError, r"references\[0\] holds token ids but the hypotheses are text"),
    (DLPackOnly(np.ones((1, 2), dtype=int), (10, 0)), [[[1]]], ValueError,  # ROCm: not ours
     "hypotheses is on DLPack device"),
])
def test_bad_input(hyps, refs, error, message):
    with pytest.raises(error, match=message):
        BLEU().segment_statistics(hyps, refs)


@pytest.mark.parametrize("make, error, message", [
    (lambda: TokenIds(np.arange(5), [0, 3, 2, 5]), ValueError,
     r"non-decreasing: offsets\[1\] = 3 > offsets\[2\] = 2"),
    (lambda: TokenIds(np.arange(5), [0, 6]), ValueError, "offsets must lie in 0 .. len"),
    (lambda: TokenIds(np.arange(5.0), [0, 5]), TypeError, "values must hold integer"),
    (lambda: TokenIds(np.arange(4).reshape(2, 2), [0, 2]), ValueError, "values must be 1-D"),
    (lambda: TokenIds([[1]], pad_id=1.0), TypeError, "pad_id must be an int"),
    (lambda: TokenIds([[1]], valid=[1]), ValueError, "valid must be a bool array"),
    (lambda: TokenIds(pa.array([["a"]])), TypeError, "Arrow list<int> column"),
    (lambda: TokenIds(pa.array([[1, None]])), ValueError, "null ids inside a list"),
])
def test_bad_token_ids(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_lowercase_and_cached_text_references_are_refused():
    with pytest.raises(ValueError, match="lowercase=True does not apply to token ids"):
        BLEU(lowercase=True).corpus_score(ROWS_H, [ROWS_R])
    with pytest.raises(TypeError, match="cached by the metric's constructor are text only"):
        BLEU(references=[["a"] * len(ROWS_H)]).corpus_score(ROWS_H, None)
    with pytest.raises(TypeError, match="only text references are cached"):
        BLEU(references=[ROWS_R])


def test_cuda_ids_on_a_machine_without_a_gpu_are_one_clear_error():
    """A CUDA array goes to the GPU path (fastbleu.gpu); without a GPU that is one line
    naming what to do, not a traceback from deep inside numba."""
    from fastbleu.gpu import GPUUnavailable

    cuda_ids = DLPackOnly(np.ones((1, 2), dtype=int), (2, 0))  # DLPack's kDLCUDA
    try:
        from fastbleu._kernels.cuda.loader import cuda

        if cuda.is_available():
            pytest.skip("a GPU is here: the GPU tests cover CUDA ids")
    except GPUUnavailable:
        pass
    with pytest.raises(GPUUnavailable) as raised:
        BLEU().sentence_scores(cuda_ids, [cuda_ids])
    assert len(str(raised.value).splitlines()) == 1 and "CUDA" in str(raised.value)
