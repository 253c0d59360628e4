"""The CPU package's private module paths that the GPU path reads, in one place.

Everything else in :mod:`fastbleu.gpu` goes through public objects
(``fastbleu.BLEU``, ``metric.formula``, ``fastbleu.nltk``).
"""

from ..token_ids import IDS_SIGNATURE  # noqa: F401  (the signature's ``tok`` of token ids)
