"""How evenly the batch pipeline's batches share the work, at any thread count (issue 26).

The pipeline cuts an input into batches, each one job of one pool thread
(``fastbleu/metrics/cuts.py``).  Where segments differ widely in cost (TER on
long zh-en segments sitting together, a test set sorted by length), batches of
equal counts leave some threads most of the work.  A wall-clock speed-up needs
as many idle cores as threads; this measures what the cuts and the pool's
schedule allow on any machine instead:

1. For each thread count ``T`` (``NUMBA_NUM_THREADS=T`` in a child process, so
   that the cuts are those ``T`` threads get), the workload runs once and every
   pool job's CPU time (``time.thread_time`` on its thread) is recorded, and
   so is what the calling thread did, in order: each job it submitted, each
   result it waited for, and its own CPU time between them.
2. Those jobs are replayed on ``T`` simulated cores exactly as the run
   scheduled them: the calling thread submits and waits in the same order
   (whatever :func:`fastbleu._kernels.threads.ordered_map`'s window and the
   batches it starts early), each job is taken in turn by the first free
   thread: the *makespan*.
3. ``balanced speed-up = total job CPU / makespan`` (``T`` at best), beside
   the number of jobs and the largest one's share of the work.  Every pool
   job counts, the batches' and any other (BLEU from Arrow checks a large
   column's UTF-8 in pieces on the pool first).  ``w/ caller`` replays the
   calling thread's own CPU too (converting Python lists, merging a table's
   group sums), against all the CPU: the serial part's limit as well.

The replay leaves out memory bandwidth and the hand-overs' latency: this is
only the cut and the schedule.  Each child's peak RSS (its input included) is
printed beside.  ``--by-job`` also prints each kind of pool job (its function's
name: a metric's batches, the bootstrap's draws, counts and sums) with its count,
CPU and largest one; the JSON keeps every job's kind.

Examples::

    python benchmarks/bench_scaling.py --pairs zh-en,en-de --export-data /tmp/mixed.tsv
    python benchmarks/bench_cuts.py --data /tmp/mixed.tsv --threads 2,4,8,16 \\
        --json benchmarks/results/cuts.json
    python benchmarks/bench_cuts.py --data /tmp/mixed.tsv --segments 25000 \\
        --workloads ter_sorted,ter_mixed --threads 16
    python benchmarks/bench_cuts.py --data /tmp/mixed.tsv --workloads paired_bootstrap \\
        --threads 16 --by-job    # and each kind of pool job's count and CPU
    PYTHONPATH=/path/to/other/checkout python benchmarks/bench_cuts.py ...  # another tree
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import resource
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

#: workload -> segments (rows) by default: issue 26's sizes (TER's cost a segment is some
#: hundred times BLEU's), BLEU from Arrow at half of them (2M: the replay is the same).
WORKLOADS = {"ter_sorted": 100_000, "ter_mixed": 100_000, "chrf_sorted": 1_000_000,
             "chrf_mixed": 1_000_000, "bleu_sorted": 2_000_000, "bleu_mixed": 2_000_000,
             "bleu_list": 2_000_000, "table_parquet": 10_000_000,
             "paired_bootstrap": 1_000_000}
#: paired_bootstrap's resamples (issue 26: 2 systems x 1M segments x 1,000 resamples).
BOOTSTRAP_SAMPLES = 1000


def prepare(name: str, n: int, data: str, workdir: str):
    """A callable scoring the workload's input once (its segments taken evenly from
    ``data``; ``*_sorted``: by hypothesis words times reference words, long ones last;
    ``table_parquet``: ``bench_scaling.py``'s Parquet file of ``n`` rows, 41 systems;
    ``paired_bootstrap``: as ``bench_scaling.py``'s, two systems from lists, the segments
    cycled, the statistics included)."""
    import pyarrow as pa

    import fastbleu
    from bench_scaling import by_length, read_text, spread, write_table

    hyps, refs, _ = read_text(data)
    if name == "table_parquet":
        write_table(workdir, n, hyps, refs)
        path = os.path.join(workdir, f"table-{n}.parquet")
        return lambda: fastbleu.score_table(path, "hyp", "ref", group_by="system").to_pydict()
    if name == "paired_bootstrap":
        from bench_scaling import cycled

        from fastbleu.significance import paired_bootstrap

        a = cycled(hyps, n)
        b = cycled(hyps[len(hyps) // 2:] + hyps[:len(hyps) // 2], n)
        r = cycled(refs, n)
        return lambda: [(x.score, x.p_value, x.mean, x.ci) for x in paired_bootstrap(
            [a, b], [r], n_samples=BOOTSTRAP_SAMPLES, seed=12345)]
    h, r = spread(hyps, n), spread(refs, n)
    if name.endswith("_sorted"):
        h, r = by_length(h, r)
    if name.startswith("ter"):
        metric = fastbleu.TER()
        return lambda: metric.corpus_score(h, [r])  # lists, as issue 26's TER workload
    metric = fastbleu.CHRF() if name.startswith("chrf") else fastbleu.BLEU()
    if name == "bleu_list":
        return lambda: metric.corpus_score(h, [r])
    h, r = pa.array(h, pa.large_string()), pa.array(r, pa.large_string())
    return lambda: metric.corpus_score(h, [r])


def child(args) -> None:
    from fastbleu._kernels import threads

    pool = threads._executor()
    original = pool.submit
    jobs: dict = {}  # submission order -> CPU seconds of the job
    names: dict = {}  # submission order -> the job's function
    events: list = []  # the calling thread's: ("submit" | "wait", job, its CPU seconds then)
    lock = threading.Lock()
    caller = threading.get_ident()

    def submit(fn, *a):
        def timed(*aa):
            start = time.thread_time()
            try:
                return fn(*aa)
            finally:
                with lock:
                    jobs[order] = time.thread_time() - start
        with lock:
            order = len(submitted)
            submitted.append(order)
            names[order] = getattr(fn, "__name__", type(fn).__name__)
        future = original(timed, *a)
        events.append(("submit", order, time.thread_time()))
        result = future.result

        def waited(timeout=None):
            if threading.get_ident() == caller:
                events.append(("wait", order, time.thread_time()))
            return result(timeout)
        future.result = waited
        return future

    submitted: list = []

    run = prepare(args.workloads[0], args.segments, args.data, args.workdir)
    run()  # kernels loaded
    pool.submit = submit
    jobs.clear()
    submitted.clear()
    events.clear()
    wall = time.perf_counter()
    start = time.thread_time()
    score = run()
    end = time.thread_time()
    wall = time.perf_counter() - wall
    # each event's caller CPU since the one before (the first: since the run began)
    steps, before = [], start
    for kind, job, at in events:
        steps.append([kind, job, at - before])
        before = at
    times = [jobs[k] for k in range(len(jobs))]
    print("RESULT " + json.dumps({"times": times, "events": steps, "caller_after": end - before,
                                  "names": [names[k] for k in range(len(jobs))],
                                  "wall": wall, "score": str(score),
                                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF)
                                  .ru_maxrss / 1024}))


def replay(times: list[float], events: list, threads: int, caller: bool = False,
           caller_after: float = 0.0) -> float:
    """The length of the pipeline's schedule of jobs of these CPU times on ``threads``
    cores: the calling thread submits and waits as it did in the run (``events``), each
    job taken in turn by the first free thread.  ``caller``: the calling thread's own CPU
    between its events counts too (converting lists, merging), else it is free."""
    free = [0.0] * threads  # when each thread is next free
    done = [0.0] * len(times)
    now = 0.0  # the calling thread's clock
    for kind, job, cpu in events:
        if caller:
            now += cpu
        if kind == "submit":
            start = max(now, heapq.heappop(free))
            done[job] = start + times[job]
            heapq.heappush(free, done[job])
        else:
            now = max(now, done[job])
    return max(max(done, default=0.0), now + (caller_after if caller else 0.0))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a TSV of hypothesis<TAB>reference "
                        "(bench_scaling.py --export-data) or a wmt22 folder")
    parser.add_argument("--segments", type=int, default=None,
                        help="segments (rows) of every workload (default: each its own, "
                             + ", ".join(f"{k} {v:,}" for k, v in WORKLOADS.items()) + ")")
    parser.add_argument("--threads", default="2,4,8,16")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--workdir", default=None,
                        help="where table_parquet's file is written (default: a temporary "
                             "folder, removed after)")
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--by-job", action="store_true",
                        help="also print each kind of pool job's count, CPU and largest one")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {unknown[0]!r}; choose from {', '.join(WORKLOADS)}")
    if args.child:
        child(args)
        return
    with tempfile.TemporaryDirectory(prefix="bench-cuts-") as scratch:
        args.workdir = args.workdir or scratch
        rows = measure(args)
    if args.json:
        write_json(args.json, {"data": os.path.basename(args.data),
                               "python": sys.version.split()[0], "cpus": os.cpu_count()}, rows)


def write_json(path: str, head: dict, rows: list[dict]) -> None:
    """One row a line; times in microseconds, events as ``[kind, job, caller us]`` with
    kind ``s`` (submitted) or ``w`` (waited for): what :func:`replay` needs, a few
    hundred kB for every workload at four thread counts."""
    def compact(row: dict) -> dict:
        names = row.pop("job_names", [])
        kinds = sorted(set(names))
        row = dict(row, job_us=[round(t * 1e6) for t in row.pop("job_times")],
                   job_kinds=kinds, job_kind=[kinds.index(n) for n in names],
                   events=[[kind[0], job, round(cpu * 1e6)] for kind, job, cpu in row["events"]])
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in row.items()}
    with open(path, "w") as handle:
        handle.write(json.dumps(head)[:-1] + ', "rows": [\n')
        handle.write(",\n".join(json.dumps(compact(row), separators=(",", ":")) for row in rows))
        handle.write("\n]}\n")


def load_json(path: str) -> list[dict]:
    """The rows :func:`write_json` wrote, with ``job_times`` and ``events`` in seconds again
    (to replay them with other assumptions)."""
    with open(path) as handle:
        rows = json.load(handle)["rows"]
    kinds = {"s": "submit", "w": "wait"}
    for row in rows:
        row["job_times"] = [t / 1e6 for t in row.pop("job_us")]
        row["events"] = [[kinds[k], job, cpu / 1e6] for k, job, cpu in row["events"]]
        if "job_kind" in row:  # rows written before the jobs' names were kept have none
            row["job_names"] = [row["job_kinds"][k] for k in row.pop("job_kind")]
    return rows


def measure(args) -> list[dict]:
    rows = []
    print(f"{'workload':13} {'segments':>9} {'threads':>7} {'jobs':>5} {'largest':>8} "
          f"{'balanced':>9} {'w/ caller':>9} {'job CPU s':>9} {'caller s':>8} {'peak RSS':>8}")
    for name in args.workloads:
        segments = args.segments or WORKLOADS[name]
        scores = set()
        for t in [int(x) for x in args.threads.split(",")]:
            env = dict(os.environ, NUMBA_NUM_THREADS=str(t), PYTHONPATH=os.pathsep.join(
                filter(None, [os.environ.get("PYTHONPATH"), ROOT])))
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                                   "--data", args.data, "--segments", str(segments),
                                   "--workloads", name, "--workdir", args.workdir],
                                  env=env, capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"{name} at {t} threads failed:\n{done.stderr}")
            line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
            result = json.loads(line[len("RESULT "):])
            times, events = result["times"], result["events"]
            total = sum(times)
            caller = sum(cpu for _, _, cpu in events) + result["caller_after"]
            span = replay(times, events, t)
            with_caller = replay(times, events, t, caller=True,
                                 caller_after=result["caller_after"])
            rss = result["peak_rss_mb"]  # the child's, its input included
            row = {"workload": name, "threads": t, "segments": segments,
                   "jobs": len(times), "job_cpu": total, "caller_cpu": caller,
                   "largest_share": max(times) / total if total else 0.0,
                   "balanced_speedup": total / span if span else 0.0,
                   "with_caller_speedup": (total + caller) / with_caller if with_caller else 0.0,
                   "wall": result["wall"], "peak_rss_mb": rss,
                   "job_times": times, "events": events, "job_names": result["names"]}
            rows.append(row)
            scores.add(result["score"])
            print(f"{name:13} {segments:9} {t:7} {len(times):5} {100 * row['largest_share']:7.1f}% "
                  f"{row['balanced_speedup']:8.2f}x {row['with_caller_speedup']:8.2f}x "
                  f"{total:9.2f} {caller:8.3f} {rss:6.0f}MB", flush=True)
            if args.by_job:
                by_name: dict = {}
                for job_name, cpu in zip(result["names"], times):
                    count, cpu_sum, largest = by_name.get(job_name, (0, 0.0, 0.0))
                    by_name[job_name] = (count + 1, cpu_sum + cpu, max(largest, cpu))
                for job_name, (count, cpu_sum, largest) in sorted(
                        by_name.items(), key=lambda item: -item[1][1]):
                    print(f"    {job_name:24} {count:6} jobs {cpu_sum:8.3f} s "
                          f"(largest {1e3 * largest:.1f} ms)")
        if len(scores) != 1:
            sys.exit(f"{name}: the score differs between thread counts: {scores}")
    return rows


if __name__ == "__main__":
    main()
