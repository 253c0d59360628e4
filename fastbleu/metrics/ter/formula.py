"""The TER formula as a value: its row layout and its arithmetic.

:class:`TERFormula` turns TER statistics rows into scores as sacrebleu 2.6's
``TER._compute_score_from_stats`` does (Snover et al., 2006).  A row is
``[num_edits, ref_length_scaled]``: sacrebleu's ``[edits, average reference
length]`` with the average held exactly as an integer, the mean reference
length times the formula's :attr:`TERFormula.scale`, so that rows stay
summable integers like every metric's.  The scale is 720720 (the least
common multiple of 1..16) unless the segments' numbers of references need
another (:mod:`fastbleu.metrics.ter.scale`: 17 for 17 references).  The
formula divides it back: one division, where sacrebleu adds the float
averages of the segments one by one; the two agree exactly for 1, 2, 4, 8
or 16 references per segment (the averages are then exact floats) and
otherwise to within rounding (about 1e-15 relative).

The arithmetic is numpy's, operation for operation as sacrebleu's (a
division, then ``100 *``); no kernel is compiled.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..formula import Formula, checked_counts
from .scale import AVERAGE_SCALE, check_scale
from .score import TERScore


@dataclass(frozen=True)
class TERFormula(Formula):
    """TER of statistics rows, as sacrebleu 2.6 computes it.

    ``100 * edits / ref_length``; 100 when the references are empty and the
    hypothesis is not, 0 when both are.  TER has no scoring options (its
    options are all about tokenization); two formulas differ only by the
    scale of the rows they score.

    Parameters
    ----------
    scale : int
        The mean reference length of a row is ``row[1] / scale``
        (:mod:`fastbleu.metrics.ter.scale`); 720720 unless a segment's
        number of references does not divide it.
    """

    scale: int = AVERAGE_SCALE

    name: ClassVar[str] = "TER"
    row_width: ClassVar[int] = 2
    sentence_column: ClassVar[str] = "sentence_ter"
    result_names: ClassVar[tuple[str, ...]] = ("score", "num_edits", "ref_length", "signature")
    #: sacrebleu's bootstrap divides float32 sums in numpy, so its TER scores are float32.
    compat_score_dtype: ClassVar[type] = np.float32

    def __post_init__(self):
        object.__setattr__(self, "scale", check_scale(self.scale, "scale"))

    @property
    def statistics_names(self) -> tuple[str, ...]:
        """``("num_edits", "ref_length_scaled")``: the second is the mean reference length
        times :attr:`scale`."""
        return ("num_edits", "ref_length_scaled")

    def check_rows(self, stats, what: str = "statistics", ndim: int = 2) -> np.ndarray:
        """Validate TER statistics given by a caller; return them as C-contiguous int64.

        Integers (or whole, finite floats), the shape, two columns, nothing
        negative.

        Raises
        ------
        TypeError
            If ``stats`` does not hold numbers.
        ValueError
            For another shape or width, fractional, non-finite or negative
            values; the message names the row and column.
        """
        checked = checked_counts(stats, what, ndim, self.row_width, "TER.segment_statistics",
                                 "TER rows are [num_edits, ref_length_scaled]",
                                 self.statistics_names)
        return checked

    # -- scores ----------------------------------------------------------------------------

    @staticmethod
    def _ter(edits: np.ndarray, ref_length: np.ndarray) -> np.ndarray:
        """sacrebleu's branches, elementwise, in the operands' dtype: ``edits / ref_length``
        where the references have words, else 1 or 0; then ``100 *``."""
        ratio = np.where(edits > 0, 1.0, 0.0).astype(edits.dtype)
        np.divide(edits, ref_length, out=ratio, where=ref_length > 0)
        return edits.dtype.type(100) * ratio

    def score(self, row, *, check: bool = True) -> TERScore:
        """TER of one (summed) statistics row (checked unless ``check=False``)."""
        if check:
            row = self.check_rows(row, ndim=1)
        edits, scaled = int(row[0]), int(row[1])
        ref_length = scaled / self.scale
        if ref_length > 0:  # sacrebleu's order: int / float, then 100 * that
            score = edits / ref_length
        elif edits > 0:
            score = 1.0
        else:
            score = 0.0
        return TERScore(100 * score, edits, ref_length)

    def scores(self, rows, *, check: bool = True) -> np.ndarray:
        """TER of every row of a statistics array (float64); checked unless ``check=False``."""
        if check:
            rows = self.check_rows(rows)
        rows = np.asarray(rows, dtype=np.int64).reshape(-1, self.row_width)
        return self._ter(rows[:, 0].astype(np.float64), rows[:, 1] / self.scale)

    def resampled_scores(self, sums: np.ndarray, n_systems: int, out: np.ndarray,
                         offset: int) -> None:
        """``out[s, offset + b]`` = TER of system ``s`` from ``sums[b]``.

        int64 sums are scored as :meth:`score` scores them; float32 sums
        (sacrebleu's bootstrap, of :meth:`float_statistics`) in float32, as
        numpy divides sacrebleu's float32 sums, whose float32 results ``out``
        holds exactly.
        """
        pairs = sums.reshape(sums.shape[0], n_systems, self.row_width)
        if sums.dtype == np.float32:
            scores = self._ter(pairs[:, :, 0], pairs[:, :, 1])
        else:
            scores = self._ter(pairs[:, :, 0].astype(np.float64),
                               pairs[:, :, 1] / self.scale)
        out[:, offset:offset + sums.shape[0]] = scores.T

    def float_statistics(self, rows: np.ndarray) -> np.ndarray:
        """The rows as sacrebleu holds them before its float32 bootstrap: the mean reference
        length as a float, not scaled."""
        floats = rows.astype(np.float64)
        floats[:, 1] = rows[:, 1] / self.scale
        return floats

    # -- a table of results -----------------------------------------------------------------

    def score_columns(self, totals: np.ndarray, scores: list, signatures: list) -> list:
        """The result columns of a table of groups, after the group keys: ``score``,
        ``num_edits``, ``ref_length`` (float, summed mean reference lengths), ``signature``."""
        import pyarrow as pa

        arrays = [
            pa.array([s.score for s in scores], pa.float64()),
            pa.array([s.num_edits for s in scores], pa.int64()),
            pa.array([s.ref_length for s in scores], pa.float64()),
            pa.array([sig.format() for sig in signatures], pa.string()),
        ]
        return list(zip(self.result_names, arrays))

    def signature_fields(self) -> dict:
        """None: TER's signature fields are all its tokenizer's."""
        return {}
