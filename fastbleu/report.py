"""Scores and paired test results -> what the command line prints.

A single system's JSON and text lines, and several systems' JSON, are
sacrebleu's output exactly.  The tables for several systems (text and
LaTeX) carry the same values in fastbleu's own layout: sacrebleu draws them
with the ``tabulate`` package, which fastbleu does not depend on.

Paired tests: JSON is sacrebleu's, a list of ``{"system": name, "BLEU":
{"score", "p_value", "mean", "ci"}}`` objects (with the group columns first
for a table).  Text and LaTeX carry the same values in fastbleu's table
layout: ``score (mean ± ci)``, then ``(p = 0.0123)`` with a ``*`` when p <
0.05, followed by a note on the test and the signature.

Every report names the metric as its scores do (``score.name``; the paired
reports take ``metric_name``), so another metric's reports read the same.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .metrics.base import Score


def single(score: Score, signature: str, fmt: str, width: int, score_only: bool) -> str:
    """One system: sacrebleu's JSON object, or its one-line text (LaTeX prints the same line);
    with ``score_only`` the bare score in every format, as sacrebleu prints it."""
    return score.format(width, score_only, signature, fmt == "json")


# LaTeX's special characters, escaped as sacrebleu's tables (tabulate's latex_booktabs) do.
_LATEX_ESCAPES = str.maketrans({"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
                                "{": r"\{", "}": r"\}", "^": r"\^{}",
                                "~": r"\textasciitilde{}", "\\": r"\textbackslash{}",
                                "<": r"\ensuremath{<}", ">": r"\ensuremath{>}"})


def latex_escape(text: str) -> str:
    """``text`` with LaTeX's special characters escaped, as in sacrebleu's LaTeX tables."""
    return str(text).translate(_LATEX_ESCAPES)


def table(header: list[str], rows: list[list[str]], fmt: str) -> str:
    """A text table (first column right-aligned, the others centred, as sacrebleu's), or a
    LaTeX ``tabular`` with booktabs rules and escaped cells."""
    if fmt == "latex":
        header = [latex_escape(cell) for cell in header]
        rows = [[latex_escape(cell) for cell in row] for row in rows]
        lines = ["\\begin{tabular}{" + "r" + "c" * (len(header) - 1) + "}", "\\toprule",
                 " & ".join(header) + " \\\\", "\\midrule"]
        lines += [" & ".join(row) + " \\\\" for row in rows]
        lines += ["\\bottomrule", "\\end{tabular}"]
        return "\n".join(lines)
    widths = [max(len(str(c)) for c in column) for column in zip(header, *rows)]

    def line(cells):  # first column right-aligned, the others centred, as sacrebleu's table
        return "|".join(f" {c.rjust(w) if i == 0 else c.center(w)} "
                        for i, (c, w) in enumerate(zip(cells, widths)))

    rule = "+".join("-" * (w + 2) for w in widths)
    return "\n".join([line(header), rule] + [line(row) for row in rows])


def signature_block(signatures: dict[str, str]) -> str:
    """sacrebleu's "Metric signatures" block: one ``- name signature`` line each."""
    lines = ["-----------------", "Metric signatures", "-----------------"]
    lines += [f" - {name:<10} {sig}" for name, sig in signatures.items()]
    return "\n".join(lines)


def systems(names: list[str], scores: list[Score], signature: str, fmt: str,
            width: int) -> str:
    """Several systems: sacrebleu's JSON list, or a table followed by the signature."""
    metric = scores[0].name
    formatted = [score.format(width, score_only=True) for score in scores]
    if fmt == "json":
        return json.dumps([{"system": name, metric: value}
                           for name, value in zip(names, formatted)], indent=4)
    text = table(["System", metric], [[n, v] for n, v in zip(names, formatted)], fmt)
    return text + "\n\n" + signature_block({metric: signature})


def groups(keys: list[str], key_values: list[tuple], scores: list[Score],
           signatures: list[str], fmt: str, width: int, score_only: bool) -> str:
    """One score per group: a JSON list of sacrebleu's objects with the group columns
    first, or one text line per group."""
    if fmt == "json":
        records = []
        for values, score, signature in zip(key_values, scores, signatures):
            record = {key: plain(value) for key, value in zip(keys, values)}
            record.update(json.loads(score.format(width, signature=signature, is_json=True)))
            records.append(record)
        return json.dumps(records, indent=1, ensure_ascii=False, allow_nan=False)
    if fmt == "latex":
        header = keys + [scores[0].name if scores else "BLEU"]
        rows = [[str(v) for v in values] + [score.format(width, score_only=True)]
                for values, score in zip(key_values, scores)]
        return table(header, rows, fmt)
    lines = []
    for values, score, signature in zip(key_values, scores, signatures):
        label = " ".join(f"{key}={value}" for key, value in zip(keys, values))
        text = score.format(width, score_only, signature)
        lines.append(f"{label}\t{text}" if label else text)
    return "\n".join(lines)


#: Non-finite floats, which JSON cannot hold, as the strings JavaScript names them.
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def plain(value):
    """A JSON-friendly version of a group value (numpy and Arrow scalars, dates ...).

    A NaN or infinite key becomes the string ``"NaN"``, ``"Infinity"`` or
    ``"-Infinity"``: bare ``NaN`` is not JSON, and ``null`` is already the
    group of null keys.
    """
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return _NON_FINITE[str(value)]
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return str(value)


# -- paired tests ------------------------------------------------------------------------

_TESTS = {"bs": "paired bootstrap resampling (Koehn, 2004)",
          "ar": "paired approximate randomization (Riezler & Maxwell, 2005)"}


def cell(result, width: int) -> str:
    """A paired test result as a table cell: ``score (mean ± ci) (p = ...)*``."""
    text = f"{result.score:.{width}f}"
    if result.mean is not None:
        text += f" ({result.mean:.{width}f} ± {result.ci:.{width}f})"
    if result.p_value is not None:
        text += f" (p = {result.p_value:.4f})" + ("*" if result.p_value < 0.05 else "")
    return text


def _note(test: str, n_samples: int, baseline: str, with_ci: bool, metric: str) -> str:
    unit = "resamples" if test == "bs" else "trials"
    lines = [f"{_TESTS[test][0].upper()}{_TESTS[test][1:]}, {n_samples} {unit}; every system "
             f"is compared with the baseline ({baseline}).",
             f"{metric} is the system's score"
             + (" (bootstrap mean ± half the 95% interval)" if with_ci else "") + ".",
             "p is the chance of an absolute difference at least this large if the system and "
             "the baseline came from the same process; * marks p < 0.05.",
             "A small p says the systems differ, not which one is better."]
    return "\n".join(lines)


def paired(names: list[str], results: list, signature: str, fmt: str, width: int, test: str,
           n_samples: int, metric_name: str = "BLEU") -> str:
    """One paired test over several systems, the baseline first (``metric_name``: the
    metric's name, ``metric.name``)."""
    metric = metric_name
    if fmt == "json":
        return json.dumps([{"system": name, metric: asdict(result)}
                           for name, result in zip(names, results)], indent=4)
    with_ci = any(result.mean is not None for result in results)
    header = ["System", f"{metric} (μ ± 95% CI)" if with_ci else metric]
    text = table(header, [[name, cell(result, width)] for name, result in zip(names, results)],
                 fmt)
    if fmt == "latex":
        return text
    baseline = names[0].removeprefix("Baseline: ")
    return "\n\n".join([text, _note(test, n_samples, baseline, with_ci, metric),
                        signature_block({metric: signature})])


def paired_groups(keys: list[str], key_values: list[tuple], names: list[list[str]],
                  results: list[list], signatures: list[str], fmt: str, width: int, test: str,
                  n_samples: int, metric_name: str = "BLEU") -> str:
    """Paired tests per group of a table: one row per group and system."""
    metric = metric_name
    if fmt == "json":
        records = []
        for values, group_names, group_results, signature in zip(key_values, names, results,
                                                                  signatures):
            for name, result in zip(group_names, group_results):
                record = {key: plain(value) for key, value in zip(keys, values)}
                record.update({"system": plain(name), metric: asdict(result),
                               "signature": signature})
                records.append(record)
        return json.dumps(records, indent=4, ensure_ascii=False, allow_nan=False)
    with_ci = any(r.mean is not None for group in results for r in group)
    header = keys + ["System", f"{metric} (μ ± 95% CI)" if with_ci else metric]
    rows = []
    for values, group_names, group_results in zip(key_values, names, results):
        for k, (name, result) in enumerate(zip(group_names, group_results)):
            label = ("Baseline: " if k == 0 else "") + str(name)
            rows.append([str(v) for v in values] + [label, cell(result, width)])
    text = table(header, rows, fmt)
    if fmt == "latex":
        return text
    distinct = dict.fromkeys(signatures)
    signature_lines = signature_block({metric if len(distinct) == 1 else f"{metric} ({i + 1})": s
                                       for i, s in enumerate(distinct)})
    return "\n\n".join([text, _note(test, n_samples, "first in each group", with_ci, metric),
                        signature_lines])
