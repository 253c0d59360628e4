#!/usr/bin/env python3
"""Throughput of fastbleu's chrF and chrF++ against sacrebleu and fastchrf (issue 13).

What is measured
----------------
The corpus is the one ``bench_corpus.py`` builds (and with its code): every
WMT22 system output with an English or German target (``../shared/wmt22``,
41 systems, 74,617 segments), each paired with the first reference of its
language pair, concatenated and cycled to ``--segments`` segments (default
1,000,000).  Hypotheses and references are plain Python lists of ``str``.
One reference per segment, default options otherwise (``char_order=6``,
``beta=2``, whitespace removed, no lowercasing, no eps smoothing).

For each metric in ``--metrics`` (default: ``chrf`` = chrF2, ``word_order=0``;
``chrf++`` = chrF2++, ``word_order=2``) the script times, in rounds (each
round runs every tool once, fastbleu first, so that all tools see the same
machine load; the best round is reported for each tool):

(a) ``fastbleu.CHRF(word_order=W).corpus_score(hyps, [refs])`` on all
    segments, after one untimed warm-up call on ``--warmup-segments``
    segments (numba's compilation or cache loading is not counted);
(b) ``fastbleu.CHRF(word_order=W).sentence_scores(hyps, [refs])`` on all
    segments (a float64 array of N sentence scores);
(c) ``sacrebleu.metrics.CHRF(word_order=W).corpus_score`` on the first
    ``--sacrebleu-segments`` segments (default 20,000; it is far too slow for
    a million).  Its throughput is reported as segments/s of that slice, i.e.
    **extrapolated** linearly to the full corpus.  sacrebleu's chrF keeps no
    caches between calls, so there is nothing to clear;
(d) chrF only: ``fastchrf.pairwise_chrf([[h] for h in hyps], [[r] for r in refs])``
    on the first ``--fastchrf-segments`` segments (default: all of them, the
    same work as (a) and (b)), i.e. one hypothesis and one reference per batch
    item.  The timed work includes wrapping the lists (``[[h] ...]``, which
    fastchrf requires) and unpacking its nested-list result into a float64
    array, so that its output is the same as (b)'s; the time of the call alone
    is recorded as well.

What the comparisons mean
-------------------------
fastchrf is sentence-level only: it returns N sentence chrF scores and no
statistics, so it cannot give sacrebleu's corpus chrF (the F-score of the
statistics summed over all segments).  Its row is therefore *throughput on
the same segments*; the like-for-like row is (b) ``sentence_scores``, which
produces exactly what fastchrf produces.  Ratios are given against both (a)
and (b).  fastchrf has no word n-grams (no ``word_order`` argument), so it has
no chrF++: the chrF++ rows are compared with fastchrf's chrF throughput of
the same run, which is labelled as such (chrF++ does strictly more work).

Checks (they do not count in the timings)
-----------------------------------------
- fastbleu's corpus score on sacrebleu's slice equals sacrebleu's
  (absolute difference, and whether the summed statistics are identical);
- on the first ``--check-segments`` segments (default 2,000): fastbleu's
  ``sentence_scores`` and fastchrf's scores against sacrebleu's
  ``CHRF().sentence_score`` of each segment (maximum absolute difference and
  how many are bit-identical);
- fastbleu's ``sentence_scores`` against fastchrf's output on all the
  segments fastchrf scored.

fastchrf 0.2.1 computes in float64 and was found bit-identical to sacrebleu
2.6's sentence chrF on WMT22 segments.  One known difference in whitespace
handling: fastchrf removes Rust's ``char::is_whitespace`` characters, sacrebleu
Python's ``str.split()`` ones; they differ on U+001C..U+001F (whitespace to
Python only), which WMT22 text does not contain.

Peak RSS is the process's high-water mark (``ru_maxrss``); the figure taken
after the first round's fastbleu calls (which run before any peer) is
fastbleu's own.  ``--only fastbleu`` gives a clean figure for all rounds.

If ``fastbleu.CHRF`` cannot be imported (the metric has not landed yet), the
fastbleu rows are skipped with a message and the peers are still measured.

Running it
----------
From the repository root, on an otherwise idle machine (fastchrf is a peer,
not a dependency: ``pip install fastchrf``)::

    python benchmarks/bench_chrf.py --json benchmarks/results/chrf.json   # 1M, everything
    python benchmarks/bench_chrf.py --segments 100000 --repeat 1           # quick check
    python benchmarks/bench_chrf.py --only fastbleu                        # clean peak RSS
    python benchmarks/bench_chrf.py --only peers --fastchrf-segments 200000

numba uses as many threads as ``NUMBA_NUM_THREADS`` allows and fastchrf (rayon)
as many as ``RAYON_NUM_THREADS`` allows (default for both: all cores); both
numbers are printed.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import sys
import time
from pathlib import Path

# The corpus and the helpers are common.py's, so that the benchmarks read the same segments.
sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WMT22 as DEFAULT_WMT_DIR, cycle_to, load_corpus, peak_rss_mib, wmt22_files  # noqa: E402

common.use_checkout()

#: --metrics name -> (sacrebleu's word_order, its score name)
METRICS = {"chrf": (0, "chrF2"), "chrf++": (2, "chrF2++")}
TOOLS = ("fastbleu", "fastchrf", "sacrebleu")


# ---------------------------------------------------------------------------------------
# The tools
# ---------------------------------------------------------------------------------------


def import_fastbleu_chrf():
    """``fastbleu.CHRF``, or ``None`` and the reason when it is not there yet."""
    try:
        import fastbleu
        from fastbleu import CHRF
    except ImportError as error:
        return None, f"fastbleu.CHRF is not importable ({error})"
    return CHRF, fastbleu.__version__


def import_fastchrf():
    try:
        import fastchrf
    except ImportError as error:
        return None, f"fastchrf is not installed ({error}); pip install fastchrf"
    try:
        from importlib.metadata import version
        return fastchrf, version("fastchrf")
    except Exception:  # noqa: BLE001 - a version is only informative
        return fastchrf, "?"


def fastchrf_sentence_scores(fastchrf, hyps: list[str], refs: list[str]):
    """fastchrf's sentence chrF of each (hyp, ref) as a float64 array, and the
    seconds of the ``pairwise_chrf`` call alone."""
    import numpy as np

    batch_h = [[h] for h in hyps]
    batch_r = [[r] for r in refs]
    start = time.perf_counter()
    out = fastchrf.pairwise_chrf(batch_h, batch_r)
    call = time.perf_counter() - start
    scores = np.fromiter((row[0][0] for row in out), dtype=np.float64, count=len(out))
    return scores, call


def sacrebleu_corpus_statistics(metric, hyps, refs):
    """sacrebleu's summed chrF statistics (private API; ``None`` if it moved)."""
    try:
        import numpy as np
        stats = metric._extract_corpus_statistics(hyps, [refs])
        return np.asarray(stats, dtype=np.int64).sum(axis=0)
    except Exception:  # noqa: BLE001 - the check is informative only
        return None


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Time fastbleu.CHRF().corpus_score / sentence_scores against sacrebleu's "
                    "CHRF and fastchrf.pairwise_chrf on a large in-memory corpus (WMT22).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--wmt-dir", type=Path, default=DEFAULT_WMT_DIR,
                   help="WMT22 folder with system-outputs/ and references/")
    p.add_argument("--segments", type=int, default=1_000_000,
                   help="number of segments the corpus is cycled to")
    p.add_argument("--metrics", nargs="+", choices=tuple(METRICS), default=list(METRICS),
                   help="chrf = chrF2 (word_order=0), chrf++ = chrF2++ (word_order=2)")
    p.add_argument("--repeat", type=int, default=3,
                   help="rounds (every tool once per round); the best is reported")
    p.add_argument("--sacrebleu-segments", type=int, default=20_000,
                   help="segments (the first ones) sacrebleu is timed on")
    p.add_argument("--sacrebleu-repeat", type=int, default=None,
                   help="rounds in which sacrebleu runs (default: all of them)")
    p.add_argument("--fastchrf-segments", type=int, default=None,
                   help="segments (the first ones) fastchrf is timed on (default: all)")
    p.add_argument("--fastchrf-repeat", type=int, default=None,
                   help="rounds in which fastchrf runs (default: all of them)")
    p.add_argument("--check-segments", type=int, default=2_000,
                   help="segments whose sentence scores are checked against sacrebleu's")
    p.add_argument("--warmup-segments", type=int, default=1_000,
                   help="size of fastbleu's untimed warm-up call")
    p.add_argument("--only", choices=("all", "fastbleu", "peers", "fastchrf", "sacrebleu"),
                   default="all",
                   help="time only some tools (--only fastbleu gives a clean peak RSS)")
    p.add_argument("--no-sentence", action="store_true",
                   help="skip (b), fastbleu's sentence_scores")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON")
    args = p.parse_args(argv)
    for name in ("segments", "repeat", "sacrebleu_segments", "warmup_segments"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("sacrebleu_repeat", "fastchrf_repeat", "fastchrf_segments"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.check_segments < 0:
        p.error("--check-segments must be at least 0")
    args.metrics = list(dict.fromkeys(args.metrics))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    for name in ("fastbleu", "sacrebleu"):
        logging.getLogger(name).setLevel(logging.ERROR)
    wanted = {"all": set(TOOLS), "fastbleu": {"fastbleu"}, "peers": {"fastchrf", "sacrebleu"},
              "fastchrf": {"fastchrf"}, "sacrebleu": {"sacrebleu"}}[args.only]

    # -- corpus ------------------------------------------------------------------------
    t0 = time.perf_counter()
    if common.have_wmt22(args.wmt_dir):
        files = wmt22_files(args.wmt_dir)
        base_hyps, base_refs = load_corpus(files)
        hyps, refs = cycle_to(base_hyps, args.segments), cycle_to(base_refs, args.segments)
    else:
        print("SYNTHETIC data: no WMT22 (figures not comparable with the README's)")
        files, (hyps, refs, _) = [], common.corpus(args.segments, args.wmt_dir)
        base_hyps = hyps[:20_000]
    n = len(hyps)
    n_sacre = min(args.sacrebleu_segments, n)
    n_fastchrf = min(args.fastchrf_segments or n, n)
    n_check = min(args.check_segments, n)
    rss_loaded = peak_rss_mib()
    print(f"corpus: {len(files)} system outputs from {args.wmt_dir}: {len(base_hyps):,} "
          f"segments, cycled to {n:,} ({time.perf_counter() - t0:.1f} s to read)")
    print("one reference, default options (char_order=6, beta=2, whitespace removed)")

    info: dict = {
        "python": platform.python_version(), "platform": platform.platform(),
        "cpu_count": os.cpu_count(), "segments": n, "base_segments": len(base_hyps),
        "files": [[h.name, r.name] for h, r in files], "metrics": args.metrics,
        "repeat": args.repeat, "sacrebleu_segments": n_sacre,
        "fastchrf_segments": n_fastchrf, "check_segments": n_check,
        "warmup_segments": args.warmup_segments,
        "peak_rss_mib_after_loading": round(rss_loaded, 1),
        "rayon_num_threads": os.environ.get("RAYON_NUM_THREADS"),
        "load_average_start": os.getloadavg(),
    }
    skipped: dict[str, str] = {}

    # -- imports -----------------------------------------------------------------------
    FastCHRF = fastchrf = SacreCHRF = None
    if "fastbleu" in wanted:
        FastCHRF, what = import_fastbleu_chrf()
        if FastCHRF is None:
            skipped["fastbleu"] = what
            print(f"SKIPPED fastbleu: {what}. The metric has not landed yet; "
                  "measuring the peers only.")
        else:
            import numba
            info.update(fastbleu=what, numba=numba.__version__,
                        numba_threads=numba.get_num_threads())
    if "fastchrf" in wanted:
        fastchrf, what = import_fastchrf()
        if fastchrf is None:
            skipped["fastchrf"] = what
            print(f"SKIPPED fastchrf: {what}")
        else:
            info["fastchrf"] = what
    if "sacrebleu" in wanted:
        import sacrebleu
        from sacrebleu.metrics import CHRF as SacreCHRF
        info["sacrebleu"] = sacrebleu.__version__

    # -- warm-up -----------------------------------------------------------------------
    if FastCHRF is not None:
        w = min(args.warmup_segments, n)
        t0 = time.perf_counter()
        for metric in args.metrics:
            chrf = FastCHRF(word_order=METRICS[metric][0])
            chrf.corpus_score(hyps[:w], [refs[:w]])
            if not args.no_sentence:
                chrf.sentence_scores(hyps[:w], [refs[:w]])
        info["warmup_seconds"] = round(time.perf_counter() - t0, 3)
        info["peak_rss_mib_after_warmup"] = round(peak_rss_mib(), 1)
        print(f"fastbleu {info['fastbleu']}: warm-up on {w:,} segments took "
              f"{info['warmup_seconds']:.2f} s (not counted); numba threads: "
              f"{info['numba_threads']}")

    # -- timed rounds ------------------------------------------------------------------
    # best[(metric, tool, call)] = [seconds, extra]
    best: dict[tuple, dict] = {}
    outputs: dict[tuple, object] = {}

    def timed(key, fn, segments, **extra):
        gc.collect()
        cpu = time.process_time()
        start = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        runs = best[key]["all_seconds"] if key in best else []
        improved = key not in best or seconds < best[key]["seconds"]
        if improved:
            best[key] = {"metric": key[0], "tool": key[1], "call": key[2],
                         "segments": segments, "seconds": seconds, "cpu_seconds": cpu, **extra}
        best[key]["all_seconds"] = runs + [round(seconds, 4)]
        return result, improved

    sacre_rounds = args.sacrebleu_repeat or args.repeat
    fastchrf_rounds = args.fastchrf_repeat or args.repeat
    for round_ in range(args.repeat):
        for metric in args.metrics:
            word_order = METRICS[metric][0]
            if FastCHRF is not None:
                chrf = FastCHRF(word_order=word_order)
                score, _ = timed((metric, "fastbleu", "corpus_score"),
                                 lambda: chrf.corpus_score(hyps, [refs]), n)
                best[(metric, "fastbleu", "corpus_score")]["score"] = score.score
                if not args.no_sentence:
                    sent, _ = timed((metric, "fastbleu", "sentence_scores"),
                                    lambda: chrf.sentence_scores(hyps, [refs]), n)
                    outputs[(metric, "fastbleu")] = sent
                    best[(metric, "fastbleu", "sentence_scores")]["mean_sentence_score"] = \
                        float(sent.mean())
                    del sent
                if round_ == 0:
                    info[f"peak_rss_mib_after_fastbleu_{metric}_round1"] = round(peak_rss_mib(), 1)
        for metric in args.metrics:
            word_order = METRICS[metric][0]
            if fastchrf is not None and word_order == 0 and round_ < fastchrf_rounds:
                call_seconds = []

                def run_fastchrf():
                    scores, call = fastchrf_sentence_scores(fastchrf, hyps[:n_fastchrf],
                                                            refs[:n_fastchrf])
                    call_seconds.append(call)
                    return scores

                scores, improved = timed((metric, "fastchrf", "pairwise_chrf, 1x1 per item"),
                                         run_fastchrf, n_fastchrf)
                entry = best[(metric, "fastchrf", "pairwise_chrf, 1x1 per item")]
                if improved:
                    entry["call_only_seconds"] = call_seconds[0]
                entry["mean_sentence_score"] = float(scores.mean())
                outputs[(metric, "fastchrf")] = scores
                del scores
            if SacreCHRF is not None and round_ < sacre_rounds:
                metric_obj = SacreCHRF(word_order=word_order)
                sh, sr = hyps[:n_sacre], refs[:n_sacre]
                score, _ = timed((metric, "sacrebleu", "corpus_score"),
                                 lambda: metric_obj.corpus_score(sh, [sr]), n_sacre)
                best[(metric, "sacrebleu", "corpus_score")]["score"] = score.score
        print(f"round {round_ + 1}/{args.repeat} done "
              f"(load average {os.getloadavg()[0]:.2f})", flush=True)
    info["peak_rss_mib_at_end_of_rounds"] = round(peak_rss_mib(), 1)
    info["load_average_end"] = os.getloadavg()

    # -- checks ------------------------------------------------------------------------
    import numpy as np

    checks: dict[str, dict] = {}
    for metric in args.metrics:
        word_order, name = METRICS[metric]
        c: dict = {}
        if SacreCHRF is not None:
            sacre = SacreCHRF(word_order=word_order)
            if FastCHRF is not None:
                mine = FastCHRF(word_order=word_order)
                sh, sr = hyps[:n_sacre], refs[:n_sacre]
                a = mine.corpus_score(sh, [sr]).score
                b = best[(metric, "sacrebleu", "corpus_score")]["score"]
                c["corpus_on_sacrebleu_slice"] = {"segments": n_sacre, "fastbleu": a,
                                                  "sacrebleu": b, "abs_diff": abs(a - b)}
                theirs = sacrebleu_corpus_statistics(sacre, sh, sr)
                try:
                    ours = np.asarray(mine.segment_statistics(sh, [sr])).sum(axis=0)
                    c["corpus_on_sacrebleu_slice"]["same_statistics"] = (
                        None if theirs is None else bool(np.array_equal(ours, theirs)))
                except Exception as error:  # noqa: BLE001
                    c["corpus_on_sacrebleu_slice"]["same_statistics"] = f"not checked: {error}"
            if n_check:
                ref_scores = np.array([sacre.sentence_score(h, [r]).score
                                       for h, r in zip(hyps[:n_check], refs[:n_check])])
                if FastCHRF is not None:
                    got = FastCHRF(word_order=word_order).sentence_scores(
                        hyps[:n_check], [refs[:n_check]])
                    c["fastbleu_sentence_vs_sacrebleu"] = diff_summary(got, ref_scores)
                if fastchrf is not None and word_order == 0:
                    got, _ = fastchrf_sentence_scores(fastchrf, hyps[:n_check], refs[:n_check])
                    c["fastchrf_sentence_vs_sacrebleu"] = diff_summary(got, ref_scores)
        if (metric, "fastbleu") in outputs and (metric, "fastchrf") in outputs:
            f = outputs[(metric, "fastchrf")]
            c["fastbleu_sentence_vs_fastchrf"] = diff_summary(
                outputs[(metric, "fastbleu")][:len(f)], f)
        checks[metric] = c

    # -- report ------------------------------------------------------------------------
    results = sorted(best.values(), key=lambda r: (args.metrics.index(r["metric"]),
                                                   TOOLS.index(r["tool"]), r["call"]))
    for r in results:
        r["segments_per_second"] = r["segments"] / r["seconds"]
    rate = {(r["metric"], r["tool"], r["call"]): r["segments_per_second"] for r in results}
    fastchrf_key = ("chrf", "fastchrf", "pairwise_chrf, 1x1 per item")
    for r in results:
        m = r["metric"]
        sac = rate.get((m, "sacrebleu", "corpus_score"))
        fc = rate.get(fastchrf_key)
        r["vs_sacrebleu"] = r["segments_per_second"] / sac if sac else None
        r["vs_fastchrf"] = r["segments_per_second"] / fc if fc else None
        r["vs_fastchrf_note"] = (None if fc is None else "fastchrf chrF (fastchrf has no chrF++)"
                                 if m != "chrf" else "fastchrf chrF, same segments")
        if r["tool"] == "sacrebleu":
            r["note"] = f"first {r['segments']:,} segments; segments/s extrapolated"
        if r["tool"] == "fastchrf" and r["segments"] != n:
            r["note"] = f"first {r['segments']:,} segments; segments/s extrapolated"

    print()
    header = (f"{'metric':<7} {'tool / call':<42} {'segments':>10} {'seconds':>9} "
              f"{'CPU s':>8} {'segments/s':>11} {'vs sacrebleu':>12} {'vs fastchrf':>11}")
    print(header)
    print("-" * len(header))
    for r in results:
        sac = f"{r['vs_sacrebleu']:.1f}x" if r["vs_sacrebleu"] else "-"
        fc = f"{r['vs_fastchrf']:.1f}x" if r["vs_fastchrf"] else "-"
        if r["vs_fastchrf"] and r["metric"] != "chrf":
            fc += "*"
        print(f"{METRICS[r['metric']][1]:<7} {r['tool'] + ' ' + r['call']:<42} "
              f"{r['segments']:>10,} {r['seconds']:>9.3f} {r['cpu_seconds']:>8.2f} "
              f"{r['segments_per_second']:>11,.0f} "
              f"{sac:>12} {fc:>11}")
    print(f"best of {args.repeat} rounds (sacrebleu: {min(sacre_rounds, args.repeat)}, "
          f"fastchrf: {min(fastchrf_rounds, args.repeat)}); sacrebleu's segments/s "
          f"measured on its first {n_sacre:,} segments"
          + (f", fastchrf's on its first {n_fastchrf:,}" if n_fastchrf != n else "")
          + "; CPU s = process CPU time of that run, all threads")
    if any(r["vs_fastchrf"] and r["metric"] != "chrf" for r in results):
        print("* against fastchrf's chrF: fastchrf has no word n-grams, hence no chrF++")
    for metric in args.metrics:
        corpus = best.get((metric, "fastbleu", "corpus_score"))
        sentence = best.get((metric, "fastbleu", "sentence_scores"))
        if corpus and sentence:
            info[f"sentence_over_corpus_{metric}"] = sentence["seconds"] / corpus["seconds"]
            print(f"{METRICS[metric][1]}: fastbleu sentence_scores takes "
                  f"{sentence['seconds'] / corpus['seconds']:.2f}x the corpus_score time "
                  "(target: within 1.5x)")
    entry = best.get(fastchrf_key)
    if entry and "call_only_seconds" in entry:
        print(f"fastchrf: the pairwise_chrf call alone took {entry['call_only_seconds']:.3f} s "
              f"of its best {entry['seconds']:.3f} s (the rest: wrapping the lists, unpacking)")
    print()
    print(f"peak RSS after loading the corpus: {rss_loaded:,.0f} MiB")
    for key, value in info.items():
        if key.startswith("peak_rss_mib_after_fastbleu") or key == "peak_rss_mib_after_warmup":
            print(f"{key}: {value:,.0f} MiB")
    print(f"peak RSS at the end of the rounds: {info['peak_rss_mib_at_end_of_rounds']:,.0f} MiB"
          + ("" if args.only == "fastbleu" else " (all tools; --only fastbleu for a clean one)"))
    ok = True
    for metric, c in checks.items():
        for what, d in c.items():
            print(f"check {METRICS[metric][1]} {what}: {d}")
            if what == "corpus_on_sacrebleu_slice":
                ok &= d["abs_diff"] == 0 and d.get("same_statistics") in (True, None)
            elif what.startswith("fastbleu"):
                ok &= d["max_abs_diff"] == 0
    for tool, why in skipped.items():
        print(f"skipped {tool}: {why}")

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"info": info, "results": results, "checks": checks, "skipped": skipped}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0 if ok else 1


def diff_summary(got, expected) -> dict:
    import numpy as np

    got = np.asarray(got, dtype=np.float64)
    expected = np.asarray(expected, dtype=np.float64)
    d = np.abs(got - expected)
    return {"segments": int(len(d)), "max_abs_diff": float(d.max()) if len(d) else 0.0,
            "identical": int((got == expected).sum())}


if __name__ == "__main__":
    sys.exit(main())
