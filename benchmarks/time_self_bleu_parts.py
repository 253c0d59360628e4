#!/usr/bin/env python3
"""The parts of fastbleu's Self-BLEU on 10,000 WMT22 sentences, timed in one process.

A finer view than ``bench_self_bleu.py`` (which also times the peers): the
token numbering of ``fastbleu.nltk.SelfBLEU`` (``_tokens(..., key=str)``),
the leave-one-out kernel (``self_rows``) and the three public entry points,
each the best of ``--repeat`` calls, by wall time and by this thread's CPU
time (which a loaded machine inflates less), with the minor page faults per
call.  Run it with ``NUMBA_NUM_THREADS=1`` for single-threaded CPU times; to
compare two checkouts, run it from each (``PYTHONPATH=<checkout>``) in turn::

    NUMBA_NUM_THREADS=1 PYTHONPATH=. python benchmarks/time_self_bleu_parts.py
"""

from __future__ import annotations

import argparse
import resource
import time

from bench_self_bleu import english_lines


def timed(fn, repeat: int) -> tuple[float, float, float]:
    """Best CPU ms, best wall ms and minor page faults per call."""
    cpu, wall = [], []
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(repeat):
        c, w = time.thread_time(), time.perf_counter()
        fn()
        cpu.append(time.thread_time() - c)
        wall.append(time.perf_counter() - w)
    faults = (resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults) / repeat
    return min(cpu) * 1e3, min(wall) * 1e3, faults


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    import fastbleu
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
    parts = {
        "_tokens(key=str)": lambda: _tokens(tokens, "tokens", key=str),
        "self_rows": lambda: self_rows(keys, 4),
        "SelfBLEU": lambda: SelfBLEU(tokens).get_score(),
        "self_bleu": lambda: self_bleu(tokens, smoothing_function=method1),
        "self_scores": lambda: bleu.self_scores(lines),
    }
    print(fastbleu.__file__)
    for name, fn in parts.items():
        cpu, wall, faults = timed(fn, args.repeat)
        print(f"{name:18s} cpu {cpu:6.1f} ms  wall {wall:6.1f} ms  {faults:6.0f} faults/call")


if __name__ == "__main__":
    main()
