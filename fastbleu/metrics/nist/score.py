"""NIST's results: :class:`NISTScore` and :class:`NISTSignature`.

They print in sacrebleu's style (sacrebleu has no NIST): ``NIST|nrefs:1|...
= 6.77 2.950/1.302/... (BP = 0.987 ratio = 0.950 hyp_len = ... ref_len = ...)``.
No kernel is imported here.
"""

from __future__ import annotations

from ..results import MetricScore, MetricSignature


class NISTScore(MetricScore):
    """A corpus or sentence NIST score (Doddington, 2002): the sum over n-gram orders of
    the information-weighted precisions, times NIST's brevity penalty.

    Attributes
    ----------
    score : float
        NIST (higher is better; not bounded by 100).
    precisions : list of float
        The information per hypothesis n-gram of each order (the terms of the sum).
    bp : float
        The brevity penalty.
    sys_len : int
        Hypothesis words.
    ref_len : float
        The reference words the penalty compares them with: the mean
        reference length summed over segments (``variant="mteval"``), or
        NLTK's per-order best references' lengths, averaged over the orders.
    ratio : float
        ``sys_len / ref_len`` (0 when ``ref_len`` is 0).
    """

    def __init__(self, score: float, precisions: list[float], bp: float, sys_len: int,
                 ref_len: float):
        self.precisions = precisions
        self.bp = bp
        self.sys_len = int(sys_len)
        self.ref_len = ref_len
        self.ratio = self.sys_len / ref_len if ref_len else 0.0
        prec_str = "/".join(f"{p:.3f}" for p in precisions)
        shown = f"{ref_len:.0f}" if float(ref_len).is_integer() else f"{ref_len:.2f}"
        super().__init__("NIST", score, f"{prec_str} (BP = {bp:.3f} ratio = {self.ratio:.3f} "
                         f"hyp_len = {self.sys_len:d} ref_len = {shown})")


class NISTSignature(MetricSignature):
    """The reproducibility signature of a NIST configuration (Post, 2018).

    ``format()`` gives e.g.
    ``nrefs:1|case:mixed|tok:13a|n:5|variant:nltk|version:fastbleu-0.1.0`` and
    ``format(short=True)`` ``#:1|c:mixed|tok:13a|n:5|vr:nltk|v:fastbleu-0.1.0``:
    sacrebleu's common fields and abbreviations, then the n-gram order and
    which NIST (NLTK's or mteval-v13a's).
    """

    def __init__(self, num_refs: int, lowercase: bool, tokenizer_signature: str,
                 max_order: int, variant: str, n_bootstrap: int | None = None, seed=None):
        super().__init__(num_refs, {
            "case": "lc" if lowercase else "mixed",
            "tok": tokenizer_signature,
            "n": max_order,
            "variant": variant,
        }, {"case": "c", "tok": "tok", "n": "n", "variant": "vr"}, n_bootstrap, seed)
