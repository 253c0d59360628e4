"""The one line a first run prints while numba compiles (issue 28): a compile is not a hang."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import numba
import pytest

import fastbleu._kernels  # noqa: F401  (installs the listener, as any kernel import does)
from fastbleu.progress import COMPILE_NOTICE, compile_message as message

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _jitted(module: str):
    """A new (never cached) numba function defined in ``module``: calling it compiles."""
    space = {"__name__": module}
    exec("def probe(x):\n    return x + 1\n", space)
    return numba.njit(space["probe"])


def test_message_names_the_metrics():
    assert message(["chrf"]) == ("fastbleu: compiling the chrF kernels once; later runs load "
                                 "them from the cache")
    assert "the BLEU and TER kernels" in message(["bleu", "ter"])
    assert "the BLEU, chrF and NIST kernels" in message(["bleu", "chrf", "nist", "chrf"])


def test_first_compile_of_a_fastbleu_kernel_prints_one_line():
    stream = io.StringIO()
    with COMPILE_NOTICE.during(message(["ter"]), stream=stream) as listener:
        assert _jitted("not_fastbleu.module")(1) == 2  # another library's compile: silent
        assert stream.getvalue() == "" and not listener.shown
        assert _jitted("fastbleu.probe_a")(1) == 2
        assert _jitted("fastbleu.probe_b")(1) == 2  # once per run, not per kernel
    assert stream.getvalue() == message(["ter"]) + "\n"
    _jitted("fastbleu.probe_c")(1)  # after the block: the listener is gone
    assert stream.getvalue() == message(["ter"]) + "\n"


def test_quiet_prints_nothing_and_a_closed_stream_is_no_error():
    stream = io.StringIO()
    with COMPILE_NOTICE.during(None, stream=stream) as listener:  # -q: no text
        _jitted("fastbleu.probe_d")(1)
    assert not listener.shown and stream.getvalue() == ""
    closed = io.StringIO()
    closed.close()
    with COMPILE_NOTICE.during(message(["bleu"]), stream=closed) as listener:
        assert _jitted("fastbleu.probe_e")(1) == 2
    assert listener.shown


@pytest.mark.slow
def test_cold_cache_prints_the_notice_once_warm_cache_never(tmp_path):
    """A fresh user cache compiles (the notice, on standard error only, where the progress
    line would be shown: here --progress); the next run loads from the cache and says
    nothing; on a fresh cache -q says nothing, nor does a run whose standard error is not
    a terminal (a script's, a test's), as for the progress line."""
    (tmp_path / "ref").write_text("the cat sat on the mat\na b c d\n")
    (tmp_path / "hyp").write_text("the cat sat on a mat\na b c\n")
    env = {k: v for k, v in os.environ.items() if k not in ("NUMBA_CACHE_DIR",)}
    env.update(XDG_CACHE_HOME=str(tmp_path / "cache"), FASTBLEU_NO_AOT="1",
               PYTHONPATH=ROOT)
    argv = [sys.executable, "-m", "fastbleu", str(tmp_path / "ref"), "-i",
            str(tmp_path / "hyp"), "-tok", "none", "-b"]
    runs = [subprocess.run(argv + extra, capture_output=True, text=True, timeout=600,
                           env={**env, "XDG_CACHE_HOME": str(tmp_path / cache)})
            for extra, cache in ((["--progress"], "cache"), (["--progress"], "cache"),
                                 (["-q"], "cold"), ([], "cold2"))]
    assert [r.returncode for r in runs] == [0, 0, 0, 0]
    assert runs[0].stdout == runs[1].stdout == runs[2].stdout == runs[3].stdout != ""
    assert runs[0].stderr == message(["bleu"]) + "\n"
    assert runs[1].stderr == runs[2].stderr == runs[3].stderr == ""
