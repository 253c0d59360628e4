"""Scores -> what the command line prints.

A single system's JSON and text lines, and several systems' JSON, are
sacrebleu's output exactly.  The tables for several systems (text and
LaTeX) carry the same values in fastbleu's own layout: sacrebleu draws them
with the ``tabulate`` package, which fastbleu does not depend on.
"""

from __future__ import annotations

import json
import math

import numpy as np

from .score import BLEUScore


def single(score: BLEUScore, signature: str, fmt: str, width: int, score_only: bool) -> str:
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


def _table(header: list[str], rows: list[list[str]], fmt: str) -> str:
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


def _signatures(signatures: dict[str, str]) -> str:
    lines = ["-----------------", "Metric signatures", "-----------------"]
    lines += [f" - {name:<10} {sig}" for name, sig in signatures.items()]
    return "\n".join(lines)


def systems(names: list[str], scores: list[BLEUScore], signature: str, fmt: str,
            width: int) -> str:
    """Several systems: sacrebleu's JSON list, or a table followed by the signature."""
    formatted = [score.format(width, score_only=True) for score in scores]
    if fmt == "json":
        return json.dumps([{"system": name, "BLEU": value}
                           for name, value in zip(names, formatted)], indent=4)
    table = _table(["System", "BLEU"], [[n, v] for n, v in zip(names, formatted)], fmt)
    return table + "\n\n" + _signatures({"BLEU": signature})


def groups(keys: list[str], key_values: list[tuple], scores: list[BLEUScore],
           signatures: list[str], fmt: str, width: int, score_only: bool) -> str:
    """One score per group: a JSON list of sacrebleu's objects with the group columns
    first, or one text line per group."""
    if fmt == "json":
        records = []
        for values, score, signature in zip(key_values, scores, signatures):
            record = {key: _plain(value) for key, value in zip(keys, values)}
            record.update(json.loads(score.format(width, signature=signature, is_json=True)))
            records.append(record)
        return json.dumps(records, indent=1, ensure_ascii=False, allow_nan=False)
    if fmt == "latex":
        header = keys + ["BLEU"]
        rows = [[str(v) for v in values] + [score.format(width, score_only=True)]
                for values, score in zip(key_values, scores)]
        return _table(header, rows, fmt)
    lines = []
    for values, score, signature in zip(key_values, scores, signatures):
        label = " ".join(f"{key}={value}" for key, value in zip(keys, values))
        text = score.format(width, score_only, signature)
        lines.append(f"{label}\t{text}" if label else text)
    return "\n".join(lines)


#: Non-finite floats, which JSON cannot hold, as the strings JavaScript names them.
_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _plain(value):
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
