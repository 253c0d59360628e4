"""The shape every metric has: statistics, a formula, a signature.

A metric turns text into an int64 array with one fixed-width, summable row
per segment (its *statistics*); a *formula* turns rows into scores, and the
corpus score is the formula of the column sums; a *signature* records the
options that make a number reproducible.  Everything downstream of the
statistics (groups, documents, ``--segments-out``, Dask merges, bootstrap and
approximate randomization, reports) works through this seam and knows
nothing of a particular metric.

The split follows sacrebleu's ``sacrebleu/metrics/base.py`` (a metric
extracts statistics, computes a score from them, and wraps it in a score
object with a signature), made array-first: a formula scores many rows, or
many resampled sums, in one kernel call instead of one Python call per row.

This module imports numpy only (no numba), so that ``fastbleu.metrics`` can
be imported cheaply.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    from ..statistics import BufferPairs, HashBuffer
    from ..text import TextColumn


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


def check_bootstrap(n_bootstrap) -> int:
    """``corpus_score``'s ``n_bootstrap``: an int (TypeError otherwise)."""
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise TypeError(f"n_bootstrap must be an int, got {type(n_bootstrap).__name__}")
    return int(n_bootstrap)


class Metric(ABC):
    """A metric: statistics extraction, a :class:`Formula` and a signature.

    Attributes
    ----------
    name : str
        The metric's name.
    formula : Formula
        Its formula (options of scoring, not of statistics extraction).
    num_refs : int or None
        References per segment once seen (``-1`` when it varies).
    n_bootstrap : int or None
    seed : str or None
        The bootstrap fields of the signature, once a confidence interval
        has been estimated.
    """

    name: ClassVar[str]
    #: The metric's key in :data:`fastbleu.metrics.METRICS` (``get_metric(key, **options())``).
    key: ClassVar[str]
    formula: Formula
    #: The tokenizer of a metric whose tokenizer a table's tokenizer column may replace
    #: (BLEU); ``None`` for one without that choice (chrF reads characters, TER always
    #: uses Tercom's): such a column is then refused.
    tokenizer = None
    #: The signature's ``tok`` field of the last input (BLEU: ``"ids"`` after token ids, its
    #: tokenizer's after text), recorded as ``num_refs`` is; None if the metric has none.
    input_tokenizer_signature: str | None = None
    #: The most references a segment may have (None: no limit).
    max_references: int | None = None

    @abstractmethod
    def options(self) -> dict:
        """The constructor arguments that rebuild this metric, cached references aside.

        ``get_metric(self.key, **self.options())`` is an equal metric; Dask
        workers and table jobs rebuild metrics this way.
        """

    @abstractmethod
    def segment_statistics(self, hypotheses, references=None) -> np.ndarray:
        """Statistics rows, one per segment: int64 ``(n_segments, formula.row_width)``."""

    @abstractmethod
    def column_statistics(self, hypotheses: TextColumn, references, *,
                          tokenizer=None,
                          buffers: BufferPairs | tuple[HashBuffer, HashBuffer] | None = None
                          ) -> np.ndarray:
        """Statistics of already-converted text columns (the fast path of tables and Dask).

        Parameters
        ----------
        hypotheses : TextColumn
        references : list of TextColumn
            As long as ``hypotheses``; the caller has checked them.
        tokenizer : str, optional
            A tokenizer name for these rows instead of the metric's own.
        buffers : BufferPairs or (HashBuffer, HashBuffer), optional
            Hash scratch to reuse across calls: one pair, or pairs to borrow
            from (:class:`~fastbleu.statistics.BufferPairs`; a table job
            shares one among the record batches it scores side by side).
        """

    @abstractmethod
    def corpus_score(self, hypotheses, references, n_bootstrap: int = 1) -> Score:
        """The corpus score: the formula of the summed statistics."""

    def sentence_scores(self, hypotheses, references=None) -> np.ndarray:
        """The sentence score of every segment, vectorized: the formula of each row of
        :meth:`segment_statistics`.

        Element ``i`` equals ``sentence_score(hypotheses[i], [refs[i] for refs
        in references]).score`` with the same options.

        Returns
        -------
        numpy.ndarray
            float64, one score per segment.
        """
        return self.formula.scores(self.segment_statistics(hypotheses, references), check=False)

    def accumulator(self):
        """A new, empty :class:`~fastbleu.metrics.accumulator.Accumulator` of this metric.

        ``acc.update(hyps, refs)`` adds segments, ``acc.merge(other)`` adds
        another accumulator's (from another process: accumulators pickle),
        and ``acc.score()`` equals :meth:`corpus_score` of all of it
        concatenated.
        """
        from .accumulator import Accumulator

        return Accumulator(self)

    @abstractmethod
    def signature(self, num_refs: int, tokenizer_signature: str | None = None) -> Signature:
        """The signature for ``num_refs`` references per segment (``-1``: varies)."""

    def get_signature(self) -> Signature:
        """The signature of this configuration, once references have been seen."""
        if self.num_refs is None:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        return self.signature(self.num_refs)
