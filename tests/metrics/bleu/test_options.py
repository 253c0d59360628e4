"""Options beyond sacrebleu: the brevity penalty's reference length and n-gram weights."""

from __future__ import annotations

import math

import pyarrow as pa
import pytest
from nltk.translate.bleu_score import corpus_bleu as nltk_corpus_bleu
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU, score_table

# Hypothesis lengths 9 and 4; their references 3 & 10 tokens and 6 & 2 tokens.
HYPS = ["a b c d e f g h i", "a b c d"]
REFS = [["a b c", "a b c d e f"], ["a b c d e f g h i j", "a b"]]
# closest: 10 (|9-10| < |9-3|) and 2 (|4-6| = |4-2|, ties to the shorter)
# shortest: 3 and 2;  average: 6.5 and 4
EXPECTED_REF_LEN = {"closest": 12, "shortest": 5, "average": 10.5}


@pytest.mark.parametrize("ref_length", ["closest", "shortest", "average"])
def test_reference_length_choices(ref_length):
    bleu = BLEU(ref_length=ref_length, smooth_method="none")
    score = bleu.corpus_score(HYPS, REFS)
    assert score.ref_len == EXPECTED_REF_LEN[ref_length]
    assert score.sys_len == 13
    r, c = EXPECTED_REF_LEN[ref_length], 13
    assert score.bp == (math.exp(1 - r / c) if c < r else 1.0)
    expected = score.bp * math.exp(sum(math.log(p) for p in score.precisions) / 4)
    assert score.score == pytest.approx(expected, rel=1e-15)
    signature = bleu.get_signature().format()
    assert ("reflen:" in signature) == (ref_length != "closest")
    if ref_length != "closest":
        assert f"|reflen:{ref_length}|" in signature
        assert f"|rl:{ref_length}|" in bleu.get_signature().format(short=True)


def test_closest_is_sacrebleu():
    assert BLEU(ref_length="closest").corpus_score(HYPS, REFS).score == \
        SacreBLEU().corpus_score(HYPS, REFS).score


def test_average_with_missing_references_is_exact():
    hyps = ["x y z", "x y z", "x"]
    refs = [["x y z w", "x y", "x y z"], [None, "x y z w v", "x"], [None, None, "x y"]]
    # per segment: 4 | (2+5)/2 = 3.5 | (3+1+2)/3 = 2
    assert BLEU(ref_length="average").corpus_score(hyps, refs).ref_len == 9.5
    too_many = [["a"]] * 17
    with pytest.raises(ValueError, match="at most 16 references"):
        BLEU(ref_length="average").corpus_score(["a"], too_many)


def test_weights_equal_nltk():
    hyps = ["the cat sat on the mat today", "a dog barked at the cat on the mat"]
    refs = [["the cat is on the mat today", "a dog was barking at the cat on a mat"]]
    nltk_refs = [[r.split()] for r in refs[0]]
    nltk_hyps = [h.split() for h in hyps]
    for weights in [(0.25,) * 4, (0.5, 0.5, 0, 0), (0.4, 0.3, 0.2, 0.1), (1, 0, 0, 0)]:
        ours = BLEU(tokenize="none", smooth_method="none", weights=weights).corpus_score(hyps, refs)
        theirs = nltk_corpus_bleu(nltk_refs, nltk_hyps, weights=weights)
        assert ours.score / 100 == pytest.approx(theirs, rel=1e-12)


def test_weights_are_named_in_the_signature():
    bleu = BLEU(weights=(0.4, 0.3, 0.2, 0.1))
    bleu.corpus_score(HYPS, REFS)
    assert "|weights:0.4,0.3,0.2,0.1|" in bleu.get_signature().format()
    assert "|w:0.4,0.3,0.2,0.1|" in bleu.get_signature().format(short=True)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"ref_length": "longest"}, ValueError, "unknown ref_length 'longest'"),
    ({"weights": (0.5, 0.5)}, ValueError, "weights has 2 values but max_ngram_order is 4"),
    ({"weights": (0, 0, 0, 0)}, ValueError, "at least one of them positive"),
    ({"weights": (-1, 1, 1, 1)}, ValueError, "non-negative"),
    ({"weights": 0.25}, TypeError, "sequence of numbers"),
])
def test_bad_options(kwargs, error, message):
    with pytest.raises(error, match=message):
        BLEU(**kwargs)


def test_options_reach_tables():
    table = pa.table({"hyp": HYPS, "ref": [r[0] for r in REFS], "ref2": [r[1] for r in REFS]})
    result = score_table(table, refs=["ref", "ref2"], ref_length="average",
                         weights=(0.4, 0.3, 0.2, 0.1), smooth_method="floor")
    expected = BLEU(ref_length="average", weights=(0.4, 0.3, 0.2, 0.1),
                    smooth_method="floor").corpus_score(HYPS, [[r[0] for r in REFS],
                                                                [r[1] for r in REFS]])
    row = result.to_pylist()[0]
    assert row["score"] == expected.score and row["ref_len"] == 10.5
    assert "|reflen:average|weights:0.4,0.3,0.2,0.1|" in row["signature"]
