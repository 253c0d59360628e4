"""Hypothesis strategies aimed at the hard cases, and assertions that compare fastbleu's
tokens, statistics, scores and signatures with sacrebleu's."""

from __future__ import annotations
import logging
import math
import os
import string
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, note, settings
from hypothesis import strategies as st
from hypothesis.control import currently_in_test_context
from sacrebleu.metrics import BLEU as SacreBLEU
import fastbleu
from fastbleu import BLEU as FastBLEU
from fastbleu._kernels.text.hashing import hash_bytes
from fastbleu.statistics.tokens import References, iter_statistics
from fastbleu.statistics.tokens import tokenize as fb_tokenize
from fastbleu.inputs.text import as_text_column
from fastbleu.tokenizers import get_tokenizer
import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from fastbleu._kernels.text.tokenize import tokens_char
from fastbleu._kernels.text.tokenize_13a import CLASS_13A_RAW, CLASS_SPLIT, split_tokens
from fastbleu._kernels.text.tokenize_flat import _scan_char_flat, _scan_flat


_DEFAULT_MAIN_EXAMPLES = 400


_MAIN_EXAMPLES = int(os.environ.get("FASTBLEU_HYPOTHESIS_EXAMPLES", "0") or 0) \
    or _DEFAULT_MAIN_EXAMPLES


settings.register_profile(
    "fastbleu-differential",
    deadline=None,
    database=None,  # no example database; failures print a @reproduce_failure blob
    print_blob=True,
    suppress_health_check=list(HealthCheck),
)


_PROFILE = settings.get_profile("fastbleu-differential")


def examples(n: int) -> settings:
    """Settings with ``n`` examples at the default size, scaled by the env variable."""
    scaled = max(1, round(n * _MAIN_EXAMPLES / _DEFAULT_MAIN_EXAMPLES))
    return settings(_PROFILE, max_examples=scaled)


def random_lines(rng: np.random.Generator, words, n: int, low: int, high: int) -> list[str]:
    """``n`` lines of ``low`` to ``high - 1`` words drawn from ``words``, drawn at once (a
    draw per line took seconds for the hundred thousand lines of the batching tests)."""
    counts = rng.integers(low, high, n)
    flat, ends = rng.choice(np.asarray(words), counts.sum()).tolist(), np.cumsum(counts).tolist()
    return [" ".join(flat[end - count:end]) for end, count in zip(ends, counts.tolist())]


TOKENIZERS = ("13a", "none", "char", "intl", "zh")


SMOOTH_METHODS = ("none", "floor", "add-k", "exp")


WHITESPACE = [chr(c) for c in range(0x110000) if chr(c).isspace()]


NEAR_SPACE = ["\u200b", "\u180e", "\ufeff", "\u2060", "\u200c", "\u200d", "\x00", "\x7f",
              "\u00ad", "\u2800", "\u3164", "\U000e0020"]


ASCII_PUNCT = list(string.punctuation)  # includes the whole 13a rule-1 class


NUMERIC = ["1.5", "1,000", "3-4", "a.,5", "..", "1..2", "5.", ".5", ",5", "5,", "-5", "5-",
           "1-", "12.34.56", "1,2,3", "1.-2", "2-.", "0", "9", "...", ",,", ".,", ",.", "x.y",
           "x,y", "3--4", "1-2-3", "$1,000.00", "(1.5)", "1.5.", "U.S.", "e.g.", "a...5",
           "5.,x", "٣.٤", "１.５", "²-", "1²-", "5'", "-1-", ".-.", "0.0.0"]


ENTITIES = ["&quot;", "&amp;", "&lt;", "&gt;", "&amp;lt;", "&amp;quot;", "&amp;amp;", "&amp;gt;",
            "&amp;amp;lt;", "&", "&quot", "&lt", "amp;", "&#39;", "&apos;", "&QUOT;", "&&lt;;",
            "&lt;skipped&gt;", ";", "&amp", "AT&amp;T", "&nbsp;"]


SKIPPED = ["<skipped>", "<skip<skipped>ped>", "<skipped", "skipped>", "<SKIPPED>", "<skip",
           "ped>", "<skip&amp;ped>", "<<skipped>skipped>>", "<skipped>-\n", "-<skipped>\n"]


NEWLINES = ["-\n", "\n", "-", "\n-", "-\n\n", "--\n", "\r\n", "-\r\n", "-\n-\n", "\n\n"]


SCRIPTS = ["привет", "Мир", "ΣΟΦΟΣ", "Σ", "ς", "σ", "ΑΣ", "中文", "日本語", "한국어", "مرحبا",
           "नमस्ते", "e\u0301", "\u0301", "a\u0308", "\u0915\u094d\u0937", "😀", "👍🏽",
           "👨‍👩‍👧", "𝔘𝔫𝔦", "\U0001F1FA\U0001F1F8", "\U00010000", "\U0010FFFF", "\uFFFD"]


CASE_TRAPS = ["İ", "İstanbul", "ΣΑΣ", "ὈΔΥΣΣΕΎΣ", "K", "Å", "Ω", "ß", "ẞ", "ǅ", "ﬁ", "ŉ",
              "ΐ", "Ⅻ", "ꭰ", "\U00010400", "ΑΣ.", "Σ.", "AΣ", "ǈ", "ᾼ"]


SURROGATES = ["\ud800", "\udfff", "\ud83d\ude00", "a\udc80b", "\ud83d"]


WORDS = ["the", "The", "THE", "cat", "Cat", "a", "A", "sat", "on", "mat", "dog", "don't",
         "it's", "Mr.", "x", "X", "of", "and", "Σοφία", "İzmir"]


_word = st.sampled_from(WORDS)


_nasty = st.sampled_from(ASCII_PUNCT + NUMERIC + ENTITIES + SKIPPED + NEWLINES)


_space = st.sampled_from(WHITESPACE + NEAR_SPACE)


_exotic = st.sampled_from(SCRIPTS + CASE_TRAPS + SURROGATES)


_random_text = st.one_of(st.text(max_size=4),
                         st.text(alphabet=st.characters(codec="ascii"), max_size=4))


piece = st.one_of(_word, _word, _word, _nasty, _nasty, _space, _exotic, _random_text)


separator = st.sampled_from(["", " ", " ", " ", "  ", "\t"])


def _join(parts):
    return "".join(p + s for p, s in parts)


line = st.one_of(
    st.lists(st.tuples(piece, separator), max_size=12).map(_join),
    st.lists(st.tuples(piece, separator), max_size=3).map(_join),
    st.lists(st.tuples(piece, separator), min_size=12, max_size=40).map(_join),
    st.lists(st.sampled_from(WHITESPACE), max_size=4).map("".join),  # whitespace-only
    st.just(""),
)


@st.composite
def reference_for(draw, hyp: str) -> str:
    """A reference for ``hyp``: often a reordering/subset of its pieces, so n-grams match."""
    kind = draw(st.sampled_from(["copy", "case", "shuffle", "shuffle", "shuffle", "other",
                                 "empty", "spaces"]))
    if kind == "copy":
        return hyp
    if kind == "case":
        return draw(st.sampled_from([hyp.upper(), hyp.lower(), hyp.swapcase(), hyp.title()]))
    if kind == "other":
        return draw(line)
    if kind == "empty":
        return ""
    if kind == "spaces":
        return draw(st.sampled_from(WHITESPACE)) * draw(st.integers(1, 3))
    parts = hyp.split(" ")
    picks = draw(st.lists(st.integers(0, len(parts) - 1), max_size=len(parts) + 3))
    extra = draw(st.lists(piece, max_size=2))
    out = [parts[i] for i in picks]
    for p in extra:
        out.insert(draw(st.integers(0, len(out))), p)
    return draw(st.sampled_from([" ", "", "  "])).join(out)


@st.composite
def corpora(draw, min_segments=1, max_segments=6, text=line):
    """``(hyps, ref_streams)``: 1-4 streams, with None (missing) and '' references.

    Every segment keeps at least one non-None reference.
    """
    n = draw(st.integers(min_segments, max_segments))
    hyps = [draw(text) for _ in range(n)]
    n_refs = draw(st.integers(1, 4))
    missing = st.booleans() if n_refs > 1 else st.just(False)
    streams = [[None] * n for _ in range(n_refs)]
    for i, hyp in enumerate(hyps):
        absent = [draw(missing) for _ in range(n_refs)]
        if all(absent):
            absent[draw(st.integers(0, n_refs - 1))] = False
        for r in range(n_refs):
            if not absent[r]:
                streams[r][i] = draw(reference_for(hyp))
    return hyps, streams


smooth_values = st.one_of(
    st.none(),
    st.sampled_from([0, 0.0, 1e-9, 0.01, 0.1, 0.5, 1, 1.0, 2, 3]),
    st.floats(min_value=1e-6, max_value=10.0, allow_nan=False, allow_infinity=False),
)


configs = st.fixed_dictionaries({
    "tokenize": st.sampled_from(TOKENIZERS),
    "lowercase": st.booleans(),
    "smooth_method": st.sampled_from(SMOOTH_METHODS),
    "smooth_value": smooth_values,
    "effective_order": st.booleans(),
    "max_ngram_order": st.integers(1, 6),
})


def token_hash(token: str) -> int:
    data = np.frombuffer(token.encode("utf-8", "surrogatepass"), np.uint8)
    return int(hash_bytes(data, 0, data.size))


def sacre_tokens(text: str, tokenize: str, lowercase: bool) -> list[str]:
    return SacreBLEU(tokenize=tokenize, lowercase=lowercase)._preprocess_segment(text).split()


def fast_hashes(lines: list[str], tokenize: str, lowercase: bool) -> list[list[int]]:
    tokens = fb_tokenize(as_text_column(lines, "lines"), get_tokenizer(tokenize), lowercase)
    return [tokens.hashes[s:s + c].tolist() for s, c in zip(tokens.start, tokens.count)]


def _preprocessed(text: str, tokenize: str, lowercase: bool) -> str:
    """The text fastbleu's tokens are substrings of (to name them in messages)."""
    text = (text.lower() if lowercase else text).rstrip()
    if tokenize == "13a":
        text = text.replace("<skipped>", "").replace("-\n", "").replace("\n", " ")
        for entity, char in (("&quot;", '"'), ("&amp;", "&"), ("&lt;", "<"), ("&gt;", ">")):
            text = text.replace(entity, char)
    return text


def decode_hashes(hashes: list[int], text: str, tokenize: str, lowercase: bool) -> list[str]:
    """fastbleu's token hashes back to strings, by hashing every substring of the text."""
    source = _preprocessed(text, tokenize, lowercase)[:600]
    table: dict[int, str] = {}
    for i in range(len(source)):
        for j in range(i + 1, min(len(source), i + 60) + 1):
            table.setdefault(token_hash(source[i:j]), source[i:j])
    return [table.get(h, f"<unknown {h:#018x}>") for h in hashes]


def token_report(text: str, tokenize: str, lowercase: bool, fast: list[int] | None = None) -> str:
    expected = sacre_tokens(text, tokenize, lowercase)
    if fast is None:
        fast = fast_hashes([text], tokenize, lowercase)[0]
    same = [token_hash(t) for t in expected] == fast
    return (f"  text={text!r} tok={tokenize} lc={lowercase} tokens {'agree' if same else 'DIFFER'}\n"
            f"    sacrebleu: {expected!r}\n"
            f"    fastbleu:  {decode_hashes(fast, text, tokenize, lowercase)!r}")


def assert_same_tokens(lines: list[str], tokenize: str, lowercase: bool) -> None:
    got = fast_hashes(lines, tokenize, lowercase)
    bad = [i for i, text in enumerate(lines)
           if [token_hash(t) for t in sacre_tokens(text, tokenize, lowercase)] != got[i]]
    if bad:
        i = bad[0]
        pytest.fail(f"tokenization differs on {len(bad)} of {len(lines)} lines, first:\n"
                    + token_report(lines[i], tokenize, lowercase, got[i]))


def _same_float(a, b) -> bool:
    return a == b or (isinstance(a, float) and isinstance(b, float) and math.isnan(a)
                      and math.isnan(b))


def _describe_float_diff(a, b) -> str:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        try:
            rel = abs(a - b) / max(abs(a), abs(b))
        except (ZeroDivisionError, OverflowError, TypeError):
            rel = math.nan
        return f"{a!r} != {b!r} (relative difference {rel:.1e})"
    return f"{a!r} != {b!r}"


def assert_same_score(fast, sacre, what: str) -> None:
    problems = []
    for field in ("score", "bp", "sys_len", "ref_len"):
        a, b = getattr(fast, field), getattr(sacre, field)
        if not _same_float(a, b):
            problems.append(f"{field}: fastbleu {_describe_float_diff(a, b)} sacrebleu")
    for field in ("counts", "totals", "precisions"):
        a, b = list(getattr(fast, field)), list(getattr(sacre, field))
        if len(a) != len(b) or not all(_same_float(x, y) for x, y in zip(a, b)):
            problems.append(f"{field}: fastbleu {a!r} != sacrebleu {b!r}")
    if not problems:
        if str(fast) != str(sacre):
            problems.append(f"str: fastbleu {str(fast)!r} != sacrebleu {str(sacre)!r}")
        sig = "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0"
        for kwargs in ({"width": 4}, {"score_only": True}, {"signature": sig},
                       {"signature": sig, "is_json": True}):
            a, b = fast.format(**kwargs), sacre.format(**kwargs)
            if a != b:
                problems.append(f"format({kwargs}): fastbleu {a!r} != sacrebleu {b!r}")
    if problems:
        pytest.fail(f"{what} differs:\n  " + "\n  ".join(problems))


def strip_version(signature: str) -> str:
    return "|".join(p for p in signature.split("|") if not p.startswith(("version:", "v:")))


def assert_same_signature(fast_metric, sacre_metric, what: str) -> None:
    fast_sig, sacre_sig = fast_metric.get_signature(), sacre_metric.get_signature()
    for short in (False, True):
        a, b = fast_sig.format(short=short), sacre_sig.format(short=short)
        assert strip_version(a) == strip_version(b), f"{what} signature (short={short})"
    version = fast_sig.format().rsplit("|", 1)[-1]
    assert version == f"version:fastbleu-{fastbleu.__version__}", version


def sacre_statistics(metric: SacreBLEU, hyps, refs) -> np.ndarray:
    width = 2 + 2 * metric.max_ngram_order
    return np.array(metric._extract_corpus_statistics(hyps, refs),
                    dtype=np.int64).reshape(len(hyps), width)


def assert_same_statistics(fast: np.ndarray, sacre: np.ndarray, hyps, refs, cfg) -> None:
    assert isinstance(fast, np.ndarray) and fast.dtype == np.int64, (type(fast), fast.dtype)
    assert fast.shape == sacre.shape, (fast.shape, sacre.shape)
    bad = np.flatnonzero((fast != sacre).any(axis=1))
    if bad.size:
        i = int(bad[0])
        refs_i = [s[i] for s in refs]
        lines = [token_report(t, cfg["tokenize"], cfg["lowercase"])
                 for t in [hyps[i], *[r for r in refs_i if r is not None]]]
        pytest.fail(f"statistics differ on {bad.size} of {len(hyps)} segments; segment {i}:\n"
                    f"  hyp={hyps[i]!r}\n  refs={refs_i!r}\n"
                    f"  fastbleu:  {fast[i].tolist()}\n  sacrebleu: {sacre[i].tolist()}\n"
                    + "\n".join(lines))


def check_everything(cfg: dict, hyps: list[str], refs: list[list[str | None]],
                     cached: bool = False) -> None:
    """The full differential check of one configuration and corpus."""
    if currently_in_test_context():
        note(f"cfg={cfg!r}\nhyps={hyps!r}\nrefs={refs!r}")
    sacre, fast = SacreBLEU(**cfg), FastBLEU(**cfg)

    # Per-segment statistics: the whole array.
    sacre_stats = sacre_statistics(sacre, hyps, refs)
    assert_same_statistics(fast.segment_statistics(hyps, refs), sacre_stats, hyps, refs, cfg)

    # Corpus score and signature.
    assert_same_score(fast.corpus_score(hyps, refs), sacre.corpus_score(hyps, refs),
                      "corpus_score")
    assert_same_signature(fast, sacre, "corpus_score")

    if cached:  # BLEU(references=...) then corpus_score(hyps, None)
        sacre_c = SacreBLEU(references=refs, **cfg)
        fast_c = FastBLEU(references=refs, **cfg)
        assert_same_score(fast_c.corpus_score(hyps, None), sacre_c.corpus_score(hyps, None),
                          "corpus_score with cached references")
        assert_same_signature(fast_c, sacre_c, "cached references")
        assert_same_statistics(fast_c.segment_statistics(hyps), sacre_stats, hyps, refs, cfg)

    # Sentence scores, vectorized and one by one.
    vector = fast.sentence_scores(hyps, refs)
    assert isinstance(vector, np.ndarray) and vector.dtype == np.float64
    assert vector.shape == (len(hyps),)
    for i, hyp in enumerate(hyps):
        refs_i = [s[i] for s in refs]
        expected = sacre.sentence_score(hyp, refs_i)
        if not _same_float(float(vector[i]), expected.score):
            pytest.fail(f"sentence_scores[{i}]: fastbleu "
                        f"{_describe_float_diff(float(vector[i]), expected.score)} sacrebleu\n"
                        f"  hyp={hyp!r} refs={refs_i!r}\n"
                        f"  stats={sacre_stats[i].tolist()}")
        assert_same_score(fast.sentence_score(hyp, refs_i), expected, f"sentence_score[{i}]")
    # sentence_score leaves num_refs at the last segment's count in both.
    assert_same_signature(fast, sacre, "after sentence_score")


_ALL_OPTIONS = {"tokenize": "13a", "lowercase": True, "smooth_method": "add-k",
                "smooth_value": 0.5, "effective_order": True, "max_ngram_order": 6}


chrf_options = st.fixed_dictionaries({
    "char_order": st.integers(0, 7),
    "word_order": st.integers(0, 3),
    "beta": st.sampled_from([1, 2, 3, 0.5]),
    "lowercase": st.booleans(),
    "whitespace": st.booleans(),
    "eps_smoothing": st.booleans(),
}).filter(lambda o: o["char_order"] + o["word_order"] > 0)


def scan_between(scanners, raw: bytes, before: bytes, after: bytes, *args):
    """Each scanner on ``raw`` inside a buffer between ``before`` and ``after`` (a
    scanner that looked outside its segment would see them), each writing from slot 3
    of an output filled with the sentinel 7: ``[(count, out), ...]``."""
    buf = np.frombuffer(before + raw + after, dtype=np.uint8).copy()
    start, end = len(before), len(before) + len(raw)
    results = []
    for scan in scanners:
        out = np.full(len(raw) + 8, 7, dtype=np.uint64)
        results.append((scan(buf, start, end, out, 3, *args), out))
    return results


def assert_same_slots(results, size: int) -> None:
    """The flat scanner (first) wrote only inside the ``size`` slots of its segment and,
    unless it handed the segment back, the branchy one's hashes (second)."""
    (flat, flat_out), (branchy, branchy_out) = results
    assert (flat_out[:3] == 7).all() and (flat_out[3 + size:] == 7).all(), \
        "wrote outside its slots"
    if flat >= 0:
        assert flat == branchy
        assert flat_out[3:3 + flat].tolist() == branchy_out[3:3 + branchy].tolist()

