#!/usr/bin/env python3
"""Sentence BLEU on token ids, as an RL reward computes it (issue 15, item 5).

What is measured
----------------
``--rows`` (default 1,000,000) hypothesis/reference pairs of ``--length``
(default 30) token ids each, one reference per hypothesis.  Ids are drawn
from a Zipf-Mandelbrot distribution over a 32,000-id vocabulary (weight
``1 / (rank + 2.7)``) with a fixed seed; a reference is its hypothesis with
30 % of the positions replaced by fresh draws and 10 % of neighbours swapped,
so that n-grams of every order match, as between a model's sample and its
target.  Options: sacrebleu's ``sentence_bleu`` defaults (``smooth_method="exp"``,
``effective_order=True``).

Timed, in rounds (each round runs every case once; the best round is reported;
building the inputs is not timed):

(a) ``BLEU(effective_order=True).sentence_scores(hyps, [refs])`` on ids given as
    - ``values+offsets``: ``TokenIds(values, offsets)`` over int64 numpy arrays;
    - ``2-D padded``: an int64 ``(rows, length + 2)`` array with two padding
      ids per row, ``TokenIds(array, pad_id=0)``;
    - ``2-D``: a plain ``(rows, length)`` int64 array (every id a token);
    - ``Python lists``: a list of lists of ints (converted inside the call);
(b) the same call on the ids joined by spaces as ``str``, with
    ``tokenize="none"`` (the string path; building the strings not timed);
(c) ``sacrebleu.metrics.BLEU(tokenize="none", effective_order=True).sentence_score``
    looped over the first ``--sacrebleu-rows`` strings (default 20,000), and
    nltk's ``sentence_bleu([ref], hyp, smoothing_function=method1)`` on the
    first ``--nltk-rows`` id lists (default 20,000; a common RL reward; its
    smoothing differs, so only its speed is compared), both **extrapolated**
    to ``--rows`` for the ratios.

CPU seconds (``time.process_time``, all threads) are recorded beside wall
seconds, since the machine is shared.  ``--profile`` adds where the CPU time
of the ``values+offsets`` case goes (best of ``--repeat``): hashing the ids
(``TokenIds.tokens``), the counting kernel, and the formula; run it with
``NUMBA_NUM_THREADS=1`` for single-thread costs.

Checks: every id form's scores equal the string path's exactly, and on the
sacrebleu slice they equal sacrebleu's ``sentence_score``.

Running it
----------
From the repository root::

    python benchmarks/bench_token_ids.py --json benchmarks/results/token-ids.json
    python benchmarks/bench_token_ids.py --rows 100000 --repeat 1      # quick check
    NUMBA_NUM_THREADS=1 python benchmarks/bench_token_ids.py --profile --json \
        benchmarks/results/token-ids-1thread.json

numba uses ``NUMBA_NUM_THREADS`` threads (default: all cores).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

common.use_checkout()
from fastbleu import BLEU, TokenIds  # noqa: E402

VOCAB = 32_000


def make_ids(rows: int, length: int, seed: int = 15) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    weights = 1.0 / (np.arange(VOCAB) + 2.7)
    cdf = np.cumsum(weights / weights.sum())

    def draw(size):
        return np.minimum(np.searchsorted(cdf, rng.random(size)), VOCAB - 1) + 1  # 0 is padding

    hyps = draw((rows, length))
    refs = hyps.copy()
    replace = rng.random((rows, length)) < 0.3
    refs[replace] = draw(int(replace.sum()))
    swap = np.flatnonzero(rng.random((rows, length - 1)).ravel() < 0.1)
    flat = refs.reshape(-1)
    row, col = np.divmod(swap, length - 1)
    left = row * length + col
    flat[left], flat[left + 1] = flat[left + 1].copy(), flat[left].copy()
    return hyps.astype(np.int64), refs.astype(np.int64)


def timed(function, repeat: int):
    """Best wall time of ``repeat`` calls, with its CPU time, and the last result."""
    best = None
    result = None
    for _ in range(repeat):
        gc.collect()
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if best is None or wall < best[0]:
            best = (wall, cpu)
    return best, result


def cpu_profile(bleu, hyps, refs, offsets, repeat: int) -> dict:
    """CPU seconds of hashing, counting (which includes hashing) and the formula, all rows."""
    from fastbleu.statistics.id_tokens import compute_id_statistics
    from fastbleu.statistics.tokens import BATCH_SIZE
    from fastbleu.statistics.token_ids import as_token_ids

    n = hyps.shape[0]
    h = as_token_ids(TokenIds(hyps.reshape(-1), offsets), "hypotheses")
    r = as_token_ids(TokenIds(refs.reshape(-1), offsets), "references[0]")

    def cpu(function):
        best = None
        for _ in range(repeat):
            start = time.process_time()
            value = function()
            best = min(best or 1e300, time.process_time() - start)
        return best, value

    hashing, _ = cpu(lambda: [(h.tokens(f, min(n, f + BATCH_SIZE)),
                               r.tokens(f, min(n, f + BATCH_SIZE)))
                              for f in range(0, n, BATCH_SIZE)])
    statistics, rows = cpu(lambda: compute_id_statistics(h, [r], max_order=4))
    formula, _ = cpu(lambda: bleu.formula.scores(rows, check=False))
    profile = {"hash_ids_cpu_s": hashing, "statistics_incl_hashing_cpu_s": statistics,
               "counting_kernel_cpu_s": statistics - hashing, "formula_cpu_s": formula}
    print("cpu profile:", {k: round(v, 3) for k, v in profile.items()}, flush=True)
    return profile


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--length", type=int, default=30)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--sacrebleu-rows", type=int, default=20_000)
    parser.add_argument("--nltk-rows", type=int, default=20_000)
    parser.add_argument("--profile", action="store_true",
                        help="also split the CPU time of the values+offsets case")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()

    n, length = args.rows, args.length
    hyps, refs = make_ids(n, length)
    bleu = BLEU(effective_order=True)
    bleu.sentence_scores(hyps[:10], [refs[:10]])  # load the kernels
    bleu.sentence_scores(hyps[:10].astype(np.int32), [refs[:10]])
    offsets = np.arange(n + 1, dtype=np.int64) * length
    pad = np.zeros((n, 2), dtype=np.int64)
    cases = {
        "values+offsets": lambda: (TokenIds(hyps.reshape(-1), offsets),
                                   [TokenIds(refs.reshape(-1), offsets)]),
        "2-D padded": lambda: (TokenIds(np.hstack([hyps, pad]), pad_id=0),
                               [TokenIds(np.hstack([refs, pad]), pad_id=0)]),
        "2-D": lambda: (hyps, [refs]),
    }
    results = {}
    reference_scores = None
    for name, make in cases.items():
        h, r = make()
        (wall, cpu), scores = timed(lambda: bleu.sentence_scores(h, r), args.repeat)
        results[name] = {"rows": n, "seconds": wall, "cpu_seconds": cpu, "rows_per_s": n / wall}
        if reference_scores is None:
            reference_scores = scores
        results[name]["equal_to_values_offsets"] = bool(np.array_equal(scores, reference_scores))
        print(f"{name:16s} {wall:7.3f} s  {n / wall:12,.0f} rows/s  (cpu {cpu:.2f} s)",
              flush=True)
        del h, r
    assert bleu.get_signature().format().split("|")[3] == "tok:ids"
    profile = cpu_profile(bleu, hyps, refs, offsets, args.repeat) if args.profile else None

    # -- strings: fastbleu's string path and sacrebleu ----------------------------------
    hyp_text = [" ".join(map(str, row)) for row in hyps.tolist()]
    ref_text = [" ".join(map(str, row)) for row in refs.tolist()]
    text_bleu = BLEU(tokenize="none", effective_order=True)
    text_bleu.sentence_scores(hyp_text[:10], [ref_text[:10]])
    (wall, cpu), text_scores = timed(lambda: text_bleu.sentence_scores(hyp_text, [ref_text]),
                                     args.repeat)
    results["strings (fastbleu, tokenize=none)"] = {
        "rows": n, "seconds": wall, "cpu_seconds": cpu, "rows_per_s": n / wall,
        "equal_to_values_offsets": bool(np.array_equal(text_scores, reference_scores))}
    print(f"{'fastbleu strings':16s} {wall:7.3f} s  {n / wall:12,.0f} rows/s  (cpu {cpu:.2f} s)",
          flush=True)

    from sacrebleu.metrics import BLEU as SacreBLEU

    k = min(args.sacrebleu_rows, n)
    sacre = SacreBLEU(tokenize="none", effective_order=True)
    (wall, cpu), sacre_scores = timed(
        lambda: [sacre.sentence_score(hyp_text[i], [ref_text[i]]).score for i in range(k)], 1)
    results["sacrebleu 2.6 sentence_score loop"] = {
        "rows": k, "seconds": wall, "cpu_seconds": cpu, "rows_per_s": k / wall,
        "equal_to_fastbleu": bool(np.array_equal(np.array(sacre_scores), reference_scores[:k]))}
    print(f"{'sacrebleu':16s} {wall:7.3f} s  {k / wall:12,.0f} rows/s on {k:,} rows", flush=True)
    del hyp_text, ref_text, text_scores
    gc.collect()

    # -- Python lists: fastbleu and nltk --------------------------------------------------
    hyp_lists, ref_lists = hyps.tolist(), refs.tolist()
    (wall, cpu), scores = timed(lambda: bleu.sentence_scores(hyp_lists, [ref_lists]),
                                args.repeat)
    results["Python lists"] = {"rows": n, "seconds": wall, "cpu_seconds": cpu,
                               "rows_per_s": n / wall,
                               "equal_to_values_offsets": bool(np.array_equal(scores,
                                                                              reference_scores))}
    print(f"{'Python lists':16s} {wall:7.3f} s  {n / wall:12,.0f} rows/s  (cpu {cpu:.2f} s)",
          flush=True)
    try:
        from nltk.translate.bleu_score import SmoothingFunction, sentence_bleu
    except ImportError:
        sentence_bleu = None
    if sentence_bleu is not None:
        k = min(args.nltk_rows, n)
        method1 = SmoothingFunction().method1
        (wall, cpu), _ = timed(lambda: [sentence_bleu([ref_lists[i]], hyp_lists[i],
                                                      smoothing_function=method1)
                                        for i in range(k)], 1)
        results["nltk sentence_bleu loop (id lists)"] = {"rows": k, "seconds": wall,
                                                         "cpu_seconds": cpu,
                                                         "rows_per_s": k / wall}
        print(f"{'nltk':16s} {wall:7.3f} s  {k / wall:12,.0f} rows/s on {k:,} rows", flush=True)

    sacre_rate = results["sacrebleu 2.6 sentence_score loop"]["rows_per_s"]
    for entry in results.values():
        entry["vs_sacrebleu"] = entry["rows_per_s"] / sacre_rate
    report = {
        "benchmark": "bench_token_ids.py", "rows": n, "length": length, "vocab": VOCAB,
        "options": "BLEU(effective_order=True), smooth exp, one reference",
        "numba_threads": int(os.environ.get("NUMBA_NUM_THREADS", os.cpu_count())),
        "cpus": os.cpu_count(), "python": platform.python_version(),
        "machine": platform.processor() or platform.machine(),
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "load_average_at_end": os.getloadavg(), "results": results,
    }
    if profile:
        report["cpu_profile_values_offsets"] = profile
    for name, entry in results.items():
        print(f"{name}: {entry['vs_sacrebleu']:.1f}x sacrebleu")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
