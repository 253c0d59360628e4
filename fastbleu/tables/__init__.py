"""Tables: Parquet / CSV / JSON Lines / data frames -> one score per group, streamed.

One module a job::

    paths.py    which inputs are tables (standard library only: the CLI starts fast)
    readers.py  path or table -> record batches (open_table, read_ahead, check_columns)
    pieces.py   a Parquet dataset cut at row-group boundaries (Dask's partitions)
    columns.py  a batch's columns -> text columns; column names and types
    groups.py   key columns -> group codes; Groups, the one group accumulator
    metric_set.py  the metrics of a job, checked; MetricSet: several side by side in one row
    job.py      TableJob: the checked plan; batches -> statistics -> group sums -> scores
    prepass.py  NIST only: a first pass counting every group's references -> fixed weights
    results.py  GroupScores (one metric), MetricScores (several) and their Arrow tables
    targets.py  where an output may be written (never over an input ...)
    writers.py  AtomicFile / AtomicDirectory (one commit/discard protocol), SegmentWriter
    scoring.py  score_table, score_groups (one process)
    paired.py   paired_table: paired tests per group

The public names are imported on first use (PEP 562), so that importing
``fastbleu.tables.paths`` loads neither numpy nor pyarrow.
"""

from importlib import import_module

__all__ = ["score_table", "score_groups", "paired_table", "GroupScores", "MetricScores",
           "PairedTable", "TableJob", "open_table", "is_table_path"]

_LAZY = {
    "score_table": "scoring",
    "score_groups": "scoring",
    "paired_table": "paired",
    "PairedTable": "paired",
    "GroupScores": "results",
    "MetricScores": "results",
    "TableJob": "job",
    "open_table": "readers",
    "is_table_path": "paths",
}


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fastbleu.tables' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
