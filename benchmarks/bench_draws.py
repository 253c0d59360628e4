"""The bootstrap's and AR's draws, one thread: numpy's own calls against fastbleu's kernels.

``fastbleu.significance.draws`` makes numpy's values (``default_rng(seed).choice(n,
size)`` and ``integers(2, size, dtype=bool)``) with its own kernels, so that a chunk can
be drawn in pieces on the pool.  This times, on one thread and after a warm-up call,
nanoseconds a draw of

- ``numpy``: ``rng.choice(n, size=(rows, n))`` / ``rng.integers(2, ..., dtype=bool)``;
- ``alone``: the calling thread's kernel (what fewer than four pool threads use);
- ``scan``: the rejection scan a piece makes first on many threads (a word each);

checking that the values are numpy's.  Example::

    python benchmarks/bench_draws.py --segments 1000000 --rows 40 --repeat 5
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def _best(call, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--segments", type=int, default=1_000_000)
    parser.add_argument("--rows", type=int, default=40, help="resamples (or trials) a call")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--seed", type=int, default=12345)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()

    from fastbleu._kernels.draws import rejected_words
    from fastbleu.significance.draws import FlipDraws, IndexDraws

    n, rows, seed = args.segments, args.rows, args.seed
    count = n * rows
    theirs = np.random.default_rng(seed).choice(n, size=(rows, n))
    ours = IndexDraws(np.random.default_rng(seed), n, parallel=False)
    if not np.array_equal(ours.take(rows), theirs):
        raise SystemExit("draws differ from numpy's")
    coins = np.random.default_rng(seed).integers(2, size=(rows, n), dtype=bool)
    if not np.array_equal(FlipDraws(np.random.default_rng(seed), n, parallel=False)
                          .take(rows), coins):
        raise SystemExit("coins differ from numpy's")
    del theirs, coins

    draws = IndexDraws(np.random.default_rng(seed), n, parallel=False)
    flips = FlipDraws(np.random.default_rng(seed), n, parallel=False)
    rng = np.random.default_rng(seed)
    room = np.empty(count, dtype=np.int64)
    results = {
        "choice_numpy": _best(lambda: rng.choice(n, size=(rows, n)), args.repeat),
        "choice_alone": _best(lambda: draws.take(rows), args.repeat),
        "choice_scan": _best(lambda: rejected_words(draws.words, 0, count, n, room),
                             args.repeat),
        "coins_numpy": _best(lambda: rng.integers(2, size=(rows, n), dtype=bool),
                             args.repeat),
        "coins_alone": _best(lambda: flips.take(rows), args.repeat),
    }
    ns = {name: round(seconds / count * 1e9, 3) for name, seconds in results.items()}
    print(f"{count:,} draws a call, best of {args.repeat}, ns a draw (values checked)")
    for name, value in ns.items():
        print(f"  {name:<14} {value:7.3f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump({"segments": n, "rows": rows, "repeat": args.repeat,
                       "ns_per_draw": ns}, f, indent=1)


if __name__ == "__main__":
    main()
