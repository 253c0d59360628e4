#!/usr/bin/env python3
"""Issue 13's table target: ``-m bleu chrf`` on a 1M-row Parquet table against BLEU alone.

What is measured
----------------
The table of ``bench_table.py`` (``build_table``: WMT22 en/de system outputs
with their pair's first reference, columns ``hyp, ref, system, pair``, cycled
to ``--rows`` rows; built once into ``--workdir`` and reused).  Two commands,
each a fresh process (``python -m fastbleu``, start-up and reading included):

    A: fastbleu TABLE --hyp-column hyp --ref-column ref --group-by system -m bleu chrf
    B: fastbleu TABLE --hyp-column hyp --ref-column ref --group-by system

run alternately, A B A B ..., ``--repeat`` pairs after one untimed warm-up
pair, so that the ratio A/B is taken pair by pair on the same machine load.
For each run: wall seconds, CPU seconds (user + system of the child) and the
child's peak RSS (``os.wait4``).  The report gives min/median/max of each and
of the pair-by-pair ratio; the issue asks for a median ratio of at most 2.5
and a peak RSS of at most 1 GB.

Running it
----------
From the repository root (the worktree's package is the one ``-m fastbleu``
runs, since the current directory comes first on ``sys.path``)::

    python benchmarks/bench_chrf_table.py --repeat 5 --json benchmarks/results/chrf-table.json
    python benchmarks/bench_chrf_table.py --repeat 5 --root ../other-checkout   # a baseline
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_table import build_table  # noqa: E402


def run(command: list[str], root: Path) -> dict:
    """Wall, CPU seconds and peak RSS (MiB) of one child process running ``command``."""
    start = time.perf_counter()
    child = subprocess.Popen(command, cwd=root, stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE)
    _, status, usage = os.wait4(child.pid, 0)
    wall = time.perf_counter() - start
    child.returncode = os.waitstatus_to_exitcode(status)
    error = child.stderr.read().decode(errors="replace")
    child.stderr.close()
    if child.returncode != 0:
        sys.exit(f"{' '.join(command)} failed ({child.returncode}): {error}")
    return {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
            "peak_mib": usage.ru_maxrss / 1024}


def spread(values: list[float]) -> dict:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5, help="timed A/B pairs")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/fastbleu-bench"))
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the checkout whose fastbleu runs (the children's directory)")
    args = parser.parse_args(argv)

    args.workdir.mkdir(parents=True, exist_ok=True)
    table = args.workdir / f"chrf-table-{args.rows}.parquet"
    if not table.exists():
        build_table(args.rows, table)
    table = table.resolve()
    base = [sys.executable, "-m", "fastbleu", str(table), "--hyp-column", "hyp",
            "--ref-column", "ref", "--group-by", "system"]
    commands = {"bleu chrf": base + ["-m", "bleu", "chrf"], "bleu": base}
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    loads = [os.getloadavg()[0]]
    for pair in range(args.repeat + 1):  # the first pair warms the caches, not counted
        for name, command in commands.items():
            result = run(command, args.root)
            if pair:
                runs[name].append(result)
        loads.append(os.getloadavg()[0])
        print(f"pair {pair}/{args.repeat}" + (" (warm-up)" if not pair else "") +
              f": load average {loads[-1]:.2f}", flush=True)

    ratios = {key: [a[key] / b[key] for a, b in zip(runs["bleu chrf"], runs["bleu"])]
              for key in ("wall", "cpu")}
    report = {name: {key: spread([r[key] for r in rs]) for key in ("wall", "cpu", "peak_mib")}
              for name, rs in runs.items()}
    report["ratio"] = {key: spread(values) for key, values in ratios.items()}
    print(f"\n{'command':<12} {'wall s (min/median/max)':>26} {'CPU s median':>13} "
          f"{'peak MiB median':>16}")
    for name in commands:
        r = report[name]
        print(f"{name:<12} {r['wall']['min']:>8.2f} / {r['wall']['median']:.2f} / "
              f"{r['wall']['max']:.2f} {r['cpu']['median']:>13.2f} "
              f"{r['peak_mib']['median']:>16.0f}")
    w, c = report["ratio"]["wall"], report["ratio"]["cpu"]
    print(f"{'ratio':<12} {w['min']:>8.2f} / {w['median']:.2f} / {w['max']:.2f} "
          f"{c['median']:>13.2f}   (pair by pair; target: median wall <= 2.5)")
    print(f"load average during the runs: {min(loads):.2f}-{max(loads):.2f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"rows": args.rows, "root": str(args.root), "table": str(table), "repeat": args.repeat,
                   "commands": {k: " ".join(["fastbleu"] + v[3:]) for k, v in commands.items()},
                   "cpu_count": os.cpu_count(), "load_average": loads, "runs": runs,
                   "report": report}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
