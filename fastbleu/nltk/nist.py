"""NLTK-compatible NIST: ``nltk.translate.nist_score`` with fastbleu's kernels.

:func:`corpus_nist`, :func:`sentence_nist` and :func:`nist_length_penalty`
take NLTK's arguments and return NLTK's numbers (checked against NLTK 3.10), bit for bit:
the same information weights (Doddington, 2002, eq. 2, counted over every
reference of the corpus), the same choice of one reference per segment and
n-gram order, the same float operations in the same order, and the same
errors where NLTK fails (``ZeroDivisionError`` when no hypothesis has an
n-gram of some order up to ``n``, or for an empty corpus).  Tokens are any
hashable objects; a ``str`` is scored character by character, as in NLTK.
Arrow ``list<string>`` columns are taken as by :func:`fastbleu.nltk.corpus_bleu`.

What NLTK computes (and where it is not NIST's ``mteval-v13a.pl``)
----------------------------------------------------------------------
* Information weights: ``Info(w1..wk) = log2(count(w1..wk-1) / count(w1..wk))``
  over all references of the corpus, the count of the empty prefix being
  the number of reference words (mteval the same; it writes
  ``-log(count / prefix) / log 2``, which can differ in the last bit).
* Matches: for each n-gram order separately, NLTK keeps the one reference
  with the best information-weighted precision (ties: the larger numerator,
  then the longer reference) and clips hypothesis counts by that reference
  alone.  mteval clips each n-gram by its largest count in any reference
  (as BLEU does) and sums over all hypothesis n-grams.
* Length: NLTK compares the hypothesis words with the lengths of those best
  references, counted once per order (so the ratio is ``n * sys_words /
  sum of the best references' lengths over the orders``); mteval divides the
  hypothesis words by the *average* reference length
  (``ref_words / number of reference sets``).
* Brevity penalty: both ``exp(beta * log(min(ratio, 1))**2)`` with
  ``beta = log(0.5) / log(1.5)**2``, i.e. 0.5 at a ratio of 2/3; 0 for an empty
  hypothesis side.  (NLTK's docstring of ``nist_length_penalty`` omits the
  square and speaks of the average reference length; its code squares the log
  and is given the best references' lengths, as above.)
* Zero n-grams: NLTK divides by the hypothesis n-gram count of each order and
  fails when it is 0; mteval divides by ``max(count, 1)``.
* Text: NLTK scores the tokens it is given; mteval first normalizes and
  tokenizes (its ``NormalizeText``: sacrebleu's ``13a`` tokenizer, and ASCII
  lowercasing unless ``-c``).

:class:`fastbleu.NIST` offers both (``variant="nltk"`` and ``"mteval"``) on
text.

>>> from fastbleu.nltk import sentence_nist
>>> hyp = ("It is a guide to action which ensures that the military always obeys the "
...        "commands of the party").split()
>>> ref = ("It is a guide to action that ensures that the military will forever heed "
...        "Party commands").split()
>>> round(sentence_nist([ref], hyp), 6)  # NLTK: 2.4477124183006533
2.447712

References
----------
Doddington, G. (2002). Automatic evaluation of machine translation quality
using n-gram co-occurrence statistics. In *Proceedings of HLT*.
"""

from __future__ import annotations

import math
import sys

import numpy as np

from .segments import prepare

__all__ = ["corpus_nist", "sentence_nist", "nist_length_penalty"]

#: Python's ``sum()`` of floats is compensated (Neumaier) from 3.12 on; NLTK's numerators are.
COMPENSATED_SUM = sys.version_info >= (3, 12)


def _check_order(n) -> int:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise TypeError(f"n must be an int (the highest n-gram order), got {type(n).__name__}")
    if n < 1:
        raise ValueError(f"n must be at least 1, got {n}")
    return int(n)


def nist_length_penalty(ref_len, hyp_len):
    """NIST's brevity penalty (Doddington, 2002, eq. 3), as NLTK computes it.

    ``exp(beta * log(ratio)**2)`` for ``0 < ratio = hyp_len / ref_len < 1``,
    with ``beta`` making the penalty 0.5 at a ratio of 2/3; ``max(min(ratio,
    1.0), 0.0)`` otherwise.  ``ZeroDivisionError`` when ``ref_len`` is 0, as
    in NLTK.

    Parameters
    ----------
    ref_len, hyp_len : int or float
        Reference and hypothesis lengths.

    Returns
    -------
    float
    """
    ratio = hyp_len / ref_len
    if 0 < ratio < 1:
        ratio_x, score_x = 1.5, 0.5
        beta = math.log(score_x) / math.log(ratio_x) ** 2
        return math.exp(beta * math.log(ratio) ** 2)
    return max(min(ratio, 1.0), 0.0)


def _order_sums(segments, n: int):
    """NLTK's per-order numerator and denominator sums and its two lengths."""
    from .._kernels.nist.matches import segment_matches
    from ..metrics.nist.weights import NISTCounts

    counts = NISTCounts.of_tokens(segments.ref_keys, segments.ref_start, segments.ref_count,
                                  (None, False, n))
    num, den, ref_len = segment_matches(segments.hyp_keys, segments.hyp_start,
                                        segments.hyp_count, segments.ref_keys,
                                        segments.ref_start, segments.ref_count, counts.table,
                                        counts.shift, counts.words, 0, n, False,
                                        COMPENSATED_SUM)
    # NLTK adds the segments' numerators one by one (Counter +=): cumsum adds in that order.
    numerators = [float(np.cumsum(num[:, k])[-1]) for k in range(n)]
    denominators = [int(den[:, k].sum()) for k in range(n)]
    # l_ref and l_sys grow once per order and segment
    l_ref = int(ref_len.sum())
    l_sys = n * int(segments.hyp_count.sum())
    return numerators, denominators, l_ref, l_sys


def _nist(segments, n: int) -> float:
    """NLTK's final aggregation, in its order: the sum of the order precisions, then times
    the length penalty."""
    numerators, denominators, l_ref, l_sys = _order_sums(segments, n)
    nist_precision = 0
    for k in range(n):
        if denominators[k] == 0:
            raise ZeroDivisionError(f"no hypothesis has {k + 1} or more tokens, so the "
                                    f"{k + 1}-gram precision is 0/0 (NLTK fails here too); "
                                    f"use a smaller n")
        nist_precision += numerators[k] / denominators[k]
    if l_ref == 0:
        raise ZeroDivisionError("every reference is empty, so the length ratio divides by 0 "
                                "(NLTK fails here too)")
    # Eq. 3 of Doddington (2002), in NLTK's order
    return nist_precision * nist_length_penalty(l_ref, l_sys)


def corpus_nist(list_of_references, hypotheses, n=5):
    """Corpus-level NIST (Doddington, 2002), equal to NLTK's ``corpus_nist``.

    Parameters
    ----------
    list_of_references : sequence of sequences of sequences of hashable
        Per hypothesis, its references (each a sequence of tokens); or an
        Arrow ``list<list<string>>`` column, or a list of ``list<string>``
        columns (one per reference stream, nulls are missing references).
    hypotheses : sequence of sequences of hashable, or Arrow ``list<string>``
    n : int
        Highest n-gram order.

    Returns
    -------
    float

    Raises
    ------
    TypeError, ValueError
        For malformed inputs (NLTK asserts on unequal lengths) or ``n < 1``.
    ZeroDivisionError
        Where NLTK divides by zero: an empty corpus, no reference words, or
        no hypothesis n-gram of some order up to ``n``.
    """
    n = _check_order(n)
    segments = prepare(list_of_references, hypotheses)
    if len(segments) == 0:
        raise ZeroDivisionError("corpus_nist of an empty corpus (NLTK divides 0 by 0)")
    return _nist(segments, n)


def sentence_nist(references, hypothesis, n=5):
    """NIST of one hypothesis (Doddington, 2002), equal to NLTK's ``sentence_nist``.

    ``corpus_nist([references], [hypothesis], n)``: the information weights
    come from this sentence's references alone.

    Parameters
    ----------
    references : sequence of sequences of hashable
    hypothesis : sequence of hashable
    n : int
        Highest n-gram order.

    Returns
    -------
    float
    """
    n = _check_order(n)
    segments = prepare([references], [hypothesis], sentence=True)
    return _nist(segments, n)
