"""NLTK-compatible BLEU: ``nltk.translate.bleu_score`` with fastbleu's counting kernel.

Drop-in replacements with NLTK's names, signatures and numbers
(NLTK 3.8-3.10): :func:`sentence_bleu`, :func:`corpus_bleu`,
:class:`SmoothingFunction` (methods 0-7 of Chen and Cherry, 2014),
:func:`modified_precision`, :func:`brevity_penalty` and
:func:`closest_ref_length`; plus :func:`sentence_bleu_many`, NLTK's
``sentence_bleu`` for many segments at once, and Self-BLEU in linear time
(:func:`self_bleu`, NLTK's loop bit for bit, and :class:`SelfBLEU`, a
``fast_bleu.SelfBLEU`` drop-in).  ``corpus_bleu`` and
``sentence_bleu`` return bit-identical scores to NLTK's, including its
corner cases: the int ``0`` when nothing matches, NLTK's warnings, the
smoothing methods that see only the last segment at corpus level and
method 6's assertion.  Tokens are any hashable objects; a ``str`` is
scored character by character, as in NLTK.  ``corpus_bleu`` and
``sentence_bleu_many`` also take Arrow ``list<string>`` columns.

NIST (Doddington, 2002): :func:`corpus_nist`, :func:`sentence_nist` and
:func:`nist_length_penalty` return NLTK's ``nist_score`` numbers bit for bit
(:mod:`fastbleu.nltk.nist` lists where NLTK's NIST differs from NIST's
``mteval-v13a.pl``).

Worked examples from Papineni et al. (2002)
-------------------------------------------
Modified n-gram precision clips each hypothesis n-gram to its largest count
in a single reference.  Seven "the" against two references that hold at
most two "the" give 2/7 (the paper's example 2):

>>> from fastbleu.nltk import modified_precision, brevity_penalty, closest_ref_length
>>> ref1 = "the cat is on the mat".split()
>>> ref2 = "there is a cat on the mat".split()
>>> p = modified_precision([ref1, ref2], "the the the the the the the".split(), n=1)
>>> p.numerator, p.denominator
(2, 7)

The brevity penalty ``BP = exp(1 - r/c)`` for a hypothesis of *c* tokens
no longer than the reference (*r* tokens), else 1.  Hypotheses of 1-8 "the"
against "the cat is on the mat" (r = 6):

>>> for c in range(1, 9):
...     hypothesis = ["the"] * c
...     r = closest_ref_length([ref1], len(hypothesis))
...     print(c, r, round(brevity_penalty(r, c), 6))
1 6 0.006738
2 6 0.135335
3 6 0.367879
4 6 0.606531
5 6 0.818731
6 6 1.0
7 6 1
8 6 1

(NLTK returns the int 1 when the hypothesis is longer than the reference.)

Many segments
-------------
>>> from fastbleu.nltk import corpus_bleu, sentence_bleu_many, SmoothingFunction
>>> hyps = ["the cat sat on the mat".split(), "there is a cat".split()]
>>> refs = [[ref1, ref2], [ref2]]
>>> round(corpus_bleu(refs, hyps), 6)
0.399269
>>> sentence_bleu_many(refs, hyps, smoothing_function=SmoothingFunction().method1).round(6)
array([0.254066, 0.472367])

With Arrow, hypotheses are a ``list<string>`` column and the references a
``list<list<string>>`` column or a list of ``list<string>`` columns (one per
reference stream):

>>> import pyarrow as pa
>>> round(corpus_bleu(pa.array(refs), pa.array(hyps)), 6)
0.399269

References
----------
Papineni, K., Roukos, S., Ward, T. and Zhu, W.-J. (2002). BLEU: a method for
automatic evaluation of machine translation. In *Proceedings of ACL*.

Chen, B. and Cherry, C. (2014). A systematic comparison of smoothing
techniques for sentence-level BLEU. In *Proceedings of WMT*.
"""

from .bleu import corpus_bleu, sentence_bleu, sentence_bleu_many
from .nist import corpus_nist, nist_length_penalty, sentence_nist
from .precision import Fraction, brevity_penalty, closest_ref_length, modified_precision
from .self_bleu import SelfBLEU, self_bleu
from .smoothing import SmoothingFunction

__all__ = [
    "Fraction",
    "SelfBLEU",
    "SmoothingFunction",
    "brevity_penalty",
    "closest_ref_length",
    "corpus_bleu",
    "corpus_nist",
    "modified_precision",
    "nist_length_penalty",
    "self_bleu",
    "sentence_bleu",
    "sentence_bleu_many",
    "sentence_nist",
]
