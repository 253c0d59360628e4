"""Token ids on the GPU -> BLEU statistics rows on the GPU: the kernels' orchestration.

One call runs :func:`~fastbleu._kernels.cuda.tokens.prepare_tokens` per
stream, :func:`~fastbleu._kernels.cuda.counting.statistics_rows` once, then
reads back one small summary (the only wait on the device: how many
segments each counting kernel has, the global table's size, and the first
malformed segment if any), and launches the counting kernels that have work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .arrays import Context, on_device
from .inputs import DeviceIds

#: The reference-length rules and their kernel codes (as ``BLEU(ref_length=...)`` names them).
REF_LENGTHS = {"closest": 0, "shortest": 1, "average": 2}
#: lcm(1..16): ``ref_length="average"`` rows carry the mean length times this.
AVERAGE_SCALE = 720720
MAX_AVERAGED_REFERENCES = 16


@dataclass(frozen=True)
class KernelLimits:
    """Which counting kernel a segment goes to, and the kernels' block sizes.

    Parameters
    ----------
    short_tokens : int
        Segments whose hypothesis and references have at most this many
        tokens together are counted by a group of threads (``group``) with
        direct comparisons (at most 256).
    shared_slots : int
        Segments whose references have at most ``shared_slots / 2`` tokens
        are counted by a block with a table in shared memory; longer ones with
        a table in global memory.  A power of two from 64 to 2048, or 0 (every
        segment that is not short uses global memory).
    group : int
        Threads per segment of the short-segment and token kernels (32: a warp).
    block : int
        Threads per segment of the table kernels.
    collide : bool
        Start every n-gram's probe at the same table slot (a test of the
        tables' worst case; slow).
    grid : int
        The most blocks of a launch (the kernels loop over what is left).
    """

    short_tokens: int = 128
    shared_slots: int = 2048
    group: int = 32
    block: int = 256
    collide: bool = False
    grid: int = 1 << 16

    def __post_init__(self):
        if not 0 <= self.short_tokens <= 256:
            raise ValueError(f"short_tokens must be 0..256, got {self.short_tokens}")
        slots = self.shared_slots
        if slots != 0 and (slots < 64 or slots > 2048 or slots & (slots - 1)):
            raise ValueError(f"shared_slots must be 0 or a power of two from 64 to 2048, got "
                             f"{slots}")
        if not 1 <= self.group <= 64 or not 1 <= self.block <= 1024 or self.grid < 1:
            raise ValueError("group must be 1..64 and block 1..1024 threads, grid at least 1")

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


def num_refs(streams, context) -> int:
    """sacrebleu's ``num_refs`` of the reference streams: references per segment, -1 if
    it varies (valid masks on the device are copied to the host for this)."""
    masks = [s.valid for s in streams[1:] if s.valid is not None]
    if not masks:
        return len(streams) - 1
    present = np.zeros(len(streams[0]), dtype=np.int64) + (len(streams) - 1 - len(masks))
    for mask in masks:
        present += np.asarray(mask) if isinstance(mask, (np.ndarray, list, tuple)) else \
            context.host(_view(context, mask, "valid")).astype(bool)
    if present.size == 0:
        return len(streams) - 1
    low, high = int(present.min()), int(present.max())
    return low if low == high else -1


def bleu_statistics(hypotheses, references, *, max_order: int = 4, pad_id=None, eos_id=None,
                    ref_length: str = "closest", limits: KernelLimits | None = None):
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
        Which kernel counts which segment (tuning and tests).

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
        or offsets out of order (the message names the stream and segment).
    fastbleu.gpu.GPUUnavailable
        If numba's CUDA target cannot run (one line naming the fix).
    """
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
    rows, owner = run_statistics(context, streams, int(max_order), REF_LENGTHS[ref_length],
                                 limits, counting, tokens)
    return context.result(rows, owner)


def run_statistics(context, streams, max_order, ref_code, limits, counting, tokens):
    """The kernels of :func:`bleu_statistics`: ``(rows, owner)``."""
    cuda, stream = context.cuda, context.stream
    n, n_streams = len(streams[0]), len(streams)
    width = 2 + 2 * max_order
    rows, owner = context.empty((n, width), np.int64)
    if n == 0:
        return rows, owner
    views = []
    for s, ids in enumerate(streams):
        name = "hypotheses" if s == 0 else f"references[{s - 1}]"
        values = _view(context, ids.values, f"{name} values")
        if ids.offsets is None:
            matrix, offsets, ragged, length = values, None, False, values.shape[1]
        else:
            matrix = values.reshape(1, values.shape[0])
            offsets, ragged, length = _view(context, ids.offsets, f"{name} offsets"), True, 0
        valid = None if ids.valid is None else _view(context, ids.valid, f"{name} valid")
        views.append((matrix, offsets, ragged, length, valid))
    sizes = [max(int(v[0].size), 1) for v in views]
    # One allocation for all the scratch (each costs tens of microseconds through torch and
    # __cuda_array_interface__): hashes, start, count, the kernel of each segment, 3 lists.
    n_hashes = sum(sizes)
    scratch, owner_scratch = context.empty(n_hashes + 2 * n_streams * n + 4 * n, np.int64)
    keep = [owner_scratch]  # owners of the scratch, alive until the kernels are queued
    hashes = scratch[:n_hashes].view(np.uint64)
    at = n_hashes
    start = scratch[at:at + n_streams * n].reshape(n_streams, n)
    at += n_streams * n
    count = scratch[at:at + n_streams * n].reshape(n_streams, n)
    at += n_streams * n
    category, block_list, global_list, global_base = (scratch[at + k * n:at + (k + 1) * n]
                                                      for k in range(4))
    summary_host = np.zeros(tokens.BAD_OFFSETS + 2 * n_streams, dtype=np.int64)
    summary_host[tokens.MISSING:] = tokens.NONE
    summary = cuda.to_device(summary_host, stream=stream)
    dummy = None
    base = 0
    group = limits.group
    for s, (matrix, offsets, ragged, length, valid) in enumerate(views):
        ids = streams[s]
        if matrix.size == 0:  # the kernel reads values[0, 0] as a placeholder
            dummy = dummy if dummy is not None else cuda.to_device(np.zeros((1, 1), np.int64),
                                                                   stream=stream)
            matrix = dummy
        flags = offsets if offsets is not None else start[0]  # placeholders for unused args
        grid = min(limits.grid, -(-n // tokens.GROUPS))
        tokens.prepare_tokens[grid, tokens.GROUPS * group, stream](
            matrix, flags, ragged, length, n, valid if valid is not None else count[0],
            valid is not None, np.int64(ids.pad_id or 0), ids.pad_id is not None,
            np.int64(ids.eos_id or 0), ids.eos_id is not None, s, hashes, base, start, count,
            summary)
        base += sizes[s]
    threads = limits.block
    counting.statistics_rows[min(limits.grid, -(-n // threads)), threads, stream](
        count, n, max_order, ref_code, AVERAGE_SCALE, limits.short_tokens, limits.shared_slots,
        rows, category, block_list, global_list, global_base, summary)
    report = context.host(summary)
    _raise_for(report, tokens, n_streams)
    spread = np.uint64(0) if limits.collide else np.uint64(0xFFFFFFFFFFFFFFFF)
    if report[tokens.N_SHORT]:
        grid = min(limits.grid, -(-n // counting.GROUPS))
        counting.count_short[grid, counting.GROUPS * group, stream](
            hashes, start, count, n, max_order, category, rows)
    if report[tokens.N_BLOCK]:
        k = int(report[tokens.N_BLOCK])
        counting.count_shared[min(limits.grid, k), limits.block, stream](
            hashes, start, count, max_order, block_list, k, spread, rows)
    if report[tokens.N_GLOBAL]:
        k = int(report[tokens.N_GLOBAL])
        slots = int(report[tokens.GLOBAL_SLOTS])
        tables = [context.empty(slots, np.uint64)] + \
            [context.empty(slots, np.int32) for _ in range(3)]
        keep.extend(o for _, o in tables)
        keys, refmax, cur, hyp = (a for a, _ in tables)
        counting.count_global[min(limits.grid, k), limits.block, stream](
            hashes, start, count, max_order, global_list, global_base, k, keys, refmax, cur,
            hyp, spread, rows)
    if context.library is None:
        stream.synchronize()  # numba's arrays free their memory at once when dropped
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
