"""Paired test results -> what the command line prints.

JSON is sacrebleu's: a list of ``{"system": name, "BLEU": {"score",
"p_value", "mean", "ci"}}`` objects (with the group columns first for a
table).  Text and LaTeX carry the same values in fastbleu's table layout:
``score (mean ± ci)``, then ``(p = 0.0123)`` with a ``*`` when p < 0.05,
followed by a note on the test and the signature.
"""

from __future__ import annotations

import json
from dataclasses import asdict

from .report import _plain, _signatures, _table

_TESTS = {"bs": "paired bootstrap resampling (Koehn, 2004)",
          "ar": "paired approximate randomization (Riezler & Maxwell, 2005)"}


def _cell(result, width: int) -> str:
    text = f"{result.score:.{width}f}"
    if result.mean is not None:
        text += f" ({result.mean:.{width}f} ± {result.ci:.{width}f})"
    if result.p_value is not None:
        text += f" (p = {result.p_value:.4f})" + ("*" if result.p_value < 0.05 else "")
    return text


def _note(test: str, n_samples: int, baseline: str, with_ci: bool) -> str:
    unit = "resamples" if test == "bs" else "trials"
    lines = [f"{_TESTS[test][0].upper()}{_TESTS[test][1:]}, {n_samples} {unit}; every system "
             f"is compared with the baseline ({baseline}).",
             "BLEU is the system's score" + (" (bootstrap mean ± half the 95% interval)"
                                             if with_ci else "") + ".",
             "p is the chance of an absolute difference at least this large if the system and "
             "the baseline came from the same process; * marks p < 0.05.",
             "A small p says the systems differ, not which one is better."]
    return "\n".join(lines)


def paired(names: list[str], results: list, signature: str, fmt: str, width: int, test: str,
           n_samples: int) -> str:
    """One paired test over several systems, the baseline first."""
    if fmt == "json":
        return json.dumps([{"system": name, "BLEU": asdict(result)}
                           for name, result in zip(names, results)], indent=4)
    with_ci = any(result.mean is not None for result in results)
    header = ["System", "BLEU (μ ± 95% CI)" if with_ci else "BLEU"]
    table = _table(header, [[name, _cell(result, width)] for name, result in zip(names, results)],
                   fmt)
    if fmt == "latex":
        return table
    baseline = names[0].removeprefix("Baseline: ")
    return "\n\n".join([table, _note(test, n_samples, baseline, with_ci),
                        _signatures({"BLEU": signature})])


def paired_groups(keys: list[str], key_values: list[tuple], names: list[list[str]],
                  results: list[list], signatures: list[str], fmt: str, width: int, test: str,
                  n_samples: int) -> str:
    """Paired tests per group of a table: one row per group and system."""
    if fmt == "json":
        records = []
        for values, group_names, group_results, signature in zip(key_values, names, results,
                                                                  signatures):
            for name, result in zip(group_names, group_results):
                record = {key: _plain(value) for key, value in zip(keys, values)}
                record.update(system=_plain(name), BLEU=asdict(result), signature=signature)
                records.append(record)
        return json.dumps(records, indent=4, ensure_ascii=False, allow_nan=False)
    with_ci = any(r.mean is not None for group in results for r in group)
    header = keys + ["System", "BLEU (μ ± 95% CI)" if with_ci else "BLEU"]
    rows = []
    for values, group_names, group_results in zip(key_values, names, results):
        for k, (name, result) in enumerate(zip(group_names, group_results)):
            label = ("Baseline: " if k == 0 else "") + str(name)
            rows.append([str(v) for v in values] + [label, _cell(result, width)])
    table = _table(header, rows, fmt)
    if fmt == "latex":
        return table
    distinct = dict.fromkeys(signatures)
    signature_lines = _signatures({"BLEU" if len(distinct) == 1 else f"BLEU ({i + 1})": s
                                   for i, s in enumerate(distinct)})
    return "\n\n".join([table, _note(test, n_samples, "first in each group", with_ci),
                        signature_lines])
