#!/usr/bin/env python3
"""Paired bootstrap and approximate randomization: fastbleu against sacrebleu, same run.

What is measured
----------------
Data: WMT22 general-task outputs from ``../shared/wmt22`` (see its README),
13a, the first reference of the pair (sorted by name).  Every job runs in a
child process of its own, so that each peak RSS
(``getrusage(RUSAGE_SELF).ru_maxrss`` of that child) belongs to that job
alone; seconds are wall-clock time of the timed call only, not of loading
data or starting Python.

1. **Large paired bootstrap, fastbleu** (``large``): two systems' segment
   statistics (de-en, the first two systems by name, 1,984 segments each,
   computed once with ``BLEU.segment_statistics``) tiled to ``--segments``
   rows (default 1,000,000); ``significance.paired_bootstrap(stats,
   n_samples=--resamples)`` (default 1,000; exact int64 mode).  The kernels
   are compiled or loaded from numba's cache by a warm-up call on 100
   segments first, which is not timed.  The CPU time of the call (all
   threads, ``time.process_time``) is reported too: on a shared machine it
   says more than the wall-clock time.  Peak RSS includes the statistics
   arrays (2 x 80 MB per million segments) and Python/numba themselves.
2. **Paired bootstrap at sacrebleu's scale** (``mid``): two systems of
   ``--sacrebleu-segments`` segments (default 20,000: de-en tiled), from
   text: fastbleu ``significance.paired_bootstrap(hyps, refs)`` (statistics
   included, warm kernels) against sacrebleu's ``PairedTest(..., "bs")()``
   (its statistics included), 1,000 resamples, the same seed.  The two
   p-values and means are printed side by side (fastbleu exact; they agree
   to about 1e-6).
3. **A WMT-size test set** (``wmt``): the first 10 zh-en systems (1,875
   segments) from precomputed statistics: paired bootstrap with 1,000
   resamples and AR with 10,000 trials, warm (best of ``--repeat``); sacrebleu's
   ``PairedTest`` on the same systems from text for both tests (its
   statistics extraction, about 1 s of its time, included; fastbleu's
   statistics take about 0.2 s and are reported separately).

Running it
----------
From the repository root, on an otherwise idle machine::

    python benchmarks/bench_significance.py --json benchmarks/results/significance.json
    python benchmarks/bench_significance.py --segments 200000 --skip-sacrebleu   # quick

``NUMBA_NUM_THREADS`` sets fastbleu's threads (default: all cores).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

common.use_checkout()
REPO = common.REPO
WMT = common.WMT22


def _lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line.rstrip("\n").rstrip() for line in handle]


def _wmt(pair: str, count: int):
    target = pair.split("-")[1]
    refs = sorted((WMT / "references").glob(f"generaltest2022.{pair}.ref.*.{target}"))
    systems = sorted((WMT / "system-outputs").glob(f"generaltest2022.{pair}.hyp.*.{target}"))
    if not refs or len(systems) < count:
        sys.exit(f"WMT22 data for {pair} not found under {WMT}")
    return [_lines(refs[0])], [_lines(path) for path in systems[:count]], \
        [path.name.split(".hyp.")[1][:-len(target) - 1] for path in systems[:count]]


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# -- jobs, each run in a child process -----------------------------------------------------

def job_large(args) -> dict:
    import numpy as np

    from fastbleu import BLEU
    from fastbleu.significance import tests as significance

    refs, systems, names = _wmt("de-en", 2)
    bleu = BLEU()
    base = [bleu.segment_statistics(system, refs) for system in systems]
    significance.paired_bootstrap([s[:100] for s in base], n_samples=10)  # warm-up
    repeats = -(-args.segments // base[0].shape[0])
    stats = [np.tile(s, (repeats, 1))[:args.segments] for s in base]
    del base
    before = _peak_mib()
    start, cpu = time.perf_counter(), time.process_time()
    results = significance.paired_bootstrap(stats, n_samples=args.resamples)
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {"seconds": seconds, "cpu_seconds": cpu, "peak_rss_mib": _peak_mib(),
            "peak_rss_before_mib": before,
            "segments": args.segments, "systems": 2, "resamples": args.resamples,
            "p_value": results[1].p_value, "means": [r.mean for r in results]}


def _tiled_text(pair: str, count: int, segments: int):
    refs, systems, names = _wmt(pair, count)
    repeats = -(-segments // len(refs[0]))
    return ([(refs[0] * repeats)[:segments]],
            [(system * repeats)[:segments] for system in systems], names)


def job_mid_fastbleu(args) -> dict:
    from fastbleu.significance import tests as significance

    refs, systems, _ = _tiled_text("de-en", 2, args.sacrebleu_segments)
    significance.paired_bootstrap([s[:100] for s in systems], [refs[0][:100]], n_samples=10)
    start = time.perf_counter()
    results = significance.paired_bootstrap(systems, refs, n_samples=1000)
    return {"seconds": time.perf_counter() - start, "peak_rss_mib": _peak_mib(),
            "p_value": results[1].p_value, "means": [r.mean for r in results]}


def job_mid_sacrebleu(args) -> dict:
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    refs, systems, _ = _tiled_text("de-en", 2, args.sacrebleu_segments)
    start = time.perf_counter()
    test = PairedTest([("a", systems[0]), ("b", systems[1])], {"BLEU": BLEU(references=refs)},
                      None, test_type="bs", n_samples=1000)
    _, scores = test()
    results = scores["BLEU"]
    return {"seconds": time.perf_counter() - start, "peak_rss_mib": _peak_mib(),
            "p_value": results[1].p_value, "means": [float(r.mean) for r in results]}


def job_wmt_fastbleu(args) -> dict:
    from fastbleu import BLEU
    from fastbleu.significance import tests as significance

    refs, systems, names = _wmt("zh-en", 10)
    bleu = BLEU(references=refs)
    start = time.perf_counter()
    stats = [bleu.segment_statistics(system, None) for system in systems]
    statistics_seconds = time.perf_counter() - start
    significance.paired_bootstrap([s[:50] for s in stats[:2]], n_samples=10)  # warm-up
    significance.paired_ar([s[:50] for s in stats[:2]], n_samples=64)
    timings = {}
    for test, call in (("bs", lambda: significance.paired_bootstrap(stats, n_samples=1000)),
                       ("ar", lambda: significance.paired_ar(stats, n_samples=10000))):
        best = None
        for _ in range(args.repeat):
            start = time.perf_counter()
            results = call()
            seconds = time.perf_counter() - start
            best = seconds if best is None else min(best, seconds)
        timings[test] = {"seconds": best, "p_values": [r.p_value for r in results]}
    return {"statistics_seconds": statistics_seconds, "segments": len(refs[0]),
            "systems": names, **timings, "peak_rss_mib": _peak_mib()}


def job_wmt_sacrebleu(args) -> dict:
    from sacrebleu.metrics import BLEU
    from sacrebleu.significance import PairedTest

    refs, systems, names = _wmt("zh-en", 10)
    out = {}
    for test, n in (("bs", 1000), ("ar", 10000)):
        start = time.perf_counter()
        named = list(zip(names, systems))
        _, scores = PairedTest(named, {"BLEU": BLEU(references=refs)}, None, test_type=test,
                               n_samples=n)()
        out[test] = {"seconds": time.perf_counter() - start,
                     "p_values": [r.p_value for r in scores["BLEU"]]}
    out["peak_rss_mib"] = _peak_mib()
    return out


JOBS = {"large": job_large, "mid-fastbleu": job_mid_fastbleu, "mid-sacrebleu": job_mid_sacrebleu,
        "wmt-fastbleu": job_wmt_fastbleu, "wmt-sacrebleu": job_wmt_sacrebleu}


def _child(job: str, argv: list[str]) -> dict:
    done = subprocess.run([sys.executable, __file__, "--job", job, *argv], capture_output=True,
                          text=True, cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)})
    if done.returncode:
        sys.exit(f"job {job} failed:\n{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--segments", type=int, default=1_000_000)
    parser.add_argument("--resamples", type=int, default=1000)
    parser.add_argument("--sacrebleu-segments", type=int, default=20_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-sacrebleu", action="store_true")
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--job", choices=sorted(JOBS), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        print(json.dumps(JOBS[args.job](args)))
        return
    argv = ["--segments", str(args.segments), "--resamples", str(args.resamples),
            "--sacrebleu-segments", str(args.sacrebleu_segments), "--repeat", str(args.repeat)]
    import numba

    report = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                          "numba_threads": numba.config.NUMBA_NUM_THREADS,
                          "load_average_at_start": os.getloadavg()},
              "date": time.strftime("%Y-%m-%d %H:%M")}
    order = ["large", "wmt-fastbleu", "mid-fastbleu"]
    if not args.skip_sacrebleu:
        order += ["wmt-sacrebleu", "mid-sacrebleu"]
    for job in order:
        report[job] = _child(job, argv)
        print(f"{job}: {json.dumps(report[job])}", flush=True)
    report["load_average_at_end"] = os.getloadavg()

    large = report["large"]
    print(f"\npaired bootstrap, 2 systems x {large['segments']:,} segments x "
          f"{large['resamples']} resamples: {large['seconds']:.2f} s ({large['cpu_seconds']:.2f} s "
          f"CPU), peak RSS "
          f"{large['peak_rss_mib']:.0f} MiB")
    wmt = report["wmt-fastbleu"]
    print(f"WMT-size ({wmt['segments']} segments, 10 systems): bootstrap "
          f"{wmt['bs']['seconds']:.3f} s, AR 10,000 trials {wmt['ar']['seconds']:.3f} s "
          f"(statistics {wmt['statistics_seconds']:.3f} s)")
    if not args.skip_sacrebleu:
        theirs = report["wmt-sacrebleu"]
        for test in ("bs", "ar"):
            print(f"  sacrebleu {test}: {theirs[test]['seconds']:.2f} s -> fastbleu "
                  f"{theirs[test]['seconds'] / wmt[test]['seconds']:.0f}x faster "
                  "(sacrebleu includes its statistics)")
        mine, other = report["mid-fastbleu"], report["mid-sacrebleu"]
        print(f"paired bootstrap from text, 2 x {args.sacrebleu_segments:,} segments: fastbleu "
              f"{mine['seconds']:.2f} s / {mine['peak_rss_mib']:.0f} MiB, sacrebleu "
              f"{other['seconds']:.2f} s / {other['peak_rss_mib']:.0f} MiB "
              f"({other['seconds'] / mine['seconds']:.0f}x)")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
