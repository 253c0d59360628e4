"""The tokenizers fastbleu offers, under sacrebleu's names and signatures.

Modules::

    base       the Tokenizer type; the five kernel tokenizers (13a, none, char, intl, zh)
    registry   name -> factory; get_tokenizer and the name lists
    lines      LineTransform: a Python line tokenizer in front of the none kernel
    mecab      ja-mecab, ko-mecab (extras ja, ko; imported by the registry when asked for)
    spm        spm, flores101, flores200, spBLEU-1K (extra spm; likewise)
"""

from .base import TOKENIZERS, Tokenizer
from .registry import (DEFAULT_TOKENIZER, MECAB_TOKENIZERS, SPM_TOKENIZERS, TOKENIZER_NAMES,
                       TRG_LANG_TOKENIZERS, get_tokenizer)

__all__ = ["Tokenizer", "TOKENIZERS", "MECAB_TOKENIZERS", "SPM_TOKENIZERS", "TOKENIZER_NAMES",
           "DEFAULT_TOKENIZER", "TRG_LANG_TOKENIZERS", "get_tokenizer"]
