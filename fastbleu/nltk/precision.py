"""BLEU's building blocks for one segment, as NLTK computes them.

Modified n-gram precision, the closest reference length and the brevity
penalty of Papineni et al. (2002), with the exact semantics of
``nltk.translate.bleu_score`` (NLTK 3.8-3.10): the precision is a
:class:`Fraction` whose numerator and denominator are kept *unnormalised*
(2/4 stays 2/4), because corpus-level BLEU adds numerators and denominators
separately; a denominator is at least 1; ties between reference lengths go
to the shorter reference.

These helpers work on one segment in plain Python.  Many segments go
through fastbleu's counting kernel instead (:mod:`fastbleu.nltk.segments`).

References
----------
Papineni, K., Roukos, S., Ward, T. and Zhu, W.-J. (2002). BLEU: a method for
automatic evaluation of machine translation. In *Proceedings of ACL*,
pp. 311-318. https://aclanthology.org/P02-1040
"""

from __future__ import annotations

import math
import numbers
import sys
from collections import Counter
from fractions import Fraction as _Fraction

__all__ = ["Fraction", "modified_precision", "closest_ref_length", "brevity_penalty"]


class Fraction(_Fraction):
    """A :class:`fractions.Fraction` that can keep its numerator and denominator as given.

    NLTK's ``Fraction``: with ``_normalize=False`` (what BLEU uses),
    ``numerator`` and ``denominator`` return the values passed in, so that
    ``Fraction(2, 4, _normalize=False).numerator == 2``; the value (and all
    arithmetic, which returns plain fractions) is that of 1/2.
    """

    def __new__(cls, numerator=0, denominator=None, _normalize=False):
        if sys.version_info >= (3, 12):
            self = super().__new__(cls, numerator, denominator)
        else:
            self = super().__new__(cls, numerator, denominator, _normalize=_normalize)
        self._normalize = _normalize
        self._original_numerator = numerator
        self._original_denominator = denominator
        return self

    @property
    def numerator(self):
        if not self._normalize:
            return self._original_numerator
        return super().numerator

    @property
    def denominator(self):
        if not self._normalize:
            return self._original_denominator
        return super().denominator


def ngrams(sequence, n: int):
    """The n-grams of ``sequence`` as tuples, left to right (``nltk.util.ngrams``, unpadded)."""
    items = list(sequence)
    return zip(*(items[i:] for i in range(n)))


def _check_order(n) -> None:
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"n must be an int (the n-gram order), not {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be at least 1 (the n-gram order), got {n}")


def _check_sequence(value, what: str) -> None:
    if not hasattr(value, "__len__") or not hasattr(value, "__iter__"):
        raise TypeError(f"{what} must be a sequence of tokens (a list of str, or a str "
                        f"to score characters), not {type(value).__name__}")


def modified_precision(references, hypothesis, n):
    """Modified n-gram precision of a hypothesis (Papineni et al., 2002, section 2.1).

    Every n-gram of the hypothesis counts as a match at most as many times
    as it occurs in any *single* reference (its count is "clipped"), so
    repeating a reference word does not raise the precision.

    Parameters
    ----------
    references : sequence of sequence
        The reference translations, each a sequence of hashable tokens (a
        ``str`` is a sequence of characters).
    hypothesis : sequence
        The hypothesis, a sequence of hashable tokens.
    n : int
        The n-gram order, at least 1.

    Returns
    -------
    Fraction
        ``clipped matches / max(1, number of hypothesis n-grams)``, with the
        numerator and denominator unnormalised, as NLTK returns it.

    Raises
    ------
    TypeError
        If an argument is not a sequence, or ``n`` is not an int.
    ValueError
        If ``n < 1``, or there is no reference but the hypothesis has
        n-grams (NLTK raises a ``KeyError`` there).

    Examples
    --------
    Papineni et al.'s example 2: seven "the" clipped to the two of the first
    reference.

    >>> references = ["the cat is on the mat".split(), "there is a cat on the mat".split()]
    >>> p = modified_precision(references, "the the the the the the the".split(), n=1)
    >>> p.numerator, p.denominator, float(p)
    (2, 7, 0.2857142857142857)
    """
    _check_order(n)
    _check_sequence(hypothesis, "hypothesis")
    references = list(references)
    for j, reference in enumerate(references):
        _check_sequence(reference, f"references[{j}]")
    counts = Counter(ngrams(hypothesis, n)) if len(hypothesis) >= n else Counter()
    if counts and not references:
        raise ValueError("modified_precision needs at least one reference when the "
                         f"hypothesis has {n}-grams; references is empty")
    max_counts = {}
    for reference in references:
        reference_counts = Counter(ngrams(reference, n)) if len(reference) >= n else Counter()
        for ngram in counts:
            max_counts[ngram] = max(max_counts.get(ngram, 0), reference_counts[ngram])
    clipped_counts = {ngram: min(count, max_counts[ngram]) for ngram, count in counts.items()}
    numerator = sum(clipped_counts.values())
    # At least 1, so that an order longer than the hypothesis gives 0/1, not 0/0.
    denominator = max(1, sum(counts.values()))
    return Fraction(numerator, denominator, _normalize=False)


def closest_ref_length(references, hyp_len):
    """Length of the reference closest in length to the hypothesis, ties to the shorter.

    This is *r* in the brevity penalty of Papineni et al. (2002), section 2.2.2.

    Parameters
    ----------
    references : iterable of sequence
        The reference translations (only their lengths are used).
    hyp_len : int
        The length of the hypothesis.

    Returns
    -------
    int
        The closest reference length.

    Raises
    ------
    TypeError
        If a reference has no length or ``hyp_len`` is not a number.
    ValueError
        If ``references`` is empty.

    Examples
    --------
    >>> closest_ref_length([["a"] * 13, ["a"] * 11], 12)
    11
    """
    if not isinstance(hyp_len, numbers.Real):
        raise TypeError(f"hyp_len must be a number, not {type(hyp_len).__name__}")
    ref_lens = []
    for j, reference in enumerate(references):
        if not hasattr(reference, "__len__"):
            raise TypeError(f"references[{j}] must be a sequence of tokens, "
                            f"not {type(reference).__name__}")
        ref_lens.append(len(reference))
    if not ref_lens:
        raise ValueError("closest_ref_length needs at least one reference; references is empty")
    return min(ref_lens, key=lambda ref_len: (abs(ref_len - hyp_len), ref_len))


def brevity_penalty(closest_ref_len, hyp_len):
    """Brevity penalty of Papineni et al. (2002), section 2.2.2.

    ``1`` if ``c > r``, else ``exp(1 - r / c)``, where *c* is the hypothesis
    length and *r* the (closest) reference length; ``0`` for an empty
    hypothesis.  Like NLTK, returns the int ``1`` (not ``1.0``) when the
    hypothesis is longer than the reference and the int ``0`` when it is
    empty.

    Parameters
    ----------
    closest_ref_len : int
        *r*: the closest reference length, or its sum over a corpus.
    hyp_len : int
        *c*: the hypothesis length, or its sum over a corpus.

    Returns
    -------
    float or int
        The penalty, in [0, 1].

    Raises
    ------
    TypeError
        If an argument is not a real number.

    Examples
    --------
    >>> brevity_penalty(6, 3) == math.exp(-1)
    True
    >>> brevity_penalty(6, 7)
    1
    """
    for name, value in (("closest_ref_len", closest_ref_len), ("hyp_len", hyp_len)):
        if not isinstance(value, numbers.Real):
            raise TypeError(f"{name} must be a number, not {type(value).__name__}")
    if hyp_len > closest_ref_len:
        return 1
    # An empty hypothesis gets 0, so that its BLEU is 0.
    elif hyp_len == 0:
        return 0
    else:
        return math.exp(1 - closest_ref_len / hyp_len)
