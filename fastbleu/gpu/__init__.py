"""BLEU on the GPU: token ids that are already on the device, scored without leaving it.

For RL rewards and minimum-Bayes-risk decoding, where the ids are CUDA
arrays (torch, CuPy, JAX, numba): :func:`bleu_statistics` computes the
per-segment statistics rows with numba.cuda kernels, equal to the CPU
path's (``fastbleu.BLEU(...).segment_statistics(fastbleu.TokenIds(...))``)
value for value; :func:`sentence_scores` and :func:`nltk_sentence_bleu`
score them on the device, :func:`corpus_statistics` sums them;
:func:`bootstrap_scores` and :func:`randomization_scores` resample them for
paired significance tests (on numpy's own draws and coins, as sacrebleu).  Results are
arrays of the input's library (torch in, torch out), on its current stream.

Install with ``pip install 'fastbleu[gpu]'`` (numba-cuda with the CUDA 12
libraries).  Nothing of this is imported by ``import fastbleu``, and
numba.cuda is imported only once a function here is handed an array; a
failing CUDA stack raises :class:`GPUUnavailable` with one line naming the
fix.  The kernels also run on numba's CUDA simulator
(``NUMBA_ENABLE_CUDASIM=1`` before numba is imported), slowly, which is how
the tests run without a GPU.

The seam the CPU metrics call: :func:`on_device` (is this input on a GPU?)
and :func:`metric_statistics` (``BLEU`` statistics of it, on the GPU).
"""

from __future__ import annotations

from .arrays import on_device
from .errors import GPUUnavailable
from .inputs import DeviceIds
from .pairwise import bleu_matrix, chrf_matrix
from .resampling import bootstrap_scores, randomization_scores
from .metric import corpus_score, device_statistics, metric_statistics, nltk_sentence_bleu
from .scores import corpus_statistics, nltk_scores, sentence_scores
from .statistics import KernelLimits, bleu_statistics

__all__ = [
    "DeviceIds",
    "GPUUnavailable",
    "KernelLimits",
    "bleu_matrix",
    "bleu_statistics",
    "bootstrap_scores",
    "corpus_score",
    "chrf_matrix",
    "corpus_statistics",
    "device_statistics",
    "metric_statistics",
    "nltk_scores",
    "nltk_sentence_bleu",
    "on_device",
    "randomization_scores",
    "sentence_scores",
]
