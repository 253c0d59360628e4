"""A table's statistics with each segment's reference side computed once, not per system.

Every system's row of a segment is scored against the same references (the
baseline's row holds them), so here they are read, tokenized and counted
once a segment: BLEU's reference tokens once (the counting kernel then reads
them for every system), chrF's reference n-grams once
(:mod:`fastbleu.compare.chrf_shared`).  A row whose reference columns differ
from its baseline row's (a fold of their bytes, :func:`~fastbleu.compare.kernels.text_hashes`,
tells) is scored with its own, as every table row is
(:meth:`fastbleu.tables.TableJob.batch_statistics`), so the statistics are those
of the per-row path whatever the table holds.

The table is read in passes: one over the reference columns (checked as a
table job checks them, folded, and the baseline's rows kept: one reference
set a segment), then one over the hypotheses per block of segments (their
text is kept for one block at a time, :data:`BLOCK_BYTES`; a block with rows
of their own references reads those too), since a system's rows may be
anywhere in the table.
"""

from __future__ import annotations

import numpy as np

from ..errors import InputError
from .corpus import word_counts

#: Metrics whose reference side is shared (TER and the rest go row by row).
SHARED_METRICS = ("bleu", "chrf")
#: Bytes of hypotheses a block keeps (about twice that while a block is gathered).
BLOCK_BYTES = 320 << 20
_FOLD_START = np.uint64(0xCBF29CE484222325)


class References:
    """The baseline's references of every segment (segment order), read and checked once."""

    def __init__(self, source, job, metric_set, sys_codes, dest, base, batch_size, errors):
        import pyarrow as pa

        from ..tables import open_table
        from ..tables.columns import reference_streams
        from .kernels import text_hashes

        refs = list(job.refs)
        table = open_table(source, refs, batch_size, encoding_errors=errors)
        n_rows = sys_codes.size
        folds = np.empty(n_rows, dtype=np.uint64)
        anchors, words = [], []
        low, high = None, None
        text_bytes = 0
        done = 0
        for batch in table.batches():
            n = batch.num_rows
            if n == 0:
                continue
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
                text_bytes += int(stream.offsets[-1] - stream.offsets[0])
            folds[done:done + n] = fold
            first = sys_codes[done:done + n] == base
            if first.any():
                mask = pa.array(first)
                anchors.append(batch.filter(mask))
                words.append(word_counts(batch.column(refs[0]).filter(mask)))
            done += n
        # the baseline's rows are segments 0..n-1 in table order: their references in order
        batch = pa.Table.from_batches(anchors).combine_chunks().to_batches()[0]
        self.streams = reference_streams(batch, refs, 0, errors)
        self.words = np.concatenate(words) if words else np.zeros(0, dtype=np.int64)
        base_rows_fold = folds[sys_codes == base]
        #: rows scored against references of their own (their columns differ from the
        #: baseline row's of their segment)
        self.own = folds != base_rows_fold[dest]
        self.num_refs = low if low == high else -1
        self.bytes_per_row = text_bytes / max(n_rows, 1) / max(len(self.streams), 1)

    def for_chrf(self, lowercase: bool):
        """``(data, start, end)`` of every segment's references for
        :func:`~fastbleu.compare.chrf_shared.chrf_shared` (lowercased if asked), made once."""
        from ..inputs.text import lowercase as lowercase_column

        streams = [lowercase_column(s) if lowercase else s for s in self.streams]
        bases = np.cumsum([0] + [s.data.size for s in streams])
        data = np.concatenate([s.data for s in streams]) if len(streams) > 1 \
            else streams[0].data
        start = np.stack([np.where(s.valid, s.offsets[:-1] + b, -1) if s.valid is not None
                          else s.offsets[:-1] + b for s, b in zip(streams, bases)])
        end = np.stack([s.offsets[1:] + b for s, b in zip(streams, bases)])
        return data, np.ascontiguousarray(start), np.ascontiguousarray(end)


def blocks(n_segments: int, rows_per_segment: float, bytes_per_row: float,
           budget: int = BLOCK_BYTES) -> list[tuple[int, int]]:
    """Segment ranges of about ``budget`` bytes of hypotheses each."""
    per_block = max(1, int(budget / max(rows_per_segment * max(bytes_per_row, 1.0), 1.0)))
    return [(lo, min(lo + per_block, n_segments)) for lo in range(0, n_segments, per_block)]


def shared_statistics(source, job, metric_set, sys_codes, dest, position, base, n,
                      array, ref_words, null_as_empty, src, batch_size, errors,
                      budget: int = BLOCK_BYTES) -> int:
    """Fill ``array`` (a :class:`~fastbleu.compare.corpus.StatisticsArray`) and
    ``ref_words`` from the table; return the references per segment (-1: varies)."""
    import pyarrow as pa

    from ..statistics.tokens import BufferPairs
    from ..tables import open_table

    open_table(source, list(dict.fromkeys([job.hyp, *job.refs] + ([src] if src else []))),
               batch_size, encoding_errors=errors)  # every column is there (nothing read)
    refs = References(source, job, metric_set, sys_codes, dest, base, batch_size, errors)
    ref_words[:] = refs.words
    chrf_refs = {}
    hyp = job.hyp
    n_systems = int(position.max()) + 1
    scratch = BufferPairs()
    own_columns = list(dict.fromkeys([hyp, *job.refs]))
    for lo, hi in blocks(n, sys_codes.size / max(n, 1), refs.bytes_per_row, budget):
        own_here = bool(np.any(refs.own & (dest >= lo) & (dest < hi)))
        columns = own_columns if own_here else [hyp]
        table = open_table(source, columns, batch_size, encoding_errors=errors)
        texts, segs, systems, own_parts, own_segs, own_systems = [], [], [], [], [], []
        done = 0
        for batch in table.batches():
            m = batch.num_rows
            if m == 0:
                continue
            here = dest[done:done + m]
            inside = (here >= lo) & (here < hi)
            if inside.any():
                own = refs.own[done:done + m] & inside
                rows = np.flatnonzero(inside & ~own)
                taken = _hypotheses(batch, hyp, rows, inside, done, errors, null_as_empty)
                texts.append(taken)
                segs.append(here[rows] - lo)
                systems.append(position[sys_codes[done + rows]])
                if own.any():
                    own_rows = np.flatnonzero(own)
                    own_parts.append((done, own_rows, batch.take(pa.array(own_rows))))
            done += m
        _score_block(metric_set, refs, chrf_refs, texts, segs, systems, lo, hi, array,
                     n_systems, scratch)
        for first, rows, part in own_parts:
            _score_own(job, metric_set, part, first, rows, dest, position, sys_codes, array,
                       scratch)
    return refs.num_refs


def _hypotheses(batch, hyp, rows, inside, first_row, errors, null_as_empty):
    """The hypotheses of a batch's ``rows`` as a checked Arrow string array; the
    batch's rows ``inside`` the block are checked for nulls (an InputError naming the
    first, unless ``null_as_empty``)."""
    import pyarrow as pa

    from ..inputs.text import arrow_strings
    from ..tables.columns import hypothesis_column

    column = batch.column(hyp)
    nulls = np.asarray(column.is_null()) & inside if column.null_count else None
    if nulls is not None and nulls.any() and not null_as_empty:
        raise InputError(f"column {hyp!r}, row {first_row + int(np.flatnonzero(nulls)[0])}: "
                         "the hypothesis is null (--null-as-empty takes it as empty)")
    try:
        taken = arrow_strings(column.take(pa.array(rows)), hyp, errors=errors,
                              first_row=first_row)
    except InputError:  # the message of the whole batch, which names the row
        hypothesis_column(batch, hyp, first_row, errors)
        raise
    return taken.fill_null("") if taken.null_count else taken


def _score_block(metric_set, refs, chrf_refs, texts, segs, systems, lo, hi, array,
                 n_systems, scratch):
    import pyarrow as pa

    from ..inputs.text import as_text_column
    from ..statistics.tokens import References as Tokens

    if not texts:
        return
    column = pa.chunked_array(texts).combine_chunks() if len(texts) > 1 else texts[0]
    del texts[:]
    hyps = as_text_column(column, "hypotheses", trusted=True)
    segs = np.concatenate(segs)
    systems = np.concatenate(systems)
    for m, metric in enumerate(metric_set.metrics):
        if metric.key == "chrf":
            rows, order = _chrf_rows(metric, refs, chrf_refs, hyps, segs, lo, hi)
            _put(array, m, rows, lo + segs[order], systems[order], n_systems)
            continue
        # BLEU: the block's references tokenized once, every row pointing at its segment's
        streams = [s.slice(lo, hi) for s in refs.streams]
        tokens = Tokens.cached(streams, metric.tokenizer, metric.lowercase)
        shared = Tokens(tokens.hashes, np.ascontiguousarray(tokens.start[:, segs]),
                        np.ascontiguousarray(tokens.count[:, segs]))
        rows = metric.column_statistics(hyps, shared, buffers=scratch)
        _put(array, m, rows, lo + segs, systems, n_systems)


def _chrf_rows(metric, refs, chrf_refs, hyps, segs, lo, hi):
    from ..inputs.text import lowercase as lowercase_column
    from .chrf_shared import chrf_shared

    if metric.lowercase not in chrf_refs:
        chrf_refs[metric.lowercase] = refs.for_chrf(metric.lowercase)
    data, start, end = chrf_refs[metric.lowercase]
    if metric.lowercase:
        hyps = lowercase_column(hyps)
    order = np.argsort(segs, kind="stable")
    seg_rows = np.zeros(hi - lo + 1, dtype=np.int64)
    np.cumsum(np.bincount(segs, minlength=hi - lo), out=seg_rows[1:])
    formula = metric.formula
    _, factor, one_plus_factor, eps_smoothing = formula.kernel_args
    out = np.empty((segs.size, formula.row_width), dtype=np.int64)
    chrf_shared(hyps.data, np.ascontiguousarray(hyps.offsets[:-1][order]),
                np.ascontiguousarray(hyps.offsets[1:][order]), data,
                np.ascontiguousarray(start[:, lo:hi]), np.ascontiguousarray(end[:, lo:hi]),
                seg_rows, formula.char_order, formula.word_order, metric.whitespace, factor,
                one_plus_factor, eps_smoothing, out)
    return out, order


def _put(array, m, rows, segments, systems, n_systems):
    """Store ``rows`` (one metric's columns) at their segments, system by system."""
    for s in range(n_systems):
        mask = systems == s
        if mask.all():
            array.put(m, s, segments, rows)
        elif mask.any():
            array.put(m, s, segments[mask], rows[mask])


def _score_own(job, metric_set, part, first, rows, dest, position, sys_codes, array, scratch):
    """Rows with references of their own: scored as every table row is."""
    stats = job.batch_statistics(part, metric_set, first, scratch)[0]
    segments = dest[first + rows]
    systems = position[sys_codes[first + rows]]
    n_systems = int(position.max()) + 1
    for m, columns_of in enumerate(metric_set.slices):
        _put(array, m, stats[:, columns_of], segments, systems, n_systems)
