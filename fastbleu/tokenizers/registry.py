"""The tokenizers fastbleu offers, under sacrebleu's names and signatures.

Five run in the byte kernels (``13a``, ``none``, ``char``, ``intl``, ``zh``;
:mod:`fastbleu.tokenizers.base`).
The others call a Python library on every distinct line and hand its
space-joined output to the ``none`` kernel (:mod:`fastbleu.tokenizers.lines`):
``ja-mecab`` and ``ko-mecab`` (:mod:`fastbleu.tokenizers.mecab`, extras
``fastbleu[ja]`` and ``fastbleu[ko]``) and ``spm``, ``flores101``,
``flores200``, ``spBLEU-1K`` (:mod:`fastbleu.tokenizers.spm`, extra
``fastbleu[spm]``).  Those modules are imported only when their tokenizer is
asked for, by their factory in :data:`FACTORIES` (this module is the only one
that imports them), so fastbleu imports without the optional packages.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial

from .base import TOKENIZERS, Tokenizer

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


def _kernel(name: str, spm_model: str | os.PathLike | None) -> Tokenizer:
    return TOKENIZERS[name]


def _mecab(name: str, spm_model: str | os.PathLike | None) -> Tokenizer:
    from .mecab import mecab_tokenizer

    return mecab_tokenizer(name)


def _spm(name: str, spm_model: str | os.PathLike | None) -> Tokenizer:
    from .spm import spm_tokenizer

    return spm_tokenizer(name, spm_model)


#: Every tokenizer name -> its factory, called with the ``spm_model`` argument
#: of :func:`get_tokenizer` (only the sentencepiece tokenizers use it).
FACTORIES: dict[str, Callable[[str | os.PathLike | None], Tokenizer]] = {
    **{name: partial(_kernel, name) for name in TOKENIZERS},
    **{name: partial(_mecab, name) for name in MECAB_TOKENIZERS},
    **{name: partial(_spm, name) for name in SPM_TOKENIZERS},
}


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
    factory = FACTORIES.get(name)
    if factory is not None:
        return factory(spm_model)
    raise ValueError(f"unknown tokenizer {name!r}; available: {', '.join(TOKENIZER_NAMES)}")
