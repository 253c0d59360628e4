"""``fastbleu.BLEU`` behaves as a drop-in for ``sacrebleu.metrics.BLEU``."""

from __future__ import annotations

import json
import logging

import numpy as np
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU

import fastbleu
from fastbleu import BLEU

HYPS = ["the cat sat on the mat", "a dog barked loudly at 3.30 pm .", "", "x"]
REFS = [["the cat is on the mat", "the dog barked at 3.30 pm.", "nothing", ""],
        ["there is a cat on the mat", None, "", "x y"]]


def _without_version(signature: str) -> list[str]:
    fields = signature.split("|")
    assert fields[-1].split(":")[0] in ("version", "v")
    return fields[:-1]


@pytest.mark.parametrize("options", [
    {}, {"lowercase": True}, {"tokenize": "char"}, {"tokenize": "none"},
    {"smooth_method": "floor"}, {"smooth_method": "floor", "smooth_value": 0.25},
    {"smooth_method": "add-k"}, {"smooth_method": "add-k", "smooth_value": 3},
    {"smooth_method": "none"}, {"effective_order": True}, {"max_ngram_order": 2},
], ids=str)
def test_signature_and_output_match_sacrebleu(options):
    ours, theirs = BLEU(**options), SacreBLEU(**options)
    a = ours.corpus_score(HYPS, REFS)
    b = theirs.corpus_score(HYPS, REFS)
    for short in (False, True):
        assert _without_version(ours.get_signature().format(short)) == \
            _without_version(theirs.get_signature().format(short))
    assert ours.get_signature().format().endswith(f"|version:fastbleu-{fastbleu.__version__}")
    assert ours.get_signature().format(short=True).endswith(f"|v:fastbleu-{fastbleu.__version__}")
    assert str(a) == str(b)
    for width in (1, 2, 4):
        assert a.format(width) == b.format(width)
        assert a.format(width, score_only=True) == b.format(width, score_only=True)
    sig_a, sig_b = str(ours.get_signature()), str(theirs.get_signature())
    json_a = json.loads(a.format(2, signature=sig_a, is_json=True))
    json_b = json.loads(b.format(2, signature=sig_b, is_json=True))
    for record in (json_a, json_b):
        del record["signature"], record["version"]
    assert json_a == json_b
    assert (a.counts, a.totals, a.precisions, a.bp, a.ratio) == \
        (b.counts, b.totals, b.precisions, b.bp, b.ratio)


def test_signature_needs_references_first():
    with pytest.raises(ValueError, match="Number of references unknown"):
        BLEU().get_signature()


def test_reference_cache_equals_passing_references():
    cached = BLEU(references=REFS)
    assert cached.corpus_score(HYPS, None).score == BLEU().corpus_score(HYPS, REFS).score
    np.testing.assert_array_equal(cached.sentence_scores(HYPS),
                                  BLEU().sentence_scores(HYPS, REFS))
    # Passing references explicitly overrides the cache, as in sacrebleu.
    other = [["the cat sat on the mat", "", "", "x"]]
    assert cached.corpus_score(HYPS, other).score == SacreBLEU().corpus_score(HYPS, other).score


def test_cache_must_fit_the_hypotheses():
    cached = BLEU(references=REFS)
    with pytest.raises(ValueError, match="cached references have 4 segments but the "
                                         "hypotheses have 2"):
        cached.corpus_score(HYPS[:2], None)


def test_no_references_and_no_cache():
    with pytest.raises(RuntimeError, match="No references provided and the cache is empty"):
        BLEU().corpus_score(HYPS, None)


@pytest.mark.parametrize("smooth_method", ["none", "floor", "add-k", "exp"])
@pytest.mark.parametrize("effective_order", [False, True])
def test_compute_bleu_matches_sacrebleu(smooth_method, effective_order):
    rng = np.random.default_rng(7)
    for _ in range(300):
        order = int(rng.integers(1, 7))
        totals = sorted(rng.integers(0, 40, order).tolist(), reverse=True)
        correct = [int(rng.integers(0, t + 1)) if rng.random() < 0.8 else 0 for t in totals]
        sys_len = totals[0]
        ref_len = int(rng.integers(0, 50))
        args = (correct, totals, sys_len, ref_len, smooth_method, None, effective_order, order)
        ours = BLEU.compute_bleu(*args)
        theirs = SacreBLEU.compute_bleu(list(correct), list(totals), *args[2:])
        assert (ours.score, ours.bp, ours.precisions, ours.counts, ours.totals) == \
            (theirs.score, theirs.bp, theirs.precisions, theirs.counts, theirs.totals)


def test_add_k_leaves_k_in_counts_as_sacrebleu():
    ours = BLEU(smooth_method="add-k").corpus_score(HYPS, REFS)
    theirs = SacreBLEU(smooth_method="add-k").corpus_score(HYPS, REFS)
    assert ours.counts == theirs.counts and ours.totals == theirs.totals
    plain = BLEU(smooth_method="none").corpus_score(HYPS, REFS)
    assert ours.counts[1:] == [c + 1 for c in plain.counts[1:]]


def test_sentence_score_equals_sacrebleu():
    for options in ({}, {"effective_order": True}, {"smooth_method": "floor"}):
        for i, hyp in enumerate(HYPS):
            refs = [stream[i] for stream in REFS]
            a = BLEU(**options).sentence_score(hyp, refs)
            b = SacreBLEU(**options).sentence_score(hyp, refs)
            assert (a.score, a.counts, a.totals, a.bp) == (b.score, b.counts, b.totals, b.bp)


def test_sentence_scores_equal_sentence_score():
    bleu = BLEU(effective_order=True)
    scores = bleu.sentence_scores(HYPS, REFS)
    assert scores.dtype == np.float64
    expected = [bleu.sentence_score(h, [r[i] for r in REFS]).score for i, h in enumerate(HYPS)]
    assert scores.tolist() == expected


def test_segment_statistics_layout():
    stats = BLEU(max_ngram_order=3).segment_statistics(HYPS, REFS)
    assert stats.dtype == np.int64 and stats.shape == (4, 8)
    assert stats[0].tolist() == [6, 6, 5, 3, 1, 6, 5, 4]


def test_unknown_tokenizer_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown tokenizer 'bogus'; available: none, zh, 13a, "
                                         "intl, char, ja-mecab, ko-mecab, spm, flores101, "
                                         "flores200, spBLEU-1K"):
        BLEU(tokenize="bogus")


def test_trg_lang_picks_sacrebleus_default():
    assert BLEU(trg_lang="zh").tokenizer.name == "zh"
    assert BLEU(trg_lang="de").tokenizer.name == "13a"


def test_trg_lang_warns_like_sacrebleu(caplog):
    with caplog.at_level(logging.WARNING, logger="fastbleu"):
        BLEU(tokenize="char", trg_lang="ja")
    assert "Consider using the 'ja-mecab' or 'spm' tokenizer for Japanese." in caplog.text


@pytest.mark.parametrize("kwargs,error,message", [
    ({"smooth_method": "kneser-ney"}, ValueError, "unknown smooth_method 'kneser-ney'"),
    ({"smooth_value": "0.1"}, TypeError, "smooth_value must be a number"),
    ({"max_ngram_order": 0}, ValueError, "max_ngram_order must be at least 1"),
    ({"max_ngram_order": 2.5}, TypeError, "max_ngram_order must be an int"),
    ({"tokenize": 13}, TypeError, "tokenize must be a str"),
])
def test_bad_arguments(kwargs, error, message):
    with pytest.raises(error, match=message):
        BLEU(**kwargs)


def test_bootstrap_confidence_like_sacrebleu():
    """corpus_score(n_bootstrap=...) now estimates sacrebleu's mean and CI (exact sums; the
    float32 parity is in test_significance.py) and names bs and seed in the signature."""
    import sacrebleu

    hyps, refs = HYPS * 20, [stream * 20 for stream in REFS]
    ours, bleu = BLEU().corpus_score(hyps, refs, n_bootstrap=100), BLEU()
    theirs_metric = sacrebleu.metrics.BLEU()
    theirs = theirs_metric.corpus_score(hyps, refs, n_bootstrap=100)
    assert ours.score == theirs.score
    assert abs(ours._mean - theirs._mean) < 1e-6 and abs(ours._ci - theirs._ci) < 1e-6
    with pytest.raises(TypeError, match="n_bootstrap must be an int"):
        bleu.corpus_score(HYPS, REFS, n_bootstrap=2.5)


def test_tokenized_period_warning(caplog):
    hyps = ["word ."] * 100
    with caplog.at_level(logging.WARNING, logger="fastbleu"):
        BLEU().corpus_score(hyps, [hyps])
    assert "That's 100 lines that end in a tokenized period" in caplog.text
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger="fastbleu"):
        BLEU(force=True).corpus_score(hyps, [hyps])
        BLEU().corpus_score(hyps[:99], [hyps[:99]])
    assert caplog.text == ""


def test_sentence_score_argument_checks():
    with pytest.raises(TypeError, match="hypothesis must be a str"):
        BLEU().sentence_score(["a"], ["a"])
    with pytest.raises(TypeError, match="references must be a sequence of strings"):
        BLEU().sentence_score("a", "a")


def test_lazy_package_attributes():
    assert fastbleu.BLEU is BLEU
    assert "BLEU" in dir(fastbleu)
    with pytest.raises(AttributeError):
        fastbleu.does_not_exist  # noqa: B018
