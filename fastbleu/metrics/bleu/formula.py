"""The BLEU formula as a value: its options, its row layout and its kernels.

:class:`BLEUFormula` holds everything that turns BLEU statistics rows into
scores (Papineni et al., 2002; smoothing of Chen & Cherry, 2014, as
sacrebleu names it): the maximum n-gram order, the smoothing, effective
order, the order weights and the brevity penalty's reference-length rule.
It is frozen, hashable and picklable, and computes in sacrebleu's order of
operations (the kernels are in :mod:`fastbleu._kernels.formula`).

A row is ``[hyp_len, ref_len, match_1..match_N, total_1..total_N]``,
sacrebleu's order: :attr:`BLEUFormula.row_width` is ``2 + 2 * max_order``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field, replace
from typing import ClassVar

import numpy as np

from ..._native import bleu_from_row, bleu_per_row  # compiled ahead of time, or numba's JIT
from ..._native.codes import (AVERAGE_SCALE, REF_AVERAGE, REF_CLOSEST, REF_SHORTEST, SMOOTH_ADD_K,
                              SMOOTH_EXP, SMOOTH_FLOOR, SMOOTH_NONE, row_width)
from ..._limits import MAX_NGRAM_ORDER_LIMIT
from ..formula import Formula, checked_counts
from .score import BLEUScore

#: Smoothing methods and their default values (Chen & Cherry, 2014), as sacrebleu names them.
SMOOTH_DEFAULTS = {"none": None, "floor": 0.1, "add-k": 1, "exp": None}
#: Choices of the brevity penalty's reference length, and the counting kernel's code for each.
REF_LENGTHS = {"closest": REF_CLOSEST, "shortest": REF_SHORTEST, "average": REF_AVERAGE}
#: The kernels' code of each smoothing method.
SMOOTH_CODES = {"none": SMOOTH_NONE, "floor": SMOOTH_FLOOR, "add-k": SMOOTH_ADD_K,
                "exp": SMOOTH_EXP}
#: Python's sum() of floats is compensated from 3.12 on; sacrebleu sums its
#: log-precisions with sum(), so the kernels follow the running interpreter.
COMPENSATED_SUM = sys.version_info >= (3, 12)
_NO_WEIGHTS = np.zeros(0, dtype=np.float64)


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


def bleu_row_width(max_order: int) -> int:
    """Columns of a BLEU statistics row: ``2 + 2 * max_order``, the counting kernel's layout."""
    return row_width(max_order)


@dataclass(frozen=True)
class BLEUFormula(Formula):
    """BLEU of statistics rows, bit for bit as sacrebleu 2.6 computes it.

    Parameters
    ----------
    max_order : int
        Highest n-gram order (default 4).
    smooth_method : {"exp", "floor", "add-k", "none"}
        Smoothing of zero n-gram precisions (Chen & Cherry, 2014).
    smooth_value : float, optional
        The value for ``floor`` (default 0.1) and ``add-k`` (default 1).
    effective_order : bool
        Stop at the first n-gram order with no n-grams (sentence BLEU).
    weights : tuple of float, optional
        Weights of the orders: ``BP * exp(sum w_n log p_n / sum w_n)``
        (Papineni et al., 2002); default sacrebleu's uniform mean.
    ref_length : {"closest", "shortest", "average"}
        The statistics' reference-length rule; ``"average"`` rows carry the
        reference length scaled by the counting kernel's ``AVERAGE_SCALE``.

    Attributes
    ----------
    row_width : int
        ``2 + 2 * max_order``: a row is ``[hyp_len, ref_len,
        match_1..match_N, total_1..total_N]``.
    ref_length_code : int
        The counting kernel's code of ``ref_length``.
    kernel_args : tuple
        The formula's arguments as the kernels of
        :mod:`fastbleu._kernels.formula` take them: ``(max_order, smooth code,
        smooth value, effective_order, compensated sum, weights (float64),
        ref_scale)``.

    Raises
    ------
    TypeError, ValueError
        For options sacrebleu (or fastbleu's extensions) would not accept,
        with the messages of :class:`fastbleu.BLEU`.
    """

    max_order: int = 4
    smooth_method: str = "exp"
    smooth_value: float | None = None
    effective_order: bool = False
    weights: tuple[float, ...] | None = None
    ref_length: str = "closest"
    row_width: int = field(init=False)
    ref_length_code: int = field(init=False)
    kernel_args: tuple = field(init=False, repr=False, compare=False, hash=False)

    name: ClassVar[str] = "BLEU"
    sentence_column: ClassVar[str] = "sentence_bleu"
    result_names: ClassVar[tuple[str, ...]] = (
        "score", "bp", "ratio", "sys_len", "ref_len", "counts", "totals", "precisions",
        "signature")

    def __post_init__(self):
        validate_smoothing(self.smooth_method, self.smooth_value)
        if self.ref_length not in REF_LENGTHS:
            raise ValueError(f"unknown ref_length {self.ref_length!r}; choose one of "
                             f"{', '.join(REF_LENGTHS)}")
        order = self.max_order
        if isinstance(order, bool) or not isinstance(order, (int, np.integer)):
            raise TypeError(f"max_ngram_order must be an int, got {type(order).__name__}")
        if order < 1:
            raise ValueError(f"max_ngram_order must be at least 1, got {order}")
        if order > MAX_NGRAM_ORDER_LIMIT:
            raise ValueError(f"max_ngram_order must be at most {MAX_NGRAM_ORDER_LIMIT} (a "
                             f"statistics row holds 2 + 2 * order counts), got {order}")
        order = int(order)
        weights = self.weights
        if weights is not None:
            if isinstance(weights, (str, bytes)) or not hasattr(weights, "__len__"):
                raise TypeError("weights must be a sequence of numbers, one per n-gram order")
            if len(weights) != order:
                raise ValueError(f"weights has {len(weights)} values but max_ngram_order is "
                                 f"{order}")
            weights = tuple(float(w) for w in weights)
            if any(not np.isfinite(w) or w < 0 for w in weights) or not any(weights):
                raise ValueError("weights must be finite and non-negative, at least one of "
                                 "them positive")
        value = self.smooth_value
        if value is None:
            value = SMOOTH_DEFAULTS[self.smooth_method]
        ref_scale = AVERAGE_SCALE if self.ref_length == "average" else 1
        set_ = object.__setattr__  # frozen: normalise once, here
        set_(self, "max_order", order)
        set_(self, "effective_order", bool(self.effective_order))
        set_(self, "weights", weights)
        set_(self, "row_width", bleu_row_width(order))
        set_(self, "ref_length_code", REF_LENGTHS[self.ref_length])
        set_(self, "kernel_args", (
            order, SMOOTH_CODES[self.smooth_method], 0.0 if value is None else float(value),
            self.effective_order, COMPENSATED_SUM,
            _NO_WEIGHTS if weights is None else np.asarray(weights, dtype=np.float64),
            ref_scale))

    # -- the row layout ------------------------------------------------------------------

    @property
    def statistics_names(self) -> tuple[str, ...]:
        """``("hyp_len", "ref_len", "match_1", .., "total_1", ..)``, sacrebleu's order."""
        orders = range(1, self.max_order + 1)
        return ("hyp_len", "ref_len", *(f"match_{n}" for n in orders),
                *(f"total_{n}" for n in orders))

    def matches(self, rows: np.ndarray) -> np.ndarray:
        """The matching n-gram counts of a row (or of every row), orders 1..N."""
        return rows[..., 2:2 + self.max_order]

    def totals(self, rows: np.ndarray) -> np.ndarray:
        """The hypothesis n-gram counts of a row (or of every row), orders 1..N."""
        return rows[..., 2 + self.max_order:self.row_width]

    def check_rows(self, stats, what: str = "statistics", ndim: int = 2) -> np.ndarray:
        """Validate BLEU statistics given by a caller; return them as C-contiguous int64.

        The one check of statistics fastbleu did not compute itself (paired
        tests, ``compute_bleu``, tables of statistics, a caller's own rows
        before :meth:`score`/:meth:`scores`, which do not check): integers
        (or floats that are all whole and finite), the shape, ``row_width``
        columns, no negative count, no order with more matching n-grams than
        n-grams, no order with more n-grams than hypothesis tokens, nothing
        beyond int64.  Each check is one vectorized pass.

        Parameters
        ----------
        stats : array-like of int
            Shape ``(n, row_width)`` (``ndim=2``) or ``(row_width,)`` (``ndim=1``).
        what : str
            How messages name the array (e.g. ``"statistics of system 1"``).
        ndim : {2, 1}
            One row per segment, or one (summed) row.

        Returns
        -------
        numpy.ndarray
            int64, C-contiguous (``stats`` itself when it already is).

        Raises
        ------
        TypeError
            If ``stats`` does not hold numbers (bools, strings, objects, complex).
        ValueError
            For another shape or width, fractional or non-finite values, or
            counts that no text gives; the message names the first bad row
            and column and the rule it breaks.
        """
        checked = checked_counts(
            stats, what, ndim, self.row_width, "BLEU.segment_statistics",
            f"max_ngram_order {self.max_order} needs {self.row_width} ([hyp_len, ref_len, "
            f"{self.max_order} matches, {self.max_order} totals])", self.statistics_names)
        if not checked.size:
            return checked
        rows = checked.reshape(-1, self.row_width)
        matches, totals = self.matches(rows), self.totals(rows)
        over = matches > totals
        if over.any():
            row, order = (int(i) for i in np.argwhere(over)[0])
            raise ValueError(f"{what}, row {row}: match_{order + 1} = {matches[row, order]} "
                             f"exceeds total_{order + 1} = {totals[row, order]} (matches must "
                             "not exceed totals: matching n-grams are hypothesis n-grams)")
        over = totals > rows[:, :1]
        if over.any():
            row, order = (int(i) for i in np.argwhere(over)[0])
            raise ValueError(f"{what}, row {row}: total_{order + 1} = {totals[row, order]} "
                             f"exceeds hyp_len = {rows[row, 0]} (totals must not exceed "
                             "hyp_len)")
        return checked

    # -- scores ----------------------------------------------------------------------------

    def score(self, row, *, check: bool = True) -> BLEUScore:
        """BLEU of one (summed) statistics row, with sacrebleu's ``BLEUScore`` fields.

        A caller's row is checked (:meth:`check_rows`, ``ndim=1``); fastbleu's
        own loops over groups pass ``check=False`` for rows it computed.
        The formula is Papineni et al. (2002) with Chen & Cherry's (2014)
        smoothing, in sacrebleu's order of operations (see
        :mod:`fastbleu._kernels.formula`).
        """
        order = self.max_order
        if check:
            row = self.check_rows(row, ndim=1)
        row = np.ascontiguousarray(row, dtype=np.int64)
        precisions = np.empty(order, dtype=np.float64)
        score, bp = bleu_from_row(row, *self.kernel_args[:5], precisions, *self.kernel_args[5:])
        counts = [int(x) for x in self.matches(row)]
        totals = [int(x) for x in self.totals(row)]
        if self.smooth_method == "add-k" and any(counts):
            # sacrebleu adds k to its count lists in place before testing for a
            # zero total; its BLEUScore shows the smoothed lists.
            k = SMOOTH_DEFAULTS["add-k"] if self.smooth_value is None else self.smooth_value
            for m in range(1, order):
                counts[m] += k
                totals[m] += k
                if totals[m] == 0:
                    break
        ref_scale = self.kernel_args[-1]
        ref_len = int(row[1]) if ref_scale == 1 else int(row[1]) / ref_scale
        return BLEUScore(float(score), counts, totals, precisions.tolist(), float(bp),
                         int(row[0]), ref_len)

    def scores(self, rows, *, check: bool = True) -> np.ndarray:
        """BLEU of every row of a statistics array (float64), on several threads.

        Checked as :meth:`score` is, unless ``check=False``.
        """
        if check:
            rows = self.check_rows(rows)
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        out = np.empty(rows.shape[0], dtype=np.float64)
        if rows.shape[0]:
            bleu_per_row(rows, *self.kernel_args, out)
        return out

    # -- BLEU-1..N and the individual n-gram scores ---------------------------------------

    def order_formula(self, k: int, individual: bool = False) -> BLEUFormula:
        """The formula of BLEU-``k`` (``individual=False``) or of the individual ``k``-gram
        score (``individual=True``), with this formula's smoothing, effective order and
        reference-length rule.

        BLEU-``k`` is BLEU with ``max_order=k`` and uniform weights, sacrebleu's
        ``BLEU(max_ngram_order=k)``: it reads the first ``k`` orders of a row
        (:meth:`order_rows`).  The individual ``k``-gram score is this
        formula's row scored with weight 1 on order ``k`` and 0 elsewhere:
        ``BP * p_k``, ``p_k`` smoothed exactly as in BLEU-``max_order``.
        Neither uses this formula's ``weights``.
        """
        if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or \
                not 1 <= k <= self.max_order:
            raise ValueError(f"the n-gram order must be an int from 1 to {self.max_order}, "
                             f"got {k!r}")
        k = int(k)
        if individual:
            onehot = tuple(1.0 if n == k else 0.0 for n in range(1, self.max_order + 1))
            return replace(self, weights=onehot)
        return replace(self, max_order=k, weights=None)

    def order_rows(self, rows: np.ndarray, k: int) -> np.ndarray:
        """The columns of orders ``1..k`` of a row (or of every row): the rows of
        ``max_order=k``, ``[hyp_len, ref_len, match_1..k, total_1..k]``, int64 and
        C-contiguous."""
        n = self.max_order
        columns = np.r_[0, 1, 2:2 + k, 2 + n:2 + n + k]
        return np.ascontiguousarray(np.asarray(rows)[..., columns], dtype=np.int64)

    def cumulative_scores(self, rows, *, check: bool = True) -> np.ndarray:
        """BLEU-1 .. BLEU-N of one summed row, or of every row of a statistics array.

        BLEU-``k`` = ``BP * exp((1/k) * sum_{n<=k} log p_n)``: the brevity
        penalty of the row times the geometric mean of the first ``k``
        (smoothed) precisions, computed as sacrebleu's
        ``BLEU(max_ngram_order=k)`` computes it on the same text, for each
        ``k`` up to ``max_order`` (:meth:`order_formula`).

        Parameters
        ----------
        rows : array of int
            One row (``(row_width,)``, e.g. the corpus sum) or rows
            (``(n, row_width)``, one per segment).
        check : bool
            Check a caller's rows (:meth:`check_rows`); ``False`` for rows the
            metric computed itself.

        Returns
        -------
        numpy.ndarray
            float64, ``(max_order,)`` for one row, ``(n, max_order)`` for rows;
            column ``k - 1`` is BLEU-``k``.
        """
        return self._order_scores(rows, check, individual=False)

    def individual_scores(self, rows, *, check: bool = True) -> np.ndarray:
        """The individual 1-gram .. N-gram scores of one summed row, or of every row.

        The individual ``k``-gram score is BLEU with weight 1 on order ``k``
        and 0 on the others, ``BP * exp(log p_k)``: the brevity penalty times
        the ``k``-gram precision, smoothed as in BLEU-``max_order`` (so with
        ``exp`` smoothing a zero-match order counts the zero-match orders
        below it).  With effective order, a row whose hypothesis has no
        ``k``-grams scores 0 for order ``k``; without it, so does a row with
        no ``k``-gram match, unsmoothed.  A row with no match at any order
        scores 0 for every order, as BLEU does.  Shapes as for
        :meth:`cumulative_scores`.
        """
        return self._order_scores(rows, check, individual=True)

    def _order_scores(self, rows, check: bool, individual: bool) -> np.ndarray:
        single = np.ndim(rows) == 1
        if check:
            rows = self.check_rows(rows, ndim=1 if single else 2)
        rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1, self.row_width)
        out = np.empty((rows.shape[0], self.max_order), dtype=np.float64)
        for k in range(1, self.max_order + 1):
            formula = self.order_formula(k, individual)
            scored = rows if individual else self.order_rows(rows, k)
            out[:, k - 1] = formula.scores(scored, check=False)
        return out[0] if single else out

    def resampled_scores(self, sums: np.ndarray, n_systems: int, out: np.ndarray,
                         offset: int) -> None:
        """``out[s, offset + b]`` = BLEU of system ``s`` from ``sums[b]``: one kernel call.

        int64 sums are scored exactly as :meth:`score` scores them; float32
        sums (sacrebleu's bootstrap) with sacrebleu's float32 precisions.
        See :meth:`Formula.resampled_scores`.
        """
        from ..._kernels.bleu.formula import bleu_of_float32_sums, bleu_of_sums

        kernel = bleu_of_float32_sums if sums.dtype == np.float32 else bleu_of_sums
        kernel(sums, n_systems, *self.kernel_args, out, offset)

    def sentence_formula(self) -> BLEUFormula:
        """This formula with ``effective_order=True``, sacrebleu's advice for sentence BLEU."""
        return self if self.effective_order else replace(self, effective_order=True)

    # -- a table of results -----------------------------------------------------------------

    def score_columns(self, totals: np.ndarray, scores: list, signatures: list) -> list:
        """The result columns of a table of groups, after the group keys.

        Parameters
        ----------
        totals : numpy.ndarray
            int64, shape ``(n_groups, row_width)``: each group's summed row.
        scores : list of BLEUScore
            :meth:`score` of each row of ``totals``.
        signatures : list of Signature
            Each group's signature.

        Returns
        -------
        list of (str, pyarrow.Array)
            ``score``, ``bp``, ``ratio``, ``sys_len``, ``ref_len`` (float64
            with ``ref_length="average"``, else int64), ``counts``,
            ``totals`` (the statistics, without add-k's ``k``),
            ``precisions`` and ``signature``.
        """
        import pyarrow as pa

        floats, ints, counts = pa.float64(), pa.int64(), pa.list_(pa.int64())
        arrays = [
            pa.array([s.score for s in scores], floats),
            pa.array([s.bp for s in scores], floats),
            pa.array([float(s.ratio) for s in scores], floats),
            pa.array([s.sys_len for s in scores], ints),
            pa.array([s.ref_len for s in scores],
                     floats if self.ref_length == "average" else ints),
            pa.array(self.matches(totals).tolist(), counts),
            pa.array(self.totals(totals).tolist(), counts),
            pa.array([s.precisions for s in scores], pa.list_(floats)),
            pa.array([sig.format() for sig in signatures], pa.string()),
        ]
        return list(zip(self.result_names, arrays))

    # -- signature -------------------------------------------------------------------------

    def signature_fields(self) -> dict:
        """The signature fields the formula decides, formatted as ``BLEUSignature`` prints them.

        ``eff`` and ``smooth`` (sacrebleu's), ``reflen`` and ``weights``
        (fastbleu's, ``None`` -- not shown -- at sacrebleu's defaults).  The
        metric adds ``nrefs``, ``case``, ``tok``, ``bs`` and ``seed``.
        """
        smooth = self.smooth_method
        default = SMOOTH_DEFAULTS[smooth]
        if default is not None:
            smooth += f"[{default if self.smooth_value is None else self.smooth_value:.2f}]"
        return {"eff": "yes" if self.effective_order else "no", "smooth": smooth,
                "reflen": None if self.ref_length == "closest" else self.ref_length,
                "weights": None if self.weights is None else
                ",".join(f"{w:g}" for w in self.weights)}
