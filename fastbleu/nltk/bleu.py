"""NLTK's ``corpus_bleu`` and ``sentence_bleu``, and ``sentence_bleu_many`` for many segments.

The n-gram counting of every segment runs in fastbleu's parallel kernel
(:mod:`fastbleu.nltk.segments`); what follows the counting is NLTK's own
arithmetic.  :func:`corpus_bleu` and :func:`sentence_bleu` finish in
NLTK's exact order of operations (unnormalised fractions, ``math.fsum`` of
``w_n * log(p_n)``), so their scores are bit-identical to NLTK's.
:func:`sentence_bleu_many` finishes with numpy over all segments at once;
its scores agree with NLTK's ``sentence_bleu`` to about 1e-15.

BLEU (Papineni et al., 2002) is ``BP * exp(sum_n w_n * log p_n)``, with the
modified n-gram precisions ``p_n`` (summed over the corpus before dividing)
and the brevity penalty ``BP`` of the summed hypothesis and closest
reference lengths.  Smoothing (Chen and Cherry, 2014) replaces zero
precisions; see :mod:`fastbleu.nltk.smoothing`.
"""

from __future__ import annotations

import math
import numbers
import warnings

import numpy as np

from .precision import Fraction, brevity_penalty
from .segments import prepare
from .smoothing import ZERO_COUNT_WARNING, SmoothingFunction, smooth_many, vectorized_method

__all__ = ["corpus_bleu", "sentence_bleu", "sentence_bleu_many"]

_UNIFORM_4 = (0.25, 0.25, 0.25, 0.25)


def _weight_list(weights) -> list:
    """NLTK's reading of ``weights``: one tuple of weights, or a list of such tuples."""
    try:
        weights[0][0]
    except (TypeError, IndexError):
        weights = [weights]
    except KeyError:
        raise TypeError("weights must be a tuple of floats (one per n-gram order) or a list "
                        f"of such tuples, not {type(weights).__name__}") from None
    for weight in weights:
        if not hasattr(weight, "__len__") or not hasattr(weight, "__iter__"):
            raise TypeError("weights must be a tuple of floats (one per n-gram order) or a list "
                            f"of such tuples; got an item of type {type(weight).__name__}")
        for w_i in weight:
            if not isinstance(w_i, numbers.Real):
                raise TypeError(f"weights must be real numbers, got {w_i!r} "
                                f"({type(w_i).__name__}) in {weight!r}")
    return weights


def _zero(weights):
    return 0 if len(weights) == 1 else [0] * len(weights)


def _bleu(weights, p_n, bp, hyp_len, auto_reweigh):
    """NLTK's last step: ``bp * exp(fsum(w_i * log(p_i)))`` over the positive ``p_i``."""
    bleu_scores = []
    for weight in weights:
        # Uniform re-weighting for hypotheses shorter than 4 tokens, default weights only.
        if auto_reweigh:
            if hyp_len < 4 and weight == _UNIFORM_4:
                weight = (1 / hyp_len,) * hyp_len
        s = (w_i * math.log(p_i) for w_i, p_i in zip(weight, p_n) if p_i > 0)
        s = bp * math.exp(math.fsum(s))
        bleu_scores.append(s)
    return bleu_scores[0] if len(weights) == 1 else bleu_scores


def _fractions(numerators, denominators):
    return [Fraction(int(m), int(d), _normalize=False) for m, d in zip(numerators, denominators)]


def _check_smoothing(smoothing_function):
    if smoothing_function and not callable(smoothing_function):
        raise TypeError("smoothing_function must be callable, e.g. SmoothingFunction().method1, "
                        f"not {type(smoothing_function).__name__}")


def corpus_bleu(list_of_references, hypotheses, weights=_UNIFORM_4, smoothing_function=None,
                auto_reweigh=False):
    """Corpus-level BLEU, exactly as ``nltk.translate.bleu_score.corpus_bleu``.

    Clipped n-gram matches and n-gram counts are summed over all segments
    before dividing (micro-averaged precision, Papineni et al., 2002), and
    the brevity penalty uses the summed hypothesis and closest reference
    lengths.

    Parameters
    ----------
    list_of_references : sequence
        Per hypothesis, a sequence of one or more references, each a sequence
        of hashable tokens (a ``str`` is scored character by character).  With
        Arrow hypotheses: an Arrow ``list<list<string>>`` column, or a list of
        Arrow ``list<string>`` columns, one per reference stream (a null is a
        missing reference).
    hypotheses : sequence or pyarrow.Array or pyarrow.ChunkedArray
        The hypotheses, each a sequence of hashable tokens, or an Arrow
        ``list<string>`` column.
    weights : tuple of float or list of tuple of float, default (0.25, 0.25, 0.25, 0.25)
        Weights of the n-gram orders 1, 2, ...; a list of tuples gives a list
        of scores.
    smoothing_function : callable, optional
        A method of :class:`SmoothingFunction` (default: ``method0``, no
        smoothing) or any callable with NLTK's convention
        ``f(p_n, references=..., hypothesis=..., hyp_len=...)``.  As in NLTK it
        receives the *last* segment's references and hypothesis.
    auto_reweigh : bool, default False
        If the corpus has fewer than 4 hypothesis tokens and ``weights`` is
        exactly ``(0.25, 0.25, 0.25, 0.25)``, use uniform weights over that
        many orders instead.

    Returns
    -------
    float or int or list
        The score; the int ``0`` if no unigram matches (NLTK's early exit); a
        list when ``weights`` is a list of several tuples.

    Raises
    ------
    TypeError
        If an input has the wrong type.
    ValueError
        If the inputs are not aligned (NLTK raises ``AssertionError``), a
        hypothesis has no reference, or there are no hypotheses (NLTK raises
        ``ZeroDivisionError``).
    AssertionError
        From smoothing method 6, as in NLTK, when the trigram precision is 0.

    Warns
    -----
    UserWarning
        Without smoothing, once per n-gram order without matches (NLTK's text).

    Examples
    --------
    >>> hyp = "the cat sat on the mat".split()
    >>> refs = ["the cat is on the mat".split(), "there is a cat on the mat".split()]
    >>> corpus_bleu([refs], [hyp], weights=(0.5, 0.5))
    0.7071067811865476
    """
    segments = prepare(list_of_references, hypotheses)
    return _corpus_bleu(segments, weights, smoothing_function, auto_reweigh, "corpus_bleu")


def _corpus_bleu(segments, weights, smoothing_function, auto_reweigh, caller):
    weights = _weight_list(weights)
    _check_smoothing(smoothing_function)
    max_weight_length = max(len(weight) for weight in weights)
    if max_weight_length == 0:
        return _zero(weights)  # NLTK never counts anything then
    if len(segments) == 0:
        raise ValueError(f"{caller} needs at least one hypothesis; hypotheses is empty")

    stats = segments.statistics(max_weight_length)
    n = max_weight_length
    p_numerators = stats[:, 2:2 + n].sum(axis=0)
    p_denominators = np.maximum(stats[:, 2 + n:], 1).sum(axis=0)
    hyp_lengths = int(stats[:, 0].sum())
    ref_lengths = int(stats[:, 1].sum())

    bp = brevity_penalty(ref_lengths, hyp_lengths)
    p_n = _fractions(p_numerators, p_denominators)
    # No unigram match means no match of any order.
    if p_numerators[0] == 0:
        return _zero(weights)
    if not smoothing_function:
        smoothing_function = SmoothingFunction().method0
    # NLTK hands the smoothing function the last segment's references and hypothesis.
    references, hypothesis = segments.segment(len(segments) - 1)
    p_n = smoothing_function(p_n, references=references, hypothesis=hypothesis,
                             hyp_len=hyp_lengths)
    return _bleu(weights, p_n, bp, hyp_lengths, auto_reweigh)


def sentence_bleu(references, hypothesis, weights=_UNIFORM_4, smoothing_function=None,
                  auto_reweigh=False):
    """Sentence-level BLEU, exactly as ``nltk.translate.bleu_score.sentence_bleu``.

    The corpus BLEU of a one-segment corpus.  For many segments use
    :func:`sentence_bleu_many`.

    Parameters
    ----------
    references : sequence of sequence
        One or more references, each a sequence of hashable tokens.
    hypothesis : sequence
        A sequence of hashable tokens (a ``str`` is scored character by
        character, as in NLTK).
    weights, smoothing_function, auto_reweigh
        As in :func:`corpus_bleu`.

    Returns
    -------
    float or int or list
        As in :func:`corpus_bleu`.

    Examples
    --------
    >>> hypothesis = "the cat sat on the mat".split()
    >>> sentence_bleu(["the cat is on the mat".split()], hypothesis, weights=(0.5, 0.5))
    0.7071067811865476
    """
    segments = prepare([references], [hypothesis], sentence=True)
    return _corpus_bleu(segments, weights, smoothing_function, auto_reweigh, "sentence_bleu")


def _first_zero_orders(live_zero: np.ndarray, orders: list[int]) -> list[int]:
    """``orders`` in the order an NLTK loop over the segments would first warn about them."""
    first = {order: int(np.argmax(live_zero[:, order - 1])) for order in orders}
    return sorted(orders, key=lambda order: (first[order], order))


def sentence_bleu_many(list_of_references, hypotheses, weights=_UNIFORM_4,
                       smoothing_function=None, auto_reweigh=False):
    """NLTK's ``sentence_bleu`` of every segment, vectorized.

    Equal to ``[sentence_bleu(refs, hyp, ...) for refs, hyp in zip(list_of_references,
    hypotheses)]`` to about 1e-15, with the counting in fastbleu's parallel
    kernel and the smoothing and BLEU formula in numpy.  Smoothing functions
    other than ``None`` and the methods of :class:`SmoothingFunction` (this
    module's or NLTK's) are called once per segment, as NLTK would, which is
    exact but slower.

    Parameters
    ----------
    list_of_references, hypotheses, weights, smoothing_function, auto_reweigh
        As in :func:`corpus_bleu` (Python sequences or Arrow columns).

    Returns
    -------
    numpy.ndarray
        ``float64`` scores, shape ``(n_segments,)``; ``(n_segments, n_weights)``
        when ``weights`` is a list of several tuples.  A segment without
        unigram matches scores ``0.0`` (NLTK returns the int ``0``).

    Raises
    ------
    TypeError, ValueError
        As in :func:`corpus_bleu`.
    AssertionError, IndexError
        Smoothing method 6's conditions, checked on every segment that has a
        unigram match (NLTK would raise at the first such segment).

    Warns
    -----
    UserWarning
        Without smoothing, NLTK's warning for each n-gram order that has no
        match in some segment, once per order (NLTK's loop warns once per
        segment; Python's default filter shows each text once anyway).

    Examples
    --------
    >>> refs = [["the cat is on the mat".split()], ["there is a cat".split()]]
    >>> hyps = ["the cat sat on the mat".split(), "a cat is there".split()]
    >>> sentence_bleu_many(refs, hyps, weights=(0.5, 0.5)).round(6)
    array([0.707107, 0.57735 ])
    """
    segments = prepare(list_of_references, hypotheses)
    weights = _weight_list(weights)
    _check_smoothing(smoothing_function)
    n_segments = len(segments)
    scores = np.zeros((n_segments, len(weights)), dtype=np.float64)
    shape = (n_segments,) if len(weights) == 1 else scores.shape
    max_weight_length = max(len(weight) for weight in weights)
    if max_weight_length == 0 or n_segments == 0:
        return scores.reshape(shape)

    plan = vectorized_method(smoothing_function)
    five = plan is not None and plan[0] in ("method5", "method7")
    n = max_weight_length
    max_order = max(n, 5) if five else n
    stats = segments.statistics(max_order)
    numerators = stats[:, 2:2 + n]
    denominators = np.maximum(stats[:, 2 + max_order:2 + max_order + n], 1)
    live = np.flatnonzero(numerators[:, 0] != 0)  # no unigram match: NLTK's early 0
    if live.size == 0:
        return scores.reshape(shape)
    hyp_len = stats[live, 0]
    ref_len = stats[live, 1]

    if plan is None:
        for row, i in enumerate(live):
            references, hypothesis = segments.segment(int(i))
            length = int(hyp_len[row])
            p_n = smoothing_function(_fractions(numerators[i], denominators[i]),
                                     references=references, hypothesis=hypothesis,
                                     hyp_len=length)
            scores[i] = _bleu(weights, p_n, brevity_penalty(int(ref_len[row]), length), length,
                              auto_reweigh)
        return scores.reshape(shape)

    name, params = plan
    numerator5 = denominator5 = None
    if five:
        numerator5 = stats[live, 6]
        denominator5 = np.maximum(stats[live, 2 + max_order + 4], 1)
    p, zero_orders = smooth_many(name, params, numerators[live], denominators[live], hyp_len,
                                 numerator5, denominator5)
    for order in _first_zero_orders(numerators[live] == 0, zero_orders):
        warnings.warn(ZERO_COUNT_WARNING.format(order))

    bp = np.where(hyp_len > ref_len, 1.0, np.exp(1 - ref_len / hyp_len))
    positive = p > 0
    log_p = np.log(np.where(positive, p, 1.0))
    for k, weight in enumerate(weights):
        w = np.zeros(n)
        w[:len(weight)] = [float(w_i) for w_i in weight]
        s = np.where(positive, w * log_p, 0.0).sum(axis=1)
        short = hyp_len < 4
        if auto_reweigh and short.any() and weight == _UNIFORM_4:
            for length in (1, 2, 3):
                rows = hyp_len == length
                if rows.any():
                    uniform = np.zeros(n)
                    uniform[:length] = 1 / length
                    s[rows] = np.where(positive[rows], uniform * log_p[rows], 0.0).sum(axis=1)
        scores[live, k] = bp * np.exp(s)
    return scores.reshape(shape)
