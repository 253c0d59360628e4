"""Where the batch pipeline cuts an input: batches of about equal cost, not of equal counts.

Each batch of :meth:`fastbleu.metrics.base.Metric.statistics_batches` is one
job of one pool thread.  Cut by segment count, an input whose long segments
sit together (a test set sorted by length, zh-en beside en-de, a few huge
references) gives some threads most of the work while the others wait at
the end.  Here the cuts fall where the input's estimated cost crosses equal
shares, so that the same number of batches (:func:`even_bounds`) holds about
equal work.  The estimate only moves cuts: every segment is scored the same
whatever batch holds it, and the rows come back in input order, so every
number is the same to the last bit.

Two cost models, a metric's :attr:`~fastbleu.metrics.base.Metric.batch_cost`:

``LINEAR``
    Tokenizing and counting (BLEU, chrF): the bytes of the hypothesis and its
    references, plus a fixed cost a segment.  Found by bisection on the text
    columns' offsets (no pass over the segments); each batch keeps between half
    a batch and a batch of segments, as :func:`even_bounds` gives.  The last
    rounds of batches take smaller and smaller shares (:func:`_tapered_shares`),
    and the batches their floor of segments keeps well over a share (the long
    end of an input sorted by length) are started first (:func:`costliest`), so
    that the threads finish together: a replay of 16 threads
    (``benchmarks/bench_cuts.py``) went from 10.3-10.8 to 14.0-15.0 times one
    thread for 2M segments of BLEU, from 13.1-13.8 to 15.3-15.7 for 1M of chrF.
``ALIGNMENT``
    An edit distance with a shift search (TER, Snover et al., 2006): about
    ``(hyp bytes * ref bytes) ** 1.5`` for each reference.  On WMT22 zh-en
    and en-de sorted by length (7,824 segments in 12 batches, one thread),
    the slowest batch took 8.8 times the mean when cut by count, 2.5 times
    when cut by the plain product and 1.7 times with this power; what is left
    is the segments themselves (two of 100 words can differ 20-fold by their
    shifts).  A batch may hold a single segment.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..statistics.tokens import even_bounds

__all__ = ["LINEAR", "ALIGNMENT", "cost_bounds", "placed_bounds", "text_bounds",
           "text_plan", "costliest", "list_bounds"]

LINEAR = "linear"
ALIGNMENT = "alignment"
#: The fixed cost of a segment under ``LINEAR``, in bytes of text.
SEGMENT_BYTES = 32
#: Added to each length under ``ALIGNMENT``: an empty segment still costs something.
ALIGNMENT_BYTES = 16
#: Batches a thread under ``ALIGNMENT`` at least (more, smaller ones balanced no better
#: in ``benchmarks/bench_cuts.py``'s replay of 16 threads: a batch's cost is an estimate).
PER_THREAD = 4
#: Under ``LINEAR``: the last ``TAPER`` rounds of batches (``TAPER * threads`` shares of
#: equal cost) are cut smaller and smaller, each a ``1 / (TAPER * threads)`` of the work
#: left, but not under a ``1 / LEAST`` share (:func:`_tapered_shares`).
TAPER = 2
LEAST = 8
#: A batch estimated over this many shares is started before the others (:func:`costliest`).
EARLY = 1.25


def cost_bounds(cuts: np.ndarray, n: int, batch_size: int, floor: int = 1) -> list[int]:
    """Bounds ``[0, ..., n]`` near the wanted ``cuts`` (ascending), each batch from ``floor``
    to ``batch_size`` segments.

    A cut moves as little as the limits allow: at least ``floor`` after the one
    before, and early enough that every batch after it can still have ``floor``
    (so a costly end of the input is not left to one large last batch); a stretch
    longer than ``batch_size`` between two cuts is split evenly.  ``floor`` is at
    most ``batch_size // 2`` (or 1).
    """
    pieces = len(cuts) + 1
    bounds = [0]

    def reach(cut: int) -> None:
        last = bounds[-1]
        parts = -(-(cut - last) // batch_size)
        bounds.extend(last + (cut - last) * j // parts for j in range(1, parts + 1))

    for k, cut in enumerate(cuts, start=1):
        last = bounds[-1]
        cut = min(max(int(cut), last + floor), n - (pieces - k) * floor)
        if cut >= last + floor:
            reach(cut)
    reach(n)
    return bounds


def placed_bounds(cuts: np.ndarray, n: int, batch_size: int, floor: int) -> list[int]:
    """Bounds ``[0, ..., n]`` near the wanted ``cuts`` (ascending) that leave every batch
    from ``floor`` to ``batch_size`` segments: a cut closer than ``floor`` to the one
    before moves up to it (the wanted cuts it passes are dropped), one closer than
    ``floor`` to ``n`` down to ``n - floor``, and a stretch longer than ``batch_size``
    between two cuts is split evenly.  Batches of ``floor`` up to the end (the wanted
    cuts closer there) are made even, so that no larger one is left last.  ``floor`` is
    at most ``batch_size // 2`` (or 1).

    Unlike :func:`cost_bounds`, no cut is moved early to make room for the ones after
    it: a :func:`_tapered_shares` tail asks for more cuts than ``floor`` allows where
    the segments are long, and those are dropped, not the early ones pushed together.
    """
    bounds = [0]
    pinned = 0  # the last bounds moved up to their floor, in a row
    for cut in cuts.tolist():
        last = bounds[-1]
        if cut <= last:
            continue
        moved = cut < last + floor
        cut = min(max(cut, last + floor), n - floor)
        if cut < last + floor:
            continue
        parts = -(-(cut - last) // batch_size)
        bounds.extend(last + (cut - last) * j // parts for j in range(1, parts + 1))
        pinned = pinned + 1 if moved else 0
    if pinned:  # batches of the floor up to the end: as many, even, none left over
        del bounds[len(bounds) - pinned:]
    last = bounds[-1]
    parts = max(-(-(n - last) // batch_size), (n - last) // floor if pinned else 1)
    bounds.extend(last + (n - last) * j // parts for j in range(1, parts + 1))
    return bounds


def _shares(total: float, pieces: int) -> np.ndarray:
    return total * np.arange(1, pieces, dtype=np.float64) / pieces


def _tapered_shares(total: float, pieces: int, threads: int) -> np.ndarray:
    """Where ``pieces`` batches of equal cost would end, except for the last rounds: once
    ``TAPER * threads`` shares are left, each batch takes a ``1 / (TAPER * threads)`` of
    what is left, down to a ``1 / LEAST`` share.

    The pool hands the batches out in order, each to the first free thread, so the
    threads finish at most one batch apart: with batches that shrink towards the end,
    that last batch is small (guided self-scheduling, Polychronopoulos and Kuck, 1987).
    """
    share = total / pieces
    least = share / LEAST
    spread = TAPER * threads
    body = max(0, int((total - spread * share) // share))
    targets = list(share * np.arange(1, body + 1, dtype=np.float64))
    done = targets[-1] if targets else 0.0
    while True:
        step = min(share, max(least, (total - done) / spread))
        if total - done - step < least / 2:
            break
        done += step
        targets.append(done)
    return np.array(targets, dtype=np.float64)


def _linear_cuts(offsets: Sequence[np.ndarray], n: int, targets: np.ndarray) -> np.ndarray:
    """For each target, the first ``i`` whose bytes and fixed costs before it reach it:
    a bisection of all targets at once on the cumulative offsets (``log2(n)`` steps of
    a few small array operations, whatever ``n``)."""
    low = np.zeros(targets.size, dtype=np.int64)
    high = np.full(targets.size, n, dtype=np.int64)
    while (low < high).any():
        middle = (low + high) // 2
        cost = SEGMENT_BYTES * middle.astype(np.float64)
        for column in offsets:
            cost += column[middle] - column[0]
        short = cost < targets
        low = np.where(short, middle + 1, low)
        high = np.where(short, high, middle)
    return low


def _alignment_costs(hyp_lengths: np.ndarray, ref_lengths: Sequence[np.ndarray]) -> np.ndarray:
    """Cumulative ``ALIGNMENT`` costs, ``n + 1`` of them from 0 (float64: only cuts use them)."""
    h = hyp_lengths.astype(np.float64) + ALIGNMENT_BYTES
    total = np.zeros(h.size + 1, dtype=np.float64)
    if not ref_lengths:  # references held tokenized (a metric's cache): the hypothesis alone
        ref_lengths = [hyp_lengths]
    for lengths in ref_lengths:
        pair = h * (lengths.astype(np.float64) + ALIGNMENT_BYTES)
        total[1:] += pair * np.sqrt(pair)
    np.cumsum(total, out=total)
    return total


def _pieces(n: int, batch_size: int, threads: int, model: str | None = None) -> int:
    """Batches to cut: :func:`even_bounds`'s number, and for ``ALIGNMENT`` at least
    four a thread (its batches may be as small as one segment)."""
    pieces = len(even_bounds(n, batch_size, threads)) - 1
    if model == ALIGNMENT and pieces > 1:
        return max(pieces, min(n, PER_THREAD * threads))
    return pieces


def text_bounds(model: str | None, hyps, refs, batch_size: int, threads: int) -> list[int]:
    """Bounds of batches of about equal cost for converted text columns.

    ``hyps`` is a :class:`~fastbleu.inputs.text.TextColumn`; ``refs`` a list of them, or
    anything else (a metric's cached references: then the hypotheses alone are measured).
    ``model`` None, an input other than text, or one thread (which takes the batches in
    turn whatever their costs) gives :func:`even_bounds`.
    """
    return text_plan(model, hyps, refs, batch_size, threads)[0]


def text_plan(model: str | None, hyps, refs, batch_size: int,
              threads: int) -> tuple[list[int], list[int]]:
    """``(bounds, early)``: :func:`text_bounds`, and the batches to start before the
    others (:func:`fastbleu._kernels.threads.ordered_map`'s ``early``): those the cuts
    could not bring down to a share, the costliest first (:func:`costliest`)."""
    n = len(hyps)
    offsets = getattr(hyps, "offsets", None)
    pieces = _pieces(n, batch_size, threads, model)
    if model is None or offsets is None or pieces <= 1 or threads <= 1:
        return even_bounds(n, batch_size, threads), []  # (one thread takes them in turn)
    streams = [stream.offsets for stream in refs if getattr(stream, "offsets", None) is not None] \
        if isinstance(refs, list) else []
    if model == LINEAR:
        columns = [offsets, *streams]
        total = SEGMENT_BYTES * n + sum(float(c[n] - c[0]) for c in columns)
        cuts = _linear_cuts(columns, n, _tapered_shares(total, pieces, threads))
        bounds = placed_bounds(cuts, n, batch_size, max(1, batch_size // 2))
        at = np.asarray(bounds, dtype=np.int64)
        costs = SEGMENT_BYTES * at.astype(np.float64)
        for column in columns:
            costs += column[at] - column[0]
        return bounds, costliest(np.diff(costs), total / pieces, threads)
    if model == ALIGNMENT:
        costs = _alignment_costs(np.diff(offsets), [np.diff(s) for s in streams])
        cuts = np.searchsorted(costs, _shares(costs[-1], pieces))
        bounds = cost_bounds(cuts, n, batch_size)
        return bounds, costliest(np.diff(costs[bounds]), costs[-1] / pieces, threads)
    raise ValueError(f"unknown batch cost model {model!r}")


def costliest(costs: np.ndarray, share: float, threads: int) -> list[int]:
    """The batches whose estimated cost is over ``EARLY`` times a ``share``, at most
    ``threads`` of them, the costliest first (ties in input order).

    These are the batches the cuts could not make smaller (a batch keeps its floor of
    segments, or one segment: the long end of a test set sorted by length).  Started
    in their turn they would be the last to finish, long after the other threads; started
    first, the others fill the threads around them (longest processing time first,
    Graham, 1969).  Their results wait for their turn: at most ``threads`` more batches
    held at once.
    """
    over = np.flatnonzero(costs > EARLY * share)
    if over.size == 0:
        return []
    order = over[np.argsort(-costs[over], kind="stable")]
    return order[:threads].tolist()


def _lengths(stream, n: int) -> np.ndarray | None:
    """Characters of every segment of a Python list (missing ones 0), or None for an
    element that is neither text nor missing (its conversion then says what is wrong)."""
    try:
        return np.fromiter(map(len, stream), np.int64, n)  # twice as fast as with the test
    except TypeError:
        pass
    try:
        return np.fromiter((0 if s is None else len(s) for s in stream), np.int64, n)
    except TypeError:
        return None


def list_bounds(model: str | None, hypotheses: list, references, batch_size: int,
                threads: int) -> list[int] | None:
    """Bounds of batches of about equal cost for Python lists, or None: even counts (also
    for one thread, which takes the batches in turn whatever their costs).

    Only ``ALIGNMENT`` measures a list: its segments' lengths cost the calling
    thread a pass over the strings (some 20 ns a segment), nothing beside a shift
    search, but a share of BLEU's or chrF's own time, which for lists is spent
    mostly converting them on that thread.  Lengths are in characters (the
    bytes are not known before the conversion).
    """
    n = len(hypotheses)
    pieces = _pieces(n, batch_size, threads, model)
    if model != ALIGNMENT or pieces <= 1 or threads <= 1 \
            or not isinstance(references, (list, tuple)) \
            or not all(isinstance(s, (list, tuple)) and len(s) == n for s in references):
        return None
    hyp_lengths = _lengths(hypotheses, n)
    ref_lengths = [_lengths(stream, n) for stream in references]
    if hyp_lengths is None or any(lengths is None for lengths in ref_lengths):
        return None
    costs = _alignment_costs(hyp_lengths, ref_lengths)
    cuts = np.searchsorted(costs, _shares(costs[-1], pieces))
    return cost_bounds(cuts, n, batch_size)
