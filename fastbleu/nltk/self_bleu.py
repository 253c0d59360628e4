"""Self-BLEU on token lists: NLTK's recipe (Texygen) and a ``fast_bleu.SelfBLEU`` drop-in.

Self-BLEU measures the diversity of generated text: each sentence is scored
with sentence BLEU (Papineni et al., 2002) against all the other sentences,
usually with NLTK's ``SmoothingFunction().method1`` (Chen & Cherry, 2014),
as Texygen does.  The naive loop is quadratic; here the clip counts are
leave-one-out maxima (:mod:`fastbleu._kernels.pool`), linear in the
n-grams.

* :func:`self_bleu` equals ``[nltk.sentence_bleu([s_j for j != i], s_i,
  weights, smoothing_function) for i]`` bit for bit;
* :class:`SelfBLEU` takes ``fast_bleu.SelfBLEU``'s arguments and returns
  its ``get_score()`` dict, with fast-bleu's own arithmetic (see there).
"""

from __future__ import annotations

import math
import numbers
import warnings
from itertools import chain

import numpy as np

from .._kernels.text.hashing import finish_keys
from .._kernels.bleu.nltk_formula import nltk_sentence_scores
from ..metrics.bleu.pool import self_rows
from ..statistics.tokens import Tokens
from .bleu import _UNIFORM_4, _bleu, _check_smoothing, _first_zero_orders, _fractions, \
    _weight_list
from .precision import Fraction, brevity_penalty
from .segments import _starts, numbering
from .smoothing import ZERO_COUNT_WARNING, vectorized_method

__all__ = ["self_bleu", "SelfBLEU"]


def _tokens(sentences, what: str, key=None) -> Tokens:
    """Token keys of token lists: equal tokens (``==``/``hash``, or ``key(token)``) share a key."""
    n = len(sentences)
    vocabulary = numbering()  # a new token gets the next number
    number = vocabulary.__getitem__
    try:
        count = np.fromiter(map(len, sentences), dtype=np.int64, count=n)
        ids = np.fromiter(map(number, chain.from_iterable(sentences)), dtype=np.int64,
                          count=int(count.sum()))
    except (TypeError, ValueError):
        for i, sentence in enumerate(sentences):
            if not hasattr(sentence, "__len__") or not hasattr(sentence, "__iter__"):
                raise TypeError(f"{what}[{i}] must be a sequence of tokens (a list of str, or a "
                                f"str to score characters), not {type(sentence).__name__}"
                                ) from None
            for token in sentence:
                try:
                    hash(token)
                except TypeError:
                    raise TypeError(f"{what}[{i}] contains an unhashable token {token!r} "
                                    f"({type(token).__name__}); tokens must be hashable"
                                    ) from None
        raise
    n_keys = len(vocabulary)
    # Number key(token) instead, unless key is str and every token is exactly a str (a
    # str subclass may have its own __str__).  Every token's key, not the vocabulary's:
    # equal tokens may have different keys (1 == 1.0 == True; their str differ).
    if key is not None and not (key is str and set(map(type, vocabulary)) <= {str}):
        by_key = numbering()
        ids = np.fromiter(map(by_key.__getitem__, map(key, chain.from_iterable(sentences))),
                          dtype=np.int64, count=ids.size)
        n_keys = len(by_key)
    # Each token's key, written over its number (a fresh array costs page faults).
    hashes = np.take(finish_keys(np.arange(n_keys)), ids, out=ids.view(np.uint64), mode="clip")
    return Tokens(hashes, _starts(count), count)


def _sentences(sentences, what: str) -> list:
    if isinstance(sentences, (str, bytes)) or not hasattr(sentences, "__iter__"):
        raise TypeError(f"{what} must be a sequence of sentences (each a list of tokens), not "
                        f"{type(sentences).__name__}")
    return list(sentences)


def _plain(weights) -> bool:
    """Whether every weight is a finite Python float or int (NLTK's arithmetic is then float's)."""
    return all(type(w) in (float, int) and math.isfinite(w)
               for weight in weights for w in weight)


def _method5(p_n, p5):
    """NLTK's method 5 (Chen & Cherry, 2014) given the 5-gram precision ``p5``, in its order."""
    m = {-1: p_n[0] + 1}
    after = p_n + [p5]
    for i, p_i in enumerate(p_n):
        p_n[i] = (m[i - 1] + p_i + after[i + 1]) / 3
        m[i] = p_n[i]
    return p_n


def self_bleu(sentences, weights=_UNIFORM_4, smoothing_function=None, auto_reweigh=False):
    """Self-BLEU: NLTK's sentence BLEU of every sentence against all the others.

    Equal, bit for bit, to ``[nltk.translate.bleu_score.sentence_bleu(others_i,
    s_i, weights, smoothing_function, auto_reweigh) for i]`` where
    ``others_i`` is every sentence but ``s_i``; Texygen's recipe is
    ``smoothing_function=SmoothingFunction().method1`` with uniform weights.
    Linear in the n-grams (leave-one-out maxima; Papineni et al., 2002, for
    the clipping; Chen & Cherry, 2014, for the smoothing).

    Parameters
    ----------
    sentences : sequence of sequence
        The sentences, each a sequence of hashable tokens (a ``str`` is scored
        character by character, as in NLTK).  A duplicate of ``s_i`` is one
        of its others.
    weights : tuple of float or list of tuple of float
        As in :func:`fastbleu.nltk.sentence_bleu`.
    smoothing_function : callable, optional
        A :class:`~fastbleu.nltk.SmoothingFunction` method (this module's or
        NLTK's; methods 0 and 1 run in a compiled kernel, 2-7 per sentence on
        the counts) or any callable with NLTK's convention, which is called
        with the list of the other sentences and so costs O(N) per sentence.
    auto_reweigh : bool
        As in :func:`fastbleu.nltk.sentence_bleu`.

    Returns
    -------
    numpy.ndarray
        float64, ``(N,)``, or ``(N, n_weights)`` for a list of weight tuples.
        Where NLTK returns the int 0 (no unigram match), 0.0.

    Raises
    ------
    TypeError
        If a sentence is not a sequence of hashable tokens, or for bad weights
        or smoothing function.
    ValueError
        With exactly one sentence: it has no others (NLTK fails there with a
        ``KeyError`` or ``ValueError``).  No sentences give an empty array.

    Warns
    -----
    UserWarning
        Without smoothing, NLTK's warning once per n-gram order that has no
        match in a sentence with unigram matches.

    Examples
    --------
    >>> from fastbleu.nltk import SmoothingFunction
    >>> s = ["the cat sat".split(), "the cat ran".split(), "a dog ran".split()]
    >>> self_bleu(s, weights=(0.5, 0.5), smoothing_function=SmoothingFunction().method1).round(6)
    array([0.57735 , 0.707107, 0.129099])
    """
    sentences = _sentences(sentences, "sentences")
    weights = _weight_list(weights)
    _check_smoothing(smoothing_function)
    tokens = _tokens(sentences, "sentences")
    n_sentences = len(sentences)
    scores = np.zeros((n_sentences, len(weights)), dtype=np.float64)
    shape = (n_sentences,) if len(weights) == 1 else scores.shape
    n = max(len(weight) for weight in weights)
    if n_sentences == 0 or n == 0:  # with no weights NLTK returns 0 before counting
        return scores.reshape(shape)
    plan = vectorized_method(smoothing_function)
    five = plan is not None and plan[0] in ("method5", "method7")
    rows = self_rows(tokens, max(n, 5) if five else n)
    max_order = (rows.shape[1] - 2) // 2
    live = rows[:, 2] != 0
    if plan is not None and plan[0] in ("method0", "method1") and _plain(weights) and \
            (plan[0] == "method0" or (type(plan[1].epsilon) in (float, int)
                                      and math.isfinite(plan[1].epsilon))):
        if plan[0] == "method0":
            zero = rows[live, 2:2 + n] == 0
            for order in _first_zero_orders(zero, [int(j) + 1 for j in
                                                   np.flatnonzero(zero.any(axis=0))]):
                warnings.warn(ZERO_COUNT_WARNING.format(order))
        matrix = np.zeros((len(weights), n), dtype=np.float64)
        for k, weight in enumerate(weights):
            matrix[k, :len(weight)] = [float(w) for w in weight]
        lengths = np.array([len(weight) for weight in weights], dtype=np.int64)
        reweigh = np.array([bool(auto_reweigh) and weight == _UNIFORM_4 for weight in weights])
        epsilon = 0.0 if plan[0] == "method0" else float(plan[1].epsilon)
        nltk_sentence_scores(rows, n, matrix, lengths, reweigh, 0 if plan[0] == "method0" else 1,
                             epsilon, scores)
        return scores.reshape(shape)

    for i in np.flatnonzero(live):
        hyp_len, ref_len = int(rows[i, 0]), int(rows[i, 1])
        p_n = _fractions(rows[i, 2:2 + n], np.maximum(rows[i, 2 + max_order:2 + max_order + n], 1))
        hypothesis = sentences[i]
        if plan is None:
            others = sentences[:i] + sentences[i + 1:]
            p_n = smoothing_function(p_n, references=others, hypothesis=hypothesis,
                                     hyp_len=hyp_len)
        else:
            name, params = plan
            if name in ("method5", "method7"):
                if name == "method7":
                    p_n = params.method4(p_n, None, hypothesis, hyp_len)
                p5 = Fraction(int(rows[i, 6]), max(int(rows[i, 2 + max_order + 4]), 1),
                              _normalize=False)
                p_n = _method5(p_n, p5)
            else:
                p_n = getattr(params, name)(p_n, references=None, hypothesis=hypothesis,
                                            hyp_len=hyp_len)
        scores[i] = _bleu(weights, p_n, brevity_penalty(ref_len, hyp_len), hyp_len,
                          auto_reweigh)
    return scores.reshape(shape)


#: ``log(LDBL_MIN)``: fast-bleu's method 0 logarithm of a zero precision (x86-64 long double).
_LOG_LDBL_MIN = -16382 * math.log(2)


class SelfBLEU:
    """``fast_bleu.SelfBLEU``'s interface and numbers: Self-BLEU for several weight sets at once.

    The leave-one-out clip counts and closest other lengths are those of
    :func:`self_bleu` (linear time); the formula is fast-bleu 0.0.90's
    (Papineni et al., 2002; its methods 0 and 1 of Chen & Cherry, 2014),
    which differs from NLTK's in the last digits: weights pass through
    float32; method 1 turns a zero count into ``1 / (10 * denominator)``;
    method 0 gives a zero count ``log(LDBL_MIN)`` (``-11355.1``), so such a
    score is 0, where NLTK's is tiny but positive; the logs are added left
    to right, not with ``fsum``.  fast-bleu computes those steps in long
    double, here in double: scores agree to about 1e-15 relative.

    Tokens are compared as ``str(token)``, as fast-bleu converts them.
    fast-bleu joins an n-gram's tokens with spaces, so tokens that contain
    spaces can collide there; not here.  Its ``auto_reweight`` compares the
    weights to ``(0.25, 0, 0, 0)``, which its own check (weights summing to
    one) rules out, so it never reweighs; neither does this class.

    Parameters
    ----------
    lines_of_tokens : list of list
        The sentences, each a list of tokens.
    weights : dict, default ``{4: (0.25, 0.25, 0.25, 0.25)}``
        Name -> weights of orders 1..n (``n >= 2``, summing to 1).
    smoothing_func : {0, 1}
        fast-bleu's method 0 (none) or 1 (NLTK's ``method1``), default 1.
    auto_reweight : bool
        Accepted, and without effect, as in fast-bleu.
    verbose : bool
        Accepted and ignored.

    Raises
    ------
    ValueError
        For weights or a smoothing value fast-bleu rejects (it asserts), or
        fewer than two sentences (fast-bleu reads past its arrays).
    """

    def __init__(self, lines_of_tokens, weights=None, smoothing_func=1, auto_reweight=False,
                 verbose=False):
        if weights is None:
            weights = {4: (1. / 4, 1. / 4, 1. / 4, 1. / 4)}
        if not isinstance(weights, dict) or not weights:
            raise TypeError("weights must be a non-empty dict: name -> tuple of weights")
        for name, weight in weights.items():
            if not all(isinstance(w, numbers.Real) for w in weight) or len(weight) < 2:
                raise ValueError(f"weights[{name!r}] must hold at least 2 numbers (fast-bleu's "
                                 f"2 <= n), got {weight!r}")
            if not abs(1. - sum(weight)) < 1e-15:
                raise ValueError(f"weights[{name!r}] must sum to one, got {sum(weight)!r}")
        if smoothing_func not in (0, 1) or isinstance(smoothing_func, bool):
            raise ValueError(f"smoothing_func must be 0 or 1, got {smoothing_func!r}")
        lines = _sentences(lines_of_tokens, "lines_of_tokens")
        if len(lines) < 2:
            raise ValueError("SelfBLEU needs at least two sentences: a single sentence has no "
                             "other sentences to be scored against")
        self._weights = {name: tuple(weight) for name, weight in weights.items()}
        self._smoothing = int(smoothing_func)
        self.auto_reweight = auto_reweight
        n = max(len(weight) for weight in self._weights.values())
        self._rows = self_rows(_tokens(lines, "lines_of_tokens", key=str), n)

    def get_score(self) -> dict:
        """Self-BLEU of every sentence, per weight set: ``{name: [float, ...]}``."""
        rows = self._rows
        max_order = (rows.shape[1] - 2) // 2
        hyp_len = rows[:, 0].astype(np.float64)
        ref_len = rows[:, 1].astype(np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            bp = np.where(hyp_len > ref_len, 1.0, np.exp(1 - ref_len / hyp_len))
        result = {}
        for name, weight in self._weights.items():
            n = len(weight)
            w = np.asarray(weight, dtype=np.float32).astype(np.float64)
            matches = rows[:, 2:2 + n]
            denominator = np.maximum(rows[:, 2 + max_order:2 + max_order + n], 1)
            zero = matches == 0
            with np.errstate(divide="ignore"):
                logs = np.log(np.where(zero, 1.0, matches) / denominator)
            if self._smoothing == 0:
                logs[zero] = _LOG_LDBL_MIN
            else:
                logs[zero] = np.log(1.0 / (10.0 * denominator[zero]))
            s = np.zeros(rows.shape[0])
            for m in range(n):  # left to right, as fast-bleu adds them
                s += w[m] * logs[:, m]
            score = np.where(rows[:, 2] == 0, 0.0, bp * np.exp(s))
            result[name] = score.tolist()
        return result
