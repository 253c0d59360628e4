"""numba's cache files in fastbleu's folders: only regular files, whole, with a checksum.

numba creates one ``caching.IndexDataCacheFile`` per cached function, which
reads and writes its index (``.nbi``) and data (``.nbc``) files: pickles, which
numba loads.  :func:`fastbleu._kernels.cache.register` points that name at
:class:`GuardedCacheFiles`, which is numba's own class, unchanged, for any
folder fastbleu did not choose (:data:`guarded`), and for fastbleu's folders:

* reads only regular files of the user's (or root's) that group and others
  cannot write (:func:`read_regular_file`): never a FIFO, which would block the
  run for good, a device or a symbolic link;
* writes every file whole (a temporary file, mode 0600, renamed into place)
  with a SHA-256 of its content, and unpickles nothing whose checksum does not
  match: a damaged entry (garbage, empty, truncated) is a miss, compiled again
  and replaced;
* treats any failure to write (a full disk, a file-size limit) as a miss: the
  kernel stays compiled in memory.

Whatever goes wrong, the run goes on, with one warning line per process
(:func:`warn_once`).  For :data:`NO_CACHE` (no usable folder) nothing is read
or written.
"""

from __future__ import annotations

import hashlib
import io
import logging
import os
import pickle
import stat
import uuid
from pathlib import Path

from numba.core import caching

#: The cache path of a function compiled in memory only (no folder is usable).
NO_CACHE = "<fastbleu: compiled in memory, not cached>"

#: The largest cache file read (numba's are well under a megabyte; intl's table is 1.1 MB).
MAX_FILE_BYTES = 256 << 20

#: The real paths of the folders fastbleu chose: :class:`GuardedCacheFiles` handles them.
guarded: set[str] = set()

_LOG = logging.getLogger("fastbleu")
_warned: list[str] = []


def warn_once(message: str) -> None:
    """One warning line per process about the cache, however many things go wrong."""
    if not _warned:
        _warned.append(message)
        _LOG.warning(message)


def _owners() -> tuple[int, ...]:
    return (os.getuid(), 0)




class CacheFileError(OSError):
    """A cache file that is not to be used: not a regular file of ours, too large, damaged."""


_READ_FLAGS = (os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
               | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))


def read_regular_file(path: Path | str, limit: int = MAX_FILE_BYTES) -> bytes | None:
    """The bytes of ``path`` if it is a regular file of the user's (or root's) that group
    and others cannot write, at most ``limit`` bytes long; None if there is no such path.

    Anything else raises :class:`CacheFileError` without being read: a FIFO (which
    would block the run for good), a device, a symbolic link, a folder.  The file is
    opened without following links and without blocking, and judged again once open.
    """
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return None
    _check_regular(path, status, limit)
    handle = os.open(path, _READ_FLAGS)
    try:
        opened = os.fstat(handle)
        if (opened.st_dev, opened.st_ino) != (status.st_dev, status.st_ino):
            raise CacheFileError(f"{path} changed while it was opened")
        _check_regular(path, opened, limit)
        chunks = []
        size = 0
        while True:
            chunk = os.read(handle, 1 << 20)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise CacheFileError(f"{path} is larger than {limit} bytes")
            chunks.append(chunk)
    finally:
        os.close(handle)
    return b"".join(chunks)


def _check_regular(path, status: os.stat_result, limit: int) -> None:
    if not stat.S_ISREG(status.st_mode):
        raise CacheFileError(f"{path} is not a regular file")
    if hasattr(os, "getuid"):
        if status.st_uid not in _owners():
            raise CacheFileError(f"{path} belongs to uid {status.st_uid}")
        if status.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise CacheFileError(f"{path} is writable by group or others")
    if status.st_size > limit:
        raise CacheFileError(f"{path} is larger than {limit} bytes")


_MAGIC = b"fastbleu numba cache 1\n"


def _framed(payload: bytes) -> bytes:
    return _MAGIC + hashlib.sha256(payload).digest() + payload


def _unframed(path, data: bytes) -> bytes:
    start = len(_MAGIC) + 32
    if not data.startswith(_MAGIC) or len(data) < start:
        raise CacheFileError(f"{path} is not a fastbleu cache file (damaged or truncated)")
    payload = data[start:]
    if hashlib.sha256(payload).digest() != data[len(_MAGIC):start]:
        raise CacheFileError(f"{path} is damaged (its checksum does not match)")
    return payload


def _reason(error: BaseException) -> str:
    if isinstance(error, OSError) and error.strerror and not isinstance(error, CacheFileError):
        return error.strerror
    return str(error) or type(error).__name__


_NumbaFiles = getattr(caching, "_fastbleu_numba_files", caching.IndexDataCacheFile)
caching._fastbleu_numba_files = _NumbaFiles


class GuardedCacheFiles(_NumbaFiles):
    """numba's index and data files, for the folders :func:`cache_dir` chose.

    numba creates one of these per cached function (``caching.IndexDataCacheFile``,
    which :func:`register` points here); for a folder fastbleu did not choose it is
    numba's own class, unchanged.  For fastbleu's folders every file is written
    whole (a temporary file renamed into place, mode 0600) with a SHA-256 of its
    content, and read only through :func:`read_regular_file` and the checksum:
    anything else is a miss, compiled again and replaced.  Failures to write are
    one warning; for :data:`NO_CACHE` nothing is read or written.
    """

    #: The class of the folders fastbleu did not choose (numba's; numba-cuda's own copy
    #: of it in :func:`guarded_files_for`'s subclass).
    _other_folders = _NumbaFiles

    def __new__(cls, cache_path, filename_base, source_stamp):
        if cache_path != NO_CACHE and cache_path not in guarded:
            return cls._other_folders(cache_path, filename_base, source_stamp)
        return super().__new__(cls)

    @property
    def _in_memory(self) -> bool:
        return self._cache_path == NO_CACHE

    def load(self, key):
        if self._in_memory:
            return None
        name = self._load_index().get(key)
        if name is None:
            return None
        try:
            return self._load_data(name)
        except Exception as error:  # damaged: compiled again, and replaced when saved
            warn_once(f"a damaged kernel cache entry was compiled again and replaced "
                       f"({_reason(error)})")
            return None

    def save(self, key, data):
        if self._in_memory:
            return
        try:
            super().save(key, data)
        except Exception as error:
            warn_once(f"cannot write the kernel cache in {self._cache_path} "
                       f"({_reason(error)}); the kernels are compiled in memory instead")

    def flush(self):
        if not self._in_memory:
            self.save_index_safely({})

    def save_index_safely(self, overloads) -> None:
        try:
            self._save_index(overloads)
        except Exception as error:
            warn_once(f"cannot write the kernel cache in {self._cache_path} "
                       f"({_reason(error)}); the kernels are compiled in memory instead")

    def _load_index(self):
        if self._in_memory:
            return {}
        try:
            data = read_regular_file(self._index_path)
            if data is None:
                return {}
            stream = io.BytesIO(_unframed(self._index_path, data))
            if pickle.load(stream) != self._version:
                return {}
            stamp, overloads = pickle.loads(stream.read())
            if not isinstance(overloads, dict):
                raise CacheFileError(f"{self._index_path} does not hold an index")
        except Exception as error:  # damaged: an empty index, rewritten on the next save
            warn_once(f"a damaged kernel cache entry was compiled again and replaced "
                       f"({_reason(error)})")
            return {}
        return overloads if stamp == self._source_stamp else {}

    def _load_data(self, name):
        if not isinstance(name, str) or os.path.basename(name) != name:
            raise CacheFileError(f"{self._index_path} names a file outside its folder")
        path = self._data_path(name)
        data = read_regular_file(path)
        if data is None:
            raise CacheFileError(f"{path} is missing")
        return pickle.loads(_unframed(path, data))

    def _save_index(self, overloads):
        payload = (pickle.dumps(self._version, protocol=-1)
                   + self._dump((self._source_stamp, overloads)))
        self._write(self._index_path, payload)

    def _save_data(self, name, data):
        self._write(self._data_path(name), self._dump(data))

    def _write(self, path: str, payload: bytes) -> None:
        write_whole(path, _framed(payload))


def guarded_files_for(numba_files: type) -> type:
    """:class:`GuardedCacheFiles` for another copy of numba's ``IndexDataCacheFile``
    (numba-cuda's, which keeps numba's file format): fastbleu's folders get the guarded
    files, any other folder that copy's own class."""
    if numba_files is _NumbaFiles:
        return GuardedCacheFiles
    return type("GuardedCacheFiles", (GuardedCacheFiles,), {"_other_folders": numba_files,
                                                            "__module__": __name__})


def write_whole(path: Path | str, data: bytes, mode: int = 0o600) -> None:
    """Write ``data`` to ``path`` whole: a new temporary file of ``mode`` beside it (never
    following a link), renamed into place, so that a reader sees the old file or the new
    one, never a part."""
    temporary = f"{path}.tmp.{uuid.uuid4().hex[:16]}"
    flags = (os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
             | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_BINARY", 0))
    handle = os.open(temporary, flags, mode)
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(data)
        os.chmod(temporary, mode)  # whatever the umask took away
        os.replace(temporary, path)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise
