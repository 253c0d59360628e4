"""chrF and chrF++ on real data: WMT22's published chrF table and sacrebleu 2.6, segment by
segment."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from sacrebleu.metrics import CHRF as SacreCHRF

from fastbleu import CHRF
from testkit.data import WMT22, needs_wmt22, read_lines, wmt22_references, wmt22_system, wmt22_systems
from testkit.data import published_references  # one reference set per published metric: A, B, C, all
from testkit.marks import slow_unless

pytestmark = needs_wmt22


def _published_rows():
    path = WMT22 / "published-chrf.tsv"
    if not path.is_file():
        return []
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle, delimiter="\t"))


def test_published_table_has_rows():
    # Guard against a silently empty parametrisation below.
    rows = _published_rows()
    assert len(rows) >= 150
    assert {row["metric"] for row in rows} >= {"chrf-A", "chrf-all"}


@pytest.mark.parametrize("row", _published_rows(),
                         ids=lambda r: f"{r['pair']}-{r['system']}-{r['metric']}")
def test_published_chrf(row):
    """Every row of the published table, against sacrebleu 2.6's number for it (the README
    of the data says why 20 multi-reference rows differ from the published one)."""
    hyps = read_lines(wmt22_system(row["pair"], row["system"]))
    score = CHRF().corpus_score(hyps, published_references(row["pair"], row["metric"]))
    assert abs(score.score - float(row["sacrebleu_2_6"])) <= 1e-9
    if row["metric"] != "chrf-all":
        assert abs(score.score - float(row["score"])) <= 1e-9


OPTION_SETS = [
    {},
    {"word_order": 2},
    {"word_order": 2, "lowercase": True, "eps_smoothing": True},
    {"whitespace": True, "beta": 1},
    {"char_order": 3, "word_order": 3, "beta": 3},
    {"char_order": 0, "word_order": 2},
]


PAIRS = [("de-en", 1), ("en-de", 2), ("zh-en", 2), ("en-ja", 1)]
#: The quick run's slice (issue 28): every option set once, every pair at least once,
#: Chinese with two references; the other 18 cases run with -m slow.
QUICK = {("de-en", 0), ("de-en", 1), ("en-de", 5), ("zh-en", 4), ("en-ja", 2), ("en-ja", 3)}


@pytest.mark.parametrize("pair, n_refs, options", [
    slow_unless((pair, k) in QUICK, pair, n_refs, options, id=f"{pair}-{n_refs}-{options}")
    for pair, n_refs in PAIRS for k, options in enumerate(OPTION_SETS)])
def test_every_segment_equals_sacrebleu(pair, n_refs, options):
    """Sentence scores, segment statistics and the corpus score of two systems, 1-2
    references, equal sacrebleu's to the last bit."""
    refs = [read_lines(p) for p in wmt22_references(pair)[:n_refs]]
    ours, theirs = CHRF(**options), SacreCHRF(**options)
    for system in wmt22_systems(pair)[:2]:
        hyps = read_lines(wmt22_system(pair, system))[:600]
        part = [ref[:600] for ref in refs]
        stats = ours.segment_statistics(hyps, part)
        expected = theirs._extract_corpus_statistics(hyps, part)
        assert stats.tolist() == expected
        sentence = ours.sentence_scores(hyps, part)
        for i in range(0, len(hyps), 7):
            assert sentence[i] == theirs.sentence_score(hyps[i], [r[i] for r in part]).score
        assert str(ours.corpus_score(hyps, part)) == str(theirs.corpus_score(hyps, part))
        assert ours.corpus_score(hyps, part).score == theirs.corpus_score(hyps, part).score


# The first 600 segments in the quick run, all of them with -m slow (issue 28).
@pytest.mark.parametrize("lines", [600, slow_unless(False, None, id="all")])
def test_three_references_and_the_cache(lines):
    """Three reference streams (the pair's two, then the first again, so ties are broken
    as sacrebleu breaks them: the first best wins) and references cached in the
    constructor for several systems."""
    pair = "en-de"
    refs = [read_lines(p)[:lines] for p in wmt22_references(pair)]
    refs = refs + refs[:1]
    cached = CHRF(word_order=2, references=refs)
    theirs = SacreCHRF(word_order=2, references=refs)
    for system in wmt22_systems(pair)[:3]:
        hyps = read_lines(wmt22_system(pair, system))[:lines]
        assert cached.corpus_score(hyps, None).score == theirs.corpus_score(hyps, None).score
    assert cached.get_signature().format().startswith("nrefs:3|case:mixed|eff:yes|nc:6|nw:2")
    hyps = read_lines(wmt22_system(pair, wmt22_systems(pair)[0]))[:lines]
    assert np.array_equal(cached.sentence_scores(hyps),
                          CHRF(word_order=2).sentence_scores(hyps, refs))
