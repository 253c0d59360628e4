"""Every accepted input type gives the same numbers; bad input gives a clear error."""

from __future__ import annotations

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU

HYPS = ["The cat sat on the mat.", "", "Prices rose 3.5% in 2010-2012, &quot;sharply&quot;.",
        "Ünïcödé ΣΊΣΥΦΟΣ  text\u2028here", "   ", "naïve café — 東京"]
REFS = ["The cat is on the mat.", "Nothing here", "Prices rose 3.5 % in 2010-2012, \"sharply\".",
        "Unicode ΣΙΣΥΦΟΣ text here", "", "naive cafe - 東京"]


def _expected():
    return np.array(SacreBLEU()._extract_corpus_statistics(HYPS, [REFS]), dtype=np.int64)


CONVERTERS = {
    "list": list,
    "tuple": tuple,
    "numpy-unicode": lambda x: np.array(x),
    "numpy-object": lambda x: np.array(x, dtype=object),
    "pyarrow-string": lambda x: pa.array(x, type=pa.string()),
    "pyarrow-large-string": lambda x: pa.array(x, type=pa.large_string()),
    "pyarrow-string-view": lambda x: pa.array(x, type=pa.string_view()),
    "pyarrow-chunked": lambda x: pa.chunked_array([x[:2], x[2:]], type=pa.string()),
    "pyarrow-sliced": lambda x: pa.array(["padding"] + list(x), type=pa.string())[1:],
    "pyarrow-dictionary": lambda x: pa.array(x).dictionary_encode(),
    "pandas": lambda x: pd.Series(x),
    "pandas-arrow": lambda x: pd.Series(x, dtype="string[pyarrow]"),
    "polars": lambda x: pl.Series(x),
    "generator": lambda x: (s for s in x),
}


@pytest.mark.parametrize("kind", CONVERTERS)
def test_input_types_give_sacrebleu_statistics(kind):
    convert = CONVERTERS[kind]
    if kind == "generator":
        stats = BLEU().segment_statistics(list(HYPS), [convert(REFS)])
    else:
        stats = BLEU().segment_statistics(convert(HYPS), [convert(REFS)])
    np.testing.assert_array_equal(stats, _expected())


def test_reference_stream_of_other_length_names_both_lengths():
    with pytest.raises(ValueError, match=r"references\[1\] has 5 segments but the hypotheses "
                                         r"have 6"):
        BLEU().corpus_score(HYPS, [REFS, REFS[:5]])


def test_non_string_hypothesis_names_its_index():
    with pytest.raises(TypeError, match=r"hypotheses\[2\] is int, not str$"):
        BLEU().corpus_score(["a", "b", 3], [["a", "b", "c"]])


def test_non_string_reference_names_stream_and_index():
    with pytest.raises(TypeError, match=r"references\[0\]\[1\] is bytes, not str$"):
        BLEU().corpus_score(["a", "b"], [["a", b"b"]])


def test_none_hypothesis_is_a_type_error():
    with pytest.raises(TypeError, match=r"hypotheses\[1\] is None"):
        BLEU().corpus_score(["a", None], [["a", "b"]])
    with pytest.raises(TypeError, match=r"hypotheses\[0\] is None"):
        BLEU().corpus_score(pa.array([None, "b"]), [["a", "b"]])


def test_single_stream_instead_of_list_of_streams():
    with pytest.raises(TypeError, match=r"for a single stream write \[refs\]"):
        BLEU().corpus_score(["a b"], ["a b"])


def test_segment_without_any_reference_is_rejected():
    with pytest.raises(ValueError, match="segment 1 has no reference"):
        BLEU().corpus_score(["a", "b"], [["a", None], ["a", None]])


def test_string_instead_of_column():
    with pytest.raises(TypeError, match="got a single str"):
        BLEU().corpus_score("a b c", [["a b c"]])


def test_numeric_numpy_array_is_rejected():
    with pytest.raises(TypeError, match="dtype int64"):
        BLEU().corpus_score(np.arange(3), [["a", "b", "c"]])


def test_missing_and_empty_references_as_sacrebleu():
    hyps = ["a b c d", "a b", "x y z"]
    refs = [["a b c d", None, ""], [None, "a b", "x y"], ["a b", "", None]]
    ours = BLEU().corpus_score(hyps, refs)
    theirs = SacreBLEU().corpus_score(hyps, refs)
    assert (ours.score, ours.counts, ours.totals, ours.ref_len) == \
        (theirs.score, theirs.counts, theirs.totals, theirs.ref_len)
    bleu, sacre = BLEU(), SacreBLEU()
    for streams in (refs, [["a", "b", "c"], [None, "b", None]]):
        bleu.corpus_score(hyps, streams)
        sacre.corpus_score(hyps, streams)
        assert bleu.get_signature().format().split("|")[:-1] == \
            sacre.get_signature().format().split("|")[:-1]
    assert bleu.get_signature().format().startswith("nrefs:var|")


def test_null_references_in_arrow_and_pandas():
    hyps = ["a b c", "d e f"]
    expected = np.array(SacreBLEU()._extract_corpus_statistics(hyps, [["a b c", None],
                                                                       ["a b", "d e f"]]))
    for first in (pa.array(["a b c", None]), pd.Series(["a b c", None]),
                  pl.Series(["a b c", None]), np.array(["a b c", None], dtype=object)):
        stats = BLEU().segment_statistics(hyps, [first, ["a b", "d e f"]])
        np.testing.assert_array_equal(stats, expected)


def test_lone_surrogates_are_ordinary_characters():
    hyps = ["a \ud800 b", "\udfff."]
    refs = [["a \ud800 b", "x \udfff."]]
    ours = BLEU().corpus_score(hyps, refs)
    theirs = SacreBLEU().corpus_score(hyps, refs)
    assert (ours.score, ours.counts, ours.totals) == (theirs.score, theirs.counts, theirs.totals)


def test_empty_corpus_scores_zero():
    # sacrebleu raises IndexError here; fastbleu scores nothing as 0.0.
    score = BLEU().corpus_score([], [[]])
    assert (score.score, score.counts, score.totals, score.sys_len, score.ref_len) == \
        (0.0, [0, 0, 0, 0], [0, 0, 0, 0], 0, 0)
    assert BLEU().sentence_scores([], [[]]).shape == (0,)


def test_pandas_column_with_numbers_names_the_index():
    with pytest.raises(TypeError, match=r"hypotheses\[1\] is int, not str$"):
        BLEU().corpus_score(pd.Series(["a", 5], dtype=object), [["a", "b"]])


def test_lowercase_ignores_what_null_slots_hold():
    # A null slot's bytes are never read, even when they are not UTF-8.
    values = pa.Array.from_buffers(pa.string(), 2, [
        pa.py_buffer(np.packbits([1, 0, 0, 0, 0, 0, 0, 0], bitorder="little")),
        pa.py_buffer(np.array([0, 3, 5], dtype=np.int32)), pa.py_buffer(b"ABC\xff\xfe")])
    stats = BLEU(lowercase=True).segment_statistics(["abc", "x"], [values, ["x", "x"]])
    expected = SacreBLEU(lowercase=True)._extract_corpus_statistics(["abc", "x"],
                                                                    [["ABC", None], ["x", "x"]])
    np.testing.assert_array_equal(stats, np.array(expected))
