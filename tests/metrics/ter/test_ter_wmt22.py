"""TER on real data: WMT22 system outputs against sacrebleu 2.6, option by option.

WMT22 published no TER, so sacrebleu 2.6 is the reference.  This is a sample:
one system per pair, its first segments of at most 40 words (60 characters
for Chinese and Japanese targets), every option alone and all together, each
reference alone, all of them, and three streams; and a few long zh-en
segments with the default options.  ``benchmarks/verify_ter_wmt22.py`` checks
every segment of every system with the same :func:`compare`.

sacrebleu's shift search is slow (a few to a few hundred segments a second on
these files), and its statistics, ``sentence_score``, ``corpus_score`` and
multi-reference scores each search the same hypothesis/reference pairs
again.  :func:`memoized_sacrebleu_edits` memoizes its
``translation_edit_rate``, a pure function of two word lists, so that each
pair is searched once while every other line of sacrebleu still runs.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator

import pytest
import sacrebleu.metrics.ter as sacrebleu_ter
from sacrebleu.metrics import TER as SacreTER
from sacrebleu.tokenizers.tokenizer_ter import TercomTokenizer

from fastbleu import TER
from testkit.data import needs_wmt22, read_lines, wmt22_references, wmt22_system, wmt22_systems
from testkit.data import published_references  # the streams of one reference letter, or of all
from testkit.marks import slow_unless

pytestmark = needs_wmt22

PAIRS = ["cs-en", "de-en", "zh-en", "en-de", "en-zh", "en-ja"]
CJK_PAIRS = ("en-zh", "en-ja")
ALL_OPTIONS = {"normalized": True, "no_punct": True, "asian_support": True,
               "case_sensitive": True}
#: The default, each option alone, and all of them together.
OPTION_SETS = [{}] + [{name: True} for name in ALL_OPTIONS] + [ALL_OPTIONS]
#: asian_support where it acts: with normalization and punctuation removal, lowercased.
CJK_OPTIONS = {"normalized": True, "no_punct": True, "asian_support": True}
#: The sample's size.  sacrebleu's search dominates the time, and its cost grows steeply
#: with the segment's length: WMT22 has segments of 90 words and more.
SAMPLE_SEGMENTS = 100
MAX_WORDS = 40
MAX_CJK_CHARACTERS = 60

#: sacrebleu's corpus TER adds the segments' float mean reference lengths one by one;
#: fastbleu divides the exact integer sum once.  Equal bit for bit when every mean is an
#: exact float (1, 2, 4, 8 or 16 references), within this otherwise.
THREE_REFERENCE_TOLERANCE = 1e-12


def option_label(options: dict) -> str:
    """``default``, or the options' names joined by ``+``."""
    return "+".join(name for name, on in options.items() if on) or "default"


def short_segments(pair: str, hyps: list[str], streams: list[list[str]],
                   count: int = SAMPLE_SEGMENTS) -> list[int]:
    """The indices of the first ``count`` segments whose hypothesis and references all
    have at most :data:`MAX_WORDS` words (:data:`MAX_CJK_CHARACTERS` characters when the
    target is Chinese or Japanese)."""
    cjk = pair in CJK_PAIRS
    limit = MAX_CJK_CHARACTERS if cjk else MAX_WORDS

    def size(text: str) -> int:
        return len(text) if cjk else len(text.split())

    keep = [i for i, hyp in enumerate(hyps)
            if max(size(hyp), *(size(stream[i]) for stream in streams)) <= limit]
    return keep[:count]


def reference_letters(pair: str) -> list[str]:
    """The pair's reference letters (``A``, ``B`` ...), in file order."""
    return [re.search(r"\.ref\.([^.]+)\.", p.name).group(1) for p in wmt22_references(pair)]


def reference_sets(pair: str) -> Iterator[tuple[str, list[list[str]]]]:
    """``(label, streams)``: each reference alone, all of them, and with two references a
    third stream (the first again), so that the mean length is not an exact float."""
    letters = reference_letters(pair)
    single = {letter: published_references(pair, f"ter-{letter}")[0] for letter in letters}
    for letter in letters:
        yield letter, [single[letter]]
    if len(letters) > 1:
        yield "+".join(letters), [single[letter] for letter in letters]
    if len(letters) == 2:
        yield "+".join(letters + letters[:1]), [single[letter]
                                                for letter in letters + letters[:1]]


@contextlib.contextmanager
def memoized_sacrebleu_edits() -> Iterator[dict]:
    """sacrebleu's TER with ``translation_edit_rate`` memoized on the two word sequences
    (it depends on nothing else); yields the memo, restores the function on exit."""
    search = sacrebleu_ter.translation_edit_rate
    memo: dict = {}

    def memoized(words_hyp, words_ref):
        key = (tuple(words_hyp), tuple(words_ref))
        found = memo.get(key)
        if found is None:
            found = memo[key] = search(words_hyp, words_ref)
        return found

    sacrebleu_ter.translation_edit_rate = memoized
    try:
        yield memo
    finally:
        sacrebleu_ter.translation_edit_rate = search


def compare(hyps: list[str], refs: list[list[str]], options: dict,
            sentence_stride: int = 1, scalar_stride: int = 1) -> dict:
    """fastbleu's TER against sacrebleu's on one system and one set of reference streams.

    Compared: every segment's statistics (edits exactly; the scaled mean reference
    length over 720720 exactly equal to sacrebleu's float mean); ``sentence_scores``
    against the score sacrebleu's ``sentence_score`` makes of each of those rows, and
    against sacrebleu's ``sentence_score`` called on every ``sentence_stride``-th
    segment; fastbleu's ``sentence_score`` called on every ``scalar_stride``-th segment
    (about 1 ms a call: one segment through the whole batch pipeline); the corpus
    score; the signature without its version field.

    Returns
    -------
    dict
        ``segments``; ``statistics``, ``sentence_scores`` and ``sentence_score``: the
        indices of the segments that differ; ``corpus``: sacrebleu's corpus score;
        ``corpus_diff``: |ours - theirs|; ``corpus_exact``: score, edits, reference
        length and printout equal; ``corpus_edits``: the edit totals equal;
        ``signature``: the signatures equal apart from the version.
    """
    ours, theirs = TER(**options), SacreTER(**options)
    stats = ours.segment_statistics(hyps, refs)
    expected = theirs._extract_corpus_statistics(hyps, refs)
    statistics = [i for i, (row, want) in enumerate(zip(stats.tolist(), expected))
                  if row[0] != want[0] or row[1] / 720720 != want[1]]
    if len(stats) != len(expected):
        statistics.append(min(len(stats), len(expected)))
    sentence = ours.sentence_scores(hyps, refs).tolist()
    # sacrebleu's sentence_score is this formula of the segment's one statistics row
    vectorized = [i for i, row in enumerate(expected)
                  if sentence[i] != theirs._compute_score_from_stats(row).score]
    scalar = []
    for i in range(0, len(hyps), sentence_stride):
        segment_refs = [stream[i] for stream in refs]
        want = theirs.sentence_score(hyps[i], segment_refs).score
        if sentence[i] != want or (i % scalar_stride == 0 and
                                   ours.sentence_score(hyps[i], segment_refs).score != want):
            scalar.append(i)
    mine, theirs_corpus = ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs)
    return {
        "segments": len(hyps),
        "statistics": statistics,
        "sentence_scores": vectorized,
        "sentence_score": scalar,
        "corpus": theirs_corpus.score,
        "corpus_diff": abs(mine.score - theirs_corpus.score),
        "corpus_exact": (mine.score == theirs_corpus.score
                         and mine.num_edits == theirs_corpus.num_edits
                         and mine.ref_length == theirs_corpus.ref_length
                         and str(mine) == str(theirs_corpus)),
        "corpus_edits": mine.num_edits == theirs_corpus.num_edits,
        "signature": all(ours.get_signature().format(short=short).rsplit("|", 1)[0] ==
                         theirs.get_signature().format(short=short).rsplit("|", 1)[0]
                         for short in (False, True)),
    }


def agrees(result: dict, num_refs: int) -> bool:
    """Everything equal: the corpus score exactly with 1 or 2 references, and within
    :data:`THREE_REFERENCE_TOLERANCE` (relative) with more."""
    if num_refs <= 2:
        corpus = result["corpus_exact"]
    else:
        corpus = result["corpus_edits"] and result["corpus_diff"] <= \
            THREE_REFERENCE_TOLERANCE * max(1.0, abs(result["corpus"]))
    return (corpus and result["signature"] and not result["statistics"]
            and not result["sentence_scores"] and not result["sentence_score"])


@pytest.fixture(scope="module")
def sacrebleu_memo():
    # One memo for the module: options that tokenize a pair alike (asian_support alone,
    # for one) then cost sacrebleu nothing.
    with memoized_sacrebleu_edits() as memo:
        yield memo


def _cases():
    cases = [(pair, options) for pair in PAIRS for options in OPTION_SETS]
    return cases + [(pair, CJK_OPTIONS) for pair in CJK_PAIRS]


#: The quick run's slice (issue 28): every option set once on en-de or de-en, zh-en's
#: shifts with the defaults, and asian_support where it acts (en-zh, en-ja); the other
#: cases run with -m slow.
QUICK = [("en-de", "default"), ("de-en", "normalized"), ("en-de", "no_punct"),
         ("de-en", "asian_support"), ("en-de", "case_sensitive"),
         ("de-en", option_label(ALL_OPTIONS)), ("zh-en", "default"),
         ("en-zh", option_label(CJK_OPTIONS)), ("en-ja", option_label(ALL_OPTIONS))]


def _sample(pair: str) -> tuple[list[str], list[tuple[str, list[list[str]]]]]:
    """The first system's short segments (:func:`short_segments`), and each of
    :func:`reference_sets` on those segments."""
    hyps = read_lines(wmt22_system(pair, wmt22_systems(pair)[0]))
    keep = short_segments(pair, hyps, published_references(pair, "ter-all"))
    return [hyps[i] for i in keep], [(label, [[stream[i] for i in keep] for stream in streams])
                                     for label, streams in reference_sets(pair)]


@pytest.mark.parametrize("pair, options", [
    slow_unless((p, option_label(o)) in QUICK, p, o, id=f"{p}-{option_label(o)}")
    for p, o in _cases()])
def test_sample_equals_sacrebleu(pair, options, sacrebleu_memo):
    """Each reference set: every segment's statistics and sentence scores equal
    sacrebleu's, and so does the corpus score."""
    hyps, reference_sets_ = _sample(pair)
    assert len(hyps) == SAMPLE_SEGMENTS
    assert len(reference_sets_) == (1 if pair == "en-ja" else 4)
    for label, streams in reference_sets_:
        result = compare(hyps, streams, options, scalar_stride=4)
        assert agrees(result, len(streams)), (label, result)


def test_long_segments_equal_sacrebleu(sacrebleu_memo):
    """Beyond the sample's limit: zh-en's segments of more than 50 words among its first
    150 (56 to 91 words; sacrebleu shifts words at most 50 positions)."""
    pair = "zh-en"
    hyps = read_lines(wmt22_system(pair, wmt22_systems(pair)[0]))[:150]
    streams = published_references(pair, "ter-all")
    keep = [i for i, hyp in enumerate(hyps) if len(hyp.split()) > 50]
    assert len(keep) >= 4 and max(len(hyps[i].split()) for i in keep) >= 90
    result = compare([hyps[i] for i in keep], [[streams[0][i] for i in keep]], {})
    assert agrees(result, 1), result


def _levenshtein(a: list[str], b: list[str]) -> int:
    row = list(range(len(b) + 1))
    for i, word in enumerate(a, 1):
        previous, row[0] = row[0], i
        for j, other in enumerate(b, 1):
            previous, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1,
                                           previous + (word != other))
    return row[-1]


def test_the_sample_has_shifts():
    """Guard against a sample too easy to bite: in many of zh-en's sample segments the
    shifts pay (fewer edits than the word edit distance)."""
    hyps, sets = _sample("zh-en")
    refs = dict(sets)["A"][0]
    tokenize = TercomTokenizer()
    edits = TER().segment_statistics(hyps, [refs])[:, 0]
    words = [(tokenize(h.rstrip()).split(), tokenize(r.rstrip()).split())
             for h, r in zip(hyps, refs)]
    shifted = sum(int(e) < _levenshtein(h, r) for e, (h, r) in zip(edits, words))
    assert shifted >= 10


def test_three_streams_make_inexact_means():
    """With the third stream the mean reference lengths are thirds (61/3 ...), not exact
    floats, so the three-stream rows above do test the averaging."""
    streams = dict(reference_sets("de-en"))
    assert list(streams) == ["A", "B", "A+B", "A+B+A"]
    hyps = read_lines(wmt22_system("de-en", wmt22_systems("de-en")[0]))[:20]
    rows = TER().segment_statistics(hyps, [s[:20] for s in streams["A+B+A"]])
    assert ((rows[:, 1] // (720720 // 3)) % 3 != 0).any()
