"""Where fastbleu's compiled kernels (and ``intl``'s table) are cached: never in the package.

numba's default for ``cache=True`` is the ``__pycache__`` folder beside the
source.  For an installed package that is ``site-packages/fastbleu/...``, a
folder pip did not create and does not remove: after ``pip install .``, a
run, and then ``pip install -e .``, the leftover ``site-packages/fastbleu``
(holding only caches) shadows the editable install and every import of
fastbleu's kernels fails.  So fastbleu's own functions get their own cache
locator, tried before numba's; it picks the first folder it can write of

1. ``$NUMBA_CACHE_DIR/<source folder>_<sha1 of its path>``, numba's own layout
   when the user chose a cache directory;
2. ``$XDG_CACHE_HOME/fastbleu/numba/<key>`` (default ``~/.cache/...``);
3. ``<temporary directory>/fastbleu-<uid>/numba/<key>``, a private folder
   (mode 0700, checked to be the user's own);

where ``<key>`` names the source folder and a hash of its absolute path, the
numba version and the Python implementation, so two installations, versions
or source trees never share an index.  Each of these folders then has one
subfolder per version of the kernels' source, ``src-<digest>``: a hash of the
contents of every ``_kernels/**/*.py`` and of ``_native/codes.py``.  numba checks
only the file of the function it loads, not the helpers compiled into it from
other files (``hashing.py``, the tokenizers' helpers) nor the constants it
froze, so an edit to one of those (``git pull`` in an editable install) would
otherwise load kernels built from the old source.  When none of them can be
written, numba's own locators decide, as for any other function.

numba's cache files are pickles that numba loads and runs: keep them in a
folder only you can write (see the README's "Trust boundary").
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

import numba
from numba.core import caching, config

#: The fastbleu package folder; functions defined under it use this module's locator.
PACKAGE_DIR = Path(__file__).resolve().parent.parent


def _key(source_dir: Path) -> str:
    ident = "\0".join((str(source_dir), numba.__version__, sys.implementation.cache_tag))
    return f"{source_dir.name}_{hashlib.sha1(ident.encode()).hexdigest()[:20]}"


_digest: list[str] = []


def source_digest() -> str:
    """``src-<sha1>`` of the kernels' source (every ``_kernels/**/*.py`` and ``_native/codes.py``),
    so that a change to any file a kernel compiles in gets a cache folder of its own."""
    if not _digest:
        sha = hashlib.sha1()
        files = sorted((PACKAGE_DIR / "_kernels").rglob("*.py"))
        for path in files + [PACKAGE_DIR / "_native" / "codes.py"]:
            sha.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
            try:
                sha.update(path.read_bytes())
            except OSError:  # unreadable: it still counts, as missing
                sha.update(b"\1")
            sha.update(b"\0")
        _digest.append(f"src-{sha.hexdigest()[:20]}")
    return _digest[0]


def _user_cache_root() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME")
    if not base or not os.path.isabs(base):  # the XDG spec ignores relative paths
        try:
            base = str(Path.home() / ".cache")
        except (RuntimeError, KeyError):  # no home directory known
            return None
    return Path(base) / "fastbleu" / "numba"


def _private_temp_root() -> Path | None:
    """``<tmp>/fastbleu-<uid>/numba``, created 0700; None if it is not safely ours."""
    if not hasattr(os, "getuid"):
        return None
    try:
        top = Path(tempfile.gettempdir()) / f"fastbleu-{os.getuid()}"
        try:
            top.mkdir(mode=0o700)
        except FileExistsError:
            pass
        status = os.lstat(top)
    except OSError:
        return None
    # Someone else's folder, a symlink, or one others may write: not a place for pickles.
    if (status.st_uid != os.getuid() or not os.path.isdir(top) or os.path.islink(top)
            or status.st_mode & 0o077):
        return None
    return top / "numba"


def candidate_dirs(source_dir: Path | str):
    """The cache folders for the functions of ``source_dir``, most preferred first (lazily)."""
    source_dir = Path(source_dir)
    if config.CACHE_DIR:
        # numba's UserProvidedCacheLocator layout, so NUMBA_CACHE_DIR works as documented.
        sha = hashlib.sha1(str(source_dir).encode()).hexdigest()
        yield Path(config.CACHE_DIR).expanduser() / f"{source_dir.name}_{sha}" / source_digest()
    for find_root in (_user_cache_root, _private_temp_root):
        root = find_root()
        if root is not None:
            yield root / _key(source_dir) / source_digest()


def _writable(folder: Path) -> bool:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        tempfile.TemporaryFile(dir=folder).close()
    except OSError:
        return False
    return True


_chosen: dict[tuple, Path | None] = {}


def cache_dir(source_dir: Path | str = Path(__file__).resolve().parent) -> Path | None:
    """The folder where the functions of ``source_dir`` are cached (None: none writable).

    The default is the kernels' folder, where ``intl``'s table is kept too.  The
    choice is made once per process (and per ``NUMBA_CACHE_DIR``/``XDG_CACHE_HOME``).
    """
    memo = (str(source_dir), config.CACHE_DIR, os.environ.get("XDG_CACHE_HOME"),
            os.environ.get("HOME"))
    if memo not in _chosen:
        _chosen[memo] = next((f for f in candidate_dirs(source_dir) if _writable(f)), None)
    return _chosen[memo]


def is_fastbleu_source(py_file: str) -> bool:
    try:
        Path(py_file).resolve().relative_to(PACKAGE_DIR)
    except (ValueError, OSError):
        return False
    return True


class FastbleuCacheLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """numba cache locator for fastbleu's own functions only (others: ``None``)."""

    def __init__(self, py_func, py_file, folder: Path):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = str(folder)

    def get_cache_path(self):
        return self._cache_path

    @classmethod
    def from_function(cls, py_func, py_file):
        if not os.path.exists(py_file) or not is_fastbleu_source(py_file):
            return None
        folder = cache_dir(Path(py_file).resolve().parent)
        if folder is None:
            return None  # numba's own locators decide
        return cls(py_func, py_file, folder)


def _cache_impl_class():
    return getattr(caching, "CacheImpl", None) or caching._CacheImpl


def register() -> None:
    """Put :class:`FastbleuCacheLocator` first in numba's list (once; before any ``@njit``)."""
    locators = _cache_impl_class()._locator_classes
    if not any(getattr(c, "__name__", "") == FastbleuCacheLocator.__name__
               and getattr(c, "__module__", "") == __name__ for c in locators):
        locators.insert(0, FastbleuCacheLocator)
