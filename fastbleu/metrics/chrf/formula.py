"""The chrF formula as a value: its options, its row layout and its kernels.

:class:`CHRFFormula` turns chrF statistics rows into scores (Popović, 2015;
chrF++, Popović, 2017) bit for bit as sacrebleu 2.6's
``CHRF._compute_f_score`` does (the kernels are in
:mod:`fastbleu._kernels.chrf_formula`).  A row is a ``[hyp, ref, match]``
triple per order, character orders first, then word orders: sacrebleu's
layout, so :attr:`CHRFFormula.row_width` is ``3 * (char_order + word_order)``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import ClassVar

import numpy as np

from ..._kernels.chrf.formula import chrf_of_float32_sums, chrf_of_sums, chrf_per_row, f_score
from ..._limits import MAX_NGRAM_ORDER_LIMIT
from ..formula import Formula, checked_counts
from .score import CHRFScore, chrf_name


def _check_order(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if not 0 <= value <= MAX_NGRAM_ORDER_LIMIT:
        raise ValueError(f"{name} must be between 0 and {MAX_NGRAM_ORDER_LIMIT}, got {value}")
    return int(value)


def check_beta(beta):
    """Refuse a ``beta`` sacrebleu's formula cannot use: not a number, a numpy float below
    float64, not finite, or so large that ``beta ** 2`` does not fit a float64 (sacrebleu
    fails on those too).

    ``beta = 0`` (chrF0, precision only) and a negative ``beta`` are scored as sacrebleu
    scores them: only ``beta ** 2`` enters the formula, and its denominator is zero only
    where the score is zero, a case the formula guards.
    """
    if isinstance(beta, (bool, np.bool_)) or not isinstance(beta, (int, float, np.integer,
                                                                  np.floating)):
        raise TypeError(f"beta must be a number, got {type(beta).__name__}")
    if isinstance(beta, np.floating) and not isinstance(beta, float):
        raise TypeError(f"beta is a numpy {type(beta).__name__}; pass a Python number")
    if isinstance(beta, np.integer):
        beta = int(beta)
    if isinstance(beta, float) and not math.isfinite(beta):
        raise ValueError(f"beta must be a finite number, got {beta!r}")
    try:
        float(1 + beta ** 2)  # Python's int or float: exact, or an OverflowError
    except OverflowError:
        shown = f"a {beta.bit_length()}-bit int" if isinstance(beta, int) else repr(beta)
        raise ValueError(f"beta is too large: beta ** 2 does not fit a float64 (got {shown})"
                         ) from None
    return beta


@dataclass(frozen=True)
class CHRFFormula(Formula):
    """chrF of statistics rows, bit for bit as sacrebleu 2.6 computes it.

    Parameters
    ----------
    char_order : int
        Character n-gram orders (default 6).
    word_order : int
        Word n-gram orders (default 0; 2 is chrF++).
    beta : int or float
        Weight of recall against precision (default 2).
    eps_smoothing : bool
        Average the per-order F-scores with epsilon for empty orders
        (chrF++.py, NLTK, Moses) instead of the F-score of the precision and
        recall averaged over the effective orders (sacrebleu's default).

    Attributes
    ----------
    name : str
        ``chrF2``, ``chrF2++``: sacrebleu's score name.
    row_width : int
        ``3 * (char_order + word_order)``.
    """

    char_order: int = 6
    word_order: int = 0
    beta: int | float = 2
    eps_smoothing: bool = False
    row_width: int = field(init=False)
    kernel_args: tuple = field(init=False, repr=False, compare=False, hash=False)

    sentence_column: ClassVar[str] = "sentence_chrf"
    result_names: ClassVar[tuple[str, ...]] = ("score", "hyp_ngrams", "ref_ngrams",
                                               "match_ngrams", "signature")
    #: sacrebleu scores float32-summed statistics (its bootstrap and paired tests) in
    #: float32 arithmetic, so the scores themselves are float32.
    compat_score_dtype: ClassVar[type] = np.float32

    def __post_init__(self):
        char_order = _check_order(self.char_order, "char_order")
        word_order = _check_order(self.word_order, "word_order")
        if char_order + word_order == 0:
            raise ValueError("char_order and word_order are both 0: chrF needs at least one "
                             "n-gram order")
        beta = check_beta(self.beta)
        factor = beta ** 2  # sacrebleu's, in Python: exact for an int beta
        set_ = object.__setattr__  # frozen: normalise once, here
        set_(self, "char_order", char_order)
        set_(self, "word_order", word_order)
        set_(self, "beta", beta)
        set_(self, "eps_smoothing", bool(self.eps_smoothing))
        set_(self, "row_width", 3 * (char_order + word_order))
        set_(self, "kernel_args", (char_order + word_order, float(factor), float(1 + factor),
                                   bool(self.eps_smoothing)))

    @property
    def name(self) -> str:
        """sacrebleu's score name: ``chrF{beta}`` and a ``+`` per word order."""
        return chrf_name(self.beta, self.word_order)

    @property
    def orders(self) -> int:
        """``char_order + word_order``: the triples of a row."""
        return self.char_order + self.word_order

    # -- the row layout ------------------------------------------------------------------

    @property
    def statistics_names(self) -> tuple[str, ...]:
        """``("char1_hyp", "char1_ref", "char1_match", ..., "word1_hyp", ...)``."""
        names = []
        for kind, orders in (("char", self.char_order), ("word", self.word_order)):
            for n in range(1, orders + 1):
                names += [f"{kind}{n}_hyp", f"{kind}{n}_ref", f"{kind}{n}_match"]
        return tuple(names)

    def check_rows(self, stats, what: str = "statistics", ndim: int = 2) -> np.ndarray:
        """Validate chrF statistics given by a caller; return them as C-contiguous int64.

        Integers (or whole, finite floats), the shape, ``row_width``
        columns, no negative count, and no order with more matches than
        hypothesis or reference n-grams.

        Raises
        ------
        TypeError
            If ``stats`` does not hold numbers.
        ValueError
            For another shape or width, fractional or non-finite values, or
            counts no text gives; the message names the row and column.
        """
        checked = checked_counts(
            stats, what, ndim, self.row_width, "CHRF.segment_statistics",
            f"char_order {self.char_order} and word_order {self.word_order} need "
            f"{self.row_width} ([hyp, ref, match] per order)", self.statistics_names)
        if not checked.size:
            return checked
        rows = checked.reshape(-1, self.row_width)
        names = self.statistics_names
        triples = rows.reshape(rows.shape[0], self.orders, 3)
        over = (triples[:, :, 2] > triples[:, :, 0]) | (triples[:, :, 2] > triples[:, :, 1])
        if over.any():
            row, order = (int(i) for i in np.argwhere(over)[0])
            raise ValueError(f"{what}, row {row}: {names[3 * order + 2]} = "
                             f"{triples[row, order, 2]} exceeds {names[3 * order]} or "
                             f"{names[3 * order + 1]} (matches are n-grams of both sides)")
        return checked

    # -- scores ----------------------------------------------------------------------------

    def score(self, row, *, check: bool = True) -> CHRFScore:
        """chrF of one (summed) statistics row (checked unless ``check=False``)."""
        if check:
            row = self.check_rows(row, ndim=1)
        row = np.ascontiguousarray(row, dtype=np.int64)
        return CHRFScore(float(f_score(row, 0, *self.kernel_args)), self.char_order,
                         self.word_order, self.beta)

    def scores(self, rows, *, check: bool = True) -> np.ndarray:
        """chrF of every row of a statistics array (float64); checked unless ``check=False``."""
        if check:
            rows = self.check_rows(rows)
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        out = np.empty(rows.shape[0], dtype=np.float64)
        if rows.shape[0]:
            chrf_per_row(rows, *self.kernel_args, out)
        return out

    def resampled_scores(self, sums: np.ndarray, n_systems: int, out: np.ndarray,
                         offset: int) -> None:
        """``out[s, offset + b]`` = chrF of system ``s`` from ``sums[b]``: one kernel call.

        int64 sums are scored as :meth:`score` scores them; float32 sums
        (sacrebleu's bootstrap) with sacrebleu's float32 arithmetic, whose
        float32 results ``out`` holds exactly.
        """
        kernel = chrf_of_float32_sums if sums.dtype == np.float32 else chrf_of_sums
        kernel(np.ascontiguousarray(sums), n_systems, *self.kernel_args, out, offset)

    # -- a table of results -----------------------------------------------------------------

    def score_columns(self, totals: np.ndarray, scores: list, signatures: list) -> list:
        """The result columns of a table of groups, after the group keys.

        ``score``; ``hyp_ngrams``, ``ref_ngrams`` and ``match_ngrams`` (each a
        list of ``char_order + word_order`` counts, character orders first);
        ``signature``.
        """
        import pyarrow as pa

        triples = np.asarray(totals, dtype=np.int64).reshape(-1, self.orders, 3)
        counts = pa.list_(pa.int64())
        arrays = [
            pa.array([s.score for s in scores], pa.float64()),
            pa.array(triples[:, :, 0].tolist(), counts),
            pa.array(triples[:, :, 1].tolist(), counts),
            pa.array(triples[:, :, 2].tolist(), counts),
            pa.array([sig.format() for sig in signatures], pa.string()),
        ]
        return list(zip(self.result_names, arrays))

    def signature_fields(self) -> dict:
        """The signature fields the formula decides: ``eff``, ``nc`` and ``nw``."""
        return {"eff": "yes" if not self.eps_smoothing else "no", "nc": self.char_order,
                "nw": self.word_order}
