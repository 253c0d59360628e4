#!/usr/bin/env python3
"""Self-BLEU and shared-pool sentence BLEU (issue 15) against NLTK's loop, fast-bleu and sacrebleu.

What is measured
----------------
Sentences are WMT22 English system outputs (``../shared/wmt22``, every
``*.en`` file of ``system-outputs`` in sorted order, lines as read), split on
whitespace for the token-list APIs; the string APIs read the same lines with
sacrebleu's default ``13a`` tokenizer.

1. Self-BLEU of the first 10,000 lines (Texygen's recipe: uniform 4-gram
   weights, ``SmoothingFunction().method1``):

   * ``fastbleu.nltk.self_bleu`` (token lists; the numbering of the tokens is
     timed) against NLTK's loop ``sentence_bleu(others_i, s_i)``.  That loop is
     quadratic, so it is timed on ``--nltk-sample`` sentences, each against all
     9,999 others, and scaled by ``10,000 / sample``; those sentences' scores
     must equal fastbleu's exactly;
   * ``fastbleu.nltk.SelfBLEU`` against ``fast_bleu.SelfBLEU`` (C++, its
     default OpenMP threads), both on the token lists, construction and
     ``get_score()`` timed; the share of scores that agree to 1e-12 is printed
     (fast-bleu reads one reference length past its array, see the README);
   * ``fastbleu.BLEU(effective_order=True).self_scores`` on the strings, with
     sacrebleu's loop timed on a sample the same way.

2. Self-BLEU of 1,000,000 sentences: the 56,284 English lines cycled, every
   copy after the first with its words shuffled (seeded), so that most
   n-grams above unigrams are new as in real generated text (a plain cycle
   would repeat every n-gram 18 times).  ``BLEU.self_scores`` on the strings
   and ``fastbleu.nltk.self_bleu`` on the token lists.

3. Pool scores: 100,000 hypotheses (the first 100,000 of those sentences)
   against a 1,000,000-sentence pool (the 1M sentences of 2, cycled again
   with another shuffle), ``BLEU(effective_order=True).pool_scores``.
   sacrebleu's ``sentence_score(h, pool)`` is timed on a few hypotheses against a
   10,000-sentence pool and scaled linearly to the full size (it is linear in
   the pool size per hypothesis); fastbleu's scores of those hypotheses
   against that pool must equal sacrebleu's.

fastbleu runs are the best of ``--repeat`` after a warm-up on a small slice
(numba's cache loading is not timed).

Running it
----------
From the repository root (about 5 minutes)::

    python benchmarks/bench_self_bleu.py --json benchmarks/results/self-bleu.json
    python benchmarks/bench_self_bleu.py --skip-large      # only the 10k comparisons
    NUMBA_NUM_THREADS=1 python benchmarks/bench_self_bleu.py --parts --repeat 20   # fastbleu's parts
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import platform
import random
import resource
import time
import warnings
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

common.use_checkout()


def english_lines() -> list[str]:
    """Every WMT22 system output with an English target (the synthetic corpus without it)."""
    if not common.have_wmt22():
        print("SYNTHETIC data: no WMT22 (figures not comparable with the README's)")
        return common.corpus(60_000)[0]
    lines = []
    for path in sorted((common.WMT22 / "system-outputs").glob("*.en")):
        lines += common.read_lines(path)
    return lines


def parts(repeat: int) -> dict:
    """The parts of Self-BLEU on 10,000 sentences, in this process: ``SelfBLEU``'s token
    numbering (``_tokens(..., key=str)``), the leave-one-out kernel (``self_rows``) and
    the three public entry points; best of ``repeat`` calls by this thread's CPU time and
    by wall time, and minor page faults per call.  Private names on purpose (a profile);
    run with ``NUMBA_NUM_THREADS=1`` for single-threaded CPU times."""
    import resource

    from fastbleu import BLEU
    from fastbleu.metrics.bleu.pool import self_rows
    from fastbleu.nltk import SelfBLEU, SmoothingFunction, self_bleu
    from fastbleu.nltk.self_bleu import _tokens

    lines = english_lines()[:10_000]
    tokens = [line.split() for line in lines]
    method1 = SmoothingFunction().method1
    bleu = BLEU(effective_order=True)
    SelfBLEU(tokens[:50]).get_score()  # load or compile the kernels
    self_bleu(tokens[:50], smoothing_function=method1)
    bleu.self_scores(lines[:50])
    keys = _tokens(tokens, "tokens", key=str)
    calls = {
        "_tokens(key=str)": lambda: _tokens(tokens, "tokens", key=str),
        "self_rows": lambda: self_rows(keys, 4),
        "SelfBLEU": lambda: SelfBLEU(tokens).get_score(),
        "self_bleu": lambda: self_bleu(tokens, smoothing_function=method1),
        "self_scores": lambda: bleu.self_scores(lines),
    }
    out = {}
    for name, fn in calls.items():
        cpu, wall = [], []
        faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        for _ in range(repeat):
            c, w = time.thread_time(), time.perf_counter()
            fn()
            cpu.append(time.thread_time() - c)
            wall.append(time.perf_counter() - w)
        faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / repeat
        out[name] = {"cpu_ms": min(cpu) * 1e3, "wall_ms": min(wall) * 1e3,
                     "minor_faults_per_call": faults}
        print(f"{name:18s} cpu {min(cpu) * 1e3:6.1f} ms  wall {min(wall) * 1e3:6.1f} ms  "
              f"{faults:6.0f} faults/call", flush=True)
    return out


def shuffled_cycle(lines: list[str], n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = list(lines[:n])
    while len(out) < n:
        for line in lines:
            words = line.split()
            rng.shuffle(words)
            out.append(" ".join(words))
            if len(out) == n:
                break
    return out


def best(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--nltk-sample", type=int, default=5)
    parser.add_argument("--sacrebleu-sample", type=int, default=3)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--parts", action="store_true",
                        help="only fastbleu's parts on 10,000 sentences (best of --repeat)")
    parser.add_argument("--json")
    args = parser.parse_args()
    if args.parts:
        common.write_json(args.json, {"info": common.machine_info(), "parts": parts(args.repeat)})
        return
    warnings.simplefilter("ignore")

    import numba
    from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    from sacrebleu.metrics import BLEU as SacreBLEU

    from fastbleu import BLEU
    from fastbleu.nltk import SelfBLEU, self_bleu

    lines = english_lines()
    results = {"machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                           "numba_threads": numba.config.NUMBA_NUM_THREADS},
               "english_lines": len(lines)}
    method1 = SmoothingFunction().method1
    small = lines[:10000]
    tokens = [line.split() for line in small]
    bleu = BLEU(effective_order=True)
    self_bleu(tokens[:50], smoothing_function=method1)  # warm-up: load the kernels
    SelfBLEU(tokens[:50]).get_score()
    bleu.self_scores(small[:50])
    bleu.pool_scores(small[:50], small[50:100])

    # -- 1. 10,000 sentences --------------------------------------------------------------
    t_ours, ours = best(lambda: self_bleu(tokens, smoothing_function=method1), args.repeat)
    k = args.nltk_sample
    start = time.perf_counter()
    nltk_scores = [sentence_bleu(tokens[:i] + tokens[i + 1:], tokens[i],
                                 smoothing_function=method1) for i in range(k)]
    t_nltk = (time.perf_counter() - start) * len(tokens) / k
    assert [float(x) for x in nltk_scores] == ours[:k].tolist(), "differs from NLTK"
    row = {"fastbleu_nltk_self_bleu_s": t_ours, "nltk_loop_s_scaled": t_nltk,
           "nltk_sample": k, "speedup_vs_nltk": t_nltk / t_ours,
           "equal_to_nltk_on_sample": True}

    t_compat, compat = best(lambda: SelfBLEU(tokens).get_score(), args.repeat)
    row["fastbleu_SelfBLEU_s"] = t_compat
    try:
        from fast_bleu import SelfBLEU as FastSelfBLEU
    except ImportError:
        print("fast-bleu is not installed: pip install fast-bleu")
    else:
        t_fast, fast = best(lambda: FastSelfBLEU(tokens).get_score(), 1)
        a, b = np.array(compat[4]), np.array(fast[4])
        close = np.abs(a - b) <= 1e-12 * np.maximum(np.abs(b), 1e-300)
        row.update({"fast_bleu_SelfBLEU_s": t_fast, "speedup_vs_fast_bleu": t_fast / t_compat,
                    "agree_with_fast_bleu_1e-12": float(close.mean()),
                    "nltk_self_bleu_vs_fast_bleu_SelfBLEU": t_fast / t_ours})
    t_str, str_scores = best(lambda: bleu.self_scores(small), args.repeat)
    reference = SacreBLEU(effective_order=True)
    m = args.sacrebleu_sample
    start = time.perf_counter()
    sacre = [reference.sentence_score(small[i], small[:i] + small[i + 1:]).score
             for i in range(m)]
    t_sacre = (time.perf_counter() - start) * len(small) / m
    assert sacre == str_scores[:m].tolist(), "differs from sacrebleu"
    row.update({"fastbleu_BLEU_self_scores_s": t_str, "sacrebleu_loop_s_scaled": t_sacre,
                "sacrebleu_sample": m, "speedup_vs_sacrebleu": t_sacre / t_str})
    results["self_bleu_10k"] = row
    print(json.dumps(row, indent=1))

    if not args.skip_large:
        # -- 2. 1,000,000 sentences -----------------------------------------------------------
        million = shuffled_cycle(lines, 1_000_000, seed=1)
        t_million, _ = best(lambda: bleu.self_scores(million), 1)
        million_tokens = [line.split() for line in million]
        t_million_nltk, _ = best(lambda: self_bleu(million_tokens, smoothing_function=method1),
                                 1)
        del million_tokens
        row = {"sentences": len(million), "BLEU_self_scores_s": t_million,
               "nltk_self_bleu_s": t_million_nltk, "target_s": 60}
        results["self_bleu_1m"] = row
        print(json.dumps(row, indent=1))

        # -- 3. 100k hypotheses against a 1M pool ---------------------------------------------
        pool = shuffled_cycle(million, 1_000_000, seed=2)
        del million
        hyps = lines[:100_000] if len(lines) >= 100_000 else shuffled_cycle(lines, 100_000, 3)
        t_pool, _ = best(lambda: bleu.pool_scores(hyps, pool), 1)
        check_pool = pool[:10_000]
        start = time.perf_counter()
        sacre = [reference.sentence_score(h, check_pool).score for h in hyps[:m]]
        t_one = (time.perf_counter() - start) / m
        assert sacre == bleu.pool_scores(hyps[:m], check_pool).tolist(), "pool differs"
        t_sacre_pool = t_one * (len(pool) / len(check_pool)) * len(hyps)
        row = {"hypotheses": len(hyps), "pool": len(pool), "BLEU_pool_scores_s": t_pool,
               "sacrebleu_loop_s_scaled": t_sacre_pool,
               "speedup_vs_sacrebleu": t_sacre_pool / t_pool, "target_s": 30,
               "equal_to_sacrebleu_on_10k_pool_sample": True}
        results["pool_100k_1m"] = row
        print(json.dumps(row, indent=1))
    results["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print("peak RSS MiB", results["peak_rss_mib"])
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")


if __name__ == "__main__":
    main()
