"""The install's seed of the kernel cache: kernels compiled by ``pip install``, copied on first use.

numba compiles a kernel the first time a process needs it and keeps it in the
user's cache (:mod:`.cache`); for chrF, TER and NIST that first compile took
5-14 s, several times the warm run.  So the install compiles them too:
``setup.py`` runs :mod:`fastbleu._native.warmup` (every common path on tiny
inputs) in a child process with a fresh ``NUMBA_CACHE_DIR``
(:func:`fastbleu._kernels.aot.build_seed`), and keeps the files numba wrote as
the package's *seed*,
``fastbleu/_native/kernel_cache/<name>/<source folder>/`` (:func:`seed_folder`).

When a process first chooses its cache folder for a source folder, it copies
into it every seed file that folder lacks (:func:`fill`), and numba loads
them as it loads any cached kernel.  The seed's ``<name>``
(:func:`seed_name`) holds the kernels' source digest and the numba, numpy
and Python versions, so a seed built from other source or by other versions
is never used; the kernels' source stamps are hashes of the source files'
content, not their times (:class:`.cache.FastbleuCacheLocator`), so the seed
is valid wherever pip put the files.  numba's index also keys each kernel by
the CPU it was compiled for: a seed built on another machine is a miss, and
the kernel is compiled as before.

The seed is part of the installed package, as trusted as its code: it is
read only if its folders pass :func:`.cache.trust_problem` (checked by
:mod:`.cache` before it calls :func:`fill`) and only its
regular files (:func:`.cache_files.read_regular_file`), each of which carries
the SHA-256 every cache file of fastbleu's has.  ``FASTBLEU_NO_AOT=1``
turns it off with the rest of the install-time build.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path

import numba
import numpy as np

from .cache_files import CacheFileError, read_regular_file, write_whole

#: The folder of the seed inside the installed package.
SEED_DIR = Path(__file__).resolve().parent.parent / "_native" / "kernel_cache"
#: Turns the seed off, as it turns off the ahead-of-time module (``fastbleu._native``).
DISABLE = "FASTBLEU_NO_AOT"


def disabled() -> bool:
    return os.environ.get(DISABLE, "") not in ("", "0")


def seed_name(digest: str) -> str:
    """``<digest>-<hash of the numba, numpy and Python versions>``: a seed for this source
    (``digest``: :func:`.cache.source_digest`) built by these versions."""
    versions = "\0".join((numba.__version__, np.__version__, sys.implementation.cache_tag,
                          sys.platform))
    return f"{digest}-{hashlib.sha1(versions.encode()).hexdigest()[:12]}"


def folder_key(source_dir: Path, package_dir: Path) -> str:
    """The seed's subfolder for the kernels of ``source_dir``: its path inside the package,
    ``_kernels/text`` -> ``_kernels.text``."""
    return ".".join(Path(source_dir).resolve().relative_to(package_dir).parts) or "fastbleu"


def seed_folder(source_dir: Path, package_dir: Path, digest: str,
                root: Path = SEED_DIR) -> Path:
    """Where the seed of ``source_dir``'s kernels is (or is put, under ``root``)."""
    return root / seed_name(digest) / folder_key(source_dir, package_dir)


def fill(folder: Path, seed: Path) -> int:
    """Copy into ``folder`` (a cache folder already chosen and checked) each regular seed
    file of ``seed`` (a seed folder the caller found trusted) that it lacks; the number
    copied.  A seed folder that is missing or unreadable copies nothing: the kernels are
    compiled instead, as without a seed.  Files the folder has are kept (they may hold
    more signatures)."""
    if disabled() or not seed.is_dir():
        return 0
    copied = 0
    try:
        entries = list(os.scandir(seed))
    except OSError:
        return 0
    # A kernel's data files (NAME.<n>.nbc) before its index (NAME.nbi), and the index only
    # once they are all there: an index copied without its data (a disk that fills up
    # half-way) would be a damaged entry, reported as such, instead of a kernel compiled.
    entries.sort(key=lambda entry: entry.name.endswith(".nbi"))
    incomplete = set()
    for entry in entries:
        name = entry.name
        if ".tmp." in name or os.path.lexists(folder / name):
            continue
        if name.endswith(".nbi") and name[:-len(".nbi")] in incomplete:
            continue
        try:
            data = read_regular_file(entry.path)
            if data is None:
                raise CacheFileError(name)
            write_whole(folder / name, data)
        except (OSError, CacheFileError):  # not a regular file of ours, or a full disk:
            if name.endswith(".nbc"):  # that kernel is compiled, as without a seed
                incomplete.add(name.rsplit(".", 2)[0])
            continue
        copied += 1
    return copied

