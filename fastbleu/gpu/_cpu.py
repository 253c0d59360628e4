"""The CPU package's private module paths that the GPU path reads, in one place.

Everything else in :mod:`fastbleu.gpu` goes through public objects
(``fastbleu.BLEU``, ``metric.formula``, ``fastbleu.nltk``).
"""

from ..statistics.token_ids import IDS_SIGNATURE  # noqa: F401  (the signature's ``tok`` of token ids)
from ..inputs.text import as_text_column, lowercase  # noqa: F401  (text columns: UTF-8 + offsets)
from ..statistics.tokens import tokenize  # noqa: F401  (a BLEU tokenizer's token hashes)
from .._kernels.pairwise import chrf_units  # noqa: F401  (chrF's character and word hashes)
