"""fastbleu: sacrebleu-exact BLEU, vectorized with numba, for large corpora.

The pipeline, one module a stage::

    text.py, files.py  inputs -> UTF-8 columns (Arrow-style buffers)
    statistics.py      columns -> token hashes -> per-segment statistics (kernels)
    score.py           statistics -> BLEU scores, signatures and reports
    bleu.py            the BLEU class that ties them together
    tables.py          Parquet / CSV / JSON Lines / data frames -> record batches
    groups.py          statistics -> sums per group
    table_scoring.py   score_table: one corpus BLEU per group, streamed
    significance.py    bootstrap CIs, paired bootstrap, approximate randomization
    dask/              the same on a Dask cluster (``fastbleu.dask``, optional)
    report.py, cli.py  the ``fastbleu`` command

The public names are imported on first use, so that ``fastbleu --help`` and
input errors do not wait for numba to start.
"""

from ._version import __version__

__all__ = ["BLEU", "BLEUScore", "BLEUSignature", "score_table", "significance", "__version__"]

_LAZY = {"BLEU": "bleu", "BLEUScore": "score", "BLEUSignature": "score",
         "score_table": "tables.scoring"}


def __getattr__(name):
    if name == "significance":  # the module, imported on first use
        from importlib import import_module

        return import_module(".significance", __name__)
    if name in _LAZY:
        from importlib import import_module

        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fastbleu' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
