"""Scores and paired test results -> what the command line prints.

Text files and standard input print exactly what sacrebleu 2.6 prints:
one system's JSON object or '='-aligned lines, one per metric
(:func:`single`); several systems' JSON list, or the ``tabulate`` table
(``fancy_grid`` for text, ``latex_booktabs`` for LaTeX) followed by the
metric signatures (:func:`systems`); and the paired tests' JSON, or their
table, sacrebleu's note on the test and the signatures (:func:`paired`).
sacrebleu colours a terminal's tables and notes; fastbleu never does (what
sacrebleu writes to a pipe or a file).

Tables of groups (:func:`groups`, :func:`paired_groups`) are fastbleu's
own: JSON lists of sacrebleu's objects with the group columns first, or a
text table of ``score (mean ± ci) (p = 0.0123)*`` cells.

Every report names the metric as its scores do (``score.name``; the paired
reports take the metrics' names), so another metric's reports read the same.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from ..metrics.formula import Score


def single(score: Score | list[Score], signature: str | list[str], fmt: str, width: int,
           score_only: bool) -> str:
    """One system under one metric or several (sacrebleu's order): its JSON object (a list
    of them for several), or its text line (LaTeX prints the same), several lines aligned
    on their ``=`` as sacrebleu's ``print_single_results`` aligns them; with
    ``score_only`` the bare scores."""
    scores = score if isinstance(score, list) else [score]
    signatures = signature if isinstance(signature, list) else [signature]
    lines = [s.format(width, score_only, sig, fmt == "json")
             for s, sig in zip(scores, signatures)]
    if len(lines) == 1:
        return lines[0]
    if fmt == "json":
        return "[\n" + ",\n".join(lines) + "\n]"
    # sacrebleu prints a line without '=' (score_only) at once, then the others aligned.
    bare = [line for line in lines if "=" not in line]
    cuts = [(line.index("=") - 1, line) for line in lines if "=" in line]
    widest = max((cut for cut, _ in cuts), default=0)
    return "\n".join(bare + [f"{line[:cut]:>{widest}}{line[cut:]}" for cut, line in cuts])


def tabulated(columns: dict[str, list[str]], fmt: str, width: int) -> str:
    """sacrebleu's table of several systems: ``tabulate`` with its arguments (the first
    column right-aligned, the others centred; ``fancy_grid`` or ``latex_booktabs``)."""
    from tabulate import tabulate

    return tabulate(columns, headers="keys", tablefmt="latex_booktabs" if fmt == "latex"
                    else "fancy_grid", colalign=("right",), stralign="center",
                    numalign="center", floatfmt=f".{width}f")


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


def systems(names: list[str], scores: list[list[Score]], signatures: list[str], fmt: str,
            width: int) -> str:
    """Several systems under one metric or several (``scores[m][s]``: metric ``m``'s score
    of system ``s``; ``signatures[m]`` formatted): sacrebleu's JSON list, or its table
    followed by the signatures."""
    columns = {"System": list(names)}
    for metric_scores in scores:
        columns[metric_scores[0].name] = [score.format(width, score_only=True)
                                          for score in metric_scores]
    named = dict(zip(list(columns)[1:], signatures))
    if fmt == "json":
        return json.dumps([{"system": name, **{metric: values[k] for metric, values in
                                               list(columns.items())[1:]}}
                           for k, name in enumerate(names)], indent=4)
    return tabulated(columns, fmt, width) + "\n\n" + signature_block(named)


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


def paired(names: list[str], results: list[list], metric_names: list[str],
           signatures: list[str], fmt: str, width: int, test: str, n_samples: int) -> str:
    """Paired tests of several systems (the baseline first, named ``Baseline: ...``) under
    one metric or several (``results[m][s]``, ``metric_names[m]``, ``signatures[m]``
    formatted), as sacrebleu prints them: its JSON list, or its table, its note on the test
    and the signatures (``n_samples``: the resamples or trials run)."""
    if fmt == "json":
        return json.dumps([{"system": name, **{metric: asdict(metric_results[k])
                                               for metric, metric_results in
                                               zip(metric_names, results)}}
                           for k, name in enumerate(names)], indent=4)
    columns = {"System": list(names)}
    columns.update(_result_cells(metric_names, results, width, multiline=fmt != "latex"))
    # sacrebleu names the baseline only when it is "Baseline: FILE" (standard input's
    # "Baseline" gives "compared to ."): its own quirk, kept for identical output.
    baseline = names[0] if names[0].startswith("Baseline:") else ""
    return "\n".join([tabulated(columns, fmt, width), "", _paired_note(test, n_samples, baseline),
                      signature_block(dict(zip(metric_names, signatures)))])


def _result_cells(metric_names, results, width: int, multiline: bool) -> dict:
    """sacrebleu's ``_format_score_lines``: ``score (mean ± ci)``, then ``(p = 0.0123)``,
    starred unless p > 0.05, on a line of its own in a text table.  As in sacrebleu, once a
    metric has a mean every later column's title says ``(μ ± 95% CI)``."""
    columns, with_ci = {}, False
    for metric, metric_results in zip(metric_names, results):
        cells = []
        for result in metric_results:
            text = f"{result.score:.{width}f}"
            if result.mean is not None:
                with_ci = True
                text += f" ({result.mean:.{width}f} ± {result.ci:.{width}f})"
            if result.p_value is not None:
                text += ("\n" if multiline else " ") + f"(p = {result.p_value:.4f})" + \
                    ("" if result.p_value > 0.05 else "*")
            cells.append(text)
        columns[metric + " (μ ± 95% CI)" if with_ci else metric] = cells
    return columns


_SACREBLEU_TESTS = {"bs": ("bootstrap resampling", "resampling trials"),
                    "ar": ("approximate randomization", "trials")}


def _paired_note(test: str, n_samples: int, baseline: str) -> str:
    """sacrebleu's note after a paired test's table (uncoloured), ending in a blank line."""
    kind, unit = _SACREBLEU_TESTS[test]
    message = f"Paired {kind} test with {n_samples} {unit}"
    rule = "-" * len(message)
    shown = ("   Actual system score / bootstrap estimated true mean / 95% CI are provided for "
             "each metric." if test == "bs" else "   Actual system score is provided for each "
             "metric.")
    return "\n".join([
        rule, message, rule,
        f" - Each system is pairwise compared to {baseline}.", shown, "",
        " - Null hypothesis: the system and the baseline translations are essentially",
        "   generated by the same underlying process. For a given system and the baseline,",
        "   the p-value is roughly the probability of the absolute score difference (delta)",
        "   or higher occurring due to chance, under the assumption that the null hypothesis "
        "is correct.", "",
        " - Assuming a significance threshold of 0.05, the null hypothesis can be rejected",
        '   for p-values < 0.05 (marked with "*"). This means that the delta is unlikely to be '
        "attributed",
        '   to chance, hence the system is significantly "different" than the baseline.',
        "   Otherwise, the p-values are highlighted in red.", "",
        ' - NOTE: Significance does not tell whether a system is "better" than the baseline '
        "but rather",
        '   emphasizes the "difference" of the systems in terms of the replicability of the '
        "delta.", ""])


def paired_group_records(keys: list[str], key_values: list[tuple], names: list[list[str]],
                         results: list[list], signatures: list[str], metric: str) -> list[dict]:
    """sacrebleu's JSON record of every group and system of a paired test (one metric)."""
    records = []
    for values, group_names, group_results, signature in zip(key_values, names, results,
                                                              signatures):
        for name, result in zip(group_names, group_results):
            record = {key: plain(value) for key, value in zip(keys, values)}
            record.update({"system": plain(name), metric: asdict(result),
                           "signature": signature})
            records.append(record)
    return records


def dumped(records) -> str:
    """JSON as fastbleu prints it (sacrebleu's indent; no NaN)."""
    return json.dumps(records, indent=4, ensure_ascii=False, allow_nan=False)


def paired_groups(keys: list[str], key_values: list[tuple], names: list[list[str]],
                  results: list[list], signatures: list[str], fmt: str, width: int, test: str,
                  n_samples: int, metric_name: str = "BLEU") -> str:
    """Paired tests per group of a table: one row per group and system."""
    metric = metric_name
    if fmt == "json":
        return dumped(paired_group_records(keys, key_values, names, results, signatures,
                                           metric))
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
