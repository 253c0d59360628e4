#!/usr/bin/env python3
"""TER: fastbleu against sacrebleu on 100k WMT22 segments, by length, threads, profile.

What is measured
----------------
``--parts`` selects any of four parts (default: all of them).

``corpus``: the corpus of ``common.corpus``: every
WMT22 system output with an English or German target (``../shared/wmt22``,
41 systems, 74,617 segments), each paired with the first reference of its
language pair, concatenated and cycled to ``--segments`` segments (default
100,000).  Every one of those language pairs has a second reference, which the
``refs2`` configuration adds as a second stream.  Hypotheses and references
are Python lists of ``str``.  For each configuration in ``--configs``
(``default``: ``TER()``; ``normalized``: ``TER(normalized=True)``, whose
Tercom normalization is a Python stage in both tools; ``refs2``: ``TER()``
with two reference streams) the script times, in rounds (each round runs
fastbleu, then sacrebleu, so both see the same machine load):

(a) ``fastbleu.TER(...).corpus_score(hyps, refs)`` on all segments, after
    one untimed warm-up call on ``--warmup-segments`` segments (numba's
    compilation or cache loading is not counted);
(b) ``sacrebleu.metrics.TER(...).corpus_score`` on every ``--sacrebleu-every``-th
    segment of the same corpus (default every 20th: 5,000 segments spread over
    all 41 systems, so that its mix of short and long segments is the corpus's),
    in the first ``--sacrebleu-repeat`` rounds.  Its segments/s are that
    slice's, i.e. extrapolated linearly.  sacrebleu's Tercom tokenizer keeps a
    class-level LRU cache, emptied before every run (inside a run it still
    helps on the references, which repeat once per system).

Both tools' wall time (``perf_counter``) and process time (CPU of all threads)
are recorded for every run; the best and the median run are reported, and the
ratios are taken between figures of the same run of this script.  Checks (not
timed): fastbleu's corpus score, edits and reference length on sacrebleu's
slice equal sacrebleu's.

``lengths``: hypothesis/reference pairs of about 10, 50 and 200 words
(``--lengths``), made of real text: within one system output, consecutive
segments and their references are joined (with a space) until the reference
has at least 0.9 times the target length; the pair is kept if the reference
has at most 1.15 times it, dropped otherwise.  fastbleu's ``TER().corpus_score``
runs on the pairs of a length (at most ``--length-segments``, spread evenly over
all of them), sacrebleu's
on an evenly spread subset of ``--length-sacrebleu`` pairs per length (it is
slow on long segments).  Same rounds, same checks.

``profile`` (run in a child process with ``NUMBA_NUM_THREADS=1``): where one
thread's time goes, as process time, best of ``--profile-repeat`` alternated
calls of the public ``TER().corpus_score`` on prepared subsets: the corpus
(default and normalized options), its segments of each kernel path alone
(bit-parallel: the band holds the whole matrix and the reference has at most
63 words; banded: the rest; the path is decided by the package's own
``_band``/``_unbanded``), each language pair alone, and each length.  The
finer split of the kernel (trace matrices, candidate enumeration, candidate
distances) was measured once with instrumented copies of the shift search;
those copies are gone (they would drift from the kernel), the figures are in
the README.

``threads``: fastbleu alone (``--parts corpus --only fastbleu --configs
default``) in two child processes, ``NUMBA_NUM_THREADS=1`` and the default
(all cores); also the clean peak RSS of the ``--segments`` run (nothing of
sacrebleu is imported there).

Peak RSS is the process's high-water mark (``VmHWM``, else ``ru_maxrss``); in
the ``corpus`` part it is taken after the first round's fastbleu calls, before
sacrebleu runs.

Running it
----------
From the repository root::

    python benchmarks/bench_ter.py --json benchmarks/results/ter.json      # everything
    python benchmarks/bench_ter.py --parts corpus --configs default --repeat 1
    python benchmarks/bench_ter.py --parts profile lengths --lengths 10 50 200

numba uses as many threads as ``NUMBA_NUM_THREADS`` allows (default: all
cores); the number is printed.
"""

from __future__ import annotations

import argparse
import gc
import json
import logging
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402
from common import (  # noqa: E402
    WMT22 as DEFAULT_WMT_DIR,
    clear_sacrebleu_cache,
    cycle_to,
    have_wmt22,
    load_corpus,
    mean_words,
    peak_rss_mib,
    read_lines,
    wmt22_files,
)

common.use_checkout()
REPO = common.REPO
PARTS = ("corpus", "lengths", "profile", "threads")
#: --configs name -> (TER options, number of reference streams)
CONFIGS = {"default": ({}, 1), "normalized": ({"normalized": True}, 1), "refs2": ({}, 2)}
#: A length-L pair's reference has between these multiples of L words.
LENGTH_WINDOW = (0.9, 1.15)


# ---------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------


def second_reference(ref_path: Path) -> Path:
    """The reference after ``ref_path`` (sorted by name) of the same language pair."""
    pair_refs = sorted(ref_path.parent.glob(ref_path.name.split(".ref.")[0] + ".ref.*"))
    later = [p for p in pair_refs if p.name > ref_path.name]
    if not later:
        raise SystemExit(f"error: {ref_path} has no second reference; drop refs2 from --configs")
    return later[0]


def corpus_lists(files: list[tuple[Path, Path]], n: int) -> tuple[list[str], list[str]]:
    """The corpus cycled to ``n`` segments: of ``files``, or synthetic without WMT22."""
    if not files:
        return common.corpus(n)[:2]
    hyps, refs = load_corpus(files)
    return cycle_to(hyps, n), cycle_to(refs, n)


def length_pairs(files: list[tuple[Path, Path]], target: int, segments: int = 20_000
                 ) -> tuple[list[str], list[str]]:
    """Pairs whose reference has about ``target`` words: consecutive segments of one system
    output (and their references) joined until the reference is long enough."""
    low, high = LENGTH_WINDOW[0] * target, LENGTH_WINDOW[1] * target
    hyps: list[str] = []
    refs: list[str] = []
    if files:
        cache: dict[Path, list[str]] = {}
        for _, ref_path in files:
            cache.setdefault(ref_path, read_lines(ref_path))
        outputs = [(read_lines(h), cache[r]) for h, r in files]
    else:
        outputs = [common.corpus(min(segments, 20_000))[:2]]
    for system, references in outputs:
        h_part: list[str] = []
        r_part: list[str] = []
        words = 0
        for h, r in zip(system, references):
            h_part.append(h.strip())
            r_part.append(r.strip())
            words += len(r.split())
            if words >= low:
                joined = " ".join(h_part)
                if words <= high and joined.strip():
                    hyps.append(joined)
                    refs.append(" ".join(r_part))
                h_part, r_part, words = [], [], 0
    return hyps, refs


def spread(values: list, count: int) -> list:
    """``count`` items taken evenly over ``values`` (all of them if there are fewer)."""
    if count >= len(values):
        return list(values)
    picks = np.linspace(0, len(values) - 1, count).round().astype(int)
    return [values[i] for i in picks]


def per_length(values: list[int], i: int) -> int:
    """The ``i``-th length's value of a per-length option (the last one repeats)."""
    return values[min(i, len(values) - 1)]


# ---------------------------------------------------------------------------------------
# Timing
# ---------------------------------------------------------------------------------------


class Runs:
    """Wall and process seconds of every run of each (part, config, tool)."""

    def __init__(self):
        self.rows: dict[tuple, dict] = {}

    def time(self, key: tuple, segments: int, fn, words: int | None = None):
        gc.collect()
        cpu = time.process_time()
        start = time.perf_counter()
        result = fn()
        wall = time.perf_counter() - start
        cpu = time.process_time() - cpu
        row = self.rows.setdefault(key, {"part": key[0], "config": key[1], "tool": key[2],
                                         "segments": segments, "words": words,
                                         "wall": [], "cpu": []})
        row["wall"].append(round(wall, 4))
        row["cpu"].append(round(cpu, 4))
        return result

    def summary(self) -> list[dict]:
        out = []
        for row in self.rows.values():
            r = dict(row)
            r["best_seconds"] = min(r["wall"])
            r["median_seconds"] = statistics.median(r["wall"])
            r["best_cpu_seconds"] = min(r["cpu"])
            r["median_cpu_seconds"] = statistics.median(r["cpu"])
            r["segments_per_second"] = r["segments"] / r["best_seconds"]
            r["segments_per_second_median"] = r["segments"] / r["median_seconds"]
            r["segments_per_cpu_second"] = r["segments"] / r["best_cpu_seconds"]
            out.append(r)
        rates = {(r["part"], r["config"], r["tool"]): r for r in out}
        for r in out:
            sac = rates.get((r["part"], r["config"], "sacrebleu"))
            if sac is None:
                continue
            r["vs_sacrebleu"] = r["segments_per_second"] / sac["segments_per_second"]
            r["vs_sacrebleu_median"] = (r["segments_per_second_median"]
                                        / sac["segments_per_second_median"])
            r["vs_sacrebleu_cpu"] = r["segments_per_cpu_second"] / sac["segments_per_cpu_second"]
        return out


def score_check(mine, theirs) -> dict:
    return {"fastbleu": [mine.score, mine.num_edits, mine.ref_length],
            "sacrebleu": [theirs.score, theirs.num_edits, theirs.ref_length],
            "equal": bool(mine.score == theirs.score and mine.num_edits == theirs.num_edits
                          and abs(mine.ref_length - theirs.ref_length) < 1e-6)}


# ---------------------------------------------------------------------------------------
# The corpus and lengths parts
# ---------------------------------------------------------------------------------------


def run_corpus(args, files, info: dict, runs: Runs, checks: dict, wanted: set) -> None:
    hyps, refs = corpus_lists(files, args.segments)
    base_hyps = hyps if not files else load_corpus(files)[0]
    streams = [refs]
    if "refs2" in args.configs and not files:
        raise SystemExit("error: refs2 needs WMT22's second references; drop it from --configs")
    if "refs2" in args.configs:
        _, base_refs2 = load_corpus([(h, second_reference(r)) for h, r in files])
        streams.append(cycle_to(base_refs2, args.segments))
    n = len(hyps)
    pick = slice(None, None, args.sacrebleu_every)
    s_hyps, s_streams = hyps[pick], [s[pick] for s in streams]
    info["corpus"] = {"files": len(files), "base_segments": len(base_hyps), "segments": n,
                      "sacrebleu_segments": len(s_hyps),
                      "sacrebleu_every": args.sacrebleu_every,
                      "hyp_words_mean": mean_words(hyps), "ref_words_mean": mean_words(refs),
                      "sacrebleu_slice_ref_words_mean": mean_words(s_streams[0]),
                      "peak_rss_mib_after_loading": round(peak_rss_mib(), 1)}
    print(f"corpus: {len(files)} system outputs, {len(base_hyps):,} segments cycled to {n:,}; "
          f"sacrebleu on every {args.sacrebleu_every}th ({len(s_hyps):,}); mean words "
          f"{info['corpus']['hyp_words_mean']:.1f} hyp / {info['corpus']['ref_words_mean']:.1f} "
          f"ref (slice: {info['corpus']['sacrebleu_slice_ref_words_mean']:.1f})")

    Fast, Sacre = tools(wanted, info)
    if Fast is not None:
        t0 = time.perf_counter()
        w = args.warmup_segments
        for config in args.configs:
            options, k = CONFIGS[config]
            Fast(**options).corpus_score(hyps[:w], [s[:w] for s in streams[:k]])
        info["corpus"]["warmup_seconds"] = round(time.perf_counter() - t0, 2)
        info["corpus"]["peak_rss_mib_after_warmup"] = round(peak_rss_mib(), 1)
        print(f"warm-up on {w:,} segments: {info['corpus']['warmup_seconds']} s (not counted)")
    scores: dict = {}
    for round_ in range(args.repeat):
        for config in args.configs:
            options, k = CONFIGS[config]
            if Fast is not None:
                scores[(config, "fastbleu")] = runs.time(
                    ("corpus", config, "fastbleu"), n,
                    lambda: Fast(**options).corpus_score(hyps, streams[:k]))
        if round_ == 0 and Fast is not None:
            info["corpus"]["peak_rss_mib_after_fastbleu_round1"] = round(peak_rss_mib(), 1)
        for config in args.configs:
            options, k = CONFIGS[config]
            if Sacre is not None and round_ < args.sacrebleu_repeat:
                metric = Sacre(**options)
                clear_sacrebleu_cache(metric)
                scores[(config, "sacrebleu")] = runs.time(
                    ("corpus", config, "sacrebleu"), len(s_hyps),
                    lambda: metric.corpus_score(s_hyps, s_streams[:k]))
        print(f"corpus round {round_ + 1}/{args.repeat} done "
              f"(load average {os.getloadavg()[0]:.2f})", flush=True)
    for config in args.configs:
        options, k = CONFIGS[config]
        if Fast is not None and (config, "sacrebleu") in scores:
            mine = Fast(**options).corpus_score(s_hyps, s_streams[:k])
            checks[f"corpus {config}"] = {"segments": len(s_hyps),
                                          **score_check(mine, scores[(config, "sacrebleu")])}
        if (config, "fastbleu") in scores:
            info["corpus"][f"fastbleu_score_{config}"] = scores[(config, "fastbleu")].score


def run_lengths(args, files, info: dict, runs: Runs, checks: dict, wanted: set) -> dict:
    Fast, Sacre = tools(wanted, info)
    sets = {}
    for i, target in enumerate(args.lengths):
        hyps, refs = length_pairs(files, target, args.segments)
        limit = per_length(args.length_segments, i)
        hyps, refs = spread(hyps, limit), spread(refs, limit)
        count = per_length(args.length_sacrebleu, i)
        sets[target] = (hyps, refs, spread(hyps, count), spread(refs, count))
        info.setdefault("lengths", {})[str(target)] = {
            "pairs": len(hyps), "sacrebleu_pairs": min(count, len(hyps)),
            "hyp_words_mean": mean_words(hyps), "ref_words_mean": mean_words(refs)}
        print(f"length {target}: {len(hyps):,} pairs, mean words {mean_words(hyps):.1f} hyp / "
              f"{mean_words(refs):.1f} ref; sacrebleu on {min(count, len(hyps)):,}")
    if Fast is not None:
        for hyps, refs, _, _ in sets.values():
            Fast().corpus_score(hyps[:args.warmup_segments], [refs[:args.warmup_segments]])
    scores: dict = {}
    for round_ in range(args.repeat):
        for target, (hyps, refs, s_hyps, s_refs) in sets.items():
            config = f"{target} words"
            words = sum(len(r.split()) for r in refs)
            if Fast is not None:
                scores[(target, "fastbleu")] = runs.time(
                    ("lengths", config, "fastbleu"), len(hyps),
                    lambda: Fast().corpus_score(hyps, [refs]), words)
            if Sacre is not None and round_ < args.sacrebleu_repeat:
                metric = Sacre()
                clear_sacrebleu_cache(metric)
                scores[(target, "sacrebleu")] = runs.time(
                    ("lengths", config, "sacrebleu"), len(s_hyps),
                    lambda: metric.corpus_score(s_hyps, [s_refs]),
                    sum(len(r.split()) for r in s_refs))
        print(f"lengths round {round_ + 1}/{args.repeat} done "
              f"(load average {os.getloadavg()[0]:.2f})", flush=True)
    for target, (_, _, s_hyps, s_refs) in sets.items():
        if Fast is not None and (target, "sacrebleu") in scores:
            checks[f"{target} words"] = {"segments": len(s_hyps), **score_check(
                Fast().corpus_score(s_hyps, [s_refs]), scores[(target, "sacrebleu")])}
    return sets


def tools(wanted: set, info: dict):
    Fast = Sacre = None
    if "fastbleu" in wanted:
        import numba

        import fastbleu
        from fastbleu import TER as Fast
        info.update(fastbleu=fastbleu.__version__, numba=numba.__version__,
                    numba_threads=numba.config.NUMBA_NUM_THREADS)
    if "sacrebleu" in wanted:
        import sacrebleu
        from sacrebleu.metrics import TER as Sacre
        info["sacrebleu"] = sacrebleu.__version__
    return Fast, Sacre


# ---------------------------------------------------------------------------------------
# The profile part: the public TER on prepared subsets, one thread
# ---------------------------------------------------------------------------------------


def bit_parallel(hyps: list[str], refs: list[str]) -> np.ndarray:
    """Per segment, whether TER's kernel takes the bit-parallel path: the package's own
    ``_band`` and ``_unbanded`` (``fastbleu._kernels.ter_distance``) on the word counts
    (``str.split()``, the words of ``TER()``'s default tokenizer).  Private on purpose:
    which path a segment takes is the profile's question."""
    from fastbleu._kernels.ter.distance import _band, _unbanded

    out = np.empty(len(hyps), np.bool_)
    for i, (h, r) in enumerate(zip(hyps, refs)):
        n, m = len(h.split()), len(r.split())
        ratio, width = _band(n, m)
        out[i] = m > 0 and bool(_unbanded(n, m, ratio, width))
    return out


def profile_set(name: str, hyps: list[str], refs: list[str], repeat: int,
                configs: tuple[str, ...], split: bool) -> dict:
    """One thread's process time (best of ``repeat``, the calls alternated) of
    ``TER(...).corpus_score`` on these segments and, with ``split``, on the segments of each
    kernel path alone."""
    from fastbleu import TER

    calls = {f"TER().corpus_score ({c})": (lambda o=CONFIGS[c][0]: TER(**o).corpus_score(
        hyps, [refs])) for c in configs}
    out: dict = {"segments": len(hyps), "hyp_words_mean": mean_words(hyps),
                 "ref_words_mean": mean_words(refs)}
    if split:
        fast = bit_parallel(hyps, refs)
        out["bit_parallel_segments"] = float(fast.mean())
        out["refs_over_24_words"] = float(np.mean([len(r.split()) > 24 for r in refs]))
        for label, keep in (("bit-parallel segments", fast), ("banded segments", ~fast)):
            picked = np.flatnonzero(keep)
            out[f"segments: {label}"] = int(picked.size)
            if picked.size:
                h, r = [hyps[i] for i in picked], [refs[i] for i in picked]
                calls[f"TER().corpus_score, {label}"] = (
                    lambda h=h, r=r: TER().corpus_score(h, [r]))
    best = dict.fromkeys(calls, float("inf"))
    for _ in range(repeat):
        for label, fn in calls.items():
            best[label] = min(best[label], common.timed(fn)[1])
    out["best_cpu_seconds"] = best
    return out


def run_profile(args, files, info: dict, sets: dict | None) -> dict:
    import numba

    if numba.config.NUMBA_NUM_THREADS != 1:
        print("warning: the profile is meant for NUMBA_NUM_THREADS=1 "
              f"(now {numba.config.NUMBA_NUM_THREADS})")
    hyps, refs = corpus_lists(files, args.segments)
    profile_set("warm-up", hyps[:200], refs[:200], 1, ("default", "normalized"), True)
    out = {"corpus": profile_set("corpus", hyps, refs, args.profile_repeat,
                                 ("default", "normalized"), True)}
    if files:
        pairs: dict[str, list] = {}
        for hyp_path, ref_path in files:
            pairs.setdefault(hyp_path.name.split(".")[1], []).append((hyp_path, ref_path))
        for pair, pair_files in pairs.items():
            h, r = load_corpus(pair_files)
            out[f"pair {pair}"] = profile_set(pair, h, r, args.profile_repeat, ("default",),
                                              False)
    for i, target in enumerate(args.lengths):
        if sets is not None and target in sets:
            h, r = sets[target][:2]
        else:
            h, r = length_pairs(files, target, args.segments)
            limit = per_length(args.length_segments, i)
            h, r = spread(h, limit), spread(r, limit)
        out[f"{target} words"] = profile_set(f"{target} words", h, r, args.profile_repeat,
                                             ("default",), True)
    for name, p in out.items():
        print_profile(name, p)
    return out


def print_profile(name: str, p: dict) -> None:
    print(f"\nprofile, one thread, process time, {name}: {p['segments']:,} segments, mean words "
          f"{p['hyp_words_mean']:.1f} hyp / {p['ref_words_mean']:.1f} ref"
          + (f"; bit-parallel {p['bit_parallel_segments']:.1%}" if "bit_parallel_segments" in p
             else ""))
    for label, seconds in p["best_cpu_seconds"].items():
        count = p.get(f"segments: {label.split(', ')[-1]}", p["segments"])
        print(f"  {label:<55} {seconds:8.3f} s  {count / seconds:>12,.0f} seg/s ({count:,})")


# ---------------------------------------------------------------------------------------
# Children: the one-thread profile and the thread comparison
# ---------------------------------------------------------------------------------------


def child(args, argv: list[str], threads: int | None) -> dict:
    """Run this script in a fresh process with ``NUMBA_NUM_THREADS=threads`` (``None``:
    the default) and return its JSON."""
    env = dict(os.environ)
    env.pop("NUMBA_NUM_THREADS", None)
    if threads is not None:
        env["NUMBA_NUM_THREADS"] = str(threads)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "child.json"
        cmd = [sys.executable, str(Path(__file__).resolve()), "--wmt-dir", str(args.wmt_dir),
               "--segments", str(args.segments), "--warmup-segments",
               str(args.warmup_segments), *argv, "--json", str(out)]
        print(f"child (NUMBA_NUM_THREADS={threads or 'default'}): {' '.join(cmd[2:])}",
              flush=True)
        subprocess.run(cmd, env=env, check=True)
        return json.loads(out.read_text(encoding="utf-8"))


def run_threads(args) -> dict:
    out = {}
    for label, threads in (("1 thread", 1), ("default threads", None)):
        result = child(args, ["--parts", "corpus", "--only", "fastbleu", "--configs", "default",
                              "--repeat", str(args.threads_repeat)], threads)
        row = next(r for r in result["results"] if r["tool"] == "fastbleu")
        out[label] = {"numba_threads": result["info"]["numba_threads"], **{
            k: row[k] for k in ("segments", "wall", "cpu", "best_seconds", "median_seconds",
                                "best_cpu_seconds", "segments_per_second",
                                "segments_per_second_median")},
            "peak_rss_mib_after_loading": result["info"]["corpus"]["peak_rss_mib_after_loading"],
            "peak_rss_mib_at_end": result["info"]["peak_rss_mib_at_end"]}
    one, many = out["1 thread"], out["default threads"]
    out["speed-up (best wall)"] = one["best_seconds"] / many["best_seconds"]
    out["speed-up (median wall)"] = one["median_seconds"] / many["median_seconds"]
    return out


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Time fastbleu.TER().corpus_score against sacrebleu's TER on WMT22 "
                    "segments, by sentence length, and profile fastbleu's kernel.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--wmt-dir", type=Path, default=DEFAULT_WMT_DIR,
                   help="WMT22 folder with system-outputs/ and references/")
    p.add_argument("--parts", nargs="+", choices=PARTS, default=list(PARTS))
    p.add_argument("--segments", type=int, default=100_000,
                   help="segments the corpus is cycled to")
    p.add_argument("--configs", nargs="+", choices=tuple(CONFIGS), default=list(CONFIGS))
    p.add_argument("--repeat", type=int, default=3,
                   help="rounds (fastbleu, then sacrebleu, in each)")
    p.add_argument("--sacrebleu-repeat", type=int, default=2,
                   help="rounds in which sacrebleu runs (the first ones)")
    p.add_argument("--sacrebleu-every", type=int, default=20,
                   help="sacrebleu runs on every N-th segment of the corpus")
    p.add_argument("--warmup-segments", type=int, default=500,
                   help="size of fastbleu's untimed warm-up call")
    p.add_argument("--lengths", nargs="+", type=int, default=[10, 50, 200],
                   help="target reference lengths, in words")
    p.add_argument("--length-segments", nargs="+", type=int, default=[30_000, 10_000, 2_000],
                   help="at most this many pairs of each length for fastbleu (one number "
                        "per length, the last one repeated)")
    p.add_argument("--length-sacrebleu", nargs="+", type=int, default=[2000, 400, 40],
                   help="pairs of each length for sacrebleu (one number per length, the "
                        "last one repeated)")
    p.add_argument("--profile-repeat", type=int, default=5,
                   help="alternated runs of the profile drivers (the best is kept)")
    p.add_argument("--threads-repeat", type=int, default=5,
                   help="runs in each child of the thread comparison")
    p.add_argument("--only", choices=("all", "fastbleu", "sacrebleu"), default="all")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON")
    args = p.parse_args(argv)
    for name in ("segments", "repeat", "sacrebleu_every", "warmup_segments", "profile_repeat",
                 "threads_repeat"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.sacrebleu_repeat < 0:
        p.error("--sacrebleu-repeat must be at least 0")
    if min(args.lengths + args.length_segments + args.length_sacrebleu) < 1:
        p.error("--lengths, --length-segments and --length-sacrebleu must be at least 1")
    args.parts = list(dict.fromkeys(args.parts))
    args.configs = list(dict.fromkeys(args.configs))
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    common.quiet_logs()
    wanted = {"all": {"fastbleu", "sacrebleu"}, "fastbleu": {"fastbleu"},
              "sacrebleu": {"sacrebleu"}}[args.only]
    files = wmt22_files(args.wmt_dir) if have_wmt22(args.wmt_dir) else []
    if not files:
        print(f"SYNTHETIC data: {args.wmt_dir} not found (figures not comparable with WMT22's)")
    info = common.machine_info(parts=args.parts, configs=args.configs, repeat=args.repeat,
                               sacrebleu_repeat=args.sacrebleu_repeat,
                               data="WMT22" if files else "synthetic")
    runs = Runs()
    checks: dict = {}
    payload: dict = {"info": info}
    sets = None
    if "corpus" in args.parts:
        run_corpus(args, files, info, runs, checks, wanted)
    if "lengths" in args.parts:
        sets = run_lengths(args, files, info, runs, checks, wanted)
    if "profile" in args.parts and "fastbleu" in wanted:
        import numba

        if numba.config.NUMBA_NUM_THREADS == 1:
            payload["profile"] = run_profile(args, files, info, sets)
        else:
            child_argv = ["--parts", "profile", "--only", "fastbleu", "--profile-repeat",
                          str(args.profile_repeat), "--length-segments",
                          *map(str, args.length_segments), "--lengths",
                          *map(str, args.lengths)]
            result = child(args, child_argv, 1)
            payload["profile"] = result["profile"]
    if "threads" in args.parts and "fastbleu" in wanted:
        payload["threads"] = run_threads(args)
    info["peak_rss_mib_at_end"] = round(peak_rss_mib(), 1)
    results = runs.summary()
    payload.update(results=results, checks=checks)

    if results:
        print()
        header = (f"{'part':<8} {'config':<11} {'tool':<10} {'segments':>9} {'best s':>8} "
                  f"{'median s':>8} {'CPU s':>7} {'seg/s':>9} {'seg/s med':>9} "
                  f"{'vs sacre':>8} {'(median)':>8} {'(CPU)':>7}")
        print(header)
        print("-" * len(header))
        for r in results:
            ratios = [f"{r[k]:.0f}x" if k in r else "-"
                      for k in ("vs_sacrebleu", "vs_sacrebleu_median", "vs_sacrebleu_cpu")]
            print(f"{r['part']:<8} {r['config']:<11} {r['tool']:<10} {r['segments']:>9,} "
                  f"{r['best_seconds']:>8.3f} {r['median_seconds']:>8.3f} "
                  f"{r['best_cpu_seconds']:>7.2f} {r['segments_per_second']:>9,.0f} "
                  f"{r['segments_per_second_median']:>9,.0f} {ratios[0]:>8} {ratios[1]:>8} "
                  f"{ratios[2]:>7}")
        print(f"best and median of the runs (fastbleu {args.repeat}, sacrebleu "
              f"{min(args.sacrebleu_repeat, args.repeat)}); sacrebleu's segments/s are its "
              "slice's; CPU s = process time of the best run, all threads")
    if "profile" in payload and info.get("numba_threads") != 1:
        for name, p in payload["profile"].items():
            print_profile(name, p)
    if "threads" in payload:
        t = payload["threads"]
        print()
        for label in ("1 thread", "default threads"):
            x = t[label]
            print(f"fastbleu alone, {label} ({x['numba_threads']}): best {x['best_seconds']:.3f} s"
                  f" (median {x['median_seconds']:.3f} s, CPU {x['best_cpu_seconds']:.2f} s), "
                  f"{x['segments_per_second']:,.0f} seg/s; peak RSS {x['peak_rss_mib_at_end']:,.0f}"
                  f" MiB (after loading the lists: {x['peak_rss_mib_after_loading']:,.0f} MiB)")
        print(f"speed-up of the default threads: {t['speed-up (best wall)']:.2f}x best, "
              f"{t['speed-up (median wall)']:.2f}x median")
    if "corpus" in info:
        for key, value in info["corpus"].items():
            if key.startswith("peak_rss"):
                print(f"{key}: {value:,.0f} MiB")
    ok = True
    for what, c in checks.items():
        print(f"check {what}: {c}")
        ok &= c["equal"]
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=2, default=float) + "\n",
                             encoding="utf-8")
        print(f"wrote {args.json}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
