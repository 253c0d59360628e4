"""BLEU's results: :class:`BLEUScore` and :class:`BLEUSignature`.

Both print exactly as sacrebleu 2.6's ``BLEUScore`` and ``BLEUSignature``
do, so logs, JSON and papers read the same; the signature's version field
says ``fastbleu-<version>``.  The numbers come from
:class:`~fastbleu.metrics.bleu_formula.BLEUFormula`; this module imports no
kernel (and so no numba), so that reports can be built without them.
"""

from __future__ import annotations

from ..results import MetricScore, MetricSignature


class BLEUScore(MetricScore):
    """A corpus or sentence BLEU score with its statistics.

    Attributes
    ----------
    score : float
        BLEU, 0-100.
    counts, totals : list of int
        Matching and total n-grams per order.  As in sacrebleu, ``add-k``
        smoothing leaves its added ``k`` in both for orders above 1.
    precisions : list of float
        Modified n-gram precisions, in percent.
    bp : float
        Brevity penalty.
    sys_len, ref_len : int
        Hypothesis and (closest) reference lengths in tokens.
    ratio : float
        ``sys_len / ref_len`` (0 when ``ref_len`` is 0).
    """

    def __init__(self, score: float, counts: list, totals: list, precisions: list[float],
                 bp: float, sys_len: int, ref_len: int):
        self.bp = bp
        self.counts = counts
        self.totals = totals
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.precisions = precisions
        self.prec_str = "/".join(f"{p:.1f}" for p in precisions)
        self.ratio = sys_len / ref_len if ref_len else 0
        shown_ref_len = f"{ref_len:d}" if isinstance(ref_len, int) else f"{ref_len:.2f}"
        super().__init__("BLEU", score, f"{self.prec_str} (BP = {bp:.3f} ratio = "
                         f"{self.ratio:.3f} hyp_len = {sys_len:d} ref_len = {shown_ref_len})")


class BLEUSignature(MetricSignature):
    """The reproducibility signature of a BLEU configuration (Post, 2018).

    ``format()`` gives e.g.
    ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:fastbleu-0.1.0``
    and ``format(short=True)`` ``#:1|c:mixed|e:no|tok:13a|s:exp|v:fastbleu-0.1.0``:
    sacrebleu's fields, order and abbreviations.
    """

    def __init__(self, num_refs: int, lowercase: bool, tokenizer_signature: str,
                 formula_fields: dict, n_bootstrap: int | None = None, seed=None):
        """``formula_fields``: ``eff``, ``smooth``, ``reflen`` and ``weights`` as the
        formula formats them (:meth:`BLEUFormula.signature_fields`)."""
        super().__init__(num_refs, {
            "case": "lc" if lowercase else "mixed",
            "eff": formula_fields["eff"],
            "tok": tokenizer_signature,
            "smooth": formula_fields["smooth"],
            # Not sacrebleu's: shown only when a choice differs from its formula.
            "reflen": formula_fields["reflen"],
            "weights": formula_fields["weights"],
        }, {"case": "c", "eff": "e", "tok": "tok", "smooth": "s", "reflen": "rl", "weights": "w"},
            n_bootstrap, seed)
