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

``--table`` measures a table instead (``--pairs`` default ``de-en en-de``): per
pair, one in-memory table of every system's rows with the pair's two
references (``system, hyp, ref, ref2``), ``score_table(table, refs=["ref",
"ref2"], group_by="system", metrics=["nist"])`` in record batches of 65,536
and 4,096 rows (NIST's first pass over the references included), against
``metrics=["bleu"]`` (no first pass) and NLTK's ``corpus_nist`` per system.
Every system's score must equal ``NIST().corpus_score`` of that system alone
(``==``) at batch sizes 65,536, 4,096 and 97, and NLTK's to 1e-12 relative.

``--scale`` measures NIST at scale, every run a fresh process (start-up
included), NIST and BLEU alternated pair by pair after a warm-up pair so
that both see the same load:

* ``bench_table.py``'s Parquet file of ``--rows`` rows (the en/de WMT22
  systems with their pair's first reference, cycled; 41 system/pair groups),
  ``score_table(PATH, hyp="hyp", refs=["ref"], group_by=["system", "pair"],
  metrics=[M])`` and the command line ``fastbleu PATH --hyp-column hyp
  --ref-column ref --group-by system,pair -m M --quiet``: wall, CPU and peak
  RSS of each, the NIST/BLEU ratio of every pair, and the first
  ``--check-groups`` groups' NIST against ``NIST().corpus_score`` of the
  group alone (``==``);
* with ``--distinct-rows N``, a table of N rows whose references are all
  distinct (seeded Zipf words from a vocabulary of a million: almost every
  3- to 5-gram is new), ``fastbleu PATH -m nist --quiet`` under
  ``--memory-limit`` GiB of address space (``ulimit -v``): wall, peak RSS,
  exit status and the last line of its standard error (a score, or the
  one-line refusal with the options that help), and BLEU's the same way;
* with ``--baseline DIR`` (a folder holding another commit's ``fastbleu/``),
  that tree's command-line NIST too, in the same alternation (and on the
  distinct table, under the same limit).

Without ``../shared/wmt22`` both parts run on ``common``'s synthetic pairs (said in
the output; only the code is measured then).

Running it
----------
From the repository root::

    python benchmarks/bench_nist.py --json benchmarks/results/nist.json
    python benchmarks/bench_nist.py --pairs de-en --segments 500   # quick look
    python benchmarks/bench_nist.py --table --json benchmarks/results/nist-table.json
    python benchmarks/bench_nist.py --scale --rows 1000000 --repeat 5 \\
        --json benchmarks/results/nist-scale.json
    mkdir /tmp/before && git archive e3fb84e fastbleu | tar -x -C /tmp/before
    python benchmarks/bench_nist.py --scale --repeat 3 --baseline /tmp/before
    python benchmarks/bench_nist.py --scale --rows 0 --distinct-rows 10000000 \\
        --memory-limit 8 --baseline /tmp/before --json benchmarks/results/nist-distinct.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import common  # noqa: E402

common.use_checkout()


def best_of(repeat: int, function, *args):
    best, value = math.inf, None
    for _ in range(repeat):
        start = time.perf_counter()
        value = function(*args)
        best = min(best, time.perf_counter() - start)
    return best, value


def pair_lists(pair: str, segments: int | None):
    """A pair's systems by name and all its reference streams, cut to ``segments``."""
    outputs, streams, what = common.pair_data(pair, references=2)
    if common.have_wmt22():  # every reference of the pair, not just two
        target = pair.split("-")[1]
        streams = [common.read_lines(p) for p in sorted(
            (common.WMT22 / "references").glob(f"generaltest2022.{pair}.ref.*.{target}"))]
    cut = slice(None, segments)
    return {k: v[cut] for k, v in outputs.items()}, [s[cut] for s in streams], what


def run_table_pair(pair: str, repeat: int, tok, nltk_corpus_nist) -> dict:
    import pyarrow as pa

    from fastbleu import NIST, score_table

    systems, refs, what = pair_lists(pair, None)
    refs = refs[:2]
    rows = {"system": [], "hyp": [], "ref": [], "ref2": []}
    for name, hyps in systems.items():
        rows["system"] += [name] * len(hyps)
        rows["hyp"] += hyps
        rows["ref"] += refs[0]
        rows["ref2"] += refs[1]
    table = pa.table(rows)
    out = {"pair": pair, "data": what, "systems": len(systems), "rows": table.num_rows}

    def scored(batch_size, metric="nist"):
        return score_table(table, refs=["ref", "ref2"], group_by="system", metrics=[metric],
                           batch_size=batch_size)

    scored(1 << 16)  # warm-up
    for batch_size in (1 << 16, 4096):
        out[f"nist_table_{batch_size}_s"] = best_of(repeat, scored, batch_size)[0]
    out["bleu_table_65536_s"] = best_of(repeat, scored, 1 << 16, "bleu")[0]
    ref_tokens = [[tok(s[i]).split() for s in refs] for i in range(len(refs[0]))]
    nltk_scores, nltk_time = {}, 0.0
    for name, hyps in systems.items():
        hyp_tokens = [tok(h).split() for h in hyps]
        start = time.perf_counter()
        nltk_scores[name] = nltk_corpus_nist(ref_tokens, hyp_tokens)
        nltk_time += time.perf_counter() - start
    out["nltk_s"] = nltk_time
    worst, equal = 0.0, True
    for batch_size in (1 << 16, 4096, 97):
        for row in scored(batch_size).to_pylist():
            equal = equal and row["score"] == NIST().corpus_score(systems[row["system"]],
                                                                  refs).score
            expected = nltk_scores[row["system"]]
            worst = max(worst, abs(row["score"] - expected) / expected)
    out["each_system_alone_equal"] = equal
    out["max_rel_diff_vs_nltk"] = worst
    out["vs_nltk"] = {k: nltk_time / out[k] for k in ("nist_table_65536_s", "nist_table_4096_s")}
    print(json.dumps(out), flush=True)
    if not (equal and worst < 1e-12):
        raise SystemExit(f"error: NIST of the {pair} table differs: {out}")
    return out


_SCORE_TABLE = ("import sys; from fastbleu import score_table; "
                "score_table(sys.argv[1], hyp='hyp', refs=['ref'], group_by=['system', 'pair'], "
                "metrics=[sys.argv[2]])")


def child(command: list[str], limit_gib: float | None = None, env: dict | None = None,
          cwd: str | None = None) -> dict:
    """Wall, CPU seconds, peak RSS, exit status and the last line of standard error of one
    child process (``os.wait4``: its own usage), under ``limit_gib`` of address space;
    ``env`` adds to the environment."""
    def limited():
        if limit_gib:
            size = int(limit_gib * 2**30)
            resource.setrlimit(resource.RLIMIT_AS, (size, size))

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=out, stderr=err, preexec_fn=limited,
                                   env={**os.environ, **(env or {})}, cwd=cwd)
        _, status, usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - start
        out.seek(0)
        err.seek(0)
        lines = err.read().decode(errors="replace").strip().splitlines()
        result = {"wall": round(wall, 3), "cpu": round(usage.ru_utime + usage.ru_stime, 3),
                  "peak_mib": round(usage.ru_maxrss / 1024),
                  "status": os.waitstatus_to_exitcode(status),
                  "stderr_last": lines[-1] if lines else ""}
        return result


def _spread(values: list[float]) -> dict:
    return {"min": round(min(values), 3), "median": round(statistics.median(values), 3),
            "max": round(max(values), 3)}


def run_scale(args) -> dict:
    """NIST against BLEU on bench_table's table, through score_table and the command line."""
    import bench_table

    path = bench_table.table_path(args.workdir, args.rows)
    commands = {
        "api": lambda m: [sys.executable, "-c", _SCORE_TABLE, str(path), m],
        "cli": lambda m: [sys.executable, "-m", "fastbleu", str(path), "--hyp-column", "hyp",
                          "--ref-column", "ref", "--group-by", "system,pair", "-m", m,
                          "--quiet"],
    }
    runs = {(way, m): [] for way in commands for m in ("bleu", "nist")}
    if args.baseline:  # the command line's NIST of another tree, in the same alternation
        runs["baseline", "nist"] = []
    for pair in range(args.repeat + 1):  # the first pair warms the caches, not counted
        for way, command in commands.items():
            for metric in ("bleu", "nist"):
                result = child(command(metric))
                if result["status"]:
                    raise SystemExit(f"{' '.join(command(metric))} failed: {result}")
                if pair:
                    runs[way, metric].append(result)
        if args.baseline:
            result = child(commands["cli"]("nist"), env={"PYTHONPATH": str(args.baseline)},
                           cwd=str(args.workdir))
            if result["status"]:
                raise SystemExit(f"the baseline failed: {result}")
            if pair:
                runs["baseline", "nist"].append(result)
        print(f"pair {pair}/{args.repeat}{' (warm-up)' if not pair else ''}: load average "
              f"{os.getloadavg()[0]:.2f}", flush=True)
    report = {"rows": args.rows, "table": path.name, "commands": {
        way: " ".join(["python" if c == sys.executable else c for c in command("M")])
        for way, command in commands.items()}}
    for way in commands:
        nist, bleu = runs[way, "nist"], runs[way, "bleu"]
        report[way] = {
            "nist": {k: _spread([r[k] for r in nist]) for k in ("wall", "cpu", "peak_mib")},
            "bleu": {k: _spread([r[k] for r in bleu]) for k in ("wall", "cpu", "peak_mib")},
            "ratio": {k: _spread([a[k] / b[k] for a, b in zip(nist, bleu)])
                      for k in ("wall", "cpu")},
        }
    if args.baseline:
        base = runs["baseline", "nist"]
        report["baseline"] = {"tree": str(args.baseline), "nist": {
            k: _spread([r[k] for r in base]) for k in ("wall", "cpu", "peak_mib")},
            "ratio_to_bleu": {k: _spread([a[k] / b[k] for a, b in zip(base, runs["cli", "bleu"])])
                              for k in ("wall", "cpu")}}
    report["groups_checked_exactly"] = check_groups(path, args.check_groups)
    report["runs"] = {f"{way}-{m}": rs for (way, m), rs in runs.items()}
    return report


def check_groups(path: Path, groups: int) -> int:
    """The first ``groups`` groups' NIST of ``score_table`` (in this process, untimed) against
    ``NIST().corpus_score`` of each group's rows alone (``==``)."""
    import pyarrow.parquet as pq

    from fastbleu import NIST, score_table

    result = score_table(str(path), hyp="hyp", refs=["ref"], group_by=["system", "pair"],
                         metrics=["nist"]).to_pylist()
    data = pq.read_table(path).to_pandas()
    checked = 0
    for record in result[:groups]:
        part = data[(data.system == record["system"]) & (data.pair == record["pair"])]
        expected = NIST().corpus_score(part.hyp.tolist(), [part.ref.tolist()]).score
        if record["score"] != expected:
            raise SystemExit(f"group {record['system']}/{record['pair']}: {record} vs "
                             f"{expected}")
        checked += 1
    return checked


def distinct_table(rows: int, workdir: Path) -> Path:
    """``rows`` rows of ``hyp, ref`` whose references are all distinct (seeded Zipf words,
    a vocabulary of a million); written once, reused."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.parquet as pq

    workdir.mkdir(parents=True, exist_ok=True)
    path = workdir / f"distinct-{rows}.parquet"
    if path.exists():
        return path.resolve()
    rng = np.random.default_rng(2022)
    writer = None
    start = time.perf_counter()
    for first in range(0, rows, 200_000):
        n = min(200_000, rows - first)
        columns = {}
        for name in ("hyp", "ref"):
            ranks = np.minimum(rng.zipf(1.1, size=(n, 30)), 1_000_000)
            lengths = rng.integers(10, 31, size=n)
            columns[name] = [" ".join(map(str, ranks[i, :lengths[i]].tolist()))
                             for i in range(n)]
        table = pa.table(columns)
        writer = writer or pq.ParquetWriter(path, table.schema)
        writer.write_table(table, row_group_size=1 << 17)
    writer.close()
    print(f"built {path} ({path.stat().st_size / 2**20:.0f} MiB) in "
          f"{time.perf_counter() - start:.1f} s", flush=True)
    return path.resolve()


def run_distinct(args) -> dict:
    """NIST (and BLEU, and the baseline's NIST) of a table whose references are all distinct,
    each under the memory limit."""
    path = distinct_table(args.distinct_rows, args.workdir)
    command = [sys.executable, "-m", "fastbleu", str(path), "-m", "nist", "--quiet"]
    runs = {"nist": child(command, args.memory_limit),
            "bleu": child(command[:-3] + ["--quiet"], args.memory_limit)}
    if args.baseline:
        runs["baseline_nist"] = child(command, args.memory_limit,
                                      env={"PYTHONPATH": str(args.baseline)},
                                      cwd=str(args.workdir))
    for name, result in runs.items():
        print(name, json.dumps(result), flush=True)
    return {"rows": args.distinct_rows, "memory_limit_gib": args.memory_limit,
            "command": f"(ulimit -v {int(args.memory_limit * 2**20)}; fastbleu {path.name} "
                       "-m nist --quiet)", **runs}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pairs", nargs="+", default=None,
                        help="default: cs-en de-en en-de (--table: de-en en-de)")
    parser.add_argument("--table", action="store_true", help="score_table of each pair")
    parser.add_argument("--segments", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", default=None)
    parser.add_argument("--scale", action="store_true",
                        help="NIST against BLEU on a large table (and --distinct-rows)")
    parser.add_argument("--rows", type=int, default=1_000_000, help="--scale: 0 skips it")
    parser.add_argument("--workdir", type=Path, default=Path("/tmp/fastbleu-bench"))
    parser.add_argument("--check-groups", type=int, default=3)
    parser.add_argument("--baseline", type=Path, default=None,
                        help="--scale: also the command line's NIST of this tree (a folder "
                             "holding another commit's fastbleu/), alternated with the rest")
    parser.add_argument("--distinct-rows", type=int, default=0,
                        help="--scale: rows of a table whose references are all distinct")
    parser.add_argument("--memory-limit", type=float, default=8.0,
                        help="--distinct-rows: GiB of address space (ulimit -v)")
    args = parser.parse_args(argv)
    if args.scale:
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        result = {}
        if args.rows:
            result["scale"] = scale = run_scale(args)
            for way in ("api", "cli"):
                part = scale[way]
                print(f"{way}: NIST {part['nist']['wall']['median']:.2f} s "
                      f"({part['nist']['peak_mib']['max']} MiB), BLEU "
                      f"{part['bleu']['wall']['median']:.2f} s "
                      f"({part['bleu']['peak_mib']['max']} MiB): NIST/BLEU wall "
                      f"{part['ratio']['wall']['median']:.2f} "
                      f"(min {part['ratio']['wall']['min']:.2f}, "
                      f"max {part['ratio']['wall']['max']:.2f}), CPU "
                      f"{part['ratio']['cpu']['median']:.2f}", flush=True)
            if args.baseline:
                base = scale["baseline"]
                print(f"baseline cli: NIST {base['nist']['wall']['median']:.2f} s "
                      f"({base['nist']['peak_mib']['max']} MiB): NIST/BLEU wall "
                      f"{base['ratio_to_bleu']['wall']['median']:.2f}", flush=True)
        if args.distinct_rows:
            result["distinct"] = run_distinct(args)
        common.write_json(args.json, {"info": common.machine_info(argv=sys.argv[1:]), **result})
        return 0

    nltk = common.peer("nltk", required=True)  # noqa: F841
    from nltk.translate.nist_score import corpus_nist as nltk_corpus_nist
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from fastbleu import NIST
    from fastbleu.nltk import corpus_nist

    tok = Tokenizer13a()
    if args.table:
        pairs = [run_table_pair(p, args.repeat, tok, nltk_corpus_nist)
                 for p in args.pairs or ["de-en", "en-de"]]
        common.write_json(args.json, {"info": common.machine_info(), "pairs": pairs})
        return 0
    rows = []
    totals = {"nltk": 0.0, "fastbleu_nltk": 0.0, "fastbleu_text": 0.0, "fastbleu_cached": 0.0}
    warmed = False
    n_segments = 0
    for pair in args.pairs or ["cs-en", "de-en", "en-de"]:
        systems, streams, what = pair_lists(pair, args.segments)
        print(what)
        ref_tokens = [[tok(s[i]).split() for s in streams] for i in range(len(streams[0]))]
        if not warmed:
            NIST(references=[s[:50] for s in streams]).corpus_score(streams[0][:50], None)
        t_cache, cached = best_of(args.repeat, lambda: NIST(references=streams))
        totals["fastbleu_cached"] += t_cache
        for system, hyps in systems.items():
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
    common.write_json(args.json, {"info": common.machine_info(argv=sys.argv[1:]),
                                  "summary": summary, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main())
