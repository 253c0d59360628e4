"""The tokenizers fastbleu offers, under sacrebleu's names and signatures.

Five run in the byte kernels (``13a``, ``none``, ``char``, ``intl``, ``zh``).
The others call a Python library on every distinct line and hand its
space-joined output to the ``none`` kernel (:mod:`fastbleu.line_tokenizers`):
``ja-mecab`` and ``ko-mecab`` (:mod:`fastbleu.tokenizers_mecab`, extras
``fastbleu[ja]`` and ``fastbleu[ko]``) and ``spm``, ``flores101``,
``flores200``, ``spBLEU-1K`` (:mod:`fastbleu.tokenizers_spm`, extra
``fastbleu[spm]``).  Those modules are imported only when their tokenizer is
asked for, so fastbleu imports without the optional packages.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field

from ._kernels.tokenize import (TOKENIZE_13A, TOKENIZE_CHAR, TOKENIZE_INTL, TOKENIZE_NONE,
                                TOKENIZE_ZH)


@dataclass(frozen=True)
class Tokenizer:
    """A tokenizer as the pipeline sees it.

    Attributes
    ----------
    name : str
        The name users pass (``tokenize="13a"``, ``-tok 13a``).
    signature : str
        What the BLEU signature's ``tok`` field says (sacrebleu's value).
    kernel : int
        Which byte kernel runs it.
    transform : callable, optional
        For tokenizers that run outside the kernels: maps a (lowercased)
        :class:`~fastbleu.text.TextColumn` to the column of its tokenized
        lines, tokens joined by spaces, which ``kernel`` (``none``) then
        splits.
    """

    name: str
    signature: str
    kernel: int
    transform: Callable | None = field(default=None, compare=False, repr=False)


#: The tokenizers that run in the byte kernels.
TOKENIZERS = {
    "13a": Tokenizer("13a", "13a", TOKENIZE_13A),
    "none": Tokenizer("none", "none", TOKENIZE_NONE),
    "char": Tokenizer("char", "char", TOKENIZE_CHAR),
    "intl": Tokenizer("intl", "intl", TOKENIZE_INTL),
    "zh": Tokenizer("zh", "zh", TOKENIZE_ZH),
}

#: Tokenizers backed by MeCab (name -> the extra that installs it).
MECAB_TOKENIZERS = {"ja-mecab": "ja", "ko-mecab": "ko"}

#: Tokenizers backed by a sentencepiece model.
SPM_TOKENIZERS = ("spm", "flores101", "flores200", "spBLEU-1K")

#: Every name ``tokenize=`` accepts: sacrebleu 2.6's ``BLEU.TOKENIZERS``.
TOKENIZER_NAMES = ("none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab", "spm",
                   "flores101", "flores200", "spBLEU-1K")

DEFAULT_TOKENIZER = "13a"

#: sacrebleu's default tokenizer per target language when none is named.
TRG_LANG_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}


def get_tokenizer(name: str, spm_model: str | os.PathLike | None = None) -> Tokenizer:
    """Look a tokenizer up by its sacrebleu name.

    Parameters
    ----------
    name : str
        One of :data:`TOKENIZER_NAMES`.
    spm_model : str or os.PathLike, optional
        The sentencepiece model file of ``spm``/``flores101``/``flores200``/
        ``spBLEU-1K``; by default sacrebleu's file in sacrebleu's cache
        folder (``$SACREBLEU/models``, ``~/.sacrebleu/models``).  Other
        tokenizers ignore it.

    Raises
    ------
    TypeError
        If ``name`` is not a str.
    ValueError
        If fastbleu has no tokenizer of that name; the message lists those
        it has.
    ImportError
        If the tokenizer needs an optional package that is not installed;
        the message names the extra to install.
    FileNotFoundError
        If an ``spm`` tokenizer's model file is missing; the message says
        where to put it.
    """
    if not isinstance(name, str):
        raise TypeError(f"tokenize must be a str, got {type(name).__name__}")
    if name in TOKENIZERS:
        return TOKENIZERS[name]
    if name in MECAB_TOKENIZERS:
        from .tokenizers_mecab import mecab_tokenizer

        return mecab_tokenizer(name)
    if name in SPM_TOKENIZERS:
        from .tokenizers_spm import spm_tokenizer

        return spm_tokenizer(name, spm_model)
    raise ValueError(f"unknown tokenizer {name!r}; available: {', '.join(TOKENIZER_NAMES)}")
