"""How much memory NIST's reference counts may take, and the error when they cannot fit.

NIST's information weights (Doddington, 2002) need the count of every
distinct reference n-gram of a corpus (a table's weight group) at once: 16
bytes an n-gram in a table at most 3/4 full
(:mod:`fastbleu._kernels.nist.counts`).  That memory grows with the
distinct n-grams, not with the rows, and a table grows by doubling, so
before each large allocation :func:`check_table` compares it with what the
process may still use: the machine's available memory, a cgroup's limit
(containers) and ``ulimit -v``/``-d``, whichever is smallest.  When it does
not fit, :class:`NISTMemoryError` says so in one line, with the options
that do help (a smaller batch does not: the counts are of the whole
corpus).
"""

from __future__ import annotations

import os

from ...errors import InputError

#: Allocations smaller than this are not checked one by one ...
_CHECK_ABOVE = 16 << 20
#: ... until they add up to this.
_CHECK_EVERY = 256 << 20
#: The share of the free memory the counts may take (the batches being read, tokenized and
#: scored need the rest).
_SHARE = 0.8


class NISTMemoryError(InputError, MemoryError):
    """NIST's reference n-gram counts do not fit in the memory this process may use.

    An :class:`~fastbleu.errors.InputError` (the command line prints its one
    line and exits with status 2) and a :class:`MemoryError`.  ``ngrams`` is
    the number of distinct n-grams counted when it was raised (0: not known).
    """

    ngrams = 0


def size_text(nbytes: float) -> str:
    """``nbytes`` in GiB (from 1 GiB) or MiB, one decimal."""
    if nbytes >= 1 << 30:
        return f"{nbytes / 2**30:.1f} GiB"
    return f"{nbytes / 2**20:.1f} MiB"


def _read_int(path: str) -> int | None:
    try:
        with open(path, "rb") as handle:
            text = handle.read(64).strip()
        return int(text) if text.isdigit() else None
    except (OSError, ValueError):
        return None


def _cgroup_free() -> int | None:
    """The room left under this process's cgroup memory limit (v2 or v1), if it has one."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8", errors="replace") as handle:
            lines = handle.read(1 << 16).splitlines()
    except OSError:
        return None
    for line in lines:
        parts = line.split(":", 2)
        if len(parts) != 3:
            continue
        path = parts[2].lstrip("/")
        if parts[0] == "0" and not parts[1]:
            limit = _read_int(os.path.join("/sys/fs/cgroup", path, "memory.max"))
            used = _read_int(os.path.join("/sys/fs/cgroup", path, "memory.current"))
        elif "memory" in parts[1].split(","):
            base = os.path.join("/sys/fs/cgroup/memory", path)
            limit = _read_int(os.path.join(base, "memory.limit_in_bytes"))
            used = _read_int(os.path.join(base, "memory.usage_in_bytes"))
        else:
            continue
        if limit is not None and used is not None and limit < 1 << 60:
            return max(limit - used, 0)
    return None


def _machine_free() -> int | None:
    """The machine's available memory (Linux's MemAvailable, else free pages)."""
    try:
        with open("/proc/meminfo", encoding="ascii", errors="replace") as handle:
            for line in handle:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None


def _rlimit_free() -> int | None:
    """The room left under ``ulimit -v`` (address space) and ``ulimit -d`` (data)."""
    try:
        import resource  # not on Windows
    except ImportError:
        return None
    room = []
    page = resource.getpagesize()
    status = {}
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            for line in handle:
                name, _, value = line.partition(":")
                if name in ("VmSize", "VmData"):
                    status[name] = int(value.split()[0]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    for limit_name, used_name in (("RLIMIT_AS", "VmSize"), ("RLIMIT_DATA", "VmData")):
        kind = getattr(resource, limit_name, None)
        if kind is None:
            continue
        soft = resource.getrlimit(kind)[0]
        if soft == resource.RLIM_INFINITY or soft < 0:
            continue
        used = status.get(used_name)
        if used is None and used_name == "VmSize":
            try:
                with open("/proc/self/statm", encoding="ascii") as handle:
                    used = int(handle.read().split()[0]) * page
            except (OSError, ValueError, IndexError):
                used = None
        room.append(max(soft - (used or 0), 0))
    return min(room) if room else None


def available() -> tuple[int, str] | None:
    """``(bytes, what limits them)``: the memory this process may still allocate, or None
    where nothing says (then nothing is refused before the allocation itself fails)."""
    found = [(free, what) for free, what in ((_machine_free(), "available on this machine"),
                                              (_cgroup_free(), "left under the cgroup limit"),
                                              (_rlimit_free(), "left under ulimit -v/-d"))
             if free is not None]
    return min(found) if found else None


_unchecked = 0  # bytes of tables allocated since the last look at the free memory


def check_table(nbytes: int, held: int = 0, ngrams: int = 0) -> None:
    """Refuse a new count table of ``nbytes`` that does not fit.

    A large table (or small ones adding up, over every counting in the
    process) is compared with :func:`available`; ``held`` (the bytes of the
    table it replaces) and ``ngrams`` (its distinct n-grams) are for the
    message.

    Raises
    ------
    NISTMemoryError
        When ``nbytes`` is more than the share of the free memory the counts
        may take.
    """
    global _unchecked
    _unchecked += nbytes
    if nbytes < _CHECK_ABOVE and _unchecked < _CHECK_EVERY:
        return
    _unchecked = 0
    free = available()
    if free is not None and nbytes > _SHARE * free[0]:
        error = NISTMemoryError(message(nbytes, held, ngrams, free))
        error.ngrams = ngrams
        raise error


def table_bytes(ngrams: int) -> int:
    """The bytes of a count table for ``ngrams`` distinct n-grams (a power of two of 16-byte
    rows, at most 3/4 full)."""
    from ..._kernels.nist.counts import rows_for

    return 16 << rows_for(ngrams)


def message(nbytes: int, held: int, ngrams: int, free: tuple[int, str]) -> str:
    """The one line of :class:`NISTMemoryError`."""
    now = f"{ngrams:,} distinct reference n-grams take {size_text(held)} and " if ngrams else ""
    return (f"NIST's information weights need the count of every distinct reference n-gram of "
            f"a corpus (a table's weight group) in memory at once: {now}the next step needs "
            f"{size_text(nbytes)}, but only {size_text(free[0])} is {free[1]}; use a lower NIST "
            f"order (--nist-order, or NIST(max_ngram_order=...)), score fewer rows per run "
            f"(each run then weighs its own references), or give it more memory (a smaller "
            f"batch does not help); BLEU, chrF and TER need no such pass")
