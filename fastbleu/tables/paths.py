"""Which command-line inputs are tables: suffixes and :func:`is_table_path`.

Standard library only: the command line imports this at start-up, before it
knows whether numpy or pyarrow will be needed at all.
"""

from __future__ import annotations

import glob
import os

PARQUET_SUFFIXES = (".parquet", ".parq", ".pq")
CSV_SUFFIXES = (".csv", ".tsv", ".csv.gz", ".tsv.gz")
JSON_SUFFIXES = (".jsonl", ".ndjson", ".json", ".jsonl.gz")
TABLE_SUFFIXES = PARQUET_SUFFIXES + CSV_SUFFIXES + JSON_SUFFIXES


def is_table_path(path: str, table_options: bool = False) -> bool:
    """Whether a command-line input names a table rather than a text file.

    Parquet files, directories and globs are tables.  CSV, TSV and JSON
    Lines files are tables only with ``table_options`` (a ``--hyp-column``,
    ``--group-by`` ... flag): a ``.tsv`` file is just as often sacrebleu's
    tab-separated references (``-nr``).
    """
    lower = str(path).lower()
    pattern = glob.has_magic(str(path)) and not os.path.exists(path)  # "ref[1].txt" is a file
    if lower.endswith(PARQUET_SUFFIXES) or os.path.isdir(path) or pattern:
        return True
    return table_options and lower.endswith(CSV_SUFFIXES + JSON_SUFFIXES)
