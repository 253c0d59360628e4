#!/usr/bin/env python3
"""Wall-clock time of the ``fastbleu`` command line against ``sacrebleu``'s, on one test set.

What is measured
----------------
The time, as seen from a parent process, of running

    fastbleu REF -i HYP     (the console script; prints sacrebleu-style JSON)
    sacrebleu REF -i HYP

on one WMT22 system output of about 2,000 lines (default: de-en, system
Online-A, reference A, 1,984 lines; see ``../shared/wmt22/README.md``).  At
this size start-up dominates: interpreter start, imports and, for fastbleu
without its ahead-of-time kernels (``fastbleu._native``, built by ``pip
install``), importing numba and compiling or loading its numba kernels.

* fastbleu **cold**: one run right after deleting numba's on-disk cache of
  fastbleu's kernels, so every kernel it runs through numba's JIT is compiled
  again (none, when the ahead-of-time kernels serve the run).  The cache is
  where fastbleu puts it: the ``*.nbi``/``*.nbc`` files in its per-user
  cache folders (``~/.cache/fastbleu/numba/<source folder>_<key>/src-<digest>``, see
  ``fastbleu/_kernels/cache.py``), or, if the ``NUMBA_CACHE_DIR`` environment
  variable is set, the folders numba derives from it for the package's source
  directories.  Deleting it
  makes the next fastbleu import in *any* process on the machine recompile
  the kernels once; set ``NUMBA_CACHE_DIR`` to a private folder (or use
  ``--skip-cold``) on a machine others are using.
* fastbleu **warm**: median of ``--runs`` runs (default 5) with the cache
  filled.
* sacrebleu: median of ``--runs`` runs.

The script also checks that both commands print the same score and
``verbose_score``, and reports the ratio of sacrebleu's time to fastbleu's
(above 1: fastbleu is faster).

Running it
----------
From the repository root::

    python benchmarks/bench_cli.py
    python benchmarks/bench_cli.py --hyp HYP --ref REF --runs 9 --json out.json
    NUMBA_CACHE_DIR=$(mktemp -d) python benchmarks/bench_cli.py  # private cache folder
    python benchmarks/bench_cli.py --fastbleu-cmd "python -m fastbleu"
    python benchmarks/bench_cli.py --breakdown   # also: where a warm run's time goes

Where the time goes (``--breakdown``, issue 16)
----------------------------------------------
* **imports**: ``python -X importtime`` of one warm run; the cumulative
  milliseconds of numpy, numba (and the scipy it imports), llvmlite, pyarrow
  and fastbleu's own modules, and which of them were imported at all;
* **bare imports**: ``python -c "import X"`` wall time for the interpreter,
  numpy, numba, pyarrow and sacrebleu (median of ``--runs``);
* **in-process phases**: the same run inside one interpreter (see
  ``PROBE``): importing the command line, then ``main()``, the numba
  dispatchers that hold a compiled signature afterwards (compiled or loaded
  from the cache), and whether the ahead-of-time kernels
  (``fastbleu._native``) were used;
* **peak RSS** of every timed child process (``wait4``'s ``ru_maxrss``).
* With ``--jit-cold``, one more cold run with ``FASTBLEU_NO_AOT=1``: the
  first run of an installation whose ahead-of-time build was skipped.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WMT_DIR = REPO.parent / "shared" / "wmt22"
DEFAULT_HYP = WMT_DIR / "system-outputs" / "generaltest2022.de-en.hyp.Online-A.en"
DEFAULT_REF = WMT_DIR / "references" / "generaltest2022.de-en.ref.A.en"


# ---------------------------------------------------------------------------------------
# numba's cache of fastbleu's kernels
# ---------------------------------------------------------------------------------------


def fastbleu_package_dir() -> Path:
    """The installed fastbleu package directory, found without importing it."""
    spec = importlib.util.find_spec("fastbleu")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("error: the fastbleu package is not installed in this Python "
                         f"({sys.executable}); run `pip install -e .` in the repository")
    return Path(list(spec.submodule_search_locations)[0]).resolve()


def numba_cache_dirs(package: Path) -> list[Path]:
    """Folders where numba keeps (or would keep) the cache of the package's kernels.

    With ``NUMBA_CACHE_DIR``, numba's layout ``$NUMBA_CACHE_DIR/<folder>_<sha1
    of the source folder>`` (``numba.core.caching.UserProvidedCacheLocator``);
    without it, the folders of fastbleu's own locator
    (``fastbleu._kernels.cache``: ``~/.cache/fastbleu/numba/...``), plus the
    ``__pycache__`` folders older versions wrote into.
    """
    cache_root = os.environ.get("NUMBA_CACHE_DIR")
    source_dirs = sorted({p.parent for p in package.rglob("*.py")})
    if not cache_root:
        from fastbleu._kernels.cache import candidate_dirs
        return ([folder for d in source_dirs for folder in candidate_dirs(d)]
                + [d / "__pycache__" for d in source_dirs])
    root = Path(cache_root).expanduser()
    return [root / f"{d.name}_{hashlib.sha1(str(d).encode()).hexdigest()}"
            for d in source_dirs]


def clear_numba_cache(package: Path) -> list[Path]:
    """Delete the ``*.nbi``/``*.nbc`` files of the package's kernels; return them."""
    removed = []
    for folder in numba_cache_dirs(package):
        if not folder.is_dir():
            continue
        for pattern in ("*.nbi", "*.nbc"):  # also in the src-<digest> subfolders
            for path in folder.rglob(pattern):
                try:
                    path.unlink()
                except FileNotFoundError:  # removed meanwhile by someone else
                    continue
                removed.append(path)
    return removed


# ---------------------------------------------------------------------------------------
# Running the commands
# ---------------------------------------------------------------------------------------


def resolve_command(spec: str, what: str) -> list[str]:
    """Split a command and make sure its program exists."""
    argv = shlex.split(spec)
    if not argv:
        raise SystemExit(f"error: empty {what} command")
    if shutil.which(argv[0]) is None:
        hint = ""
        if argv[0] == "fastbleu":
            hint = (" (the console script is installed by `pip install -e .`; or pass "
                    "--fastbleu-cmd \"python -m fastbleu\")")
        raise SystemExit(f"error: command not found: {argv[0]}{hint}")
    return argv


#: Peak RSS (MiB) of each child run by ``run_once``, by label.
PEAK_RSS: dict[str, list[float]] = {}


def run_once(argv: list[str], what: str, env: dict | None = None,
             label: str | None = None) -> tuple[float, str]:
    """Run a command; return its wall-clock seconds and stdout.  Exit on failure.

    The child's peak RSS (``wait4``) is appended to ``PEAK_RSS[label or what]``.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        child = subprocess.Popen(argv, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(child.pid, 0)  # the child's own rusage, not a running max
        seconds = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout = out.read().decode("utf-8", "replace")
        stderr = err.read().decode("utf-8", "replace")
    PEAK_RSS.setdefault(label or what, []).append(usage.ru_maxrss / 1024)
    proc = subprocess.CompletedProcess(argv, child.returncode, stdout, stderr)
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        hint = ""
        if what == "fastbleu" and ("fastbleu.cli" in proc.stderr
                                   or "No module named" in proc.stderr):
            hint = ("\nThe fastbleu command line seems not to be available yet "
                    "(fastbleu/cli/); try again once it is installed.")
        raise SystemExit(f"error: `{shlex.join(argv)}` exited with status {proc.returncode}"
                         f":\n{tail}{hint}")
    return seconds, proc.stdout


def parse_score(stdout: str) -> dict | None:
    """The JSON object the command printed, or None if it printed something else."""
    try:
        data = json.loads(stdout)
    except json.JSONDecodeError:
        return None
    return data if isinstance(data, dict) else None


def timed_runs(argv: list[str], what: str, runs: int) -> tuple[list[float], str]:
    times, out = [], ""
    for _ in range(runs):
        seconds, out = run_once(argv, what)
        times.append(seconds)
    return times, out


# ---------------------------------------------------------------------------------------
# Where the time goes (--breakdown)
# ---------------------------------------------------------------------------------------

#: Run inside one interpreter: the phases of a warm run, the numba dispatchers that
#: hold a compiled signature afterwards, and whether the ahead-of-time kernels served.
PROBE = r"""
import contextlib, gc, io, json, sys, time
t0 = time.perf_counter()
from fastbleu.cli import main
t1 = time.perf_counter()
with contextlib.redirect_stdout(io.StringIO()):
    status = main(sys.argv[1:])
t2 = time.perf_counter()
found = {"import_cli_seconds": t1 - t0, "main_seconds": t2 - t1, "status": status,
         "numba_imported": "numba" in sys.modules, "scipy_imported": "scipy" in sys.modules,
         "pyarrow_imported": "pyarrow" in sys.modules}
if "numba" in sys.modules:
    from numba.core.registry import CPUDispatcher
    used = [d for d in gc.get_objects() if isinstance(d, CPUDispatcher) and d.overloads]
    found["dispatchers_with_signatures"] = sorted(
        f"{d.py_func.__module__}.{d.py_func.__name__}" for d in used)
    found["signatures"] = sum(len(d.overloads) for d in used)
native = sys.modules.get("fastbleu._native")
if native is not None and hasattr(native, "report"):
    found["ahead_of_time"] = native.report()
print(json.dumps(found))
"""

#: Top-level modules whose cumulative import time is reported.
IMPORT_GROUPS = ("numpy", "numba", "llvmlite", "scipy", "pyarrow", "regex", "fastbleu")


def import_breakdown(fast_args: list[str], env: dict | None) -> dict:
    """``python -X importtime`` of one warm run: cumulative ms per top-level package."""
    argv = [sys.executable, "-X", "importtime", "-m", "fastbleu", *fast_args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"error: {shlex.join(argv)} failed:\n{done.stderr[-2000:]}")
    entries = []  # (depth, name, cumulative ms), children before their importer
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or line.count("|") != 2:
            continue
        _, cumulative, name = line.split("|")
        if not cumulative.strip().isdigit():
            continue
        entries.append((len(name) - len(name.lstrip()), name.strip(), int(cumulative) / 1000))

    def group(name: str | None) -> str | None:
        top = None if name is None else name.split(".")[0]
        return top if top in IMPORT_GROUPS else None

    # A module's importer is the next entry with a smaller indent; a package's time
    # counts where it is entered from outside it (numba's import of scipy counts
    # for both numba, which holds it, and scipy).
    totals: dict[str, float] = {}
    stack: list[tuple[int, str]] = []
    for depth, name, ms in reversed(entries):
        while stack and stack[-1][0] >= depth:
            stack.pop()
        importer = stack[-1][1] if stack else None
        stack.append((depth, name))
        if group(name) and group(name) != group(importer):
            totals[group(name)] = totals.get(group(name), 0.0) + ms
    totals["all imports"] = sum(ms for depth, _, ms in entries if depth == 1)
    return {name: round(ms, 1) for name, ms in totals.items()}


def bare_imports(runs: int) -> dict:
    """Wall seconds of ``python -c "import X"`` (median of ``runs``), interpreter included."""
    found = {}
    for module in ("", "numpy", "numba", "pyarrow", "sacrebleu"):
        argv = [sys.executable, "-c", f"import {module}" if module else "pass"]
        if module and importlib.util.find_spec(module) is None:
            continue
        found[module or "(interpreter)"] = statistics.median(
            run_once(argv, "python", label=f"import {module}")[0] for _ in range(runs))
    return found


def in_process(fast_args: list[str], env: dict | None) -> dict:
    done = subprocess.run([sys.executable, "-c", PROBE, *fast_args], capture_output=True,
                          text=True, env=env)
    if done.returncode != 0:
        raise SystemExit(f"error: the in-process probe failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------
# Main
# ---------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    p = argparse.ArgumentParser(
        description="Time `fastbleu REF -i HYP` (cold and warm numba cache) against "
                    "`sacrebleu REF -i HYP`.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("--hyp", type=Path, default=DEFAULT_HYP, help="hypothesis file")
    p.add_argument("--ref", type=Path, default=DEFAULT_REF, help="reference file")
    p.add_argument("--runs", type=int, default=5,
                   help="runs of warm fastbleu and of sacrebleu; the median is reported")
    p.add_argument("--fastbleu-cmd", default="fastbleu",
                   help="how to call fastbleu (e.g. \"python -m fastbleu\")")
    p.add_argument("--sacrebleu-cmd", default="sacrebleu", help="how to call sacrebleu")
    p.add_argument("--skip-cold", action="store_true",
                   help="do not delete numba's cache and skip the cold run")
    p.add_argument("--breakdown", action="store_true",
                   help="also report where a warm run's time goes: import times, in-process "
                        "phases, numba dispatchers, bare imports")
    p.add_argument("--jit-cold", action="store_true",
                   help="also time a cold run with FASTBLEU_NO_AOT=1 (numba compiles)")
    p.add_argument("--json", type=Path, metavar="OUT", help="also write the results as JSON")
    args = p.parse_args(argv)
    for path in (args.hyp, args.ref):
        if not path.is_file():
            p.error(f"no such file: {path}")
    if args.runs < 1:
        p.error("--runs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    fast = resolve_command(args.fastbleu_cmd, "fastbleu") + [str(args.ref), "-i", str(args.hyp)]
    sacre = resolve_command(args.sacrebleu_cmd, "sacrebleu") + [str(args.ref), "-i",
                                                                 str(args.hyp)]
    with open(args.hyp, encoding="utf-8") as f:
        n_lines = sum(1 for _ in f)
    print(f"hypotheses: {args.hyp} ({n_lines:,} lines)")
    print(f"reference:  {args.ref}")
    print(f"fastbleu:   {shlex.join(fast)}")
    print(f"sacrebleu:  {shlex.join(sacre)}")

    results: dict = {"hyp": str(args.hyp), "ref": str(args.ref), "lines": n_lines,
                     "runs": args.runs, "fastbleu_cmd": fast, "sacrebleu_cmd": sacre,
                     "numba_cache_dir": os.environ.get("NUMBA_CACHE_DIR")}

    if not args.skip_cold:
        package = fastbleu_package_dir()
        removed = clear_numba_cache(package)
        where = os.environ.get("NUMBA_CACHE_DIR") or "fastbleu's cache folders"
        print(f"\ndeleted {len(removed)} numba cache file(s) under {where}")
        cold, cold_out = run_once(fast, "fastbleu", label="fastbleu (cold)")
        results["fastbleu_cold_seconds"] = cold
        results["numba_cache_files_deleted"] = len(removed)
        if not removed:
            print("note: there was no cache to delete (never filled, or it lives elsewhere)")

    if args.jit_cold:
        removed = clear_numba_cache(fastbleu_package_dir())
        jit_env = dict(os.environ, FASTBLEU_NO_AOT="1")
        results["fastbleu_cold_jit_seconds"] = run_once(fast, "fastbleu", jit_env,
                                                        "fastbleu (cold, JIT only)")[0]
        results["fastbleu_warm_jit_seconds"] = statistics.median(
            run_once(fast, "fastbleu", jit_env, "fastbleu (warm, JIT only)")[0]
            for _ in range(args.runs))

    # Interleaved, so that both see the same load on a shared machine.
    warm_times, sacre_times = [], []
    for _ in range(args.runs):
        seconds, fast_out = run_once(fast, "fastbleu", label="fastbleu (warm)")
        warm_times.append(seconds)
        seconds, sacre_out = run_once(sacre, "sacrebleu")
        sacre_times.append(seconds)
    warm, sacre_median = statistics.median(warm_times), statistics.median(sacre_times)
    results.update(fastbleu_warm_seconds=warm, fastbleu_warm_all=warm_times,
                   sacrebleu_seconds=sacre_median, sacrebleu_all=sacre_times)

    print()
    header = f"{'command':<20} {'runs':>5} {'seconds':>9} {'min':>7} {'max':>7} " \
             f"{'sacrebleu / this':>17}"
    print(header)
    print("-" * len(header))
    rows = []
    if "fastbleu_cold_seconds" in results:
        rows.append(("fastbleu (cold)", [results["fastbleu_cold_seconds"]]))
    for key, label in (("fastbleu_cold_jit_seconds", "fastbleu (cold, JIT)"),
                       ("fastbleu_warm_jit_seconds", "fastbleu (warm, JIT)")):
        if key in results:
            rows.append((label, [results[key]]))
    rows += [("fastbleu (warm)", warm_times), ("sacrebleu", sacre_times)]
    for label, times in rows:
        median = statistics.median(times)
        print(f"{label:<20} {len(times):>5} {median:>9.3f} {min(times):>7.3f} "
              f"{max(times):>7.3f} {sacre_median / median:>16.2f}x")
    results["speedup_warm"] = sacre_median / warm
    if "fastbleu_cold_seconds" in results:
        results["speedup_cold"] = sacre_median / results["fastbleu_cold_seconds"]

    # Same score from both?
    mine, theirs = parse_score(fast_out), parse_score(sacre_out)
    if mine is None or theirs is None:
        print("\nscore check: could not parse the JSON output of "
              + ("fastbleu" if mine is None else "sacrebleu"))
        results["same_score"] = None
    else:
        same = all(mine.get(k) == theirs.get(k) for k in ("score", "verbose_score"))
        results["same_score"] = same
        results["score"] = {"fastbleu": mine.get("score"), "sacrebleu": theirs.get("score")}
        print(f"\nscore check: fastbleu {mine.get('score')} {mine.get('verbose_score')}")
        print(f"             sacrebleu {theirs.get('score')} {theirs.get('verbose_score')}"
              f" -> {'OK' if same else 'MISMATCH'}")
        if "fastbleu_cold_seconds" in results and parse_score(cold_out) != mine:
            print("warning: the cold run printed something else than the warm runs")

    results["peak_rss_mib"] = {label: max(values) for label, values in PEAK_RSS.items()}
    print("\npeak RSS (MiB): " + ", ".join(f"{label} {mib:.0f}"
                                           for label, mib in results["peak_rss_mib"].items()))
    if args.breakdown:
        fast_args = [str(args.ref), "-i", str(args.hyp)]
        results["imports_ms"] = import_breakdown(fast_args, None)
        results["bare_import_seconds"] = bare_imports(args.runs)
        results["in_process"] = in_process(fast_args, None)
        print("\nimport time of a warm run (ms, cumulative):",
              json.dumps(results["imports_ms"]))
        print("bare imports (s, interpreter included):",
              json.dumps({k: round(v, 3) for k, v in results["bare_import_seconds"].items()}))
        print("in-process:", json.dumps(results["in_process"], indent=1))

    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(f"wrote {args.json}")
    return 0 if results["same_score"] in (True, None) else 1


if __name__ == "__main__":
    sys.exit(main())
