"""What :func:`~fastbleu.tables.scoring.score_groups` found: :class:`GroupScores`."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: Columns of score_table's result besides the keys: no group column may be named so.
RESULT_COLUMNS = ("score", "bp", "ratio", "sys_len", "ref_len", "counts", "totals",
                  "precisions", "signature")


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
        Every group's signature.
    statistics : numpy.ndarray
        Every group's summed statistics rows.
    ref_length : str
        The reference-length rule (``ref_len`` is a float for ``"average"``).
    """

    keys: list[str]
    key_types: dict
    key_values: list[tuple]
    scores: list
    signatures: list
    statistics: np.ndarray
    ref_length: str

    def to_table(self):
        """The result as a ``pyarrow.Table`` (see :func:`fastbleu.score_table`)."""
        import pyarrow as pa

        order = (self.statistics.shape[1] - 2) // 2
        arrays = []
        for i, name in enumerate(self.keys):
            kind = self.key_types.get(name, pa.large_string())
            if pa.types.is_dictionary(kind):
                kind = kind.value_type
            if pa.types.is_null(kind):  # only null keys in the first rows: infer from all
                kind = None
            arrays.append(pa.array([values[i] for values in self.key_values], type=kind))
        stats = self.statistics
        arrays += [
            pa.array([s.score for s in self.scores], pa.float64()),
            pa.array([s.bp for s in self.scores], pa.float64()),
            pa.array([float(s.ratio) for s in self.scores], pa.float64()),
            pa.array([s.sys_len for s in self.scores], pa.int64()),
            pa.array([s.ref_len for s in self.scores],
                     pa.float64() if self.ref_length == "average" else pa.int64()),
            pa.array(stats[:, 2:2 + order].tolist(), pa.list_(pa.int64())),
            pa.array(stats[:, 2 + order:].tolist(), pa.list_(pa.int64())),
            pa.array([s.precisions for s in self.scores], pa.list_(pa.float64())),
            pa.array([sig.format() for sig in self.signatures], pa.string()),
        ]
        return pa.Table.from_arrays(arrays, names=self.keys + list(RESULT_COLUMNS))
