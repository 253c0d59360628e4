"""fastbleu: sacrebleu-exact BLEU and chrF, vectorized with numba, for large corpora.

The pipeline, one stage a module or subpackage::

    text.py, files.py   inputs -> UTF-8 columns (Arrow-style buffers)
    tokenizers/         tokenizer names -> kernels or Python line tokenizers
    statistics.py       columns -> token hashes -> per-segment statistics (kernels)
    token_ids.py,       token ids (lists, numpy, Arrow, DLPack) -> token hashes, no
      id_statistics.py  tokenizer -> the same statistics (``TokenIds``)
    metrics/            the metric seam: statistics -> formula -> score and signature
    resampling.py       seeds, sacrebleu's draws, bootstrap and randomization engines
    significance.py     confidence intervals, paired bootstrap, approximate randomization
    tables/             Parquet / CSV / JSON Lines / data frames -> scores per group
    dask/               the same on a Dask cluster (``fastbleu.dask``, optional)
    report.py, cli/     the ``fastbleu`` command and what it prints

The public names are imported on first use, so that ``fastbleu --help`` and
input errors do not wait for numba to start.
"""

from ._version import __version__

__all__ = ["BLEU", "BLEUScore", "BLEUSignature", "CHRF", "CHRFScore", "CHRFSignature",
           "TER", "TERScore", "TERSignature", "corpus_bleu", "raw_corpus_bleu", "sentence_bleu",
           "corpus_chrf", "sentence_chrf", "corpus_ter", "sentence_ter", "score_table",
           "significance", "__version__"]
__all__ += ["NIST", "NISTScore", "NISTSignature"]
__all__ += ["TokenIds"]

_LAZY = {"BLEU": "metrics.bleu.metric", "BLEUScore": "metrics.bleu.score",
         "BLEUSignature": "metrics.bleu.score", "CHRF": "metrics.chrf.metric",
         "CHRFScore": "metrics.chrf.score", "CHRFSignature": "metrics.chrf.score",
         "TER": "metrics.ter.metric", "TERScore": "metrics.ter.score",
         "TERSignature": "metrics.ter.score", "corpus_bleu": "compat",
         "raw_corpus_bleu": "compat", "sentence_bleu": "compat", "corpus_chrf": "compat",
         "sentence_chrf": "compat", "corpus_ter": "compat", "sentence_ter": "compat",
         "score_table": "tables.scoring"}
_LAZY.update({"NIST": "metrics.nist.metric", "NISTScore": "metrics.nist.score",
              "NISTSignature": "metrics.nist.score"})
_LAZY["TokenIds"] = "statistics.token_ids"
# fastbleu.report(...): the HTML comparison report (fastbleu.compare; extra fastbleu[report])
_LAZY["report"] = "compare"
__all__ += ["report"]


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
