"""The Markdown summary beside the page: the ranking and what differs, for a pull request or
a paper draft.  Text from the inputs is escaped for Markdown tables (``|``, HTML, line
breaks), so a system name cannot break the table or inject markup."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]<>()#+!|~])")


def md(value) -> str:
    """Text for a Markdown table cell: one line, Markdown and HTML characters escaped."""
    text = " ".join(str(value).split())
    return _SPECIAL.sub(r"\\\1", text)


def _number(value, digits=2) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def render_markdown(report, page_name: str | None = None) -> str:
    """The summary (str)."""
    d = report.to_dict()
    systems = report.systems
    lines = [f"# {md(report.title)}", ""]
    refs = "varies" if report.num_refs < 0 else report.num_refs
    lines.append(f"{report.n_segments:,} segments, {len(systems)} systems, references per "
                 f"segment: {refs}; {report.n_samples:,} bootstrap resamples (seed "
                 f"{md(report.seed)}), significance level {report.alpha:g}.")
    if page_name:
        lines.append(f"The charts, every pair and the examples: [{md(page_name)}]"
                     f"(<{page_name.replace('>', '%3E').replace(' ', '%20')}>).")
    lines.append("")
    if len(systems) == 1:
        lines += ["One system: no significance test (nothing to compare it with).", ""]
    for rank in d["ranking"]:
        lines += [f"## {md(rank['metric'])}", "",
                  "| Cluster | Rank | System | Score | 95% CI |", "|---:|---:|---|---:|---:|"]
        for row in rank["rows"]:
            lines.append(f"| {row['cluster']} | {row['rank'][0]}–{row['rank'][1]} | "
                         f"{md(row['system'])} | {_number(row['score'])} | "
                         f"± {_number(row['ci'])} |")
        lines += ["", f"`{rank['signature']}`", ""]
    if report.groups is not None:
        count = d["groups"]["count"]
        held = len(d["groups"]["groups"])
        lines += ["## By group", "", "The first cluster of each group, by metric" +
                  (f" ({held:,} largest of {count:,} groups):" if held < count else ":"), ""]
        lines += ["| Group | Segments | " + " | ".join(md(m) for m in report.metrics) + " |",
                  "|---|---:|" + "---|" * len(report.metrics)]
        for group in d["groups"]["groups"]:
            label = " ".join(str(v) for v in group["group"].values())
            firsts = [", ".join(md(row["system"]) for row in rank["rows"] if row["cluster"] == 1)
                      for rank in group["ranking"]]
            lines.append(f"| {md(label)} | {group['segments']:,} | " + " | ".join(firsts) + " |")
        lines.append("")
    if report.pair is not None:
        a, b = d["pair"]["a"], d["pair"]["b"]
        lines += [f"## {md(a)} against {md(b)}, segment by segment", "",
                  f"| Metric | Mean difference | {md(a)} better | {md(b)} better | Ties |",
                  "|---|---:|---:|---:|---:|"]
        for diff in d["differences"]:
            lines.append(f"| {md(diff['metric'])} | {diff['mean']:+.2f} | "
                         f"{diff['a_better']:,} | {diff['b_better']:,} | {diff['ties']:,} |")
        lines.append("")
    lines.append("Made by `fastbleu report`.")
    return "\n".join(lines) + "\n"
