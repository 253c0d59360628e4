"""The tokenizers fastbleu offers, under sacrebleu's names and signatures."""

from __future__ import annotations

from dataclasses import dataclass

from ._kernels.tokenize import TOKENIZE_13A, TOKENIZE_CHAR, TOKENIZE_NONE


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
    """

    name: str
    signature: str
    kernel: int


TOKENIZERS = {
    "13a": Tokenizer("13a", "13a", TOKENIZE_13A),
    "none": Tokenizer("none", "none", TOKENIZE_NONE),
    "char": Tokenizer("char", "char", TOKENIZE_CHAR),
}

#: sacrebleu tokenizers that fastbleu does not run yet.
NOT_YET_AVAILABLE = ("zh", "intl", "ja-mecab", "ko-mecab", "spm", "flores101", "flores200",
                     "spBLEU-1K")

DEFAULT_TOKENIZER = "13a"

#: sacrebleu's default tokenizer per target language when none is named.
TRG_LANG_TOKENIZERS = {"zh": "zh", "ja": "ja-mecab", "ko": "ko-mecab"}


def get_tokenizer(name: str) -> Tokenizer:
    """Look a tokenizer up by its sacrebleu name.

    Raises
    ------
    ValueError
        If fastbleu has no tokenizer of that name; the message lists those
        it has.
    """
    if not isinstance(name, str):
        raise TypeError(f"tokenize must be a str, got {type(name).__name__}")
    try:
        return TOKENIZERS[name]
    except KeyError:
        available = ", ".join(TOKENIZERS)
        if name in NOT_YET_AVAILABLE:
            raise ValueError(f"tokenizer {name!r} is not available in this version of "
                             f"fastbleu; available: {available}") from None
        raise ValueError(f"unknown tokenizer {name!r}; available: {available}") from None
