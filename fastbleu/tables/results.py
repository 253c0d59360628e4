"""What :func:`~fastbleu.tables.scoring.score_groups` found: :class:`GroupScores`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.base import Formula

@dataclass
class GroupScores:
    """One score per group, in order of first appearance.

    Attributes
    ----------
    keys : list of str
        The group (and document) columns.
    key_types : dict
        The Arrow type of every key column.
    key_values : list of tuple
        Every group's key values.
    scores : list
        Every group's score object (``formula.score`` of its sums).
    signatures : list
        Every group's signature; groups with the same options share one object.
    statistics : numpy.ndarray
        Every group's summed statistics rows.
    formula : fastbleu.metrics.base.Formula
        The metric's formula, which scored the groups and names the result columns.
    """

    keys: list[str]
    key_types: dict
    key_values: list[tuple]
    scores: list
    signatures: list
    statistics: np.ndarray
    formula: Formula

    def to_table(self):
        """The result as a ``pyarrow.Table`` (see :func:`fastbleu.score_table`)."""
        import pyarrow as pa

        arrays = []
        for i, name in enumerate(self.keys):
            kind = self.key_types.get(name, pa.large_string())
            if pa.types.is_dictionary(kind):
                kind = kind.value_type
            if pa.types.is_null(kind):  # only null keys in the first rows: infer from all
                kind = None
            arrays.append(pa.array([values[i] for values in self.key_values], type=kind))
        columns = self.formula.score_columns(self.statistics, self.scores, self.signatures)
        names = self.keys + [name for name, _ in columns]
        arrays += [array for _, array in columns]
        return pa.Table.from_arrays(arrays, names=names)
