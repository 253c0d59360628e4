"""chrF's results: :class:`CHRFScore` and :class:`CHRFSignature`.

Both print exactly as sacrebleu 2.6's ``CHRFScore`` and ``CHRFSignature``
do (the version field says ``fastbleu-<version>``).  No kernel is imported
here.
"""

from __future__ import annotations

from ..results import MetricScore, MetricSignature


def chrf_name(beta, word_order: int) -> str:
    """sacrebleu's name of a chrF configuration: ``chrF2``, ``chrF2++`` (a ``+`` per word order)."""
    return f"chrF{beta}" + "+" * word_order


class CHRFScore(MetricScore):
    """A corpus or sentence chrF score (Popović, 2015; chrF++, Popović, 2017).

    Attributes
    ----------
    score : float
        chrF, 0-100.
    char_order, word_order : int
        The character and word n-gram orders.
    beta : int or float
        The weight of recall against precision.
    """

    def __init__(self, score: float, char_order: int, word_order: int, beta):
        self.beta = beta
        self.char_order = char_order
        self.word_order = word_order
        super().__init__(chrf_name(beta, word_order), score)


class CHRFSignature(MetricSignature):
    """The reproducibility signature of a chrF configuration (Post, 2018).

    ``format()`` gives e.g.
    ``nrefs:1|case:mixed|eff:yes|nc:6|nw:0|space:no|version:fastbleu-0.1.0`` and
    ``format(short=True)`` ``#:1|c:mixed|e:yes|nc:6|nw:0|s:no|v:fastbleu-0.1.0``:
    sacrebleu's fields, order and abbreviations (``eff`` is ``yes`` unless
    epsilon smoothing is on).
    """

    def __init__(self, num_refs: int, lowercase: bool, eps_smoothing: bool, char_order: int,
                 word_order: int, whitespace: bool, n_bootstrap: int | None = None, seed=None):
        super().__init__(num_refs, {
            "case": "lc" if lowercase else "mixed",
            "eff": "yes" if not eps_smoothing else "no",
            "nc": char_order,
            "nw": word_order,
            "space": "yes" if whitespace else "no",
        }, {"case": "c", "eff": "e", "nc": "nc", "nw": "nw", "space": "s"}, n_bootstrap, seed)
