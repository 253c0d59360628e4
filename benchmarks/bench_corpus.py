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
    ``--sacrebleu-segments`` segments (default 20,000; sacrebleu is far too
    slow for a million), best of ``--sacrebleu-repeat`` runs (default 1).
    sacrebleu's tokenizer LRU cache is cleared before every run, so no run
    benefits from an earlier one; inside a run sacrebleu still profits from
    the cache on repeated segments (the WMT references repeat once per
    system), as it would in real use.

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
    p.add_argument("--sacrebleu-segments", type=int, default=20_000,
                   help="segments (the first ones) sacrebleu is timed on")
    p.add_argument("--sacrebleu-repeat", type=int, default=1,
                   help="sacrebleu runs; the best is reported")
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
                 "warmup_segments"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
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
