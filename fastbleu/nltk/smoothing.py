"""NLTK's smoothing methods 0-7 (Chen and Cherry, 2014), scalar and vectorized.

:class:`SmoothingFunction` is NLTK's class, method for method: each method
takes the list ``p_n`` of modified precisions (unnormalised
:class:`~fastbleu.nltk.precision.Fraction` objects) and returns the smoothed
list, keeping fractions where NLTK keeps them, so that scores are
bit-identical.  Any callable with that calling convention can be used as a
smoothing function, NLTK's own included.

:func:`smooth_many` computes the same methods for many segments at once on
float arrays, for :func:`fastbleu.nltk.sentence_bleu_many`; exact rational
steps become float operations there, so results agree with the scalar
methods to a few units in the last place rather than bit for bit.

Two properties of NLTK's methods that callers must know:

* at corpus level NLTK passes the *last* segment's references and
  hypothesis to the smoothing function, so method 5 (and method 7) adds the
  5-gram precision of the last segment only, and method 6 uses the number of
  n-grams in the last hypothesis as *l*;
* method 6 asserts that the *trigram* precision (``p_n[2]``) is non-zero,
  although its message speaks of bigrams, and needs at least 3 orders.

References
----------
Chen, B. and Cherry, C. (2014). A systematic comparison of smoothing
techniques for sentence-level BLEU. In *Proceedings of the Ninth Workshop on
Statistical Machine Translation*, pp. 362-367. https://aclanthology.org/W14-3346

Lin, C.-Y. and Och, F. J. (2004). ORANGE: a method for evaluating automatic
evaluation metrics for machine translation. In *Proceedings of COLING*.

Gao, J. and He, X. (2013). Training MRF-based phrase translation models
using gradient ascent. In *Proceedings of NAACL*.
"""

from __future__ import annotations

import math
import sys
import warnings

import numpy as np

from .precision import Fraction, modified_precision

__all__ = ["SmoothingFunction", "ZERO_COUNT_WARNING", "vectorized_method", "smooth_many"]

#: The warning of method 0 (no smoothing), with the n-gram order to fill in.
ZERO_COUNT_WARNING = (
    "\nThe hypothesis contains 0 counts of {}-gram overlaps.\n"
    "Therefore the BLEU score evaluates to 0, independently of\n"
    "how many N-gram overlaps of lower order it contains.\n"
    "Consider using lower n-gram order or use "
    "SmoothingFunction()"
)

#: Method 6's assertion message (NLTK's text; the assertion is on trigrams).
METHOD6_MESSAGE = "This smoothing method requires non-zero precision for bigrams."

_METHODS = tuple(f"method{i}" for i in range(8))


class SmoothingFunction:
    """The smoothing techniques of Chen and Cherry (2014) for sentence-level BLEU.

    Parameters
    ----------
    epsilon : float, default 0.1
        The count given to zero matches by method 1.
    alpha : float, default 5
        The weight of the prior in method 6.
    k : float, default 5
        The constant of method 4.

    Examples
    --------
    >>> from fastbleu.nltk import sentence_bleu
    >>> hypothesis = "the cat sat on a mat".split()
    >>> reference = "the cat is on the mat".split()
    >>> sentence_bleu([reference], hypothesis, smoothing_function=SmoothingFunction().method1)
    0.10266900960803409
    """

    def __init__(self, epsilon=0.1, alpha=5, k=5):
        self.epsilon = epsilon
        self.alpha = alpha
        self.k = k

    def __repr__(self):
        return f"SmoothingFunction(epsilon={self.epsilon!r}, alpha={self.alpha!r}, k={self.k!r})"

    def method0(self, p_n, *args, **kwargs):
        """No smoothing: a zero precision becomes ``sys.float_info.min``, with a warning.

        The smallest positive float keeps the logarithm finite, so BLEU comes
        out as (practically) zero.
        """
        p_n_new = []
        for i, p_i in enumerate(p_n):
            if p_i.numerator != 0:
                p_n_new.append(p_i)
            else:
                warnings.warn(ZERO_COUNT_WARNING.format(i + 1))
                p_n_new.append(sys.float_info.min)
        return p_n_new

    def method1(self, p_n, *args, **kwargs):
        """Method 1: add ``epsilon`` to zero match counts (Chen and Cherry, 2014, section 3)."""
        return [(p_i.numerator + self.epsilon) / p_i.denominator if p_i.numerator == 0 else p_i
                for p_i in p_n]

    def method2(self, p_n, *args, **kwargs):
        """Method 2: add 1 to numerator and denominator of orders above 1 (Lin and Och, 2004)."""
        return [Fraction(p_n[i].numerator + 1, p_n[i].denominator + 1, _normalize=False)
                if i != 0 else p_n[0]
                for i in range(len(p_n))]

    def method3(self, p_n, *args, **kwargs):
        """Method 3: NIST geometric smoothing, the k-th zero count becomes ``1 / 2**k``.

        Modifies ``p_n`` in place and returns it, as NLTK does.
        """
        incvnt = 1  # mteval-v13a.pl's k
        for i, p_i in enumerate(p_n):
            if p_i.numerator == 0:
                p_n[i] = 1 / (2**incvnt * p_i.denominator)
                incvnt += 1
        return p_n

    def method4(self, p_n, references, hypothesis, hyp_len=None, *args, **kwargs):
        """Method 4: the k-th zero count becomes ``1 / (2**k * self.k / ln(hyp_len))``.

        Shorter hypotheses get smaller smoothed counts (Chen and Cherry, 2014,
        section 3, with NLTK's arithmetic).  Orders are left at zero (and
        later skipped) when the hypothesis has at most one token.
        """
        incvnt = 1
        hyp_len = hyp_len if hyp_len else len(hypothesis)
        for i, p_i in enumerate(p_n):
            if p_i.numerator == 0 and hyp_len > 1:
                numerator = 1 / (2**incvnt * self.k / math.log(hyp_len))
                p_n[i] = numerator / p_i.denominator
                incvnt += 1
        return p_n

    def method5(self, p_n, references, hypothesis, hyp_len=None, *args, **kwargs):
        """Method 5: average each precision with its neighbours of order n-1 and n+1.

        ``p'_n = (p'_{n-1} + p_n + p_{n+1}) / 3`` with ``p'_0 = p_1 + 1``;
        the order after the last is always the 5-gram precision of
        ``hypothesis`` against ``references`` (Chen and Cherry, 2014, section 3).
        """
        m = {}
        p_n_plus1 = p_n + [modified_precision(references, hypothesis, 5)]
        m[-1] = p_n[0] + 1
        for i, p_i in enumerate(p_n):
            p_n[i] = (m[i - 1] + p_i + p_n_plus1[i + 1]) / 3
            m[i] = p_n[i]
        return p_n

    def method6(self, p_n, references, hypothesis, hyp_len=None, *args, **kwargs):
        """Method 6: interpolate orders from 3 on with a prior ``p_{n-1}**2 / p_{n-2}``.

        ``p'_n = (m_n + alpha * pi0) / (l_n + alpha)``, where ``m_n`` is the
        match count, ``l_n`` the number of n-grams of ``hypothesis`` and
        ``pi0`` the prior (Gao and He, 2013; Chen and Cherry, 2014, section 3).

        Raises
        ------
        AssertionError
            If the trigram precision is zero (NLTK's check and message).
        IndexError
            If ``p_n`` has fewer than 3 orders.
        """
        if len(p_n) < 3:
            raise IndexError("smoothing method 6 needs weights for at least 3 n-gram orders, "
                             f"got {len(p_n)}")
        assert p_n[2], METHOD6_MESSAGE
        for i, p_i in enumerate(p_n):
            if i in [0, 1]:
                continue
            pi0 = 0 if p_n[i - 2] == 0 else p_n[i - 1] ** 2 / p_n[i - 2]
            m = p_i.numerator
            l = max(0, len(hypothesis) - i)  # noqa: E741 - the number of (i+1)-grams
            p_n[i] = (m + self.alpha * pi0) / (l + self.alpha)
        return p_n

    def method7(self, p_n, references, hypothesis, hyp_len=None, *args, **kwargs):
        """Method 7: method 4, then method 5."""
        p_n = self.method4(p_n, references, hypothesis, hyp_len)
        p_n = self.method5(p_n, references, hypothesis, hyp_len)
        return p_n


# -- many segments at once --------------------------------------------------------------------


def vectorized_method(smoothing_function):
    """``(name, instance)`` if :func:`smooth_many` can compute ``smoothing_function``, else None.

    That is the case for ``None`` (method 0) and for the unmodified methods of
    this module's :class:`SmoothingFunction` or of NLTK's (when NLTK is
    already imported), bound to an instance whose class overrides none of
    them.
    """
    if not smoothing_function:
        return "method0", SmoothingFunction()
    owner = getattr(smoothing_function, "__self__", None)
    function = getattr(smoothing_function, "__func__", None)
    name = getattr(function, "__name__", None)
    if owner is None or name not in _METHODS:
        return None
    bases = [SmoothingFunction]
    nltk_module = sys.modules.get("nltk.translate.bleu_score")
    if nltk_module is not None and hasattr(nltk_module, "SmoothingFunction"):
        bases.append(nltk_module.SmoothingFunction)
    for base in bases:
        if isinstance(owner, base) and all(getattr(type(owner), m, None) is getattr(base, m)
                                           for m in _METHODS):
            if function is getattr(base, name):
                return name, owner
    return None


def _zero_count_ranks(zero: np.ndarray) -> np.ndarray:
    """For each zero entry, how many zeros precede it in its row, plus one (NLTK's ``incvnt``)."""
    return np.cumsum(zero, axis=1)


def smooth_many(name, params, numerators, denominators, hyp_len, numerator5=None,
                denominator5=None):
    """Smoothed precisions of many segments, as floats (NLTK's method ``name``).

    Parameters
    ----------
    name : str
        ``"method0"`` ... ``"method7"``.
    params : SmoothingFunction
        Supplies ``epsilon``, ``alpha`` and ``k``.
    numerators, denominators : numpy.ndarray
        ``int64`` (segments, orders): clipped matches and ``max(1, n-grams)``
        per order.  Every segment has at least one unigram match.
    hyp_len : numpy.ndarray
        ``int64`` hypothesis lengths.
    numerator5, denominator5 : numpy.ndarray, optional
        The 5-gram precision of each segment; needed by methods 5 and 7.

    Returns
    -------
    precisions : numpy.ndarray
        ``float64`` (segments, orders); entries that are not positive are
        skipped by the BLEU formula, as NLTK skips them.
    zero_orders : list of int
        For method 0, the 1-based orders with a zero count in some segment
        (each is warned about once); otherwise empty.

    Raises
    ------
    AssertionError, IndexError
        Method 6's conditions (see :meth:`SmoothingFunction.method6`).
    """
    num = numerators.astype(np.float64)
    den = denominators.astype(np.float64)
    zero = numerators == 0
    p = num / den
    zero_orders: list[int] = []
    if name == "method0":
        p[zero] = sys.float_info.min
        zero_orders = [int(j) + 1 for j in np.flatnonzero(zero.any(axis=0))]
    elif name == "method1":
        p = np.where(zero, (0 + params.epsilon) / den, p)
    elif name == "method2":
        p[:, 1:] = (num[:, 1:] + 1) / (den[:, 1:] + 1)
    elif name == "method3":
        ranks = _zero_count_ranks(zero)
        p = np.where(zero, 1 / np.ldexp(den, ranks), p)
    elif name in ("method4", "method7"):
        p = _method4(params, p, zero, den, hyp_len)
        if name == "method7":
            p = _method5(p, numerator5, denominator5)
    elif name == "method5":
        p = _method5(p, numerator5, denominator5)
    elif name == "method6":
        p = _method6(params, p, numerators, denominators, hyp_len)
    else:  # pragma: no cover - vectorized_method only returns the names above
        raise ValueError(f"unknown smoothing method {name!r}")
    return p, zero_orders


def _method4(params, p, zero, den, hyp_len):
    longer = (hyp_len > 1)[:, None]
    todo = zero & longer
    ranks = np.cumsum(todo, axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_len = np.log(np.maximum(hyp_len, 1).astype(np.float64))[:, None]
        smoothed = 1 / (np.ldexp(1.0, ranks) * params.k / log_len) / den
    return np.where(todo, smoothed, p)


def _method5(p, numerator5, denominator5):
    after = np.concatenate([p[:, 1:], (numerator5 / denominator5)[:, None]], axis=1)
    out = np.empty_like(p)
    previous = p[:, 0] + 1
    for i in range(p.shape[1]):
        previous = (previous + p[:, i] + after[:, i]) / 3
        out[:, i] = previous
    return out


def _method6(params, p, numerators, denominators, hyp_len):
    orders = p.shape[1]
    if orders < 3:
        raise IndexError("smoothing method 6 needs weights for at least 3 n-gram orders, "
                         f"got {orders}")
    assert (numerators[:, 2] != 0).all(), METHOD6_MESSAGE
    p = p.copy()
    alpha = params.alpha
    for i in range(2, orders):
        before = p[:, i - 2]
        with np.errstate(divide="ignore", invalid="ignore"):
            pi0 = np.where(before == 0, 0.0, p[:, i - 1] ** 2 / before)
        n_grams = np.maximum(hyp_len - i, 0)
        p[:, i] = (numerators[:, i] + alpha * pi0) / (n_grams + alpha)
    return p
