#!/usr/bin/env python3
"""Pairwise sentence-chrF matrices for minimum-Bayes-risk decoding: fastbleu against
fastchrf (issue 13).

What is measured
----------------
An MBR job of ``--sources`` sources (default 1,000), each with ``--candidates``
candidates (default 64) and ``--references`` pseudo-references (default 64),
built from real WMT22 text (``../shared/wmt22``).  The candidates of a source
are the outputs of *all systems* for one WMT22 segment (9 to 12 systems per
language pair), drawn with replacement to 64 by a seeded random generator; the
pseudo-references are a second, independent draw from the same outputs, as in
MBR decoding, where both are samples from the same model.  Sources are spread
evenly over the segments of the pairs in ``--pairs`` and shuffled (so that the
first k sources, which the slices below use, sample every pair; default: the four pairs
with an English or German target, as ``bench_corpus.py`` uses).

Systems often agree: a WMT22 segment has only about 7 distinct outputs, so
plain draws would repeat each string about 9 times, and an implementation
that scores each distinct string (or pair) once would do 1/80 of the work.
Real MBR samples are mostly distinct near-variants of each other, so every
drawn string gets 0 to ``--max-edits`` (default 3) random word edits (delete a
word, repeat a word, swap two neighbours).  The script reports how many
distinct strings a source then has (about 52 of 64 with the defaults);
``--max-edits 0`` gives the plain draws.  fastchrf does not deduplicate.

The job is the N x M matrix of sentence chrF (default options: chrF2,
char_order=6, beta=2, whitespace removed) between every candidate and every
pseudo-reference of each source.  Timed, in rounds (each round runs every tool
once, fastbleu first; the best round is reported):

(a) fastbleu's pairwise API through the adapter ``fastbleu_pairwise`` below
    (candidate names are tried in order; the first that exists is used), from
    Python lists of lists, and with ``--arrow`` also from Arrow
    ``list<string>`` arrays built beforehand (not timed);
(b) ``fastchrf.pairwise_chrf(candidates, references)`` on the first
    ``--fastchrf-sources`` sources (default: all), the batch dimension being
    the sources; the timed work includes converting its nested-list result to
    a float64 array of shape (S, N, M), and the call alone is recorded too;
(c) a plain loop of ``sacrebleu.metrics.CHRF().sentence_score(c, [r])`` over
    the pairs of the first ``--sacrebleu-sources`` sources (default 2),
    **extrapolated** to all sources, for scale.

``--metrics chrf++`` adds chrF2++ (word_order=2) for fastbleu and sacrebleu;
fastchrf has no word n-grams.

Checks
------
- fastbleu's matrices against fastchrf's on every source fastchrf scored
  (maximum absolute difference, number of identical entries);
- both against the sacrebleu loop on the first ``--check-sources`` sources
  (default 3; ``sacrebleu.metrics.CHRF().sentence_score`` of every pair).
  fastchrf's definition matches sacrebleu's for one reference (it was found
  bit-identical on WMT22 text), so all three should agree exactly.

Running it
----------
From the repository root, on an otherwise idle machine (``pip install fastchrf``)::

    python benchmarks/bench_pairwise.py --json benchmarks/results/pairwise.json
    python benchmarks/bench_pairwise.py --sources 100 --repeat 1          # quick check
    python benchmarks/bench_pairwise.py --only fastchrf --fastchrf-sources 200

fastchrf (rayon) uses ``RAYON_NUM_THREADS`` threads and numba
``NUMBA_NUM_THREADS`` (default for both: all cores).
"""

from __future__ import annotations

import argparse
import gc
import importlib
import json
import os
import platform
import re
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import WMT22 as DEFAULT_WMT_DIR, peak_rss_mib, read_lines  # noqa: E402

common.use_checkout()

#: --metrics name -> (word_order, score name)
METRICS = {"chrf": (0, "chrF2"), "chrf++": (2, "chrF2++")}
DEFAULT_PAIRS = ("cs-en", "de-en", "en-de", "zh-en")
_HYP_NAME = re.compile(r"^generaltest2022\.(?P<pair>[a-z]+-[a-z]+)\.hyp\.(?P<system>.+)\.[a-z]+$")


# ---------------------------------------------------------------------------------------
# fastbleu's pairwise API, behind one adapter (the name is not settled yet)
# ---------------------------------------------------------------------------------------

#: (module, function) tried in order; the first that imports is used.
FASTBLEU_PAIRWISE_NAMES = (
    ("fastbleu.pairwise", "chrf_matrix"),
    ("fastbleu.pairwise", "pairwise_chrf"),
    ("fastbleu.pairwise", "chrf"),
    ("fastbleu", "pairwise_chrf"),
)


def find_fastbleu_pairwise():
    """(function, its dotted name), or (None, why not)."""
    reasons = []
    for module_name, attr in FASTBLEU_PAIRWISE_NAMES:
        try:
            module = importlib.import_module(module_name)
        except ImportError as error:
            reasons.append(f"{module_name}: {error}")
            continue
        fn = getattr(module, attr, None)
        if fn is not None:
            return fn, f"{module_name}.{attr}"
        reasons.append(f"{module_name} has no {attr}")
    return None, ("no fastbleu pairwise chrF API yet (tried "
                  + ", ".join(f"{m}.{a}" for m, a in FASTBLEU_PAIRWISE_NAMES) + ": "
                  + "; ".join(dict.fromkeys(reasons)) + ")")


def fastbleu_pairwise(fn, candidates, references, word_order: int):
    """fastbleu's matrices as one float64 array (sources, N, M).

    ``candidates`` and ``references`` are lists (one per source) of lists of
    str, or Arrow ``list<string>`` arrays.  Adjust this call when the API lands.
    """
    import numpy as np

    out = fn(candidates, references, word_order=word_order)
    if isinstance(out, np.ndarray):
        return out
    return np.stack([np.asarray(m, dtype=np.float64) for m in out])  # a list of matrices


# ---------------------------------------------------------------------------------------
# The job
# ---------------------------------------------------------------------------------------


def segment_pools(wmt_dir: Path, pairs: list[str]) -> list[list[str]]:
    """For every segment of every pair (pairs in the given order): the outputs of all
    systems of that pair for that segment."""
    hyp_dir = wmt_dir / "system-outputs"
    if not hyp_dir.is_dir():
        raise SystemExit(f"error: {wmt_dir} has no system-outputs/ folder; pass --wmt-dir")
    by_pair: dict[str, list[list[str]]] = {p: [] for p in pairs}
    for path in sorted(hyp_dir.iterdir()):
        m = _HYP_NAME.match(path.name)
        if m and m["pair"] in by_pair:
            by_pair[m["pair"]].append(read_lines(path))
    pools = []
    for pair in pairs:
        systems = by_pair[pair]
        if not systems:
            raise SystemExit(f"error: no system outputs for {pair} under {hyp_dir}")
        if len({len(s) for s in systems}) != 1:
            raise SystemExit(f"error: the {pair} system outputs differ in length")
        pools.extend([list(outputs) for outputs in zip(*systems)])
    return pools


def word_edit(text: str, rng, edits: int) -> str:
    """``text`` with ``edits`` random word edits (delete a word, repeat a word, or swap
    two neighbours), the kind of small variation MBR samples of one model show."""
    words = text.split(" ")
    for _ in range(edits):
        if len(words) < 2:
            break
        i = int(rng.integers(0, len(words) - 1))
        op = int(rng.integers(0, 3))
        if op == 0:
            del words[i]
        elif op == 1:
            words.insert(i, words[i])
        else:
            words[i], words[i + 1] = words[i + 1], words[i]
    return " ".join(words)


def build_job(pools, sources: int, n: int, m: int, seed: int, max_edits: int):
    """``sources`` pools spread evenly (in random order), and for each a draw of n candidates and m
    pseudo-references (with replacement), each with 0..max_edits word edits."""
    import numpy as np

    rng = np.random.default_rng(seed)
    picks = np.linspace(0, len(pools) - 1, num=sources).round().astype(int)
    # In random order, so that the first k sources (--fastchrf-sources, --check-sources,
    # --sacrebleu-sources) are a sample of all pairs, not the first pair's segments.
    picks = rng.permutation(picks)

    def draw(pool, k):
        return [word_edit(pool[j], rng, int(rng.integers(0, max_edits + 1))) if max_edits
                else pool[j] for j in rng.integers(0, len(pool), size=k)]

    candidates, references = [], []
    for i in picks:
        candidates.append(draw(pools[i], n))
        references.append(draw(pools[i], m))
    return candidates, references, picks


def fastchrf_matrices(fastchrf, candidates, references):
    import numpy as np

    start = time.perf_counter()
    out = fastchrf.pairwise_chrf(candidates, references)
    call = time.perf_counter() - start
    return np.asarray(out, dtype=np.float64), call


def sacrebleu_matrices(word_order, candidates, references):
    import numpy as np
    from sacrebleu.metrics import CHRF

    metric = CHRF(word_order=word_order)
    return np.array([[[metric.sentence_score(c, [r]).score for r in refs] for c in cands]
                     for cands, refs in zip(candidates, references)], dtype=np.float64)


def diff_summary(got, expected) -> dict:
    import numpy as np

    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape:
        return {"shape": list(got.shape), "expected_shape": list(expected.shape),
                "max_abs_diff": float("inf"), "identical": 0}
    d = np.abs(got - expected)
    return {"entries": int(d.size), "max_abs_diff": float(d.max()) if d.size else 0.0,
            "identical": int((got == expected).sum())}


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Time pairwise sentence-chrF matrices (MBR): fastbleu against "
                    "fastchrf.pairwise_chrf and a sacrebleu loop, on WMT22 system outputs.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--wmt-dir", type=Path, default=DEFAULT_WMT_DIR)
    p.add_argument("--pairs", nargs="+", default=list(DEFAULT_PAIRS),
                   help="WMT22 language pairs the sources come from")
    p.add_argument("--sources", type=int, default=1000)
    p.add_argument("--candidates", type=int, default=64, help="N, candidates per source")
    p.add_argument("--references", type=int, default=64, help="M, pseudo-references per source")
    p.add_argument("--seed", type=int, default=13)
    p.add_argument("--max-edits", type=int, default=3,
                   help="each drawn string gets 0..this many random word edits, so that "
                        "the strings of a source are mostly distinct (0: plain draws)")
    p.add_argument("--metrics", nargs="+", choices=tuple(METRICS), default=["chrf"])
    p.add_argument("--repeat", type=int, default=3,
                   help="rounds (every tool once per round); the best is reported")
    p.add_argument("--fastchrf-sources", type=int, default=None,
                   help="sources (the first ones) fastchrf is timed on (default: all)")
    p.add_argument("--fastchrf-repeat", type=int, default=None,
                   help="rounds in which fastchrf runs (default: all of them)")
    p.add_argument("--sacrebleu-sources", type=int, default=2,
                   help="sources the sacrebleu loop is timed on (0: none)")
    p.add_argument("--check-sources", type=int, default=3,
                   help="sources checked against the sacrebleu loop (0: none)")
    p.add_argument("--arrow", action="store_true",
                   help="also time fastbleu from Arrow list<string> arrays")
    p.add_argument("--warmup-sources", type=int, default=4,
                   help="size of fastbleu's untimed warm-up call")
    p.add_argument("--only", choices=("all", "fastbleu", "fastchrf", "peers"), default="all")
    p.add_argument("--json", type=Path, metavar="OUT")
    args = p.parse_args(argv)
    for name in ("sources", "candidates", "references", "repeat", "warmup_sources"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    for name in ("fastchrf_sources", "fastchrf_repeat"):
        if getattr(args, name) is not None and getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    args.metrics = list(dict.fromkeys(args.metrics))
    return args


def main(argv=None) -> int:
    args = parse_args(argv)
    import numpy as np

    t0 = time.perf_counter()
    pools = segment_pools(args.wmt_dir, args.pairs)
    candidates, references, picks = build_job(pools, args.sources, args.candidates,
                                              args.references, args.seed, args.max_edits)
    S, N, M = len(candidates), args.candidates, args.references
    distinct_c = float(np.mean([len(set(c)) for c in candidates]))
    distinct_r = float(np.mean([len(set(r)) for r in references]))
    chars = float(np.mean([len(s) for c in candidates for s in c]))
    print(f"job: {S:,} sources x {N} candidates x {M} pseudo-references = {S * N * M:,} pairs, "
          f"from {len(pools):,} WMT22 segments of {', '.join(args.pairs)} "
          f"({time.perf_counter() - t0:.1f} s to build)")
    print(f"distinct strings per source: {distinct_c:.1f} candidates, {distinct_r:.1f} "
          f"pseudo-references (out of {N} and {M}); {chars:.0f} characters per candidate")
    run_fast = args.only in ("all", "fastbleu")
    run_fastchrf = args.only in ("all", "fastchrf", "peers")
    run_sacre = args.only in ("all", "peers") and args.sacrebleu_sources > 0
    S_fc = min(args.fastchrf_sources or S, S)
    S_sb = min(args.sacrebleu_sources, S)
    info = {"python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "sources": S, "candidates": N, "references": M,
            "pairs": args.pairs, "seed": args.seed, "max_edits": args.max_edits, "source_segments": picks.tolist()[:20],
            "mean_distinct_candidates": distinct_c, "mean_distinct_references": distinct_r,
            "mean_candidate_chars": chars, "fastchrf_sources": S_fc, "sacrebleu_sources": S_sb,
            "repeat": args.repeat, "load_average_start": os.getloadavg(),
            "rayon_num_threads": os.environ.get("RAYON_NUM_THREADS")}
    skipped: dict[str, str] = {}

    fb_fn = fastchrf = None
    arrow_inputs = None
    if run_fast:
        fb_fn, what = find_fastbleu_pairwise()
        if fb_fn is None:
            skipped["fastbleu"] = what
            print(f"SKIPPED fastbleu: {what}. Measuring the peers only.")
        else:
            import numba

            import fastbleu
            info.update(fastbleu=fastbleu.__version__, fastbleu_api=what,
                        numba_threads=numba.get_num_threads())
            w = min(args.warmup_sources, S)
            t0 = time.perf_counter()
            for metric in args.metrics:
                fastbleu_pairwise(fb_fn, candidates[:w], references[:w], METRICS[metric][0])
            info["warmup_seconds"] = round(time.perf_counter() - t0, 3)
            print(f"fastbleu {fastbleu.__version__} ({what}): warm-up on {w} sources took "
                  f"{info['warmup_seconds']:.2f} s (not counted)")
            if args.arrow:
                import pyarrow as pa
                arrow_inputs = (pa.array(candidates, type=pa.list_(pa.string())),
                                pa.array(references, type=pa.list_(pa.string())))
    if run_fastchrf:
        try:
            import fastchrf
            from importlib.metadata import version
            info["fastchrf"] = version("fastchrf")
        except ImportError as error:
            skipped["fastchrf"] = f"not installed ({error}); pip install fastchrf"
            print(f"SKIPPED fastchrf: {skipped['fastchrf']}")
    if run_sacre:
        import sacrebleu
        info["sacrebleu"] = sacrebleu.__version__

    best: dict[tuple, dict] = {}
    matrices: dict[tuple, object] = {}

    def timed(key, fn, sources, **extra):
        gc.collect()
        cpu = time.process_time()
        start = time.perf_counter()
        result = fn()
        seconds = time.perf_counter() - start
        cpu = time.process_time() - cpu
        runs = best[key]["all_seconds"] if key in best else []
        improved = key not in best or seconds < best[key]["seconds"]
        if improved:
            best[key] = {"metric": key[0], "tool": key[1], "call": key[2], "sources": sources,
                         "pairs": sources * N * M, "seconds": seconds, "cpu_seconds": cpu, **extra}
        best[key]["all_seconds"] = runs + [round(seconds, 4)]
        return result, improved

    fastchrf_rounds = args.fastchrf_repeat or args.repeat
    for round_ in range(args.repeat):
        for metric in args.metrics:
            word_order = METRICS[metric][0]
            if fb_fn is not None:
                out, _ = timed((metric, "fastbleu", "lists"),
                               lambda: fastbleu_pairwise(fb_fn, candidates, references,
                                                         word_order), S)
                matrices[(metric, "fastbleu")] = out
                if arrow_inputs is not None:
                    try:
                        out, _ = timed((metric, "fastbleu", "Arrow list<string>"),
                                       lambda: fastbleu_pairwise(fb_fn, *arrow_inputs,
                                                                 word_order), S)
                        matrices[(metric, "fastbleu-arrow")] = out
                    except Exception as error:  # noqa: BLE001
                        skipped["fastbleu-arrow"] = f"{type(error).__name__}: {error}"
                        arrow_inputs = None
                del out
                if round_ == 0:
                    info[f"peak_rss_mib_after_fastbleu_{metric}_round1"] = round(peak_rss_mib(), 1)
        if fastchrf is not None and "chrf" in args.metrics and round_ < fastchrf_rounds:
            calls = []

            def run_fastchrf():
                out, call = fastchrf_matrices(fastchrf, candidates[:S_fc], references[:S_fc])
                calls.append(call)
                return out

            out, improved = timed(("chrf", "fastchrf", "pairwise_chrf"), run_fastchrf, S_fc)
            if improved:
                best[("chrf", "fastchrf", "pairwise_chrf")]["call_only_seconds"] = calls[0]
            matrices[("chrf", "fastchrf")] = out
            del out
        if run_sacre and round_ == 0:  # far too slow to repeat; timed once
            for metric in args.metrics:
                out, _ = timed((metric, "sacrebleu", "sentence_score loop"),
                               lambda: sacrebleu_matrices(METRICS[metric][0], candidates[:S_sb],
                                                          references[:S_sb]), S_sb)
                matrices[(metric, "sacrebleu")] = out
        print(f"round {round_ + 1}/{args.repeat} done (load average {os.getloadavg()[0]:.2f})",
              flush=True)
    info["peak_rss_mib_at_end"] = round(peak_rss_mib(), 1)
    info["load_average_end"] = os.getloadavg()

    # -- checks ------------------------------------------------------------------------
    checks: dict[str, dict] = {}
    n_check = min(args.check_sources, S)
    for metric in args.metrics:
        c = {}
        reference = None
        if n_check:
            have = matrices.get((metric, "sacrebleu"))
            if have is not None and len(have) >= n_check:
                reference = have[:n_check]
            elif (metric, "fastbleu") in matrices or (metric, "fastchrf") in matrices:
                reference = sacrebleu_matrices(METRICS[metric][0], candidates[:n_check],
                                               references[:n_check])
        for tool in ("fastbleu", "fastbleu-arrow", "fastchrf"):
            got = matrices.get((metric, tool))
            if got is None:
                continue
            if reference is not None:
                c[f"{tool}_vs_sacrebleu"] = diff_summary(got[:n_check], reference)
            if tool.startswith("fastbleu") and (metric, "fastchrf") in matrices:
                theirs = matrices[(metric, "fastchrf")]
                c[f"{tool}_vs_fastchrf"] = diff_summary(got[:len(theirs)], theirs)
        checks[metric] = c

    # -- report ------------------------------------------------------------------------
    results = list(best.values())
    for r in results:
        r["seconds_for_all_sources"] = r["seconds"] * S / r["sources"]
        r["pairs_per_second"] = r["pairs"] / r["seconds"]
        r["extrapolated"] = r["sources"] != S
    fc = best.get(("chrf", "fastchrf", "pairwise_chrf"))
    for r in results:
        r["vs_fastchrf"] = (fc["seconds_for_all_sources"] / r["seconds_for_all_sources"]
                            if fc else None)
    print()
    header = (f"{'metric':<7} {'tool / input':<34} {'sources':>8} {'seconds':>9} {'CPU s':>8} "
              f"{'s, all sources':>15} {'pairs/s':>12} {'vs fastchrf':>11}")
    print(header)
    print("-" * len(header))
    for r in results:
        ratio = f"{r['vs_fastchrf']:.1f}x" if r["vs_fastchrf"] else "-"
        if r["vs_fastchrf"] and r["metric"] != "chrf":
            ratio += "*"
        extra = " (extrapolated)" if r["extrapolated"] else ""
        print(f"{METRICS[r['metric']][1]:<7} {r['tool'] + ' ' + r['call']:<34} "
              f"{r['sources']:>8,} {r['seconds']:>9.3f} {r['cpu_seconds']:>8.2f} "
              f"{r['seconds_for_all_sources']:>15.2f} "
              f"{r['pairs_per_second']:>12,.0f} {ratio:>11}{extra}")
    print(f"best of {args.repeat} rounds (fastchrf: {min(fastchrf_rounds, args.repeat)}, "
          f"sacrebleu: 1); N={N}, M={M}; CPU s = process CPU time of that run, all threads")
    if any(r["vs_fastchrf"] and r["metric"] != "chrf" for r in results):
        print("* against fastchrf's chrF: fastchrf has no word n-grams, hence no chrF++")
    if fc and "call_only_seconds" in fc:
        print(f"fastchrf: the pairwise_chrf call alone took {fc['call_only_seconds']:.3f} s of "
              f"its best {fc['seconds']:.3f} s (the rest: np.asarray of its nested lists)")
    print(f"peak RSS: {info['peak_rss_mib_at_end']:,.0f} MiB at the end"
          + "".join(f"; {k[len('peak_rss_mib_after_'):]}: {v:,.0f} MiB"
                    for k, v in info.items() if k.startswith("peak_rss_mib_after_")))
    ok = True
    for metric, c in checks.items():
        for what, d in c.items():
            print(f"check {METRICS[metric][1]} {what}: {d}")
            ok &= d["max_abs_diff"] == 0
    for tool, why in skipped.items():
        print(f"skipped {tool}: {why}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"info": info, "results": results, "checks": checks, "skipped": skipped}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
