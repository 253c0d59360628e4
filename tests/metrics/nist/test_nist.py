"""NIST (Doddington, 2002): ``fastbleu.nltk.corpus_nist``/``sentence_nist`` against NLTK's
``nist_score`` (bit for bit), and the ``NIST`` metric against NLTK on the same tokens and
against a plain-Python mteval-v13a written from the script's published source; its rows,
signature, command line and tables.
"""

from __future__ import annotations

import json
import math
from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

nltk_nist = pytest.importorskip("nltk.translate.nist_score")
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a  # noqa: E402

from fastbleu import NIST  # noqa: E402
from fastbleu.cli import main  # noqa: E402
from fastbleu.metrics.nist.formula import _limbs  # noqa: E402
from fastbleu.nltk import corpus_nist, nist_length_penalty, sentence_nist  # noqa: E402

TOK = Tokenizer13a()
SETTINGS = settings(max_examples=60, deadline=None)

# -- NLTK's functions ---------------------------------------------------------------------------

HYP1 = ("It is a guide to action which ensures that the military always obeys the commands "
        "of the party").split()
HYP2 = "It is to insure the troops forever hearing the activity guidebook that party direct".split()
REF1 = ("It is a guide to action that ensures that the military will forever heed Party "
        "commands").split()
REF2 = ("It is the guiding principle which guarantees the military forces always being under "
        "the command of the Party").split()
REF3 = ("It is the practical guide for the army always to heed the directions of the "
        "party").split()


def _outcome(function, *args):
    """A score, or the exception's type where NLTK's code fails."""
    try:
        return function(*args)
    except ZeroDivisionError:
        return ZeroDivisionError


def test_module_doctest():
    import doctest
    import sys

    result = doctest.testmod(sys.modules["fastbleu.nltk.nist"])
    assert result.attempted > 0 and result.failed == 0


def test_nltk_docstring_examples():
    for hyp in (HYP1, HYP2):
        assert sentence_nist([REF1, REF2, REF3], hyp) == \
            nltk_nist.sentence_nist([REF1, REF2, REF3], hyp)
    refs = [[REF1, REF2, REF3], [REF2, REF3]]
    for n in (1, 3, 5, 9):
        assert corpus_nist(refs, [HYP1, HYP2], n) == nltk_nist.corpus_nist(refs, [HYP1, HYP2], n)


tokens = st.lists(st.sampled_from(["a", "b", "c", "0", "é", "日本", ".", "a"]), max_size=9)


@SETTINGS
@given(st.lists(st.tuples(tokens, st.lists(tokens, min_size=1, max_size=3)), min_size=1,
                max_size=5), st.integers(1, 6))
def test_corpus_nist_equals_nltk(segments, n):
    """Small vocabularies: repeated n-grams, ties between references, empty sentences, n
    above every length (NLTK's ZeroDivisionError), all bit for bit."""
    hyps = [hyp for hyp, _ in segments]
    refs = [ref for _, ref in segments]
    assert _outcome(corpus_nist, refs, hyps, n) == _outcome(nltk_nist.corpus_nist, refs, hyps, n)
    assert _outcome(sentence_nist, refs[0], hyps[0], n) == \
        _outcome(nltk_nist.sentence_nist, refs[0], hyps[0], n)


def _sum_312(iterable, start=0):
    """Python 3.12's ``sum()``: ints exactly, then floats with Neumaier's compensation."""
    result, items = start, iter(iterable)
    for x in items:
        result = result + x
        if isinstance(result, float):
            break
    else:
        return result
    f, c = result, 0.0
    for x in items:
        t = f + x
        c += (f - t) + x if abs(f) >= abs(x) else (x - t) + f
        f = t
    return f + c if c and math.isfinite(c) else f


@SETTINGS
@given(st.lists(st.tuples(tokens, st.lists(tokens, min_size=1, max_size=3)), min_size=1,
                max_size=5))
def test_compensated_sum_of_python_312(segments):
    """From Python 3.12 on, NLTK's numerators are compensated sums; fastbleu follows the
    running Python, and both branches equal NLTK under that Python's sum()."""
    import fastbleu.nltk.nist as ours

    hyps = [hyp for hyp, _ in segments]
    refs = [ref for _, ref in segments]
    saved = ours.COMPENSATED_SUM
    try:
        ours.COMPENSATED_SUM = True
        nltk_nist.sum = _sum_312  # the module's global shadows the builtin
        assert _outcome(corpus_nist, refs, hyps, 3) == \
            _outcome(nltk_nist.corpus_nist, refs, hyps, 3)
    finally:
        ours.COMPENSATED_SUM = saved
        del nltk_nist.sum


def test_shared_reference_objects_count_once_each():
    """The same reference object in several segments counts in the weights every time."""
    ref = ["the", "cat", "sat"]
    refs = [[ref], [ref, ["a", "cat"]], [ref]]
    hyps = [["the", "cat"], ["a", "cat", "sat"], ["cat", "sat", "the"]]
    assert corpus_nist(refs, hyps, 2) == nltk_nist.corpus_nist(refs, hyps, 2)


def test_strings_and_arrow():
    """A str scores characters as in NLTK; Arrow columns score as the lists do."""
    pa = pytest.importorskip("pyarrow")
    assert sentence_nist(["abcab"], "abca", 3) == nltk_nist.sentence_nist(["abcab"], "abca", 3)
    refs = [[REF1, REF2], [REF3]]
    hyps = [HYP1, HYP2]
    assert corpus_nist(pa.array(refs), pa.array(hyps)) == corpus_nist(refs, hyps)


@pytest.mark.parametrize("ref_len, hyp_len", [(10, 0), (10, 5), (3, 2), (10, 10), (5, 9),
                                              (7.5, 2.5)])
def test_length_penalty(ref_len, hyp_len):
    assert nist_length_penalty(ref_len, hyp_len) == \
        nltk_nist.nist_length_penalty(ref_len, hyp_len)
    assert math.isclose(nist_length_penalty(3, 2), 0.5, rel_tol=1e-15)


def test_nltk_errors():
    with pytest.raises(ZeroDivisionError):
        corpus_nist([], [])
    with pytest.raises(ZeroDivisionError):
        corpus_nist([[["a"]]], [[]])  # no hypothesis 1-gram
    with pytest.raises(ValueError, match="at least 1"):
        corpus_nist([[["a"]]], [["a"]], n=0)
    with pytest.raises(TypeError, match="n must be an int"):
        corpus_nist([[["a"]]], [["a"]], n=2.0)
    with pytest.raises(ValueError, match="one list of references per hypothesis"):
        corpus_nist([[["a"]]], [["a"], ["b"]])
    with pytest.raises(ValueError, match="at least one reference"):
        sentence_nist([], ["a"])
    with pytest.raises(TypeError, match="unhashable"):
        corpus_nist([[["a"]]], [[["a"]]])


# -- the metric ---------------------------------------------------------------------------------

texts = st.text(alphabet=st.sampled_from(list("ab cC0.,!é日-\"&;")), max_size=24)


def _tokens(line: str) -> list[str]:
    return TOK(line).split()


def _mteval(hyps: list[str], streams: list[list[str]], n: int) -> float:
    """mteval-v13a.pl's NIST (``-c``, 13a text), written from the published script:
    weights over every reference, counts clipped by the most in any reference, the average
    reference length, ``max(count, 1)`` denominators, Perl's false ``"0"`` prefix."""
    refs = [[_tokens(s[i]) for s in streams] for i in range(len(hyps))]
    counts, total = Counter(), 0
    for segment in refs:
        for words in segment:
            total += len(words)
            counts.update(tuple(words[p:p + k]) for k in range(1, n + 1)
                          for p in range(len(words) - k + 1))

    def info(gram):
        prefix = gram[:-1]
        denominator = counts[prefix] if prefix and prefix != ("0",) else total
        return -math.log(counts[gram] / denominator) / math.log(2)

    tst_info, tst_cnt = [0.0] * (n + 1), [0] * (n + 1)
    ref_words = 0
    for hyp, segment in zip(hyps, refs):
        words = _tokens(hyp)
        ref_words += sum(len(r) for r in segment)
        for k in range(1, n + 1):
            grams = Counter(tuple(words[p:p + k]) for p in range(len(words) - k + 1))
            tst_cnt[k] += max(len(words) - k + 1, 0)
            best = Counter()
            for r in segment:
                best |= Counter(tuple(r[p:p + k]) for p in range(len(r) - k + 1))
            for gram, count in grams.items():
                if best[gram]:
                    tst_info[k] += info(gram) * min(count, best[gram])
    score = sum(tst_info[k] / max(tst_cnt[k], 1) for k in range(1, n + 1))
    if ref_words == 0:
        return 0.0
    ratio = tst_cnt[1] / (ref_words / len(streams))
    if ratio >= 1:
        return score
    if ratio <= 0:
        return 0.0
    beta = -math.log(0.5) / math.log(1.5) / math.log(1.5)
    return score * math.exp(-beta * math.log(ratio) * math.log(ratio))


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


@SETTINGS
@given(st.lists(st.tuples(texts, texts, texts), min_size=1, max_size=6), st.integers(1, 5),
       st.booleans())
def test_metric_equals_nltk_and_mteval(lines, n, two_refs):
    hyps = [h for h, _, _ in lines]
    streams = [[a for _, a, _ in lines]] + ([[b for _, _, b in lines]] if two_refs else [])
    metric = NIST(max_ngram_order=n)
    rows = metric.segment_statistics(hyps, streams)
    score = metric.corpus_score(hyps, streams).score
    assert score == metric.formula.score(rows.sum(axis=0)).score
    token_refs = [[_tokens(s[i]) for s in streams] for i in range(len(hyps))]
    expected = _outcome(nltk_nist.corpus_nist, token_refs, [_tokens(h) for h in hyps], n)
    if expected is not ZeroDivisionError:  # NLTK fails on a 0/0 order; NIST counts it 0
        assert _close(score, expected), (score, expected)
    expected = _outcome(nltk_nist.sentence_nist, token_refs[0], _tokens(hyps[0]), n)
    if expected is not ZeroDivisionError:
        sentence = metric.sentence_score(hyps[0], [s[0] for s in streams]).score
        assert _close(sentence, expected), (sentence, expected)
    mteval = NIST(max_ngram_order=n, variant="mteval").corpus_score(hyps, streams).score
    assert _close(mteval, _mteval(hyps, streams, n)), (mteval, _mteval(hyps, streams, n))


def test_mteval_zero_prefix_quirk():
    """Perl reads the prefix "0" as false: "0 a" is weighed against all reference words."""
    refs = [["0 a 0 b 0 a x y"]]
    hyps = ["0 a 0 b"]
    got = NIST(variant="mteval", max_ngram_order=2).corpus_score(hyps, refs).score
    assert _close(got, _mteval(hyps, refs, 2))
    assert not _close(got, NIST(max_ngram_order=2).corpus_score(hyps, refs).score)


def test_fixed_point_information():
    """A segment's information sum survives the int64 limbs to 2**-64, and sums exactly."""
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.random(1000) * 1000, [0.0, 1.0, 2.0 ** -40, 1 - 2 ** -53]])
    limbs = _limbs(values)
    assert limbs.min() >= 0 and limbs[:, 1:].max() < 2 ** 32
    back = [((int(a) << 64) + (int(b) << 32) + int(c)) / (1 << 64) for a, b, c in limbs]
    assert np.all(np.abs(np.array(back) - values) <= 2.0 ** -64 + np.spacing(values))


def test_rows_and_sentence_scores():
    hyps = ["the cat sat on the mat .", "a dog", ""]
    refs = [["the cat sat on a mat .", "dogs bark", "nothing"]]
    metric = NIST()
    rows = metric.segment_statistics(hyps, refs)
    assert rows.shape == (3, 22) and rows.dtype == np.int64
    assert metric.formula.statistics_names[:3] == ("hyp_len", "ref_len", "info_1_int")
    scores = metric.sentence_scores(hyps, refs)
    assert scores.tolist() == [metric.formula.score(row).score for row in rows]
    assert scores[2] == 0.0
    # cached references give the same weights as the same references passed in
    cached = NIST(references=refs)
    assert cached.corpus_score(hyps, None).score == metric.corpus_score(hyps, refs).score
    # an accumulator of the whole input in one update is the corpus score (pieces in
    # separate updates would each get their own weights)
    import pickle

    acc = pickle.loads(pickle.dumps(metric.accumulator().update(hyps, refs)))
    assert acc.score().score == metric.corpus_score(hyps, refs).score
    # the bootstrap resamples rows of the whole input's weights
    assert metric.corpus_score(hyps, refs, n_bootstrap=50).mean is not None


def test_lowercase_and_signature():
    metric = NIST(lowercase=True, max_ngram_order=4)
    assert metric.corpus_score(["THE Cat"], [["the cat"]]).score == \
        NIST(max_ngram_order=4).corpus_score(["the cat"], [["the cat"]]).score
    sig = metric.get_signature().format()
    assert sig.startswith("nrefs:1|case:lc|tok:13a|n:4|variant:nltk|version:fastbleu-")
    assert NIST(variant="mteval").signature(2).format(short=True).startswith(
        "#:2|c:mixed|tok:13a|n:5|vr:mteval|v:")


def test_metric_errors():
    with pytest.raises(ValueError, match="between 1 and 9"):
        NIST(max_ngram_order=10)
    with pytest.raises(ValueError, match="variant"):
        NIST(variant="moses")
    with pytest.raises(ValueError, match="negative"):
        NIST().formula.check_rows(-np.ones((1, 22)))
    with pytest.raises(ValueError, match="columns"):
        NIST().formula.check_rows(np.ones((1, 20)))
    with pytest.raises(ValueError, match="at most 16"):
        NIST(variant="mteval").corpus_score(["a"], [["a"]] * 17)


# -- command line and tables --------------------------------------------------------------------


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("nist")
    ref = ["The cat sat on the mat.", "It rained all day in Paris.", "", "Ça va très bien !"]
    hyp = ["The cat sat on a mat.", "It was raining in Paris all day.", "words", "Ça va bien"]
    paths = {}
    for name, lines in (("ref", ref), ("hyp", hyp)):
        paths[name] = folder / f"{name}.txt"
        paths[name].write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return ref, hyp, {k: str(v) for k, v in paths.items()}


def test_cli(files, capsys):
    ref, hyp, paths = files
    expected = NIST().corpus_score(hyp, [ref])
    capsys.readouterr()
    assert main([paths["ref"], "-i", paths["hyp"], "-m", "nist", "-f", "text", "-w", "6"]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith("NIST|nrefs:1|case:mixed|tok:13a|n:5|variant:nltk|version:")
    assert f"= {expected.score:.6f} " in line
    assert main([paths["ref"], "-i", paths["hyp"], "-m", "bleu", "nist", "-f", "json",
                 "--nist-variant", "mteval", "-lc"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [entry["name"] for entry in out] == ["BLEU", "NIST"]
    assert out[1]["variant"] == "mteval" and out[1]["case"] == "lc"
    mteval = NIST(variant="mteval", lowercase=True).corpus_score(hyp, [ref]).score
    assert out[1]["score"] == float(f"{mteval:.1f}")
    assert main([paths["ref"], "-i", paths["hyp"], "-m", "nist", "--nist-order", "0"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--nist-order" in err[0]
    with pytest.raises(SystemExit) as exit_:
        main([paths["ref"], "-i", paths["hyp"], "-m", "nist", "--nist-variant", "perl"])
    assert exit_.value.code == 2


def test_tables(files, tmp_path):
    pa = pytest.importorskip("pyarrow")
    from fastbleu import score_table

    ref, hyp, _ = files
    other = [line.lower() for line in hyp]
    table = pa.table({"sys": ["a"] * 4 + ["b"] * 4, "hyp": hyp + other, "ref": ref + ref})
    result = score_table(table, group_by="sys", metrics=["nist", "bleu"])
    # both systems share the references, so the pooled weights are each system's own
    for name, system in (("a", hyp), ("b", other)):
        expected = NIST().corpus_score(system, [ref]).score
        row = result.filter(pa.compute.equal(result["sys"], name))
        assert row["nist_score"][0].as_py() == pytest.approx(expected, rel=1e-15)
    # --segments-out: each segment's NIST with the table's (corpus) weights
    import pyarrow.parquet as pq

    out = tmp_path / "segments.parquet"
    score_table(pa.table({"hyp": hyp, "ref": ref}), metrics=["nist"], segments_out=str(out))
    assert pq.read_table(out)["sentence_nist"].to_pylist() == \
        NIST().sentence_scores(hyp, [ref]).tolist()
