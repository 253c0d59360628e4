#!/usr/bin/env python3
"""NIST of a table of systems, read in record batches: fastbleu against NLTK, in the same run.

What is measured
----------------
One table per WMT22 pair (``../shared/wmt22``, see its README): every system
of the pair, each row a segment with its system's output and the pair's
references (two columns), as sacrebleu-style evaluation tables hold them.

1. ``fastbleu.score_table(table, group_by="system", metrics=["nist"])`` with
   ``batch_size`` 65,536 (the table in one batch) and 4,096 (several): the
   first pass over the references (NIST's weights of every system's whole
   references, :mod:`fastbleu.tables.prepass`) included.  Every system's
   score must equal ``NIST().corpus_score`` of that system alone (``==``)
   and NLTK's to 1e-12 relative, whatever the batch size;
2. the first pass alone (counting and weighing), to show its share;
3. the same table with ``metrics=["bleu"]``: BLEU does no first pass;
4. NLTK's ``corpus_nist`` per system, on sacrebleu's 13a tokens (tokenized
   before timing), summed over the systems.

fastbleu: best of ``--repeat`` (default 3) after a warm-up; NLTK once.

Running it
----------
From the repository root::

    python benchmarks/bench_nist_table.py --json benchmarks/results/nist-table.json
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
WMT22 = ROOT.parent / "shared" / "wmt22"


def _lines(path) -> list[str]:
    with open(path, encoding="utf-8", newline="\n") as handle:
        return handle.read().split("\n")[:-1]


def _best(fn, repeat: int) -> float:
    fn()
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


def run_pair(pair: str, repeat: int) -> dict:
    import pyarrow as pa
    from nltk.translate.nist_score import corpus_nist
    from sacrebleu.tokenizers.tokenizer_13a import Tokenizer13a

    from fastbleu import NIST, score_table
    from fastbleu.tables import prepass
    from fastbleu.tables.job import TableJob
    from fastbleu.tables.readers import open_table

    target = pair.split("-")[1]
    refs = [_lines(p) for p in sorted((WMT22 / "references").glob(
        f"generaltest2022.{pair}.ref.*.{target}"))][:2]
    prefix = f"generaltest2022.{pair}.hyp."
    systems = {p.name[len(prefix):-len(target) - 1]: _lines(p) for p in sorted(
        (WMT22 / "system-outputs").glob(f"{prefix}*.{target}"))}
    rows = {"system": [], "hyp": [], "ref": [], "ref2": []}
    for name, hyps in systems.items():
        rows["system"] += [name] * len(hyps)
        rows["hyp"] += hyps
        rows["ref"] += refs[0]
        rows["ref2"] += refs[1]
    table = pa.table(rows)
    out = {"pair": pair, "systems": len(systems), "rows": table.num_rows}

    def nist_table(batch_size):
        return score_table(table, refs=["ref", "ref2"], group_by="system", metrics=["nist"],
                           batch_size=batch_size)

    for batch_size in (1 << 16, 4096):
        out[f"nist_table_{batch_size}_s"] = _best(lambda: nist_table(batch_size), repeat)
    out["bleu_table_65536_s"] = _best(lambda: score_table(
        table, refs=["ref", "ref2"], group_by="system", metrics=["bleu"]), repeat)
    job = TableJob.create("hyp", ["ref", "ref2"], "system", None, None, False, "strict",
                          1 << 16, {}, ["nist"])
    metric_set = job.metric_set()

    def first_pass():
        source = open_table(table, ["ref", "ref2", "system"], 1 << 16, ["system"])
        counts = prepass.count_batches(job, metric_set, source.batches(), ("system",))
        return counts.weights(metric_set)

    out["first_pass_s"] = _best(first_pass, repeat)

    tok = Tokenizer13a()
    ref_tokens = [[tok(s[i]).split() for s in refs] for i in range(len(refs[0]))]
    nltk_scores, nltk_time = {}, 0.0
    for name, hyps in systems.items():
        hyp_tokens = [tok(h).split() for h in hyps]
        start = time.perf_counter()
        nltk_scores[name] = corpus_nist(ref_tokens, hyp_tokens)
        nltk_time += time.perf_counter() - start
    out["nltk_s"] = nltk_time

    worst, equal = 0.0, True
    for batch_size in (1 << 16, 4096, 97):
        for row in nist_table(batch_size).to_pylist():
            alone = NIST().corpus_score(systems[row["system"]], refs).score
            equal = equal and row["score"] == alone
            expected = nltk_scores[row["system"]]
            worst = max(worst, abs(row["score"] - expected) / expected)
    out["each_system_alone_equal"] = equal
    out["max_rel_diff_vs_nltk"] = worst
    assert equal and worst < 1e-12 and not math.isnan(worst), out
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="+", default=["de-en", "en-de"])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json")
    args = parser.parse_args()
    results = {"numba_num_threads": os.environ.get("NUMBA_NUM_THREADS", "default"),
               "load_before": os.getloadavg()[0],
               "pairs": [run_pair(pair, args.repeat) for pair in args.pairs]}
    results["load_after"] = os.getloadavg()[0]
    text = json.dumps(results, indent=2)
    print(text)
    if args.json:
        Path(args.json).write_text(text + "\n")


if __name__ == "__main__":
    main()
