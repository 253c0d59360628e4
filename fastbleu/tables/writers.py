"""Writing outputs: one commit/discard protocol, for a file and for a directory of parts.

:class:`AtomicFile` (``--segments-out``) and :class:`AtomicDirectory` (a Dask
run's part files) write beside the target and swap in at :meth:`commit`, by
the rules of :mod:`fastbleu.tables.targets` (checked on creation and again at
commit); :class:`SegmentWriter` streams per-segment scores and statistics
into a Parquet file through either.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import stat
import tempfile

import numpy as np

from ..errors import InputError
from ..signals import check as check_signals
from ..signals import held, wrote
from .targets import (MARKER, _PART, Inputs, _check_file, _check_folder, _file_name,
                      _folder_name, _hidden, _umask)

logger = logging.getLogger("fastbleu")


class AtomicOutput:
    """The one commit/discard protocol of :class:`AtomicFile` and :class:`AtomicDirectory`.

    Write inside :meth:`writing`, then :meth:`commit` (swap in) or :meth:`discard`
    (remove, the old output untouched); as a context manager, an exception discards.
    """

    path: str
    existed: bool

    @contextlib.contextmanager
    def writing(self):
        """Turn an operating-system error while writing into a one-line :class:`InputError`.

        Use around every write to :attr:`temporary` (a full disk, a file size
        limit, a vanished directory); the old output is then still intact.
        """
        try:
            yield
        except InputError:
            raise
        except OSError as error:
            reason = error.strerror or str(error)
            if error.errno == errno.EFBIG:
                reason = "the file size limit is reached"
            elif error.errno in (errno.ENOSPC, errno.EDQUOT):
                reason = "no space left on the device"
            kept = "the old one is left as it was" if self.existed else "nothing was written"
            raise InputError(f"{self.path}: cannot be written ({reason}); {kept}") from None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, traceback) -> None:
        if kind is None:
            self.commit()
        else:
            self.discard()


class AtomicFile(AtomicOutput):
    """A hidden temporary file beside ``path``, renamed onto it by :meth:`commit`.

    Creating one checks ``path`` by the module's rules (and raises
    :class:`~fastbleu.files.InputError` with the reason), then creates the
    private temporary file in the directory of the file ``path`` names
    (through any symbolic link).  Use it as a context manager, or call
    :meth:`commit` or :meth:`discard`; write to :attr:`temporary` inside
    :meth:`writing`.

    Parameters
    ----------
    path : str or os.PathLike
        The output file.
    source : optional
        What the run reads, as in :func:`check_writable`.

    Attributes
    ----------
    path : str
        The output as given.
    target : str
        The real path of the file that will be replaced or created.
    temporary : str
        The file to write.
    """

    def __init__(self, path, source=None):
        self.path = _file_name(path)
        self._inputs = Inputs.of(source)
        self.target, info = _check_file(self.path, self._inputs)
        self.existed = info is not None
        try:
            with held():  # a signal cannot come between creating it and knowing its name
                handle, self.temporary = tempfile.mkstemp(**_hidden(self.target, ".tmp"))
                os.close(handle)
        except OSError as error:
            raise InputError(f"{self.path}: cannot write here ({error.strerror})") from None

    def commit(self) -> None:
        """Move the finished temporary file onto the target, with the target's permissions.

        The target is checked again first (it may have changed during the
        run); on any failure the temporary file is removed and the old
        output is left as it was.

        Raises
        ------
        fastbleu.files.InputError
            If the target may no longer be replaced, or the rename fails.
        """
        try:
            with held(), self.writing():
                check_signals()  # a signal whose exception was swallowed stops it here
                target, info = _check_file(self.path, self._inputs)
                if os.path.dirname(target) != os.path.dirname(self.target):
                    raise InputError(f"{self.path}: now names a file in another directory; "
                                     "not writing it")
                _settle(self.temporary, info, 0o666)
                os.replace(self.temporary, target)
        except BaseException:
            self.discard()
            raise
        wrote(self.path)

    def discard(self) -> None:
        """Remove the temporary file; the target is not touched."""
        with held(), contextlib.suppress(FileNotFoundError):
            os.unlink(self.temporary)


def _settle(path: str, info: os.stat_result | None, default: int) -> None:
    """Give ``path`` the mode (and owner) of the output it replaces, flushed to disk."""
    mode = stat.S_IMODE(info.st_mode) & 0o777 if info is not None else default & ~_umask()
    if info is not None:
        with contextlib.suppress(PermissionError):
            os.chown(path, info.st_uid, info.st_gid)
    os.chmod(path, mode)
    if not os.path.isdir(path):
        handle = os.open(path, os.O_RDONLY)
        try:
            os.fsync(handle)
        finally:
            os.close(handle)


class AtomicDirectory(AtomicOutput):
    """A hidden temporary directory beside ``path``, swapped in by :meth:`commit`.

    For outputs made of several files written by several processes (a Dask
    run's ``part.NNNNN.parquet`` files).  ``path`` is checked by the
    module's rules: it may be new, an empty directory, or a directory an
    earlier fastbleu run wrote (marked by :data:`MARKER`, holding nothing
    else).  At :meth:`commit` the marker is written, the old directory is
    moved aside, the new one renamed into place and only fastbleu's own files
    of the old one deleted.

    Parameters
    ----------
    path : str or os.PathLike
        The output directory (a trailing slash is allowed).
    source : optional
        What the run reads, as in :func:`check_writable`.

    Attributes
    ----------
    path : str
        The output as given (without trailing slashes).
    target : str
        The real path of the directory that will be replaced or created.
    temporary : str
        The directory to write the parts into (see :meth:`part`).
    """

    def __init__(self, path, source=None):
        self.path = _folder_name(path)
        self._inputs = Inputs.of(source)
        self.target, info = _check_folder(self.path, self._inputs)
        self.existed = info is not None
        try:
            with held():
                self.temporary = tempfile.mkdtemp(**_hidden(self.target, ".tmp"))
        except OSError as error:
            raise InputError(f"{self.path}: cannot write here ({error.strerror})") from None

    def part(self, name: str) -> str:
        """The path of file ``name`` in the temporary directory."""
        return os.path.join(self.temporary, name)

    def renamed(self, error: InputError) -> InputError:
        """``error`` (a worker's, about a part) as the user sees it: about :attr:`path`."""
        message = str(error)
        if self.temporary not in message:
            return error
        kept = f"{self.path} is left as it was" if self.existed else "nothing was written"
        return InputError(message.replace(self.temporary, self.path)
                          .replace("nothing was written", kept))

    def commit(self) -> None:
        """Mark the finished directory as fastbleu's and swap it in for the target.

        Raises
        ------
        fastbleu.files.InputError
            If the target may no longer be replaced, or a rename fails; the
            old directory is then left as it was.
        """
        aside = None
        with held():  # a signal waits: the old directory is never left aside
            try:
                check_signals()  # a signal whose exception was swallowed stops it here
                with self.writing():
                    with open(self.part(MARKER), "w", encoding="utf-8") as marker:
                        marker.write("Written by fastbleu (--segments-out on a cluster). A "
                                     "later run may replace this directory while it holds "
                                     "only its part.N.parquet files and this marker.\n")
                    _settle(self.part(MARKER), None, 0o666)
                    target, info = _check_folder(self.path, self._inputs)
                    if os.path.dirname(target) != os.path.dirname(self.target):
                        raise InputError(f"{self.path}: now names a directory elsewhere; not "
                                         "writing it")
                    _settle(self.temporary, info, 0o777)
                    if info is not None:
                        aside = tempfile.mkdtemp(**_hidden(target, ".old"))
                        try:
                            os.replace(target, aside)
                        except BaseException:
                            os.rmdir(aside)
                            aside = None
                            raise
                    try:
                        os.replace(self.temporary, target)
                    except BaseException:
                        if aside is not None:
                            os.replace(aside, target)
                            aside = None
                        raise
            except BaseException:
                self._discard()
                raise
            if aside is not None:
                _remove_ours(aside)
        wrote(self.path)

    def discard(self) -> None:
        """Remove the temporary directory and what was written in it; the target is not touched.

        The directory is first renamed, so that a worker still running cannot
        create a file in it after it was emptied.
        """
        with held():
            self._discard()

    def _discard(self) -> None:
        if not os.path.isdir(self.temporary):
            return
        doomed = self.temporary
        with contextlib.suppress(OSError):
            doomed = tempfile.mkdtemp(**_hidden(self.target, ".discarded"))
            os.replace(self.temporary, doomed)
        import shutil
        import time

        for attempt in range(5):
            shutil.rmtree(doomed, ignore_errors=True)
            if not os.path.lexists(doomed):
                return
            time.sleep(0.05 * (attempt + 1))
        logger.warning("could not remove the temporary directory %s", doomed)


def _remove_ours(folder: str) -> None:
    """Delete fastbleu's files in ``folder`` and the folder, and nothing else."""
    for entry in os.listdir(folder):
        if entry == MARKER or _PART.match(entry):
            with contextlib.suppress(OSError):
                if not os.path.isdir(os.path.join(folder, entry)) or \
                        os.path.islink(os.path.join(folder, entry)):
                    os.unlink(os.path.join(folder, entry))
    try:
        os.rmdir(folder)
    except OSError:
        logger.warning("the previous output was kept at %s: it holds files fastbleu did not "
                       "write", folder)


class SegmentWriter:
    """Per-segment results streamed to a Parquet file that appears only when complete.

    The columns are ``row``, the keys, the formula's sentence score
    (``formula.sentence_column``, scored by ``formula.sentence_formula()``)
    and the statistics (``formula.statistics_names``); for several metrics
    (a :class:`~fastbleu.tables.metric_set.MetricSet`), each metric's
    sentence score and statistics in turn, prefixed by its label.  Batches are encoded
    and written on a background thread (pyarrow does not hold the GIL there)
    while the next batch is scored; at most one write is pending, so memory
    stays bounded by the batch.

    Parameters
    ----------
    path : str or os.PathLike
        The output file (checked and written through an :class:`AtomicFile`).
    keys : list of str
        The group and document columns to copy.
    formula : fastbleu.metrics.Formula or MetricSet
        The metric's formula, or several metrics side by side.
    source : optional
        What the run reads (never written over).
    """

    def __init__(self, path, keys: list[str], formula, source=None):
        from concurrent.futures import ThreadPoolExecutor

        output = None
        try:
            # A signal waits until the writer owns its temporary file (and then the
            # temporary goes), so that no moment leaves a temporary nobody removes.
            with held():
                output = AtomicFile(path, source)  # checked: never an input, never a device
                self.output = output
                self.keys = keys
                # (prefix, formula, columns of the statistics row) of every metric
                self.parts = formula.segment_parts() if hasattr(formula, "segment_parts") \
                    else [("", formula, slice(0, formula.row_width))]
                self.writer = None
                self._thread = ThreadPoolExecutor(max_workers=1,
                                                  thread_name_prefix="fastbleu-write")
                self._pending = None
        except BaseException:
            if output is not None:
                output.discard()
            raise

    def _schema(self, batch=None):
        import pyarrow as pa

        fields = [pa.field("row", pa.int64())]
        fields += [batch.schema.field(k) if batch is not None else pa.field(k, pa.large_string())
                   for k in self.keys]
        for prefix, formula, _ in self.parts:
            fields.append(pa.field(prefix + formula.sentence_column, pa.float64()))
            fields += [pa.field(prefix + name, pa.int64()) for name in formula.statistics_names]
        return pa.schema(fields)

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            with self.output.writing():  # a full disk: one line, the old file intact
                pending.result()

    def write(self, batch, stats, first_row: int) -> None:
        """Queue one batch's rows: ``stats`` its statistics, ``first_row`` its first row."""
        import pyarrow as pa
        import pyarrow.parquet as pq

        arrays = [pa.array(np.arange(first_row, first_row + batch.num_rows, dtype=np.int64))]
        arrays += [batch.column(k) for k in self.keys]
        for _, formula, columns in self.parts:
            own = np.ascontiguousarray(stats[:, columns])
            arrays.append(pa.array(formula.sentence_formula().scores(own, check=False)))
            arrays += [pa.array(own[:, c]) for c in range(own.shape[1])]
        schema = self._schema(batch)
        record = pa.RecordBatch.from_arrays(arrays, schema=schema)
        self._wait()
        if self.writer is None:
            with self.output.writing():
                self.writer = pq.ParquetWriter(self.output.temporary, schema)
        self._pending = self._thread.submit(self.writer.write_batch, record)

    def commit(self) -> None:
        """Finish the file and swap it in."""
        import pyarrow.parquet as pq

        self._wait()
        self._thread.shutdown()
        with self.output.writing():
            if self.writer is None:  # no rows: still a valid, empty file
                self.writer = pq.ParquetWriter(self.output.temporary, self._schema())
            self.writer.close()
        self.output.commit()

    def discard(self) -> None:
        """Stop and remove the unfinished file; the old one stays as it was."""
        try:
            self._wait()
        except Exception:  # the run is failing already; the first error is the one to show
            pass
        self._thread.shutdown()
        try:
            if self.writer is not None:
                self.writer.close()
        except Exception:  # a full disk fails the close too; the temporary goes all the same
            pass
        finally:
            self.output.discard()
