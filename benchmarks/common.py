"""What every benchmark shares: data, clocks, peers, instruction counts, JSON.

Data
    WMT22 from ``../shared/wmt22`` (``$FASTBLEU_WMT22`` overrides), the layout
    of that folder's README.  Where it is absent, :func:`corpus` and
    :func:`pair_data` make a seeded synthetic corpus instead (Zipf-distributed
    words, references = hypotheses with words redrawn and swapped) and say so:
    its figures measure the code, not WMT22, and are not comparable with the
    README's.
Which fastbleu
    :func:`use_checkout` puts the checkout this file sits in first on
    ``sys.path``, unless ``PYTHONPATH`` is set, which then decides (as
    ``compare.py`` sets it for each tree).
Clocks
    wall (``perf_counter``) and process time (``process_time``: all threads);
    on a shared machine the process time moves far less with the load.
Peers
    sacrebleu, nltk, bleuscore, fast-bleu, fastchrf, compare-mt are optional
    (:func:`peer`); none is a dependency of fastbleu.

Nothing here imports fastbleu at import time.
"""

from __future__ import annotations

import contextlib
import gc
import hashlib
import importlib
import json
import os
import platform
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
WMT22 = Path(os.environ.get("FASTBLEU_WMT22", REPO.parent / "shared" / "wmt22"))
RESULTS = HERE / "results"
#: Target languages whose WMT22 BLEU uses the 13a tokenizer.
TARGETS_13A = ("en", "de")
_HYP_NAME = re.compile(r"^generaltest2022\.(?P<pair>[a-z]+-(?P<trg>[a-z]+))\.hyp\."
                       r"(?P<system>.+)\.(?P=trg)$")


def use_checkout() -> None:
    """Import this checkout's fastbleu, not an installed one (unless PYTHONPATH is set)."""
    if not os.environ.get("PYTHONPATH") and str(REPO) not in sys.path:
        sys.path.insert(0, str(REPO))


def quiet_logs() -> None:
    """Mute the "hypotheses end in ' .'" warning both libraries log on some WMT lines (the
    check still runs; only its message would clutter the report)."""
    import logging

    for name in ("fastbleu", "sacrebleu"):
        logging.getLogger(name).setLevel(logging.ERROR)


# -- data ------------------------------------------------------------------------------

def read_lines(path: Path) -> list[str]:
    """Lines of a UTF-8 file without their line ends (as sacrebleu's CLI reads them)."""
    with open(path, encoding="utf-8", newline="\n") as f:
        return [line.rstrip("\n") for line in f]


def have_wmt22(wmt_dir: Path = WMT22) -> bool:
    return (wmt_dir / "system-outputs").is_dir() and (wmt_dir / "references").is_dir()


def wmt22_files(wmt_dir: Path = WMT22, targets=TARGETS_13A, pairs=None
                ) -> list[tuple[Path, Path]]:
    """(system output, first reference of its pair) for every system of ``targets``
    (or of ``pairs``), sorted by name."""
    out = []
    for hyp in sorted((wmt_dir / "system-outputs").iterdir()):
        m = _HYP_NAME.match(hyp.name)
        if not m or (pairs and m["pair"] not in pairs) or (not pairs and m["trg"] not in targets):
            continue
        refs = sorted((wmt_dir / "references").glob(f"generaltest2022.{m['pair']}.ref.*.{m['trg']}"))
        if refs:
            out.append((hyp, refs[0]))
    if not out:
        raise SystemExit(f"error: no WMT22 system outputs for {pairs or targets} under {wmt_dir}")
    return out


def system_name(path: Path) -> str:
    m = _HYP_NAME.match(path.name)
    return m["system"] if m else path.name


def load_corpus(files) -> tuple[list[str], list[str]]:
    """Aligned hypothesis and reference files, concatenated."""
    hyps: list[str] = []
    refs: list[str] = []
    cache: dict[Path, list[str]] = {}
    for hyp_path, ref_path in files:
        h = read_lines(hyp_path)
        if ref_path not in cache:
            cache[ref_path] = read_lines(ref_path)
        r = cache[ref_path]
        if len(h) != len(r):
            raise SystemExit(f"error: {hyp_path} has {len(h)} lines, {ref_path} {len(r)}")
        hyps += h
        refs += r
    return hyps, refs


def cycle_to(lines: list, n: int) -> list:
    """``lines`` repeated until the list has ``n`` items (the strings are shared)."""
    if not lines:
        return []
    return (lines * -(-n // len(lines)))[:n]


def synthetic_corpus(segments: int, seed: int = 2022, systems: int = 1
                     ) -> tuple[list[list[str]], list[str]]:
    """``systems`` seeded synthetic outputs of ``segments`` segments and one reference:
    words from a Zipf distribution over 20,000 letter strings, 3-40 words a segment; each
    output redraws 30 % of the reference's words and swaps 10 % of neighbours."""
    import numpy as np

    rng = np.random.default_rng(seed)
    letters = np.array(list("etaoinshrdlucmfwypvbgkjqxz"))
    vocab = ["".join(rng.choice(letters, size=int(k))) for k in rng.integers(1, 11, 20_000)]
    vocab[:6] = [",", ".", "the", "of", "and", "a"]
    vocab = np.array(vocab, dtype=object)
    weights = 1.0 / np.arange(1, len(vocab) + 1) ** 1.1
    weights /= weights.sum()
    lengths = rng.integers(3, 41, segments)
    words = rng.choice(len(vocab), size=int(lengths.sum()), p=weights)
    bounds = np.concatenate([[0], np.cumsum(lengths)])

    def lines(ids):
        text = vocab[ids]
        return [" ".join(text[a:b]) + " ." for a, b in zip(bounds[:-1], bounds[1:])]

    refs = lines(words)
    outputs = []
    for _ in range(systems):
        ids = words.copy()
        redraw = rng.random(ids.size) < 0.3
        ids[redraw] = rng.choice(len(vocab), size=int(redraw.sum()), p=weights)
        swap = np.flatnonzero(rng.random(ids.size - 1) < 0.1)
        swap = swap[np.diff(np.concatenate([[-2], swap])) > 1]  # no overlapping swaps
        ids[swap], ids[swap + 1] = ids[swap + 1], ids[swap].copy()
        outputs.append(lines(ids))
    return outputs, refs


def corpus(segments: int, wmt_dir: Path = WMT22, targets=TARGETS_13A
           ) -> tuple[list[str], list[str], str]:
    """The benchmarks' corpus: every WMT22 system output of ``targets`` (en, de: 41
    systems, 74,617 segments) with its pair's first reference, concatenated in name order
    and cycled to ``segments``; synthetic (20,000 segments cycled) where WMT22 is absent.
    Returns hypotheses, references and a line saying which."""
    if have_wmt22(wmt_dir):
        files = wmt22_files(wmt_dir, targets)
        hyps, refs = load_corpus(files)
        what = f"WMT22 {'/'.join(targets)}: {len(files)} systems, {len(hyps):,} segments"
    else:
        outputs, refs = synthetic_corpus(min(segments, 20_000))
        hyps = outputs[0]
        what = f"SYNTHETIC ({wmt_dir} not found): {len(hyps):,} segments"
    return cycle_to(hyps, segments), cycle_to(refs, segments), f"{what}, cycled to {segments:,}"


def pair_data(pair: str, systems: int | None = None, references: int = 1,
              wmt_dir: Path = WMT22, segments: int = 2_000
              ) -> tuple[dict[str, list[str]], list[list[str]], str]:
    """One WMT22 language pair: its system outputs by name (the first ``systems``, sorted)
    and its first ``references`` reference streams; synthetic (``segments`` segments, 9
    systems) where WMT22 is absent.  Returns outputs, reference streams, a description."""
    if have_wmt22(wmt_dir):
        target = pair.split("-")[1]
        files = sorted((wmt_dir / "system-outputs").glob(f"generaltest2022.{pair}.hyp.*.{target}"))
        refs = sorted((wmt_dir / "references").glob(f"generaltest2022.{pair}.ref.*.{target}"))
        if not files or len(refs) < references:
            raise SystemExit(f"error: WMT22 has no {pair} with {references} reference(s)")
        files = files[:systems] if systems else files
        outputs = {system_name(f): read_lines(f) for f in files}
        streams = [read_lines(r) for r in refs[:references]]
        return outputs, streams, f"WMT22 {pair}: {len(outputs)} systems"
    n = systems or 9
    outputs, ref = synthetic_corpus(segments, seed=sum(map(ord, pair)), systems=n + references - 1)
    streams = [ref] + outputs[n:]
    return ({f"synthetic-{i}": o for i, o in enumerate(outputs[:n])}, streams,
            f"SYNTHETIC {pair} ({wmt_dir} not found)")


# -- clocks and memory -----------------------------------------------------------------

def timed(fn):
    """``(wall seconds, process seconds, result)`` of one call, after a garbage collection."""
    gc.collect()
    cpu, start = time.process_time(), time.perf_counter()
    result = fn()
    return time.perf_counter() - start, time.process_time() - cpu, result


def best_of(repeat: int, fn, before=None, clock=time.perf_counter) -> tuple[float, object]:
    """Best time of ``repeat`` calls of ``fn()`` by ``clock`` (wall by default), last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        if before is not None:
            before()
        gc.collect()
        start = clock()
        result = fn()
        best = min(best, clock() - start)
    return best, result


def peak_rss_mib() -> float:
    """This process's peak RSS in MiB: ``VmHWM`` where Linux has it (reset by exec, unlike
    ``ru_maxrss``, which a child inherits from its parent), else ``ru_maxrss``."""
    with contextlib.suppress(OSError):
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / 2**20 if sys.platform == "darwin" else peak / 1024


def busy_cpu_seconds() -> float | None:
    """CPU seconds every process of the machine has used (``/proc/stat``), or None."""
    try:
        with open("/proc/stat", encoding="ascii") as f:
            fields = f.readline().split()[1:]
    except OSError:
        return None
    ticks = [int(x) for x in fields]
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return (sum(ticks[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def clear_sacrebleu_cache(metric) -> None:
    """Empty the class-level LRU caches of sacrebleu's tokenizers (13a has two: its own and
    its regexp tokenizer's), so that no timed run profits from an earlier one."""
    for tok in (getattr(metric, "tokenizer", None),
                getattr(getattr(metric, "tokenizer", None), "_post_tokenizer", None)):
        for attr in ("__call__", "_is_chinese_char"):
            fn = getattr(type(tok), attr, None) if tok is not None else None
            if hasattr(fn, "cache_clear"):
                fn.cache_clear()
    for attr in ("_tokenizer", "tokenizer_ter"):  # TER's Tercom cache
        tok = getattr(metric, attr, None)
        fn = getattr(type(tok), "__call__", None) if tok is not None else None
        if hasattr(fn, "cache_clear"):
            fn.cache_clear()


# -- peers ------------------------------------------------------------------------------

#: import name -> what to install
PEERS = {"sacrebleu": "sacrebleu", "nltk": "nltk", "bleuscore": "bleuscore",
         "fast_bleu": "fast-bleu", "fastchrf": "fastchrf", "compare_mt": "compare-mt",
         "MeCab": "mecab-python3 ipadic"}


def peer(name: str, required: bool = False):
    """The peer module ``name``, or None (with a line saying how to install it)."""
    try:
        return importlib.import_module(name)
    except ImportError:
        message = f"peer {name} is not installed (pip install {PEERS.get(name, name)})"
        if required:
            raise SystemExit(f"error: {message}")
        print(f"{message}: skipped", file=sys.stderr)
        return None


# -- what ran where, and the JSON --------------------------------------------------------

def git_commit(tree: Path = REPO) -> str | None:
    try:
        out = subprocess.run(["git", "-C", str(tree), "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    return out.stdout.strip() or None


def machine_info(**extra) -> dict:
    """Date, commit, machine and, if imported, fastbleu and numba: the header of a result."""
    info = {"date": time.strftime("%Y-%m-%d %H:%M:%S %Z"), "commit": git_commit(),
            "python": platform.python_version(), "platform": platform.platform(),
            "cpu_count": os.cpu_count(), "load_average_start": os.getloadavg()}
    with contextlib.suppress(OSError, ValueError):
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            model = next((line.split(":", 1)[1].strip() for line in f
                          if line.startswith("model name")), None)
        info["cpu"] = model
    fastbleu = sys.modules.get("fastbleu")
    if fastbleu is not None:
        info["fastbleu"] = fastbleu.__version__
        info["fastbleu_from"] = where(Path(fastbleu.__file__).resolve().parent)
    numba = sys.modules.get("numba")
    if numba is not None:
        info["numba"] = numba.__version__
        info["numba_threads"] = numba.config.NUMBA_NUM_THREADS
    info.update(extra)
    return info


def where(path: Path) -> str:
    """``path`` relative to this checkout (results name no machine's folders)."""
    try:
        return str(Path(path).resolve().relative_to(REPO))
    except ValueError:
        return f"outside this checkout: .../{Path(path).name}"


def write_json(path: Path | str | None, payload: dict) -> None:
    if path is None:
        return
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload.setdefault("info", {})["load_average_end"] = os.getloadavg()
    path.write_text(json.dumps(payload, indent=2, default=_plain) + "\n", encoding="utf-8")
    print(f"wrote {path}")


def _plain(value):
    if hasattr(value, "tolist"):
        return value.tolist()
    return str(value)


def digest(*parts) -> str:
    """A short SHA-256 of arrays (their bytes) and other values (their repr)."""
    h = hashlib.sha256()
    for part in parts:
        h.update(part.tobytes() if hasattr(part, "tobytes") else repr(part).encode())
    return h.hexdigest()[:16]


def child_json(argv: list[str], env: dict | None = None) -> dict:
    """Run ``python argv`` in a fresh process; the JSON object on its last output line."""
    done = subprocess.run([sys.executable, *argv], env={**os.environ, **(env or {})},
                          capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"error: child {' '.join(argv)} failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


# -- instruction counts (callgrind) ----------------------------------------------------------

@contextlib.contextmanager
def instrumented():
    """Switch callgrind's instrumentation on around the block (a child started by
    :func:`instructions`); outside valgrind ``callgrind_control`` finds nothing to switch."""
    subprocess.run(["callgrind_control", "-i", "on", str(os.getpid())], capture_output=True)
    try:
        yield
    finally:
        subprocess.run(["callgrind_control", "-i", "off", str(os.getpid())], capture_output=True)


def instructions(argv_for, extra: int = 2, env: dict | None = None) -> float:
    """Instructions of one instrumented run: ``argv_for(runs)`` is a child command line
    (after ``python``) that runs the measured piece ``runs`` times inside
    :func:`instrumented`; it runs under valgrind with 1 and ``1 + extra`` runs, and the
    difference / ``extra`` cancels the warm-up and the switching.  One thread."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        raise SystemExit("error: valgrind is not installed (apt-get install valgrind)")
    counts = []
    for runs in (1, 1 + extra):
        with tempfile.TemporaryDirectory() as work:
            out = Path(work) / "callgrind.out"
            done = subprocess.run(
                ["valgrind", "--tool=callgrind", "--instr-atstart=no",
                 f"--callgrind-out-file={out}", sys.executable, *argv_for(runs)],
                env={**os.environ, "NUMBA_NUM_THREADS": "1", **(env or {})},
                capture_output=True, text=True)
            found = out.exists() and re.search(r"^totals: (\d+)", out.read_text(), re.M)
            if done.returncode != 0 or not found:
                raise SystemExit(f"error: the callgrind child failed:\n{done.stderr[-2000:]}")
            counts.append(int(found.group(1)))
    return (counts[1] - counts[0]) / extra


def mean_words(lines: list[str]) -> float:
    return sum(len(line.split()) for line in lines) / len(lines) if lines else 0.0
