"""What every metric's numbers are: a :class:`Formula` (statistics rows -> scores), the
:class:`Score` and :class:`Signature` it returns, and the checks every metric's statistics share.

The output side of the seam of :mod:`fastbleu.metrics.base`, made array-first:
a formula scores many rows, or many resampled sums, in one kernel call
instead of one Python call per row.  This module imports numpy only.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import ClassVar, Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Score(Protocol):
    """A corpus or sentence score, printed as sacrebleu prints its ``Score``.

    Attributes
    ----------
    name : str
        The metric's name, e.g. ``"BLEU"``.
    score : float
        The score.
    mean, ci : float or None
        The bootstrap mean and 95 % half-interval, ``None`` until
        :meth:`set_confidence` is called.
    """

    name: str
    score: float

    @property
    def mean(self) -> float | None: ...

    @property
    def ci(self) -> float | None: ...

    def format(self, width: int = 2, score_only: bool = False, signature: str = "",
               is_json: bool = False) -> str:
        """The score as a line of text (or JSON), as sacrebleu renders it."""

    def set_confidence(self, mean: float, ci: float) -> None:
        """Record a bootstrap mean and 95 % half-interval (printed ``(μ = mean ± ci)``)."""


@runtime_checkable
class Signature(Protocol):
    """A reproducibility signature (Post, 2018): ``key:value`` pairs joined by ``|``."""

    def format(self, short: bool = False) -> str:
        """The signature as text; ``short`` uses sacrebleu's abbreviations."""

    def update(self, key: str, value) -> None:
        """Add or change a field."""

    def copy(self) -> Signature:
        """An independent copy (updating it leaves this one unchanged)."""


class Formula(ABC):
    """Statistics rows -> scores, for one metric and one set of its options.

    A formula is immutable, hashable and picklable (it is sent to Dask
    workers).  Its statistics rows are ``row_width`` int64 columns named by
    :attr:`statistics_names`; rows are summable, so the corpus score of a set
    of segments is ``score(rows.sum(axis=0))``.

    Attributes
    ----------
    name : str
        The metric's name, as its scores print it.
    sentence_column : str
        The column name of per-segment scores (``--segments-out``).
    result_names : tuple of str
        The names of :meth:`score_columns`, in order (a table's group columns
        may not take them).
    row_width : int
        Columns of one statistics row.
    """

    name: ClassVar[str]
    sentence_column: ClassVar[str]
    result_names: ClassVar[tuple[str, ...]]
    row_width: int
    #: The dtype of sacrebleu's scores of float32-summed statistics (its bootstrap and
    #: paired tests): float64 where its formula computes in Python floats (BLEU),
    #: float32 where numpy carries float32 through it (chrF).
    compat_score_dtype: ClassVar[type] = np.float64

    @property
    @abstractmethod
    def statistics_names(self) -> tuple[str, ...]:
        """The names of a row's ``row_width`` columns, in order."""

    @abstractmethod
    def score(self, row: np.ndarray, *, check: bool = True) -> Score:
        """The score of one (summed) statistics row.

        The row is checked with :meth:`check_rows` (``ndim=1``) first, unless
        ``check=False``: fastbleu's own loops over groups and segments pass
        rows the metric computed itself, and skip the check for speed.

        Parameters
        ----------
        row : array of int
            ``row_width`` values.
        check : bool
            Check the row (a caller's statistics); ``False`` only for rows
            the metric's own statistics produced.

        Returns
        -------
        Score
        """

    @abstractmethod
    def scores(self, rows: np.ndarray, *, check: bool = True) -> np.ndarray:
        """The score of every row of a statistics array (checked unless ``check=False``,
        as for :meth:`score`).

        Parameters
        ----------
        rows : numpy.ndarray
            int, shape ``(n, row_width)``.
        check : bool
            As for :meth:`score`.

        Returns
        -------
        numpy.ndarray
            float64, shape ``(n,)``; ``scores(rows)[i] == score(rows[i]).score``.
        """

    @abstractmethod
    def resampled_scores(self, sums: np.ndarray, n_systems: int, out: np.ndarray,
                         offset: int) -> None:
        """Score a batch of resampled sums of several systems, in one kernel call.

        Parameters
        ----------
        sums : numpy.ndarray
            Shape ``(k, n_systems * row_width)``: row ``b`` holds the summed
            statistics of resample ``b`` of every system side by side.  int64
            (exact) or float32 (sacrebleu's float32 bootstrap sums, scored
            with sacrebleu's float32 arithmetic).
        n_systems : int
            Systems side by side in a row of ``sums``.
        out : numpy.ndarray
            float64, shape ``(n_systems, n_resamples)``;
            ``out[s, offset + b]`` receives system ``s``'s score of ``sums[b]``.
        offset : int
            Column of ``out`` for ``sums[0]``.
        """

    def float_statistics(self, rows: np.ndarray) -> np.ndarray:
        """The rows as sacrebleu holds its statistics before its float32 bootstrap casts
        them (by default the counts themselves; TER's mean reference length is a float
        there, scaled to an integer here)."""
        return rows

    def sentence_formula(self) -> Formula:
        """The formula of sentence-level scores (per-segment columns); by default itself."""
        return self

    @abstractmethod
    def check_rows(self, stats, what: str = "statistics", ndim: int = 2) -> np.ndarray:
        """Validate a statistics array and return it as C-contiguous int64.

        The one validation of statistics a caller gives (before :meth:`score`
        and :meth:`scores`, which do not check).

        Parameters
        ----------
        stats : array-like of int
            Shape ``(n, row_width)``, or ``(row_width,)`` with ``ndim=1``.
        what : str
            How messages name the array (e.g. ``"statistics of system 1"``).
        ndim : {2, 1}
            Rows, or one (summed) row.

        Raises
        ------
        TypeError
            If ``stats`` is not an array of integers.
        ValueError
            If its shape is wrong or its values cannot be statistics; the
            message says which row and column.
        """

    @abstractmethod
    def score_columns(self, totals: np.ndarray, scores: list, signatures: list) -> list:
        """The result columns of a table of groups, after the group keys.

        Parameters
        ----------
        totals : numpy.ndarray
            int64, shape ``(n_groups, row_width)``: each group's summed row.
        scores : list of Score
            :meth:`score` of each row of ``totals``.
        signatures : list of Signature
            Each group's signature.

        Returns
        -------
        list of (str, pyarrow.Array)
            Name and values of each column (the score first, the signature last).
        """

    @abstractmethod
    def signature_fields(self) -> dict:
        """The formula's signature fields, formatted (e.g. ``{"smooth": "exp", ...}``)."""


def checked_counts(stats, what: str, ndim: int, row_width: int, source: str,
                   layout: str, names) -> np.ndarray:
    """The checks every metric's statistics share; return them as C-contiguous int64.

    Numbers only (integers, or floats that are all whole and finite), ``ndim``
    dimensions, ``row_width`` columns, nothing beyond int64, nothing negative.  A formula's
    :meth:`Formula.check_rows` adds its own rules on the counts.

    Parameters
    ----------
    stats : array-like
    what : str
        How messages name the array.
    ndim : {2, 1}
        Rows, or one (summed) row.
    row_width : int
        The columns a row must have.
    source : str
        What makes such arrays, for the messages (``"BLEU.segment_statistics"``).
    layout : str
        Why ``row_width`` columns, for the message of a wrong width.
    names : sequence of str
        The columns' names, for the message naming a negative count.

    Raises
    ------
    TypeError
        If ``stats`` does not hold numbers (bools, strings, objects, complex).
    ValueError
        For another shape or width, fractional or non-finite values,
        counts too large for int64, or a negative count (its row and column
        named).
    """
    if isinstance(stats, (str, bytes)):
        raise TypeError(f"{what} must be an integer array ({source}), got "
                        f"{type(stats).__name__}")
    array = np.asarray(stats)
    kind = array.dtype.kind
    if kind not in "iuf":
        raise TypeError(f"{what} must be an integer array ({source}), got dtype {array.dtype}")
    if array.ndim != ndim:
        shape = "2-D, one row per segment" if ndim == 2 else f"one row of {row_width} counts"
        raise ValueError(f"{what} must be {shape}; got shape {array.shape}")
    if array.shape[-1] != row_width:
        raise ValueError(f"{what} have {array.shape[-1]} columns; {layout}")
    if kind == "f":
        if not np.all(np.isfinite(array)) or np.any(array != np.floor(array)):
            raise ValueError(f"{what} must hold whole counts; found fractional or non-finite "
                             "values")
        if array.size and np.abs(array).max() >= 2.0 ** 63:
            raise ValueError(f"{what} hold counts too large for int64")
    elif kind == "u" and array.size and array.max() > np.iinfo(np.int64).max:
        raise ValueError(f"{what} hold counts too large for int64")
    checked = np.ascontiguousarray(array, dtype=np.int64)
    if checked.size and checked.min() < 0:
        rows = checked.reshape(-1, row_width)
        row, column = (int(i) for i in np.argwhere(rows < 0)[0])
        raise ValueError(f"{what} hold negative counts (row {row}, {names[column]} = "
                         f"{rows[row, column]})")
    return checked
