#!/usr/bin/env python3
"""Parquet tables: the command line and ``score_table`` on a large WMT22 table.

What is measured
----------------
A Parquet file of ``--rows`` rows with columns ``hyp, ref, system, pair`` is
built from WMT22 (``common.corpus``'s en/de systems with their pair's first
reference, cycled; 41 system/pair groups; synthetic without WMT22) and written
once to ``--workdir`` (reused when it exists).  Then, by ``--mode``:

``cli`` (default)
    ``fastbleu TABLE --group-by system,pair --segments-out OUT.parquet --quiet``
    in a fresh process (start-up included), ``--repeat`` times after one
    untimed run: best wall time, rows/s, the child's peak RSS, and the
    per-group scores of the best run checked against ``BLEU().corpus_score``
    of each group's rows (exact) for up to ``--check-groups`` groups.
``api``
    in this (warm) process, ``score_table(TABLE, hyp="hyp", refs=["ref"],
    group_by="system")`` against pyarrow alone reading the two text columns,
    interleaved so that both see the same load; wall and process time.
``metrics``
    ``fastbleu TABLE --hyp-column hyp --ref-column ref --group-by system -m
    M...`` (``--metrics``, default ``bleu chrf``) against the same with BLEU
    alone, whole processes alternated pair by pair after a warm-up pair: wall,
    CPU (``os.wait4``) and peak RSS of each, and the ratio pair by pair.
``instructions``
    callgrind's instructions per row of ``BLEU().column_statistics`` (both
    tokenizers and the counting kernel, one thread) on the first 65,536 rows,
    already read and converted as the table job hands them over: the path of
    every record batch.  Private modules on purpose (a profile of one stage).

Running it
----------
From the repository root, on an otherwise idle machine::

    python benchmarks/bench_table.py --rows 1000000 --json benchmarks/results/table.json
    python benchmarks/bench_table.py --rows 10000000 --repeat 1 --check-groups 0
    python benchmarks/bench_table.py --rows 1000000 --mode api --repeat 5
    python benchmarks/bench_table.py --rows 1000000 --mode metrics --repeat 5 \\
        --json benchmarks/results/table-chrf.json
    python benchmarks/bench_table.py --rows 1000000 --mode instructions
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

common.use_checkout()


def build_table(rows: int, path: Path) -> None:
    """``rows`` rows of ``hyp, ref, system, pair``: the en/de WMT22 systems in name order,
    cycled (or the synthetic corpus, 4 systems)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if common.have_wmt22():
        files = common.wmt22_files()
        hyps, refs = common.load_corpus(files)
        systems, pairs = [], []
        for hyp_path, _ in files:
            count = len(common.read_lines(hyp_path))
            systems += [common.system_name(hyp_path)] * count
            pairs += [hyp_path.name.split(".")[1]] * count
    else:
        outputs, ref = common.synthetic_corpus(20_000, systems=4)
        hyps = [line for output in outputs for line in output]
        refs = ref * len(outputs)
        systems = [f"synthetic-{i}" for i, output in enumerate(outputs) for _ in output]
        pairs = ["xx-yy"] * len(hyps)
    writer = None
    written = 0
    while written < rows:
        n = min(len(hyps), rows - written)
        table = pa.table({"hyp": hyps[:n], "ref": refs[:n], "system": systems[:n],
                          "pair": pairs[:n]})
        if writer is None:
            writer = pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=1 << 17)
        written += n
    writer.close()


def table_path(workdir: Path, rows: int) -> Path:
    workdir.mkdir(parents=True, exist_ok=True)
    suffix = "" if common.have_wmt22() else "-synthetic"
    path = workdir / f"wmt22-{rows}{suffix}.parquet"
    if not path.exists():
        start = time.perf_counter()
        build_table(rows, path)
        print(f"built {path} ({path.stat().st_size / 2**20:.0f} MiB) in "
              f"{time.perf_counter() - start:.1f} s")
    return path.resolve()


def timed_child(command: list[str], keep_stdout: bool = False) -> dict:
    """Wall, CPU seconds and peak RSS of one child (``os.wait4``: this child's own)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=out, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        wall = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if child.returncode != 0:
            sys.exit(f"{' '.join(command)} failed: {err.read().decode(errors='replace')[-2000:]}")
        result = {"wall": wall, "cpu": usage.ru_utime + usage.ru_stime,
                  "peak_mib": usage.ru_maxrss / 1024}
        if keep_stdout:
            result["stdout"] = out.read().decode()
        return result


def check(table: Path, output: str, groups: int) -> int:
    """The first ``groups`` groups' scores against ``BLEU().corpus_score`` of their rows."""
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


def mode_cli(args, table: Path) -> dict:
    out = args.workdir / "segments.parquet"
    command = [sys.executable, "-m", "fastbleu", str(table), "--group-by", "system,pair",
               "--segments-out", str(out), "--quiet"]
    timed_child(command)  # numba's cache warm
    runs = [timed_child(command, keep_stdout=True) for _ in range(args.repeat)]
    best = min(runs, key=lambda r: r["wall"])
    output = best["stdout"]
    for r in runs:
        del r["stdout"]
    checked = check(table, output, args.check_groups) if args.check_groups else 0
    return {"rows": args.rows, "groups": len(json.loads(output)),
            "best_seconds": round(best["wall"], 3), "cpu_seconds_of_best": round(best["cpu"], 3),
            "rows_per_second": round(args.rows / best["wall"]),
            "peak_rss_mib": round(max(r["peak_mib"] for r in runs)),
            "groups_checked_exactly": checked, "runs": runs}


def mode_api(args, table: Path) -> dict:
    import pyarrow.parquet as pq

    import fastbleu

    fastbleu.score_table(str(table), hyp="hyp", refs=["ref"], group_by="system")  # warm-up
    best = {"score_table": float("inf"), "pyarrow_read": float("inf"),
            "score_table_process_time": float("inf")}
    for _ in range(args.repeat):
        best["pyarrow_read"] = min(best["pyarrow_read"], common.timed(
            lambda: pq.read_table(table, columns=["hyp", "ref"]))[0])
        wall, cpu, _ = common.timed(lambda: fastbleu.score_table(
            str(table), hyp="hyp", refs=["ref"], group_by="system"))
        best["score_table"] = min(best["score_table"], wall)
        best["score_table_process_time"] = min(best["score_table_process_time"], cpu)
    best = {k: round(v, 3) for k, v in best.items()}
    best["ratio"] = round(best["score_table"] / best["pyarrow_read"], 2)
    return {"rows": args.rows, **best}


def spread(values: list[float]) -> dict:
    return {"min": min(values), "median": statistics.median(values), "max": max(values)}


def mode_metrics(args, table: Path) -> dict:
    base = [sys.executable, "-m", "fastbleu", str(table), "--hyp-column", "hyp",
            "--ref-column", "ref", "--group-by", "system"]
    label = " ".join(args.metrics)
    commands = {label: base + ["-m", *args.metrics], "bleu": base}
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for pair in range(args.repeat + 1):  # the first pair warms the caches, not counted
        for name, command in commands.items():
            result = timed_child(command)
            if pair:
                runs[name].append(result)
        print(f"pair {pair}/{args.repeat}{' (warm-up)' if not pair else ''}: load average "
              f"{os.getloadavg()[0]:.2f}", flush=True)
    report = {name: {key: spread([r[key] for r in rs]) for key in ("wall", "cpu", "peak_mib")}
              for name, rs in runs.items()}
    report["ratio"] = {key: spread([a[key] / b[key] for a, b in zip(runs[label], runs["bleu"])])
                       for key in ("wall", "cpu")}
    return {"rows": args.rows, "commands": {k: " ".join(["fastbleu"] + v[3:])
                                            for k, v in commands.items()},
            "report": report, "runs": runs}


def instructions_child(table: Path, runs: int) -> None:
    import pyarrow.parquet as pq

    from fastbleu import BLEU
    from fastbleu.statistics.tokens import HashBuffer
    from fastbleu.tables.columns import hypothesis_column, reference_streams
    from fastbleu.inputs.text import as_text_column

    batch = next(pq.ParquetFile(table).iter_batches(batch_size=1 << 16, columns=["hyp", "ref"]))
    hyps = as_text_column(hypothesis_column(batch, "hyp", 0, "strict"), "hyp", trusted=True)
    refs = reference_streams(batch, ["ref"], 0, "strict")
    metric, buffers = BLEU(), (HashBuffer(), HashBuffer())
    metric.column_statistics(hyps, refs, buffers=buffers)  # compile or load the kernels
    with common.instrumented():
        for _ in range(runs):
            metric.column_statistics(hyps, refs, buffers=buffers)
    print(json.dumps({"rows": batch.num_rows}))


def mode_instructions(args, table: Path) -> dict:
    import pyarrow.parquet as pq

    rows = min(1 << 16, pq.ParquetFile(table).metadata.num_rows)
    count = common.instructions(lambda runs: [__file__, "--instructions-child", str(table),
                                              "--instructions-runs", str(runs)])
    return {"rows": rows, "instructions_per_row": round(count / rows, 1)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=("cli", "api", "metrics", "instructions"),
                        default="cli")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/fastbleu-bench"))
    parser.add_argument("--check-groups", type=int, default=5)
    parser.add_argument("--metrics", nargs="+", default=["bleu", "chrf"],
                        help="--mode metrics: the metrics timed against BLEU alone")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--instructions-child", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--instructions-runs", type=int, default=1, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.instructions_child:
        instructions_child(args.instructions_child, args.instructions_runs)
        return 0
    if args.rows < 1 or args.repeat < 1:
        parser.error("--rows and --repeat must be at least 1")
    table = table_path(args.workdir, args.rows)
    result = {"cli": mode_cli, "api": mode_api, "metrics": mode_metrics,
              "instructions": mode_instructions}[args.mode](args, table)
    print(json.dumps({k: v for k, v in result.items() if k != "runs"}, indent=1))
    common.write_json(args.json, {"info": common.machine_info(mode=args.mode, table=table.name),
                                  "result": result})
    return 0


if __name__ == "__main__":
    sys.exit(main())
