"""TER's results: :class:`TERScore` and :class:`TERSignature`.

Both print exactly as sacrebleu 2.6's ``TERScore`` and ``TERSignature`` do
(the version field says ``fastbleu-<version>``).  No kernel is imported
here.
"""

from __future__ import annotations

from ..results import MetricScore, MetricSignature


class TERScore(MetricScore):
    """A corpus or sentence TER score (Snover et al., 2006): edits per reference word,
    times 100 (lower is better; it can exceed 100).

    Attributes
    ----------
    score : float
        TER.
    num_edits : int
        The edits (shifts, insertions, deletions, substitutions).
    ref_length : float
        The reference words: per segment the mean over its references, summed.
    """

    def __init__(self, score: float, num_edits, ref_length: float):
        self.num_edits = int(num_edits)
        self.ref_length = ref_length
        super().__init__("TER", score)


class TERSignature(MetricSignature):
    """The reproducibility signature of a TER configuration (Post, 2018).

    ``format()`` gives e.g.
    ``nrefs:1|case:lc|tok:tercom|norm:no|punct:yes|asian:no|version:fastbleu-0.1.0``
    and ``format(short=True)``
    ``#:1|c:lc|t:tercom|nr:no|pn:yes|as:no|v:fastbleu-0.1.0``: sacrebleu's fields,
    order and abbreviations.
    """

    def __init__(self, num_refs: int, case_sensitive: bool, normalized: bool, no_punct: bool,
                 asian_support: bool, n_bootstrap: int | None = None, seed=None):
        super().__init__(num_refs, {
            "case": "mixed" if case_sensitive else "lc",
            "tok": "tercom",
            "norm": bool(normalized),
            "punct": not no_punct,
            "asian": bool(asian_support),
        }, {"case": "c", "tok": "t", "norm": "nr", "punct": "pn", "asian": "as"},
            n_bootstrap, seed)
