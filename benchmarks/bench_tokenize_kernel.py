#!/usr/bin/env python3
"""One-thread time of the tokenizer kernel alone, and a digest of its output.

What is measured
----------------
The 74,617 base WMT22 segments a side of ``bench_corpus.py`` (every en/de
system output and its first reference, ``../shared/wmt22``), converted once
to text columns in batches of ``KERNEL_BATCH_SIZE`` (16,384) segments.  For
each tokenizer given, ``fastbleu.statistics.tokenize`` of every batch of both
sides into one reused hash buffer is timed by process time, best of
``--repeat`` rounds (a round times every tokenizer once, so that a change of
load affects them alike), and reported in ns per segment of one side.  Run it
with ``NUMBA_NUM_THREADS=1`` (it sets that itself if unset) and
``FASTBLEU_NO_AOT=1`` for the JIT kernels.

The digest is a SHA-256 of every segment's token count and hashes (compacted):
two trees that print the same digest tokenize the corpus bit for bit alike.

    NUMBA_CACHE_DIR=/tmp/nc-x FASTBLEU_NO_AOT=1 python benchmarks/bench_tokenize_kernel.py

``--kernel-passes N`` instead runs the chunk kernel ``tokenize_chunk`` of the
first tokenizer given ``N`` times over the first 10,000 segments of each side
(one column, one call each) after a warm-up call on one segment, and times
nothing: for instruction counts, e.g. the difference of ``N = 3`` and ``N = 1`` in

    valgrind --tool=callgrind --branch-sim=yes python benchmarks/bench_tokenize_kernel.py \
        --tokenize 13a --kernel-passes 3
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("NUMBA_NUM_THREADS", "1")
sys.path.insert(0, str(Path(__file__).resolve().parent))

import bench_corpus  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tokenize", nargs="+", default=["13a", "none", "char"])
    p.add_argument("--repeat", type=int, default=7)
    p.add_argument("--kernel-passes", type=int, default=None)
    p.add_argument("--wmt-dir", type=Path,
                   default=Path(__file__).resolve().parent.parent.parent / "shared" / "wmt22")
    args = p.parse_args(argv)

    import numpy as np

    from fastbleu.statistics.tokens import KERNEL_BATCH_SIZE, HashBuffer, compact, tokenize
    from fastbleu.inputs.text import as_text_column
    from fastbleu.tokenizers import get_tokenizer

    hyps, refs = bench_corpus.load_corpus(bench_corpus.wmt22_files(args.wmt_dir))
    n = len(hyps)
    if args.kernel_passes is not None:
        return kernel_passes(hyps[:10_000] + refs[:10_000], args.tokenize[0], args.kernel_passes)
    batches = [as_text_column(side[first:first + KERNEL_BATCH_SIZE], "text")
               for side in (hyps, refs) for first in range(0, n, KERNEL_BATCH_SIZE)]
    import fastbleu
    print(f"fastbleu from {Path(fastbleu.__file__).parent}")
    tokenizers = {name: get_tokenizer(name) for name in args.tokenize}
    buffer = HashBuffer()
    for name, tok in tokenizers.items():  # warm up, and the digest
        digest = hashlib.sha256()
        for batch in batches:
            t = compact(tokenize(batch, tok, False))
            digest.update(t.count.astype(np.int64).tobytes())
            digest.update(t.hashes.tobytes())
        print(f"{name}: digest {digest.hexdigest()[:16]}", flush=True)
    best = dict.fromkeys(tokenizers, float("inf"))
    for _ in range(args.repeat):
        for name, tok in tokenizers.items():
            t0 = time.process_time()
            for batch in batches:
                tokenize(batch, tok, False, buffer)
            best[name] = min(best[name], time.process_time() - t0)
    for name, seconds in best.items():
        print(f"{name}: {seconds / (2 * n) * 1e9:.1f} ns per segment of one side "
              f"(best of {args.repeat})")
    return 0


def kernel_passes(lines: list[str], name: str, passes: int) -> int:
    import numpy as np

    from fastbleu._kernels.text.tokenize import tokenize_chunk
    from fastbleu.tokenizers import get_tokenizer

    raw = [line.encode() for line in lines]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in raw], out=offsets[1:])
    data = np.frombuffer(b"".join(raw), dtype=np.uint8).copy()  # writable, as in use
    n = len(raw)
    out = np.empty(int(offsets[-1]) + 1, dtype=np.uint64)
    count = np.empty(n, dtype=np.int64)
    start = np.empty(n, dtype=np.int64)
    kind = get_tokenizer(name).kernel
    tokenize_chunk(data, offsets, kind, out, count, start, 0, 1)
    for _ in range(passes):
        tokenize_chunk(data, offsets, kind, out, count, start, 0, n)
    print(f"{name}: {passes} passes over {n} segments, {int(count.sum())} tokens")
    return 0


if __name__ == "__main__":
    sys.exit(main())
