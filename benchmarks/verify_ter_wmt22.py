#!/usr/bin/env python3
"""fastbleu's TER against sacrebleu 2.6 on every segment of every WMT22 system.

WMT22 published no TER, so sacrebleu 2.6 is the reference.  For every system
output of every pair in ``../shared/wmt22`` (67 systems, 127,579 segments,
6 pairs), every option set (the default; ``normalized``, ``no_punct``,
``asian_support``, ``case_sensitive`` each alone; all four together;
``asian_support`` with ``normalized`` and ``no_punct``), and every reference
set (each reference alone; with two references both, and a third stream,
the first again, whose mean lengths are thirds), it compares, with
``compare`` of ``tests/metrics/ter/test_ter_wmt22.py``:

- every segment's statistics: ``TER.segment_statistics`` against sacrebleu's
  ``_extract_corpus_statistics`` (edits equal; the scaled mean reference
  length over 720720 equal to sacrebleu's float mean);
- every segment's sentence score: ``TER.sentence_scores`` against the score
  sacrebleu's ``sentence_score`` makes of that segment's statistics row, and
  against sacrebleu's ``sentence_score`` called on every
  ``--sentence-stride``-th segment (default: every one); fastbleu's own
  ``sentence_score`` called on every ``--scalar-stride``-th segment (default:
  every 10th; each call costs about 1 ms, an hour over the whole run);
- the corpus score: ``TER.corpus_score`` against sacrebleu's
  ``corpus_score``, equal bit for bit (score, edits, reference length and
  printout) with 1 or 2 references, within 1e-12 relative with 3 (sacrebleu
  sums float means, fastbleu divides an exact integer sum once);
- the signatures, apart from the version field.

sacrebleu's ``translation_edit_rate`` (a pure function of two word lists) is
memoized for the duration of one system, so that the searches that its
statistics, sentence and corpus scores, multi-reference sets and the option
sets that tokenize alike repeat are done once (``memoized_sacrebleu_edits``
of the tests); everything else in sacrebleu runs as is.  Even so sacrebleu's
search takes hours: zh-en (long segments) and the character-split en-zh and
en-ja runs dominate.

It prints one line per system, and at the end a table of (pair, references,
options): systems, segments, mismatches (segments whose statistics, sentence
scores or called sentence scores differ, plus corpus and signature
disagreements), and max |corpus score diff|.  ``--json`` writes the table
(rewritten after every system, with ``"complete": false`` until the end).
At the first mismatch it prints the segment (hypothesis, references, both
rows) and stops, unless ``--keep-going``.

The command that made ``benchmarks/results/ter-wmt22-verify.json`` (one
process, niced; see "seconds" in the JSON for how long it took)::

    nohup nice -n 19 env PYTHONPATH=. NUMBA_NUM_THREADS=1 python3 \\
        benchmarks/verify_ter_wmt22.py --json benchmarks/results/ter-wmt22-verify.json \\
        > /tmp/ter-wmt22-verify.log 2>&1 &

A quick look: ``--pairs en-de --systems 1 --segments 200``.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))  # testkit
sys.path.insert(0, str(ROOT / "tests" / "metrics" / "ter"))  # test_ter_wmt22's comparison

import sacrebleu  # noqa: E402
from sacrebleu.metrics import TER as SacreTER  # noqa: E402

import fastbleu  # noqa: E402
from fastbleu import TER  # noqa: E402
from testkit.data import WMT22, read_lines, wmt22_system, wmt22_systems  # noqa: E402
from test_ter_wmt22 import (CJK_OPTIONS, OPTION_SETS, agrees, compare,  # noqa: E402
                            memoized_sacrebleu_edits, option_label, reference_sets)

#: The default, each option alone, all together, and asian_support with normalization and
#: punctuation removal (on every pair: on English and German targets it must change
#: nothing but is checked all the same).
VERIFY_OPTION_SETS = OPTION_SETS + [CJK_OPTIONS]


#: The pairs, cheapest for sacrebleu first (a mismatch, if any, shows early): zh-en's long
#: English segments and en-zh's characters take most of the time.
VERIFY_PAIRS = ["en-de", "en-ja", "cs-en", "de-en", "en-zh", "zh-en"]


def parse_args(argv=None) -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--pairs", nargs="+", default=VERIFY_PAIRS, choices=VERIFY_PAIRS,
                   help="language pairs (default: all six, cheapest first)")
    p.add_argument("--systems", type=int, default=None, metavar="N",
                   help="only the first N systems of each pair (default: all)")
    p.add_argument("--segments", type=int, default=None, metavar="N",
                   help="only the first N segments of each system (default: all)")
    p.add_argument("--sentence-stride", type=int, default=1, metavar="K",
                   help="call sacrebleu's sentence_score on every K-th segment "
                        "(default 1: every segment)")
    p.add_argument("--scalar-stride", type=int, default=10, metavar="K",
                   help="call fastbleu's sentence_score on every K-th segment (default 10)")
    p.add_argument("--keep-going", action="store_true",
                   help="count mismatches and go on instead of stopping at the first")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the table as JSON")
    args = p.parse_args(argv)
    for name in ("systems", "segments", "sentence_stride", "scalar_stride"):
        value = getattr(args, name)
        if value is not None and value < 1:
            p.error(f"--{name.replace('_', '-')} must be at least 1, not {value}")
    return args


def segment_mismatches(result: dict) -> int:
    """The segments that differ in anything (statistics, vectorized or called sentence
    scores), each counted once."""
    return len(set(result["statistics"]) | set(result["sentence_scores"])
               | set(result["sentence_score"]))


def first_failure(hyps, streams, options, result) -> dict:
    """The first differing segment, alone: its text and both libraries' numbers."""
    bad = sorted(set(result["statistics"]) | set(result["sentence_scores"])
                 | set(result["sentence_score"]))
    if not bad:
        return {"corpus_or_signature": {k: result[k] for k in
                                        ("corpus", "corpus_diff", "corpus_exact",
                                         "corpus_edits", "signature")}}
    i = bad[0]
    hyp, refs = hyps[i], [stream[i] for stream in streams]
    ours = TER(**options)
    row = ours.segment_statistics([hyp], [[r] for r in refs])[0].tolist()
    theirs = SacreTER(**options)
    return {"segment": i, "hypothesis": hyp, "references": refs,
            "fastbleu_row": [row[0], row[1] / 720720], "fastbleu_scaled_row": row,
            "sacrebleu_row": theirs._extract_corpus_statistics([hyp], [[r] for r in refs])[0],
            "fastbleu_sentence": ours.sentence_score(hyp, refs).score,
            "sacrebleu_sentence": theirs.sentence_score(hyp, refs).score}


def git_commit() -> str | None:
    try:
        return subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def print_table(rows: list[dict]) -> None:
    print(f"{'pair':6} {'refs':6} {'options':52} {'systems':>7} {'segments':>9} "
          f"{'mismatches':>10} {'max |corpus diff|':>17}")
    for row in rows:
        print(f"{row['pair']:6} {row['refs']:6} {row['options']:52} {row['systems']:>7} "
              f"{row['segments']:>9,} {row['mismatches']:>10} {row['max_corpus_diff']:>17.3g}")


def main(argv=None) -> int:
    args = parse_args(argv)
    if not (WMT22 / "system-outputs").is_dir():
        print(f"WMT22 data not found at {WMT22}", file=sys.stderr)
        return 2
    started = time.time()
    table: dict[tuple, dict] = {}
    failures: list[dict] = []
    info = {
        "command": " ".join(["python3", "benchmarks/verify_ter_wmt22.py"] + sys.argv[1:]),
        "fastbleu": fastbleu.__version__, "fastbleu_commit": git_commit(),
        "sacrebleu": sacrebleu.__version__, "python": platform.python_version(),
        "started": time.strftime("%Y-%m-%d %H:%M:%S"),
        "option_sets": [option_label(o) for o in VERIFY_OPTION_SETS],
        "sentence_stride": args.sentence_stride, "scalar_stride": args.scalar_stride,
        "three_stream_tolerance": "1e-12 relative (corpus score only)",
    }

    def write_json(complete: bool) -> None:
        if not args.json:
            return
        rows = list(table.values())
        info["seconds"] = round(time.time() - started, 1)
        payload = {"complete": complete, "info": info, "rows": rows,
                   "totals": {"systems": len({(r["pair"], s) for r in rows
                                              for s in r["system_names"]}),
                              "segment_checks": sum(r["segments"] for r in rows),
                              "mismatches": sum(r["mismatches"] for r in rows)},
                   "failures": failures}
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")

    for pair in args.pairs:
        sets = list(reference_sets(pair))
        systems = wmt22_systems(pair)[:args.systems]
        for system in systems:
            t0 = time.time()
            hyps = read_lines(wmt22_system(pair, system))[:args.segments]
            with memoized_sacrebleu_edits() as memo:
                for options in VERIFY_OPTION_SETS:
                    for label, streams in sets:
                        streams = [stream[:len(hyps)] for stream in streams]
                        result = compare(hyps, streams, options, args.sentence_stride,
                                         args.scalar_stride)
                        key = (pair, label, option_label(options))
                        row = table.setdefault(key, {
                            "pair": pair, "refs": label, "options": key[2], "systems": 0,
                            "segments": 0, "mismatches": 0, "segment_mismatches": 0,
                            "corpus_exact": 0, "max_corpus_diff": 0.0, "system_names": []})
                        bad_segments = segment_mismatches(result)
                        ok = agrees(result, len(streams))
                        row["systems"] += 1
                        row["system_names"].append(system)
                        row["segments"] += len(hyps)
                        row["segment_mismatches"] += bad_segments
                        row["mismatches"] += bad_segments + (not ok and not bad_segments)
                        row["corpus_exact"] += result["corpus_exact"]
                        row["max_corpus_diff"] = max(row["max_corpus_diff"],
                                                     result["corpus_diff"])
                        if not ok:
                            failure = {"pair": pair, "system": system, "refs": label,
                                       "options": options,
                                       **first_failure(hyps, streams, options, result)}
                            failures.append(failure)
                            print("MISMATCH", json.dumps(failure, ensure_ascii=False),
                                  flush=True)
                            if not args.keep_going:
                                write_json(False)
                                return 1
            print(f"{time.strftime('%H:%M:%S')} {pair} {system}: {len(hyps):,} segments, "
                  f"{len(memo):,} sacrebleu searches, {time.time() - t0:,.0f} s "
                  f"(total {time.time() - started:,.0f} s)", flush=True)
            write_json(False)
    info["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    write_json(True)
    print()
    print_table(list(table.values()))
    total = sum(row["mismatches"] for row in table.values())
    print(f"\n{total} mismatches in {sum(r['segments'] for r in table.values()):,} segment "
          f"checks; {time.time() - started:,.0f} s")
    if args.json:
        print(f"wrote {args.json}")
    return 0 if total == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
