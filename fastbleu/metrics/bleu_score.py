"""Statistics -> scores and reports: ``BLEUScore`` and the BLEU signature.

Both print exactly as sacrebleu 2.6's ``BLEUScore`` and ``BLEUSignature``
do, so logs, JSON and papers read the same; the signature's version field
says ``fastbleu-<version>``.
"""

from __future__ import annotations

import json
import sys

import numpy as np

from ._kernels.counting import AVERAGE_SCALE, REF_AVERAGE, REF_CLOSEST, REF_SHORTEST
from ._kernels.formula import (SMOOTH_ADD_K, SMOOTH_EXP, SMOOTH_FLOOR, SMOOTH_NONE,
                               bleu_from_row, bleu_per_row)
from ._version import __version__

#: Smoothing methods and their default values (Chen & Cherry, 2014), as sacrebleu names them.
SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
_SMOOTH_CODES = {"none": SMOOTH_NONE, "floor": SMOOTH_FLOOR, "add-k": SMOOTH_ADD_K,
                 "exp": SMOOTH_EXP}
# Python's sum() of floats is compensated from 3.12 on; sacrebleu sums its
# log-precisions with sum(), so the kernel follows the running interpreter.
_COMPENSATED_SUM = sys.version_info >= (3, 12)

#: Choices of the brevity penalty's reference length, and the kernel's code for each.
REF_LENGTHS = {"closest": REF_CLOSEST, "shortest": REF_SHORTEST, "average": REF_AVERAGE}
_NO_WEIGHTS = np.zeros(0, dtype=np.float64)


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

    def __init__(self, num_refs: int, lowercase: bool, effective_order: bool,
                 tokenizer_signature: str, smooth_method: str, smooth_value=None,
                 n_bootstrap: int | None = None, seed=None, ref_length: str = "closest",
                 weights=None):
        smooth = smooth_method
        default = SMOOTH_DEFAULTS[smooth_method]
        if default is not None:
            smooth += f"[{default if smooth_value is None else smooth_value:.2f}]"
        self.info = {
            "version": f"fastbleu-{__version__}",
            "nrefs": "var" if num_refs == -1 else num_refs,
            "bs": n_bootstrap, "ar": None, "seed": seed, "test": None, "lang": None,
            "origlang": None, "subset": None,
            "case": "lc" if lowercase else "mixed",
            "eff": "yes" if effective_order else "no",
            "tok": tokenizer_signature,
            "smooth": smooth,
            # Not sacrebleu's: shown only when a choice differs from its formula.
            "reflen": None if ref_length == "closest" else ref_length,
            "weights": None if weights is None else ",".join(f"{w:g}" for w in weights),
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


def validate_smoothing(smooth_method, smooth_value) -> None:
    """Raise if the smoothing method or value is not one sacrebleu accepts.

    A numpy ``float32``/``float16`` value is refused: sacrebleu would carry
    out its arithmetic in that reduced precision, and fastbleu computes in
    float64, so the scores would differ in their last digits.  Python
    numbers, ``numpy.float64`` and numpy integers are exact in both.
    """
    if smooth_method not in SMOOTH_DEFAULTS:
        raise ValueError(f"unknown smooth_method {smooth_method!r}; "
                         f"choose one of {', '.join(SMOOTH_DEFAULTS)}")
    if smooth_value is None:
        return
    if isinstance(smooth_value, (bool, np.bool_)) or \
            not isinstance(smooth_value, (int, float, np.integer, np.floating)):
        raise TypeError(f"smooth_value must be a number or None, got {type(smooth_value).__name__}")
    if isinstance(smooth_value, np.floating) and not isinstance(smooth_value, float):
        raise TypeError(f"smooth_value is a numpy {type(smooth_value).__name__}; pass a Python "
                        "float (sacrebleu would compute in the lower precision, fastbleu in "
                        "float64)")
    if not np.isfinite(smooth_value) or smooth_value < 0:
        raise ValueError(f"smooth_value must be a finite number >= 0, got {smooth_value!r}")


def validate_statistics(stats, max_order: int, name: str = "statistics",
                        ndim: tuple[int, ...] = (1, 2)) -> np.ndarray:
    """``stats`` as a contiguous int64 array, after checking that it can be BLEU statistics.

    Rows are ``[hyp_len, ref_len, match_1..N, total_1..N]`` with ``N =
    max_order``, one per segment or summed over segments.  Every check is a
    vectorized pass, cheap beside computing the statistics.

    Parameters
    ----------
    stats : array_like
        Integer counts (a float array is accepted if every value is whole).
    max_order : int
        The n-gram order the rows were counted with.
    name : str
        What to call the array in messages.
    ndim : tuple of int
        The accepted numbers of dimensions (1: one row, 2: one row per segment).

    Returns
    -------
    numpy.ndarray
        The same values, int64 and C-contiguous.

    Raises
    ------
    TypeError
        If ``stats`` is not numeric.
    ValueError
        For another shape or row width, a fractional, negative or out-of-range
        count, a match count above its n-gram total, or a total above the
        hypothesis length.
    """
    if isinstance(stats, (str, bytes)):
        raise TypeError(f"{name} must be an integer array, got {type(stats).__name__}")
    array = np.asarray(stats)
    if array.dtype == object or not (np.issubdtype(array.dtype, np.integer)
                                     or np.issubdtype(array.dtype, np.floating)):
        raise TypeError(f"{name} must be an integer array, got dtype {array.dtype}")
    if array.ndim not in ndim:
        shapes = " or ".join({1: "one row", 2: "(segments, columns)"}[n] for n in ndim)
        raise ValueError(f"{name} must be {shapes}; got shape {array.shape}")
    width = 2 + 2 * max_order
    if array.shape[-1] != width:
        raise ValueError(f"{name} rows have {array.shape[-1]} columns; max_ngram_order "
                         f"{max_order} needs {width} ([hyp_len, ref_len, {max_order} matches, "
                         f"{max_order} totals])")
    if np.issubdtype(array.dtype, np.floating):
        if not np.all(np.isfinite(array)) or np.any(array != np.floor(array)):
            raise ValueError(f"{name} must hold whole counts; found fractional or non-finite "
                             "values")
        if array.size and np.abs(array).max() >= 2.0 ** 63:
            raise ValueError(f"{name} hold counts too large for int64")
    elif array.dtype == np.uint64 and array.size and array.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{name} hold counts too large for int64")
    array = np.ascontiguousarray(array, dtype=np.int64)
    if not array.size:
        return array
    rows = array.reshape(-1, width)
    if rows.min() < 0:
        raise ValueError(f"{name} hold negative counts (row {_first(rows.min(axis=1) < 0)})")
    matches, totals = rows[:, 2:2 + max_order], rows[:, 2 + max_order:]
    bad = (matches > totals).any(axis=1)
    if bad.any():
        raise ValueError(f"{name}: more matching n-grams than n-grams in row {_first(bad)} "
                         "(matches must not exceed totals)")
    bad = (totals > rows[:, :1]).any(axis=1)
    if bad.any():
        raise ValueError(f"{name}: more n-grams than hypothesis tokens in row {_first(bad)} "
                         "(totals must not exceed hyp_len)")
    return array


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _formula_arguments(smooth_method, smooth_value, weights, ref_length):
    validate_smoothing(smooth_method, smooth_value)
    if smooth_value is None:
        smooth_value = SMOOTH_DEFAULTS[smooth_method]
    value = 0.0 if smooth_value is None else float(smooth_value)
    weights = _NO_WEIGHTS if weights is None else np.asarray(weights, dtype=np.float64)
    ref_scale = AVERAGE_SCALE if ref_length == "average" else 1
    return smooth_value, value, weights, ref_scale


def score_from_statistics(stats, max_order: int, smooth_method: str = "none",
                          smooth_value=None, effective_order: bool = False, weights=None,
                          ref_length: str = "closest") -> BLEUScore:
    """BLEU from one row of (summed) statistics ``[hyp_len, ref_len, matches.., totals..]``.

    The formula is Papineni et al. (2002) with Chen & Cherry's (2014)
    smoothing, computed in sacrebleu's order of operations (see
    :mod:`fastbleu._kernels.formula`).  ``weights`` and ``ref_length``
    (``"shortest"``/``"average"``) are the options beyond sacrebleu; with
    ``"average"`` the row's reference length is scaled as the kernel wrote it.

    Raises
    ------
    TypeError, ValueError
        If ``stats`` cannot be a row of statistics (:func:`validate_statistics`).
    """
    return _score_row(validate_statistics(stats, max_order, ndim=(1,)), max_order,
                      smooth_method, smooth_value, effective_order, weights, ref_length)


def _score_row(row: np.ndarray, max_order: int, smooth_method: str = "none",
               smooth_value=None, effective_order: bool = False, weights=None,
               ref_length: str = "closest") -> BLEUScore:
    """:func:`score_from_statistics` of a row fastbleu computed itself (not validated again:
    the per-group and per-segment loops call it many times)."""
    smooth_value, value, weight_array, ref_scale = _formula_arguments(
        smooth_method, smooth_value, weights, ref_length)
    row = np.ascontiguousarray(row, dtype=np.int64)
    precisions = np.empty(max_order, dtype=np.float64)
    score, bp = bleu_from_row(row, max_order, _SMOOTH_CODES[smooth_method], value,
                              bool(effective_order), _COMPENSATED_SUM, precisions, weight_array,
                              ref_scale)
    counts = [int(x) for x in row[2:2 + max_order]]
    totals = [int(x) for x in row[2 + max_order:2 + 2 * max_order]]
    if smooth_method == "add-k" and any(counts):
        # sacrebleu adds k to its count lists in place before testing for a
        # zero total; its BLEUScore shows the smoothed lists.
        for m in range(1, max_order):
            counts[m] += smooth_value
            totals[m] += smooth_value
            if totals[m] == 0:
                break
    ref_len = int(row[1]) if ref_scale == 1 else int(row[1]) / ref_scale
    return BLEUScore(float(score), counts, totals, precisions.tolist(), float(bp),
                     int(row[0]), ref_len)


def scores_from_statistics(stats: np.ndarray, max_order: int, smooth_method: str = "none",
                           smooth_value=None, effective_order: bool = False, weights=None,
                           ref_length: str = "closest") -> np.ndarray:
    """Sentence BLEU of every row of a statistics array, as float64.

    Raises
    ------
    TypeError, ValueError
        If ``stats`` cannot be statistics (:func:`validate_statistics`).
    """
    return _score_rows(validate_statistics(stats, max_order, ndim=(2,)), max_order,
                       smooth_method, smooth_value, effective_order, weights, ref_length)


def _score_rows(stats: np.ndarray, max_order: int, smooth_method: str = "none",
                smooth_value=None, effective_order: bool = False, weights=None,
                ref_length: str = "closest") -> np.ndarray:
    """:func:`scores_from_statistics` of rows fastbleu computed itself (not validated again)."""
    _, value, weight_array, ref_scale = _formula_arguments(
        smooth_method, smooth_value, weights, ref_length)
    stats = np.ascontiguousarray(stats, dtype=np.int64)
    out = np.empty(stats.shape[0], dtype=np.float64)
    if stats.shape[0]:
        bleu_per_row(stats, max_order, _SMOOTH_CODES[smooth_method], value,
                     bool(effective_order), _COMPENSATED_SUM, weight_array, ref_scale, out)
    return out
