"""The install's seed of the kernel cache: a first run loads what ``pip install`` compiled.

``setup.py`` runs the warm-up (:mod:`fastbleu._native.warmup`) and keeps what
numba cached as ``fastbleu/_native/kernel_cache`` (:mod:`fastbleu._kernels.seed`);
a process copies it into its fresh cache folder.  These tests run the real
command with a fresh user cache and ask numba whether anything was compiled
(the compile notice, which shows at numba's own ``numba:compile`` event), and
run copies of the package with a tampered seed.  They skip where this
checkout's seed was not built by its install (``pip install -e .`` builds it);
``.ci/run`` checks that the install built it.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from testkit.data import DATA, ROOT
from fastbleu._kernels import aot, cache, seed
from fastbleu.progress import COMPILE_NOTICE

PACKAGE = ROOT / "fastbleu"
SEED = seed.SEED_DIR / seed.seed_name(cache.source_digest())


def _needs_seed():
    if not SEED.is_dir():
        built = sorted(p.name for p in seed.SEED_DIR.glob("*")) if seed.SEED_DIR.is_dir() else []
        pytest.skip("this checkout's kernel seed is not built "
                    + (f"(the install built {built[0]}: the source changed since; "
                       if built else "(")
                    + "run `pip install -e .`)")


def _run(argv, cache_home: Path, extra_env=None, site: Path | None = None, **kwargs):
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "FASTBLEU_NO_AOT", "XDG_CACHE_HOME")}
    env.update(XDG_CACHE_HOME=str(cache_home), PYTHONPATH=str(site or ROOT),
               **(extra_env or {}))
    kwargs.setdefault("cwd", cache_home.parent)  # never a folder another test left behind
    return subprocess.run([sys.executable, *argv], capture_output=True, text=True,
                          timeout=600, env=env, **kwargs)


SAMPLE = [str(DATA / "sample.ref-A.en"), str(DATA / "sample.ref-B.en"), "-i",
          str(DATA / "sample.sys-A.en")]


#: The command's cases after the first; in the quick run, one child process runs them all
#: (test_a_first_table_and_token_ids_compile_nothing), and each has its own fresh cache and
#: warm rerun with -m slow (issue 28: three seconds a case).
MORE_OPTIONS = [
    ["-m", "chrf", "--chrf-word-order", "2"], ["-m", "ter"], ["-m", "nist"],
    ["-m", "bleu", "-tok", "intl"], ["-m", "bleu", "-tok", "zh"],
    ["-m", "bleu", "chrf", "ter", "-pbs", "-pbsn", "10"],
]


def _argv(options: list[str]) -> list[str]:
    """The command's arguments: the sample's two references and system A (and B for -pbs)."""
    argv = [*SAMPLE, *options]
    if "-pbs" in options:
        argv[3:4] = [str(DATA / "sample.sys-A.en"), str(DATA / "sample.sys-B.en")]
    return argv


@pytest.mark.parametrize("options", [
    ["-m", "chrf"],
    *(pytest.param(options, marks=pytest.mark.slow) for options in MORE_OPTIONS),
], ids=lambda options: " ".join(options))
def test_a_first_run_from_a_fresh_cache_compiles_nothing(options, tmp_path):
    """--progress would show the compile notice at numba's first compile (without the
    seed it does: test_compile_notice.py): a seeded first run shows none, and prints
    what a run from the warm cache prints."""
    _needs_seed()
    argv = ["-m", "fastbleu", *_argv(options), "--progress"]
    cold = _run(argv, tmp_path / "cache")
    assert cold.returncode == 0, cold.stderr
    assert "compiling" not in cold.stderr, cold.stderr
    warm = _run(argv, tmp_path / "cache")
    assert warm.stdout == cold.stdout != ""


def test_a_first_table_and_token_ids_compile_nothing(tmp_path):
    """One child process from a fresh cache, listening for numba's compile events: tables
    of each metric, token ids, and the command with each of MORE_OPTIONS."""
    _needs_seed()
    script = textwrap.dedent("""
        import contextlib, io, json, sys
        import numpy as np, pyarrow as pa, pyarrow.parquet as pq
        from numba.core import event
        import fastbleu
        from fastbleu.cli import main
        compiled = []
        class Listener(event.Listener):
            def on_start(self, ev):
                f = getattr((ev.data or {}).get("dispatcher"), "py_func", None)
                if getattr(f, "__module__", "").startswith("fastbleu."):
                    compiled.append(f.__qualname__)
            def on_end(self, ev):
                pass
        event.register("numba:compile", Listener())
        lines = open(sys.argv[1]).read().splitlines()
        refs = open(sys.argv[2]).read().splitlines()
        pq.write_table(pa.table({"hyp": lines * 40, "ref": refs * 40,
                                 "system": ["a", "b"] * (20 * len(lines))}), "t.parquet")
        for metrics in (["bleu"], ["chrf"], ["ter"], ["nist"]):
            fastbleu.score_table("t.parquet", group_by="system", metrics=metrics)
        ids = np.random.default_rng(1).integers(0, 50, size=(40000, 20))
        fastbleu.BLEU().sentence_scores(fastbleu.TokenIds(ids, pad_id=0),
                                        [fastbleu.TokenIds(ids[::-1].copy(), pad_id=0)])
        statuses = []
        for argv in json.loads(sys.argv[3]):
            with contextlib.redirect_stdout(io.StringIO()) as out:
                statuses.append(main(argv))
            statuses.append(out.getvalue() != "")
        print(statuses)
        print(sorted(set(compiled)))
    """)
    commands = json.dumps([_argv(options) for options in MORE_OPTIONS])
    done = _run(["-c", script, str(DATA / "sample.sys-A.en"), str(DATA / "sample.ref-A.en"),
                 commands], tmp_path / "cache", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [str([0, True] * len(MORE_OPTIONS)), "[]"], done.stderr


# ---------------------------------------------------------------------------------------
# A copy of the package with its seed, tampered with
# ---------------------------------------------------------------------------------------

_PROBE = textwrap.dedent("""
    import numpy as np
    from fastbleu._kernels.text import hashing
    hashing.finish(np.uint64(12345))
    print(sum(hashing.finish.stats.cache_hits.values()))
""")


@pytest.fixture
def installed(tmp_path):
    """A copy of the package (as pip would put it elsewhere) with its seed."""
    _needs_seed()
    site = tmp_path / "site-packages"
    shutil.copytree(PACKAGE, site / "fastbleu", ignore=shutil.ignore_patterns("__pycache__"))
    return site


def _hits(site: Path, cache_home: Path, **extra_env) -> tuple[int, str]:
    done = _run(["-c", _PROBE], cache_home, extra_env, site=site, cwd=site)
    assert done.returncode == 0, done.stderr
    return int(done.stdout), done.stderr


def _text_seed(site: Path) -> Path:
    return site / "fastbleu" / "_native" / "kernel_cache" / SEED.name / "_kernels.text"


def test_the_seed_is_valid_wherever_the_package_is(installed, tmp_path):
    """Loaded from the copied seed (a cache hit on the first run), the copy's files in the
    user's cache only, mode 0600; FASTBLEU_NO_AOT=1 turns the seed off."""
    assert _hits(installed, tmp_path / "a") == (1, "")
    copied = [p for p in (tmp_path / "a").rglob("*") if p.is_file()]
    assert copied and all(stat.S_IMODE(p.stat().st_mode) == 0o600 for p in copied)
    assert _hits(installed, tmp_path / "b", FASTBLEU_NO_AOT="1")[0] == 0


@pytest.mark.slow  # cold compiles in child processes (issue 28: -m slow)
def test_a_seed_others_can_write_is_not_used(installed, tmp_path):
    """The seed is code, as the cache is: a folder that group or others can write is not
    read, and the kernel is compiled instead."""
    folder = _text_seed(installed)
    folder.chmod(0o777)
    assert _hits(installed, tmp_path / "a")[0] == 0
    folder.chmod(0o700)
    folder.parent.parent.chmod(0o757)  # a folder above it
    assert _hits(installed, tmp_path / "b")[0] == 0


@pytest.mark.slow  # cold compiles in child processes (issue 28: -m slow)
def test_a_fifo_or_a_link_in_the_seed_is_skipped(installed, tmp_path):
    folder = _text_seed(installed)
    index = next(folder.glob("hashing.finish-*.nbi"))
    index.unlink()
    os.mkfifo(index)
    assert _hits(installed, tmp_path / "a")[0] == 0  # no hang: compiled instead
    index.unlink()
    outside = tmp_path / "outside.nbi"
    outside.write_bytes(b"x")
    index.symlink_to(outside)
    assert _hits(installed, tmp_path / "b")[0] == 0


@pytest.mark.slow  # cold compiles in child processes (issue 28: -m slow)
def test_a_damaged_seed_file_is_compiled_again_with_one_warning(installed, tmp_path):
    folder = _text_seed(installed)
    for data in folder.glob("hashing.finish-*.nbc"):
        data.write_bytes(data.read_bytes()[:-40])
    hits, stderr = _hits(installed, tmp_path / "a")
    assert hits == 0
    assert len(stderr.strip().splitlines()) == 1 and "damaged" in stderr
    assert _hits(installed, tmp_path / "a") == (1, "")  # replaced in the user's cache


@pytest.mark.slow  # cold compiles in child processes (issue 28: -m slow)
def test_a_seed_of_other_source_or_versions_is_not_used(installed, tmp_path):
    root = installed / "fastbleu" / "_native" / "kernel_cache"
    (root / SEED.name).rename(root / "src-0000-000000000000")
    assert _hits(installed, tmp_path / "a")[0] == 0


@pytest.mark.slow  # cold compiles in child processes (issue 28: -m slow)
def test_the_user_cache_keeps_its_own_files(installed, tmp_path):
    """A file the user's cache already has is not replaced by the seed's."""
    assert _hits(installed, tmp_path / "a", FASTBLEU_NO_AOT="1")[0] == 0  # compiled there
    before = {p: p.read_bytes() for p in (tmp_path / "a").rglob("*.nb?")}
    _hits(installed, tmp_path / "a")
    assert all(p.read_bytes() == data for p, data in before.items())


def test_a_failed_seed_build_warns_and_the_install_goes_on(tmp_path, capsys):
    """setup.py calls build_seed_or_warn: a warm-up that fails is a warning line, not a
    failed install."""
    package = tmp_path / "src" / "fastbleu"
    shutil.copytree(PACKAGE, package,
                    ignore=shutil.ignore_patterns("__pycache__", "kernel_cache"))
    (package / "_native" / "warmup.py").write_text("raise SystemExit('no warm-up here')\n")
    assert not aot.build_seed_or_warn(package, tmp_path / "out", tmp_path / "work")
    err = capsys.readouterr().err
    assert err.startswith("warning: fastbleu's compiled kernel cache was not built")
    assert "no warm-up here" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()


def test_an_index_is_copied_only_with_all_its_data_files(tmp_path):
    """A seed file that cannot be copied (here: not a regular file; on a full disk: a
    failed write) keeps its kernel's index out of the cache, so that kernel is compiled
    rather than reported as a damaged entry; other kernels are copied whole."""
    from fastbleu._kernels.seed import fill

    seed, folder = tmp_path / "seed", tmp_path / "cache"
    seed.mkdir()
    folder.mkdir(mode=0o700)
    for name in ("a.py311.nbi", "a.py311.1.nbc", "b.py311.nbi", "b.py311.1.nbc"):
        (seed / name).write_bytes(name.encode())
    os.mkfifo(seed / "b.py311.2.nbc")  # b's second data file cannot be copied
    assert fill(folder, seed) == 3
    assert sorted(p.name for p in folder.iterdir()) == ["a.py311.1.nbc", "a.py311.nbi",
                                                        "b.py311.1.nbc"]
