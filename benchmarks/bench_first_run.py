#!/usr/bin/env python3
"""First runs (a fresh kernel cache) against warm runs, per metric, beside sacrebleu.

What is measured
----------------
For each case below, as seen from a parent process:

* fastbleu **cold**: one run of ``python -m fastbleu ...`` with
  ``XDG_CACHE_HOME`` set to a new empty folder (and ``NUMBA_CACHE_DIR``
  unset), as on a user's first run after installing.  What ``pip install``
  built is used as it would be: the ahead-of-time module
  (``fastbleu._native.compiled``, where a C compiler is found) and the kernel
  cache's seed (``fastbleu/_native/kernel_cache``, copied into the fresh cache);
  ``--no-aot`` sets ``FASTBLEU_NO_AOT=1`` to measure an install without either,
  where every kernel the run needs is compiled by numba's JIT.
* fastbleu **warm**: the median of ``--runs`` runs with that cache filled.
* **sacrebleu**: the median of ``--runs`` runs of ``python -m sacrebleu`` on
  the same text (NIST: none, sacrebleu has no NIST).

Every time is given as wall seconds and as CPU seconds (user + system of the
child): on a shared machine the wall time is noisy, the CPU time much less so.
The target of issue 28 is a first run within 2x its warm time.  The script
checks that fastbleu's cold, warm and sacrebleu's outputs give the same score
(``-b``: the score only).

Cases (on the bundled sample, ``data/``: 1,000 lines, references A and B):

``bleu``         BLEU on the sample (the ahead-of-time kernels' size)
``bleu-10k``     BLEU on 10,010 lines (the sample 10 times and 10 lines; above
                 the ahead-of-time limit of 8,192 segments: the JIT's threads)
``bleu-intl``, ``bleu-zh``, ``bleu-char``   BLEU with those tokenizers
``chrf``, ``chrf++``  ``-m chrf`` and ``--chrf-word-order 2``
``ter``          ``-m ter``
``nist``         ``-m nist`` (no sacrebleu)
``chrf-10k``, ``ter-10k``, ``nist-10k``  those on the 10,010 lines (several batches;
                 no sacrebleu for TER, which takes minutes a run there)
``table``        BLEU of a Parquet table of the sample (``hyp``, ``ref``, ``ref2``)

Running it
----------
From the repository root::

    python benchmarks/bench_first_run.py [--runs 3] [--cases chrf ter] [--no-aot] [--json OUT]

With ``--no-aot`` each cold run compiles for 5-30 CPU seconds; the whole table
takes a few minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data"
CASES = ("bleu", "bleu-10k", "bleu-intl", "bleu-zh", "bleu-char", "chrf", "chrf++",
         "chrf-10k", "ter", "ter-10k", "nist", "nist-10k", "table")
#: sacrebleu's options for each case's metric (beyond the files).
_SACRE_OPTIONS = {"bleu-intl": ["-tok", "intl"], "bleu-zh": ["-tok", "zh"],
                  "bleu-char": ["-tok", "char"], "chrf": ["-m", "chrf"],
                  "chrf++": ["-m", "chrf", "--chrf-word-order", "2"],
                  "chrf-10k": ["-m", "chrf"], "ter": ["-m", "ter"], "ter-10k": ["-m", "ter"]}


def _prepare(folder: Path) -> dict:
    """The inputs: the sample's paths, a 10,010-line copy of it and a Parquet table."""
    refs = [DATA / "sample.ref-A.en", DATA / "sample.ref-B.en"]
    hyp = DATA / "sample.sys-A.en"
    lines = {p: p.read_text(encoding="utf-8").splitlines() for p in [*refs, hyp]}
    big = {}
    for p, text in lines.items():
        big[p] = folder / ("big." + p.name)
        big[p].write_text("\n".join(text * 10 + text[:10]) + "\n", encoding="utf-8")
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = folder / "sample.parquet"
    pq.write_table(pa.table({"hyp": lines[hyp], "ref": lines[refs[0]],
                             "ref2": lines[refs[1]]}), table)
    text = [*map(str, refs), "-i", str(hyp)]
    text_10k = [str(big[refs[0]]), str(big[refs[1]]), "-i", str(big[hyp])]
    cases = {"bleu": (text, text), "bleu-10k": (text_10k, text_10k),
             "nist": ([*text, "-m", "nist"], None), "nist-10k": ([*text_10k, "-m", "nist"], None),
             "table": ([str(table), "--ref-column", "ref", "--ref-column", "ref2"], text)}
    for case, options in _SACRE_OPTIONS.items():
        files = text_10k if case.endswith("-10k") else text
        cases[case] = ([*files, *options], [*files, *options])
    cases["ter-10k"] = (cases["ter-10k"][0], None)  # sacrebleu: minutes a run
    return cases


def _run(argv: list[str], env: dict) -> tuple[float, float, str]:
    """Wall seconds, CPU seconds (user + system) and standard output of one run."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=1800)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed ({done.returncode}): {done.stderr[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, done.stdout.strip()


def _median(runs: list[tuple[float, float, str]]) -> dict:
    return {"wall_s": round(statistics.median(r[0] for r in runs), 3),
            "cpu_s": round(statistics.median(r[1] for r in runs), 3)}


def measure(cases, runs: int, no_aot: bool) -> list[dict]:
    base = {k: v for k, v in os.environ.items()
            if k not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "FASTBLEU_NO_AOT")}
    base["PYTHONPATH"] = str(ROOT) + os.pathsep + base.get("PYTHONPATH", "")
    if no_aot:
        base["FASTBLEU_NO_AOT"] = "1"
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        inputs = _prepare(Path(folder))
        for case in cases:
            ours, theirs = inputs[case]
            env = {**base, "XDG_CACHE_HOME": tempfile.mkdtemp(dir=folder)}
            fast = [sys.executable, "-m", "fastbleu", *ours, "-b", "-q"]
            cold = _run(fast, env)
            warm = [_run(fast, env) for _ in range(runs)]
            shown = [a.replace(str(ROOT) + os.sep, "").replace(folder + os.sep, "")
                     for a in ours]  # no machine paths in the results
            row = {"case": case, "command": " ".join(["fastbleu", *shown, "-b"]),
                   "cold": _median([cold]), "warm": _median(warm)}
            row["cold_over_warm"] = round(cold[0] / row["warm"]["wall_s"], 2)
            row["cold_over_warm_cpu"] = round(cold[1] / row["warm"]["cpu_s"], 2)
            if theirs is not None:
                sacre = [_run([sys.executable, "-m", "sacrebleu", *theirs, "-b"], base)
                         for _ in range(runs)]
                row["sacrebleu"] = _median(sacre)
                row["same_score"] = cold[2] == warm[0][2] == sacre[0][2]
            else:
                row["sacrebleu"] = None
                row["same_score"] = cold[2] == warm[0][2]
            rows.append(row)
            print(_line(row), flush=True)
    return rows


def _line(row: dict) -> str:
    def fmt(t):
        return "—" if t is None else f"{t['wall_s']:.2f} s ({t['cpu_s']:.2f} CPU)"

    return (f"| {row['case']} | {fmt(row['cold'])} | {fmt(row['warm'])} | "
            f"{row['cold_over_warm']:.1f}x ({row['cold_over_warm_cpu']:.1f}x CPU) | "
            f"{fmt(row['sacrebleu'])} | {'yes' if row['same_score'] else 'NO'} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cases", nargs="+", choices=CASES, default=list(CASES))
    parser.add_argument("--runs", type=int, default=3, help="warm and sacrebleu runs (median)")
    parser.add_argument("--no-aot", action="store_true",
                        help="FASTBLEU_NO_AOT=1: as a machine without the compiled module")
    parser.add_argument("--json", metavar="OUT", help="also write the rows as JSON here")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    sys.path.insert(0, str(ROOT))  # this checkout's fastbleu, as the runs below import it
    from fastbleu import _native

    status = _native.report()["status"]
    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
          f"python {platform.python_version()}; ahead-of-time module: {status}"
          f"{' (disabled: --no-aot)' if args.no_aot else ''}")
    print("| case | fastbleu cold | fastbleu warm | cold/warm | sacrebleu | same score |")
    print("|---|---|---|---|---|---|")
    rows = measure(args.cases, args.runs, args.no_aot)
    if args.json:
        Path(args.json).write_text(json.dumps({"no_aot": args.no_aot, "runs": args.runs,
                                               "aot_status": status,
                                               "cores": os.cpu_count(), "rows": rows},
                                              indent=1) + "\n")
    return 0 if all(r["same_score"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
