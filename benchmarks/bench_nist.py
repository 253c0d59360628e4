#!/usr/bin/env python3
"""Corpus NIST on WMT22 systems: fastbleu against NLTK's ``corpus_nist``, in the same run.

What is measured
----------------
Every system output of the WMT22 pairs with a space-delimited target
(``cs-en``, ``de-en``, ``en-de``; ``../shared/wmt22``, see its README), each
scored as its own corpus against *all* references of its pair (two or three),
as NIST is reported: one corpus NIST per system.  Three ways, timed per
system and summed:

1. ``nltk.translate.nist_score.corpus_nist`` on token lists (sacrebleu's 13a
   tokenizer, tokenized once before timing, reference lists shared by the
   systems of a pair);
2. ``fastbleu.nltk.corpus_nist`` on the same token lists (its scores must be
   NLTK's exactly, ``==``);
3. ``fastbleu.NIST().corpus_score`` on the raw text: tokenization included
   (its scores must agree with NLTK's to 1e-12 relative);
4. ``fastbleu.NIST(references=...)``, built once per pair (its references
   tokenized and their information weights computed once; that time is
   added once per pair), then ``corpus_score(hyps, None)`` per system: the
   way to score many systems of one test set (scores equal to 3., ``==``).

fastbleu's times are the best of ``--repeat`` (default 3) after a warm-up
call, so numba's compilation or cache loading is not timed; NLTK runs once.
``--segments`` cuts every file to its first lines (default: whole files).

Running it
----------
From the repository root::

    python benchmarks/bench_nist.py --json benchmarks/results/nist.json
    python benchmarks/bench_nist.py --pairs de-en --segments 500   # quick look
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
WMT22 = Path(os.environ.get("FASTBLEU_WMT22", ROOT.parent / "shared" / "wmt22"))


def read(path: Path, limit: int | None) -> list[str]:
    with open(path, encoding="utf-8", newline="\n") as handle:
        lines = [line.rstrip("\n") for line in handle]
    return lines[:limit] if limit else lines


def best_of(repeat: int, function, *args):
    best, value = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function(*args)
        best = min(best, time.perf_counter() - start)
    return best, value


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", nargs="+", default=["cs-en", "de-en", "en-de"])
    parser.add_argument("--segments", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)

    import numba
    from nltk.translate.nist_score import corpus_nist as nltk_corpus_nist
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    import fastbleu
    from fastbleu import NIST
    from fastbleu.nltk import corpus_nist

    tok = Tokenizer13a()
    rows = []
    totals = {"nltk": 0.0, "fastbleu_nltk": 0.0, "fastbleu_text": 0.0, "fastbleu_cached": 0.0}
    warmed = False
    n_segments = 0
    for pair in args.pairs:
        target = pair.split("-")[1]
        ref_paths = sorted((WMT22 / "references").glob(f"generaltest2022.{pair}.ref.*.{target}"))
        streams = [read(path, args.segments) for path in ref_paths]
        ref_tokens = [[tok(s[i]).split() for s in streams] for i in range(len(streams[0]))]
        if not warmed:
            NIST(references=[s[:50] for s in streams]).corpus_score(streams[0][:50], None)
        t_cache, cached = best_of(args.repeat, lambda: NIST(references=streams))
        totals["fastbleu_cached"] += t_cache
        for path in sorted((WMT22 / "system-outputs").glob(f"generaltest2022.{pair}.hyp.*")):
            hyps = read(path, args.segments)
            hyp_tokens = [tok(line).split() for line in hyps]
            if not warmed:
                corpus_nist(ref_tokens[:50], hyp_tokens[:50])
                NIST().corpus_score(hyps[:50], [s[:50] for s in streams])
                warmed = True
            start = time.perf_counter()
            expected = nltk_corpus_nist(ref_tokens, hyp_tokens)
            t_nltk = time.perf_counter() - start
            t_ours, ours = best_of(args.repeat, corpus_nist, ref_tokens, hyp_tokens)
            t_text, score = best_of(args.repeat, lambda: NIST().corpus_score(hyps, streams).score)
            t_cached, score_cached = best_of(args.repeat,
                                             lambda: cached.corpus_score(hyps, None).score)
            totals["fastbleu_cached"] += t_cached
            system = path.name.split(".hyp.")[1].rsplit(".", 1)[0]
            rows.append({"pair": pair, "system": system, "segments": len(hyps),
                         "refs": len(streams), "nltk_s": t_nltk, "fastbleu_nltk_s": t_ours,
                         "fastbleu_text_s": t_text, "fastbleu_cached_s": t_cached,
                         "cached_equal": score_cached == score, "nist": expected,
                         "nltk_api_equal": ours == expected,
                         "metric_rel_diff": abs(score - expected) / expected})
            totals["nltk"] += t_nltk
            totals["fastbleu_nltk"] += t_ours
            totals["fastbleu_text"] += t_text
            n_segments += len(hyps)
            print(f"{pair} {system:24s} {len(hyps):5d} segs  NLTK {t_nltk:7.3f} s  "
                  f"fastbleu.nltk {t_ours:7.4f} s ({t_nltk / t_ours:5.0f}x)  NIST() on text "
                  f"{t_text:7.4f} s ({t_nltk / t_text:5.0f}x)  cached refs {t_cached:7.4f} s "
                  f"({t_nltk / t_cached:5.0f}x)  NIST {expected:.4f} "
                  f"equal={ours == expected} rel={abs(score - expected) / expected:.1e}",
                  flush=True)
    summary = {
        "systems": len(rows), "segments": n_segments,
        "total_s": totals,
        "ratio_fastbleu_nltk": totals["nltk"] / totals["fastbleu_nltk"],
        "ratio_fastbleu_text": totals["nltk"] / totals["fastbleu_text"],
        "ratio_fastbleu_cached": totals["nltk"] / totals["fastbleu_cached"],
        "all_cached_equal": all(r["cached_equal"] for r in rows),
        "all_nltk_api_equal": all(r["nltk_api_equal"] for r in rows),
        "max_metric_rel_diff": max(r["metric_rel_diff"] for r in rows),
    }
    print(json.dumps(summary, indent=1))
    if args.json:
        result = {"benchmark": "bench_nist", "argv": sys.argv[1:], "summary": summary,
                  "rows": rows, "numba_threads": numba.config.NUMBA_NUM_THREADS,
                  "cpus": os.cpu_count(), "python": platform.python_version(),
                  "fastbleu": fastbleu.__version__,
                  "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
