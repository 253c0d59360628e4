"""Outputs are the user's data: checked before any work, written beside, swapped in at the end.

Every file fastbleu writes (``--segments-out``, and the directory of part
files of a Dask run) is checked here and written by :mod:`fastbleu.tables.writers`,
under these rules:

- **Never over an input.**  The output may not be an input file, whatever
  it is called (the same path, a symbolic or a hard link: files are compared
  by device and inode), may not lie inside an input directory or match an
  input glob, and a directory output may not hold an input.  It may not be
  this process's standard output or error either.
- **Only regular files are replaced.**  A device (``/dev/null``,
  ``/dev/full``), a FIFO, a socket or a directory given as a file output is
  refused, and so is ``/dev/stdout``, which names one of those (or the file
  the score is being printed to).  A symbolic link is followed as the shell's
  ``>`` follows it: the file it points to is replaced and the link stays a
  link; a dangling link gets its target created, as ``>`` would create it.
- **Permissions are kept.**  A replaced file keeps its permission bits (and
  its owner and group where the process may set them); a new file gets
  ``0666`` less the umask, a new directory ``0777`` less the umask.  A file
  without its owner's write bit, or a directory without it, is refused even
  to root, whom the kernel would let through.
- **Written beside, swapped in at the end.**  The new content goes to a hidden
  temporary file (``.NAME.XXXXXXXX.tmp``) or directory in the target's own
  directory, and is renamed onto the target by :meth:`AtomicFile.commit`
  only when complete; :meth:`AtomicFile.discard` removes it.  An error, an
  interrupt (the command line turns SIGTERM and SIGHUP into one, see
  :mod:`fastbleu.signals`) or a full disk leaves the old output as it was.
- **Directories are reused only when they are fastbleu's.**  A directory
  output may be created, or replace a directory that is empty or that holds
  only what an earlier fastbleu run wrote there: its ``part.N.parquet`` files
  and the marker file :data:`MARKER`.  Anything else there makes it refused;
  nothing but fastbleu's own files is ever deleted.
"""

from __future__ import annotations

import errno
import fnmatch
import glob
import os
import re
import stat
import tempfile
from dataclasses import dataclass

from ..errors import InputError
from ..signals import held

#: The file that marks a directory as written by fastbleu (ignored by Parquet readers,
#: which skip names starting with a dot).
MARKER = ".fastbleu-segments"
_PART = re.compile(r"part\.\d+\.parquet\Z")
_KINDS = [(stat.S_ISDIR, "a directory"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISFIFO, "a FIFO (named pipe)"),
          (stat.S_ISSOCK, "a socket")]


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` would, for every thread)."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o22)
    os.umask(mask)
    return mask


def _inside(path: str, folder: str) -> bool:
    """Whether real path ``path`` is ``folder`` or lies under it."""
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


@dataclass(frozen=True)
class Inputs:
    """What a run reads, as the output checks need it.

    Attributes
    ----------
    files : tuple of (str, int, int)
        Every input file: its real path, device and inode.
    directories : tuple of str
        Real paths of input directories (a Parquet dataset).
    patterns : tuple of str
        Absolute input globs; an output they match would be read next time.
    """

    files: tuple = ()
    directories: tuple = ()
    patterns: tuple = ()

    @classmethod
    def of(cls, source) -> Inputs:
        """The inputs of ``source`` as :func:`fastbleu.score_table` takes it.

        A table in memory (or a Dask DataFrame, whose files are not known
        here) reads no file.  A path that does not resolve to any file is
        left for the reader to report.
        """
        if not isinstance(source, (str, os.PathLike)):
            return cls()
        name = os.fspath(source)
        if not isinstance(name, str) or not name:
            return cls()
        from .readers import expand_paths

        try:
            paths = expand_paths(name)
        except InputError:
            paths = [name] if os.path.exists(name) else []
        files = []
        for path in paths:
            try:
                info = os.stat(path)
            except OSError:
                continue
            files.append((os.path.realpath(path), info.st_dev, info.st_ino))
        directories = (os.path.realpath(name),) if os.path.isdir(name) else ()
        patterns = (os.path.abspath(name),) if glob.has_magic(name) \
            and not os.path.exists(name) else ()
        return cls(tuple(files), directories, patterns)

    def check(self, name: str, real: str, info: os.stat_result | None,
              directory: bool = False) -> None:
        """Refuse an output ``name`` (real path ``real``, stat ``info``) that touches an input."""
        for path, device, inode in self.files:
            if info is not None and (info.st_dev, info.st_ino) == (device, inode):
                shown = "the input" if os.path.abspath(name) == path else \
                    f"the input {path}" if path == real else f"a hard link to the input {path}"
                raise InputError(f"{name}: is {shown}; not writing over it, choose another "
                                 "output path")
            if directory and _inside(path, real):
                raise InputError(f"{name}: holds the input {path}; not replacing it")
        for folder in self.directories:
            if real == folder:
                raise InputError(f"{name}: is the input directory; not writing over it, choose "
                                 "another output path")
            if _inside(real, folder):
                raise InputError(f"{name}: is inside the input directory {folder}, where the "
                                 "next run would read it; choose a path outside")
            if directory and _inside(folder, real):
                raise InputError(f"{name}: holds the input directory {folder}; not replacing it")
        for pattern in self.patterns:
            if fnmatch.fnmatchcase(real, pattern) or \
                    fnmatch.fnmatchcase(os.path.abspath(name), pattern):
                raise InputError(f"{name}: matches the input pattern {pattern}, which would "
                                 "read it next time; choose a path it does not match")


def _kind(info: os.stat_result) -> str | None:
    """What a non-regular file is (``"a FIFO (named pipe)"`` ...), or None for a regular file."""
    if stat.S_ISREG(info.st_mode):
        return None
    return next((name for test, name in _KINDS if test(info.st_mode)), "not a regular file")


def _owner_may_write(info: os.stat_result, path: str) -> bool:
    """Whether ``path`` is writable by its permission bits, not by root's privilege."""
    if os.geteuid() in (0, info.st_uid):
        return bool(info.st_mode & stat.S_IWUSR)
    return os.access(path, os.W_OK)


def _resolve(name: str) -> tuple[str, os.stat_result | None]:
    """Where the shell's ``>`` would write ``name``: its real path and stat (None: new).

    Symbolic links are followed, a dangling one to the file it names.
    """
    if not name:
        raise InputError("the output path is empty")
    try:
        info = os.stat(name)
    except FileNotFoundError:
        info = None
    except NotADirectoryError:
        raise InputError(f"{name}: a part of this path is not a directory") from None
    except OSError as error:
        raise InputError(f"{name}: cannot be written ({error.strerror})") from None
    real = os.path.realpath(name)
    if info is not None and _kind(info) is None:
        try:
            same = os.stat(real)
        except OSError:
            same = None
        if same is None or (same.st_dev, same.st_ino) != (info.st_dev, info.st_ino):
            raise InputError(f"{name}: cannot tell which file this names; give its path")
    return real, info


def _check_directory_writable(name: str, folder: str) -> None:
    if not os.path.isdir(folder):
        raise InputError(f"{name}: cannot write here, the directory {folder} does not exist")
    info = os.stat(folder)
    if not _owner_may_write(info, folder) or not os.access(folder, os.W_OK | os.X_OK):
        raise InputError(f"{name}: cannot write here, the directory {folder} is read-only")


def _check_standard_streams(name: str, info: os.stat_result) -> None:
    for fd, stream in ((1, "output"), (2, "error")):
        try:
            other = os.fstat(fd)
        except OSError:
            continue
        if (other.st_dev, other.st_ino) == (info.st_dev, info.st_ino):
            raise InputError(f"{name}: is this run's standard {stream}; give a file path")


def _check_file(name: str, inputs: Inputs) -> tuple[str, os.stat_result | None]:
    """The real path of file output ``name`` and its stat (None: new), or InputError."""
    real, info = _resolve(name)
    inputs.check(name, real, info)
    if name.endswith(os.sep):
        raise InputError(f"{name}: names a directory (it ends with {os.sep}); give a file path")
    if info is not None:
        kind = _kind(info)
        if kind is not None:
            raise InputError(f"{name}: is {kind}, not a regular file; fastbleu replaces only "
                             "regular files")
        _check_standard_streams(name, info)
        if not _owner_may_write(info, real):
            raise InputError(f"{name}: is read-only (mode {stat.S_IMODE(info.st_mode):04o}); "
                             "not replacing it")
    _check_directory_writable(name, os.path.dirname(real))
    return real, info


def _ours(folder: str, entries: list[str]) -> str | None:
    """The first entry of ``folder`` that fastbleu did not write, or None."""
    for entry in entries:
        if entry == MARKER:
            continue
        try:
            regular = stat.S_ISREG(os.lstat(os.path.join(folder, entry)).st_mode)
        except OSError:
            continue  # gone meanwhile
        if not _PART.match(entry) or not regular:
            return entry
    return None


def _check_folder(name: str, inputs: Inputs) -> tuple[str, os.stat_result | None]:
    """The real path of directory output ``name`` and its stat (None: new), or InputError."""
    real, info = _resolve(name)
    inputs.check(name, real, info, directory=True)
    if info is not None:
        if not stat.S_ISDIR(info.st_mode):
            raise InputError(f"{name}: exists and is {_kind(info) or 'a file'}, not a "
                             "directory; not replacing it (a cluster run writes a directory)")
        try:
            entries = os.listdir(real)
        except OSError as error:
            raise InputError(f"{name}: cannot be read ({error.strerror})") from None
        if entries and MARKER not in entries:
            raise InputError(f"{name}: is a directory that is not empty and was not written by "
                             f"fastbleu (it has no {MARKER} file); not replacing it")
        if entries:
            foreign = _ours(real, entries)
            if foreign is not None:
                raise InputError(f"{name}: holds {foreign!r}, which fastbleu did not write; "
                                 "not replacing it")
        if not _owner_may_write(info, real):
            raise InputError(f"{name}: is read-only (mode {stat.S_IMODE(info.st_mode):04o}); "
                             "not replacing it")
    _check_directory_writable(name, os.path.dirname(real))
    return real, info


def _hidden(target: str, suffix: str) -> dict:
    """``mkstemp``/``mkdtemp`` arguments for a hidden name beside ``target``."""
    base = os.path.basename(target)[:100]  # the random part and suffix must still fit NAME_MAX
    return {"prefix": f".{base}.", "suffix": suffix, "dir": os.path.dirname(target)}


def _file_name(path) -> str:
    name = os.fspath(path)
    if not isinstance(name, str):
        raise TypeError(f"the output path must be a str or os.PathLike, got "
                        f"{type(path).__name__}")
    return name


def _folder_name(path) -> str:
    name = _file_name(path)
    return name.rstrip(os.sep) or name  # "segs/" is "segs"; "/" stays "/"


def _probe(name: str, folder: str) -> None:
    """Create a file in ``folder`` to prove it can be done (a read-only mount, an ACL ...)."""
    try:
        try:  # a file without a name: nothing to clean up, whenever a signal comes
            handle = os.open(folder, os.O_TMPFILE | os.O_WRONLY, 0o600)
        except (AttributeError, OSError) as error:
            if isinstance(error, OSError) and error.errno not in (
                    errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL):
                raise
            with held():
                handle, probe = tempfile.mkstemp(prefix=".fastbleu-", dir=folder)
                os.unlink(probe)
    except OSError as error:
        raise InputError(f"{name}: cannot write here ({error.strerror})") from None
    os.close(handle)


def check_writable(path, source=None) -> None:
    """Fail now, before any work, if the file output ``path`` may not be written.

    Parameters
    ----------
    path : str or os.PathLike
        The output file (``segments_out``).
    source : optional
        What the run reads (a path, directory or glob; anything else reads no
        file): the output may not be, hold or lie among its files.

    Raises
    ------
    fastbleu.files.InputError
        With the path and the reason: an input, not a regular file, read-only,
        a missing or read-only directory (see the module's rules).
    TypeError
        For a path that is not a str or os.PathLike.
    """
    name = _file_name(path)
    real, _ = _check_file(name, Inputs.of(source))
    _probe(name, os.path.dirname(real))


def check_directory(path, source=None) -> None:
    """Fail now, before any work, if the directory output ``path`` may not be written.

    Parameters
    ----------
    path : str or os.PathLike
        The output directory (a Dask run's ``segments_out``).
    source : optional
        As in :func:`check_writable`.

    Raises
    ------
    fastbleu.files.InputError
        With the path and the reason: it holds an input or other files than
        an earlier run's, it is not a directory, or it cannot be created.
    TypeError
        For a path that is not a str or os.PathLike.
    """
    name = _folder_name(path)
    real, _ = _check_folder(name, Inputs.of(source))
    _probe(name, os.path.dirname(real))
