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
``--instructions`` counts the same pieces' instructions per segment with
valgrind's callgrind on the first ``--instructions-segments`` (16,384)
segments, one thread: a child runs each piece 1 and 3 times with the
instrumentation switched on around it, and half the difference is one run
(timings on a shared machine move by tens of percent; these counts do not).

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
    python benchmarks/bench_corpus.py --only fastbleu --profile --rss --repeat 3
    python benchmarks/bench_corpus.py --only fastbleu --instructions --segments 20000

Without ``../shared/wmt22`` the corpus is ``common``'s synthetic one (said in the output).

numba uses as many threads as ``NUMBA_NUM_THREADS`` allows (default: all
cores); the number is printed with the results.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import (  # noqa: E402
    WMT22 as DEFAULT_WMT_DIR,
    best_of,
    clear_sacrebleu_cache,
    cycle_to,
    have_wmt22,
    load_corpus,
    peak_rss_mib,
    wmt22_files,
)

common.use_checkout()
TOKENIZERS = ("13a", "char", "none")
PIECES = ("convert", "tokenize", "count")


def stats_of(score) -> tuple:
    return (tuple(score.counts), tuple(score.totals), score.sys_len, score.ref_len)


def child(args, hyps: list[str], refs: list[str]) -> dict:
    """The work of one fresh process (``--child``); returns what it measured."""
    import fastbleu

    w = min(args.warmup_segments, len(hyps))
    metric = fastbleu.BLEU(tokenize=args.tokenize)
    if args.child != "profile":
        getattr(metric, args.child)(hyps[:w], [refs[:w]])
        before = peak_rss_mib()
        t0 = time.perf_counter()
        getattr(metric, args.child)(hyps, [refs])
        return {"call": args.child, "seconds": time.perf_counter() - t0,
                "peak_rss_mib_before": round(before, 1),
                "peak_rss_mib_after": round(peak_rss_mib(), 1),
                "peak_rss_mib_added": round(peak_rss_mib() - before, 1)}
    metric.corpus_score(hyps[:w], [refs[:w]])  # compile or load the kernels
    pieces = Pieces(metric, hyps, refs)
    if args.instructions_runs is not None:  # under callgrind: count one piece
        pieces.run_all(args.child_piece)
        with common.instrumented():
            for _ in range(args.instructions_runs):
                pieces.run_all(args.child_piece)
        return {"call": "instructions"}
    n = len(hyps)
    best = dict.fromkeys(PIECES, float("inf"))
    for _ in range(args.repeat):
        spent = {piece: pieces.run_all(piece) for piece in PIECES}
        best = {k: min(best[k], spent[k]) for k in best}
    return {"call": "profile", "batch_size": pieces.size,
            "ns_per_segment": {k: round(v / n * 1e9, 1) for k, v in best.items()},
            "total_ns_per_segment": round(sum(best.values()) / n * 1e9, 1)}


class Pieces:
    """The three pieces of ``corpus_score``, batch by batch as it runs them, on one thread:
    converting the lists, the tokenizer kernel (both sides), the counting kernel.  Private
    modules on purpose: the profile times the pieces apart."""

    def __init__(self, metric, hyps, refs):
        import numpy as np

        from fastbleu.statistics import tokens as statistics
        from fastbleu._kernels.bleu.counting import row_width, segment_statistics
        from fastbleu.statistics.tokens import HashBuffer, References, tokenize
        from fastbleu.inputs.text import as_text_column

        self.size = getattr(statistics, "KERNEL_BATCH_SIZE", statistics.BATCH_SIZE)
        self.metric, self.hyps, self.refs = metric, hyps, refs
        self.np, self.count_kernel, self.width = np, segment_statistics, row_width(4)
        self.tokenize, self.references, self.as_text = tokenize, References, as_text_column
        self.buffers = HashBuffer(), HashBuffer()
        self.batches = [(f, min(len(hyps), f + self.size)) for f in range(0, len(hyps), self.size)]
        self.text = [self._convert(f, l) for f, l in self.batches]
        self.tokens = [self._tokenize(*t) for t in self.text[:1]]

    def _convert(self, first, last):
        return (self.as_text(self.hyps[first:last], "hypotheses"),
                self.as_text(self.refs[first:last], "references", allow_null=True))

    def _tokenize(self, h, r):
        tok = self.metric.tokenizer
        return (self.tokenize(h, tok, False, self.buffers[0]),
                self.references.tokenized([r], tok, False, self.buffers[1]))

    def run_all(self, piece: str) -> float:
        """Process seconds of ``piece`` over every batch."""
        spent = 0.0
        for (first, last), text in zip(self.batches, self.text):
            if piece == "convert":
                t0 = time.process_time()
                self._convert(first, last)
                spent += time.process_time() - t0
                continue
            t0 = time.process_time()
            h, r = self._tokenize(*text)
            t1 = time.process_time()
            if piece == "tokenize":
                spent += t1 - t0
                continue
            stats = self.np.empty((last - first, self.width), dtype=self.np.int64)
            t1 = time.process_time()
            self.count_kernel(h.hashes, h.start, h.count, r.hashes, r.start, r.count, 4, stats)
            spent += time.process_time() - t1
        return spent


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
    p.add_argument("--instructions", action="store_true",
                   help="count each piece's instructions per segment with valgrind's callgrind "
                        "(one thread, the first --instructions-segments segments)")
    p.add_argument("--instructions-segments", type=int, default=16_384)
    p.add_argument("--child", choices=("corpus_score", "sentence_scores", "profile"),
                   help=argparse.SUPPRESS)
    p.add_argument("--child-piece", choices=PIECES, help=argparse.SUPPRESS)
    p.add_argument("--instructions-runs", type=int, help=argparse.SUPPRESS)
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
    common.quiet_logs()
    run_fast = args.only in ("all", "fastbleu")
    run_sacre = args.only in ("all", "sacrebleu")

    # -- corpus ------------------------------------------------------------------------
    t0 = time.perf_counter()
    if args.hyp or have_wmt22(args.wmt_dir):
        files = list(zip(args.hyp, args.ref)) if args.hyp else wmt22_files(args.wmt_dir)
        base_hyps, base_refs = load_corpus(files)
        hyps, refs = cycle_to(base_hyps, args.segments), cycle_to(base_refs, args.segments)
        source = "--hyp/--ref files" if args.hyp else "WMT22"
    else:
        files, source = [], "SYNTHETIC data (no WMT22)"
        hyps, refs, _ = common.corpus(args.segments, args.wmt_dir)
        base_hyps = hyps[:20_000]
    load_seconds = time.perf_counter() - t0
    n = len(hyps)
    n_sacre = min(args.sacrebleu_segments, n)
    rss_loaded = peak_rss_mib()
    if args.child:
        print(json.dumps(child(args, hyps, refs)))
        return 0
    print(f"corpus: {len(files)} system output(s) from {source}: {len(base_hyps):,} segments, "
          f"cycled to {n:,} ({load_seconds:.1f} s to read)")
    print(f"tokenize={args.tokenize}, one reference, default options")

    results: list[dict] = []
    info: dict = {
        **common.machine_info(), "data": source, "tokenize": args.tokenize, "segments": n,
        "base_segments": len(base_hyps), "files": [[h.name, r.name] for h, r in files],
        "repeat": args.repeat, "sacrebleu_segments": n_sacre,
        "sacrebleu_repeat": args.sacrebleu_repeat, "warmup_segments": args.warmup_segments,
        "peak_rss_mib_after_loading": round(rss_loaded, 1),
    }

    # -- fresh processes: memory, one-thread profile ------------------------------------
    passed = [a for a in argv if a not in ("--rss", "--profile", "--instructions")]
    if args.instructions:
        n_i = args.instructions_segments
        base = [__file__, "--segments", str(n_i), "--tokenize", args.tokenize,
                "--wmt-dir", str(args.wmt_dir), "--child", "profile", "--warmup-segments",
                str(min(args.warmup_segments, n_i))]
        counts = info["instructions_per_segment"] = {}
        for piece in PIECES:
            counts[piece] = round(common.instructions(
                lambda runs, p=piece: base + ["--child-piece", p, "--instructions-runs",
                                              str(runs)]) / n_i, 1)
            print(f"callgrind, one thread, {n_i:,} segments: {piece} {counts[piece]:,.1f} "
                  "instructions per segment", flush=True)
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

    common.write_json(args.json, {"info": info, "results": results, "score_check": check})
    return 1 if check is not None and not (check["abs_diff"] == 0
                                           and check["same_statistics"]) else 0


if __name__ == "__main__":
    sys.exit(main())
