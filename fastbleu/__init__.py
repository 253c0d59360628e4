"""fastbleu: sacrebleu's BLEU, chrF/chrF++ and TER and nltk's BLEU and NIST, vectorized for
large corpora.

The pipeline, one stage a subpackage, in the order data flows::

    inputs/       lists, numpy/Arrow arrays, files -> UTF-8 columns; reference streams
    tokenizers/   sacrebleu's tokenizer names -> kernels or Python line tokenizers
    statistics/   columns or token ids -> token hashes -> per-segment int64 statistics
    _kernels/     the numba kernels behind every stage (private; ``_native`` holds the
                  ahead-of-time build and the shipped kernel-cache seed)
    metrics/      the seam: statistics -> formula -> score and signature, per metric
    significance/ confidence intervals, paired bootstrap, approximate randomization
    tables/       Parquet / CSV / JSON Lines / data frames -> scores per group, streamed
    dask/         the same on a Dask cluster (optional)
    nltk/         NLTK-compatible sentence and corpus BLEU and NIST
    gpu/          token ids already on a CUDA device, scored there (optional)
    pairwise.py   MBR matrices of sentence scores
    compare/      the HTML comparison report (optional extra ``report``)
    cli/          the ``fastbleu`` command

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
