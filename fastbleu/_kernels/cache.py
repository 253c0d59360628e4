"""Where fastbleu's compiled kernels (and ``intl``'s table) are cached, and when not at all.

numba's default for ``cache=True`` is the ``__pycache__`` folder beside the
source.  For an installed package that is ``site-packages/fastbleu/...``, a
folder pip did not create and does not remove: after ``pip install .``, a
run, and then ``pip install -e .``, the leftover ``site-packages/fastbleu``
(holding only caches) shadows the editable install and every import of
fastbleu's kernels fails.  So fastbleu's own functions get their own cache
locator, tried before numba's; it picks the first folder that is safe and
writable of

1. ``$NUMBA_CACHE_DIR/<source folder>_<sha1 of its path>``, numba's own layout
   when the user chose a cache directory;
2. ``$XDG_CACHE_HOME/fastbleu/numba/<key>`` (default ``~/.cache/...``);
3. ``<temporary directory>/fastbleu-<uid>/numba/<key>``, a private folder;

where ``<key>`` names the source folder and a hash of its absolute path, the
numba version and the Python implementation, so two installations, versions
or source trees never share an index.  Each of these folders then has one
subfolder per version of the kernels' source, ``src-<digest>``: a hash of the
contents of every ``.py`` file under ``_kernels`` and of ``_native/codes.py``.
numba checks only the file of the function it loads, not the helpers compiled
into it from other files nor the constants it froze, so an edit to one of
those (``git pull`` in an editable install) would otherwise load kernels built
from the old source.

**A trust boundary.**  numba's cache files are pickles, and loading one runs
code.  A folder is used only if it, and every folder above it, belongs to the
user or to root and cannot be written by group or others (:func:`trust_problem`;
a root-owned or the user's own sticky folder, such as ``/tmp``, may sit above a
folder of the user's own: others cannot rename what is in it).  A refused
folder is never read or written; the next one is tried, and one warning line
says so.  Folders fastbleu creates are created 0700, files 0600.  Inside a
chosen folder only regular files of the user's (or root's) are opened
(:func:`read_regular_file`: never a FIFO, a device or a symlink).

**The GPU kernels too.**  numba-cuda (the ``gpu`` extra) caches ``cuda.jit(cache=True)``
kernels with its own copy of numba's caching classes; :func:`register_cuda` (called by
:mod:`fastbleu._kernels.cuda.loader`) registers the same locator and files there, so the
kernels of :mod:`fastbleu._kernels.cuda` follow every rule above as well.

**An optimisation only.**  fastbleu's functions never fall through to numba's
own locators (the package's ``__pycache__``, ``~/.cache/numba``): when no
folder is usable they are compiled in memory.  Every cache file fastbleu
writes carries a SHA-256 of its content (:mod:`.cache_files`), so a
damaged entry (garbage, empty, truncated, not a regular file) is never
unpickled: it is compiled again and replaced.  A failure to write (a full
disk, a file-size limit, a folder removed meanwhile) leaves the kernel
compiled in memory.  Either way the run goes on, with at most one warning
line per process.
"""

from __future__ import annotations

import hashlib
import os
import stat
import sys
import tempfile
from pathlib import Path

import numba
from numba.core import caching, config

from . import seed
from .cache_files import (MAX_FILE_BYTES, NO_CACHE, CacheFileError, GuardedCacheFiles,
                          guarded, guarded_files_for, read_regular_file, warn_once,
                          write_whole)

__all__ = ["MAX_FILE_BYTES", "NO_CACHE", "CacheFileError", "GuardedCacheFiles",
           "read_regular_file", "write_whole", "trust_problem", "cache_dir", "candidate_dirs",
           "source_digest", "numba_cache_dir_folder", "FastbleuCacheLocator", "register",
           "register_cuda"]

#: The fastbleu package folder; functions defined under it use this module's locator.
PACKAGE_DIR = Path(__file__).resolve().parent.parent


def _key(source_dir: Path) -> str:
    ident = "\0".join((str(source_dir), numba.__version__, sys.implementation.cache_tag))
    return f"{source_dir.name}_{hashlib.sha1(ident.encode()).hexdigest()[:20]}"


_digest: list[str] = []


def source_digest() -> str:
    """``src-<sha1>`` of the kernels' source (every ``.py`` under ``_kernels`` and
    ``_native/codes.py``), so that a change to any file a kernel compiles in gets a
    cache folder of its own."""
    if not _digest:
        sha = hashlib.sha1()
        kernels = PACKAGE_DIR / "_kernels"
        files = sorted(kernels.rglob("*.py"))
        for path in files + [PACKAGE_DIR / "_native" / "codes.py"]:
            sha.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
            try:
                sha.update(path.read_bytes())
            except OSError:  # unreadable: it still counts, as missing
                sha.update(b"\1")
            sha.update(b"\0")
        _digest.append(f"src-{sha.hexdigest()[:20]}")
    return _digest[0]


# ---------------------------------------------------------------------------------------
# Which folders may hold pickles
# ---------------------------------------------------------------------------------------


def _owners() -> tuple[int, ...]:
    return (os.getuid(), 0)


def trust_problem(folder: Path | str, *, holds_files: bool = True) -> str | None:
    """Why ``folder`` may not hold fastbleu's cache (None: it may).

    The folder (symbolic links resolved) and every folder above it must belong to
    the user or to root and be writable by neither group nor others; a folder
    above it may instead be sticky (``/tmp``), where others cannot rename or remove
    what is not theirs.  ``holds_files=False`` judges a folder that is only to hold
    a subfolder fastbleu creates, so a sticky folder is fine there too.  Where the
    platform has no user ids (Windows), nothing is checked.
    """
    if not hasattr(os, "getuid"):
        return None
    try:
        real = Path(os.path.realpath(folder))
    except (OSError, ValueError) as error:
        return f"{folder} cannot be resolved ({error})"
    owners = _owners()
    for depth, path in enumerate((real, *real.parents)):
        try:
            status = os.lstat(path)
        except OSError as error:
            return f"{path} cannot be examined ({error.strerror or error})"
        if not stat.S_ISDIR(status.st_mode):
            return f"{path} is not a folder"
        if status.st_uid not in owners:
            return f"{path} belongs to uid {status.st_uid}, neither you nor root"
        writable = status.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        if writable and (depth == 0 and holds_files or not status.st_mode & stat.S_ISVTX):
            who = "group and others" if writable == (stat.S_IWGRP | stat.S_IWOTH) else (
                "group" if writable & stat.S_IWGRP else "others")
            return f"{path} is writable by {who} (mode {stat.S_IMODE(status.st_mode):04o})"
    return None


class _Refused(Exception):
    """A folder that is not safe (``untrusted``) or that cannot be made or written."""

    def __init__(self, reason: str, untrusted: bool):
        super().__init__(reason)
        self.untrusted = untrusted


def _make_private(folder: Path) -> Path:
    """``folder``, created where missing (each new folder 0700) under a trusted one, and
    writable: its real path.  Raises :class:`_Refused` when it is not safe or not usable."""
    folder = Path(os.path.abspath(folder))
    missing: list[str] = []
    existing = folder
    while not os.path.lexists(existing) and existing != existing.parent:
        missing.append(existing.name)
        existing = existing.parent
    problem = trust_problem(existing, holds_files=not missing)
    if problem is not None:
        is_folder = os.path.isdir(existing)
        raise _Refused(problem, untrusted=is_folder)
    real = Path(os.path.realpath(existing))
    for name in reversed(missing):
        real = real / name
        try:
            os.mkdir(real, 0o700)
        except FileExistsError:
            pass  # made meanwhile (another fastbleu): judged below like any other
        except OSError as error:
            raise _Refused(f"{real} cannot be created ({error.strerror or error})",
                           untrusted=False) from None
    problem = trust_problem(real)
    if problem is not None:
        raise _Refused(problem, untrusted=True)
    try:
        tempfile.TemporaryFile(dir=real).close()
    except OSError as error:
        raise _Refused(f"{real} cannot be written ({error.strerror or error})",
                       untrusted=False) from None
    return real


def _user_cache_root() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):  # the XDG spec ignores relative paths
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no home directory known
            return None
    return Path(base) / "fastbleu" / "numba"


def _private_temp_root() -> Path | None:
    """``<tmp>/fastbleu-<uid>/numba``, its top created 0700; None if it is not safely ours."""
    if not hasattr(os, "getuid"):
        return None
    top = Path(tempfile.gettempdir()) / f"fastbleu-{os.getuid()}"
    try:
        top = _make_private(top)
    except _Refused:
        return None
    return top / "numba"


def _candidates(source_dir: Path):
    """(label, folder) of each place the functions of ``source_dir`` may be cached, most
    preferred first (lazily: the temporary folder is made only when it is reached)."""
    if config.CACHE_DIR:
        yield "NUMBA_CACHE_DIR", numba_cache_dir_folder(config.CACHE_DIR, source_dir)
    user = _user_cache_root()
    if user is not None:
        label = "XDG_CACHE_HOME" if os.environ.get("XDG_CACHE_HOME") else "the user cache"
        yield label, user / _key(source_dir) / source_digest()
    if hasattr(os, "getuid"):
        top = Path(tempfile.gettempdir()) / f"fastbleu-{os.getuid()}"
        yield "the temporary folder", top / "numba" / _key(source_dir) / source_digest()


def numba_cache_dir_folder(root: Path | str, source_dir: Path) -> Path:
    """The folder of ``source_dir``'s kernels under a ``NUMBA_CACHE_DIR`` of ``root``:
    numba's ``UserProvidedCacheLocator`` layout (so the variable works as documented),
    then :func:`source_digest`."""
    sha = hashlib.sha1(str(source_dir).encode()).hexdigest()
    return Path(root).expanduser() / f"{source_dir.name}_{sha}" / source_digest()


def candidate_dirs(source_dir: Path | str):
    """The cache folders for the functions of ``source_dir``, most preferred first (lazily)."""
    for _, folder in _candidates(Path(source_dir)):
        yield folder


_chosen: dict[tuple, Path | None] = {}


def _choose(source_dir: Path) -> Path | None:
    refused: list[tuple[str, Path, str]] = []
    for label, folder in _candidates(source_dir):
        try:
            chosen = _make_private(folder)
        except _Refused as refusal:
            if refusal.untrusted:
                refused.append((label, folder, str(refusal)))
            continue
        guarded.add(str(chosen))
        _seed(chosen, source_dir)
        if refused:
            label, folder, reason = refused[0]
            warn_once(f"not using the kernel cache in {folder} ({label}): {reason}; "
                       f"a cache folder must be yours (or root's) and writable by no one else, "
                       f"as its files are code; caching in {chosen} instead")
        return chosen
    if refused:
        label, folder, reason = refused[0]
        warn_once(f"not using the kernel cache in {folder} ({label}): {reason}; a cache "
                   f"folder must be yours (or root's) and writable by no one else, as its "
                   f"files are code; compiling the kernels in memory (slower to start)")
    else:
        warn_once("no folder for the kernel cache can be created or written (set "
                   "NUMBA_CACHE_DIR or XDG_CACHE_HOME to one of yours); compiling the "
                   "kernels in memory (slower to start)")
    return None


def _seed(chosen: Path, source_dir: Path) -> None:
    """Copy the install's compiled kernels of ``source_dir`` into ``chosen`` (:mod:`.seed`)."""
    try:
        folder = seed.seed_folder(source_dir, PACKAGE_DIR, source_digest())
    except (ValueError, OSError):  # not under the package
        return
    if folder.is_dir() and trust_problem(folder) is None:  # the seed is code, too
        seed.fill(chosen, folder)


def cache_dir(source_dir: Path | str = Path(__file__).resolve().parent) -> Path | None:
    """The folder where the functions of ``source_dir`` are cached (None: none is usable,
    they are compiled in memory).

    The default is the kernels' folder, where ``intl``'s table is kept too.  The
    choice is made once per process (and per ``NUMBA_CACHE_DIR``, ``XDG_CACHE_HOME``,
    home and temporary folder).  A folder that another user could write is refused
    (:func:`trust_problem`), with one warning line.
    """
    memo = (str(source_dir), config.CACHE_DIR, os.environ.get("XDG_CACHE_HOME"),
            os.environ.get("HOME"), tempfile.gettempdir())
    if memo not in _chosen:
        _chosen[memo] = _choose(Path(source_dir))
    return _chosen[memo]


# ---------------------------------------------------------------------------------------
# numba's side
# ---------------------------------------------------------------------------------------


_file_digests: dict[str, str] = {}


def _file_digest(path: str) -> str:
    if path not in _file_digests:
        try:
            _file_digests[path] = hashlib.sha1(Path(path).read_bytes()).hexdigest()
        except OSError:  # unreadable source: nothing cached for it can match
            return f"unreadable {os.urandom(8).hex()}"
    return _file_digests[path]


def is_fastbleu_source(py_file: str) -> bool:
    try:
        Path(py_file).resolve().relative_to(PACKAGE_DIR)
    except (ValueError, OSError):
        return False
    return True


class FastbleuCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba cache locator for fastbleu's own functions only (others: ``None``).

    It always takes them: with no usable folder the path is :data:`NO_CACHE`, and
    they are compiled in memory rather than cached by numba's own locators in
    folders nobody checked.
    """

    def __init__(self, py_func, py_file, folder: Path | None):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = NO_CACHE if folder is None else str(folder)

    def get_cache_path(self):
        return self._cache_path

    def get_source_stamp(self):
        """A hash of the source file's content, not its time (numba before 0.61 took its
        time and size): the install's seed (:mod:`.seed`) stays valid wherever pip put the
        files, on every numba fastbleu supports."""
        return ("sha1", _file_digest(self._py_file))

    def ensure_cache_path(self):
        """Nothing to do: the folder was made and checked when it was chosen, and a write
        that fails is handled where it fails (:class:`GuardedCacheFiles`)."""

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.exists(py_file) or not is_fastbleu_source(py_file):
            return None
        return cls(py_func, py_file, cache_dir(Path(py_file).resolve().parent))


def _cache_impl_class():
    return getattr(caching, "CacheImpl", None) or caching._CacheImpl


def register() -> None:
    """Put :class:`FastbleuCacheLocator` first in numba's list (once; before any ``@njit``),
    and :class:`GuardedCacheFiles` in place of numba's index and data files."""
    _register_into(caching)


def register_cuda() -> None:
    """:func:`register` for numba-cuda's own copy of numba's caching classes, where the
    CUDA target has one (numba-cuda, which ``fastbleu[gpu]`` installs; numba's built-in
    CUDA target and its simulator use numba's, already registered).  Without it the GPU
    kernels (``cuda.jit(cache=True)``) would be cached where numba-cuda chooses: the
    ``__pycache__`` beside the installed source, ``~/.cache/numba`` or
    ``$NUMBA_CACHE_DIR`` as it is, with none of the checks above (folders of other
    users, foreign files, the source digest).  Called once numba's CUDA target is
    imported (:mod:`fastbleu._kernels.cuda.loader`), before any kernel is defined."""
    try:
        from numba.cuda.core import caching as cuda_caching
    except ImportError:  # numba's built-in CUDA target: numba's own caching module
        return
    if cuda_caching is not caching and hasattr(cuda_caching, "IndexDataCacheFile"):
        _register_into(cuda_caching)


def _register_into(module) -> None:
    impl = getattr(module, "CacheImpl", None) or module._CacheImpl
    locators = impl._locator_classes
    if not any(getattr(c, "__name__", "") == FastbleuCacheLocator.__name__
               and getattr(c, "__module__", "") == __name__ for c in locators):
        locators.insert(0, FastbleuCacheLocator)
    if isinstance(module.IndexDataCacheFile, type) and \
            issubclass(module.IndexDataCacheFile, GuardedCacheFiles):
        return  # registered already (numba's module: at every import of this one)
    original = getattr(module, "_fastbleu_numba_files", None) or module.IndexDataCacheFile
    module._fastbleu_numba_files = original
    module.IndexDataCacheFile = guarded_files_for(original)
