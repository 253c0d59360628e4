"""What every metric's results share: a score that prints as sacrebleu's ``Score``, and a
signature that prints as sacrebleu's ``Signature``.

:class:`MetricScore` renders a score (text, ``score_only``, JSON) exactly as
sacrebleu 2.6's ``Score.format`` does, with its bootstrap mean and interval;
:class:`MetricSignature` renders ``key:value`` pairs with sacrebleu's field
order and abbreviations, the version last (``fastbleu-<version>``).  A
metric's own classes add its fields (:mod:`.bleu_score`, :mod:`.chrf_score`).
No kernel is imported here, so reports can be built without numba.
"""

from __future__ import annotations

import json
import operator

from .._version import __version__


def resolved_count(value):
    """A count (``num_refs``) as the plain int it stands for: a count still on the device
    (:class:`fastbleu.gpu.statistics.PendingNumRefs`) is read back here, a numpy int made
    an int; None stays None."""
    return None if value is None else operator.index(value)


class ResolvedCount:
    """``num_refs`` as an attribute: a plain int when read, though recorded (under
    ``_num_refs``) as a count still on the device, which the first read reads back and
    keeps (:func:`resolved_count`); updates and merges may carry ``_num_refs`` unread."""

    def __get__(self, owner, kind=None):
        if owner is None:
            return self
        value = owner._num_refs
        if value is not None and type(value) is not int:
            value = owner._num_refs = resolved_count(value)
        return value

    def __set__(self, owner, value) -> None:
        owner._num_refs = value


class MetricScore:
    """A corpus or sentence score, printed as sacrebleu prints its ``Score``.

    Attributes
    ----------
    name : str
        The metric's name as printed (``"BLEU"``, ``"chrF2++"``).
    score : float
        The score, 0-100.
    """

    def __init__(self, name: str, score: float, verbose: str = ""):
        self.name = name
        self.score = score
        self._mean = -1.0
        self._ci = -1.0
        self._verbose = verbose

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


class MetricSignature:
    """A reproducibility signature (Post, 2018): sacrebleu's common fields, then the
    metric's (``fields``), as ``key:value`` pairs joined by ``|``, version last.

    Parameters
    ----------
    num_refs : int
        References per segment, ``-1`` when it varies (printed ``var``).
    fields : dict
        The metric's fields in order; ``None`` values are not printed.
    abbreviations : dict
        The short names of the metric's fields (``format(short=True)``).
    n_bootstrap, seed : optional
        The bootstrap fields, once a confidence interval has been estimated.
    """

    _ABBREVIATIONS = {"version": "v", "nrefs": "#", "test": "t", "lang": "l", "subset": "S",
                      "origlang": "o", "bs": "bs", "ar": "ar", "seed": "rs"}

    def __init__(self, num_refs: int, fields: dict, abbreviations: dict,
                 n_bootstrap: int | None = None, seed=None):
        self._abbreviations = {**self._ABBREVIATIONS, **abbreviations}
        self.info = {
            "version": f"fastbleu-{__version__}",
            "nrefs": "var" if num_refs == -1 else resolved_count(num_refs),
            "bs": n_bootstrap, "ar": None, "seed": seed, "test": None, "lang": None,
            "origlang": None, "subset": None, **fields,
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
            pairs.append(f"{self._abbreviations[name] if short else name}:{value}")
        return "|".join(pairs)

    def update(self, key: str, value) -> None:
        """Add or change a field."""
        self.info[key] = value

    def copy(self) -> MetricSignature:
        """An independent copy: updating it leaves this signature unchanged."""
        other = object.__new__(type(self))
        other.info = dict(self.info)
        other._abbreviations = self._abbreviations
        return other

    def __str__(self) -> str:
        return self.format()

    __repr__ = __str__
