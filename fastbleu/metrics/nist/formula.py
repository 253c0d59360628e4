"""The NIST formula as a value: its row layout and its arithmetic.

:class:`NISTFormula` turns NIST statistics rows into scores (Doddington,
2002, eq. 3): the sum over orders ``k = 1..N`` of ``info_k / total_k`` (the
information of the matched ``k``-grams per hypothesis ``k``-gram), times
``exp(beta * log(min(ratio, 1))**2)`` with ``beta`` making the penalty 0.5 at
a length ratio of 2/3.

A row is ``[hyp_len, ref_len, (info_k_int, info_k_hi, info_k_lo) for k = 1..N,
total_1..total_N]``, all int64 and summable:

* ``info_k`` (a sum of float information weights) is held in fixed point,
  ``info_k_int + info_k_hi * 2**-32 + info_k_lo * 2**-64``, each limb below
  2**32 in a segment's row, so that at least 2**31 rows sum without
  overflow.  A segment's value is rounded once, to 2**-64 (5.4e-20); a sum
  of rows is exact, and read back as a float with at most two roundings
  (1 ulp), where NLTK adds floats segment by segment: the corpus score
  agrees with NLTK's to about 1e-15 relative, not bit for bit (for that,
  :func:`fastbleu.nltk.corpus_nist`);
* ``ref_len``: with ``variant="nltk"``, the lengths of the best reference of
  each order, summed over the orders (NLTK's ``l_ref``; the ratio is then
  ``N * hyp_len / ref_len``); with ``"mteval"``, the mean reference length
  times ``AVERAGE_SCALE`` (720720), as TER keeps it.

An order with no hypothesis n-gram adds 0 (mteval divides by ``max(count,
1)``; NLTK would fail), and a corpus without reference words scores 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from ..._kernels.bleu.counting import AVERAGE_SCALE
from ..formula import Formula, checked_counts
from .score import NISTScore

#: The variants: NLTK's ``nist_score`` and NIST's ``mteval-v13a.pl``.
VARIANTS = ("nltk", "mteval")
#: The highest n-gram order NIST takes (mteval computes up to 9).
MAX_ORDER = 9
_TWO32 = 4294967296.0


def _limbs(values: np.ndarray) -> np.ndarray:
    """Non-negative floats -> int64 ``(int, hi, lo)``: ``int + hi * 2**-32 + lo * 2**-64``.

    Each step is exact in float64 except the last rounding (to 2**-64).
    """
    whole = np.floor(values)
    rest = (values - whole) * _TWO32
    hi = np.floor(rest)
    lo = np.rint((rest - hi) * _TWO32)
    out = np.stack([whole, hi, lo], axis=-1).astype(np.int64)
    carry = out[..., 2] >> 32  # lo rounded up to 2**32
    out[..., 2] &= 0xFFFFFFFF
    out[..., 1] += carry
    carry = out[..., 1] >> 32
    out[..., 1] &= 0xFFFFFFFF
    out[..., 0] += carry
    return out


def statistics_rows(hyp_len: np.ndarray, num: np.ndarray, den: np.ndarray,
                    ref_len: np.ndarray, variant: str) -> np.ndarray:
    """Rows of a formula from :func:`fastbleu._kernels.nist.segment_matches`'s arrays."""
    n, order = num.shape
    rows = np.empty((n, 2 + 4 * order), dtype=np.int64)
    rows[:, 0] = hyp_len
    rows[:, 1] = ref_len[:, 0] if variant == "mteval" else ref_len.sum(axis=1)
    rows[:, 2:2 + 3 * order] = _limbs(num).reshape(n, 3 * order)
    rows[:, 2 + 3 * order:] = den
    return rows


@dataclass(frozen=True)
class NISTFormula(Formula):
    """NIST of statistics rows (Doddington, 2002), NLTK's or mteval-v13a's.

    Parameters
    ----------
    max_order : int
        The highest n-gram order N (1 to 9; NIST's is 5).
    variant : {"nltk", "mteval"}
        Which reference length the brevity penalty uses (see the module).
    """

    max_order: int = 5
    variant: str = "nltk"

    name: ClassVar[str] = "NIST"
    sentence_column: ClassVar[str] = "sentence_nist"
    result_names: ClassVar[tuple[str, ...]] = ("score", "bp", "sys_len", "ref_len", "signature")

    def __post_init__(self):
        order = self.max_order
        if isinstance(order, bool) or not isinstance(order, (int, np.integer)):
            raise TypeError(f"max_ngram_order must be an int, got {type(order).__name__}")
        if not 1 <= order <= MAX_ORDER:
            raise ValueError(f"max_ngram_order must be between 1 and {MAX_ORDER}, got {order}")
        object.__setattr__(self, "max_order", int(order))
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(map(repr, VARIANTS))}, got "
                             f"{self.variant!r}")

    @property
    def row_width(self) -> int:
        return 2 + 4 * self.max_order

    @property
    def statistics_names(self) -> tuple[str, ...]:
        """``hyp_len, ref_len, info_1_int, info_1_hi, info_1_lo, ..., total_1..N``."""
        info = [f"info_{k}_{part}" for k in range(1, self.max_order + 1)
                for part in ("int", "hi", "lo")]
        totals = [f"total_{k}" for k in range(1, self.max_order + 1)]
        return ("hyp_len", "ref_len", *info, *totals)

    def check_rows(self, stats, what: str = "statistics", ndim: int = 2) -> np.ndarray:
        """Validate NIST statistics given by a caller; return them as C-contiguous int64.

        Raises
        ------
        TypeError
            If ``stats`` does not hold numbers.
        ValueError
            For another shape or width, fractional, non-finite or negative values.
        """
        checked = checked_counts(stats, what, ndim, self.row_width, "NIST.segment_statistics",
                                 f"NIST rows of order {self.max_order} are [hyp_len, ref_len, "
                                 "3 info limbs per order, total per order]",
                                 self.statistics_names)
        return checked

    # -- scores ----------------------------------------------------------------------------

    def _kernel_scores(self, rows: np.ndarray) -> np.ndarray:
        from ..._kernels.nist.formula import nist_scores

        rows = np.ascontiguousarray(rows, dtype=np.int64).reshape(-1, self.row_width)
        out = np.empty(rows.shape[0], dtype=np.float64)
        nist_scores(rows, self.max_order, self.variant == "mteval", out)
        return out

    def _ref_len(self, row) -> float:
        if self.variant == "mteval":
            return int(row[1]) / AVERAGE_SCALE
        return int(row[1]) / self.max_order

    def score(self, row, *, check: bool = True) -> NISTScore:
        """NIST of one (summed) statistics row (checked unless ``check=False``)."""
        if check:
            row = self.check_rows(row, ndim=1)
        row = np.asarray(row, dtype=np.int64)
        score = float(self._kernel_scores(row)[0])
        n = self.max_order
        precisions = []
        for k in range(n):
            a, b, c = (int(x) for x in row[2 + 3 * k:5 + 3 * k])
            total = int(row[2 + 3 * n + k])
            info = ((a << 64) + (b << 32) + c) / (1 << 64)
            precisions.append(info / total if total else 0.0)
        sys_len, ref_len = int(row[0]), self._ref_len(row)
        return NISTScore(score, precisions, self.penalty(sys_len, ref_len), sys_len, ref_len)

    def penalty(self, sys_len: int, ref_len: float) -> float:
        """NIST's brevity penalty of ``sys_len`` hypothesis words against ``ref_len`` (as
        :class:`~fastbleu.metrics.nist_score.NISTScore` reports it), in the variant's order
        of operations."""
        ratio = sys_len / ref_len if ref_len > 0 else 0.0
        if not 0.0 < ratio < 1.0:
            return 1.0 if ratio >= 1.0 else 0.0
        if self.variant == "mteval":
            beta = -math.log(0.5) / math.log(1.5) / math.log(1.5)
            return math.exp(-beta * math.log(ratio) * math.log(ratio))
        beta = math.log(0.5) / math.log(1.5) ** 2
        return math.exp(beta * math.log(ratio) ** 2)

    def scores(self, rows, *, check: bool = True) -> np.ndarray:
        """NIST of every row of a statistics array (float64); checked unless ``check=False``."""
        if check:
            rows = self.check_rows(rows)
        return self._kernel_scores(rows)

    def resampled_scores(self, sums: np.ndarray, n_systems: int, out: np.ndarray,
                         offset: int) -> None:
        """``out[s, offset + b]`` = NIST of system ``s`` from ``sums[b]`` (float32 sums are
        rounded to integers first: sacrebleu has no NIST whose float32 arithmetic to copy)."""
        if sums.dtype != np.int64:
            sums = np.rint(sums).astype(np.int64)
        k = sums.shape[0]
        scores = self._kernel_scores(sums.reshape(k * n_systems, self.row_width))
        out[:, offset:offset + k] = scores.reshape(k, n_systems).T

    # -- a table of results -----------------------------------------------------------------

    def score_columns(self, totals: np.ndarray, scores: list, signatures: list) -> list:
        """The result columns of a table of groups, after the group keys: ``score``, ``bp``,
        ``sys_len``, ``ref_len`` (float) and ``signature``."""
        import pyarrow as pa

        arrays = [
            pa.array([s.score for s in scores], pa.float64()),
            pa.array([s.bp for s in scores], pa.float64()),
            pa.array([s.sys_len for s in scores], pa.int64()),
            pa.array([float(s.ref_len) for s in scores], pa.float64()),
            pa.array([sig.format() for sig in signatures], pa.string()),
        ]
        return list(zip(self.result_names, arrays))

    def signature_fields(self) -> dict:
        """``{"n": max_order, "variant": variant}``."""
        return {"n": self.max_order, "variant": self.variant}
