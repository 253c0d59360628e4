"""The ahead-of-time kernels (issue 16): the same numbers as the JIT kernels, and a fallback.

``fastbleu._native`` calls ``fastbleu._native.compiled`` (built by ``setup.py``
from the kernels' source with ``numba.pycc``) for small inputs, and numba's JIT
kernels for everything else.  These tests hold every compiled kernel against
its JIT twin on random input (bit for bit), check that a run served by the
compiled module imports neither numba nor pyarrow and prints what the JIT
prints, and that a failed build or a missing module falls back to the JIT.

The compiled module is the installed one when it is in use, else one built
here (about ten seconds); without a C compiler those tests are skipped.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from testkit.data import DATA, ROOT
from fastbleu import _native
from fastbleu._kernels import aot
from fastbleu._native.codes import (AVERAGE_SCALE, REF_AVERAGE, REF_CLOSEST, REF_SHORTEST,
                                    SMOOTH_ADD_K, SMOOTH_EXP, SMOOTH_FLOOR, SMOOTH_NONE,
                                    TOKENIZE_13A, TOKENIZE_CHAR, TOKENIZE_NONE, row_width)

SUFFIX = sysconfig.get_config_var("EXT_SUFFIX")
HAS_COMPILER = any(shutil.which(c) for c in ("cc", "gcc", "clang"))


@pytest.fixture(scope="module")
def compiled_file(tmp_path_factory) -> Path:
    """A compiled module file built from this source: the installed one, or built now."""
    installed = _native.compiled_module()
    if installed is not None:
        return Path(installed.__file__)
    if not HAS_COMPILER:
        pytest.skip("no C compiler to build the ahead-of-time kernels")
    target = tmp_path_factory.mktemp("aot") / f"compiled{SUFFIX}"
    assert aot.build_or_warn(target), "the ahead-of-time build failed"
    return target


@pytest.fixture(scope="module")
def compiled(compiled_file):
    spec = importlib.util.spec_from_file_location("compiled", compiled_file)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.build_id() == _native.source_digest()  # built from this very source
    return module


def jit(name):
    return aot.EXPORTS[name][0]


# -- the compiled kernels against the JIT kernels, on random input ---------------------------

#: Characters 13a treats specially, whitespace of every kind, and non-ASCII text.
PIECES = st.sampled_from(list("ab c.,-1 9&;<>\"'quotampltgskiped\t\n\r\x0b\x1c") +
                        ["\u00a0", "\u2028", "\u3000", "é", "ß", "中", "&quot;", "<skipped>",
                         "-\n", "&amp;", " . ", "1,000", "a-b"])
TEXT = st.lists(PIECES, max_size=30).map("".join)


def column(texts):
    raw = [t.encode("utf-8", "surrogatepass") for t in texts]
    offsets = np.zeros(len(raw) + 1, dtype=np.int64)
    np.cumsum([len(r) for r in raw], out=offsets[1:])
    return np.frombuffer(b"".join(raw), dtype=np.uint8).copy(), offsets


def tokenized(kernel, data, offsets, kind):
    n = offsets.size - 1
    hashes = np.zeros(max(int(offsets[-1]), 1), dtype=np.uint64)
    count = np.full(n, -7, dtype=np.int64)
    start = np.full(n, -7, dtype=np.int64)
    kernel(data, offsets, kind, hashes, count, start, 0, n)
    return hashes, count, start


@settings(max_examples=60, deadline=None)
@given(texts=st.lists(TEXT, max_size=12),
       kind=st.sampled_from([TOKENIZE_NONE, TOKENIZE_13A, TOKENIZE_CHAR]))
def test_tokenize_equals_jit(compiled, texts, kind):
    data, offsets = column(texts)
    ours = tokenized(compiled.tokenize_chunk, data, offsets, kind)
    theirs = tokenized(jit("tokenize_chunk"), data, offsets, kind)
    np.testing.assert_array_equal(ours[1], theirs[1])
    np.testing.assert_array_equal(ours[2], theirs[2])
    np.testing.assert_array_equal(ours[0], theirs[0])


def random_tokens(rng, n, n_refs, vocabulary, max_len, missing):
    """Token hashes of n hypotheses and n_refs reference streams (some missing)."""
    hyp_count = rng.integers(0, max_len + 1, n)
    ref_count = rng.integers(0, max_len + 1, (n_refs, n))
    if missing and n_refs > 1:
        gone = rng.random((n_refs, n)) < 0.3
        gone[0] &= gone[1:].sum(axis=0) < n_refs - 1  # every segment keeps one reference
        ref_count[gone] = -1
    hyp_start = (np.cumsum(hyp_count) - hyp_count).astype(np.int64)
    ref_sizes = np.maximum(ref_count, 0).ravel()
    ref_start = (np.cumsum(ref_sizes) - ref_sizes).reshape(n_refs, n)
    words = rng.integers(1, 2**63, vocabulary, dtype=np.int64).astype(np.uint64)
    hyp = words[rng.integers(0, vocabulary, int(hyp_count.sum()))]
    ref = words[rng.integers(0, vocabulary, int(ref_sizes.sum()))]
    return (hyp, hyp_start, hyp_count.astype(np.int64), ref,
            np.ascontiguousarray(ref_start, dtype=np.int64), ref_count.astype(np.int64))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 30), n_refs=st.integers(1, 4),
       vocabulary=st.integers(1, 12), max_len=st.integers(0, 40),
       max_order=st.integers(1, 6), missing=st.booleans(),
       ref_length=st.sampled_from([REF_CLOSEST, REF_SHORTEST, REF_AVERAGE]),
       large_above=st.sampled_from([0, 5, 40, 1 << 13]))
def test_statistics_equal_jit(compiled, seed, n, n_refs, vocabulary, max_len, max_order,
                              missing, ref_length, large_above):
    tokens = random_tokens(np.random.default_rng(seed), n, n_refs, vocabulary, max_len,
                           missing)
    ours = np.full((n, row_width(max_order)), -5, dtype=np.int64)
    theirs = ours.copy()
    compiled.chunk_statistics(*tokens, max_order, ref_length, large_above, ours, 0, n)
    jit("chunk_statistics")(*tokens, max_order, ref_length, large_above, theirs, 0, n)
    np.testing.assert_array_equal(ours, theirs)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 20), max_order=st.integers(1, 5),
       smooth=st.sampled_from([SMOOTH_NONE, SMOOTH_FLOOR, SMOOTH_ADD_K, SMOOTH_EXP]),
       smooth_value=st.sampled_from([0.0, 0.1, 1.0, 0.37]), effective_order=st.booleans(),
       compensated=st.booleans(), weighted=st.booleans(), averaged=st.booleans())
def test_formula_equals_jit(compiled, seed, n, max_order, smooth, smooth_value, effective_order,
                            compensated, weighted, averaged):
    rng = np.random.default_rng(seed)
    hyp_len = rng.integers(0, 60, n)
    totals = np.maximum(hyp_len[:, None] - np.arange(max_order)[None, :], 0)
    matches = (totals * rng.random((n, max_order)) * rng.integers(0, 2, (n, max_order)))
    ref_scale = AVERAGE_SCALE if averaged else 1
    rows = np.column_stack([hyp_len, rng.integers(0, 60, n) * ref_scale,
                            matches.astype(np.int64), totals]).astype(np.int64)
    weights = (rng.random(max_order) * rng.integers(0, 2, max_order) if weighted
               else np.zeros(0))
    if weighted and not weights.any():
        weights[-1] = 1.0
    args = (max_order, smooth, smooth_value, effective_order, compensated)
    for row in rows:
        p_ours, p_theirs = np.empty(max_order), np.empty(max_order)
        ours = compiled.bleu_from_row(row, *args, p_ours, weights, ref_scale)
        theirs = jit("bleu_from_row")(row, *args, p_theirs, weights, ref_scale)
        assert ours == theirs  # bit for bit: float64 ==, never approximately
        np.testing.assert_array_equal(p_ours, p_theirs)
    ours, theirs = np.empty(n), np.empty(n)
    compiled.chunk_scores(rows, *args, weights, ref_scale, ours, 0, n)
    jit("chunk_scores")(rows, *args, weights, ref_scale, theirs, 0, n)
    np.testing.assert_array_equal(ours, theirs)


# -- the command line on the compiled module, and without it ---------------------------------

@pytest.fixture(scope="module")
def package_copy(tmp_path_factory, compiled_file) -> Path:
    """A copy of the package with the compiled module, as an installation would have it."""
    site = tmp_path_factory.mktemp("site-packages")
    shutil.copytree(ROOT / "fastbleu", site / "fastbleu",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    shutil.copy(compiled_file, site / "fastbleu" / "_native" / f"compiled{SUFFIX}")
    return site


_RUN = """
import contextlib, io, json, sys
from fastbleu.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    status = main(sys.argv[1:])
from fastbleu import _native
print(json.dumps({"status": status, "output": out.getvalue(), "native": _native.report(),
                  "imported": sorted(m for m in ("numba", "pyarrow", "scipy", "llvmlite")
                                     if m in sys.modules)}))
"""


def run_cli(site: Path, *args: str, **env_vars) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "FASTBLEU_NO_AOT"}
    env.update(PYTHONPATH=str(site), **env_vars)
    done = subprocess.run([sys.executable, "-c", _RUN, *args], env=env, cwd=site,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


SAMPLE = [str(DATA / "sample.ref-A.en"), str(DATA / "sample.ref-B.en"), "-i",
          str(DATA / "sample.sys-A.en")]


_STATUS = "from fastbleu import _native; print(_native.report()['status'])"


def status_of(site: Path) -> str:
    """Whether the package at ``site`` would use its compiled module, and why not."""
    done = subprocess.run([sys.executable, "-c", _STATUS], env=dict(os.environ, PYTHONPATH=str(site)),
                          cwd=site, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


# Quick: corpus and sentence level; the other tokenizers with -m slow (issue 28: two child
# processes a case), as char is in test_a_whole_input_of_one_batch_is_served_without_numba.
@pytest.mark.parametrize("flags", [
    [], ["-sl"], pytest.param(["-lc", "-tok", "char"], marks=pytest.mark.slow),
    pytest.param(["-tok", "none"], marks=pytest.mark.slow)])
def test_compiled_run_imports_no_numba_and_prints_what_the_jit_prints(package_copy, flags):
    fast = run_cli(package_copy, *SAMPLE, *flags)
    # The JIT kernels of the checkout itself (whose numba cache the other tests share).
    slow = run_cli(ROOT, *SAMPLE, *flags, FASTBLEU_NO_AOT="1")
    assert fast["status"] == slow["status"] == 0
    assert fast["output"] == slow["output"]
    assert fast["native"]["status"] == "in use"
    assert slow["native"]["status"].startswith("disabled")
    assert "numba" in slow["imported"]
    assert fast["native"]["calls"]["tokenize_chunk"] > 0
    assert fast["imported"] == []  # neither numba, nor pyarrow, nor scipy


def test_a_whole_input_of_one_batch_is_served_without_numba(package_copy, tmp_path):
    """10,010 lines (above two pieces of MIN_CHUNK, within one batch of the pipeline): the
    batch runs in the main thread, so the compiled module serves it and a first run
    compiles nothing (issue 28: 13 s of compiling against 1 s warm); the same output as
    the JIT's, which splits it among its threads."""
    from fastbleu.statistics.tokens import KERNEL_BATCH_SIZE

    assert _native.SERIAL_LIMIT == KERNEL_BATCH_SIZE
    files = []
    for name in ("ref-A", "ref-B", "sys-A"):
        lines = (DATA / f"sample.{name}.en").read_text(encoding="utf-8").splitlines()
        files.append(tmp_path / name)
        files[-1].write_text("\n".join(lines * 10 + lines[:10]) + "\n", encoding="utf-8")
    argv = [str(files[0]), str(files[1]), "-i", str(files[2])]
    for flags in ([], ["-tok", "char", "-lc"]):
        fast = run_cli(package_copy, *argv, *flags)
        slow = run_cli(ROOT, *argv, *flags, FASTBLEU_NO_AOT="1")
        assert fast["status"] == slow["status"] == 0
        assert fast["output"] == slow["output"]
        assert fast["native"]["calls"]["tokenize_chunk"] > 0
        assert fast["native"]["calls"]["chunk_statistics"] > 0
        assert fast["imported"] == []


def test_edited_source_is_not_served_by_an_old_build(package_copy, tmp_path):
    edited = tmp_path / "site"
    shutil.copytree(package_copy, edited)
    counting = edited / "fastbleu" / "_kernels" / "bleu" / "counting.py"
    counting.write_text(counting.read_text() + "\n# edited after the build\n")
    assert status_of(edited).startswith("built from other source")
    assert status_of(package_copy) == "in use"


def test_a_failed_build_warns_and_the_package_still_works(tmp_path, capsys):
    pytest.importorskip("setuptools")
    import setuptools  # noqa: F401  (distutils' compiler classes, as setup.py gets them)
    from distutils.ccompiler import new_compiler
    from distutils.sysconfig import customize_compiler

    broken = new_compiler()
    customize_compiler(broken)
    broken.set_executables(compiler="false", compiler_so="false", compiler_cxx="false",
                           linker_so="false", linker_exe="false")
    target = tmp_path / f"compiled{SUFFIX}"
    assert aot.build_or_warn(target, broken) is False
    assert not target.exists()
    assert "ahead-of-time kernels were not built" in capsys.readouterr().err
    site = tmp_path / "site"  # the package as such an install leaves it: no compiled module
    shutil.copytree(ROOT / "fastbleu", site / "fastbleu",
                    ignore=shutil.ignore_patterns("__pycache__", "*.so", "*.pyd"))
    assert status_of(site).startswith("not built")
    # ... and then every kernel is the JIT's, as with FASTBLEU_NO_AOT (tested above).
