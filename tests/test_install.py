"""The install stays clean: numba's cache and intl's table live outside the package.

Before, ``pip install .`` and a run wrote numba's cache into
``site-packages/fastbleu/_kernels/__pycache__``; ``pip install -e .`` then left
that folder behind, where it shadowed the editable install.  These tests run
a copy of the package from a temporary folder (as an installed one would be)
and check where the cache goes; the README test checks that ``.ci/run`` runs
exactly the README's quick start.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import stat
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest

from testkit.data import DATA, ROOT, read_lines
from testkit.marks import slow
from fastbleu import BLEU
from fastbleu._kernels import cache
from fastbleu._kernels.text import unicode_classes

# Compile one small kernel (about a second), then report whether it came from the cache.
_PROBE = textwrap.dedent("""
    import numpy as np
    from fastbleu._kernels.text import hashing
    hashing.finish(np.uint64(12345))
    print("hits", sum(hashing.finish.stats.cache_hits.values()))
    print("file", hashing.__file__)
""")


@pytest.fixture
def installed(tmp_path):
    """A copy of the fastbleu package in a folder of its own, without any cache (nor the
    install's seed of it: tests/kernels/test_seed.py)."""
    site = tmp_path / "site-packages"
    shutil.copytree(ROOT / "fastbleu", site / "fastbleu",
                    ignore=shutil.ignore_patterns("__pycache__", "kernel_cache"))
    return site


def _probe(site: Path, **env_vars) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES", "XDG_CACHE_HOME")}
    env.update(PYTHONPATH=str(site), **env_vars)
    done = subprocess.run([sys.executable, "-c", _PROBE], env=env, cwd=site.parent,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    assert Path(lines["file"]).is_relative_to(site)  # the copy ran, not the worktree
    return int(lines["hits"]), done.stderr


def _cache_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))


def test_cache_goes_to_the_user_cache_folder_not_the_package(installed, tmp_path):
    home = tmp_path / "xdg"
    assert _probe(installed, XDG_CACHE_HOME=str(home))[0] == 0  # compiled
    assert _cache_files(installed) == []
    written = _cache_files(home / "fastbleu" / "numba")
    # the probe's kernel is _kernels/text/hashing.py: its folder's name, then a hash
    assert written and all(p.parent.parent.name.startswith("text_") for p in written)
    assert all(p.parent.name == cache.source_digest() for p in written)
    assert _probe(installed, XDG_CACHE_HOME=str(home))[0] == 1  # loaded from there
    assert _cache_files(installed) == []


@pytest.mark.slow  # two cold compiles in child processes (issue 28: -m slow)
def test_numba_cache_dir_is_honoured(installed, tmp_path):
    chosen = tmp_path / "numba-cache"
    assert _probe(installed, NUMBA_CACHE_DIR=str(chosen),
                  XDG_CACHE_HOME=str(tmp_path / "unused"))[0] == 0
    source = (installed / "fastbleu" / "_kernels" / "text").resolve()
    expected = chosen / f"text_{hashlib.sha1(str(source).encode()).hexdigest()}"
    assert _cache_files(chosen) and all(p.parent.parent == expected
                                        for p in _cache_files(chosen))
    assert not (tmp_path / "unused").exists()
    assert _cache_files(installed) == []
    assert _probe(installed, NUMBA_CACHE_DIR=str(chosen))[0] == 1


@pytest.mark.slow  # three cold compiles in child processes (issue 28: -m slow)
def test_an_edit_to_any_kernel_file_gets_a_fresh_cache(installed, tmp_path):
    """numba checks only the loaded function's own file; an edit to another kernel file (a
    helper compiled into it, a constant it froze) must not load kernels of the old source."""
    home = tmp_path / "xdg"
    assert _probe(installed, XDG_CACHE_HOME=str(home))[0] == 0  # compiled
    assert _probe(installed, XDG_CACHE_HOME=str(home))[0] == 1  # loaded
    helper = installed / "fastbleu" / "_kernels" / "bleu" / "counting.py"  # not the probe's file
    helper.write_text(helper.read_text() + "\n# edited\n")
    assert _probe(installed, XDG_CACHE_HOME=str(home))[0] == 0  # compiled again
    codes = installed / "fastbleu" / "_native" / "codes.py"
    codes.write_text(codes.read_text() + "\n# edited\n")
    assert _probe(installed, XDG_CACHE_HOME=str(home))[0] == 0
    assert _probe(installed, XDG_CACHE_HOME=str(home))[0] == 1


def test_unwritable_cache_folders_fall_back_without_touching_the_package(installed,
                                                                          tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    # Neither NUMBA_CACHE_DIR nor XDG_CACHE_HOME can hold a folder: the private
    # temporary folder takes the cache, and scoring works.
    hits, _ = _probe(installed, NUMBA_CACHE_DIR=str(blocker / "numba"),
                     XDG_CACHE_HOME=str(blocker / "xdg"))
    assert hits in (0, 1)  # 1 when an earlier run on this machine filled it
    assert _cache_files(installed) == []


def test_two_source_trees_do_not_share_a_cache_folder(tmp_path):
    one, two = tmp_path / "a" / "_kernels", tmp_path / "b" / "_kernels"
    assert cache._key(one) != cache._key(two)
    assert cache._key(one).startswith("_kernels_")


def test_locator_only_takes_fastbleu_functions(tmp_path):
    def user_function():
        return 1

    outside = tmp_path / "user_module.py"
    outside.write_text("x = 1\n")
    assert cache.FastbleuCacheLocator.from_function(user_function, str(outside)) is None
    kernel_file = Path(unicode_classes.__file__).with_name("hashing.py")
    from fastbleu._kernels.text import hashing
    locator = cache.FastbleuCacheLocator.from_function(hashing.finish.py_func,
                                                       str(kernel_file))
    assert locator is not None
    assert not Path(locator.get_cache_path()).resolve().is_relative_to(cache.PACKAGE_DIR)


def test_locator_is_registered_once_and_first():
    from numba.core import caching

    cache.register()
    cache.register()
    locators = cache._cache_impl_class()._locator_classes
    assert locators[0] is cache.FastbleuCacheLocator
    assert locators.count(cache.FastbleuCacheLocator) == 1
    assert caching.InTreeCacheLocator in locators  # numba's own stay, for other code


def test_private_temp_folder_is_refused_when_others_can_write_it(tmp_path, monkeypatch):
    monkeypatch.setattr(cache.tempfile, "gettempdir", lambda: str(tmp_path))
    top = tmp_path / f"fastbleu-{os.getuid()}"
    top.mkdir(mode=0o777)
    top.chmod(0o777)
    assert cache._private_temp_root() is None
    top.chmod(0o700)
    assert cache._private_temp_root() == top / "numba"


# ---------------------------------------------------------------------------------------
# intl's cached code-point table
# ---------------------------------------------------------------------------------------


@pytest.fixture
def table_folder(tmp_path, monkeypatch):
    """intl's table cached in a fresh folder; the in-memory copy forgotten before and after."""
    monkeypatch.setattr(cache, "cache_dir", lambda *a, **k: tmp_path)
    unicode_classes.intl_roles.cache_clear()
    yield tmp_path
    unicode_classes.intl_roles.cache_clear()


def _intl_scores() -> tuple[float, float]:
    sacrebleu = pytest.importorskip("sacrebleu")
    hyps = read_lines(DATA / "sample.sys-A.en")
    refs = [read_lines(DATA / "sample.ref-A.en")]
    # Text where intl's classes matter: symbols, non-ASCII punctuation and digits.
    extra = ["Prices rose 5%—to €3,50 «quickly»; 2×3=6 ⅓ ¿qué? ٣٫٥", "x¹ y² — “ok” …"]
    hyps, refs = hyps + extra, [refs[0] + extra[::-1]]
    ours = BLEU(tokenize="intl").corpus_score(hyps, refs).score
    theirs = sacrebleu.BLEU(tokenize="intl").corpus_score(hyps, refs).score
    return ours, theirs


def _the_table(folder: Path) -> Path:
    (path,) = folder.glob("intl-roles-regex-*.bin")
    return path


def _header_and_table(path: Path) -> tuple[bytes, bytes]:
    data = path.read_bytes()
    return data[:-unicode_classes.N_CODE_POINTS], data[-unicode_classes.N_CODE_POINTS:]


def test_intl_table_is_written_whole_with_a_checksum(table_folder):
    roles = unicode_classes.intl_roles()
    path = _the_table(table_folder)
    assert stat.S_IMODE(path.stat().st_mode) == 0o644
    header, table = _header_and_table(path)
    assert table == roles.tobytes()
    import regex
    assert header.startswith(b"fastbleu intl roles 1\nregex " + regex.__version__.encode())
    assert hashlib.sha256(b"regex " + regex.__version__.encode() + b"\n"
                          + table).hexdigest().encode() in header
    assert [p.name for p in table_folder.iterdir()] == [path.name]  # no temporary left


def _tamper_bytes(path: Path) -> None:
    header, table = _header_and_table(path)
    table = bytearray(table)
    table[ord(".")] = table[ord("%")] = unicode_classes.ROLE_GLUE
    table[0x2014] = table[0x20AC] = table[0xBF] = unicode_classes.ROLE_GLUE
    path.write_bytes(header + bytes(table))


def _tamper_zeros(path: Path) -> None:
    header, table = _header_and_table(path)
    path.write_bytes(header + bytes(len(table)))


def _tamper_with_matching_checksum(path: Path) -> None:
    """A hand-made table with a checksum that fits it: Latin-1 gives it away."""
    import regex
    header, table = _header_and_table(path)
    table = bytearray(table)
    table[ord(",")] = table[ord("%")] = unicode_classes.ROLE_GLUE
    digest = hashlib.sha256(b"regex " + regex.__version__.encode() + b"\n"
                            + bytes(table)).hexdigest().encode()
    header = re.sub(rb"sha256 [0-9a-f]{64}", b"sha256 " + digest, header)
    path.write_bytes(header + bytes(table))


def _tamper_truncate(path: Path) -> None:
    path.write_bytes(path.read_bytes()[:1000])


def _tamper_old_npy(path: Path) -> None:
    with path.open("wb") as handle:
        np.save(handle, np.zeros(unicode_classes.N_CODE_POINTS, dtype=np.uint8))


def _tamper_values(path: Path) -> None:
    """Out-of-range roles with a fitting checksum."""
    import regex
    header, table = _header_and_table(path)
    table = bytes(b if i < 0x3000 else 9 for i, b in enumerate(table))
    digest = hashlib.sha256(b"regex " + regex.__version__.encode() + b"\n"
                            + table).hexdigest().encode()
    header = re.sub(rb"sha256 [0-9a-f]{64}", b"sha256 " + digest, header)
    path.write_bytes(header + table)


@pytest.mark.parametrize("tamper", [  # quick: three kinds of damage; all with -m slow
    slow(_tamper_bytes), slow(_tamper_zeros), _tamper_with_matching_checksum, _tamper_truncate,
    _tamper_old_npy, slow(_tamper_values)])
def test_a_tampered_intl_table_is_derived_again(table_folder, tamper):
    expected = unicode_classes.derive_intl_roles()
    unicode_classes.intl_roles()
    path = _the_table(table_folder)
    intact = path.read_bytes()
    tamper(path)
    assert path.read_bytes() != intact
    unicode_classes.intl_roles.cache_clear()  # a new process: reads the file
    ours, theirs = _intl_scores()
    assert ours == theirs
    assert np.array_equal(unicode_classes.intl_roles(), expected)
    assert path.read_bytes() == intact  # and the file is whole again


def test_intl_table_is_read_back_from_the_cache(table_folder, monkeypatch):
    first = unicode_classes.intl_roles()
    unicode_classes.intl_roles.cache_clear()
    monkeypatch.setattr(unicode_classes, "derive_intl_roles",
                        lambda: pytest.fail("derived again despite an intact table"))
    assert np.array_equal(unicode_classes.intl_roles(), first)


def test_intl_works_when_no_cache_folder_is_writable(monkeypatch):
    monkeypatch.setattr(cache, "cache_dir", lambda *a, **k: None)
    unicode_classes.intl_roles.cache_clear()
    try:
        ours, theirs = _intl_scores()
    finally:
        unicode_classes.intl_roles.cache_clear()
    assert ours == theirs


# ---------------------------------------------------------------------------------------
# The README's quick start is what CI runs
# ---------------------------------------------------------------------------------------


def _quick_start_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- quick-start:begin -->\s*```bash\n(.*?)```\s*<!-- quick-start:end -->",
                      readme, re.S)
    assert block, "README.md lost its quick-start markers"
    return [line for line in block.group(1).splitlines()
            if line.strip() and not line.lstrip().startswith("#")]


def test_readme_quick_start_is_the_two_commands():
    assert _quick_start_commands() == [
        "python3 -m pip install . && fastbleu data/sample.ref-A.en data/sample.ref-B.en "
        "-i data/sample.sys-A.en",
        "python3 -m pip install -e '.[test]' && python3 -m pytest -q -m \"not slow\" -n auto",
    ]


def test_ci_runs_the_commands_read_from_the_readme():
    """.ci/run extracts the commands with the same markers (so the two cannot drift)."""
    script = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert "quick-start:begin" in script and "quick-start:end" in script
    done = subprocess.run(["bash", str(ROOT / ".ci" / "run"), "--print-commands"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == _quick_start_commands()
