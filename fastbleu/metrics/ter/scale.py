"""The scale of TER's mean reference lengths: chosen from the reference counts present.

sacrebleu's TER statistics of a segment are ``[edits, mean reference
length]``, the mean a float (the sum of the reference lengths over the
number of references).  fastbleu keeps it exactly, as the integer
``sum * (scale // references)``, so that rows stay summable int64 like
every metric's; ``scale`` must then be a multiple of every segment's number
of references.

The scale is :data:`AVERAGE_SCALE` (720720, the least common multiple of 1
to 16) whenever every count of references present divides it (always for
at most 16 references, and also for 18, 20, 21, 22, 24, ... references);
otherwise the least common multiple of the counts present (17 for segments
that all have 17 references).  A scale beyond :data:`MAX_SCALE` (segments
with many different large counts of references) is refused: the sums of
its rows could leave int64.

Rows of two scales add exactly after :func:`rescaled` brings both to the
least common multiple of the two (accumulators of two inputs, table
groups).  This module imports nothing but the standard library and numpy.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

import numpy as np

from ..._native.codes import AVERAGE_SCALE

__all__ = ["AVERAGE_SCALE", "MAX_SCALE", "added", "check_scale", "common_scale", "counts_present",
           "rescaled", "scale_fits", "scale_for_counts"]

#: The largest scale: the column sums of its rows stay within int64 up to 2**31 (about
#: 2.1 billion) words of mean reference length, far beyond a corpus TER can score
#: in a day.
MAX_SCALE = 1 << 32

_INT64_MAX = (1 << 63) - 1


def _counts_text(counts: list[int]) -> str:
    shown = ", ".join(str(c) for c in counts[:8])
    return shown + (f" and {len(counts) - 8} more" if len(counts) > 8 else "")


def scale_for_counts(counts: Iterable[int]) -> int:
    """The scale of segments with these numbers of references.

    Parameters
    ----------
    counts : iterable of int
        The numbers of references of the segments (each at least 1; zeros
        are ignored).

    Returns
    -------
    int
        ``AVERAGE_SCALE`` (720720) if every count divides it, else the least
        common multiple of the counts.

    Raises
    ------
    ValueError
        If that least common multiple is beyond :data:`MAX_SCALE`; the
        message names the counts.
    """
    found = sorted({int(c) for c in counts if int(c) > 0})
    if not found:
        return AVERAGE_SCALE
    lcm = 1
    for count in found:
        lcm = math.lcm(lcm, count)
        if lcm > MAX_SCALE:
            break
    if AVERAGE_SCALE % lcm == 0:
        return AVERAGE_SCALE
    if lcm > MAX_SCALE:
        odd = [c for c in found if AVERAGE_SCALE % c]
        raise ValueError(
            f"TER keeps the mean reference length exactly, as an integer times a multiple of "
            f"every segment's number of references; segments with {_counts_text(odd)} "
            f"references{' (among others)' if len(odd) < len(found) else ''} need one beyond "
            f"{MAX_SCALE:,} (2**32), whose sums could leave int64: give the segments the "
            "same number of references (fewer missing ones), or score the groups of "
            "segments with the same number separately")
    return lcm


def check_scale(scale, name: str = "reference_scale") -> int:
    """A scale given by a caller: an int from 1 to :data:`MAX_SCALE` (TypeError/ValueError)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(scale).__name__}")
    if not 1 <= int(scale) <= MAX_SCALE:
        raise ValueError(f"{name} must be from 1 to {MAX_SCALE:,} (2**32), got {int(scale)}")
    return int(scale)


def counts_present(present: np.ndarray) -> list[int]:
    """The distinct numbers of references of the segments of a presence array
    (``bool``, streams x segments), zeros left out."""
    per_segment = np.asarray(present).sum(axis=0)
    return [int(c) for c in np.unique(per_segment) if c > 0]


def scale_fits(scale: int, per_segment: np.ndarray) -> np.ndarray:
    """Where ``per_segment`` (references of each segment) does not divide ``scale``:
    the indices of the segments rows at ``scale`` cannot hold."""
    counts = np.asarray(per_segment, dtype=np.int64)
    return np.flatnonzero((counts > 0) & (scale % np.maximum(counts, 1) != 0))


def common_scale(a: int, b: int) -> int:
    """The scale rows of scales ``a`` and ``b`` are added at: their least common multiple.

    Raises
    ------
    ValueError
        Beyond :data:`MAX_SCALE`.
    """
    lcm = math.lcm(int(a), int(b))
    if lcm > MAX_SCALE:
        raise ValueError(f"cannot add TER statistics whose mean reference lengths are scaled "
                         f"by {a:,} and by {b:,}: their common scale {lcm:,} is beyond "
                         f"{MAX_SCALE:,} (2**32), whose sums could leave int64; score inputs "
                         "with the same numbers of references together")
    return lcm


def rescaled(row, scale: int, to: int) -> list[int]:
    """One (summed) TER row ``[edits, ref_length_scaled]`` at scale ``to`` (a multiple of
    ``scale``), as Python ints, exactly.

    Raises
    ------
    ValueError
        If the scaled length leaves int64.
    """
    edits, scaled = int(row[0]), int(row[1])
    if to % scale:
        raise ValueError(f"{to} is not a multiple of {scale}")  # pragma: no cover - callers
    scaled *= to // scale
    if scaled > _INT64_MAX:
        raise ValueError(f"the summed TER statistics no longer fit in int64 at scale {to:,} "
                         "(a mean reference length of more than "
                         f"{_INT64_MAX // to:,} words)")
    return [edits, scaled]


def added(a, b) -> list[int]:
    """Two TER rows of one scale added, as Python ints (ValueError beyond int64)."""
    total = [int(x) + int(y) for x, y in zip(a, b)]
    if max(total) > _INT64_MAX:
        raise ValueError("the summed TER statistics no longer fit in int64")
    return total
