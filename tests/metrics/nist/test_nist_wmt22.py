"""NIST on WMT22 systems: ``fastbleu.nltk.corpus_nist`` equals NLTK's ``corpus_nist`` bit for
bit, and the ``NIST`` metric equals it to 1e-12, on the first 300 segments of three systems
of two language pairs, with one and with two references (13a tokens, as the metric makes
them).  Skipped without ../shared/wmt22.
"""

from __future__ import annotations

import math

import pytest

from testkit.data import needs_wmt22, read_lines, wmt22_references, wmt22_system, wmt22_systems

nltk_nist = pytest.importorskip("nltk.translate.nist_score")
from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a  # noqa: E402

from fastbleu import NIST  # noqa: E402
from fastbleu.nltk import corpus_nist, sentence_nist  # noqa: E402

pytestmark = needs_wmt22
SEGMENTS = 300
TOK = Tokenizer13a()


def _cases():
    cases = []
    for pair, systems in (("de-en", 2), ("en-de", 1)):
        try:
            names = wmt22_systems(pair)[:systems]
        except OSError:
            names = []
        cases += [(pair, name) for name in names]
    return cases or [("de-en", "missing")]


@pytest.mark.parametrize("pair, system", _cases())
def test_nist_equals_nltk_on_wmt22(pair, system):
    streams = [read_lines(path)[:SEGMENTS] for path in wmt22_references(pair)][:2]
    hyps = read_lines(wmt22_system(pair, system))[:SEGMENTS]
    hyp_tokens = [TOK(line).split() for line in hyps]
    for n_refs in range(1, len(streams) + 1):
        refs = streams[:n_refs]
        ref_tokens = [[TOK(s[i]).split() for s in refs] for i in range(len(hyps))]
        expected = nltk_nist.corpus_nist(ref_tokens, hyp_tokens)
        assert corpus_nist(ref_tokens, hyp_tokens) == expected
        score = NIST().corpus_score(hyps, refs).score
        assert math.isclose(score, expected, rel_tol=1e-12), (score, expected)
    for i in range(20):
        if len(hyp_tokens[i]) >= 5:
            assert sentence_nist(ref_tokens[i], hyp_tokens[i]) == \
                nltk_nist.sentence_nist(ref_tokens[i], hyp_tokens[i])
