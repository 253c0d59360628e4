"""A signal stops a long job at once: queued chunks are cancelled, running ones not waited for.

Before, SIGTERM 3 s into TER on 6,000 lines of 120 words exited with the right
status 35-71 s later: the chunks still queued on the thread pool ran to the
end, and the interpreter joined the pool's threads at exit.  Each test here
starts the real command in a subprocess on a job of tens of seconds (its
kernels loaded from a cache the module fills first, so the signal lands in
the scoring), sends a real signal, and checks the exit status (proof that
the job was still running) and that the process was gone a few seconds later.
The bound is a correctness bound for a loaded two-core machine, not a timing.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from testkit.data import ROOT

pytestmark = [pytest.mark.slow,  # long jobs in subprocesses, stopped by real signals
              pytest.mark.skipif(not hasattr(signal, "SIGTERM") or os.name != "posix",
                                reason="POSIX signals")]

#: Seconds from the signal to the process's end that count as "at once" on a loaded machine.
BOUND = 5.0
#: Seconds after the start before the signal: kernels loaded, the job under way.
SETTLE = 4.0


def _lines(rng: random.Random, n: int, words: int) -> list[str]:
    vocabulary = [f"w{i}" for i in range(400)]
    return [" ".join(rng.choice(vocabulary) for _ in range(words)) for _ in range(n)]


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("signals")
    rng = random.Random(30)
    files = {}
    for name, n, words in (("ref", 6000, 120), ("hyp", 6000, 120), ("hyp2", 6000, 120),
                           ("small_ref", 300, 120), ("small_hyp", 300, 120),
                           ("small_hyp2", 300, 120)):
        files[name] = folder / name
        files[name].write_text("\n".join(_lines(rng, n, words)) + "\n", encoding="utf-8")
    for name, (hyp, ref) in {"table": ("hyp", "ref"),
                             "small_table": ("small_hyp", "small_ref")}.items():
        hyps = files[hyp].read_text().splitlines()
        refs = files[ref].read_text().splitlines()
        files[name] = folder / f"{name}.tsv"
        files[name].write_text("hyp\tref\n" + "".join(f"{h}\t{r}\n" for h, r in zip(hyps, refs)),
                               encoding="utf-8")
        # Parquet: of more than one batch, read by two readers at first (a small first batch)
        files[f"{name}_parquet"] = folder / f"{name}.parquet"
        pq.write_table(pa.table({"hyp": hyps, "ref": refs}), files[f"{name}_parquet"],
                       row_group_size=1000)
    files["cache"] = folder / "xdg"
    return files


def _command(data, job: str, small: bool = False) -> list[str]:
    ref, hyp, hyp2, table, parquet = (
        (data["small_ref"], data["small_hyp"], data["small_hyp2"], data["small_table"],
         data["small_table_parquet"]) if small else
        (data["ref"], data["hyp"], data["hyp2"], data["table"], data["table_parquet"]))
    jobs = {
        "ter": [ref, "-i", hyp, "-m", "ter"],
        "ter-table": [table, "--hyp-column", "hyp", "--ref-column", "ref", "-m", "ter",
                      "--batch-size", "500"],
        "ter-parquet": [parquet, "--hyp-column", "hyp", "--ref-column", "ref", "-m", "ter",
                        "--batch-size", "200"],
        "chrf-confidence": [ref, "-i", hyp, "-m", "chrf", "-ci", "-cin",
                            "20" if small else "2000000"],
        "bleu-paired": [ref, "-i", hyp, hyp2, "-pbs", "-pbsn", "20" if small else "2000000"],
    }
    return [sys.executable, "-m", "fastbleu", *map(str, jobs[job])]


def _env(data) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR",)}
    env.update(PYTHONPATH=str(ROOT), XDG_CACHE_HOME=str(data["cache"]), NUMBA_NUM_THREADS="2")
    return env


JOBS = ["ter", "ter-table", "ter-parquet", "chrf-confidence", "bleu-paired"]


@pytest.fixture(scope="module")
def warm(data):
    """Every job once on a small input, so that the signalled runs load their kernels."""
    for job in JOBS:
        done = subprocess.run(_command(data, job, small=True), capture_output=True, text=True,
                              env=_env(data), cwd=ROOT, timeout=600)
        assert done.returncode == 0, done.stderr
    return data


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT], ids=["TERM", "INT"])
@pytest.mark.parametrize("job", JOBS)
def test_a_signal_stops_a_long_job_at_once(warm, job, signum):
    process = subprocess.Popen(_command(warm, job), stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=_env(warm), cwd=ROOT)
    try:
        time.sleep(SETTLE)
        assert process.poll() is None, "the job ended before the signal: make it longer"
        sent = time.monotonic()
        process.send_signal(signum)
        out, err = process.communicate(timeout=300)
        elapsed = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    expected = 130 if signum == signal.SIGINT else 128 + signum
    assert process.returncode == expected, err
    assert out == ""
    assert "no output was written" in err and "Traceback" not in err
    assert elapsed < BOUND, f"{job}: {elapsed:.1f} s from the signal to the exit"
