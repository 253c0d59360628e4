#!/usr/bin/env python3
"""Instructions per segment of corpus BLEU's pieces, counted by valgrind (callgrind).

Timings on this shared two-core machine move by tens of percent with the
load; an instruction count does not.  ``valgrind --tool=callgrind`` counts
the instructions a process executes whatever else runs beside it (``perf``
has no hardware counters in these virtual machines).

What is counted
---------------
The first ``--segments`` WMT22 en/de segments of ``bench_corpus.py``'s
corpus (hypotheses and their first reference, 13a unless ``--tokenize``),
as Python lists.  A child process loads them, warms the kernels up (numba's
compile or cache load), prepares the inputs of each piece, then switches
callgrind's instrumentation on (``callgrind_control -i on``) around
``--repeat`` runs of one piece, on one thread:

``convert``
    the lists to Arrow-style text (``fastbleu.text.as_text_column``, both sides);
``tokenize``
    the tokenizer kernel on both sides (``fastbleu.statistics.tokenize``);
``count``
    the counting kernel (``segment_statistics``) on the token hashes.

The child runs twice, with 1 and with ``1 + --repeat`` runs, and the
difference divided by ``--repeat * --segments`` is the piece's count per
segment: what the switching, the warm-up and the set-up cost cancels out.
Dividing a piece's one-thread process time (``bench_corpus.py --profile``)
by its count, with the clock measured by ``--clock`` (a chain of dependent
multiply-adds, 4 cycles per step), gives its instructions per cycle.

Usage::

    python benchmarks/count_instructions.py                 # all three pieces
    python benchmarks/count_instructions.py --piece count --segments 16384
    python benchmarks/count_instructions.py --clock         # the core's clock, GHz

Each child run takes 10-30 s under valgrind; the whole default run about two minutes.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PIECES = ("convert", "tokenize", "count")


def child(piece: str, runs: int, segments: int, tokenize: str) -> None:
    """Load, warm up, then count ``runs`` runs of ``piece`` with instrumentation on."""
    sys.path.insert(0, str(REPO))
    sys.path.insert(0, str(HERE))
    import numpy as np

    import bench_corpus
    from fastbleu import BLEU
    from fastbleu._kernels.bleu.counting import row_width, segment_statistics
    from fastbleu.statistics.tokens import HashBuffer, References, tokenize as tokenize_column
    from fastbleu.inputs.text import as_text_column

    hyps, refs = bench_corpus.load_corpus(bench_corpus.wmt22_files(bench_corpus.DEFAULT_WMT_DIR))
    hyps, refs = hyps[:segments], refs[:segments]
    metric = BLEU(tokenize=tokenize)
    metric.corpus_score(hyps[:2000], [refs[:2000]])
    h = as_text_column(hyps, "hypotheses")
    r = as_text_column(refs, "references", allow_null=True)
    buffers = HashBuffer(), HashBuffer()
    hyp = tokenize_column(h, metric.tokenizer, False, buffers[0])
    ref = References.tokenized([r], metric.tokenizer, False, buffers[1])
    stats = np.empty((len(hyps), row_width(4)), dtype=np.int64)
    segment_statistics(hyp.hashes, hyp.start, hyp.count, ref.hashes, ref.start, ref.count, 4,
                       stats)

    def instrument(switch: str) -> None:
        subprocess.run(["callgrind_control", "-i", switch, str(os.getpid())],
                       stdout=subprocess.DEVNULL, check=True)

    instrument("on")
    for _ in range(runs):
        if piece == "convert":
            as_text_column(hyps, "hypotheses")
            as_text_column(refs, "references", allow_null=True)
        elif piece == "tokenize":
            tokenize_column(h, metric.tokenizer, False, buffers[0])
            References.tokenized([r], metric.tokenizer, False, buffers[1])
        else:
            segment_statistics(hyp.hashes, hyp.start, hyp.count, ref.hashes, ref.start,
                               ref.count, 4, stats)
    instrument("off")


def collected(piece: str, runs: int, args) -> int:
    """Instructions callgrind counted in a child doing ``runs`` runs of ``piece``."""
    env = dict(os.environ, NUMBA_NUM_THREADS="1")
    command = ["valgrind", "--tool=callgrind", "--instr-atstart=no",
               "--callgrind-out-file=/dev/null", sys.executable, str(Path(__file__).resolve()),
               "--child", piece, "--runs", str(runs), "--segments", str(args.segments),
               "--tokenize", args.tokenize]
    done = subprocess.run(command, env=env, capture_output=True, text=True)
    found = re.search(r"Collected : (\d+)", done.stderr)
    if done.returncode != 0 or not found:
        raise SystemExit(f"error: the callgrind child failed:\n{done.stderr[-2000:]}")
    return int(found.group(1))


def clock_ghz() -> float:
    """The core's clock, from a chain of dependent 64-bit multiply-adds (4 cycles a step)."""
    import numpy as np
    from numba import njit

    @njit
    def chain(n, a):
        x = np.uint64(1)
        for i in range(n):
            x = x * a + np.uint64(i)  # imul (3 cycles) then add (1), each on the last result
        return x

    chain(10, np.uint64(3))
    n = 100_000_000
    best = float("inf")
    for _ in range(5):
        start = time.process_time()
        chain(n, np.uint64(0x9E3779B97F4A7C15))
        best = min(best, time.process_time() - start)
    return 4 * n / best / 1e9


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--piece", choices=(*PIECES, "all"), default="all")
    parser.add_argument("--segments", type=int, default=16384)
    parser.add_argument("--repeat", type=int, default=2,
                        help="runs counted beyond the first (default 2)")
    parser.add_argument("--tokenize", default="13a")
    parser.add_argument("--clock", action="store_true", help="print the core's clock and exit")
    parser.add_argument("--json")
    parser.add_argument("--child", choices=PIECES, help=argparse.SUPPRESS)
    parser.add_argument("--runs", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        child(args.child, args.runs, args.segments, args.tokenize)
        return
    if args.clock:
        print(f"clock: {clock_ghz():.2f} GHz")
        return
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("error: valgrind is not installed (apt install valgrind)")
    result = {"segments": args.segments, "tokenize": args.tokenize, "repeat": args.repeat,
              "instructions_per_segment": {}}
    for piece in PIECES if args.piece == "all" else (args.piece,):
        once = collected(piece, 1, args)
        more = collected(piece, 1 + args.repeat, args)
        per_segment = (more - once) / args.repeat / args.segments
        result["instructions_per_segment"][piece] = round(per_segment, 1)
        print(f"{piece:9} {per_segment:8,.1f} instructions per segment", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main()
