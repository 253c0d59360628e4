#!/usr/bin/env python3
"""Before and after: two checkouts of fastbleu alternated call by call on the same machine.

    python benchmarks/compare.py --base REV --head REV [--json OUT]

``REV`` is a git revision of this repository (exported with ``git archive``
into ``--workdir``, once per commit) or a folder that holds a ``fastbleu``
package (``--head .``: this working tree, uncommitted changes included).

What runs
---------
For each thread setting (``--threads``: ``1`` and ``0`` = numba's default, all
cores), one warm worker process per tree imports that tree's fastbleu
(``PYTHONPATH``, checked), builds every job's input and runs each job once
untimed (compiling or loading the kernels).  Then, ``--rounds`` times, each job
runs once in each worker, alternately (base, head; then head, base; ...),
so that both trees see the same load.  Every call records wall seconds,
process seconds (all threads) and the CPU seconds other processes of the
machine used meanwhile (``/proc/stat``): calls with a lot of the latter were
disturbed.  Both trees run their JIT kernels (``FASTBLEU_NO_AOT=1``; the
ahead-of-time module serves only small inputs) from a numba cache of their
own under ``--workdir``.

Jobs (public API only, so that any layout of the package runs them):

``corpus``     ``BLEU().corpus_score(hyps, [refs])``, ``--segments`` (1M) Python strings
``table``      ``score_table(PARQUET, hyp="hyp", refs=["ref"], group_by="system")``,
               ``--table-rows`` (1M) rows written once by this script
``chrf``       ``CHRF().corpus_score``, ``--chrf-segments`` (1M)
``ter``        ``TER().corpus_score``, ``--ter-segments`` (100k)
``bootstrap``  ``significance.paired_bootstrap(stats, n_samples=--resamples)`` on two
               systems' ``BLEU().segment_statistics`` (WMT22 de-en, tiled) of
               ``--bootstrap-segments`` (1M) rows, ``--resamples`` (1000)
also, with ``--jobs``: ``sentence`` (``BLEU().sentence_scores``, ``--segments``),
``chrf++`` (``CHRF(word_order=2)``, ``--chrf-segments``), ``nist`` (``NIST()``,
``--ter-segments``), ``intl`` (``BLEU(tokenize="intl")``, ``--segments``) and
``ar`` (``paired_ar``, 10 zh-en systems, 10,000 trials).

The corpus is ``common.corpus``: the 74,617 WMT22 en/de segments cycled, or a
synthetic one where ``../shared/wmt22`` is absent (then say so beside any figure).

Results
-------
Every job's result (scores, statistics, p-values; a digest) must be identical
in both trees and at every thread count; the script prints ``IDENTICAL`` or
the difference, and exits 1 on any difference.  Per job and thread setting it
prints the best and median wall and process seconds of each tree and
head ÷ base of the medians; ``--json`` writes every call.

Running it smaller (the machine is shared: keep to this unless told)::

    python benchmarks/compare.py --base HEAD~1 --head . --segments 20000 --table-rows 20000 \\
        --chrf-segments 20000 --ter-segments 2000 --bootstrap-segments 20000 \\
        --resamples 100 --rounds 2
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

DEFAULT_JOBS = ("corpus", "table", "chrf", "ter", "bootstrap")
EXTRA_JOBS = ("sentence", "chrf++", "nist", "intl", "ar")


# -- the worker: one tree, one thread setting -------------------------------------------------

class Worker:
    """Jobs of one warm process; ``prepare`` builds the inputs and runs each job untimed."""

    def __init__(self, args):
        import fastbleu

        self.args = args
        self.fastbleu = fastbleu
        self.calls: dict = {}
        self._corpus = None

    def corpus(self, n: int):
        if self._corpus is None or len(self._corpus[0]) < n:
            size = max(n, self.args.segments, self.args.chrf_segments, self.args.ter_segments)
            self._corpus = common.corpus(size)[:2]
        return self._corpus[0][:n], self._corpus[1][:n]

    def prepare(self, job: str) -> None:
        fb, a = self.fastbleu, self.args
        if job in ("corpus", "sentence", "intl"):
            hyps, refs = self.corpus(a.segments)
            metric = fb.BLEU(tokenize="intl") if job == "intl" else fb.BLEU()
            call = metric.sentence_scores if job == "sentence" else metric.corpus_score
            self.calls[job] = lambda: call(hyps, [refs])
        elif job in ("chrf", "chrf++"):
            hyps, refs = self.corpus(a.chrf_segments)
            metric = fb.CHRF(word_order=2 if job == "chrf++" else 0)
            self.calls[job] = lambda: metric.corpus_score(hyps, [refs])
        elif job in ("ter", "nist"):
            hyps, refs = self.corpus(a.ter_segments)
            metric = fb.TER() if job == "ter" else fb.NIST()
            self.calls[job] = lambda: metric.corpus_score(hyps, [refs])
        elif job == "table":
            self.calls[job] = lambda: fb.score_table(a.table, hyp="hyp", refs=["ref"],
                                                     group_by="system")
        elif job == "bootstrap":
            import numpy as np

            outputs, streams, _ = common.pair_data("de-en", 2)
            bleu = fb.BLEU()
            base = [bleu.segment_statistics(o, streams) for o in outputs.values()]
            repeats = -(-a.bootstrap_segments // base[0].shape[0])
            stats = [np.tile(s, (repeats, 1))[:a.bootstrap_segments] for s in base]
            significance = importlib.import_module("fastbleu.significance")
            self.calls[job] = lambda: significance.paired_bootstrap(stats, n_samples=a.resamples)
        elif job == "ar":
            outputs, streams, _ = common.pair_data("zh-en", 10)
            bleu = fb.BLEU()
            stats = [bleu.segment_statistics(o, streams) for o in outputs.values()]
            significance = importlib.import_module("fastbleu.significance")
            self.calls[job] = lambda: significance.paired_ar(stats, n_samples=10_000)
        self.calls[job]()  # warm: compile or load the kernels

    def run(self, job: str) -> dict:
        others = common.busy_cpu_seconds()
        wall, cpu, result = common.timed(self.calls[job])
        if others is not None:
            others = max(0.0, common.busy_cpu_seconds() - others - cpu)
        return {"wall": round(wall, 4), "cpu": round(cpu, 4),
                "others_cpu": None if others is None else round(others, 3),
                "result": fingerprint(job, result)}


def fingerprint(job: str, result) -> str:
    """Everything the job computed, as a digest: equal digests, equal results."""
    if job == "table":  # the signature names the version, which may differ
        return common.digest(result.drop_columns(["signature"]).to_pylist()
                             if "signature" in result.column_names else result.to_pylist())
    if job == "sentence":
        return common.digest(result)
    if job in ("bootstrap", "ar"):
        return common.digest([(r.score, r.p_value, r.mean, r.ci) for r in result])
    fields = ("score", "counts", "totals", "sys_len", "ref_len", "num_edits", "ref_length",
              "char_order", "word_order", "beta")
    return common.digest(str(result), [(f, repr(getattr(result, f, None))) for f in fields])


def worker_main(args) -> int:
    import numba

    worker = Worker(args)
    tree = Path(os.environ["FASTBLEU_COMPARE_TREE"]).resolve()
    where = Path(worker.fastbleu.__file__).resolve()
    if tree not in where.parents:
        print(json.dumps({"error": f"imported fastbleu from {where}, not from {tree}"}),
              flush=True)
        return 2
    print(json.dumps({"fastbleu_in_tree": True, "version": worker.fastbleu.__version__,
                      "numba_threads": numba.config.NUMBA_NUM_THREADS}), flush=True)
    common.quiet_logs()
    for line in sys.stdin:
        request = json.loads(line)
        start = time.perf_counter()
        if request["do"] == "prepare":
            worker.prepare(request["job"])
            reply = {"prepared": request["job"], "seconds": time.perf_counter() - start}
        else:
            reply = worker.run(request["job"])
        print(json.dumps(reply), flush=True)
    return 0


# -- the parent ------------------------------------------------------------------------

def tree_of(rev: str, workdir: Path) -> tuple[Path, str]:
    """A folder holding ``rev``'s fastbleu, and a label (its commit)."""
    path = Path(rev)
    if (path / "fastbleu" / "__init__.py").is_file():
        commit = common.git_commit(path) or "?"
        return path.resolve(), f"{common.where(path)} ({commit}, working tree)"
    done = subprocess.run(["git", "-C", str(common.REPO), "rev-parse", "--verify",
                           f"{rev}^{{commit}}"], capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: {rev!r} is neither a folder with a fastbleu package nor a "
                         "revision of this repository")
    sha = done.stdout.strip()
    target = workdir / "trees" / sha[:12]
    if not (target / "fastbleu" / "__init__.py").is_file():
        target.mkdir(parents=True, exist_ok=True)
        archive = subprocess.Popen(["git", "-C", str(common.REPO), "archive", sha],
                                   stdout=subprocess.PIPE)
        subprocess.run(["tar", "-x", "-C", str(target)], stdin=archive.stdout, check=True)
        if archive.wait() != 0:
            raise SystemExit(f"error: git archive {sha} failed")
    return target, f"{rev} ({sha[:12]})"


def start_worker(tree: Path, threads: int, args, workdir: Path) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_NUM_THREADS"}
    env.update(PYTHONPATH=str(tree), FASTBLEU_COMPARE_TREE=str(tree), FASTBLEU_NO_AOT="1",
               NUMBA_CACHE_DIR=str(workdir / "numba" / tree.name))
    if threads:
        env["NUMBA_NUM_THREADS"] = str(threads)
    argv = [sys.executable, str(Path(__file__).resolve()), "--worker", "--table", str(args.table)]
    for name in ("segments", "chrf_segments", "ter_segments", "bootstrap_segments", "resamples"):
        argv += [f"--{name.replace('_', '-')}", str(getattr(args, name))]
    process = subprocess.Popen(argv, env=env, cwd=workdir, stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, text=True)
    hello = json.loads(process.stdout.readline() or '{"error": "the worker died at start"}')
    if "error" in hello:
        raise SystemExit(f"error: worker for {tree}: {hello['error']}")
    process.hello = hello
    return process


def ask(process: subprocess.Popen, do: str, job: str) -> dict:
    process.stdin.write(json.dumps({"do": do, "job": job}) + "\n")
    process.stdin.flush()
    line = process.stdout.readline()
    if not line:
        raise SystemExit(f"error: a worker died during {do} {job} (see its traceback above)")
    return json.loads(line)


def build_table(path: Path, rows: int) -> None:
    """The Parquet table of ``bench_table.py``: hyp, ref, system (41 groups on WMT22)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if common.have_wmt22():
        files = common.wmt22_files()
        hyps, refs = common.load_corpus(files)
        systems = [f"{h.name.split('.')[1]}/{common.system_name(h)}"
                   for h, _ in files for _ in range(len(common.read_lines(h)))]
    else:
        outputs, ref = common.synthetic_corpus(20_000, systems=4)
        hyps = [line for o in outputs for line in o]
        refs = ref * len(outputs)
        systems = [f"synthetic-{i}" for i, o in enumerate(outputs) for _ in o]
    table = pa.table({"hyp": common.cycle_to(hyps, rows), "ref": common.cycle_to(refs, rows),
                      "system": common.cycle_to(systems, rows)})
    pq.write_table(table, path, row_group_size=1 << 17)


def summarize(calls: list[dict], labels: dict) -> dict:
    out: dict = {}
    for job in dict.fromkeys(c["job"] for c in calls):
        for threads in dict.fromkeys(c["threads"] for c in calls):
            mine = [c for c in calls if c["job"] == job and c["threads"] == threads]
            row = {}
            for side in ("base", "head"):
                wall = [c["wall"] for c in mine if c["side"] == side]
                cpu = [c["cpu"] for c in mine if c["side"] == side]
                row[side] = {"wall_best": min(wall), "wall_median": statistics.median(wall),
                             "cpu_best": min(cpu), "cpu_median": statistics.median(cpu)}
            row["head_vs_base_wall"] = row["head"]["wall_median"] / row["base"]["wall_median"]
            row["head_vs_base_cpu"] = row["head"]["cpu_median"] / row["base"]["cpu_median"]
            out[f"{job} @ {threads or 'default'} thread{'' if threads == 1 else 's'}"] = row
    return out


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--base", help="revision or folder: before")
    p.add_argument("--head", help="revision or folder: after")
    p.add_argument("--jobs", nargs="+", choices=DEFAULT_JOBS + EXTRA_JOBS,
                   default=list(DEFAULT_JOBS))
    p.add_argument("--segments", type=int, default=1_000_000, help="corpus BLEU segments")
    p.add_argument("--table-rows", type=int, default=1_000_000, help="Parquet rows")
    p.add_argument("--chrf-segments", type=int, default=1_000_000)
    p.add_argument("--ter-segments", type=int, default=100_000, help="TER (and NIST) segments")
    p.add_argument("--bootstrap-segments", type=int, default=1_000_000)
    p.add_argument("--resamples", type=int, default=1000, help="paired bootstrap resamples")
    p.add_argument("--threads", nargs="+", type=int, default=[1, 0],
                   help="NUMBA_NUM_THREADS of the workers (0: numba's default, all cores)")
    p.add_argument("--rounds", type=int, default=5, help="timed calls of each job per tree")
    p.add_argument("--workdir", type=Path, default=Path(os.environ.get("TMPDIR", "/tmp"))
                   / "fastbleu-compare", help="exported trees, numba caches, the table")
    p.add_argument("--json", type=Path, metavar="OUT", help="write every call here")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    p.add_argument("--table", type=Path, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if not args.worker and not (args.base and args.head):
        p.error("give --base REV and --head REV")
    for name in ("segments", "table_rows", "chrf_segments", "ter_segments",
                 "bootstrap_segments", "resamples", "rounds"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if any(t < 0 for t in args.threads):
        p.error("--threads must be 0 (numba's default) or more")
    if args.json is not None and args.json.is_dir():
        p.error(f"--json {args.json} is a folder")
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.worker:
        return worker_main(args)
    workdir = args.workdir.resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    trees = {side: tree_of(rev, workdir) for side, rev in (("base", args.base),
                                                          ("head", args.head))}
    args.table = workdir / f"table-{args.table_rows}{'' if common.have_wmt22() else '-synthetic'}.parquet"
    if "table" in args.jobs and not args.table.exists():
        build_table(args.table, args.table_rows)
    data = common.corpus(1)[2].split(",")[0]
    print(f"data: {data}")
    for side, (path, label) in trees.items():
        print(f"{side}: {label}")
    calls: list[dict] = []
    results: dict = {}
    workers_seen: dict = {}
    for threads in args.threads:
        workers = {side: start_worker(path, threads, args, workdir)
                   for side, (path, _) in trees.items()}
        try:
            for side, w in workers.items():
                workers_seen[f"{side} @ {threads or 'default'}"] = w.hello
            for job in args.jobs:
                for side, w in workers.items():
                    ask(w, "prepare", job)
            print(f"threads {threads or 'default'} "
                  f"({workers['base'].hello['numba_threads']}): workers ready", flush=True)
            for r in range(args.rounds):
                order = ("base", "head") if r % 2 == 0 else ("head", "base")
                for job in args.jobs:
                    for side in order:
                        call = ask(workers[side], "run", job)
                        call.update(job=job, side=side, threads=threads, round=r)
                        calls.append(call)
                        results.setdefault(job, set()).add(call["result"])
                print(f"  round {r + 1}/{args.rounds} done (load average "
                      f"{os.getloadavg()[0]:.2f})", flush=True)
        finally:
            for w in workers.values():
                w.stdin.close()
                w.wait(timeout=60)
    summary = summarize(calls, trees)
    print(f"\n{'job @ threads':<28} {'base wall best/median':>22} {'head wall best/median':>22}"
          f" {'head/base wall':>14} {'head/base CPU':>13}")
    for key, row in summary.items():
        b, h = row["base"], row["head"]
        print(f"{key:<28} {b['wall_best']:>10.3f} / {b['wall_median']:<9.3f} "
              f"{h['wall_best']:>10.3f} / {h['wall_median']:<9.3f} "
              f"{row['head_vs_base_wall']:>14.3f} {row['head_vs_base_cpu']:>13.3f}")
    identical = {job: len(digests) == 1 for job, digests in results.items()}
    for job, same in identical.items():
        print(f"{job}: {'IDENTICAL' if same else 'DIFFERENT: ' + ', '.join(sorted(results[job]))}"
              " results in both trees at every thread count")
    busy = [c["others_cpu"] for c in calls if c["others_cpu"] is not None]
    if busy:
        print(f"other processes' CPU during a call: median {statistics.median(busy):.2f} s, "
              f"max {max(busy):.2f} s")
    common.write_json(args.json, {
        "info": common.machine_info(data=data, workers=workers_seen,
                                    trees={s: label for s, (_, label) in trees.items()},
                                    options={k: str(v) for k, v in vars(args).items()
                                             if k not in ("workdir", "table", "json")}),
        "summary": summary, "identical": identical, "calls": calls})
    return 0 if all(identical.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
