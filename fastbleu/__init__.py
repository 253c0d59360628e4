"""fastbleu: sacrebleu-exact BLEU, vectorized with numba, for large corpora.

The pipeline, one module a stage::

    text.py        inputs -> UTF-8 columns (Arrow buffers)
    statistics.py  columns -> token hashes -> per-segment statistics (kernels)
    score.py       statistics -> BLEU scores, signatures and reports
    bleu.py        the BLEU class that ties them together
"""

from ._version import __version__
from .bleu import BLEU
from .score import BLEUScore, BLEUSignature

__all__ = ["BLEU", "BLEUScore", "BLEUSignature", "__version__"]
