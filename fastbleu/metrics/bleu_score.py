"""BLEU's results: :class:`BLEUScore` and :class:`BLEUSignature`.

Both print exactly as sacrebleu 2.6's ``BLEUScore`` and ``BLEUSignature``
do, so logs, JSON and papers read the same; the signature's version field
says ``fastbleu-<version>``.  The numbers come from
:class:`~fastbleu.metrics.bleu_formula.BLEUFormula`; this module imports no
kernel (and so no numba), so that reports can be built without them.
"""

from __future__ import annotations

import json

from .._version import __version__


class BLEUScore:
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
        self.name = "BLEU"
        self.score = score
        self.bp = bp
        self.counts = counts
        self.totals = totals
        self.sys_len = sys_len
        self.ref_len = ref_len
        self.precisions = precisions
        self._mean = -1.0
        self._ci = -1.0
        self.prec_str = "/".join(f"{p:.1f}" for p in precisions)
        self.ratio = sys_len / ref_len if ref_len else 0
        shown_ref_len = f"{ref_len:d}" if isinstance(ref_len, int) else f"{ref_len:.2f}"
        self._verbose = (f"{self.prec_str} (BP = {bp:.3f} ratio = {self.ratio:.3f} "
                         f"hyp_len = {sys_len:d} ref_len = {shown_ref_len})")

    def format(self, width: int = 2, score_only: bool = False, signature: str = "",
               is_json: bool = False) -> str:
        """Render the score as sacrebleu does.

        Parameters
        ----------
        width : int
            Decimals of the score.
        score_only : bool
            Only the score (ignored for JSON).
        signature : str
            A formatted signature to include.
        is_json : bool
            A JSON object with sacrebleu's fields instead of a line of text.
        """
        score = f"{self.score:.{width}f}"
        fields = {"name": self.name, "score": float(score), "signature": signature}
        if self._mean > 0:
            mean, ci = f"{self._mean:.{width}f}", f"{self._ci:.{width}f}"
            confidence = f"μ = {mean} ± {ci}"
            score += f" ({confidence})"
            if is_json:
                fields.update(confidence_mean=float(mean), confidence_var=float(ci),
                              confidence=confidence)
        line = f"{self.name}|{signature}" if signature else self.name
        line = f"{line} = {score}"
        if self._verbose:
            line += f" {self._verbose}"
            fields["verbose_score"] = self._verbose
        if score_only:
            return score
        if is_json:
            for pair in signature.split("|"):
                key, value = pair.split(":")
                fields[key] = value
            return json.dumps(fields, indent=1, ensure_ascii=False)
        return line

    def __repr__(self) -> str:
        return self.format()

    @property
    def mean(self) -> float | None:
        """Bootstrap mean of the score, or ``None`` before :meth:`set_confidence`."""
        return None if self._mean < 0 else self._mean  # -1.0: sacrebleu's "not set"

    @property
    def ci(self) -> float | None:
        """Half the width of the 95 % bootstrap interval, or ``None`` before it is set."""
        return None if self._mean < 0 else self._ci

    def set_confidence(self, mean: float, ci: float) -> None:
        """Record a bootstrap mean and 95 % half-interval (printed ``(μ = mean ± ci)``).

        Stored in ``_mean``/``_ci``, as sacrebleu's ``BLEUScore`` stores them.
        """
        self._mean, self._ci = mean, ci


class BLEUSignature:
    """The reproducibility signature of a BLEU configuration (Post, 2018).

    ``format()`` gives e.g.
    ``nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:fastbleu-0.1.0``
    and ``format(short=True)`` ``#:1|c:mixed|e:no|tok:13a|s:exp|v:fastbleu-0.1.0``:
    sacrebleu's fields, order and abbreviations.
    """

    _ABBREVIATIONS = {"version": "v", "nrefs": "#", "test": "t", "lang": "l", "subset": "S",
                      "origlang": "o", "bs": "bs", "ar": "ar", "seed": "rs", "case": "c",
                      "eff": "e", "tok": "tok", "smooth": "s", "reflen": "rl", "weights": "w"}

    def __init__(self, num_refs: int, lowercase: bool, tokenizer_signature: str,
                 formula_fields: dict, n_bootstrap: int | None = None, seed=None):
        """``formula_fields``: ``eff``, ``smooth``, ``reflen`` and ``weights`` as the
        formula formats them (:meth:`BLEUFormula.signature_fields`)."""
        self.info = {
            "version": f"fastbleu-{__version__}",
            "nrefs": "var" if num_refs == -1 else num_refs,
            "bs": n_bootstrap, "ar": None, "seed": seed, "test": None, "lang": None,
            "origlang": None, "subset": None,
            "case": "lc" if lowercase else "mixed",
            "eff": formula_fields["eff"],
            "tok": tokenizer_signature,
            "smooth": formula_fields["smooth"],
            # Not sacrebleu's: shown only when a choice differs from its formula.
            "reflen": formula_fields["reflen"],
            "weights": formula_fields["weights"],
        }

    def format(self, short: bool = False) -> str:
        """The signature as ``key:value`` pairs joined by ``|``, version last."""
        names = [name for name in self.info if name != "version"] + ["version"]
        pairs = []
        for name in names:
            value = self.info[name]
            if value is None:
                continue
            if isinstance(value, bool):
                value = "yes" if value else "no"
            pairs.append(f"{self._ABBREVIATIONS[name] if short else name}:{value}")
        return "|".join(pairs)

    def update(self, key: str, value) -> None:
        """Add or change a field."""
        self.info[key] = value

    def copy(self) -> BLEUSignature:
        """An independent copy: updating it leaves this signature unchanged."""
        other = object.__new__(type(self))
        other.info = dict(self.info)
        return other

    def __str__(self) -> str:
        return self.format()

    __repr__ = __str__
