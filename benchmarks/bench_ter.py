#!/usr/bin/env python3
"""Throughput of fastbleu's TER against sacrebleu's, and where fastbleu's time goes (issue 14).

What is measured
----------------
``--parts`` selects any of four parts (default: all of them).

``corpus``: the corpus of ``bench_corpus.py`` (read with its code): every
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
runs, on the ``corpus`` segments (default options) and on each length:

* conversion of the lists (``as_text_column``) and tokenization
  (``fastbleu.statistics.tokenize`` for hypotheses, ``References.tokenized``
  for references, as ``TER`` calls them; default and normalized options);
* the kernel (``_statistics_chunk`` of ``fastbleu/_kernels/ter.py`` on all
  segments, one thread), split with drivers written here from the kernel's
  own njit pieces: an instrumented copy of the shift search records the
  shifts each segment applies (its edits are checked against the kernel's),
  then drivers replay those shifts doing only part of the work.  The kernel's
  time splits into the first trace matrix and alignment of each segment,
  the matrices and alignments after each applied shift, the bit-parallel
  set-up (match masks and rows, only when the band holds the whole matrix),
  the candidate enumeration, and the rest, the candidate distances (shifted
  copies, then bit-parallel or banded edit distances): each is the
  difference between two drivers' times, so small ones are noisy.

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
from numba import njit

# The corpus and the helpers are bench_corpus.py's, so that the benchmarks read exactly
# the same segments.
sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_corpus import (  # noqa: E402
    DEFAULT_WMT_DIR,
    clear_sacrebleu_cache,
    cycle_to,
    load_corpus,
    peak_rss_mib as peak_rusage_mib,
    read_lines,
    wmt22_files,
)

REPO = Path(__file__).resolve().parents[1]
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


def length_pairs(files: list[tuple[Path, Path]], target: int) -> tuple[list[str], list[str]]:
    """Pairs whose reference has about ``target`` words: consecutive segments of one system
    output (and their references) joined until the reference is long enough."""
    low, high = LENGTH_WINDOW[0] * target, LENGTH_WINDOW[1] * target
    hyps: list[str] = []
    refs: list[str] = []
    cache: dict[Path, list[str]] = {}
    for hyp_path, ref_path in files:
        if ref_path not in cache:
            cache[ref_path] = read_lines(ref_path)
        h_part: list[str] = []
        r_part: list[str] = []
        words = 0
        for h, r in zip(read_lines(hyp_path), cache[ref_path]):
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


def peak_rss_mib() -> float:
    """Peak resident set size of this process so far, in MiB: ``VmHWM`` where Linux has it,
    because ``ru_maxrss`` keeps the parent's peak across ``fork()`` and ``exec()`` (the
    children of the thread comparison would report this script's own peak)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return peak_rusage_mib()


def mean_words(lines: list[str]) -> float:
    return float(np.mean([len(line.split()) for line in lines])) if lines else 0.0


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
    base_hyps, base_refs = load_corpus(files)
    hyps, refs = cycle_to(base_hyps, args.segments), cycle_to(base_refs, args.segments)
    streams = [refs]
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
        hyps, refs = length_pairs(files, target)
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
# The profile part: njit drivers built from the kernel's own pieces
# ---------------------------------------------------------------------------------------

from fastbleu._kernels.ter.shifts import (MAX_SHIFT_CANDIDATES, MAX_SHIFT_DIST, MAX_SHIFT_SIZE,
                                          _alignment, _band, _better, _bit_distance, _bit_rows,
                                          _edit_matrix, _match_masks, _scratch, _shift_into,
                                          _shifted_distance, _statistics_chunk, _unbanded)


@njit(nogil=True)
def _search(words, ref, n, m, ratio, width, unbanded, distance, scratch, evaluate, checked,
            counts):
    """One step's shift search, the loop of ``translation_edits``.  With ``evaluate`` it
    computes each candidate's distance as the kernel does and returns the best shift
    ``(gain, length, start, target, full, checked)``; without, it only enumerates the
    candidates.  ``checked`` counts the candidates of the whole sentence (its limit is
    the sentence's, not the step's).

    ``counts``: [candidates, bit-parallel distances, banded distances, checksum].
    """
    (_, shifted, _, align, hyp_errors, ref_errors, rows, cost, _, masks, moved,
     vp, vn, last) = scratch
    w = m + 1
    buffer_a, buffer_b = rows[:w], rows[w:2 * w]
    gain = 0
    best_length, best_start, best_target = 0, 0, 0
    full = False
    for start_h in range(n):
        for start_r in range(max(0, start_h - MAX_SHIFT_DIST),
                             min(m, start_h + MAX_SHIFT_DIST + 1)):
            length = 0
            while length < MAX_SHIFT_SIZE and words[start_h + length] == ref[start_r + length]:
                length += 1
                if hyp_errors[start_h + length] != hyp_errors[start_h] and \
                        ref_errors[start_r + length] != ref_errors[start_r] and \
                        not start_h <= align[start_r] < start_h + length:
                    previous = -1
                    for offset in range(-1, length):
                        target = 0 if start_r + offset == -1 else align[start_r + offset] + 1
                        if target == previous:
                            continue
                        previous = target
                        checked += 1
                        counts[0] += 1
                        if not evaluate:
                            counts[3] += target + length  # keeps the loop's work alive
                        else:
                            wins_ties = gain == 0 or _better(length, start_h, target,
                                                             best_length, best_start,
                                                             best_target)
                            limit = distance - gain - (0 if wins_ties else 1)
                            if gain == 0:
                                limit = distance - 1
                            first = min(start_h, target)
                            if unbanded:
                                counts[1] += 1
                                _shift_into(masks, n, start_h, length, target, moved)
                                new = _bit_distance(moved, first, n, m, vp, vn, last)
                            else:
                                counts[2] += 1
                                _shift_into(words, n, start_h, length, target, shifted)
                                new = _shifted_distance(shifted, ref, n, m, ratio, width,
                                                        cost, first, limit, buffer_a,
                                                        buffer_b)
                            if new <= limit:
                                gain = distance - new
                                best_length, best_start, best_target = length, start_h, target
                    if checked >= MAX_SHIFT_CANDIDATES:
                        full = True
                        break
                if n == start_h + length or m == start_r + length:
                    break
            if full:
                break
        if full:
            break
    return gain, best_length, best_start, best_target, full, checked


@njit(nogil=True)
def _grow(scratch, caps, n, m):
    """``scratch`` large enough for ``n`` x ``m`` words (``caps``: its n, m, cells)."""
    cells = (n + 1) * (m + 1)
    if n > caps[0] or m > caps[1] or cells > caps[2]:
        caps[0], caps[1], caps[2] = max(caps[0], n), max(caps[1], m), max(caps[2], cells)
        return _scratch(caps[0], caps[1], caps[2])
    return scratch


@njit(nogil=True)
def _instrumented(hh, hs, hc, rh, rs, rc, edits, steps, unbanded_out, shifts, shift_start,
                  counts):
    """The kernel's search, recording per segment its edits, steps (matrices computed),
    whether it is bit-parallel, and the shifts applied (``shifts[k] = start, length,
    target`` from ``shift_start[i]``)."""
    caps = np.array([1, 1, 4])
    scratch = _scratch(1, 1, 4)
    k = 0
    for i in range(hc.size):
        n, m = hc[i], rc[i]
        shift_start[i] = k
        hyp, ref = hh[hs[i]:hs[i] + n], rh[rs[i]:rs[i] + m]
        if m == 0:
            edits[i], steps[i] = n, 0
            continue
        scratch = _grow(scratch, caps, n, m)
        words, shifted, path, align, hyp_errors, ref_errors = scratch[:6]
        cost, op, masks, vp, vn, last = scratch[7], scratch[8], scratch[9], scratch[11], \
            scratch[12], scratch[13]
        ratio, width = _band(n, m)
        unbanded = _unbanded(n, m, ratio, width)
        unbanded_out[i] = unbanded
        words[:n] = hyp
        applied = 0
        step = 0
        checked = 0
        while True:
            step += 1
            distance = _edit_matrix(words, ref, n, m, ratio, width, cost, op)
            if not _alignment(op, n, m, path, align, hyp_errors, ref_errors):
                distance = -1 - applied
                break
            if unbanded:
                _match_masks(words, n, ref, m, masks)
                _bit_rows(masks, n, m, vp, vn, last)
            gain, length, start, target, full, checked = _search(
                words, ref, n, m, ratio, width, unbanded, distance, scratch, True, checked,
                counts)
            if full or gain <= 0:
                break
            _shift_into(words, n, start, length, target, shifted)
            words[:n] = shifted[:n]
            shifts[k, 0], shifts[k, 1], shifts[k, 2] = start, length, target
            k += 1
            applied += 1
        edits[i] = applied + distance
        steps[i] = step
    shift_start[hc.size] = k


@njit(nogil=True)
def _replay(hh, hs, hc, rh, rs, rc, shifts, shift_start, all_steps, bits, enumerate_,
            counts):
    """Part of the kernel's work on the recorded shifts: the trace matrix and alignment of
    the first step (or of every step), with the bit-parallel rows, with the candidates
    enumerated.  Returns the sum of the distances (so that nothing is optimized away)."""
    caps = np.array([1, 1, 4])
    scratch = _scratch(1, 1, 4)
    total = 0
    for i in range(hc.size):
        n, m = hc[i], rc[i]
        if m == 0:
            continue
        hyp, ref = hh[hs[i]:hs[i] + n], rh[rs[i]:rs[i] + m]
        scratch = _grow(scratch, caps, n, m)
        words, shifted, path, align, hyp_errors, ref_errors = scratch[:6]
        cost, op, masks, vp, vn, last = scratch[7], scratch[8], scratch[9], scratch[11], \
            scratch[12], scratch[13]
        ratio, width = _band(n, m)
        unbanded = _unbanded(n, m, ratio, width)
        words[:n] = hyp
        k = shift_start[i]
        checked = 0
        while True:
            distance = _edit_matrix(words, ref, n, m, ratio, width, cost, op)
            total += distance
            if not _alignment(op, n, m, path, align, hyp_errors, ref_errors):
                break
            if bits and unbanded:
                _match_masks(words, n, ref, m, masks)
                _bit_rows(masks, n, m, vp, vn, last)
                total += last[n]
            if enumerate_:
                checked = _search(words, ref, n, m, ratio, width, unbanded, distance, scratch,
                                  False, checked, counts)[5]
            if not all_steps or k == shift_start[i + 1]:
                break
            _shift_into(words, n, shifts[k, 0], shifts[k, 1], shifts[k, 2], shifted)
            words[:n] = shifted[:n]
            k += 1
    return total


def tokens_of(hyps: list[str], refs: list[str], options: dict):
    """The token hashes TER's kernel reads (``TER``'s own tokenizers and calls)."""
    from fastbleu import TER
    from fastbleu.statistics.tokens import References, tokenize
    from fastbleu.inputs.text import as_text_column

    ter = TER(**options)
    h = tokenize(as_text_column(hyps, "hypotheses"), ter._tokenizer, ter._lowercase)
    r = References.tokenized([as_text_column(refs, "references", allow_null=True)],
                             ter._ref_tokenizer, ter._lowercase)
    return (np.ascontiguousarray(h.hashes.copy()), h.start.copy(), h.count.copy(),
            np.ascontiguousarray(r.hashes.copy()), np.ascontiguousarray(r.start[0]),
            np.ascontiguousarray(r.count[0]))


def profile_set(name: str, hyps: list[str], refs: list[str], repeat: int,
                tokenizer_configs: tuple[str, ...]) -> dict:
    """Single-thread process time of each stage on these segments (best of ``repeat``),
    with the system (kernel) part of each run: on this project's VM, first touches of
    fresh memory are sometimes slow system time, which would read as slow code."""
    import resource

    from fastbleu import TER
    from fastbleu.statistics.tokens import References, tokenize
    from fastbleu.inputs.text import as_text_column

    out: dict = {"segments": len(hyps), "hyp_words_mean": mean_words(hyps),
                 "ref_words_mean": mean_words(refs)}
    timings: dict[str, list[float]] = {}
    system: dict[str, list[float]] = {}

    def clock(label, fn):
        gc.collect()
        sys_start = resource.getrusage(resource.RUSAGE_SELF).ru_stime
        start = time.process_time()
        result = fn()
        timings.setdefault(label, []).append(time.process_time() - start)
        system.setdefault(label, []).append(
            resource.getrusage(resource.RUSAGE_SELF).ru_stime - sys_start)
        return result

    hh, hs, hc, rh, rs, rc = tokens_of(hyps, refs, {})
    n = hc.size
    # Instrumented run first: the shifts to replay, and the counts.
    edits = np.empty(n, np.int64)
    steps = np.empty(n, np.int64)
    unbanded = np.zeros(n, np.bool_)
    shifts = np.empty((int(np.maximum(hc, rc).sum()) + 1, 3), np.int64)
    shift_start = np.empty(n + 1, np.int64)
    counts = np.zeros(4, np.int64)
    _instrumented(hh, hs, hc, rh, rs, rc, edits, steps, unbanded, shifts, shift_start, counts)
    rows = np.empty((n, 2), np.int64)
    _statistics_chunk(hh, hs, hc, rh, rs.reshape(1, -1), rc.reshape(1, -1), rows, 0, n)
    same = bool(np.array_equal(rows[:, 0], edits))
    if not same:
        raise SystemExit(f"error: the instrumented search disagrees with the kernel on {name} "
                         f"({int((rows[:, 0] != edits).sum())} segments); the kernel changed, "
                         "update _search in this script")
    out.update({"instrumented_equals_kernel": same,
                "steps_per_segment": float(steps.mean()),
                "shifts_per_segment": float((steps - 1).clip(0).mean()),
                "candidates_per_segment": counts[0] / n,
                "bit_parallel_distances": int(counts[1]), "banded_distances": int(counts[2]),
                "bit_parallel_segments": float(unbanded.mean()),
                "refs_over_24_words": float((rc > 24).mean())})
    scratch_counts = np.zeros(4, np.int64)
    drivers = {
        "first trace": lambda: _replay(hh, hs, hc, rh, rs, rc, shifts, shift_start,
                                       False, False, False, scratch_counts),
        "all traces": lambda: _replay(hh, hs, hc, rh, rs, rc, shifts, shift_start,
                                      True, False, False, scratch_counts),
        "all traces + bit rows": lambda: _replay(hh, hs, hc, rh, rs, rc, shifts, shift_start,
                                                 True, True, False, scratch_counts),
        "... + enumeration": lambda: _replay(hh, hs, hc, rh, rs, rc, shifts, shift_start,
                                             True, True, True, scratch_counts),
        "kernel": lambda: _statistics_chunk(hh, hs, hc, rh, rs.reshape(1, -1),
                                            rc.reshape(1, -1), rows, 0, n),
    }
    # The kernel on the segments of each path alone: bit-parallel candidate distances
    # (the band holds the whole matrix) or banded ones.
    for label, keep in (("kernel, bit-parallel segments", unbanded),
                        ("kernel, banded segments", ~unbanded)):
        picked = np.flatnonzero(keep)
        out[f"segments in '{label}'"] = int(picked.size)
        if 0 < picked.size < n:
            sub = tokens_of([hyps[i] for i in picked], [refs[i] for i in picked], {})
            sub_rows = np.empty((picked.size, 2), np.int64)
            drivers[label] = (lambda t=sub, o=sub_rows: _statistics_chunk(
                t[0], t[1], t[2], t[3], t[4].reshape(1, -1), t[5].reshape(1, -1), o, 0,
                o.shape[0]))
    for _ in range(repeat):  # alternated, so that every driver sees the same load
        for label, fn in drivers.items():
            clock(label, fn)
        for config in tokenizer_configs:
            ter = TER(**CONFIGS[config][0])
            hcol = clock(f"convert lists ({config})",
                         lambda: (as_text_column(hyps, "hypotheses"),
                                  as_text_column(refs, "references", allow_null=True)))
            clock(f"tokenize hypotheses ({config})",
                  lambda: tokenize(hcol[0], ter._tokenizer, ter._lowercase))
            clock(f"tokenize references ({config})",
                  lambda: References.tokenized([hcol[1]], ter._ref_tokenizer, ter._lowercase))
            clock(f"TER().corpus_score ({config})", lambda: ter.corpus_score(hyps, [refs]))
    best = {label: min(values) for label, values in timings.items()}
    out["best_cpu_seconds"] = best
    out["system_seconds_of_best"] = {label: system[label][timings[label].index(best[label])]
                                     for label in best}
    out["all_cpu_seconds"] = {label: [round(v, 4) for v in values]
                              for label, values in timings.items()}
    out["all_system_seconds"] = {label: [round(v, 4) for v in values]
                                 for label, values in system.items()}
    kernel = best["kernel"]
    split = {
        "first trace matrix + alignment": best["first trace"],
        "trace matrix + alignment after each applied shift":
            best["all traces"] - best["first trace"],
        "bit-parallel rows (match masks + rows)":
            best["all traces + bit rows"] - best["all traces"],
        "candidate enumeration": best["... + enumeration"] - best["all traces + bit rows"],
        "candidate distances (shifted copy + distance)": kernel - best["... + enumeration"],
    }
    out["kernel_split_seconds"] = split
    out["kernel_split_share"] = {k: v / kernel for k, v in split.items()}
    return out


def run_profile(args, files, info: dict, sets: dict | None) -> dict:
    import numba

    if numba.config.NUMBA_NUM_THREADS != 1:
        print("warning: the profile is meant for NUMBA_NUM_THREADS=1 "
              f"(now {numba.config.NUMBA_NUM_THREADS}); tokenization uses every thread")
    base_hyps, base_refs = load_corpus(files)
    hyps, refs = cycle_to(base_hyps, args.segments), cycle_to(base_refs, args.segments)
    # compile the drivers (not counted)
    t0 = time.perf_counter()
    profile_set("warm-up", hyps[:200], refs[:200], 1, ("default", "normalized"))
    print(f"profile drivers compiled in {time.perf_counter() - t0:.1f} s")
    out = {"corpus": profile_set("corpus", hyps, refs, args.profile_repeat,
                                 ("default", "normalized"))}
    print_profile("corpus", out["corpus"])
    for i, target in enumerate(args.lengths):
        if sets is not None and target in sets:
            h, r = sets[target][:2]
        else:
            h, r = length_pairs(files, target)
            limit = per_length(args.length_segments, i)
            h, r = spread(h, limit), spread(r, limit)
        out[f"{target} words"] = profile_set(f"{target} words", h, r, args.profile_repeat,
                                             ("default",))
        print_profile(f"{target} words", out[f"{target} words"])
    extras = {"kernel_by_pair": kernel_by_pair(files, args.profile_repeat),
              "pool_pieces": pool_pieces(hyps, refs, args.profile_repeat)}
    print_extras(extras)
    return out, extras


def kernel_by_pair(files, repeat: int) -> dict:
    """The kernel alone (one thread, best of ``repeat``) on each language pair's segments of
    the base corpus, with its reference lengths."""
    pairs: dict[str, list] = {}
    for hyp_path, ref_path in files:
        pairs.setdefault(hyp_path.name.split(".")[1], []).append((hyp_path, ref_path))
    out = {}
    for pair, pair_files in pairs.items():
        hyps, refs = load_corpus(pair_files)
        hh, hs, hc, rh, rs, rc = tokens_of(hyps, refs, {})
        rows = np.empty((hc.size, 2), np.int64)
        best = float("inf")
        for _ in range(repeat):
            start = time.process_time()
            _statistics_chunk(hh, hs, hc, rh, rs.reshape(1, -1), rc.reshape(1, -1), rows, 0,
                              hc.size)
            best = min(best, time.process_time() - start)
        out[pair] = {"systems": len(pair_files), "segments": int(hc.size),
                     "ref_words_mean": float(rc.mean()),
                     "refs_over_24_words": float((rc > 24).mean()),
                     "kernel_cpu_seconds": best, "segments_per_second": hc.size / best}
    total = sum(x["kernel_cpu_seconds"] for x in out.values())
    for x in out.values():
        x["share_of_kernel_time"] = x["kernel_cpu_seconds"] / total
    return out


def pool_pieces(hyps: list[str], refs: list[str], repeat: int, threads: int = 2) -> dict:
    """The one-thread cost of each piece the thread pool would run with ``threads`` threads
    (``TER`` cuts the corpus into batches, the pool each batch into pieces), and the wall
    time of running them in order on ``threads`` free cores, each taking the next piece."""
    import numba

    from fastbleu._kernels import threads as pool
    from fastbleu.statistics.tokens import BATCH_SIZE

    saved = numba.config.NUMBA_NUM_THREADS
    out: dict = {"threads": threads, "batches": []}
    serial = parallel = 0.0
    for first in range(0, len(hyps), BATCH_SIZE):
        last = min(len(hyps), first + BATCH_SIZE)
        hh, hs, hc, rh, rs, rc = tokens_of(hyps[first:last], refs[first:last], {})
        rows = np.empty((hc.size, 2), np.int64)
        numba.config.NUMBA_NUM_THREADS = threads  # only to ask where the pool would cut
        try:
            bounds = pool.chunk_bounds(hc.size, 64)
        finally:
            numba.config.NUMBA_NUM_THREADS = saved
        costs = []
        for low, high in zip(bounds[:-1], bounds[1:]):
            best = float("inf")
            for _ in range(repeat):
                start = time.process_time()
                _statistics_chunk(hh, hs, hc, rh, rs.reshape(1, -1), rc.reshape(1, -1), rows,
                                  low, high)
                best = min(best, time.process_time() - start)
            costs.append(best)
        free = [0.0] * threads
        for cost in costs:  # each piece to the worker that is free first
            free[free.index(min(free))] += cost
        out["batches"].append({"segments": last - first, "piece_cpu_seconds": costs,
                               "serial": sum(costs), "on_free_cores": max(free)})
        serial += sum(costs)
        parallel += max(free)
    out["serial_seconds"], out["on_free_cores_seconds"] = serial, parallel
    out["estimated_speed_up"] = serial / parallel if parallel else None
    return out


def print_extras(extras: dict) -> None:
    print("\nkernel alone by language pair (one thread, process time):")
    for pair, x in extras["kernel_by_pair"].items():
        print(f"  {pair}: {x['segments']:,} segments ({x['systems']} systems), mean reference "
              f"{x['ref_words_mean']:.1f} words, {x['refs_over_24_words']:.0%} over 24: "
              f"{x['kernel_cpu_seconds']:.3f} s, {x['segments_per_second']:,.0f} seg/s, "
              f"{x['share_of_kernel_time']:.0%} of the time")
    pieces = extras["pool_pieces"]
    print(f"pieces the pool would run with {pieces['threads']} threads (one-thread seconds):")
    for batch in pieces["batches"]:
        print(f"  batch of {batch['segments']:,}: "
              + ", ".join(f"{c:.3f}" for c in batch["piece_cpu_seconds"])
              + f" -> {batch['serial']:.3f} s serial, {batch['on_free_cores']:.3f} s on free "
                "cores")
    print(f"  estimated speed-up of {pieces['threads']} free cores on the kernel: "
          f"{pieces['estimated_speed_up']:.2f}x")


def print_profile(name: str, p: dict) -> None:
    best = p["best_cpu_seconds"]
    kernel = best["kernel"]
    print(f"\nprofile, one thread, process time, {name}: {p['segments']:,} segments, mean words "
          f"{p['hyp_words_mean']:.1f} hyp / {p['ref_words_mean']:.1f} ref")
    print(f"  {p['shifts_per_segment']:.2f} shifts and {p['candidates_per_segment']:.1f} "
          f"candidates a segment; bit-parallel segments {p['bit_parallel_segments']:.1%}; "
          f"candidate distances: {p['bit_parallel_distances']:,} bit-parallel, "
          f"{p['banded_distances']:,} banded")
    system = p["system_seconds_of_best"]
    for label, seconds in best.items():
        if not label.startswith(("first", "all", "...", "kernel")):
            print(f"  {label:<45} {seconds:8.3f} s  {p['segments'] / seconds:>12,.0f} seg/s"
                  f"  (system {system[label]:.3f} s)")
    print(f"  {'kernel (translation_edits, one thread)':<45} {kernel:8.3f} s  "
          f"{p['segments'] / kernel:>12,.0f} seg/s  (system {system['kernel']:.3f} s)")
    for label in ("kernel, bit-parallel segments", "kernel, banded segments"):
        if label in best:
            count = p[f"segments in '{label}'"]
            print(f"    {label:<43} {best[label]:8.3f} s  {count / best[label]:>12,.0f} seg/s"
                  f"  ({count:,} segments)")
    for label, seconds in p["kernel_split_seconds"].items():
        print(f"    {label:<51} {seconds:7.3f} s  {seconds / kernel:6.1%}")


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
    for name in ("fastbleu", "sacrebleu"):
        logging.getLogger(name).setLevel(logging.ERROR)
    wanted = {"all": {"fastbleu", "sacrebleu"}, "fastbleu": {"fastbleu"},
              "sacrebleu": {"sacrebleu"}}[args.only]
    files = wmt22_files(args.wmt_dir)
    info: dict = {"python": platform.python_version(), "platform": platform.platform(),
                  "cpu_count": os.cpu_count(), "parts": args.parts, "configs": args.configs,
                  "repeat": args.repeat, "sacrebleu_repeat": args.sacrebleu_repeat,
                  "load_average_start": os.getloadavg(),
                  "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    try:
        info["commit"] = subprocess.run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"],
                                        capture_output=True, text=True).stdout.strip()
    except OSError:
        pass
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
            payload["profile"], extras = run_profile(args, files, info, sets)
            payload.update(extras)
        else:
            child_argv = ["--parts", "profile", "--only", "fastbleu", "--profile-repeat",
                          str(args.profile_repeat), "--length-segments",
                          *map(str, args.length_segments), "--lengths",
                          *map(str, args.lengths)]
            result = child(args, child_argv, 1)
            payload["profile"] = result["profile"]
            payload.update({key: result[key] for key in ("kernel_by_pair", "pool_pieces")})
    if "threads" in args.parts and "fastbleu" in wanted:
        payload["threads"] = run_threads(args)
    info["peak_rss_mib_at_end"] = round(peak_rss_mib(), 1)
    info["load_average_end"] = os.getloadavg()
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
    if "profile" in payload and numba_threads_of(info) != 1:
        for name, p in payload["profile"].items():
            print_profile(name, p)
        print_extras(payload)
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


def numba_threads_of(info: dict):
    import numba

    return info.get("numba_threads", numba.config.NUMBA_NUM_THREADS)


if __name__ == "__main__":
    sys.exit(main())
