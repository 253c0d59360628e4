#!/usr/bin/env python3
"""Wall time and peak memory of the command line on a large Parquet table.

What is measured
----------------
A Parquet file of ``--rows`` rows with columns ``hyp, ref, system, pair`` is
built from WMT22 (``../shared/wmt22``; every 13a-tokenized system output
paired with its pair's first reference, cycled) and written once to
``--workdir`` (reused when it exists).  Then, in a fresh process each,

    fastbleu TABLE --group-by system,pair --segments-out OUT.parquet --quiet

runs ``--repeat`` times; the script reports the best wall time, the peak
resident memory of that process (``ru_maxrss`` of the child), the rows per
second, and checks the per-group scores of the first run against
``fastbleu.BLEU().corpus_score`` on each group's rows (exact equality) for
up to ``--check-groups`` groups.

Running it
----------
From the repository root, on an otherwise idle machine::

    python benchmarks/bench_table.py --rows 1000000
    python benchmarks/bench_table.py --rows 10000000 --repeat 1 --check-groups 0
    python benchmarks/bench_table.py --rows 1000000 --api --repeat 5

``--api`` times the Python API instead, in this (warm) process: best of
``--repeat`` calls of ``fastbleu.score_table(TABLE, hyp="hyp", refs=["ref"],
group_by="system")`` against pyarrow alone reading the two text columns
(``pyarrow.parquet.read_table(TABLE, columns=["hyp", "ref"])``), the two
interleaved so that both see the same load; plus the process time of the
score_table calls (all threads), which is less sensitive to load.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's fastbleu, not whichever is installed
WMT22 = ROOT.parent / "shared" / "wmt22"


def read_lines(path):
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line.rstrip("\n") for line in handle]


def build_table(rows: int, path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    hyps, refs, systems, pairs = [], [], [], []
    for hyp_path in sorted(glob.glob(str(WMT22 / "system-outputs" / "*"))):
        name = os.path.basename(hyp_path).split(".")
        pair, system, target = name[1], ".".join(name[3:-1]), name[-1]
        if target in ("zh", "ja"):
            continue
        ref_path = sorted(glob.glob(str(WMT22 / "references" / f"generaltest2022.{pair}.ref.*")))[0]
        h, r = read_lines(hyp_path), read_lines(ref_path)
        hyps += h
        refs += r
        systems += [system] * len(h)
        pairs += [pair] * len(h)
    writer = None
    chunk = len(hyps)
    written = 0
    while written < rows:
        n = min(chunk, rows - written)
        table = pa.table({"hyp": hyps[:n], "ref": refs[:n], "system": systems[:n],
                          "pair": pairs[:n]})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=1 << 17)
        written += n
    writer.close()


def run_cli(table: Path, out: Path) -> tuple[float, int, str]:
    command = [sys.executable, "-m", "fastbleu", str(table), "--group-by", "system,pair",
               "--segments-out", str(out), "--quiet"]
    start = time.perf_counter()
    done = subprocess.run(command, capture_output=True, text=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"fastbleu failed: {done.stderr}")
    # The largest peak of any child so far; every child runs this same command.
    peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, peak_kib, done.stdout


def check(table: Path, output: str, groups: int) -> int:
    import pyarrow.parquet as pq

    from fastbleu import BLEU

    records = json.loads(output)
    data = pq.read_table(table).to_pandas()
    checked = 0
    for record in records[:groups]:
        part = data[(data.system == record["system"]) & (data.pair == record["pair"])]
        expected = BLEU().corpus_score(part.hyp.tolist(), [part.ref.tolist()])
        if record["verbose_score"] != expected._verbose or \
                record["score"] != float(f"{expected.score:.1f}"):
            sys.exit(f"group {record['system']}/{record['pair']} differs: {record} vs {expected}")
        checked += 1
    return checked


def run_api(table: Path, repeat: int) -> dict:
    """Warm, in-process: score_table against pyarrow's read of the two text columns."""
    import pyarrow.parquet as pq

    import fastbleu

    fastbleu.score_table(str(table), hyp="hyp", refs=["ref"], group_by="system")  # warm-up
    best = {"score_table": float("inf"), "pyarrow_read": float("inf"),
            "score_table_process_time": float("inf")}
    for _ in range(repeat):
        start = time.perf_counter()
        pq.read_table(table, columns=["hyp", "ref"])
        best["pyarrow_read"] = min(best["pyarrow_read"], time.perf_counter() - start)
        start, cpu = time.perf_counter(), time.process_time()
        fastbleu.score_table(str(table), hyp="hyp", refs=["ref"], group_by="system")
        best["score_table"] = min(best["score_table"], time.perf_counter() - start)
        best["score_table_process_time"] = min(best["score_table_process_time"],
                                               time.process_time() - cpu)
    best = {k: round(v, 3) for k, v in best.items()}
    best["ratio"] = round(best["score_table"] / best["pyarrow_read"], 2)
    return best


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/fastbleu-bench"))
    parser.add_argument("--check-groups", type=int, default=5)
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--api", action="store_true",
                        help="time score_table in this process against pyarrow's read")
    args = parser.parse_args(argv)

    args.workdir.mkdir(parents=True, exist_ok=True)
    table = args.workdir / f"wmt22-{args.rows}.parquet"
    if not table.exists():
        start = time.perf_counter()
        build_table(args.rows, table)
        print(f"built {table} ({table.stat().st_size / 2**20:.0f} MiB) in "
              f"{time.perf_counter() - start:.1f} s")
    if args.api:
        result = {"rows": args.rows, "repeat": args.repeat, "load": os.getloadavg(),
                  **run_api(table, args.repeat)}
        print(json.dumps(result, indent=1))
        if args.json:
            args.json.write_text(json.dumps(result, indent=1) + "\n")
        return 0
    out = args.workdir / "segments.parquet"
    # one untimed run so that numba's cache is warm
    run_cli(table, out)
    best, peak, output = float("inf"), 0, ""
    for _ in range(args.repeat):
        seconds, peak_kib, stdout = run_cli(table, out)
        if seconds < best:
            best, output = seconds, stdout
        peak = max(peak, peak_kib)
    groups = len(json.loads(output))
    checked = check(table, output, args.check_groups) if args.check_groups else 0
    result = {"rows": args.rows, "groups": groups, "best_seconds": round(best, 3),
              "rows_per_second": round(args.rows / best), "peak_rss_mib": round(peak / 1024),
              "groups_checked_exactly": checked}
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
