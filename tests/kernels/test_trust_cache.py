"""The kernel cache is a trust boundary, and an optimisation that never stops a run.

numba's cache files are pickles, and loading one runs code.  These tests run
the real command line in a subprocess against real folders: owned by another
user (``os.chown`` to uid 12345, so they need root), writable by group or
others, holding FIFOs, garbage, empty and truncated files, on a full file
system (a tiny tmpfs, where ``mount`` works) or past a file-size limit.  Each
run must print sacrebleu's number, with at most one warning line, and never
load a pickle from a folder that someone else can write.

Every subprocess gets its own ``TMPDIR``, so that the private fallback folder
(``<tmp>/fastbleu-<uid>``) is the test's, not the machine's.  The fallback
folder is shared by the tests of this module and filled once, so that most
runs load their kernels instead of compiling them.
"""

from __future__ import annotations

import os
import pickle
import resource
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from testkit.data import FASTBLEU, HYP, REF, ROOT
from fastbleu._kernels import cache

pytestmark = [pytest.mark.slow,  # cold compiles in subprocesses, one per cache case
              pytest.mark.skipif(not hasattr(os, "getuid") or os.getuid() != 0,
                                reason="needs root: chown to another user")]

OTHER_UID = 12345
TIMEOUT = 300  # seconds; a hang (a FIFO opened for reading) is a failure, not a stuck run
#: The command (chrF, as in the report) and what it prints.
COMMAND = [*FASTBLEU, REF, "-i", HYP, "-m", "chrf", "-b"]
SCORE = "69.6"

_HIDDEN = ("NUMBA_CACHE_DIR", "NUMBA_CACHE_LOCATOR_CLASSES", "XDG_CACHE_HOME",
           "FASTBLEU_NO_AOT", "TMPDIR")


def _env(tmpdir: Path, **extra) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _HIDDEN}
    env.update(TMPDIR=str(tmpdir), PYTHONPATH=str(ROOT), **{k: str(v) for k, v in extra.items()})
    return env


def _run(tmpdir: Path, command=COMMAND, preexec_fn=None, **extra) -> subprocess.CompletedProcess:
    return subprocess.run([str(a) for a in command], capture_output=True, text=True,
                          env=_env(tmpdir, **extra), cwd=ROOT, timeout=TIMEOUT,
                          preexec_fn=preexec_fn)


def _warnings(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.strip()]


def _assert_scored(done: subprocess.CompletedProcess, max_warnings: int = 1) -> None:
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == SCORE, done.stdout
    lines = _warnings(done.stderr)
    assert len(lines) <= max_warnings, lines
    assert all(line.startswith("fastbleu: warning: ") for line in lines), lines


def _cache_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.suffix in (".nbi", ".nbc"))


@pytest.fixture(scope="module")
def warm(tmp_path_factory) -> Path:
    """A user cache folder (an ``XDG_CACHE_HOME``) filled by one run of the command."""
    root = tmp_path_factory.mktemp("warm")
    home, tmpdir = root / "xdg", root / "tmp"
    tmpdir.mkdir(mode=0o700)
    _assert_scored(_run(tmpdir, XDG_CACHE_HOME=home), max_warnings=0)
    assert _cache_files(home / "fastbleu" / "numba")
    return home


@pytest.fixture(scope="module")
def shared_tmp(tmp_path_factory, warm) -> Path:
    """A TMPDIR whose private fallback folder already holds the kernels (a copy of ``warm``)."""
    tmpdir = tmp_path_factory.mktemp("shared-tmp")
    top = tmpdir / f"fastbleu-{os.getuid()}"
    top.mkdir(mode=0o700)
    shutil.copytree(warm / "fastbleu" / "numba", top / "numba")
    return tmpdir


@pytest.fixture
def home(tmp_path, warm) -> Path:
    """A copy of the warm user cache folder, for this test to damage."""
    copy = tmp_path / "xdg"
    shutil.copytree(warm, copy)
    return copy


class _Payload:
    """A pickle that, when loaded, writes a marker file: proof that a cache file was run."""

    def __init__(self, marker: Path):
        self.marker = str(marker)

    def __reduce__(self):
        return (exec, (f"open({self.marker!r}, 'w').write('loaded')",))


def _plant(folder: Path, marker: Path) -> int:
    """Replace every cache file under ``folder`` by the payload; return how many."""
    planted = 0
    for path in _cache_files(folder):
        path.write_bytes(pickle.dumps(_Payload(marker)))
        planted += 1
    return planted


def _chown_tree(folder: Path, uid: int) -> None:
    for path in [folder, *folder.rglob("*")]:
        os.chown(path, uid, -1, follow_symlinks=False)


# ---------------------------------------------------------------------------------------
# 1. A folder someone else can write is never loaded from
# ---------------------------------------------------------------------------------------


def _foreign_owner_0777(numba_dir: Path, home: Path) -> None:  # the report's case
    _chown_tree(numba_dir, OTHER_UID)
    numba_dir.chmod(0o777)


def _foreign_owner_0755(numba_dir: Path, home: Path) -> None:
    _chown_tree(numba_dir, OTHER_UID)


def _ours_but_0777(numba_dir: Path, home: Path) -> None:
    numba_dir.chmod(0o777)


def _group_writable(numba_dir: Path, home: Path) -> None:
    for folder in [numba_dir, *(p for p in numba_dir.rglob("*") if p.is_dir())]:
        folder.chmod(0o770)


def _parent_world_writable(numba_dir: Path, home: Path) -> None:
    # Our folders, 0700, inside one that others may write: they can rename ours away.
    home.chmod(0o777)


def _parent_foreign(numba_dir: Path, home: Path) -> None:
    os.chown(home, OTHER_UID, -1)


def _leaf_foreign(numba_dir: Path, home: Path) -> None:
    # Only the innermost folders (where the files are) belong to someone else.
    for leaf in {p.parent for p in _cache_files(numba_dir)}:
        _chown_tree(leaf, OTHER_UID)


def _files_foreign(numba_dir: Path, home: Path) -> None:
    for path in _cache_files(numba_dir):
        os.chown(path, OTHER_UID, -1)


@pytest.mark.parametrize("make_unsafe", [
    _foreign_owner_0777, _foreign_owner_0755, _ours_but_0777, _group_writable,
    _parent_world_writable, _parent_foreign, _leaf_foreign, _files_foreign])
def test_a_cache_folder_others_can_write_is_never_loaded(home, shared_tmp, tmp_path,
                                                         make_unsafe):
    numba_dir = home / "fastbleu" / "numba"
    marker = tmp_path / "payload-ran"
    assert _plant(numba_dir, marker)
    make_unsafe(numba_dir, home)
    before = sorted(p.name for p in numba_dir.rglob("*"))
    done = _run(shared_tmp, XDG_CACHE_HOME=home)
    assert not marker.exists(), "a pickle from someone else's folder was loaded"
    _assert_scored(done)
    if make_unsafe is not _files_foreign:  # a folder was refused: said once
        (line,) = _warnings(done.stderr)
        assert "cache" in line and str(home) in line
    assert sorted(p.name for p in numba_dir.rglob("*")) == before  # nothing written there


def test_numba_cache_dir_others_can_write_is_never_loaded(warm, shared_tmp, tmp_path):
    chosen = tmp_path / "numba-cache"
    chosen.mkdir()
    marker = tmp_path / "payload-ran"
    # numba's own layout for NUMBA_CACHE_DIR: <dir>/<source folder>_<sha1>/src-<digest>
    first = _run(shared_tmp, NUMBA_CACHE_DIR=chosen)
    _assert_scored(first, max_warnings=0)
    assert _plant(chosen, marker)
    _chown_tree(chosen, OTHER_UID)
    chosen.chmod(0o777)
    done = _run(shared_tmp, NUMBA_CACHE_DIR=chosen)
    assert not marker.exists()
    _assert_scored(done)
    (line,) = _warnings(done.stderr)
    assert str(chosen) in line and "NUMBA_CACHE_DIR" in line


def test_a_symlinked_cache_folder_is_judged_by_where_it_points(home, shared_tmp, tmp_path):
    numba_dir = home / "fastbleu" / "numba"
    marker = tmp_path / "payload-ran"
    assert _plant(numba_dir, marker)
    _foreign_owner_0777(numba_dir, home)
    linked = tmp_path / "linked"
    (linked / "fastbleu").mkdir(parents=True)
    (linked / "fastbleu" / "numba").symlink_to(numba_dir)
    done = _run(shared_tmp, XDG_CACHE_HOME=linked)
    assert not marker.exists()
    _assert_scored(done)


def test_folders_it_creates_are_private(tmp_path, shared_tmp):
    fresh = tmp_path / "fresh-xdg"
    fresh.mkdir(mode=0o755)
    _assert_scored(_run(shared_tmp, XDG_CACHE_HOME=fresh), max_warnings=0)
    created = [fresh / "fastbleu", *(p for p in (fresh / "fastbleu").rglob("*") if p.is_dir())]
    assert len(created) >= 4
    assert all(stat.S_IMODE(p.stat().st_mode) == 0o700 for p in created), \
        [oct(p.stat().st_mode) for p in created]
    files = _cache_files(fresh)
    assert files and all(stat.S_IMODE(p.stat().st_mode) & 0o077 == 0 for p in files)


# ---------------------------------------------------------------------------------------
# 2. A cache that cannot be used never stops scoring
# ---------------------------------------------------------------------------------------


#: The chrF statistics kernel's cache files (fastbleu/_kernels/chrf/statistics.py).
CHRF_KERNEL = "statistics._statistics_chunk-"


def _leaf(home: Path) -> Path:
    """The folder of the chrF kernels' cache files (each kernel folder has its own)."""
    (leaf,) = {p.parent for p in _cache_files(home / "fastbleu" / "numba")
               if p.name.startswith(CHRF_KERNEL)}
    return leaf


def _garbage(path: Path) -> None:
    path.write_bytes(os.urandom(300))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: max(1, path.stat().st_size // 3)])


def _fifo(path: Path) -> None:
    path.unlink()
    os.mkfifo(path)


def _folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


@pytest.mark.parametrize("suffix", [".nbi", ".nbc"])
@pytest.mark.parametrize("damage", [_garbage, _empty, _truncated, _fifo, _folder])
def test_a_damaged_cache_entry_is_compiled_again_and_replaced(home, shared_tmp, suffix,
                                                              damage):
    leaf = _leaf(home)
    # The files of the kernel the run calls (all of them would only make the test slower).
    damaged = sorted(p for p in leaf.iterdir() if p.suffix == suffix
                     and p.name.startswith(CHRF_KERNEL))
    assert damaged
    for path in damaged:
        damage(path)
    done = _run(shared_tmp, XDG_CACHE_HOME=home)
    _assert_scored(done)
    if damage is not _folder:  # a folder in the way stays (it is not ours to delete)
        assert all(p.is_file() for p in damaged)  # replaced, whole
        again = _run(shared_tmp, XDG_CACHE_HOME=home)
        _assert_scored(again, max_warnings=0)  # and loaded cleanly the next time


def test_a_fifo_in_place_of_the_intl_table_does_not_hang(home, shared_tmp):
    command = [*FASTBLEU, REF, "-i", HYP, "-b", "-tok", "intl"]
    first = _run(shared_tmp, command, XDG_CACHE_HOME=home)
    assert first.returncode == 0, first.stderr
    (table,) = (home / "fastbleu" / "numba").rglob("intl-roles-*.bin")
    _fifo(table)
    done = _run(shared_tmp, command, XDG_CACHE_HOME=home)
    assert done.returncode == 0, done.stderr
    assert done.stdout == first.stdout
    assert len(_warnings(done.stderr)) <= 1
    assert table.is_file()  # derived again and written in its place


def _limit_file_size():
    resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))


def test_writes_that_fail_past_a_file_size_limit_do_not_stop_scoring(tmp_path):
    """Every cache write fails (EFBIG): the run compiles in memory and scores."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(mode=0o700)
    done = _run(tmpdir, preexec_fn=_limit_file_size, XDG_CACHE_HOME=tmp_path / "xdg")
    _assert_scored(done)


@pytest.fixture
def full_disk(tmp_path):
    mount = tmp_path / "full"
    mount.mkdir()
    try:
        subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", str(mount)],
                       check=True, capture_output=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        pytest.skip("cannot mount a tmpfs here")
    try:
        yield mount
    finally:
        subprocess.run(["umount", str(mount)], capture_output=True, timeout=30)


def test_a_full_disk_under_the_cache_does_not_stop_scoring(full_disk, tmp_path):
    tmpdir = full_disk / "tmp"  # the fallback folder is full too
    tmpdir.mkdir(mode=0o700)
    done = _run(tmpdir, XDG_CACHE_HOME=full_disk / "xdg")
    _assert_scored(done)
    assert "No space left" in done.stderr or "space" in done.stderr


@pytest.mark.parametrize("command", [
    [*FASTBLEU, REF, "-i", HYP, "-b", "-m", "chrf"],
    [*FASTBLEU, REF, "-i", HYP, "-b", "-tok", "intl"],
], ids=["chrf", "intl"])
def test_no_usable_folder_at_all_compiles_in_memory(tmp_path, command):
    """The fallback folder is held by another user and the user folder cannot be created:
    before, numba's own locators took over (the package's ``__pycache__``) or found none
    ('no locator available')."""
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(mode=0o700)
    taken = tmpdir / f"fastbleu-{os.getuid()}"
    taken.mkdir(mode=0o700)
    os.chown(taken, OTHER_UID, -1)
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    site = tmp_path / "site-packages"
    # Without the install's seed (its files are the package's, not a cache written there).
    shutil.copytree(ROOT / "fastbleu", site / "fastbleu",
                    ignore=shutil.ignore_patterns("__pycache__", "kernel_cache"))
    env_home = tmp_path / "home"
    env_home.mkdir()
    done = subprocess.run(command, capture_output=True, text=True, timeout=TIMEOUT,
                          cwd=tmp_path,
                          env={**_env(tmpdir, XDG_CACHE_HOME=blocker / "xdg",
                                      FASTBLEU_NO_AOT=1, HOME=env_home),
                               "PYTHONPATH": str(site)})
    assert done.returncode == 0, done.stderr
    assert len(_warnings(done.stderr)) == 1, done.stderr
    assert _cache_files(site) == [] and _cache_files(env_home) == []
    assert list(taken.iterdir()) == []


# ---------------------------------------------------------------------------------------
# The rule itself, on folders
# ---------------------------------------------------------------------------------------


def test_trust_rule_on_folders(tmp_path):
    ours = tmp_path / "ours"
    ours.mkdir(mode=0o700)
    assert cache.trust_problem(ours) is None
    ours.chmod(0o757)
    assert "others" in cache.trust_problem(ours)
    ours.chmod(0o770)
    assert "group" in cache.trust_problem(ours)
    ours.chmod(0o755)
    os.chown(ours, OTHER_UID, -1)
    assert str(OTHER_UID) in cache.trust_problem(ours)
    inner = ours / "inner"
    inner.mkdir(mode=0o700)
    assert cache.trust_problem(inner) is not None  # its parent is someone else's
    os.chown(ours, 0, -1)
    assert cache.trust_problem(inner) is None
    afile = tmp_path / "afile"
    afile.write_text("x")
    assert cache.trust_problem(afile) is not None


def test_sticky_root_folder_above_our_own_is_fine(tmp_path):
    sticky = tmp_path / "sticky"
    sticky.mkdir()
    sticky.chmod(0o1777)
    mine = sticky / "mine"
    mine.mkdir(mode=0o700)
    os.chown(mine, OTHER_UID if os.getuid() != OTHER_UID else 0, -1)
    assert cache.trust_problem(mine) is not None  # someone else's
    os.chown(mine, os.getuid(), -1)
    assert cache.trust_problem(mine) is None
    os.chown(sticky, OTHER_UID, -1)  # a sticky folder of another user: they may rename
    assert cache.trust_problem(mine) is not None


def test_read_regular_file_refuses_anything_else(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(OSError):
        cache.read_regular_file(fifo)
    link = tmp_path / "link"
    target = tmp_path / "target"
    target.write_bytes(b"data")
    link.symlink_to(target)
    with pytest.raises(OSError):
        cache.read_regular_file(link)
    assert cache.read_regular_file(target) == b"data"
    assert cache.read_regular_file(tmp_path / "missing") is None
    with pytest.raises(OSError):
        cache.read_regular_file(target, limit=2)
    os.chown(target, OTHER_UID, -1)
    with pytest.raises(OSError):
        cache.read_regular_file(target)
