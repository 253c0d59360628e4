#!/usr/bin/env python3
"""One process against a local Dask cluster on a partitioned Parquet dataset.

What is measured
----------------
``--rows`` WMT22 rows (``hyp, ref, system, pair``; the table of
``bench_table.py``, built by its ``build_table``) are written once to
``--workdir`` as a dataset of ``--partitions`` Parquet files, one partition
each.  Then, in this process:

- ``fastbleu.score_table(DATASET, group_by=["system", "pair"])``: one
  process, the kernels on ``NUMBA_NUM_THREADS`` threads (default: every core);
- a ``LocalCluster`` of ``--workers`` worker processes with
  ``--threads-per-worker`` threads and ``NUMBA_NUM_THREADS=--numba-threads``
  is started (timed: the start-up), and
  ``fastbleu.dask.score_table(DATASET, group_by=[...], client=client)`` runs
  on it.

Each side runs once untimed (kernels loaded from numba's cache, files in the
page cache), then the two sides run alternately ``--repeat`` times, so that
on a shared machine both see about the same load; the best of each side and
the ratio of every (one process, cluster) pair are reported, and the CPU
time each side used (this process's for one process; the workers', the
scheduler's and this process's for the cluster), which other jobs on the
machine do not inflate the way they inflate wall time.  The two
tables must be equal (``pyarrow.Table.equals``), or the script fails.

Running it
----------
From the repository root, on an otherwise idle machine::

    python benchmarks/bench_dask.py --rows 10000000 --partitions 20 --repeat 3 \\
        --json benchmarks/results/dask-10m.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_table import build_table  # noqa: E402  (the same table as bench_table.py)


def build_dataset(rows: int, partitions: int, workdir: Path) -> Path:
    """``rows`` rows of bench_table's table as ``partitions`` Parquet files (reused when present)."""
    import pyarrow.parquet as pq

    dataset = workdir / f"wmt22-{rows}-{partitions}"
    if dataset.is_dir() and len(list(dataset.glob("*.parquet"))) == partitions:
        return dataset
    single = workdir / f"wmt22-{rows}.parquet"
    if not single.exists():
        build_table(rows, single)
    dataset.mkdir(parents=True, exist_ok=True)
    table = pq.read_table(single)
    for k in range(partitions):
        first, last = rows * k // partitions, rows * (k + 1) // partitions
        pq.write_table(table.slice(first, last - first), dataset / f"part-{k:03d}.parquet",
                       row_group_size=1 << 17)
    return dataset


def best_of(repeat: int, run) -> tuple[float, object]:
    run()  # untimed: numba's cache, the page cache
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = run()
        best = min(best, time.perf_counter() - start)
    return best, result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--partitions", type=int, default=20)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads-per-worker", type=int, default=1)
    parser.add_argument("--numba-threads", type=int, default=1,
                        help="NUMBA_NUM_THREADS of the workers (0: numba's default)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-single", action="store_true",
                        help="time only the cluster (the tables are then not compared)")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/fastbleu-bench-dask"))
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args(argv)

    import fastbleu
    import fastbleu.dask

    args.workdir.mkdir(parents=True, exist_ok=True)
    start = time.perf_counter()
    dataset = build_dataset(args.rows, args.partitions, args.workdir)
    print(f"dataset {dataset} ready in {time.perf_counter() - start:.1f} s", file=sys.stderr)
    options = {"group_by": ["system", "pair"]}
    numba_threads = args.numba_threads or None
    result = {"rows": args.rows, "partitions": args.partitions, "cpus": os.cpu_count(),
              "single_numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count())),
              "workers": args.workers, "threads_per_worker": args.threads_per_worker,
              "worker_numba_threads": numba_threads or "default"}

    def single():
        return fastbleu.score_table(dataset, **options)

    start = time.perf_counter()
    with fastbleu.dask.connect(workers=args.workers, threads_per_worker=args.threads_per_worker,
                               numba_threads=numba_threads) as client:
        client.wait_for_workers(args.workers)
        result["cluster_startup_seconds"] = round(time.perf_counter() - start, 2)

        def cluster():
            return fastbleu.dask.score_table(dataset, client=client, **options)

        def cpu_seconds() -> float:
            """CPU time of the cluster's processes and this one, so far."""
            workers = client.run(time.process_time)
            return sum(workers.values()) + client.run_on_scheduler(time.process_time) + \
                time.process_time()

        # Untimed runs first (numba's cache, the page cache), then the two sides
        # alternately, so that both see the same load on a shared machine.
        expected, table = (None if args.skip_single else single()), cluster()
        times = {"single": [], "cluster": []}
        cpu = {"single": [], "cluster": []}
        for _ in range(args.repeat):
            for name, run in ([] if args.skip_single else [("single", single)]) + \
                    [("cluster", cluster)]:
                clock = time.process_time if name == "single" else cpu_seconds
                begin, begin_cpu = time.perf_counter(), clock()
                run()
                times[name].append(round(time.perf_counter() - begin, 3))
                cpu[name].append(round(clock() - begin_cpu, 3))
                print(f"{name}: {times[name][-1]:.3f} s, {cpu[name][-1]:.3f} CPU s",
                      file=sys.stderr)
    result["groups"] = table.num_rows
    result["cluster_seconds"] = min(times["cluster"])
    result["cluster_runs"] = times["cluster"]
    result["cluster_cpu_seconds"] = min(cpu["cluster"])
    if expected is not None:
        if not table.equals(expected):
            sys.exit("the cluster's table differs from the one process's")
        result["tables_equal"] = True
        result["single_process_seconds"] = min(times["single"])
        result["single_process_runs"] = times["single"]
        result["single_process_cpu_seconds"] = min(cpu["single"])
        result["cluster_over_single"] = round(result["cluster_seconds"]
                                              / result["single_process_seconds"], 3)
        result["cluster_over_single_per_pair"] = [
            round(c / s, 3) for s, c in zip(times["single"], times["cluster"])]
    print(json.dumps(result, indent=1))
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
