"""TER's accumulator: summed statistics whose scale follows the inputs added.

TER keeps the mean reference length as an integer times a scale chosen from
each input's numbers of references (:mod:`fastbleu.metrics.ter.scale`), so
two inputs may sum at two scales (720720 for 4 references, 17 for 17).
:class:`TERAccumulator` adds them exactly at their least common multiple:
the sum is brought to it, never rounded, and the formula follows
(:attr:`TERAccumulator.formula`).  A sum that would leave int64, or a common
scale beyond 2**32, is refused, and a refused update or merge leaves the
accumulator exactly as it was.
"""

from __future__ import annotations

import numpy as np

from ..accumulator import Accumulator, merged_num_refs
from .formula import TERFormula
from .scale import added, common_scale, rescaled


class TERAccumulator(Accumulator):
    """:class:`~fastbleu.metrics.accumulator.Accumulator` of TER: updates and merges of
    any scales, added exactly (made by ``TER().accumulator()``).

    Attributes
    ----------
    formula : TERFormula
        The formula of the sum: its ``scale`` is the least common multiple of
        the scales of the inputs added so far (the metric's before any).
    """

    def update(self, hypotheses, references=None) -> TERAccumulator:
        """Add the statistics of more segments; return this accumulator.

        As :meth:`Accumulator.update`; the sum moves to the common scale of
        the two when the new segments' scale differs.

        Raises
        ------
        ValueError
            As :meth:`Accumulator.update`, and when the sum would leave int64
            or need a scale beyond 2**32 (the accumulator is then unchanged).
        """
        metric = self.metric
        if metric.options() != self.options:
            raise ValueError(f"the {self.key} metric's options changed since this accumulator "
                             "was made; make a new accumulator for the new options")
        pinned, hypotheses, references = metric._for_input(hypotheses, references)
        total, n = pinned._summed(hypotheses, references)
        if n:
            self._add(total, pinned.formula.scale, n, pinned.num_refs)
        elif self._empty_num_refs is None:
            self._empty_num_refs = pinned.num_refs
        if pinned is not metric:
            metric._adopt(pinned)
        return self

    def _formula_merges(self, formula) -> bool:
        """Any TER formula: sums of another scale are added at the common scale of the two
        (:meth:`Accumulator.merge` then refuses only other metrics or options, and
        :meth:`_add` a sum that would leave int64 or need a scale beyond 2**32, with both
        accumulators unchanged)."""
        return isinstance(formula, TERFormula)

    def _merge_sums(self, other: Accumulator) -> None:
        if other.n_segments:  # an empty one adds nothing, whatever its scale
            self._add(other._total, other.formula.scale, other.n_segments, other.num_refs)

    def _add(self, total, scale: int, n: int, num_refs) -> None:
        """Add a sum of ``n`` segments at ``scale``: everything checked before anything
        changes."""
        mine = self.formula.scale
        if not self.n_segments:  # an empty sum takes the scale of the first one added
            common, summed = scale, rescaled(total, scale, scale)
        else:
            common = common_scale(mine, scale)
            summed = added(rescaled(self._total, mine, common), rescaled(total, scale, common))
        self._total = np.array(summed, dtype=np.int64)
        if common != mine:
            self.formula = TERFormula(common)
        self.n_segments += n
        self.num_refs = merged_num_refs(self.num_refs, num_refs)
