"""A table's statistics with each segment's reference side computed once, not per system.

Every system's row of a segment is scored against the same references (the
baseline's row holds them), so here they are read, tokenized and counted
once a segment: BLEU's reference tokens once (the counting kernel then reads
them for every system), chrF's reference n-grams once
(:mod:`fastbleu._kernels.chrf.shared_references`).  A row whose reference columns differ
from its baseline row's (a 64-bit fold of their bytes,
:func:`~fastbleu.compare.kernels.text_hashes`, tells) is scored with its own,
as every table row is (:meth:`fastbleu.tables.TableJob.batch_statistics`), so
the statistics are those of the per-row path whatever the table holds (up to
a 64-bit collision of two different references of one segment, as n-gram
keys are exact up to their hash collisions).

The table is read in passes: one over the hypothesis and reference columns
(checked as a table job checks them, the hypotheses' lengths noted, the
references folded and the baseline's kept: one reference set a segment),
then one over the hypotheses per block of segments (:data:`BLOCK_BYTES` of
text; a block with rows of their own references reads those too), since a
system's rows may be anywhere in the table.  Every system has one row a
segment, so a block's text is laid out segment by segment, each row in its
system's place, copied there straight from the record batches.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .corpus import word_counts

#: Metrics whose reference side is shared (TER and the rest go row by row).
SHARED_METRICS = ("bleu", "chrf")
#: Bytes of hypotheses a pass over the table keeps (a block of segments).
BLOCK_BYTES = 192 << 20
#: Rows scored at a time within a block (their int64 statistics: tens of MB).
CHUNK_ROWS = 1 << 18
_FOLD_START = np.uint64(0xCBF29CE484222325)


class References:
    """The baseline's references of every segment (segment order), read and checked once."""

    def __init__(self, source, job, metric_set, sys_codes, dest, base, null_as_empty,
                 batch_size, errors):
        import pyarrow as pa

        from ..tables import open_table
        from ..tables.columns import hypothesis_column, reference_streams
        from .kernels import text_hashes

        refs = list(job.refs)
        table = open_table(source, list(dict.fromkeys([job.hyp, *refs])), batch_size,
                           encoding_errors=errors)
        n_rows = sys_codes.size
        folds = np.empty(n_rows, dtype=np.uint64)
        #: bytes of every row's hypothesis (checked here, once; a null one is empty)
        self.lengths = np.empty(n_rows, dtype=np.int64)
        anchors, words = [], []
        low, high = None, None
        done = 0
        for batch in table.batches():
            n = batch.num_rows
            if n == 0:
                continue
            column = hypothesis_column(batch, job.hyp, done, errors)
            if column.null_count and not null_as_empty:
                row = int(np.flatnonzero(~np.asarray(column.is_valid()))[0])
                raise InputError(f"column {job.hyp!r}, row {done + row}: the hypothesis is "
                                 "null (--null-as-empty takes it as empty)")
            offsets = _offsets(column)
            length = offsets[1:] - offsets[:-1]
            if column.null_count:
                length[~np.asarray(column.is_valid())] = 0
            self.lengths[done:done + n] = length
            streams = reference_streams(batch, refs, done, errors)
            present = np.stack([np.ones(n, bool) if s.valid is None else s.valid
                                for s in streams])
            refs_per_row = present.sum(axis=0)
            if (refs_per_row == 0).any():
                row = int(np.flatnonzero(refs_per_row == 0)[0])
                raise InputError(f"row {done + row}: every reference is null")
            metric_set.check_reference_counts(refs_per_row, done,
                                              f"column {refs[0]!r}, " if len(refs) == 1
                                              else "")
            low = int(refs_per_row.min()) if low is None else min(low, int(refs_per_row.min()))
            high = int(refs_per_row.max()) if high is None else max(high,
                                                                    int(refs_per_row.max()))
            fold = np.full(n, _FOLD_START, dtype=np.uint64)
            for stream in streams:
                valid = stream.valid if stream.valid is not None else np.ones(0, bool)
                text_hashes(stream.data, stream.offsets, valid, stream.valid is not None, fold)
            folds[done:done + n] = fold
            first = sys_codes[done:done + n] == base
            if first.any():
                mask = pa.array(first)
                # each column once: the same --ref-column twice is two references
                anchors.append(batch.select(list(dict.fromkeys(refs))).filter(mask))
                words.append(word_counts(batch.column(refs[0]).filter(mask)))
            done += n
        # the baseline's rows are segments 0..n-1 in table order: their references in order
        table = pa.Table.from_batches(anchors)
        del anchors[:]
        batch = table.combine_chunks().to_batches()[0]
        del table
        self.streams = reference_streams(batch, refs, 0, errors)
        self.words = np.concatenate(words) if words else np.zeros(0, dtype=np.int64)
        base_fold = folds[sys_codes == base]
        #: rows scored against references of their own (their columns differ from the
        #: baseline row's of their segment)
        self.own = np.empty(n_rows, dtype=bool)
        for first in range(0, n_rows, 1 << 20):  # a piece at a time: no row-sized temporaries
            last = min(first + (1 << 20), n_rows)
            self.own[first:last] = folds[first:last] != base_fold[dest[first:last]]
        self.num_refs = low if low == high else -1

    def for_chrf(self, lowercase: bool):
        """``(data, start, end)`` of every segment's references for
        :func:`~fastbleu._kernels.chrf.shared_references.chrf_shared` (lowercased if asked), made once."""
        from ..inputs.text import lowercase as lowercase_column

        streams = [lowercase_column(s) if lowercase else s for s in self.streams]
        bases = np.cumsum([0] + [s.data.size for s in streams])
        data = np.concatenate([s.data for s in streams]) if len(streams) > 1 \
            else streams[0].data
        start = np.stack([np.where(s.valid, s.offsets[:-1] + b, -1) if s.valid is not None
                          else s.offsets[:-1] + b for s, b in zip(streams, bases)])
        end = np.stack([s.offsets[1:] + b for s, b in zip(streams, bases)])
        return data, np.ascontiguousarray(start), np.ascontiguousarray(end)


def blocks(segment_bytes: np.ndarray, budget: int = BLOCK_BYTES) -> list[tuple[int, int]]:
    """Segment ranges whose hypotheses hold about ``budget`` bytes each (at least one
    segment a block)."""
    n = segment_bytes.size
    ends = np.cumsum(segment_bytes)
    found, lo = [], 0
    while lo < n:
        before = ends[lo - 1] if lo else 0
        hi = int(np.searchsorted(ends, before + budget, side="right"))
        hi = min(max(hi, lo + 1), n)
        found.append((lo, hi))
        lo = hi
    return found


def shared_statistics(source, job, metric_set, sys_codes, dest, position, base, n,
                      array, ref_words, null_as_empty, src, batch_size, errors,
                      budget: int = BLOCK_BYTES) -> int:
    """Fill ``array`` (a :class:`~fastbleu.compare.corpus.StatisticsArray`) and
    ``ref_words`` from the table; return the references per segment (-1: varies).

    Every system has one row per segment (:func:`~fastbleu.compare.table.align`), so a
    block of segments ``lo:hi`` holds ``(hi - lo) * n_systems`` rows, segment by segment,
    each in its system's place: its hypotheses are copied there straight from the record
    batches, each segment's rows side by side.
    """
    from ..statistics.tokens import BufferPairs
    from ..tables import open_table

    open_table(source, list(dict.fromkeys([job.hyp, *job.refs] + ([src] if src else []))),
               batch_size, encoding_errors=errors)  # every column is there (nothing read)
    refs = References(source, job, metric_set, sys_codes, dest, base, null_as_empty,
                      batch_size, errors)
    ref_words[:] = refs.words
    n_systems = int(position.max()) + 1
    scratch = BufferPairs()
    chrf_refs = {}
    segment_bytes = np.bincount(dest, weights=refs.lengths, minlength=n)
    found = blocks(segment_bytes, budget)
    # each row's block, so that a pass tests one small code a row
    block_of_row = np.searchsorted(np.array([hi for _, hi in found]), dest, side="right") \
        .astype(np.int16 if len(found) < 1 << 15 else np.int64)
    for k, (lo, hi) in enumerate(found):
        hyps, own_parts = _block_hypotheses(source, job, refs, block_of_row == k, dest,
                                            sys_codes, position, lo, hi, n_systems,
                                            batch_size, errors)
        _score_block(metric_set, refs, chrf_refs, hyps, lo, hi, array, n_systems, scratch)
        del hyps
        for first, rows, part in own_parts:
            _score_own(job, metric_set, part, first, rows, dest, position, sys_codes, array,
                       scratch)
    return refs.num_refs


def _block_hypotheses(source, job, refs, in_block, dest, sys_codes, position, lo, hi,
                      n_systems, batch_size, errors):
    """The hypotheses of segments ``lo:hi`` in slot order (a TextColumn), and the rows
    with references of their own ``(first_row, rows, their record batch)``."""
    import pyarrow as pa

    from ..inputs.text import TextColumn, arrow_strings
    from ..tables import open_table
    from ..tables.columns import hypothesis_column
    from .kernels import gather_text

    n_slots = (hi - lo) * n_systems
    lengths = np.zeros(n_slots, dtype=np.int64)
    inside_rows = np.flatnonzero(in_block)
    lengths[_slots(dest, sys_codes, position, inside_rows, lo, n_systems)] = \
        refs.lengths[inside_rows]
    offsets = np.zeros(n_slots + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    own_here = bool(refs.own[inside_rows].any())
    del lengths, inside_rows
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    columns = list(dict.fromkeys([job.hyp, *job.refs])) if own_here else [job.hyp]
    table = open_table(source, columns, batch_size, encoding_errors=errors)
    own_parts = []
    done = 0
    for batch in table.batches():
        m = batch.num_rows
        if m == 0:
            continue
        inside = in_block[done:done + m]
        if inside.any():
            # checked by the pass over the references; repaired text is repaired again
            column = hypothesis_column(batch, job.hyp, done, errors) if errors != "strict" \
                else arrow_strings(batch.column(job.hyp), job.hyp, trusted=True)
            rows = np.flatnonzero(inside)
            gather_text(np.frombuffer(column.buffers()[2] or b"", dtype=np.uint8),
                        _offsets(column), rows,
                        _slots(dest, sys_codes, position, done + rows, lo, n_systems), data,
                        offsets)
            own = refs.own[done:done + m] & inside if own_here else None
            if own is not None and own.any():
                own_rows = np.flatnonzero(own)
                own_parts.append((done, own_rows, batch.take(pa.array(own_rows))))
        done += m
    return TextColumn(data, offsets), own_parts


def _slots(dest, sys_codes, position, rows, lo, n_systems) -> np.ndarray:
    """The places of table ``rows`` in their block (segment by segment, system by system)."""
    return (dest[rows].astype(np.int64) - lo) * n_systems + position[sys_codes[rows]]


def _offsets(column) -> np.ndarray:
    """The offsets of an Arrow string array (a view)."""
    import pyarrow as pa

    kind = np.int64 if pa.types.is_large_string(column.type) else np.int32
    return np.frombuffer(column.buffers()[1], dtype=kind)[
        column.offset:column.offset + len(column) + 1]


def _score_block(metric_set, refs, chrf_refs, hyps, lo, hi, array, n_systems, scratch):
    """Every metric's statistics of a block's rows, stored system by system."""
    from ..statistics.tokens import References as Tokens

    per_chunk = max(1, CHUNK_ROWS // n_systems)  # segments scored at a time
    for m, metric in enumerate(metric_set.metrics):
        if metric.key == "chrf":
            chrf = _chrf_references(metric, refs, chrf_refs)
            texts = _lowercase(hyps) if metric.lowercase else hyps
        else:  # BLEU: the block's references tokenized once
            tokens = Tokens.cached([s.slice(lo, hi) for s in refs.streams], metric.tokenizer,
                                   metric.lowercase)
        for a in range(lo, hi, per_chunk):
            b = min(a + per_chunk, hi)
            first, last = (a - lo) * n_systems, (b - lo) * n_systems
            if metric.key == "chrf":
                rows = _chrf_rows(metric, chrf, texts, first, last, a, b, n_systems)
            else:  # every row pointing at its segment's reference tokens
                segs = np.repeat(np.arange(a - lo, b - lo), n_systems)
                shared = Tokens(tokens.hashes, np.ascontiguousarray(tokens.start[:, segs]),
                                np.ascontiguousarray(tokens.count[:, segs]))
                rows = metric.column_statistics(hyps.slice(first, last), shared,
                                                buffers=scratch)
            rows = rows.reshape(b - a, n_systems, rows.shape[1])
            for s in range(n_systems):
                array.put(m, s, slice(a, b), rows[:, s])


def _lowercase(column):
    from ..inputs.text import lowercase

    return lowercase(column)


def _chrf_references(metric, refs, chrf_refs):
    if metric.lowercase not in chrf_refs:
        chrf_refs[metric.lowercase] = refs.for_chrf(metric.lowercase)
    return chrf_refs[metric.lowercase]


def _chrf_rows(metric, chrf, hyps, first, last, a, b, n_systems) -> np.ndarray:
    """chrF rows of slots ``first:last`` (segments ``a:b``)."""
    from .._kernels.chrf.shared_references import chrf_shared

    data, start, end = chrf
    formula = metric.formula
    _, factor, one_plus_factor, eps_smoothing = formula.kernel_args
    out = np.empty((last - first, formula.row_width), dtype=np.int64)
    chrf_shared(hyps.data, hyps.offsets[first:last], hyps.offsets[first + 1:last + 1], data,
                np.ascontiguousarray(start[:, a:b]), np.ascontiguousarray(end[:, a:b]),
                np.arange(0, last - first + 1, n_systems, dtype=np.int64),
                formula.char_order, formula.word_order, metric.whitespace, factor,
                one_plus_factor, eps_smoothing, out)
    return out


def _score_own(job, metric_set, part, first, rows, dest, position, sys_codes, array, scratch):
    """Rows with references of their own, scored as every table row is (after their
    block's rows, whose statistics against the baseline's references they replace)."""
    stats = job.batch_statistics(part, metric_set, first, scratch)[0]
    segments = dest[first + rows]
    systems = position[sys_codes[first + rows]]
    for m, columns_of in enumerate(metric_set.slices):
        for s in np.unique(systems).tolist():
            mask = systems == s
            array.put(m, s, segments[mask], stats[mask][:, columns_of])
