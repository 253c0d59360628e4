"""The :class:`Tokenizer` type and the five tokenizers that run in the byte kernels.

``13a``, ``none``, ``char``, ``intl`` and ``zh`` need nothing but the kernels
of :mod:`fastbleu._kernels.tokenize`, so they are plain constants.  The
tokenizers that call a Python library (:mod:`fastbleu.tokenizers.mecab`,
:mod:`fastbleu.tokenizers.spm`) build a :class:`Tokenizer` of the same type
and import it from here, never from the package or the registry, so that no
import runs in a loop.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from .._native.codes import (TOKENIZE_13A, TOKENIZE_CHAR, TOKENIZE_INTL, TOKENIZE_NONE,
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
