"""Differential tests on real data: WMT22 system outputs against sacrebleu 2.6."""

from __future__ import annotations

import csv

import numpy as np
import pytest
from testkit.data import published_references
from sacrebleu.metrics import BLEU as SacreBLEU

from fastbleu import BLEU
from testkit.data import (WMT22, WMT22_TOKENIZER, needs_wmt22, read_lines, wmt22_references,
                      wmt22_system, wmt22_systems)
from testkit.marks import slow, slow_unless

pytestmark = needs_wmt22


def _published_rows():
    if not (WMT22 / "published-bleu.tsv").is_file():
        return []
    with open(WMT22 / "published-bleu.tsv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    return [row for row in rows
            if WMT22_TOKENIZER.get(row["pair"].split("-")[1], "13a") in ("13a", "char", "zh")]




def test_published_table_has_rows():
    # Guard against a silently empty parametrisation below.
    assert len(_published_rows()) >= 100
    assert sum(row["pair"] == "en-zh" for row in _published_rows()) >= 30


@pytest.mark.parametrize("row", _published_rows(),
                         ids=lambda r: f"{r['pair']}-{r['system']}-{r['metric']}")
def test_published_bleu(row):
    pair = row["pair"]
    tokenize = WMT22_TOKENIZER.get(pair.split("-")[1], "13a")
    hyps = read_lines(wmt22_system(pair, row["system"]))
    score = BLEU(tokenize=tokenize).corpus_score(hyps, published_references(pair, row["metric"]))
    assert abs(score.score - float(row["score"])) <= 1e-9


OPTION_SETS = [
    {},
    {"lowercase": True},
    {"tokenize": "none", "smooth_method": "floor"},
    {"tokenize": "char", "smooth_method": "add-k", "smooth_value": 2},
    {"smooth_method": "none", "max_ngram_order": 6},
    {"effective_order": True, "max_ngram_order": 2, "lowercase": True},
]


#: The quick run's slice of the 3 x 6 below (issue 28): every option set once, every pair
#: twice; the other cases run with -m slow.
QUICK_CORPUS = {("de-en", 0), ("cs-en", 1), ("en-de", 2), ("de-en", 3), ("cs-en", 4),
                ("en-de", 5)}


@pytest.mark.parametrize("pair, options", [
    slow_unless((pair, k) in QUICK_CORPUS, pair, options, id=f"{pair}-{options}")
    for pair in ["de-en", "cs-en", "en-de"] for k, options in enumerate(OPTION_SETS)])
def test_corpus_score_equals_sacrebleu(pair, options):
    system = wmt22_systems(pair)[0]
    hyps = read_lines(wmt22_system(pair, system))
    refs = [read_lines(p) for p in wmt22_references(pair)]
    ours = BLEU(**options).corpus_score(hyps, refs)
    theirs = SacreBLEU(**options).corpus_score(hyps, refs)
    assert ours.score == theirs.score
    assert ours.counts == theirs.counts
    assert ours.totals == theirs.totals
    assert ours.precisions == theirs.precisions
    assert ours.bp == theirs.bp
    assert (ours.sys_len, ours.ref_len) == (theirs.sys_len, theirs.ref_len)
    assert str(ours) == str(theirs)


@pytest.mark.parametrize("pair", [slow("de-en"), "zh-en", "en-de"])
def test_segment_statistics_equal_sacrebleu(pair):
    system = wmt22_systems(pair)[-1]
    hyps = read_lines(wmt22_system(pair, system))
    refs = [read_lines(p) for p in wmt22_references(pair)]
    ours = BLEU().segment_statistics(hyps, refs)
    theirs = np.array(SacreBLEU()._extract_corpus_statistics(hyps, refs), dtype=np.int64)
    np.testing.assert_array_equal(ours, theirs)


SENTENCE_OPTION_SETS = [{}, {"effective_order": True},
                        {"smooth_method": "floor", "effective_order": True},
                        {"smooth_method": "add-k", "tokenize": "char"}]
#: The quick run's slice of the 3 x 4 below: every option set once (issue 28).
QUICK_SENTENCE = {("de-en", 0), ("cs-en", 1), ("en-ja", 2), ("en-ja", 3)}


@pytest.mark.parametrize("pair, system_index, options", [
    slow_unless((pair, k) in QUICK_SENTENCE, pair, index, options,
                id=f"{pair}-{index}-{options}")
    for pair, index in [("de-en", 0), ("cs-en", 3), ("en-ja", 1)]
    for k, options in enumerate(SENTENCE_OPTION_SETS)])
def test_sentence_scores_equal_sacrebleu(pair, system_index, options):
    if pair == "en-ja":
        options = {**options, "tokenize": "char"}
    hyps = read_lines(wmt22_system(pair, wmt22_systems(pair)[system_index]))
    refs = [read_lines(p) for p in wmt22_references(pair)]
    ours = BLEU(**options).sentence_scores(hyps, refs)
    sacre = SacreBLEU(**options)
    theirs = np.array([sacre.sentence_score(h, [r[i] for r in refs]).score
                       for i, h in enumerate(hyps)])
    mismatches = np.flatnonzero(ours != theirs)
    assert mismatches.size == 0, f"segments {mismatches[:10]} differ"


def test_reference_cache_scores_many_systems():
    pair = "de-en"
    refs = [read_lines(p) for p in wmt22_references(pair)]
    cached = BLEU(references=refs)
    for system in wmt22_systems(pair)[:4]:
        hyps = read_lines(wmt22_system(pair, system))
        assert cached.corpus_score(hyps, None).score == \
            SacreBLEU().corpus_score(hyps, refs).score
    assert cached.get_signature().format().startswith("nrefs:2|")
