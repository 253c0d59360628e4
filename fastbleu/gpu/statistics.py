"""Token ids on the GPU -> BLEU statistics rows on the GPU: the kernel's orchestration.

One call is one launch of :func:`~fastbleu._kernels.cuda.counting.bleu_rows`
(plus one per device stream copied because its dtype or layout differs from
the others': a kernel's tuple of arrays has one type), with
everything it needs decided on the host from shapes alone: how many
segments a block takes, and whether (and how much) global memory the
tables of long segments may need.  Nothing is read back unless the input
is checked (see :func:`bleu_statistics`), so a call does not wait on the
device.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import Context, blocks, on_device, threads
from .inputs import DeviceIds

#: The reference-length rules and their kernel codes (as ``BLEU(ref_length=...)`` names them).
REF_LENGTHS = {"closest": 0, "shortest": 1, "average": 2}
#: lcm(1..16): ``ref_length="average"`` rows carry the mean length times this.
AVERAGE_SCALE = 720720
MAX_AVERAGED_REFERENCES = 16


@dataclass(frozen=True)
class KernelLimits:
    """How the kernel counts a segment, and its block sizes.

    Parameters
    ----------
    short_tokens : int
        Segments whose hypothesis and references have at most this many
        tokens together are counted by their group of threads with direct
        comparisons (at most 256).
    shared_slots : int
        Segments whose references have at most ``shared_slots / 2`` tokens
        are counted by a block with a table in shared memory; longer ones with
        a table in global memory.  A power of two from 64 to 2048, or 0 (every
        segment that is not short uses global memory).
    group : int
        Threads per segment when a block takes several (32: a warp).
    block : int
        Threads of a block that takes one segment at a time.
    collide : bool
        Start every n-gram's probe at the same table slot (a test of the
        tables' worst case; slow).
    grid : int
        The most blocks of a launch (the kernel loops over what is left).
    groups : int, optional
        Segments a block takes at once (1 to 4): by default 4 (``group``
        threads each) when the streams hold at most ``short_tokens``
        positions per segment on average, else 1 (``block`` threads).
    """

    short_tokens: int = 128
    shared_slots: int = 2048
    group: int = 32
    block: int = 256
    collide: bool = False
    grid: int = 1 << 16
    groups: int | None = None

    def __post_init__(self):
        if not 0 <= self.short_tokens <= 256:
            raise ValueError(f"short_tokens must be 0..256, got {self.short_tokens}")
        slots = self.shared_slots
        if slots != 0 and (slots < 64 or slots > 2048 or slots & (slots - 1)):
            raise ValueError(f"shared_slots must be 0 or a power of two from 64 to 2048, got "
                             f"{slots}")
        if not 1 <= self.group <= 64 or not 1 <= self.block <= 1024 or self.grid < 1:
            raise ValueError("group must be 1..64 and block 1..1024 threads, grid at least 1")
        if self.groups is not None and not 1 <= self.groups <= 4:
            raise ValueError(f"groups must be 1..4 or None, got {self.groups}")

    @classmethod
    def default(cls) -> KernelLimits:
        """The defaults, with small blocks on the simulator (a Python thread per thread)."""
        from .._kernels.cuda.loader import simulated

        return cls(group=4, block=8, grid=4) if simulated() else cls()


def id_streams(hypotheses, references, pad_id, eos_id) -> list[DeviceIds]:
    hyps = DeviceIds(hypotheses).with_defaults(pad_id, eos_id)
    if hyps.valid is not None:
        raise ValueError("hypotheses may not be missing (valid=...); only references may")
    if not isinstance(references, (list, tuple)):
        references = [references]  # one reference stream
    if len(references) == 0:
        raise ValueError("references is empty: give at least one reference stream")
    streams = [hyps]
    for r, stream in enumerate(references):
        try:
            stream = DeviceIds(stream).with_defaults(pad_id, eos_id)
        except (TypeError, ValueError) as error:
            raise type(error)(f"references[{r}]: {error}") from None
        if len(stream) != len(hyps):
            raise ValueError(f"references[{r}] has {len(stream)} segments but the hypotheses "
                             f"have {len(hyps)}")
        streams.append(stream)
    return streams


def _template(streams):
    for stream in streams:
        for value in (stream.values, stream.offsets, stream.valid):
            if value is not None and on_device(value):
                return value
    return None


def _view(context, value, name):
    if isinstance(value, (list, tuple)):
        value = np.asarray(value)
    return context.view(value, name)


class PendingNumRefs:
    """sacrebleu's ``num_refs`` of references whose masks are on the device, read when used.

    The kernel writes the references present in each segment to a device
    array (``n`` int64); they are copied back (one copy, one wait) only when
    the value is first used: compared, formatted or made an int, as a
    signature does.  Until then nothing waits on the device.  It stands for
    that int: ``==``, ``hash``, ``int()``, ``str``, ``format`` and pickling
    (as the int) give the int's.
    """

    __slots__ = ("_present", "_stream", "_value")

    def __init__(self, present, stream):
        self._present = present  # (numba view, owner): the owner keeps the memory alive
        self._stream = stream
        self._value: int | None = None

    @property
    def value(self) -> int:
        """The references per segment, ``-1`` where it varies (read back on first use)."""
        if self._value is None:
            counts = self._present[0].copy_to_host(stream=self._stream)
            self._stream.synchronize()
            low, high = int(counts.min()), int(counts.max())
            self._value = low if low == high else -1
            self._present = self._stream = None
        return self._value

    def __int__(self) -> int:
        return self.value

    __index__ = __int__

    def __eq__(self, other) -> bool:
        return self.value == (other.value if isinstance(other, PendingNumRefs) else other)

    def __hash__(self) -> int:
        return hash(self.value)

    def __str__(self) -> str:
        return str(self.value)

    __repr__ = __str__

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    def __reduce__(self):
        return int, (self.value,)


def _on_device_mask(mask) -> bool:
    return mask is not None and not _on_host(mask)


def num_refs(streams) -> int | None:
    """sacrebleu's ``num_refs`` of the reference streams: references per segment, -1 if it
    varies; None where a mask is on the device (the kernel counts them then, see
    :class:`PendingNumRefs`)."""
    masks = [s.valid for s in streams[1:] if s.valid is not None]
    if not masks or len(streams[0]) == 0:
        return len(streams) - 1
    if any(_on_device_mask(mask) for mask in masks):
        return None
    present = np.zeros(len(streams[0]), dtype=np.int64) + (len(streams) - 1 - len(masks))
    for mask in masks:
        present += np.asarray(mask).astype(bool)
    low, high = int(present.min()), int(present.max())
    return low if low == high else -1


def bleu_statistics(hypotheses, references, *, max_order: int = 4, pad_id=None, eos_id=None,
                    ref_length: str = "closest", limits: KernelLimits | None = None,
                    check: bool | None = None):
    """Per-segment BLEU statistics of token ids, computed and left on the GPU.

    Rows are sacrebleu's ``[hyp_len, ref_len, match_1..N, total_1..N]`` and
    equal, value for value, to ``fastbleu.BLEU(max_ngram_order=max_order,
    ref_length=ref_length).segment_statistics(fastbleu.TokenIds(...), [...])``
    of the same ids (Papineni et al., 2002: clipped n-gram matches).

    Parameters
    ----------
    hypotheses : CUDA array, numpy array or DeviceIds
        A 2-D ``(segments, length)`` array of ids, or :class:`DeviceIds`
        (values and offsets, per-stream ``pad_id``/``eos_id``).
    references : one stream or a list of streams
        Each as ``hypotheses``, with as many segments; a :class:`DeviceIds`
        with ``valid`` marks missing references.
    max_order : int
        Highest n-gram order (1 to 100).
    pad_id, eos_id : int, optional
        Padding and end-of-sequence ids of every stream that sets none itself
        (see :class:`fastbleu.TokenIds`).
    ref_length : {"closest", "shortest", "average"}
        The reference-length rule of ``fastbleu.BLEU``.
    limits : KernelLimits, optional
        How the kernel counts which segment (tuning and tests).
    check : bool, optional
        Read back the kernel's report of malformed input and raise (one wait
        on the device).  By default only when some input was a host array
        (its copy to the device waited already); for inputs all on the
        device nothing is read back and nothing waits: a segment with a
        negative id, offsets out of order or no reference gets a row of -1
        (offsets out of order may also spoil the rows of other segments).

    Returns
    -------
    array
        int64 ``(segments, 2 + 2 * max_order)`` on the device: a torch tensor
        or CuPy array when the input was one, else a numba device array
        (``__cuda_array_interface__``).

    Raises
    ------
    TypeError, ValueError
        For inputs that are not integer arrays, mismatched lengths, a segment
        without any reference, a negative id left after padding is dropped,
        or offsets out of order (the message names the stream and segment;
        for device inputs only with ``check=True``).
    fastbleu.gpu.GPUUnavailable
        If numba's CUDA target cannot run (one line naming the fix).
    """
    return statistics_and_num_refs(hypotheses, references, max_order=max_order, pad_id=pad_id,
                                   eos_id=eos_id, ref_length=ref_length, limits=limits,
                                   check=check, count_refs=False)[0]


def statistics_and_num_refs(hypotheses, references, *, max_order: int = 4, pad_id=None,
                            eos_id=None, ref_length: str = "closest",
                            limits: KernelLimits | None = None, check: bool | None = None,
                            count_refs: bool = True):
    """:func:`bleu_statistics`'s rows and the references' ``num_refs`` (sacrebleu's:
    references per segment, ``-1`` when it varies): an int, or where a mask is on the
    device a :class:`PendingNumRefs` counted by the same launch and read back only when
    used (None without ``count_refs``)."""
    if isinstance(max_order, bool) or not isinstance(max_order, (int, np.integer)) or \
            not 1 <= max_order <= 100:
        raise ValueError(f"max_order must be an int from 1 to 100, got {max_order!r}")
    if ref_length not in REF_LENGTHS:
        raise ValueError(f"unknown ref_length {ref_length!r}; choose one of "
                         f"{', '.join(REF_LENGTHS)}")
    limits = limits or KernelLimits.default()
    streams = id_streams(hypotheses, references, pad_id, eos_id)
    if ref_length == "average" and len(streams) - 1 > MAX_AVERAGED_REFERENCES:
        raise ValueError(f"ref_length='average' takes at most {MAX_AVERAGED_REFERENCES} "
                         "reference streams")
    from .._kernels.cuda import counting, tokens
    from .._kernels.cuda.loader import cuda

    context = Context(cuda, _template(streams))
    refs = num_refs(streams) if count_refs else None
    present = None
    if count_refs and refs is None:  # a mask on the device: counted there
        present = context.empty(len(streams[0]), np.int64)
        refs = PendingNumRefs(present, context.stream)
    rows, owner = run_statistics(context, streams, int(max_order), REF_LENGTHS[ref_length],
                                 limits, counting, tokens, check,
                                 None if present is None else present[0])
    return context.result(rows, owner), refs


def _kind(array):
    """What numba types a device array by: its dtype and layout."""
    layout = "C" if array.is_c_contiguous() else "F" if array.is_f_contiguous() else "A"
    return np.dtype(array.dtype), layout


def _one_type(context, arrays):
    """The device arrays (or None) as one kernel tuple takes them: unchanged when they share
    a dtype and layout, else each that is not C-contiguous int64 copied into one that is
    (a launch each; streams of one dtype and layout, the usual case, take none)."""
    present = [a for a in arrays if a is not None]
    if len({_kind(a) for a in present}) <= 1:
        return arrays
    from .._kernels.cuda.reduce import widen, widen_rows

    out = []
    for value in arrays:
        if value is None or _kind(value) == (np.dtype(np.int64), "C"):
            out.append(value)
            continue
        wide, owner = context.empty(value.shape, np.int64)
        context.keep.append(owner)
        if value.size:
            kernel = widen if len(value.shape) == 1 else widen_rows
            kernel[blocks(value.size), threads(), context.stream](value, wide)
        out.append(wide)
    return out


def _on_host(value) -> bool:
    """Whether an input is a host array (copied to the device here), not a device one."""
    return isinstance(value, (np.ndarray, list, tuple))


def _host_dtype(streams):
    """The dtype host arrays of ids are copied in, so that one kernel tuple takes every
    stream: the first device stream's (int32 only where every host id fits it), else the
    host arrays' own when they agree, else int64."""
    host = [np.asarray(ids.values) for ids in streams if _on_host(ids.values)]
    int32, int64 = np.dtype(np.int32), np.dtype(np.int64)
    for ids in streams:
        if not _on_host(ids.values) and hasattr(ids.values, "dtype"):
            try:
                dtype = np.dtype(str(ids.values.dtype).replace("torch.", ""))
            except TypeError:
                return int64
            if dtype == int32 and all(a.size == 0 or (a.min() >= -2 ** 31 and
                                                       a.max() < 2 ** 31) for a in host):
                return int32
            return int64
    kinds = {a.dtype for a in host}
    return kinds.pop() if len(kinds) == 1 and kinds <= {int32, int64} else int64


def _stream_views(context, streams):
    """Per stream: ``(values 2-D, offsets or None, valid or None, width, on_host)``."""
    views = []
    host_dtype = _host_dtype(streams)
    for s, ids in enumerate(streams):
        name = "hypotheses" if s == 0 else f"references[{s - 1}]"
        on_host = any(_on_host(v) for v in (ids.values, ids.offsets, ids.valid))
        values = ids.values
        if _on_host(values):
            values = np.ascontiguousarray(np.asarray(values), dtype=host_dtype)
        values = _view(context, values, f"{name} values")
        if ids.offsets is None:
            matrix, offsets, length = values, None, values.shape[1]
        else:
            offsets = ids.offsets
            if _on_host(offsets):
                offsets = np.asarray(offsets).astype(np.int64)
            matrix = values.reshape(1, values.shape[0])
            offsets, length = _view(context, offsets, f"{name} offsets"), 0
        valid = None if ids.valid is None else _view(context, ids.valid, f"{name} valid")
        views.append((matrix, offsets, valid, length, on_host))
    return views


def _placeholder(arrays, fallback):
    """What a stream without an array passes in its place: another stream's (unread)."""
    return next((a for a in arrays if a is not None), fallback)


def plan_groups(views, n, limits) -> int:
    """Segments a block takes at once: several for short segments, one for long ones
    (decided from the shapes: positions per segment, on average over all streams)."""
    if limits.groups:
        return limits.groups
    from .._kernels.cuda.counting import GROUPS

    positions = sum(int(v[0].size) for v in views)
    return 1 if positions > limits.short_tokens * max(n, 1) else GROUPS


def _longest(view) -> int:
    """The most ids one segment of a stream can have, from its shape."""
    return int(view[0].shape[1]) if view[1] is None else int(view[0].size)


def _table_size(tokens: int) -> int:
    """:func:`~fastbleu._kernels.cuda.counting.table_size` on the host."""
    size = 64
    while size < 2 * tokens:
        size *= 2
    return size


def shared_plan(views, limits, groups, threads_) -> tuple[int, int]:
    """``(shared_slots, bytes)``: the shared table the launch provides (0: no segment can
    use one: all are short, or the references are too long) and the dynamic shared memory
    it needs, from the shapes alone."""
    from .._kernels.cuda.counting import SHARED_CAPACITY

    hyp, refs = _longest(views[0]), sum(_longest(v) for v in views[1:])
    slots = limits.shared_slots
    if hyp + refs <= limits.short_tokens:
        slots = 0  # every segment is short
    elif slots:
        slots = min(slots, _table_size(refs), SHARED_CAPACITY)
    table = slots + 1 if slots else 0
    words = max(groups * limits.short_tokens, table)
    return slots, max(8 * words + 12 * table, 4 * threads_)


def global_slots(views, limits, shared_slots) -> int:
    """Slots of the global-memory tables: 0 when no segment can need one (it is short or
    its references fit the shared table, known from the shapes), else room for every
    segment's table."""
    from .._kernels.cuda.counting import REGION_EXTRA, REGION_SCALE

    hyp, refs = _longest(views[0]), sum(_longest(v) for v in views[1:])
    if hyp + refs <= limits.short_tokens or 2 * refs <= shared_slots:
        return 0
    n = views[0][0].shape[0] if views[0][1] is None else views[0][1].shape[0] - 1
    return REGION_SCALE * sum(int(v[0].size) for v in views[1:]) + REGION_EXTRA * n + 1


def run_statistics(context, streams, max_order, ref_code, limits, counting, tokens,
                   check=None, present=None):
    """The kernel of :func:`bleu_statistics`: ``(rows, owner)``.  One launch (and one
    more per device stream whose dtype or layout differs from the others'); a read-back of the
    malformed-input summary only when ``check`` (default: when any input came from the
    host, whose copy waited anyway).  ``present`` (int64, one per segment, optional)
    receives each segment's number of references present."""
    cuda, stream = context.cuda, context.stream
    n, n_streams = len(streams[0]), len(streams)
    width = 2 + 2 * max_order
    rows, owner = context.empty((n, width), np.int64)
    if n == 0:
        return rows, owner
    views = _stream_views(context, streams)
    if check is None:
        check = any(v[4] for v in views)
    groups = plan_groups(views, n, limits)
    threads_ = groups * limits.group if groups > 1 else limits.block
    shared_slots, shared_bytes = shared_plan(views, limits, groups, threads_)
    sizes = [max(int(v[0].size), 1) for v in views]
    n_hashes = sum(sizes)
    slots = global_slots(views, limits, shared_slots)
    # One allocation for all the scratch (each costs tens of microseconds through torch and
    # __cuda_array_interface__): hashes, start, count, the summary when unchecked, tables.
    summary_size = tokens.BAD_OFFSETS + 2 * n_streams
    table_words = slots + -(-3 * slots // 2) if slots else 2
    present_words = n if present is None else 0  # the references present, unread here
    total = n_hashes + 2 * n_streams * n + summary_size + present_words + table_words
    scratch, owner_scratch = context.empty(total, np.int64)
    context.keep.append(owner_scratch)
    hashes = scratch[:n_hashes].view(np.uint64)
    at = n_hashes
    start = scratch[at:at + n_streams * n].reshape(n_streams, n)
    at += n_streams * n
    count = scratch[at:at + n_streams * n].reshape(n_streams, n)
    at += n_streams * n
    summary = scratch[at:at + summary_size]
    at += summary_size
    if present is None:
        present = scratch[at:at + n]
        at += n
    if slots:  # the keys, then three runs of int32 counts (see counting.bleu_rows)
        keys = scratch[at:at + slots].view(np.uint64)
        counts = scratch[at + slots:at + table_words].view(np.int32)
    else:  # never read: no segment can need a global table
        keys = scratch[at:at + 1].view(np.uint64)
        counts = scratch[at + 1:at + 2].view(np.int32)
    if check:
        summary_host = np.zeros(summary_size, dtype=np.int64)
        summary_host[tokens.MISSING:] = tokens.NONE
        summary = cuda.to_device(summary_host, stream=stream)
    values = _one_type(context, [v[0] for v in views])
    offsets = _one_type(context, [v[1] for v in views])
    offsets = tuple(o if o is not None else _placeholder(offsets, start[0]) for o in offsets)
    valid = tuple(v[2] if v[2] is not None else _placeholder([w[2] for w in views], start[0])
                  for v in views)
    params = []
    base = 0
    for s, (matrix, offs, mask, length, _) in enumerate(views):
        ids = streams[s]
        params += [offs is not None, length, ids.pad_id or 0, ids.pad_id is not None,
                   ids.eos_id or 0, ids.eos_id is not None, mask is not None, base]
        base += sizes[s]
    params = tuple(np.int64(int(p)) for p in params)
    grid = min(limits.grid, -(-n // groups))
    spread = np.uint64(0) if limits.collide else np.uint64(0xFFFFFFFFFFFFFFFF)
    counting.bleu_rows[grid, threads_, stream, shared_bytes](
        tuple(values), offsets, valid, params, n, groups, max_order, ref_code, AVERAGE_SCALE,
        limits.short_tokens, shared_slots, spread, hashes, start, count, keys, counts, rows,
        summary, present)
    if check:
        _raise_for(context.host(summary), tokens, n_streams)
    return rows, owner


def _raise_for(report, tokens, n_streams) -> None:
    for s in range(n_streams):
        name = "hypotheses" if s == 0 else f"references[{s - 1}]"
        bad = int(report[tokens.BAD_OFFSETS + 2 * s])
        if bad != tokens.NONE:
            raise ValueError(f"{name} offsets must be non-decreasing and lie in 0 .. "
                             f"len(values): segment {bad} has offsets out of order or range")
        bad = int(report[tokens.NEGATIVE + 2 * s])
        if bad != tokens.NONE:
            raise ValueError(f"{name}: segment {bad} holds a negative token id; ids must be "
                             ">= 0 (drop a padding value such as -100 with pad_id=-100)")
    missing = int(report[tokens.MISSING])
    if missing != tokens.NONE:
        raise ValueError(f"segment {missing} has no reference: every reference stream is "
                         "missing there")
