#!/usr/bin/env python3
"""Throughput of fastbleu's Python API against sacrebleu's, on a large in-memory corpus.

What is measured
----------------
The corpus is real WMT22 general-task data (``../shared/wmt22`` relative to the
repository, see its README) or the files given with ``--hyp``/``--ref``.  From
WMT22 it takes every system output whose target language is tokenized with
``13a`` by WMT (targets ``en`` and ``de``; the ``zh`` and ``ja`` targets are
skipped) and pairs it with the first reference of its language pair (sorted
by name).  The segments are concatenated (pairs and systems in sorted order)
and the concatenation is repeated until it has ``--segments`` segments
(default 1,000,000).  Hypotheses and references are plain Python lists of
``str``, as a user would have them after reading files.

In one process, the script then times

(a) ``fastbleu.BLEU(tokenize=T).corpus_score(hyps, [refs])`` on all segments
    (one reference, otherwise default options): best of ``--repeat`` runs,
    after one warm-up call on a small slice, so numba's compilation (or
    cache loading) is not counted;
(b) ``fastbleu.BLEU(tokenize=T).sentence_scores(hyps, [refs])`` on the same
    segments, timed the same way;
(c) ``sacrebleu.metrics.BLEU(tokenize=T).corpus_score`` on the first
    ``--sacrebleu-segments`` segments (default 100,000; sacrebleu is far too
    slow for a million), best of ``--sacrebleu-repeat`` runs (default 1).
    sacrebleu's tokenizer LRU cache is cleared before every run, so no run
    benefits from an earlier one; inside a run sacrebleu still profits from
    the cache on repeated segments (the WMT references repeat once per
    system), as it would in real use;
(d) ``bleuscore.compute(references=[[r] for r in refs], predictions=hyps)``
    (the Rust package, if installed) on the first ``--bleuscore-segments``
    segments (default 100,000), best of ``--sacrebleu-repeat`` runs.  Its
    own defaults (13a tokenizer, shortest reference length); only its time
    is compared.

``--rss`` measures memory instead: for each fastbleu call a fresh process
loads the corpus, warms up, and scores it once; the peak RSS it adds is
``VmHWM`` (``/proc/self/status``, reset by exec unlike ``ru_maxrss``)
after scoring minus before.  ``--profile`` times the pieces of
``corpus_score`` in a fresh single-thread process (``NUMBA_NUM_THREADS=1``,
process time, best of ``--repeat``): converting the lists to text, the
tokenizer kernel, and the counting kernel, in ns per segment.

It reports seconds and segments per second for each, the ratio of
fastbleu's throughput to sacrebleu's, the process's peak RSS
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``) after loading the corpus and
after the fastbleu runs, and checks that fastbleu's corpus score equals
sacrebleu's on sacrebleu's slice (absolute difference of the scores, and
whether the n-gram statistics are identical).

Peak RSS is a high-water mark of the whole process: to measure fastbleu's
memory cleanly, run with ``--only fastbleu`` (sacrebleu is then not even
imported).  The figure includes the corpus lists themselves; the "after
loading" line shows how much of it they account for.

Both libraries log a warning when 100 or more hypotheses end in " ." (some
WMT lines do); the check is part of the timed work (default options), only
its message is muted so that it does not clutter the report.

Running it
----------
From the repository root (the machine should otherwise be idle)::

    python benchmarks/bench_corpus.py                        # 1M segments, all three
    python benchmarks/bench_corpus.py --segments 100000      # quick check
    python benchmarks/bench_corpus.py --only fastbleu        # clean peak RSS
    python benchmarks/bench_corpus.py --tokenize char --json benchmarks/results/char.json
    python benchmarks/bench_corpus.py --hyp sys.txt --ref ref.txt

numba uses as many threads as ``NUMBA_NUM_THREADS`` allows (default: all
cores); the number is printed with the results.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import re
import resource
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's fastbleu, not whichever is installed
DEFAULT_WMT_DIR = REPO.parent / "shared" / "wmt22"
#: Target languages whose WMT22 BLEU uses the 13a tokenizer.
TARGETS_13A = ("en", "de")
TOKENIZERS = ("13a", "char", "none")
_HYP_NAME = re.compile(r"^generaltest2022\.(?P<pair>[a-z]+-(?P<trg>[a-z]+))\.hyp\."
                       r"(?P<system>.+)\.(?P=trg)$")


# ---------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------


def read_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 file without their line ends (as sacrebleu's CLI reads them)."""
    with open(path, encoding="utf-8", newline="\n") as f:
        return [line.rstrip("\n") for line in f]


def wmt22_files(wmt_dir: Path) -> list[tuple[Path, Path]]:
    """(hypothesis file, reference file) for every 13a-target system output."""
    hyp_dir, ref_dir = wmt_dir / "system-outputs", wmt_dir / "references"
    if not hyp_dir.is_dir() or not ref_dir.is_dir():
        raise SystemExit(f"error: {wmt_dir} has no system-outputs/ and references/ folders; "
                         "pass --wmt-dir, or --hyp FILE --ref FILE")
    pairs = []
    for hyp in sorted(hyp_dir.iterdir()):
        m = _HYP_NAME.match(hyp.name)
        if not m or m["trg"] not in TARGETS_13A:
            continue
        refs = sorted(ref_dir.glob(f"generaltest2022.{m['pair']}.ref.*.{m['trg']}"))
        if not refs:
            print(f"warning: no reference for {hyp.name}; skipped", file=sys.stderr)
            continue
        pairs.append((hyp, refs[0]))
    if not pairs:
        raise SystemExit(f"error: no en/de system outputs found under {hyp_dir}")
    return pairs


def load_corpus(files: list[tuple[Path, Path]]) -> tuple[list[str], list[str]]:
    """Concatenate aligned hypothesis/reference files."""
    hyps: list[str] = []
    refs: list[str] = []
    cache: dict[Path, list[str]] = {}
    for hyp_path, ref_path in files:
        h = read_lines(hyp_path)
        if ref_path not in cache:
            cache[ref_path] = read_lines(ref_path)
        r = cache[ref_path]
        if len(h) != len(r):
            raise SystemExit(f"error: {hyp_path} has {len(h)} lines but {ref_path} has "
                             f"{len(r)}")
        hyps.extend(h)
        refs.extend(r)
    if not hyps:
        raise SystemExit("error: the corpus is empty")
    return hyps, refs


def cycle_to(lines: list[str], n: int) -> list[str]:
    """Repeat ``lines`` until the list has ``n`` items (the strings are shared)."""
    reps = -(-n // len(lines))
    return (lines * reps)[:n]


# ---------------------------------------------------------------------------------------
# Measurement helpers
# ---------------------------------------------------------------------------------------


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    # Linux reports KiB, macOS bytes.
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def best_of(repeat: int, fn, before=None, clock=time.perf_counter) -> tuple[float, object]:
    """Best time of ``repeat`` calls of ``fn()`` by ``clock`` (wall by default) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        if before is not None:
            before()
        gc.collect()
        start = clock()
        result = fn()
        best = min(best, clock() - start)
    return best, result


def clear_sacrebleu_cache(metric) -> None:
    """Empty the LRU caches sacrebleu's tokenizers keep on ``__call__`` (and zh's
    ``_is_chinese_char``).

    13a has two: its own and that of the regexp tokenizer it delegates to
    (``_post_tokenizer``); both are class-level, so they outlive the metric
    object and would make every run after the first faster than a fresh
    process.
    """
    tokenizers = [metric.tokenizer, getattr(metric.tokenizer, "_post_tokenizer", None)]
    for tokenizer in tokenizers:
        for attr in ("__call__", "_is_chinese_char"):
            fn = getattr(type(tokenizer), attr, None) if tokenizer is not None else None
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()


def stats_of(score) -> tuple:
    return (tuple(score.counts), tuple(score.totals), score.sys_len, score.ref_len)


def vm_hwm_mib() -> float:
    """This process's peak RSS from ``/proc/self/status`` (VmHWM), in MiB; reset by exec."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def child(args, hyps: list[str], refs: list[str]) -> dict:
    """The work of one fresh process (``--child``); returns what it measured."""
    import fastbleu

    w = min(args.warmup_segments, len(hyps))
    metric = fastbleu.BLEU(tokenize=args.tokenize)
    if args.child != "profile":
        getattr(metric, args.child)(hyps[:w], [refs[:w]])
        before = vm_hwm_mib()
        t0 = time.perf_counter()
        getattr(metric, args.child)(hyps, [refs])
        return {"call": args.child, "seconds": time.perf_counter() - t0,
                "peak_rss_mib_before": round(before, 1),
                "peak_rss_mib_after": round(vm_hwm_mib(), 1),
                "peak_rss_mib_added": round(vm_hwm_mib() - before, 1)}
    # One thread: the pieces of corpus_score one after the other, by process time.
    import numpy as np

    from fastbleu.statistics import tokens as statistics
    from fastbleu._kernels.bleu.counting import row_width, segment_statistics
    from fastbleu.statistics.tokens import HashBuffer, References, tokenize
    from fastbleu.inputs.text import as_text_column

    # The batches corpus_score's kernels take (64k segments before issue 17).
    size = getattr(statistics, "KERNEL_BATCH_SIZE", statistics.BATCH_SIZE)

    metric.corpus_score(hyps[:w], [refs[:w]])
    n = len(hyps)
    best = {"convert": float("inf"), "tokenize": float("inf"), "count": float("inf")}
    for _ in range(args.repeat):
        spent = dict.fromkeys(best, 0.0)
        buffers = HashBuffer(), HashBuffer()
        for first in range(0, n, size):
            last = min(n, first + size)
            t0 = time.process_time()
            h = as_text_column(hyps[first:last], "hypotheses")
            r = as_text_column(refs[first:last], "references", allow_null=True)
            t1 = time.process_time()
            h = tokenize(h, metric.tokenizer, False, buffers[0])
            r = References.tokenized([r], metric.tokenizer, False, buffers[1])
            t2 = time.process_time()
            stats = np.empty((last - first, row_width(4)), dtype=np.int64)
            segment_statistics(h.hashes, h.start, h.count, r.hashes, r.start, r.count, 4, stats)
            t3 = time.process_time()
            spent["convert"] += t1 - t0
            spent["tokenize"] += t2 - t1
            spent["count"] += t3 - t2
        best = {k: min(best[k], spent[k]) for k in best}
    return {"call": "profile", "batch_size": size, "ns_per_segment": {k: round(v / n * 1e9, 1)
                                                  for k, v in best.items()},
            "total_ns_per_segment": round(sum(best.values()) / n * 1e9, 1)}


def in_fresh_process(argv: list[str], what: str, threads: str | None = None) -> dict:
    """Run this script with ``--child what`` in a new process; its result."""
    import subprocess

    env = dict(os.environ)
    if threads is not None:
        env["NUMBA_NUM_THREADS"] = threads
    out = subprocess.run([sys.executable, __file__, *argv, "--child", what], env=env,
                         check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Time fastbleu.BLEU().corpus_score / sentence_scores and sacrebleu's "
                    "corpus_score on a large in-memory corpus (WMT22 by default).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--wmt-dir", type=Path, default=DEFAULT_WMT_DIR,
                   help="WMT22 folder with system-outputs/ and references/")
    p.add_argument("--hyp", type=Path, action="append", metavar="FILE",
                   help="hypothesis file instead of WMT22 (repeatable; the n-th --hyp goes "
                        "with the n-th --ref)")
    p.add_argument("--ref", type=Path, action="append", metavar="FILE",
                   help="reference file aligned with the matching --hyp")
    p.add_argument("--segments", type=int, default=1_000_000,
                   help="number of segments the corpus is cycled to")
    p.add_argument("--repeat", type=int, default=3, help="fastbleu runs; the best is reported")
    p.add_argument("--sacrebleu-segments", type=int, default=100_000,
                   help="segments (the first ones) sacrebleu is timed on")
    p.add_argument("--sacrebleu-repeat", type=int, default=1,
                   help="sacrebleu (and bleuscore) runs; the best is reported")
    p.add_argument("--bleuscore-segments", type=int, default=100_000,
                   help="segments (the first ones) bleuscore is timed on, if installed")
    p.add_argument("--rss", action="store_true",
                   help="measure the peak RSS each fastbleu call adds, in fresh processes")
    p.add_argument("--profile", action="store_true",
                   help="time conversion, tokenizer and counting kernels, one thread")
    p.add_argument("--child", choices=("corpus_score", "sentence_scores", "profile"),
                   help=argparse.SUPPRESS)
    p.add_argument("--warmup-segments", type=int, default=1_000,
                   help="size of the untimed warm-up call (compiles or loads the kernels)")
    p.add_argument("--tokenize", choices=TOKENIZERS, default="13a", help="tokenizer")
    p.add_argument("--only", choices=("all", "fastbleu", "sacrebleu"), default="all",
                   help="time only one tool (--only fastbleu gives a clean peak RSS)")
    p.add_argument("--no-sentence", action="store_true",
                   help="skip (b), fastbleu's sentence_scores")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON")
    args = p.parse_args(argv)
    if (args.hyp is None) != (args.ref is None) or (args.hyp and len(args.hyp) != len(args.ref)):
        p.error("give --hyp and --ref together, as many of one as of the other")
    for path in (args.hyp or []) + (args.ref or []):
        if not path.is_file():
            p.error(f"no such file: {path}")
    for name in ("segments", "repeat", "sacrebleu_segments", "sacrebleu_repeat",
                 "warmup_segments", "bleuscore_segments"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    # Both libraries warn (through logging) when many hypotheses end in " .", as some
    # WMT lines do; the check still runs (default options), only the message is muted.
    for name in ("fastbleu", "sacrebleu"):
        logging.getLogger(name).setLevel(logging.ERROR)
    run_fast = args.only in ("all", "fastbleu")
    run_sacre = args.only in ("all", "sacrebleu")

    # -- corpus ------------------------------------------------------------------------
    files = list(zip(args.hyp, args.ref)) if args.hyp else wmt22_files(args.wmt_dir)
    t0 = time.perf_counter()
    base_hyps, base_refs = load_corpus(files)
    hyps, refs = cycle_to(base_hyps, args.segments), cycle_to(base_refs, args.segments)
    load_seconds = time.perf_counter() - t0
    n = len(hyps)
    n_sacre = min(args.sacrebleu_segments, n)
    rss_loaded = peak_rss_mib()
    if args.child:
        print(json.dumps(child(args, hyps, refs)))
        return 0
    source = ("--hyp/--ref files" if args.hyp else str(args.wmt_dir))
    print(f"corpus: {len(files)} system output(s) from {source}: {len(base_hyps):,} segments, "
          f"cycled to {n:,} ({load_seconds:.1f} s to read)")
    print(f"tokenize={args.tokenize}, one reference, default options")

    results: list[dict] = []
    info: dict = {
        "python": platform.python_version(), "platform": platform.platform(),
        "cpu_count": os.cpu_count(), "tokenize": args.tokenize, "segments": n,
        "base_segments": len(base_hyps), "files": [[str(h), str(r)] for h, r in files],
        "repeat": args.repeat, "sacrebleu_segments": n_sacre,
        "sacrebleu_repeat": args.sacrebleu_repeat, "warmup_segments": args.warmup_segments,
        "peak_rss_mib_after_loading": round(rss_loaded, 1),
    }

    # -- fresh processes: memory, one-thread profile ------------------------------------
    passed = [a for a in argv if a not in ("--rss", "--profile")]
    if args.rss:
        calls = ["corpus_score"] + ([] if args.no_sentence else ["sentence_scores"])
        info["fresh_process_rss"] = [in_fresh_process(passed, call) for call in calls]
        for m in info["fresh_process_rss"]:
            print(f"fresh process, {m['call']}: peak RSS {m['peak_rss_mib_before']:,.0f} MiB "
                  f"after loading + warm-up, {m['peak_rss_mib_after']:,.0f} MiB after scoring: "
                  f"scoring adds {m['peak_rss_mib_added']:,.0f} MiB")
    if args.profile:
        prof = info["profile_one_thread"] = in_fresh_process(passed, "profile", threads="1")
        print("one thread, process time per segment: " + ", ".join(
            f"{k} {v:.0f} ns" for k, v in prof["ns_per_segment"].items())
            + f"; total {prof['total_ns_per_segment']:.0f} ns")

    # -- fastbleu ----------------------------------------------------------------------
    fast_score = None
    if run_fast:
        import numba

        import fastbleu

        info["fastbleu"] = fastbleu.__version__
        info["numba"] = numba.__version__
        info["numba_threads"] = numba.get_num_threads()
        w = min(args.warmup_segments, n)
        t0 = time.perf_counter()
        fastbleu.BLEU(tokenize=args.tokenize).corpus_score(hyps[:w], [refs[:w]])
        if not args.no_sentence:
            fastbleu.BLEU(tokenize=args.tokenize).sentence_scores(hyps[:w], [refs[:w]])
        info["warmup_seconds"] = round(time.perf_counter() - t0, 3)
        info["peak_rss_mib_after_warmup"] = round(peak_rss_mib(), 1)
        print(f"fastbleu {fastbleu.__version__}: warm-up on {w:,} segments took "
              f"{info['warmup_seconds']:.2f} s (numba compile or cache load; not counted); "
              f"numba threads: {info['numba_threads']}")

        seconds, fast_score = best_of(
            args.repeat, lambda: fastbleu.BLEU(tokenize=args.tokenize).corpus_score(hyps, [refs]))
        results.append({"tool": "fastbleu", "call": "corpus_score", "segments": n,
                        "seconds": seconds, "score": fast_score.score})
        if not args.no_sentence:
            seconds, sent = best_of(
                args.repeat,
                lambda: fastbleu.BLEU(tokenize=args.tokenize).sentence_scores(hyps, [refs]))
            results.append({"tool": "fastbleu", "call": "sentence_scores", "segments": n,
                            "seconds": seconds, "mean_sentence_bleu": float(sent.mean())})
            del sent
        info["peak_rss_mib_after_fastbleu"] = round(peak_rss_mib(), 1)

    # -- sacrebleu ---------------------------------------------------------------------
    check = None
    if run_sacre:
        import sacrebleu
        from sacrebleu.metrics import BLEU as SacreBLEU

        info["sacrebleu"] = sacrebleu.__version__
        sh, sr = hyps[:n_sacre], refs[:n_sacre]
        metric = SacreBLEU(tokenize=args.tokenize)
        seconds, sacre_score = best_of(args.sacrebleu_repeat,
                                       lambda: metric.corpus_score(sh, [sr]),
                                       before=lambda: clear_sacrebleu_cache(metric))
        results.append({"tool": "sacrebleu", "call": "corpus_score", "segments": n_sacre,
                        "seconds": seconds, "score": sacre_score.score})
        if run_fast:
            # Same slice through fastbleu: the scores must agree.
            import fastbleu

            mine = fastbleu.BLEU(tokenize=args.tokenize).corpus_score(sh, [sr])
            check = {"segments": n_sacre, "fastbleu": mine.score, "sacrebleu": sacre_score.score,
                     "abs_diff": abs(mine.score - sacre_score.score),
                     "same_statistics": stats_of(mine) == stats_of(sacre_score)}

    if run_sacre and args.only == "all":
        try:
            import bleuscore
        except ImportError:
            bleuscore = None
        if bleuscore is not None:
            n_bs = min(args.bleuscore_segments, n)
            bh, br = hyps[:n_bs], [[r] for r in refs[:n_bs]]
            info["bleuscore"] = getattr(bleuscore, "__version__", "?")
            seconds, bs_score = best_of(args.sacrebleu_repeat,
                                        lambda: bleuscore.compute(references=br, predictions=bh))
            results.append({"tool": "bleuscore", "call": "compute", "segments": n_bs,
                            "seconds": seconds, "score": 100 * bs_score["bleu"]})
            del bh, br

    # -- report ------------------------------------------------------------------------
    for r in results:
        r["segments_per_second"] = r["segments"] / r["seconds"]
    sacre_rate = next((r["segments_per_second"] for r in results if r["tool"] == "sacrebleu"),
                      None)
    for r in results:
        r["vs_sacrebleu"] = r["segments_per_second"] / sacre_rate if sacre_rate else None

    print()
    header = f"{'tool':<26} {'segments':>10} {'seconds':>9} {'segments/s':>12} {'vs sacrebleu':>13}"
    print(header)
    print("-" * len(header))
    for r in results:
        label = f"{r['tool']} {r['call']}"
        ratio = f"{r['vs_sacrebleu']:.1f}x" if r["vs_sacrebleu"] else "-"
        print(f"{label:<26} {r['segments']:>10,} {r['seconds']:>9.3f} "
              f"{r['segments_per_second']:>12,.0f} {ratio:>13}")
    print()
    print(f"peak RSS after loading the corpus: {rss_loaded:,.0f} MiB")
    if run_fast:
        print(f"peak RSS after import + warm-up:   {info['peak_rss_mib_after_warmup']:,.0f} MiB")
        print(f"peak RSS after the fastbleu runs:  {info['peak_rss_mib_after_fastbleu']:,.0f} MiB"
              + ("" if args.only == "fastbleu" else "  (run --only fastbleu for a clean figure)"))
    if fast_score is not None:
        print(f"fastbleu corpus BLEU on {n:,} segments: {fast_score}")
    if check is not None:
        verdict = "OK" if check["abs_diff"] == 0 and check["same_statistics"] else "MISMATCH"
        print(f"check on the sacrebleu slice ({n_sacre:,} segments): fastbleu "
              f"{check['fastbleu']!r} vs sacrebleu {check['sacrebleu']!r}, |diff| = "
              f"{check['abs_diff']:.3g}, same statistics: {check['same_statistics']} "
              f"-> {verdict}")

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        payload = {"info": info, "results": results, "score_check": check}
        args.json.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 1 if check is not None and not (check["abs_diff"] == 0
                                           and check["same_statistics"]) else 0


if __name__ == "__main__":
    sys.exit(main())
