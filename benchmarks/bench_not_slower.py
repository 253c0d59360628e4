#!/usr/bin/env python3
"""One-thread process time of the metrics other than 13a corpus BLEU, for before/after checks.

Issue 17 sped up corpus BLEU by changing shared kernels (counting, hashing, the
tokenizer scanners, the pool); this script checks that nothing else got slower.
It imports whichever ``fastbleu`` comes first on ``sys.path`` -- it inserts no
path of its own -- so the same script measures two trees::

    cd /tmp/slower
    PYTHONPATH=/path/to/tree NUMBA_CACHE_DIR=/tmp/numba-tree FASTBLEU_NO_AOT=1 \\
        python /path/to/bench_not_slower.py --json tree.json

Every job runs in this one process with ``NUMBA_NUM_THREADS=1`` (set before
numba is imported), warms its kernels up on a small slice, then is timed
``--repeat`` times with ``time.process_time()``; the best and all the times
are printed as JSON, with each job's result (``repr`` of the floats: equal
strings are equal to the last bit) so that two trees' results can be compared.

Jobs (WMT22, the pair's first reference only, lines without their newline):

``chrf``, ``chrf++``
    ``CHRF().corpus_score`` / ``CHRF(word_order=2)`` on the en/de corpus;
``ter``
    ``TER().corpus_score`` on the en/de corpus;
``nist``
    ``NIST().corpus_score`` (13a, n = 5) on the en/de corpus;
``bleu-intl``
    ``BLEU(tokenize="intl").corpus_score`` on the en/de corpus;
``bleu-zh``
    ``BLEU(tokenize="zh")`` on the en-zh systems (Chinese targets);
``bleu-char``
    ``BLEU(tokenize="char")`` on the en-ja systems (Japanese targets);
``bs``, ``ar``
    ``significance.paired_bootstrap`` (1,000 resamples) and ``paired_ar``
    (10,000 trials) of the 12 zh-en systems' BLEU segment statistics
    (1,875 segments each, computed before timing), the kernels alone;
``bs-large``
    ``paired_bootstrap`` of two systems' statistics over the whole en/de corpus.

The en/de corpus is every cs-en, de-en, en-de and zh-en system output (74,617
segments) in a fixed shuffled order (numpy seed 0), cut to ``--segments``.

``--callgrind-runs K`` (one job in ``--jobs``) runs the job K times between
``callgrind_control -i on`` and ``-i off``, for
``valgrind --tool=callgrind --instr-atstart=no``: counting two children with
different K and taking the difference gives the instructions of one call.

``--before A.json ... --after B.json ...`` times nothing: it prints each job's
median and range of best times on both sides, the ratio of the medians and
whether all runs gave the same result, and writes them (and the runs) to ``--json``.
"""

from __future__ import annotations

import os

os.environ["NUMBA_NUM_THREADS"] = "1"

import argparse  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

JOBS = ("chrf", "chrf++", "ter", "nist", "bleu-intl", "bleu-zh", "bleu-char", "bs", "ar",
        "bs-large")
DEFAULT_WMT = Path(__file__).resolve().parents[2] / "shared" / "wmt22"


def read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def pair_systems(wmt: Path, pair: str) -> list[tuple[str, list[str], list[str]]]:
    """(system, hypotheses, first reference) of every system output of ``pair`` (cs-en's
    first reference is B: it has no A)."""
    ref_path = sorted((wmt / "references").glob(f"generaltest2022.{pair}.ref.*"))[0]
    ref = read_lines(ref_path)
    found = []
    for path in sorted((wmt / "system-outputs").glob(f"generaltest2022.{pair}.hyp.*")):
        hyp = read_lines(path)
        assert len(hyp) == len(ref), path
        found.append((path.name.split(".hyp.")[1].rsplit(".", 1)[0], hyp, ref))
    return found


def corpus(wmt: Path, pairs: tuple[str, ...], segments: int) -> tuple[list[str], list[str]]:
    """Every system of ``pairs``, shuffled (seed 0) and cut to ``segments``."""
    hyps, refs = [], []
    for pair in pairs:
        for _, h, r in pair_systems(wmt, pair):
            hyps += h
            refs += r
    order = np.random.default_rng(0).permutation(len(hyps))[:segments]
    return [hyps[i] for i in order], [refs[i] for i in order]


def digest(array: np.ndarray) -> str:
    return hashlib.sha256(np.ascontiguousarray(array).tobytes()).hexdigest()[:16]


def results_of(results) -> list:
    """A significance result list as comparable strings."""
    return [[repr(getattr(r, f)) for f in ("score", "p_value", "mean", "ci")] for r in results]


def build_jobs(args) -> dict:
    """name -> (warm-up callable, timed callable returning a comparable result, segments)."""
    import fastbleu
    from fastbleu import BLEU, CHRF, TER
    from fastbleu.significance import tests as significance

    wmt = Path(args.wmt_dir)
    wanted = set(args.jobs)
    jobs = {}
    if wanted & {"chrf", "chrf++", "ter", "nist", "bleu-intl", "bs-large"}:
        hyps, refs = corpus(wmt, ("cs-en", "de-en", "en-de", "zh-en"), args.segments)
        small = hyps[:500], [refs[:500]]

        def corpus_job(metric, data=(hyps, [refs])):
            return (lambda: metric.corpus_score(*small),
                    lambda: repr(metric.corpus_score(*data).score), len(data[0]))

        if "chrf" in wanted:
            jobs["chrf"] = corpus_job(CHRF())
        if "chrf++" in wanted:
            jobs["chrf++"] = corpus_job(CHRF(word_order=2))
        if "ter" in wanted:
            jobs["ter"] = corpus_job(TER())
        if "nist" in wanted:
            jobs["nist"] = corpus_job(fastbleu.NIST())
        if "bleu-intl" in wanted:
            jobs["bleu-intl"] = corpus_job(BLEU(tokenize="intl"))
    for name, pair, tok in (("bleu-zh", "en-zh", "zh"), ("bleu-char", "en-ja", "char")):
        if name in wanted:
            h, r = corpus(wmt, (pair,), args.segments)
            metric = BLEU(tokenize=tok)
            jobs[name] = (lambda m=metric, h=h, r=r: m.corpus_score(h[:500], [r[:500]]),
                          lambda m=metric, h=h, r=r: repr(m.corpus_score(h, [r]).score),
                          len(h))
    if wanted & {"bs", "ar"}:
        bleu = BLEU()
        stats = [bleu.segment_statistics(h, [r]) for _, h, r in pair_systems(wmt, "zh-en")]
        jobs["_stats"] = [digest(s) for s in stats]
        for name, test, n in (("bs", significance.paired_bootstrap, 1000),
                              ("ar", significance.paired_ar, 10000)):
            if name in wanted:
                jobs[name] = (lambda t=test: t([s[:200] for s in stats[:3]], metric=bleu,
                                               n_samples=50, seed=12345),
                              lambda t=test, n=n: results_of(t(stats, metric=bleu, n_samples=n,
                                                               seed=12345)),
                              stats[0].shape[0])
    if "bs-large" in wanted:
        bleu = BLEU()
        half = len(hyps) // 2
        pair_stats = [bleu.segment_statistics(hyps[:half], [refs[:half]]),
                      bleu.segment_statistics(hyps[half:2 * half], [refs[half:2 * half]])]
        jobs["_stats_large"] = [digest(s) for s in pair_stats]
        jobs["bs-large"] = (
            lambda: significance.paired_bootstrap([s[:200] for s in pair_stats], metric=bleu,
                                                  n_samples=50, seed=12345),
            lambda: results_of(significance.paired_bootstrap(pair_stats, metric=bleu,
                                                             n_samples=1000, seed=12345)),
            half)
    return jobs


def summarize(before: list[str], after: list[str], out: str | None) -> None:
    """Per job: median and range of the best times of the ``before`` and ``after`` runs (each
    file one process of this script), the ratio of the medians, and whether every run of
    both gave the same result."""
    import statistics

    runs = {"before": [json.loads(Path(f).read_text()) for f in before],
            "after": [json.loads(Path(f).read_text()) for f in after]}
    names = [n for n in JOBS if any(n in r["jobs"] for r in runs["after"])]
    table = {}
    for name in names:
        row = {}
        for side, files in runs.items():
            best = [r["jobs"][name]["best_s"] for r in files if name in r["jobs"]]
            row[side] = {"median_s": statistics.median(best), "min_s": min(best),
                         "max_s": max(best), "runs": len(best),
                         "segments": next(r["jobs"][name]["segments"] for r in files
                                          if name in r["jobs"])}
        results = {json.dumps(r["jobs"][name]["result"]) for files in runs.values()
                   for r in files if name in r["jobs"]}
        row["ratio_after_before"] = row["after"]["median_s"] / row["before"]["median_s"]
        row["identical_results"] = len(results) == 1
        row["result"] = json.loads(results.pop()) if len(results) == 1 else sorted(results)
        table[name] = row
        print(f"{name:10} before {row['before']['median_s']:.4f} "
              f"[{row['before']['min_s']:.4f}-{row['before']['max_s']:.4f}]  after "
              f"{row['after']['median_s']:.4f} [{row['after']['min_s']:.4f}-"
              f"{row['after']['max_s']:.4f}]  ratio {row['ratio_after_before']:.3f}  "
              f"identical {row['identical_results']}")
    loads = [r[k] for files in runs.values() for r in files for k in ("loadavg_start",
                                                                      "loadavg_end")]
    summary = {"jobs": table, "loadavg_1min_range": [min(x[0] for x in loads),
                                                     max(x[0] for x in loads)],
               "before_trees": sorted({r["fastbleu"] for r in runs["before"]}),
               "after_trees": sorted({r["fastbleu"] for r in runs["after"]}),
               "stats_digests_equal": len({json.dumps(r["stats_digests"], sort_keys=True)
                                           for files in runs.values() for r in files
                                           if r["stats_digests"]}) == 1,
               "runs": runs}
    if out:
        Path(out).write_text(json.dumps(summary, indent=1) + "\n")


def instrument(switch: str) -> None:
    subprocess.run(["callgrind_control", "-i", switch, str(os.getpid())],
                   stdout=subprocess.DEVNULL, check=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wmt-dir", default=str(DEFAULT_WMT))
    parser.add_argument("--segments", type=int, default=30000,
                        help="segments of each corpus (default 30000)")
    parser.add_argument("--jobs", nargs="+", choices=JOBS, default=list(JOBS))
    parser.add_argument("--repeat", type=int, default=5, help="timed runs per job (best kept)")
    parser.add_argument("--callgrind-runs", type=int,
                        help="run the one job this many times with callgrind's instrumentation on")
    parser.add_argument("--json", help="write the results here as well")
    parser.add_argument("--before", nargs="+", metavar="FILE",
                        help="summarize: --json files of runs of the old tree (times nothing)")
    parser.add_argument("--after", nargs="+", metavar="FILE",
                        help="summarize: --json files of runs of the new tree")
    args = parser.parse_args()
    if args.before or args.after:
        summarize(args.before, args.after, args.json)
        return

    import fastbleu

    out = {"fastbleu": str(Path(fastbleu.__file__).resolve().parent),
           "numba_threads": os.environ["NUMBA_NUM_THREADS"],
           "no_aot": os.environ.get("FASTBLEU_NO_AOT"), "segments": args.segments,
           "repeat": args.repeat, "loadavg_start": os.getloadavg(), "jobs": {}}
    jobs = build_jobs(args)
    out["stats_digests"] = {k: jobs.pop(k) for k in ("_stats", "_stats_large") if k in jobs}
    if args.callgrind_runs is not None:
        (name,) = args.jobs
        warm, run, _ = jobs[name]
        warm()
        run()
        instrument("on")
        for _ in range(args.callgrind_runs):
            run()
        instrument("off")
        return
    for name in args.jobs:
        warm, run, n = jobs[name]
        warm()
        times, result = [], None
        for _ in range(args.repeat):
            start = time.process_time()
            got = run()
            times.append(time.process_time() - start)
            assert result is None or got == result, (name, got, result)
            result = got
        out["jobs"][name] = {"segments": n, "best_s": min(times), "times_s": times,
                             "result": result}
        print(f"{name:10} {n:7,} segments  best {min(times):.4f} s", file=sys.stderr, flush=True)
    out["loadavg_end"] = os.getloadavg()
    text = json.dumps(out, indent=1)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
