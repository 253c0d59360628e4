#!/usr/bin/env python3
"""Instructions per row of BLEU's statistics on a Parquet table's record batch (callgrind).

What is counted
---------------
``BLEU().column_statistics`` (both tokenizers and the counting kernel, one
thread) on the first ``--rows`` rows of ``bench_table.py``'s table (its
``hyp`` and ``ref`` columns, already read and converted, as the table job
hands them over), the path ``score_table`` takes for every record batch.
Timings on this shared machine move by tens of percent with the load; an
instruction count does not, so two trees are compared by this count.

A child process under ``valgrind --tool=callgrind --instr-atstart=no``
reads the batch, warms the kernels up, then switches the instrumentation on
(``callgrind_control -i on``) around ``runs`` calls.  It runs with 1 and
with 3 calls; half the difference, divided by the rows, is the count per
row (the warm-up and the switching cancel out).

Usage (build the table first with ``bench_table.py --rows 1000000``)::

    python benchmarks/count_table_instructions.py
    PYTHONPATH=<other tree> python benchmarks/count_table_instructions.py

The child runs under ``sys.executable`` (a pyenv shim on ``PATH`` would be a
shell script, which callgrind would follow instead).  About a minute.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_TABLE = Path("/tmp/fastbleu-bench/wmt22-1000000.parquet")


def child(table: str, rows: int, runs: int) -> None:
    """Read, warm up, then count ``runs`` calls with the instrumentation on."""
    os.environ["NUMBA_NUM_THREADS"] = "1"
    import pyarrow.parquet as pq

    from fastbleu import BLEU
    from fastbleu.statistics.tokens import HashBuffer
    from fastbleu.tables.columns import hypothesis_column, reference_streams
    from fastbleu.inputs.text import as_text_column

    batch = next(pq.ParquetFile(table).iter_batches(batch_size=rows, columns=["hyp", "ref"]))
    hyps = as_text_column(hypothesis_column(batch, "hyp", 0, "strict"), "hyp", trusted=True)
    refs = reference_streams(batch, ["ref"], 0, "strict")
    metric, buffers = BLEU(), (HashBuffer(), HashBuffer())
    metric.column_statistics(hyps, refs, buffers=buffers)  # compile or load the kernels

    def instrument(switch: str) -> None:
        subprocess.run(["callgrind_control", "-i", switch, str(os.getpid())],
                       capture_output=True, check=True)

    instrument("on")
    for _ in range(runs):
        metric.column_statistics(hyps, refs, buffers=buffers)
    instrument("off")


def counted(table: str, rows: int, runs: int) -> int:
    """Instructions callgrind counted in a child making ``runs`` calls."""
    python = sys.executable
    with tempfile.TemporaryDirectory() as work:
        out = Path(work) / "callgrind.out"
        subprocess.run(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                        f"--callgrind-out-file={out}", python, __file__, "--child",
                        "--table", table, "--rows", str(rows), "--runs", str(runs)],
                       capture_output=True, check=True)
        found = re.search(r"^totals: (\d+)", out.read_text(), re.M)
        if found is None:
            sys.exit("callgrind wrote no totals")
        return int(found.group(1))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--table", default=str(DEFAULT_TABLE))
    parser.add_argument("--rows", type=int, default=1 << 16)
    parser.add_argument("--runs", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.table, args.rows, args.runs)
        return 0
    if not Path(args.table).exists():
        sys.exit(f"{args.table} not found: build it with bench_table.py --rows 1000000")
    if shutil.which("valgrind") is None:
        sys.exit("valgrind is not installed")
    one, three = counted(args.table, args.rows, 1), counted(args.table, args.rows, 3)
    print(f"column_statistics: {(three - one) / 2 / args.rows:,.1f} instructions per row "
          f"({args.rows:,} rows of {args.table})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
