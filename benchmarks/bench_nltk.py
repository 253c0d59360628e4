#!/usr/bin/env python3
"""Throughput of fastbleu.nltk against NLTK and fast-bleu on pre-tokenized WMT22 segments.

What is measured
----------------
The corpus is real WMT22 general-task data (``../shared/wmt22`` relative to the
repository, see its README): every system output whose target is English or
German (space-delimited languages), in sorted order, each segment with *all*
references of its language pair (two per pair), tokenized with ``str.split()``.
Each reference file is tokenized once and its token lists are shared by the
systems of the pair, as a user scoring several systems holds them.  The
segments are concatenated and cycled to ``--segments`` (default 100,000; the
en/de outputs hold about 74,600).  Token lists are Python lists of ``str``.

fastbleu numbers the tokens of each distinct reference *object* once, so the
shared lists save it work (NLTK recounts every segment's references anyway).
The rows marked "refs copied" time fastbleu on a deep copy where every
segment has its own reference lists: the case of one system, or of
references read separately for each system.

In one run, the script times

1. corpus BLEU (default weights, no smoothing):
   ``fastbleu.nltk.corpus_bleu`` on the lists and on Arrow columns (hypotheses
   ``list<string>``, references ``list<list<string>>``; the Arrow conversion is
   not timed), against ``nltk.translate.bleu_score.corpus_bleu``;
2. sentence BLEU of every segment (default weights, smoothing method 1, the
   one fast-bleu also implements): ``fastbleu.nltk.sentence_bleu_many`` on the
   lists and on Arrow columns, against NLTK's ``sentence_bleu`` in a loop and
   against fast-bleu (``pip install fast-bleu``, C++).

fastbleu runs are the best of ``--repeat`` (default 3), after a warm-up call
on a small slice so that numba's compilation or cache loading is not timed.
NLTK runs once (it takes tens of seconds).  Python's warnings are silenced
during timing (NLTK and fastbleu still issue them).

fast-bleu scores each hypothesis against *one shared* reference set; it has
no aligned (per-segment) references and no corpus-level BLEU.  The only way
to get NLTK's per-segment numbers from it is one ``fast_bleu.BLEU`` instance
per segment, which is what is timed (its numbers are checked against NLTK's).
That runs in a child process with ``OMP_NUM_THREADS=1``: with its default
OpenMP team every instance pays the team's start-up, 20-60 times slower here
per segment.  For corpus BLEU, the table compares against the same fast-bleu
loop: the least fast-bleu must do to read these segments, though it yields
sentence scores, not the corpus score.

Correctness is checked in the same run: the corpus scores must equal NLTK's
exactly (``==``); the largest absolute difference of the sentence scores from
NLTK's loop is printed for fastbleu and fast-bleu.

Running it
----------
From the repository root, on an otherwise idle machine (about two minutes)::

    python benchmarks/bench_nltk.py
    python benchmarks/bench_nltk.py --segments 20000 --no-fast-bleu   # quick look
    python benchmarks/bench_nltk.py --json benchmarks/results/nltk.json

fastbleu's counting kernel runs on ``NUMBA_NUM_THREADS`` threads (default: all
cores); the number is printed with the results.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

common.use_checkout()
REPO = common.REPO
DEFAULT_WMT_DIR = common.WMT22
TARGETS = ("en", "de")
WEIGHTS = (0.25, 0.25, 0.25, 0.25)


# -- corpus ----------------------------------------------------------------------------------

def read_lines(path: Path) -> list[str]:
    with open(path, encoding="utf-8", newline="\n") as handle:
        return [line.rstrip("\n") for line in handle]


def load_corpus(wmt_dir: Path, segments: int) -> tuple[list, list]:
    """``(list_of_references, hypotheses)`` token lists, cycled to ``segments`` items."""
    outputs = wmt_dir / "system-outputs"
    if not outputs.is_dir():
        raise SystemExit(f"error: {outputs} not found; pass --wmt-dir")
    references: dict[str, list] = {}
    list_of_references, hypotheses = [], []
    for path in sorted(outputs.iterdir()):
        parts = path.name.split(".")  # generaltest2022.<pair>.hyp.<system>.<lang>
        pair, target = parts[1], parts[-1]
        if target not in TARGETS:
            continue
        if pair not in references:
            files = sorted((wmt_dir / "references").glob(f"generaltest2022.{pair}.ref.*.{target}"))
            streams = [[line.split() for line in read_lines(f)] for f in files]
            references[pair] = [list(refs) for refs in zip(*streams)]
        hyps = [line.split() for line in read_lines(path)]
        if len(hyps) != len(references[pair]):
            raise SystemExit(f"error: {path} is not aligned with its references")
        hypotheses += hyps
        list_of_references += references[pair]
    if not hypotheses:
        raise SystemExit(f"error: no en/de system outputs under {outputs}")
    reps = -(-segments // len(hypotheses))
    return (list_of_references * reps)[:segments], (hypotheses * reps)[:segments]


# -- timing ----------------------------------------------------------------------------------

def best_of(repeat: int, fn):
    best, result = float("inf"), None
    for _ in range(repeat):
        gc.collect()
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def fast_bleu_worker(args) -> None:
    """Child process: time fast-bleu, one instance per segment; write scores and time."""
    import numpy as np
    from fast_bleu import BLEU

    list_of_references, hypotheses = load_corpus(args.wmt_dir, args.segments)
    n = min(args.fast_bleu_segments or len(hypotheses), len(hypotheses))
    weights = {4: WEIGHTS}
    gc.collect()
    start = time.perf_counter()
    scores = [BLEU(refs, weights, smoothing_func=1).get_score([hyp])[4][0]
              for refs, hyp in zip(list_of_references[:n], hypotheses[:n])]
    seconds = time.perf_counter() - start
    np.save(args.fast_bleu_worker, np.array(scores))
    print(json.dumps({"seconds": seconds, "segments": n}))


def time_fast_bleu(args):
    """``(seconds, segments, scores)`` from a child process, or the reason it cannot run."""
    try:
        import fast_bleu  # noqa: F401
    except ImportError as error:
        return f"not installed ({error}); pip install fast-bleu"
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "scores.npy"
        command = [sys.executable, __file__, "--wmt-dir", str(args.wmt_dir), "--segments",
                   str(args.segments), "--fast-bleu-segments", str(args.fast_bleu_segments),
                   "--fast-bleu-worker", str(out)]
        env = {**os.environ, "OMP_NUM_THREADS": str(args.fast_bleu_threads)}
        run = subprocess.run(command, capture_output=True, text=True, env=env)
        if run.returncode:
            return f"failed: {run.stderr.strip().splitlines()[-1:]}"
        import numpy as np

        record = json.loads(run.stdout.strip().splitlines()[-1])
        return record["seconds"], record["segments"], np.load(out)


# -- main ------------------------------------------------------------------------------------

def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--wmt-dir", type=Path, default=DEFAULT_WMT_DIR)
    p.add_argument("--segments", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3, help="fastbleu runs (the best is reported)")
    p.add_argument("--no-fast-bleu", action="store_true", help="skip fast-bleu")
    p.add_argument("--fast-bleu-segments", type=int, default=0,
                   help="time fast-bleu on the first N segments only (0: all)")
    p.add_argument("--fast-bleu-threads", type=int, default=1,
                   help="OMP_NUM_THREADS for fast-bleu's child process")
    p.add_argument("--json", type=Path, help="also write the results here")
    p.add_argument("--fast-bleu-worker", type=Path, help=argparse.SUPPRESS)
    return p.parse_args(argv)


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.fast_bleu_worker:
        fast_bleu_worker(args)
        return

    import numba
    import numpy as np
    import pyarrow as pa
    from nltk.translate import bleu_score as nltk

    import fastbleu.nltk as fb

    list_of_references, hypotheses = load_corpus(args.wmt_dir, args.segments)
    n = len(hypotheses)
    tokens = sum(map(len, hypotheses)) + sum(len(r) for refs in list_of_references
                                               for r in refs)
    hyp_column = pa.array(hypotheses, pa.list_(pa.string()))
    ref_column = pa.array(list_of_references, pa.list_(pa.list_(pa.string())))
    copied_references = [[list(ref) for ref in refs] for refs in list_of_references]
    ours_method1 = fb.SmoothingFunction().method1
    nltk_method1 = nltk.SmoothingFunction().method1
    warnings.simplefilter("ignore")

    # Warm-up: numba compiles or loads its cache.
    fb.corpus_bleu(list_of_references[:300], hypotheses[:300])
    fb.sentence_bleu_many(list_of_references[:300], hypotheses[:300],
                          smoothing_function=ours_method1)

    rows = []  # (task, implementation, segments, seconds)
    t, ours_corpus = best_of(args.repeat, lambda: fb.corpus_bleu(list_of_references, hypotheses))
    rows.append(("corpus_bleu", "fastbleu.nltk (lists)", n, t))
    t, ours_corpus_copied = best_of(args.repeat,
                                    lambda: fb.corpus_bleu(copied_references, hypotheses))
    rows.append(("corpus_bleu", "fastbleu.nltk (lists, refs copied)", n, t))
    t, ours_corpus_arrow = best_of(args.repeat, lambda: fb.corpus_bleu(ref_column, hyp_column))
    rows.append(("corpus_bleu", "fastbleu.nltk (Arrow)", n, t))
    t, nltk_corpus = best_of(1, lambda: nltk.corpus_bleu(list_of_references, hypotheses))
    rows.append(("corpus_bleu", "NLTK 3.10", n, t))

    t, ours_many = best_of(args.repeat, lambda: fb.sentence_bleu_many(
        list_of_references, hypotheses, smoothing_function=ours_method1))
    rows.append(("sentence_bleu", "fastbleu.nltk sentence_bleu_many (lists)", n, t))
    t, ours_many_copied = best_of(args.repeat, lambda: fb.sentence_bleu_many(
        copied_references, hypotheses, smoothing_function=ours_method1))
    rows.append(("sentence_bleu", "fastbleu.nltk sentence_bleu_many (lists, refs copied)", n, t))
    t, ours_many_arrow = best_of(args.repeat, lambda: fb.sentence_bleu_many(
        ref_column, hyp_column, smoothing_function=ours_method1))
    rows.append(("sentence_bleu", "fastbleu.nltk sentence_bleu_many (Arrow)", n, t))
    t, nltk_many = best_of(1, lambda: [
        nltk.sentence_bleu(refs, hyp, smoothing_function=nltk_method1)
        for refs, hyp in zip(list_of_references, hypotheses)])
    rows.append(("sentence_bleu", "NLTK 3.10, loop", n, t))
    nltk_many = np.array(nltk_many, dtype=np.float64)

    cpp = "skipped (--no-fast-bleu)" if args.no_fast_bleu else time_fast_bleu(args)
    cpp_diff = None
    if isinstance(cpp, tuple):
        seconds, segments, scores = cpp
        rows.append(("sentence_bleu", "fast-bleu 0.0.90, instance per segment", segments, seconds))
        cpp_diff = float(np.max(np.abs(scores - nltk_many[:segments])))

    # -- report ----------------------------------------------------------------------------
    rate = {(task, impl): segs / secs for task, impl, segs, secs in rows}
    print(f"corpus: {n:,} WMT22 segments (en/de targets, 2 references each), "
          f"{tokens:,} tokens; kernel threads: {numba.config.NUMBA_NUM_THREADS}, "
          f"CPUs: {os.cpu_count()}, Python {platform.python_version()}")
    header = f"{'task':14s} {'implementation':54s} {'segments':>9s} {'seconds':>9s} " \
             f"{'segments/s':>11s} {'vs NLTK':>8s}"
    print(header)
    print("-" * len(header))
    for task, impl, segs, secs in rows:
        nltk_rate = rate[(task, "NLTK 3.10" if task == "corpus_bleu" else "NLTK 3.10, loop")]
        print(f"{task:14s} {impl:54s} {segs:9,d} {secs:9.3f} {segs / secs:11,.0f} "
              f"{segs / secs / nltk_rate:7.1f}x")
    if isinstance(cpp, tuple):
        ratio = rate[("corpus_bleu", "fastbleu.nltk (lists)")] / (cpp[1] / cpp[0])
        print(f"corpus_bleu vs fast-bleu's per-segment loop (sentence scores only, it has no "
              f"corpus BLEU): fastbleu.nltk (lists) is {ratio:.1f}x its throughput")
    else:
        print(f"fast-bleu: {cpp}")
    print()
    print(f"corpus_bleu == NLTK: lists {ours_corpus == nltk_corpus}, refs copied "
          f"{ours_corpus_copied == nltk_corpus}, Arrow {ours_corpus_arrow == nltk_corpus} "
          f"({nltk_corpus!r})")
    print("sentence scores, max |difference| from NLTK's loop: fastbleu lists "
          f"{np.max(np.abs(ours_many - nltk_many)):.3g}, refs copied "
          f"{np.max(np.abs(ours_many_copied - nltk_many)):.3g}, Arrow "
          f"{np.max(np.abs(ours_many_arrow - nltk_many)):.3g}"
          + ("" if cpp_diff is None else f", fast-bleu {cpp_diff:.3g}"))

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({
            "segments": n, "tokens": tokens, "numba_threads": numba.config.NUMBA_NUM_THREADS,
            "rows": [dict(task=t, implementation=i, segments=s, seconds=x) for t, i, s, x in rows],
            "corpus_equal": ours_corpus == nltk_corpus,
            "fast_bleu": cpp if isinstance(cpp, str) else None,
        }, indent=2))


if __name__ == "__main__":
    main()
