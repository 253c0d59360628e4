#!/usr/bin/env python3
"""Two trees of fastbleu timed against each other on a shared machine, in warm processes.

What is measured
----------------
For each kind of run and each tree (``--a``, ``--b``: checkouts of fastbleu),
one process is started that imports that tree's fastbleu, loads its input and
warms up, then waits.  The script then asks them in turn (A then B or B then
A, at random) for one timed call, but only when the machine looks quiet: at
least ``--idle`` idle cores over half a second (``/proc/stat``).  Each call is
logged as one JSON line: wall and process time, the CPU seconds used by
*other* processes while it ran (``others``, from ``/proc/stat`` minus the
worker's own ``/proc/PID/stat``) and the seconds no core was busy (``idle``),
and, from ``/proc/self/task/*/schedstat``, the seconds the worker's threads
other than the main one were neither running nor waiting for a core
(``blocked``: waiting for the GIL, a join or the next batch).

Kinds of run:

``list2``, ``list1``
    ``BLEU().corpus_score(hyps, [refs])`` on the 1,000,000 Python-list
    segments of ``bench_corpus.py`` with ``NUMBA_NUM_THREADS`` 2 or 1.
``list2si``
    ``list2`` with ``sys.setswitchinterval(0.0005)`` (CPython's default is
    0.005 s): how much of the time went to GIL hand-overs.
``table``
    ``fastbleu.score_table(TABLE, hyp="hyp", refs=["ref"], group_by="system")``
    on ``bench_table.py``'s 1M-row Parquet file, after timing pyarrow's read of
    the two text columns (``read``).

Running it
----------
From the repository root::

    python benchmarks/bench_two_cores.py --a ../main --b . --minutes 10 \\
        --log /tmp/two-cores.jsonl
    python benchmarks/bench_two_cores.py --summary /tmp/two-cores.jsonl

The summary keeps only the calls during which other processes used under
0.2 CPU seconds.
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import random
import signal
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TABLE = Path("/tmp/fastbleu-bench/wmt22-1000000.parquet")  # bench_table.py --rows 1000000
KINDS = ("list2", "list2si", "list1", "table")


def worker(tree: str, kind: str) -> None:
    """A warm process: one timed call per line read from stdin, one JSON line out."""
    sys.path[:0] = [tree, str(HERE)]
    import logging

    import fastbleu

    assert fastbleu.__file__.startswith(os.path.abspath(tree)), fastbleu.__file__
    logging.getLogger("fastbleu").setLevel(logging.ERROR)  # the tokenized-period warning
    if kind == "table":
        import pyarrow.parquet as pq

        def call():
            return fastbleu.score_table(str(TABLE), hyp="hyp", refs=["ref"], group_by="system")
    else:
        import bench_corpus

        hyps, refs = bench_corpus.load_corpus(bench_corpus.wmt22_files(bench_corpus.DEFAULT_WMT_DIR))
        hyps, refs = bench_corpus.cycle_to(hyps, 1_000_000), bench_corpus.cycle_to(refs, 1_000_000)
        metric = fastbleu.BLEU()

        def call():
            return metric.corpus_score(hyps, [refs])
    if kind == "list2si":
        sys.setswitchinterval(0.0005)
    call()  # warm-up: numba's cache, the pool
    print(json.dumps({"ready": True}), flush=True)
    for _ in sys.stdin:
        result = {}
        if kind == "table":
            start = time.perf_counter()
            pq.read_table(TABLE, columns=["hyp", "ref"])
            result["read"] = time.perf_counter() - start
        before = _threads()
        cpu, start = time.process_time(), time.perf_counter()
        call()
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu
        blocked = 0.0
        for tid, (run, wait) in _threads().items():
            run0, wait0 = before.get(tid, (0.0, 0.0))
            if tid != os.getpid() and run - run0 > 0.005:
                blocked += wall - (run - run0) - (wait - wait0)
        print(json.dumps({**result, "wall": wall, "cpu": cpu, "blocked": blocked}), flush=True)


def _threads() -> dict:
    """Thread id -> (seconds run, seconds waited for a core), from schedstat."""
    out = {}
    for tid in os.listdir("/proc/self/task"):
        try:
            with open(f"/proc/self/task/{tid}/schedstat") as handle:
                run, wait, _ = map(int, handle.read().split())
        except OSError:
            continue
        out[int(tid)] = (run / 1e9, wait / 1e9)
    return out


def _cpu() -> tuple[int, int, int]:
    """(busy, total, idle) clock ticks of the whole machine."""
    with open("/proc/stat") as handle:
        ticks = list(map(int, handle.readline().split()[1:]))
    return sum(ticks) - ticks[3] - ticks[4], sum(ticks), ticks[3] + ticks[4]


def _own(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def control(args) -> None:
    cores = os.cpu_count()
    tick = os.sysconf("SC_CLK_TCK")
    workers = {}
    atexit.register(lambda: [p.kill() for p in workers.values()])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    for kind in args.kinds:
        for name, tree in (("A", args.a), ("B", args.b)):
            env = dict(os.environ, NUMBA_NUM_THREADS="1" if kind == "list1" else "2")
            workers[kind, name] = subprocess.Popen(
                [sys.executable, __file__, "--worker", tree, kind], stdin=subprocess.PIPE,
                stdout=subprocess.PIPE, text=True, env=env, cwd=tree)
    for process in workers.values():
        assert json.loads(process.stdout.readline())["ready"]
    end = time.time() + 60 * args.minutes
    turn = 0
    with open(args.log, "a") as log:
        while time.time() < end:
            a = _cpu()
            time.sleep(0.5)
            b = _cpu()
            if cores * (1 - (b[0] - a[0]) / max(1, b[1] - a[1])) < args.idle:
                time.sleep(1)
                continue
            kind = args.kinds[turn % len(args.kinds)]
            turn += 1
            for name in random.sample("AB", 2):
                process = workers[kind, name]
                before, own = _cpu(), _own(process.pid)
                process.stdin.write("go\n")
                process.stdin.flush()
                record = json.loads(process.stdout.readline())
                after = _cpu()
                record.update(kind=kind, tree=name, utc=time.strftime("%H:%M:%S", time.gmtime()),
                              load=os.getloadavg()[0],
                              others=((after[0] - before[0]) - (_own(process.pid) - own)) / tick,
                              idle=(after[2] - before[2]) / tick)
                log.write(json.dumps(record) + "\n")
                log.flush()


def summary(path: Path, quiet: float = 0.2) -> None:
    records = [json.loads(line) for line in open(path)]
    for kind in KINDS:
        for tree in "AB":
            runs = [r for r in records if r["kind"] == kind and r["tree"] == tree
                    and r["others"] < quiet]
            if not runs:
                continue
            walls = sorted(r["wall"] for r in runs)
            line = (f"{kind:8} {tree}  quiet calls {len(runs):3}  wall best {walls[0]:.3f} s "
                    f"median {statistics.median(walls):.3f} s  ")
            if kind.startswith("list"):
                line += f"best {1e6 / walls[0]:,.0f} seg/s  "
            else:
                line += f"pyarrow read best {min(r['read'] for r in runs):.3f} s  "
            line += (f"cpu median {statistics.median(r['cpu'] for r in runs):.3f} s  "
                     f"blocked median {statistics.median(r['blocked'] for r in runs):.2f} s  "
                     f"idle median {statistics.median(r['idle'] for r in runs):.2f} s")
            print(line)


def main() -> None:
    if sys.argv[1:2] == ["--worker"]:
        worker(sys.argv[2], sys.argv[3])
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--a", help="tree A (e.g. a checkout of main)")
    parser.add_argument("--b", help="tree B")
    parser.add_argument("--kinds", type=lambda s: s.split(","), default=list(KINDS))
    parser.add_argument("--minutes", type=float, default=10)
    parser.add_argument("--idle", type=float, default=1.5, help="idle cores needed to run")
    parser.add_argument("--log", type=Path, default=Path("/tmp/two-cores.jsonl"))
    parser.add_argument("--summary", type=Path, help="only summarise this log")
    args = parser.parse_args()
    if args.summary:
        summary(args.summary)
        return
    args.a, args.b = os.path.abspath(args.a), os.path.abspath(args.b)
    control(args)
    summary(args.log)


if __name__ == "__main__":
    main()
