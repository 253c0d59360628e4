"""How fastbleu scales with threads, and how much of it stays serial (issue 26).

For each workload (corpus BLEU from Python lists and from Arrow arrays,
corpus chrF, corpus TER -- also on the segments sorted by length, so that the
long ones sit together --, ``score_table`` on a Parquet file grouped by
system, pyarrow's own read of that file's two text columns, and the paired
bootstrap), at each thread count in its own process (``NUMBA_NUM_THREADS``
and pyarrow's CPU count set to it), this reports:

- ``wall``: the best wall time of ``--repeat`` runs, and the speed-up against one thread;
- ``serial``: the wall time during which no thread of fastbleu's pool runs a
  job (every job submitted to the pool is timed; the union of those
  intervals is the time the pool works) -- the serial part of Amdahl's law;
- ``caller_cpu``: the calling thread's CPU time (``time.thread_time``);
- ``peak_rss``: the process's peak resident memory during the run (Linux's
  ``VmHWM``, reset before every workload; where it cannot be reset, the
  peak of the process so far).

Results are checked to be bit-identical across thread counts (each
process prints a digest of its scores; a difference fails the run).

Text: WMT22 en-de system outputs and reference A, cycled (``--data``: the
``wmt22`` folder, or a TSV file of ``hypothesis<TAB>reference`` lines made
with ``--export-data``; ``--pairs zh-en,en-de`` reads those language pairs
from the folder); without data, synthetic sentences.

Examples::

    python benchmarks/bench_scaling.py --warm --sizes 0.02 --threads 1,2
    python benchmarks/bench_scaling.py --export-data /tmp/wmt22-ende.tsv
    python benchmarks/bench_scaling.py --pairs zh-en,en-de --export-data /tmp/wmt22-mixed.tsv
    python benchmarks/bench_scaling.py --warm --sizes 0.25 --threads 1,2 \
        --workloads ter_list,ter_sorted --data /tmp/wmt22-mixed.tsv
    python benchmarks/bench_scaling.py --warm --sizes 0.25 --data /tmp/wmt22-ende.tsv \\
        --json benchmarks/results/scaling-16core.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
DEFAULT_DATA = os.path.join(ROOT, "..", "shared", "wmt22")

#: workload -> segments (rows) at ``--sizes 1``: the sizes of issue 26's table.
WORKLOADS = {
    "bleu_list": 2_000_000,
    "bleu_arrow": 4_000_000,
    "bleu_arrow_sorted": 4_000_000,
    "chrf_arrow_sorted": 2_000_000,
    "chrf_list": 1_000_000,
    "ter_list": 100_000,
    "ter_sorted": 100_000,
    "table_parquet": 10_000_000,
    "arrow_read": 10_000_000,
    "paired_bootstrap": 1_000_000,
}
#: Workloads run only when named (the before/after of the cuts at one and two threads),
#: not by default (``big_machine.sh``'s 16-core run has its minutes counted).
ON_REQUEST = ("bleu_arrow_sorted", "chrf_arrow_sorted")
BOOTSTRAP_SAMPLES = 1000
TABLE_GROUPS = 41


# -- text ------------------------------------------------------------------------------

def load_pairs(data: str | None, pairs: list[str] = ("en-de",)
               ) -> tuple[list[str], list[str], str]:
    """``(hypotheses, references, where)``: aligned segments to cycle (from a wmt22
    folder: every system of each language pair in ``pairs``, against its reference A)."""
    path = data if data is not None else DEFAULT_DATA
    if os.path.isfile(path):
        hyps, refs = [], []
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                hyp, _, ref = line.rstrip("\n").partition("\t")
                hyps.append(hyp)
                refs.append(ref)
        return hyps, refs, os.path.basename(path)
    outputs = os.path.join(path, "system-outputs")
    hyps, refs = [], []
    for pair in pairs:
        target = pair.split("-")[-1]
        reference = os.path.join(path, "references", f"generaltest2022.{pair}.ref.A.{target}")
        if not (os.path.isdir(outputs) and os.path.isfile(reference)):
            continue
        with open(reference, encoding="utf-8") as handle:
            ref = handle.read().split("\n")[:-1]
        for name in sorted(os.listdir(outputs)):
            if f".{pair}.hyp." in name:
                with open(os.path.join(outputs, name), encoding="utf-8") as handle:
                    lines = handle.read().split("\n")[:-1]
                if len(lines) == len(ref):
                    hyps += lines
                    refs += ref
    if hyps:
        return hyps, refs, "wmt22 " + " + ".join(pairs)
    if data is not None:
        sys.exit(f"--data {data}: neither a wmt22 folder nor a TSV file of hypothesis/reference")
    return synthetic_pairs(20_000), None, "synthetic"


def synthetic_pairs(n: int):
    rng = random.Random(26)
    words = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyzäöüß") for _ in range(rng.randint(1, 11)))
             for _ in range(5000)]
    hyps, refs = [], []
    for _ in range(n):
        ref = [rng.choice(words) for _ in range(rng.randint(3, 45))]
        hyp = [w if rng.random() < 0.7 else rng.choice(words) for w in ref]
        if rng.random() < 0.3:
            hyp = hyp[:-2] + [",", "."]
        hyps.append(" ".join(hyp).capitalize() + ".")
        refs.append(" ".join(ref).capitalize() + ".")
    return hyps, refs


def cycled(items: list, n: int) -> list:
    return (items * (n // len(items) + 1))[:n]


def spread(items: list, n: int) -> list:
    """``n`` items taken evenly from all of them (every language pair of a mixed file),
    cycled when there are fewer."""
    if n >= len(items):
        return cycled(items, n)
    return [items[i * len(items) // n] for i in range(n)]


def by_length(hyps: list, refs: list) -> tuple[list, list]:
    """The pairs sorted by hypothesis words times reference words (ties in input order)."""
    order = sorted(range(len(hyps)), key=lambda i: len(hyps[i].split()) * len(refs[i].split()))
    return [hyps[i] for i in order], [refs[i] for i in order]


# -- measuring -------------------------------------------------------------------------

class PoolClock:
    """Times every job submitted to fastbleu's thread pool: the union of the intervals
    in which at least one job runs."""

    def __init__(self):
        from fastbleu._kernels import threads

        pool = threads._executor()
        self.lock = threading.Lock()
        self.running = 0
        self.busy = 0.0
        self.since = 0.0
        self.job_time = 0.0
        original = pool.submit

        def submit(fn, *args, **kwargs):
            def timed(*a, **k):
                start = self.enter()
                try:
                    return fn(*a, **k)
                finally:
                    self.leave(start)
            return original(timed, *args, **kwargs)

        pool.submit = submit

    def enter(self) -> float:
        now = time.perf_counter()
        with self.lock:
            if self.running == 0:
                self.since = now
            self.running += 1
        return now

    def leave(self, start: float) -> None:
        now = time.perf_counter()
        with self.lock:
            self.running -= 1
            self.job_time += now - start
            if self.running == 0:
                self.busy += now - self.since

    def reset(self) -> None:
        with self.lock:
            self.busy = self.job_time = 0.0


def reset_peak_rss() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as handle:
            handle.write("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float:
    try:
        with open("/proc/self/status") as handle:
            for line in handle:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def digest(value) -> str:
    """A text form of a result in which every float is exact (``float.hex``)."""
    import numpy as np

    def plain(v):
        if isinstance(v, float):
            return v.hex()
        if isinstance(v, (np.floating,)):
            return float(v).hex()
        if isinstance(v, np.ndarray):
            return hashlib.sha1(np.ascontiguousarray(v).tobytes()).hexdigest()
        if isinstance(v, (list, tuple)):
            return [plain(x) for x in v]
        if isinstance(v, dict):
            return {k: plain(x) for k, x in v.items()}
        if hasattr(v, "__dict__"):
            return plain({k: x for k, x in vars(v).items() if not k.startswith("_")})
        return str(v)

    return hashlib.sha1(json.dumps(plain(value), sort_keys=True, default=str).encode())\
        .hexdigest()[:16]


# -- the workloads (in a child process) ------------------------------------------------

def prepare(name: str, n: int, hyps: list, refs: list, workdir: str):
    """``(run, segments)``: a callable that runs the workload once and returns its result."""
    import fastbleu

    if name == "bleu_list":
        h, r = cycled(hyps, n), cycled(refs, n)
        bleu = fastbleu.BLEU()
        return lambda: vars(bleu.corpus_score(h, [r])), n
    if name == "bleu_arrow":
        import pyarrow as pa

        h = pa.array(cycled(hyps, n), pa.large_string())
        r = pa.array(cycled(refs, n), pa.large_string())
        bleu = fastbleu.BLEU()
        return lambda: vars(bleu.corpus_score(h, [r])), n
    if name in ("bleu_arrow_sorted", "chrf_arrow_sorted"):  # long segments last (cuts.py)
        import pyarrow as pa

        h, r = by_length(spread(hyps, n), spread(refs, n))
        h, r = pa.array(h, pa.large_string()), pa.array(r, pa.large_string())
        metric = fastbleu.BLEU() if name.startswith("bleu") else fastbleu.CHRF()
        return lambda: vars(metric.corpus_score(h, [r])), n
    if name == "chrf_list":
        h, r = cycled(hyps, n), cycled(refs, n)
        chrf = fastbleu.CHRF()
        return lambda: vars(chrf.corpus_score(h, [r])), n
    if name == "ter_list":
        h, r = cycled(hyps, n), cycled(refs, n)
        ter = fastbleu.TER()
        return lambda: vars(ter.corpus_score(h, [r])), n
    if name == "ter_sorted":  # the long segments together, at the end
        h, r = by_length(spread(hyps, n), spread(refs, n))
        ter = fastbleu.TER()
        return lambda: vars(ter.corpus_score(h, [r])), n
    if name == "table_parquet":
        path = table_path(workdir, n)

        def run():
            result = fastbleu.score_table(path, "hyp", "ref", group_by="system")
            return result.to_pydict()
        return run, n
    if name == "arrow_read":
        import pyarrow.parquet as pq

        path = table_path(workdir, n)

        def run():
            table = pq.read_table(path, columns=["hyp", "ref"], use_threads=True)
            return table.num_rows
        return run, n
    if name == "paired_bootstrap":
        from fastbleu.significance import paired_bootstrap

        a = cycled(hyps, n)
        b = cycled(hyps[len(hyps) // 2:] + hyps[:len(hyps) // 2], n)
        r = cycled(refs, n)

        def run():
            results = paired_bootstrap([a, b], [r], n_samples=BOOTSTRAP_SAMPLES, seed=12345)
            return [(x.score, x.p_value, x.mean, x.ci) for x in results]
        return run, n
    raise ValueError(name)


def warm_sizes(sizes: float) -> float:
    """The scale of a warm-up run: more than one batch of BLEU (the pooled path), small."""
    return min(sizes, 40_000 / WORKLOADS["bleu_list"])


def table_path(workdir: str, n: int) -> str:
    return os.path.join(workdir, f"table-{n}.parquet")


def write_table(workdir: str, n: int, hyps: list, refs: list) -> None:
    """A Parquet file of ``n`` rows (hyp, ref, system), the segments cycled, ``TABLE_GROUPS``
    systems each owning consecutive blocks of rows, written in row groups of 1M rows."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = table_path(workdir, n)
    if os.path.exists(path):
        return
    names = [f"system-{k:02d}" for k in range(TABLE_GROUPS)]
    step = len(hyps)
    block = 1 << 20
    schema = pa.schema([("hyp", pa.string()), ("ref", pa.string()),
                        ("system", pa.dictionary(pa.int32(), pa.string()))])
    with pq.ParquetWriter(path + ".tmp", schema) as writer:
        for first in range(0, n, block):
            last = min(n, first + block)
            rows = range(first, last)
            codes = pa.array([(i // step) % TABLE_GROUPS for i in rows], pa.int32())
            writer.write_table(pa.table({
                "hyp": pa.array([hyps[i % step] for i in rows], pa.string()),
                "ref": pa.array([refs[i % step] for i in rows], pa.string()),
                "system": pa.DictionaryArray.from_arrays(codes, pa.array(names))},
                schema=schema), row_group_size=block)
    os.replace(path + ".tmp", path)


def child(args) -> None:
    import pyarrow as pa

    threads = int(os.environ["NUMBA_NUM_THREADS"])
    pa.set_cpu_count(threads)
    hyps, refs, _ = read_text(args.data, args.pairs)
    clock = PoolClock()
    out = {}
    for name in args.workloads:
        # Once small first: loading the kernels (from numba's cache) is not scaling.
        small = max(1, int(WORKLOADS[name] * warm_sizes(args.sizes)))
        prepare(name, small, hyps, refs, args.workdir)[0]()
    for name in args.workloads:
        n = max(1, int(WORKLOADS[name] * args.sizes))
        run, segments = prepare(name, n, hyps, refs, args.workdir)
        times = []
        for _ in range(args.repeat):
            reset_peak_rss()
            clock.reset()
            cpu0, wall0 = time.thread_time(), time.perf_counter()
            result = run()
            wall = time.perf_counter() - wall0
            cpu = time.thread_time() - cpu0
            times.append({"wall": wall, "caller_cpu": cpu, "pool_busy": clock.busy,
                          "pool_job_time": clock.job_time, "peak_rss_mb": peak_rss_mb()})
        best = min(times, key=lambda t: t["wall"])
        best["serial"] = max(0.0, best["wall"] - best["pool_busy"]) \
            if name != "arrow_read" else None
        best["segments"] = segments
        best["digest"] = digest(result)
        out[name] = best
        del run, result
    print("RESULT " + json.dumps(out))


def read_text(data, pairs=("en-de",)):
    hyps, refs, where = load_pairs(data, pairs)
    if refs is None:
        hyps, refs = hyps
    return hyps, refs, where


# -- the parent ------------------------------------------------------------------------

def run_child(threads: int, args, workloads: list[str], sizes: float, repeat: int) -> dict:
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads),
               PYTHONPATH=os.pathsep.join(filter(None, [os.environ.get("PYTHONPATH"), ROOT])))
    command = [sys.executable, os.path.abspath(__file__), "--child", "--sizes", str(sizes),
               "--repeat", str(repeat), "--workdir", args.workdir,
               "--workloads", ",".join(workloads)]
    if args.data is not None:
        command += ["--data", args.data]
    command += ["--pairs", ",".join(args.pairs)]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    if done.returncode:
        sys.exit(f"{threads} threads failed:\n{done.stdout}\n{done.stderr}")
    line = [x for x in done.stdout.splitlines() if x.startswith("RESULT ")][-1]
    return json.loads(line[len("RESULT "):])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=float, default=0.25,
                        help="scale factor on issue 26's sizes (1 = 2M BLEU segments ...)")
    parser.add_argument("--threads", default=None,
                        help="thread counts, e.g. 1,2,4,8,16 (default: powers of 2 up to "
                             "the CPUs)")
    parser.add_argument("--workloads",
                        default=",".join(w for w in WORKLOADS if w not in ON_REQUEST),
                        help="comma-separated, of: " + ", ".join(WORKLOADS))
    parser.add_argument("--repeat", type=int, default=1, help="runs per measure (best kept)")
    parser.add_argument("--data", default=None,
                        help="a wmt22 folder or a TSV of hypothesis<TAB>reference lines "
                             "(default ../shared/wmt22 if present, else synthetic text)")
    parser.add_argument("--pairs", default="en-de",
                        help="language pairs to read from a wmt22 folder, e.g. zh-en,en-de")
    parser.add_argument("--json", default=None, help="write the results here")
    parser.add_argument("--warm", action="store_true",
                        help="run every workload once, small, first (compiles the kernels)")
    parser.add_argument("--export-data", default=None, metavar="TSV",
                        help="write the text used as a TSV file for --data, and stop")
    parser.add_argument("--workdir", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.workloads = [w for w in args.workloads.split(",") if w]
    args.pairs = [p for p in args.pairs.split(",") if p]
    unknown = [w for w in args.workloads if w not in WORKLOADS]
    if unknown:
        parser.error(f"unknown workload {unknown[0]!r}; choose from {', '.join(WORKLOADS)}")
    if args.child:
        child(args)
        return
    if args.sizes <= 0:
        parser.error("--sizes must be positive")
    hyps, refs, where = read_text(args.data, args.pairs)
    if args.export_data:
        with open(args.export_data, "w", encoding="utf-8") as handle:
            for h, r in zip(hyps, refs):
                handle.write(h.replace("\t", " ") + "\t" + r.replace("\t", " ") + "\n")
        print(f"wrote {len(hyps):,} segment pairs ({where}) to {args.export_data}")
        return
    cpus = os.cpu_count() or 1
    if args.threads:
        thread_counts = [int(t) for t in args.threads.split(",")]
    else:
        thread_counts = [t for t in (1, 2, 4, 8, 16, 32, 64) if t <= cpus]
    with tempfile.TemporaryDirectory(prefix="bench-scaling-") as workdir:
        args.workdir = workdir
        start = time.perf_counter()
        for name in ("table_parquet", "arrow_read"):
            if name in args.workloads:
                write_table(workdir, max(1, int(WORKLOADS[name] * args.sizes)), hyps, refs)
        for name in ("table_parquet", "arrow_read"):
            if name in args.workloads:
                small = max(1, int(WORKLOADS[name] * warm_sizes(args.sizes)))
                write_table(workdir, small, hyps, refs)
        if args.warm:  # compiles every kernel into numba's cache, pooled paths included
            run_child(2, args, args.workloads, warm_sizes(args.sizes), 1)
        prepared = time.perf_counter() - start
        print(f"text: {where}, {len(hyps):,} pairs cycled; sizes x{args.sizes}; "
              f"{cpus} CPUs; data + warm-up {prepared:.1f} s", flush=True)
        results = {}
        for t in thread_counts:
            results[t] = run_child(t, args, args.workloads, args.sizes, args.repeat)
            print(f"  {t} threads done ({time.perf_counter() - start:.0f} s)", flush=True)
    report(results, args, where, cpus, thread_counts)


def report(results: dict, args, where: str, cpus: int, thread_counts: list[int]) -> None:
    one = thread_counts[0]
    rows = []
    mismatch = []
    print(f"\n{'workload':18} {'threads':>7} {'segments':>10} {'wall s':>8} {'seg/s':>10} "
          f"{'speed-up':>8} {'serial s':>8} {'serial %':>8} {'caller cpu':>10} {'peak MB':>8}")
    for name in args.workloads:
        base = results[one][name]
        for t in thread_counts:
            r = results[t][name]
            speed = base["wall"] / r["wall"] if r["wall"] else float("nan")
            serial = r["serial"]
            share = 100 * serial / base["wall"] if serial is not None else None
            print(f"{name:18} {t:7} {r['segments']:10,} {r['wall']:8.3f} "
                  f"{r['segments'] / r['wall']:10,.0f} {speed:7.2f}x "
                  f"{'' if serial is None else f'{serial:8.3f}':>8} "
                  f"{'' if share is None else f'{share:7.2f}%':>8} "
                  f"{r['caller_cpu']:10.3f} {r['peak_rss_mb']:8.0f}")
            rows.append(dict(r, workload=name, threads=t, speedup=speed,
                             serial_share_of_one_thread=share))
            if r["digest"] != base["digest"]:
                mismatch.append((name, t))
    if args.json:
        os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
        with open(args.json, "w") as handle:
            json.dump({"text": where, "pairs": args.pairs, "sizes": args.sizes, "cpus": cpus,
                       "python": sys.version.split()[0], "repeat": args.repeat,
                       "bootstrap_samples": BOOTSTRAP_SAMPLES, "table_groups": TABLE_GROUPS,
                       "rows": rows}, handle, indent=1)
    if mismatch:
        sys.exit("results differ between thread counts: " +
                 ", ".join(f"{name} at {t} threads" for name, t in mismatch))
    print("results identical at every thread count")


if __name__ == "__main__":
    main()
