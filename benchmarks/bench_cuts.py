"""How evenly the batch pipeline's batches share the work, at any thread count (issue 26).

The pipeline cuts an input into batches, each one job of one pool thread
(``fastbleu/metrics/cuts.py``).  Where segments differ widely in cost (TER on
long zh-en segments sitting together), batches of equal counts leave some
threads most of the work.  A wall-clock speed-up needs as many idle cores as
threads; this measures what the cuts allow on any machine instead:

1. For each thread count ``T`` (``NUMBA_NUM_THREADS=T`` in a child process, so
   that the cuts are those ``T`` threads get), the workload runs once and every
   pool job's CPU time (``time.thread_time`` on its thread) is recorded.
2. Those times are replayed on ``T`` simulated cores exactly as the pipeline
   schedules them (:func:`fastbleu._kernels.threads.ordered_map`: at most a
   window of jobs submitted -- the most seen in the run --, the next one only
   once the oldest has finished, each taken by the first free thread): the
   *makespan*.
3. ``balanced speed-up = total job CPU / makespan`` (``T`` at best), beside
   the number of jobs and the largest one's share of the work.  Every pool
   job counts, the batches' and any other (BLEU from Arrow checks a large
   column's UTF-8 in pieces on the pool first).

The calling thread's own time is not in it (``bench_scaling.py`` measures
that, the serial part), nor memory bandwidth: this is only the cut.

Examples::

    python benchmarks/bench_scaling.py --pairs zh-en,en-de --export-data /tmp/mixed.tsv
    python benchmarks/bench_cuts.py --data /tmp/mixed.tsv --segments 25000 \\
        --workloads ter_sorted,ter_mixed --threads 2,4,8,16
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)

#: workload -> segments by default (TER's cost a segment is some hundred times BLEU's).
WORKLOADS = {"ter_sorted": 25_000, "ter_mixed": 25_000, "chrf_sorted": 200_000,
             "bleu_sorted": 200_000}


def prepare(name: str, n: int, data: str):
    """A callable scoring the workload's input once (its segments taken evenly from
    ``data``; ``*_sorted``: by hypothesis words times reference words, long ones last)."""
    import pyarrow as pa

    import fastbleu
    from bench_scaling import by_length, read_text, spread

    hyps, refs, _ = read_text(data)
    h, r = spread(hyps, n), spread(refs, n)
    if name.endswith("_sorted"):
        h, r = by_length(h, r)
    if name.startswith("ter"):
        metric = fastbleu.TER()
        return lambda: metric.corpus_score(h, [r])  # lists, as issue 26's TER workload
    metric = fastbleu.CHRF() if name.startswith("chrf") else fastbleu.BLEU()
    h, r = pa.array(h, pa.large_string()), pa.array(r, pa.large_string())
    return lambda: metric.corpus_score(h, [r])


def child(args) -> None:
    from fastbleu._kernels import threads

    pool = threads._executor()
    original = pool.submit
    jobs: list = []
    lock = threading.Lock()

    def submit(fn, *a):
        def timed(*aa):
            start = time.thread_time()
            try:
                return fn(*aa)
            finally:
                with lock:
                    jobs.append((order, time.thread_time() - start))
                    window[0] -= 1
        with lock:
            order = len(submitted)
            submitted.append(order)
            window[0] += 1
            window[1] = max(window)
        return original(timed, *a)

    submitted: list = []
    window = [0, 0]  # jobs submitted and not finished: now, at most

    run = prepare(args.workloads[0], args.segments, args.data)
    run()  # kernels loaded
    pool.submit = submit
    jobs.clear()
    submitted.clear()
    wall = time.perf_counter()
    score = run()
    wall = time.perf_counter() - wall
    times = [t for _, t in sorted(jobs)]
    print("RESULT " + json.dumps({"times": times, "wall": wall, "score": str(score),
                                  "window": window[1]}))


def makespan(times: list[float], threads: int, in_flight: int) -> float:
    """The pipeline's schedule of jobs of these CPU times on ``threads`` cores, at most
    ``in_flight`` of them submitted and not yet taken back."""
    free = [0.0] * threads  # when each thread is next free
    done = []  # finish time of every job, in order
    submit_at = 0.0
    for k, cost in enumerate(times):
        if k >= in_flight:  # the oldest result first
            submit_at = max(submit_at, done[k - in_flight])
        start = max(submit_at, heapq.heappop(free))
        done.append(start + cost)
        heapq.heappush(free, start + cost)
    return max(done, default=0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True, help="a TSV of hypothesis<TAB>reference "
                        "(bench_scaling.py --export-data) or a wmt22 folder")
    parser.add_argument("--segments", type=int, default=None,
                        help="segments of every workload (default: 25,000 for TER, 200,000 "
                             "for chrF and BLEU)")
    parser.add_argument("--threads", default="2,4,8,16")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.workloads = [w for w in args.workloads.split(",") if w]
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {unknown[0]!r}; choose from {', '.join(WORKLOADS)}")
    if args.child:
        child(args)
        return
    rows = []
    print(f"{'workload':12} {'segments':>8} {'threads':>7} {'jobs':>7} {'largest':>8} "
          f"{'balanced':>9} {'job CPU s':>9}")
    for name in args.workloads:
        segments = args.segments or WORKLOADS[name]
        scores = set()
        for t in [int(x) for x in args.threads.split(",")]:
            env = dict(os.environ, NUMBA_NUM_THREADS=str(t), PYTHONPATH=os.pathsep.join(
                filter(None, [os.environ.get("PYTHONPATH"), ROOT])))
            done = subprocess.run([sys.executable, os.path.abspath(__file__), "--child",
                                   "--data", args.data, "--segments", str(segments),
                                   "--workloads", name], env=env, capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"{name} at {t} threads failed:\n{done.stderr}")
            line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
            result = json.loads(line[len("RESULT "):])
            times = result["times"]
            total = sum(times)
            # the window the pipeline used (seen: jobs submitted and not finished, at most)
            span = makespan(times, t, max(1, result["window"]))
            row = {"workload": name, "threads": t, "segments": segments,
                   "jobs": len(times), "job_cpu": total,
                   "largest_share": max(times) / total if total else 0.0,
                   "balanced_speedup": total / span if span else 0.0, "wall": result["wall"],
                   "window": result["window"], "job_times": times}
            rows.append(row)
            scores.add(result["score"])
            print(f"{name:12} {segments:8} {t:7} {len(times):7} {100 * row['largest_share']:7.1f}% "
                  f"{row['balanced_speedup']:8.2f}x {total:9.2f}", flush=True)
        if len(scores) != 1:
            sys.exit(f"{name}: the score differs between thread counts: {scores}")
    if args.json:
        with open(args.json, "w") as handle:
            json.dump({"data": os.path.basename(args.data), "python": sys.version.split()[0],
                       "cpus": os.cpu_count(), "rows": rows}, handle, indent=1)


if __name__ == "__main__":
    main()
