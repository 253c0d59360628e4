#!/usr/bin/env python3
"""Time ``fastbleu report`` on a large table, and compare-mt beside it on two systems.

What is measured
----------------
1. **The large report.**  A Parquet table of ``--rows`` rows (``hyp, ref, system,
   domain``): ``--systems`` systems of ``rows / systems`` segments each, in
   ``--domains`` domains of equal size, written once to ``--workdir`` (reused when it
   exists).  The text is WMT22's English-German test set (``../shared/wmt22``, or
   ``$FASTBLEU_WMT22``: the
   first ``--systems`` system outputs and reference A, cycled); without that folder,
   the bundled synthetic sample (``data/``) damaged into systems.  Then, in a fresh
   process (after a small warm-up run in another, so that numba's compile cache is
   filled as after any first run), the report of issue 29's target::

       fastbleu report TABLE --system-column system --group-by domain \\
           -m bleu chrf -pbsn 1000 -o OUT.html

   made through the Python API so that its stages can be timed (the command does the
   same calls).  Reported: wall and CPU time (all threads), each stage's (statistics,
   overall bootstrap, groups, buckets and examples, rendering and writing), the peak
   resident memory of that process (its ``ru_maxrss``), the size of the HTML file and
   the machine's load average (on a shared machine, CPU time is the steadier figure).
2. **compare-mt beside it.**  Two systems of 2,000 segments (the same source of
   text): ``compare-mt REF SYS1 SYS2 --compare_scores
   score_type=bleu,bootstrap=1000,prob_thresh=0.05 --output_directory DIR`` (its
   default analyses plus the bootstrap, compare-mt's closest to a report), against
   ``fastbleu report REF -i SYS1 SYS2 -m bleu -o OUT.html``, each in a fresh process,
   best of ``--repeat``.  compare-mt is not a dependency: ``pip install compare-mt``
   into the environment to time it (skipped, saying so, when it is absent).

Running it
----------
From the repository root, on an otherwise idle machine::

    python benchmarks/bench_report.py --rows 10000000
    python benchmarks/bench_report.py --rows 1000000 --json benchmarks/results/report-1m.json

Targets (issue 29, two cores): 10M rows, 8 systems, BLEU + chrF, 1,000 resamples,
10 domains in <= 60 s and <= 2 GB peak; the HTML <= 5 MB.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
WMT22 = Path(os.environ.get("FASTBLEU_WMT22", ROOT.parent / "shared" / "wmt22"))


def read_lines(path) -> list[str]:
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line.rstrip("\n") for line in handle]


def corpus(n_systems: int) -> tuple[list[str], list[list[str]], str]:
    """A reference and ``n_systems`` outputs of it, and where they come from."""
    outputs = sorted(glob.glob(str(WMT22 / "system-outputs" / "generaltest2022.en-de.hyp.*")))
    if len(outputs) >= n_systems:
        ref = read_lines(WMT22 / "references" / "generaltest2022.en-de.ref.A.de")
        return ref, [read_lines(p) for p in outputs[:n_systems]], "WMT22 en-de"
    ref = read_lines(ROOT / "data" / "sample.ref-A.en")
    base = read_lines(ROOT / "data" / "sample.sys-A.en")
    systems = []
    for k in range(n_systems):
        rng = random.Random(k)
        systems.append([" ".join(w for w in line.split() if rng.random() > 0.03 * (k + 1))
                        for line in base])
    return ref, systems, "the bundled synthetic sample"


def build_table(path: Path, rows: int, n_systems: int, domains: int) -> str:
    import pyarrow as pa
    import pyarrow.parquet as pq

    ref, systems, source = corpus(n_systems)
    per_system = rows // n_systems
    chunk = 1 << 18
    writer = None
    try:
        for s, hyps in enumerate(systems):
            for first in range(0, per_system, chunk):
                index = range(first, min(first + chunk, per_system))
                table = pa.table({
                    "hyp": [hyps[i % len(hyps)] for i in index],
                    "ref": [ref[i % len(ref)] for i in index],
                    "system": pa.array([f"system-{s}"] * len(index)).dictionary_encode(),
                    "domain": pa.array([f"domain-{i * domains // per_system}"
                                        for i in index]).dictionary_encode()})
                if writer is None:
                    writer = pq.ParquetWriter(path, table.schema)
                writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    return source


CHILD = """
import json, sys, time
sys.path.insert(0, {root!r})
clock = lambda: (time.perf_counter(), time.process_time())
start = clock()
from fastbleu.compare import api
from fastbleu.compare.output import write_outputs
corpus = api.load({table!r}, system="system", group_by=["domain"], metrics=["bleu", "chrf"])
loaded = clock()
found = api.compare(corpus, n_samples={resamples})
computed = clock()
write_outputs(found, {html!r}, {md!r}, [{table!r}])
done = clock()
wall = {{k: v for k, v in found.timings.items() if not k.endswith("_cpu")}}
cpu = {{k[:-4]: v for k, v in found.timings.items() if k.endswith("_cpu")}}
print(json.dumps({{"statistics": loaded[0] - start[0], **wall,
                  "render_and_write": done[0] - computed[0],
                  "cpu": {{"statistics": loaded[1] - start[1], **cpu,
                          "render_and_write": done[1] - computed[1]}},
                  "segments": corpus.n_segments, "systems": len(found.systems)}}))
"""


def run_child(code: str) -> tuple[dict, float, float, float]:
    """Run ``python -c code`` in a fresh process: its JSON line, wall and CPU seconds (all
    its threads), peak MiB."""
    start = time.perf_counter()
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE,
                               cwd=ROOT)
    out = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    if status != 0:
        raise SystemExit(f"the report failed (status {status})")
    return (json.loads(out.decode().strip().splitlines()[-1]), wall,
            usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def timed(argv: list[str], repeat: int) -> float:
    """Best wall time of ``argv`` in a fresh process."""
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, check=True, cwd=ROOT, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - start)
    return best


def large(args, work: Path) -> dict:
    table = work / f"report-{args.rows}-{args.systems}x{args.domains}.parquet"
    if not table.exists():
        print(f"writing {table} ...", file=sys.stderr)
        build_table(table, args.rows, args.systems, args.domains)
    warm = work / "warm.parquet"
    if not warm.exists():
        build_table(warm, 2000, 2, 2)
    html, md = str(work / "report.html"), str(work / "report.md")
    code = CHILD.format(root=str(ROOT), table=str(warm), resamples=10, html=html, md=md)
    run_child(code)  # warm-up: numba's cache, as after any first run
    code = CHILD.format(root=str(ROOT), table=str(table), resamples=args.resamples,
                        html=html, md=md)
    load_before = os.getloadavg()[0]
    stages, wall, cpu, peak = run_child(code)
    cpu_stages = stages.pop("cpu")
    return {"rows": args.rows, "systems": args.systems, "domains": args.domains,
            "resamples": args.resamples, "wall_s": round(wall, 2), "cpu_s": round(cpu, 2),
            "peak_mib": round(peak), "html_bytes": os.path.getsize(html),
            "load_average": round(os.getloadavg()[0], 1),
            "load_average_before": round(load_before, 1),
            "stages_wall_s": {k: round(v, 2) for k, v in stages.items()
                              if k not in ("segments", "systems")},
            "stages_cpu_s": {k: round(v, 2) for k, v in cpu_stages.items()}}


def two_systems(args, work: Path) -> dict:
    ref, systems, source = corpus(2)
    paths = []
    for name, lines in (("ref", ref), ("sys1", systems[0]), ("sys2", systems[1])):
        path = work / f"{name}.txt"
        path.write_text("\n".join(lines[:2000]) + "\n", encoding="utf-8")
        paths.append(str(path))
    ours = timed([sys.executable, "-m", "fastbleu", "report", paths[0], "-i", *paths[1:],
                  "-m", "bleu", "-o", str(work / "two.html"), "-q"], args.repeat)
    found = {"segments": 2000, "text": source, "fastbleu_report_s": round(ours, 2)}
    compare_mt = shutil.which("compare-mt")
    if compare_mt is None:
        print("compare-mt is not installed (pip install compare-mt): not timed", file=sys.stderr)
        return found
    theirs = timed([compare_mt, *paths, "--compare_scores",
                    "score_type=bleu,bootstrap=1000,prob_thresh=0.05",
                    "--output_directory", str(work / "compare-mt")], args.repeat)
    found.update(compare_mt_s=round(theirs, 2), speedup=round(theirs / ours, 1))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--systems", type=int, default=8)
    parser.add_argument("--domains", type=int, default=10)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3, help="runs of the two-system timing")
    parser.add_argument("--workdir", default=os.path.join(tempfile.gettempdir(),
                                                          "fastbleu-bench-report"))
    parser.add_argument("--skip-two-systems", action="store_true")
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    work = Path(args.workdir)
    work.mkdir(parents=True, exist_ok=True)
    results = {"large": large(args, work)}
    print(json.dumps(results["large"], indent=2))
    if not args.skip_two_systems:
        results["two_systems"] = two_systems(args, work)
        print(json.dumps(results["two_systems"], indent=2))
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
