"""Metrics on one seam: a name -> metric registry and the public base classes.

A metric is three things (see :mod:`fastbleu.metrics.base`): statistics
extraction (text -> an int64 array, one summable row per segment), a
:class:`Formula` (rows -> scores) and a signature.  ``get_metric("bleu",
**options)`` builds one by name; the names below are imported on first use
(PEP 562), so that importing this package does not start numba.

Adding a metric: its statistics kernel in ``fastbleu/_kernels/``, its
formula module, its metric class, and one line in :data:`METRICS`.
"""

from __future__ import annotations

from importlib import import_module

#: Metric name -> ``"module:Class"`` of its :class:`Metric`.
METRICS = {"bleu": "fastbleu.metrics.bleu.metric:BLEU", "chrf": "fastbleu.metrics.chrf.metric:CHRF",
           "ter": "fastbleu.metrics.ter.metric:TER", "nist": "fastbleu.metrics.nist.metric:NIST"}

__all__ = ["METRICS", "get_metric", "metric_class", "Metric", "Formula", "Score", "Signature",
           "BLEU", "BLEUFormula", "BLEUScore", "BLEUSignature", "CHRF", "CHRFFormula",
           "CHRFScore", "CHRFSignature", "TER", "TERFormula", "TERScore", "TERSignature",
           "NIST", "NISTFormula", "NISTScore", "NISTSignature"]

_LAZY = {"Metric": "base", "Formula": "formula", "Score": "formula", "Signature": "formula"}
for _metric in ("BLEU", "CHRF", "TER", "NIST"):
    _LAZY.update({_metric: f"{_metric.lower()}.metric", f"{_metric}Formula": f"{_metric.lower()}.formula",
                  f"{_metric}Score": f"{_metric.lower()}.score",
                  f"{_metric}Signature": f"{_metric.lower()}.score"})
del _metric


def metric_class(name: str) -> type:
    """The :class:`Metric` class registered as ``name`` (case-insensitive).

    Raises
    ------
    TypeError
        If ``name`` is not a str.
    ValueError
        If no metric has that name; the message lists those there are.
    """
    if not isinstance(name, str):
        raise TypeError(f"metric name must be a str, got {type(name).__name__}")
    try:
        module, cls = METRICS[name.lower()].split(":")
    except KeyError:
        raise ValueError(f"unknown metric {name!r}; available: {', '.join(METRICS)}") from None
    return getattr(import_module(module), cls)


def get_metric(name: str = "bleu", **options):
    """A metric by name, built with its options (e.g. ``get_metric("bleu", tokenize="intl")``).

    Parameters
    ----------
    name : str
        A key of :data:`METRICS`.
    **options
        The metric class's constructor arguments.

    Returns
    -------
    Metric
    """
    return metric_class(name)(**options)


def __getattr__(name):
    if name in _LAZY:
        value = getattr(import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'fastbleu.metrics' has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
