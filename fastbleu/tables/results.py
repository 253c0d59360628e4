"""What :func:`~fastbleu.tables.scoring.score_groups` found: :class:`GroupScores` for one
metric, :class:`MetricScores` for several."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..metrics.formula import Formula


def key_arrays(keys: list[str], key_types: dict, key_values: list[tuple]) -> list:
    """The group (and document) columns of a result, as Arrow arrays."""
    import pyarrow as pa

    arrays = []
    for i, name in enumerate(keys):
        kind = key_types.get(name, pa.large_string())
        if pa.types.is_dictionary(kind):
            kind = kind.value_type
        if pa.types.is_null(kind):  # only null keys in the first rows: infer from all
            kind = None
        arrays.append(pa.array([values[i] for values in key_values], type=kind))
    return arrays


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
    prefix : str
        What the metric's result columns are prefixed with ("" for a single
        metric; its label and ``_`` among several).
    """

    keys: list[str]
    key_types: dict
    key_values: list[tuple]
    scores: list
    signatures: list
    statistics: np.ndarray
    formula: Formula
    prefix: str = ""

    def score_columns(self) -> list:
        """``(name, array)`` of the metric's result columns, prefixed."""
        return [(self.prefix + name, array) for name, array in
                self.formula.score_columns(self.statistics, self.scores, self.signatures)]

    def to_table(self):
        """The result as a ``pyarrow.Table`` (see :func:`fastbleu.score_table`)."""
        import pyarrow as pa

        columns = self.score_columns()
        return pa.Table.from_arrays(
            key_arrays(self.keys, self.key_types, self.key_values) + [a for _, a in columns],
            names=self.keys + [name for name, _ in columns])


@dataclass
class MetricScores:
    """Several metrics' scores of the same groups: one :class:`GroupScores` per metric.

    Attributes
    ----------
    labels : list of str
        Each metric's label, the prefix of its columns (``bleu``, ``chrf``;
        ``bleu1``, ``bleu2`` when a key repeats).
    results : list of GroupScores
        Each metric's scores, in the order the metrics were given; all have
        the same groups in the same order.
    """

    labels: list[str]
    results: list[GroupScores]

    @property
    def keys(self) -> list[str]:
        """The group (and document) columns."""
        return self.results[0].keys

    @property
    def key_values(self) -> list[tuple]:
        """Every group's key values."""
        return self.results[0].key_values

    def to_table(self):
        """One row per group: the keys, then every metric's columns, prefixed by its label."""
        import pyarrow as pa

        first = self.results[0]
        arrays = key_arrays(first.keys, first.key_types, first.key_values)
        names = list(first.keys)
        for result in self.results:
            for name, array in result.score_columns():
                names.append(name)
                arrays.append(array)
        return pa.Table.from_arrays(arrays, names=names)
