"""From a metric and token ids on the GPU to its statistics and scores: the seam ``BLEU`` calls.

:func:`metric_statistics` is what ``BLEU.segment_statistics`` (and so
``sentence_scores``, ``corpus_score`` and the accumulator) runs for inputs on
a GPU (:func:`fastbleu.gpu.on_device` tells which); :func:`corpus_score` and
:func:`nltk_sentence_bleu` go on to scores.
"""

from __future__ import annotations

from .scores import nltk_scores, smoothing_code
from .statistics import bleu_statistics, statistics_and_num_refs


def device_statistics(hypotheses, references, max_order: int = 4,
                      ref_length: str = "closest"):
    """BLEU statistics of token ids on the GPU, left there, and the references' ``num_refs``.

    What :meth:`fastbleu.BLEU.segment_statistics` returns for device inputs
    (it calls this and records ``num_refs`` and ``tok:ids`` on itself).

    Returns
    -------
    (device array, int)
        int64 rows ``(n, 2 + 2 * max_order)`` in the input's library, and
        sacrebleu's ``num_refs`` of the references (``-1`` when it varies):
        where a reference mask is on the device, counted by the same launch
        and read back only when first used (:class:`~fastbleu.gpu.statistics.PendingNumRefs`), so
        that nothing here waits on the device.
    """
    return statistics_and_num_refs(hypotheses, references, max_order=max_order,
                                   ref_length=ref_length)


def _bleu(metric):
    from ..metrics.base import Metric

    if not (isinstance(metric, Metric) and metric.key == "bleu"):
        raise TypeError(f"token ids on the GPU are scored by fastbleu.BLEU only, not "
                        f"{type(metric).__name__}")
    return metric


def metric_statistics(metric, hypotheses, references):
    """A ``fastbleu.BLEU``'s statistics of token ids on the GPU, left on the GPU:
    ``metric.segment_statistics(hypotheses, references)`` (which records ``num_refs``
    and ``tok:ids`` on the metric), after checking that the metric is a BLEU.

    Raises
    ------
    TypeError
        For another metric (only BLEU takes token ids).
    ValueError
        With ``lowercase=True`` (ids have no case), or for malformed ids.
    """
    return _bleu(metric).segment_statistics(hypotheses, references)


def corpus_score(metric, hypotheses, references):
    """``metric.corpus_score`` of token ids on the GPU: the rows are summed on the device
    and only the summed row comes back to be scored (a ``BLEUScore``)."""
    return _bleu(metric).corpus_score(hypotheses, references)


def nltk_sentence_bleu(hypotheses, references, weights=(0.25, 0.25, 0.25, 0.25),
                       smoothing_function=None, auto_reweigh=False, *, pad_id=None,
                       eos_id=None):
    """NLTK's ``sentence_bleu`` of every segment of token ids, on the GPU.

    The scores of :func:`fastbleu.nltk.sentence_bleu_many` (Papineni et al.,
    2002; smoothing methods 0-7 of Chen and Cherry, 2014) for the same ids,
    computed from statistics counted on the device (:func:`nltk_scores`).

    Parameters
    ----------
    hypotheses, references, pad_id, eos_id
        As for :func:`bleu_statistics`.
    weights : tuple of float
        Weights of the n-gram orders.
    smoothing_function : None, int or SmoothingFunction method
        NLTK's method 0-7 (``SmoothingFunction().method1``, or its number).
    auto_reweigh : bool
        NLTK's re-weighting of hypotheses shorter than 4 tokens.

    Returns
    -------
    array
        float64 scores on the device.
    """
    method, _ = smoothing_code(smoothing_function)
    order = len(weights)
    rows = bleu_statistics(hypotheses, references, pad_id=pad_id, eos_id=eos_id,
                           max_order=max(order, 5) if method in (5, 7) else order)
    return nltk_scores(rows, weights, smoothing_function, auto_reweigh)
