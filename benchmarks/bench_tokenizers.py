#!/usr/bin/env python3
"""Throughput of every tokenizer, fastbleu against sacrebleu in the same run.

What is measured
----------------
Real WMT22 general-task data (``../shared/wmt22``, see its README).

Kernel tokenizers (``13a``, ``intl``, ``zh``, and ``char`` for reference), on
two corpora, each cycled to ``--segments`` segments (default 300,000), hypotheses
and their first reference as Python lists of ``str``:

* ``en,de``: every system output with an English or German target;
* ``zh``: every en-zh system output (Chinese, the text ``zh`` is for).

For each (corpus, tokenizer) it times, best of ``--repeat`` runs after a
warm-up call on a small slice (so numba's compilation or cache loading is not
counted):

(a) ``fastbleu.BLEU(tokenize=T).corpus_score(hyps, [refs])`` on all segments;
(b) the tokenizing stage alone: ``fastbleu.statistics.tokenize`` of the
    hypotheses and of the references;
(c) ``sacrebleu.metrics.BLEU(tokenize=T).corpus_score`` on the first
    ``--sacrebleu-segments`` segments (default 10,000), best of
    ``--sacrebleu-repeat``, with sacrebleu's tokenizer LRU caches cleared
    before each run.

fastbleu's score must equal sacrebleu's on sacrebleu's slice; the script
says so for every row.  "vs 13a" is the row's throughput over ``13a``'s on the
same corpus (the issue's target: intl and zh within 2x, i.e. >= 0.5).

``ja-mecab``, end to end: every en-ja system scored against the en-ja
reference(s), one ``corpus_score(hyps, refs)`` call per system on one metric
object each, as a user would loop over systems, for fastbleu and sacrebleu in
turn.  Both start with empty tokenizer caches (sacrebleu's LRU cache; a
fresh fastbleu MeCab tokenizer), so MeCab analyses each distinct line once in
both.  Best of ``--repeat`` for fastbleu and ``--sacrebleu-repeat`` for
sacrebleu; the scores must be equal.  Target: fastbleu >= 3x sacrebleu.

Run from the repository root (the machine should otherwise be idle)::

    python benchmarks/bench_tokenizers.py --json benchmarks/results/tokenizers.json
    python benchmarks/bench_tokenizers.py --segments 50000 --only ja-mecab   # quick
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

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # this checkout's fastbleu, not an installed one

DEFAULT_WMT_DIR = REPO.parent / "shared" / "wmt22"
KERNEL_TOKENIZERS = ("13a", "intl", "zh", "char")
CORPORA = {"en,de": ("en", "de"), "zh": ("zh",)}


def read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line.rstrip("\n") for line in handle]


def system_files(wmt_dir: Path, targets: tuple[str, ...]) -> list[tuple[Path, list[Path]]]:
    """(system output, its pair's reference files) for every system with one of ``targets``."""
    out = []
    for hyp in sorted((wmt_dir / "system-outputs").glob("generaltest2022.*.hyp.*")):
        pair = hyp.name.split(".")[1]
        target = pair.split("-")[1]
        if target not in targets or not hyp.name.endswith("." + target):
            continue
        refs = sorted((wmt_dir / "references").glob(f"generaltest2022.{pair}.ref.*.{target}"))
        if refs:
            out.append((hyp, refs))
    if not out:
        raise SystemExit(f"error: no system outputs for {targets} under {wmt_dir}")
    return out


def corpus(wmt_dir: Path, targets: tuple[str, ...], n: int) -> tuple[list[str], list[str]]:
    hyps, refs = [], []
    for hyp, ref_paths in system_files(wmt_dir, targets):
        hyps += read_lines(hyp)
        refs += read_lines(ref_paths[0])
    reps = -(-n // len(hyps))
    return (hyps * reps)[:n], (refs * reps)[:n]


def best_of(repeat: int, fn, before=None) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        if before is not None:
            before()
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def clear_sacrebleu_caches(metric) -> None:
    """Empty the class-level LRU caches of a sacrebleu tokenizer (and of its 13a stage)."""
    for tokenizer in (metric.tokenizer, getattr(metric.tokenizer, "_post_tokenizer", None)):
        for attr in ("__call__", "_is_chinese_char"):
            fn = getattr(type(tokenizer), attr, None) if tokenizer is not None else None
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()


def stats_of(score) -> tuple:
    return (tuple(score.counts), tuple(score.totals), score.sys_len, score.ref_len)


def bench_kernels(args, results: list[dict]) -> None:
    from sacrebleu.metrics import BLEU as SacreBLEU

    from fastbleu import BLEU
    from fastbleu.statistics import tokenize
    from fastbleu.text import as_text_column
    from fastbleu.tokenizers import get_tokenizer

    for corpus_name, targets in CORPORA.items():
        hyps, refs = corpus(args.wmt_dir, targets, args.segments)
        hyp_col, ref_col = as_text_column(hyps, "h"), as_text_column(refs, "r")
        base = None
        for name in KERNEL_TOKENIZERS:
            if args.only and name not in args.only:
                continue
            bleu = BLEU(tokenize=name, force=True)
            bleu.corpus_score(hyps[:1000], [refs[:1000]])  # compile or load the kernels
            fast_s, fast_score = best_of(args.repeat,
                                         lambda: bleu.corpus_score(hyps, [refs]))
            tok = get_tokenizer(name)
            tok_s, _ = best_of(args.repeat, lambda: (tokenize(hyp_col, tok, False),
                                                     tokenize(ref_col, tok, False)))
            m = args.sacrebleu_segments
            sacre = SacreBLEU(tokenize=name, force=True)
            sacre_s, sacre_score = best_of(args.sacrebleu_repeat,
                                           lambda: sacre.corpus_score(hyps[:m], [refs[:m]]),
                                           lambda: clear_sacrebleu_caches(sacre))
            check = bleu.corpus_score(hyps[:m], [refs[:m]])
            row = {"corpus": corpus_name, "tokenizer": name, "segments": len(hyps),
                   "fastbleu_s": fast_s, "fastbleu_seg_per_s": len(hyps) / fast_s,
                   "tokenize_only_s": tok_s, "tokenize_only_seg_per_s": len(hyps) / tok_s,
                   "sacrebleu_segments": m, "sacrebleu_s": sacre_s,
                   "sacrebleu_seg_per_s": m / sacre_s,
                   "same_as_sacrebleu": check.score == sacre_score.score
                   and stats_of(check) == stats_of(sacre_score),
                   "score_full_corpus": fast_score.score}
            row["vs_sacrebleu"] = row["fastbleu_seg_per_s"] / row["sacrebleu_seg_per_s"]
            if name == "13a":
                base = row
            if base is not None:
                row["vs_13a"] = row["fastbleu_seg_per_s"] / base["fastbleu_seg_per_s"]
                row["tokenize_only_vs_13a"] = (row["tokenize_only_seg_per_s"]
                                               / base["tokenize_only_seg_per_s"])
            results.append(row)
            print(f"{corpus_name:6} {name:5} fastbleu {row['fastbleu_seg_per_s']:>11,.0f} seg/s"
                  f" (tokenize only {row['tokenize_only_seg_per_s']:>11,.0f})  sacrebleu "
                  f"{row['sacrebleu_seg_per_s']:>7,.0f} seg/s  {row['vs_sacrebleu']:6.1f}x"
                  f"  vs 13a {row.get('vs_13a', float('nan')):.2f}"
                  f" (tokenize only {row.get('tokenize_only_vs_13a', float('nan')):.2f})"
                  f"  same: {row['same_as_sacrebleu']}", flush=True)


def bench_mecab(args, results: list[dict]) -> None:
    from sacrebleu.metrics import BLEU as SacreBLEU
    from sacrebleu.tokenizers.tokenizer_ja_mecab import TokenizerJaMecab

    from fastbleu import BLEU
    from fastbleu.tokenizers_mecab import mecab_tokenizer

    files = system_files(args.wmt_dir, ("ja",))
    systems = [read_lines(hyp) for hyp, _ in files]
    refs = [read_lines(p) for p in files[0][1]]
    segments = sum(len(s) for s in systems)

    def fast():
        mecab_tokenizer.cache_clear()  # a fresh tokenizer: nothing analysed yet
        bleu = BLEU(tokenize="ja-mecab", force=True)
        return [bleu.corpus_score(hyps, refs) for hyps in systems]

    def sacre():
        bleu = SacreBLEU(tokenize="ja-mecab", force=True)
        return [bleu.corpus_score(hyps, refs) for hyps in systems]

    fast()  # load the kernels
    fast_s, fast_scores = best_of(args.repeat, fast)
    sacre_s, sacre_scores = best_of(args.sacrebleu_repeat, sacre,
                                    lambda: TokenizerJaMecab.__call__.cache_clear())
    same = all(a.score == b.score and stats_of(a) == stats_of(b)
               for a, b in zip(fast_scores, sacre_scores))
    row = {"corpus": "en-ja systems", "tokenizer": "ja-mecab", "systems": len(systems),
           "segments": segments, "fastbleu_s": fast_s, "fastbleu_seg_per_s": segments / fast_s,
           "sacrebleu_segments": segments, "sacrebleu_s": sacre_s,
           "sacrebleu_seg_per_s": segments / sacre_s, "vs_sacrebleu": sacre_s / fast_s,
           "same_as_sacrebleu": same}
    results.append(row)
    print(f"en-ja  ja-mecab, {len(systems)} systems x {segments // len(systems)} segments: "
          f"fastbleu {fast_s:.3f} s, sacrebleu {sacre_s:.3f} s, {row['vs_sacrebleu']:.2f}x  "
          f"same: {same}", flush=True)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--wmt-dir", type=Path, default=DEFAULT_WMT_DIR)
    p.add_argument("--segments", type=int, default=300_000,
                   help="segments per corpus for the kernel tokenizers")
    p.add_argument("--sacrebleu-segments", type=int, default=10_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--sacrebleu-repeat", type=int, default=1)
    p.add_argument("--only", nargs="+", choices=(*KERNEL_TOKENIZERS, "ja-mecab"),
                   help="only these tokenizers (13a is the reference for 'vs 13a')")
    p.add_argument("--json", type=Path, help="write the results here")
    args = p.parse_args(argv)
    for name in ("sacrebleu", "fastbleu"):
        logging.getLogger(name).setLevel(logging.ERROR)
    import numba

    print(f"fastbleu from {__import__('fastbleu').__file__}; numba threads: "
          f"{numba.config.NUMBA_NUM_THREADS}", flush=True)
    results: list[dict] = []
    if not args.only or set(args.only) & set(KERNEL_TOKENIZERS):
        bench_kernels(args, results)
    if not args.only or "ja-mecab" in args.only:
        bench_mecab(args, results)
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        meta = {"date": time.strftime("%Y-%m-%d %H:%M:%S"), "argv": sys.argv,
                "python": platform.python_version(), "cpus": os.cpu_count(),
                "numba_threads": numba.config.NUMBA_NUM_THREADS}
        args.json.write_text(json.dumps({"meta": meta, "results": results}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
