"""Token ids in every integer form score alike; what is not an id is refused alike.

Ids are hashed, so any 64-bit value is a token: uint64 ids of 2**63 or more
score as any other ids (a relabelling of ids never changes BLEU), rows of
different integer dtypes may be mixed, and a bool is never an id, alone or
beside ints, in a list or an array.  A row that is a list of lists is a
one-line TypeError, not a numba typing error.
"""

from __future__ import annotations

import numpy as np
import pytest

from fastbleu import BLEU, TokenIds

BLEU4 = BLEU(effective_order=True)

HYPS = [[1, 2, 3, 4, 5], [7, 8, 9], [1, 1, 2]]
REFS = [[[1, 2, 3, 4, 6], [7, 8, 9, 10], [1, 2, 2]], [[2, 3, 4], [8, 9], [1, 1, 2, 2]]]
EXPECTED = BLEU4.corpus_score(HYPS, REFS).score
BIG = 2 ** 63  # the relabelling: id x becomes BIG + x (uint64)


def _shifted(rows, dtype=np.uint64):
    return [np.array([BIG + x for x in row], dtype=dtype) for row in rows]


def test_uint64_ids_of_2_63_or_more_are_ids():
    assert BLEU4.corpus_score(_shifted(HYPS), [_shifted(r) for r in REFS]).score == EXPECTED
    # the same as Python ints, as a 2-D array, as Arrow list<uint64>, and per sentence
    assert BLEU4.corpus_score([[BIG + x for x in row] for row in HYPS],
                              [[[BIG + x for x in row] for row in r] for r in REFS]
                              ).score == EXPECTED
    square = np.array([[BIG + 1, BIG + 2, BIG + 3]], dtype=np.uint64)
    assert BLEU4.corpus_score(square, [square]).score == pytest.approx(100)
    pa = pytest.importorskip("pyarrow")
    column = pa.array([[BIG + x for x in row] for row in HYPS], type=pa.list_(pa.uint64()))
    refs = [pa.array([[BIG + x for x in row] for row in r], type=pa.list_(pa.uint64()))
            for r in REFS]
    assert BLEU4.corpus_score(column, refs).score == EXPECTED
    scores = BLEU4.sentence_scores(_shifted(HYPS), [_shifted(r) for r in REFS])
    assert np.array_equal(scores, BLEU4.sentence_scores(HYPS, REFS))


def test_big_ids_are_not_confused_with_small_ones():
    hyp = [np.array([BIG, BIG + 1, BIG + 2], dtype=np.uint64)]
    assert BLEU4.corpus_score(hyp, [[np.array([0, 1, 2], dtype=np.uint64)]]).score == 0.0
    assert BLEU4.corpus_score(hyp, [[np.array([2 ** 64 - 1, 1], dtype=np.uint64)]]).score == 0.0


@pytest.mark.parametrize("dtypes", [(np.int64, np.uint64), (np.uint64, np.int64),
                                    (np.int32, np.uint16), (np.int8, np.uint64)])
def test_rows_of_different_integer_dtypes(dtypes):
    rows = [np.array(row, dtype=dtypes[k % 2]) for k, row in enumerate(HYPS)]
    refs = [[np.array(row, dtype=dtypes[(k + 1) % 2]) for k, row in enumerate(r)] for r in REFS]
    assert BLEU4.corpus_score(rows, refs).score == EXPECTED
    mixed = [rows[0], HYPS[1], rows[2]]  # arrays and lists side by side
    assert BLEU4.corpus_score(mixed, refs).score == EXPECTED


def test_mixed_dtypes_with_big_ids():
    rows = [np.array([BIG + x for x in HYPS[0]], dtype=np.uint64),
            np.array([BIG + x for x in HYPS[1]], dtype=np.uint64), list(map(int, HYPS[2]))]
    refs = [[np.array([BIG + x for x in r[0]], dtype=np.uint64),
             [BIG + x for x in r[1]], np.array(r[2], dtype=np.int64)] for r in REFS]
    assert BLEU4.corpus_score(rows, refs).score == EXPECTED


@pytest.mark.parametrize("hyps", [
    [[True, 5]], [[5, False]], [[True, False]], [[np.bool_(True), 5]],
    [np.array([True, False])], np.array([[True, False]]),
    [[1, 2], [True, 3]],
], ids=repr)
def test_bools_are_never_ids(hyps):
    with pytest.raises(TypeError, match="bool"):
        BLEU4.corpus_score(hyps, [[[1, 2]] * len(hyps)])
    with pytest.raises(TypeError, match="bool"):
        TokenIds(hyps)


@pytest.mark.parametrize("hyps", [[[[1, 2], [3]]], [[[1, 2], [3, 4]]], [[1, [2, 3]]],
                                  [[1.0, 2]], [["a", 2]]], ids=repr)
def test_a_row_that_is_not_ids_is_one_type_error(hyps):
    with pytest.raises(TypeError, match=r"hypotheses\[0\] holds a "):
        BLEU4.corpus_score(hyps, [[[1, 2]]])


@pytest.mark.parametrize("hyps, words", [
    ([[2 ** 64]], "do not fit in 64 bits"),
    ([[-(2 ** 63) - 1]], "do not fit in 64 bits"),
    ([np.array([-1, 2]), np.array([BIG], dtype=np.uint64)], "mixes negative ids"),
    ([[-5, 1]], "negative token id"),
], ids=repr)
def test_ids_that_cannot_be_ids_get_a_true_message(hyps, words):
    with pytest.raises(ValueError, match=words):
        BLEU4.corpus_score(hyps, [[[1, 2]] * len(hyps)])
