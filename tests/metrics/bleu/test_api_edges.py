"""The Python API at its edges: statistics that cannot be statistics are refused, an empty
reference list is not the cache, and the reports' helpers hold up (issue 11)."""

from __future__ import annotations

import io
import json

import numpy as np
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU
from fastbleu.significance import tests as significance
from fastbleu.metrics.bleu.formula import BLEUFormula
from testkit.text import random_lines

FORMULA = BLEUFormula(4)

HYPS = ["the cat sat on the mat", "a dog ran in the park", "it rained all day long here"]
REFS = [["the cat sat on a mat", "a dog ran in a park", "it rained all day here"]]


@pytest.fixture(scope="module")
def stats():
    return BLEU().segment_statistics(HYPS, REFS)


def _broken(stats, kind):
    bad = stats.copy()
    if kind == "matches > totals":
        bad[1, 3] = bad[1, 7] + 5  # 2-gram matches above 2-gram totals
    elif kind == "negative":
        bad[0, 1] = -10 ** 6  # a negative reference length, negative in the sum too
    elif kind == "totals > hyp_len":
        bad[2, 6] = bad[2, 0] + 1
    return bad


@pytest.mark.parametrize("kind, message", [
    ("matches > totals", "matches must not exceed totals"),
    ("negative", "negative counts"),
    ("totals > hyp_len", "totals must not exceed hyp_len"),
])
def test_invalid_statistics_are_refused_everywhere(stats, kind, message):
    bad = _broken(stats, kind)
    with pytest.raises(ValueError, match=message):
        significance.paired_bootstrap([stats, bad], n_samples=10)
    with pytest.raises(ValueError, match=message):
        significance.paired_ar([bad, stats], n_samples=10)
    with pytest.raises(ValueError, match=message):
        significance.confidence_interval(bad, n_samples=10)
    with pytest.raises(ValueError, match=message):
        FORMULA.check_rows(bad.sum(axis=0), ndim=1)
    with pytest.raises(ValueError, match=message):
        FORMULA.check_rows(bad)


def test_the_issue_case_no_longer_scores_above_100(stats):
    """matches > totals used to give BLEU 271.9."""
    with pytest.raises(ValueError, match="matches must not exceed totals"):
        BLEU.compute_bleu([10, 8, 6, 4], [4, 3, 2, 1], 4, 4)


@pytest.mark.parametrize("value, error, message", [
    (lambda s: s[:, :6], ValueError, "needs 10"),
    (lambda s: s.ravel(), ValueError, "shape"),
    (lambda s: s[None], ValueError, "shape"),
    (lambda s: s + 0.5, ValueError, "whole counts"),
    (lambda s: np.where(s > 0, np.nan, 0.0), ValueError, "whole counts"),
    (lambda s: s.astype(np.uint64) + np.uint64(2 ** 63), ValueError, "too large"),
])
def test_malformed_statistics_arrays(stats, value, error, message):
    with pytest.raises(error, match=message):
        significance.paired_bootstrap([stats, value(stats)], n_samples=10)


@pytest.mark.parametrize("value", [np.ones((2, 10), dtype=complex), np.array([["1"] * 10]),
                                   "1 2 3"])
def test_non_numeric_statistics(value):
    with pytest.raises(TypeError, match="integer array"):
        FORMULA.check_rows(value)


def test_integral_float_statistics_equal_int_ones(stats):
    as_int = significance.paired_bootstrap([stats, stats[::-1].copy()], n_samples=50)
    as_float = significance.paired_bootstrap([stats.astype(float), stats[::-1].astype(float)],
                                             n_samples=50)
    assert as_int == as_float


def test_compute_bleu_equals_sacrebleu_and_validates():
    ours = BLEU.compute_bleu([5, 3, 2, 1], [6, 5, 4, 3], 6, 7, smooth_method="exp")
    theirs = SacreBLEU.compute_bleu([5, 3, 2, 1], [6, 5, 4, 3], 6, 7, smooth_method="exp")
    assert ours.score == theirs.score
    for args in (([5, 3, 2, 1], [6, 5, 4, 3], 4, 7),  # totals above sys_len
                 ([5, 3, 2, -1], [6, 5, 4, 3], 6, 7),
                 ([5, 3, 2, float("inf")], [6, 5, 4, 3], 6, 7)):
        with pytest.raises(ValueError):
            BLEU.compute_bleu(*args)
    with pytest.raises(TypeError, match="takes numbers"):
        BLEU.compute_bleu(["5", "x", 2, 1], [6, 5, 4, 3], 6, 7)


def test_check_rows_returns_int64_contiguous(stats):
    out = FORMULA.check_rows(np.asfortranarray(stats.astype(np.int32)))
    assert out.dtype == np.int64 and out.flags.c_contiguous
    np.testing.assert_array_equal(out, stats)
    assert FORMULA.check_rows(np.zeros((0, 10), dtype=np.int64)).shape == (0, 10)
    np.testing.assert_array_equal(FORMULA.check_rows(stats.astype(float)), stats)


def test_empty_reference_list_is_not_the_cache():
    cached = BLEU(references=REFS)
    with pytest.raises(ValueError, match="references is empty.*None"):
        cached.corpus_score(HYPS, [])
    with pytest.raises(ValueError, match="references is empty"):
        cached.segment_statistics(HYPS, [])
    with pytest.raises(ValueError, match="references is empty"):
        cached.sentence_scores(HYPS, [])
    # None still means the cached references, with sacrebleu's number
    assert cached.corpus_score(HYPS, None).score == \
        SacreBLEU(references=REFS).corpus_score(HYPS, None).score


def test_sizes_are_checked_before_allocating(stats):
    from fastbleu._limits import MAX_NGRAM_ORDER_LIMIT, MAX_SAMPLES

    with pytest.raises(ValueError, match="at most"):
        BLEU(max_ngram_order=MAX_NGRAM_ORDER_LIMIT + 1)
    assert BLEU(max_ngram_order=MAX_NGRAM_ORDER_LIMIT).max_ngram_order == MAX_NGRAM_ORDER_LIMIT
    with pytest.raises(ValueError, match="at most"):
        significance.paired_bootstrap([stats, stats], n_samples=MAX_SAMPLES + 1)
    with pytest.raises(ValueError, match="at most"):
        significance.paired_ar([stats, stats], n_samples=10, n_confidence=10 ** 12)
    with pytest.raises(ValueError, match="at most"):
        significance.confidence_interval(stats, n_samples=10 ** 12)


# -- reports, progress, text input -----------------------------------------------------------

def test_non_finite_group_keys_are_json():
    from fastbleu.cli.printing import plain

    values = [float("nan"), np.float32("nan"), np.float64("inf"), -np.inf, 1.5, None, "a"]
    plained = [plain(v) for v in values]
    assert plained == ["NaN", "NaN", "Infinity", "-Infinity", 1.5, None, "a"]
    json.dumps(plained, allow_nan=False)


def test_latex_escape_matches_sacrebleus_tables():
    from tabulate import tabulate

    from fastbleu.cli.printing import latex_escape

    name = "a&b_c%d\\e#f$g{h}~i^j<k>l"
    row = [line for line in tabulate([[name]], tablefmt="latex_booktabs").splitlines()
           if "textbackslash" in line][0]
    assert row.strip().removesuffix("\\\\").strip() == latex_escape(name)


def test_spm_model_signature():
    from fastbleu.tokenizers.spm import model_signature

    assert model_signature("flores200", "/x/flores200sacrebleuspm") == "flores200"
    assert model_signature("flores101", "/x/sacrebleu_tokenizer_spm.model") == "flores101"
    assert model_signature("flores200", "/x/sacrebleu_tokenizer_spm.model") == "flores101"
    assert model_signature("spBLEU-1K", "/x/my model|v2:1.model") == "spm-my_model_v2_1.model"


class _Failing(io.StringIO):
    def write(self, text):
        raise OSError(28, "No space left on device")

    def isatty(self):
        return True


def test_progress_survives_a_closed_or_failing_stream(monkeypatch):
    import sys

    from fastbleu.progress import Progress

    monkeypatch.setattr(sys, "stderr", None)
    meter = Progress(10, enabled=True, interval=0)
    meter.update(5)
    meter.close()
    assert not meter.enabled
    meter = Progress(10, enabled=True, stream=_Failing(), interval=0)
    meter.update(5)
    meter.close()
    assert not meter.enabled


def test_universal_newlines_come_after_decoding():
    from fastbleu.inputs.files import column_from_bytes

    lines = ["Čč ക", "b"]  # U+010D and U+0D15 hold 0x0D bytes in UTF-16
    raw = "\r\n".join(lines).encode("utf-16")
    column = column_from_bytes(raw, "x", "utf-16", universal_newlines=True)
    decoded = [column.data[column.offsets[i]:column.offsets[i + 1]].tobytes().decode("utf-8")
               for i in range(len(column))]
    assert decoded == lines
    assert len(column_from_bytes(b"a\rb\r\nc", "x", universal_newlines=True)) == 3
    assert len(column_from_bytes(b"a\rb\r\nc", "x")) == 2  # files: split at \n only


def test_paired_group_reports_with_nan_keys_are_json():
    from fastbleu.significance.tests import Result
    from fastbleu.cli.printing import paired_groups

    text = paired_groups(["g"], [(float("nan"),), (np.float64("-inf"),)],
                         [["base", "sys"], ["base", float("nan")]],
                         [[Result(30.0, None, 30.1, 1.0), Result(31.0, 0.2, 31.1, 1.1)]] * 2,
                         ["sig", "sig"], "json", 1, "bs", 10)
    records = json.loads(text, parse_constant=lambda name: pytest.fail(name))
    assert [r["g"] for r in records] == ["NaN", "NaN", "-Infinity", "-Infinity"]
    assert records[-1]["system"] == "NaN"


def test_the_formula_checks_a_callers_rows():
    """``BLEU().formula.score`` is public: matches above totals are refused there too,
    not scored as BLEU 200."""
    import numpy as np

    from fastbleu import BLEU

    formula = BLEU().formula
    bad = np.array([20, 20, 10, 10, 10, 10, 5, 5, 5, 5])
    with pytest.raises(ValueError, match="exceed"):
        formula.score(bad)
    with pytest.raises(ValueError, match="exceed"):
        formula.scores(bad[None, :])
    good = np.array([[20, 20, 10, 8, 6, 4, 20, 19, 18, 17], [3, 4, 3, 2, 1, 0, 3, 2, 1, 0]])
    assert [formula.score(row).score for row in good] == formula.scores(good).tolist()
    assert formula.scores(good).tolist() == formula.scores(good, check=False).tolist()


def test_bleu_converts_python_lists_a_batch_at_a_time(caplog):
    """Lists longer than a batch are converted batch by batch: the score, the rows,
    num_refs, the tokenized-period warning and every error message are those of the
    whole input at once (a pyarrow array takes that path)."""
    import logging

    import pyarrow as pa

    from fastbleu.statistics.tokens import BATCH_SIZE

    n = BATCH_SIZE + 1_000
    rng = np.random.default_rng(5)
    words = np.array(["the", "cat", "sat", "(on)", "mat.", "é", "中文", "", "a ."])
    hyps = random_lines(rng, words, n, 0, 8)
    # 60 hypotheses ending in " ." on each side of the batch boundary: 120 in all.
    hyps = [h + "x" if h.endswith(" .") else h for h in hyps]
    for i in [*range(60), *range(BATCH_SIZE + 1, BATCH_SIZE + 61)]:
        hyps[i] = "a word ."
    first = random_lines(rng, words, n, 1, 8)
    second = [None if i % 5 else "the mat" for i in range(n)]
    for refs in ([first], [first, second]):
        listed, arrow = BLEU(), BLEU()
        with caplog.at_level(logging.WARNING, logger="fastbleu"):
            caplog.clear()
            score = listed.corpus_score(hyps, refs)
            warned = [r.message for r in caplog.records]
            caplog.clear()
            whole = arrow.corpus_score(pa.array(hyps), [pa.array(r) for r in refs])
            assert warned == [r.message for r in caplog.records] and len(warned) == 3
        assert score.score == whole.score and score.counts == whole.counts
        assert listed.num_refs == arrow.num_refs == (1 if len(refs) == 1 else -1)
        np.testing.assert_array_equal(
            BLEU().segment_statistics(hyps, refs),
            BLEU().segment_statistics(pa.array(hyps), [pa.array(r) for r in refs]))
    bad = list(hyps)
    bad[BATCH_SIZE + 7] = None
    with pytest.raises(TypeError, match=f"hypotheses\\[{BATCH_SIZE + 7}\\] is None"):
        BLEU().corpus_score(bad, [first])
    holes = list(first)
    holes[BATCH_SIZE + 9] = None
    with pytest.raises(ValueError, match=f"segment {BATCH_SIZE + 9} has no reference"):
        BLEU().sentence_scores(hyps, [holes, [None] * n])
    with pytest.raises(ValueError, match=f"references\\[0\\] has {n - 1} segments"):
        BLEU().corpus_score(hyps, [first[:-1]])
    with pytest.raises(ValueError, match="at most 16 references"):
        BLEU(ref_length="average").corpus_score(hyps, [first] * 17)
