"""Tables -> one corpus BLEU per group, in a single streaming pass.

``score_table`` reads the hypothesis and reference columns of a table batch
by batch, turns every batch into per-segment statistics with the kernels,
adds them into per-group sums (:mod:`fastbleu.groups`) and, if asked, writes
every segment's sentence BLEU and statistics to a Parquet file.  Memory is
bounded by the batch and the number of groups, not by the rows.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from .bleu import BLEU
from .errors import InputError
from .groups import GroupSums, _canonical, factorize
from .output import AtomicFile, check_writable
from .progress import Progress
from .statistics import HashBuffer, compute_statistics
from .tables import check_batch_size, describe, open_table, same_kind, valid_utf8
from .text import TextColumn, as_text_column
from .tokenizers import get_tokenizer

logger = logging.getLogger("fastbleu")


@dataclass
class _Group:
    """What a group needs for its signature besides its sums."""

    tokenizer: str
    min_refs: int
    max_refs: int


class _Groups:
    """Per-group sums of statistics, with each group's tokenizer and reference counts.

    Besides the sums, every group keeps the position of its first row,
    ``(partition, row)``: one process adds batches in row order, so its groups
    are already in order of first appearance, while partial results of
    partitions (:mod:`fastbleu.dask`) are merged in any order and sorted by
    that position at the end (:meth:`ordered`).
    """

    def __init__(self, width: int):
        self.sums = GroupSums(width)
        self.info: list[_Group] = []
        self.first: list[tuple[int, int]] = []
        self.key_types: dict = {}
        self.rows = 0

    def add(self, codes, key_values, stats, refs_per_row, tokenizer_of_row, tokenizers,
            position=(0, 0)):
        """Add a batch; ``position`` is ``(partition, row)`` of its first row."""
        known = len(self.info)
        # A dictionary may hold a tokenizer's name twice: one code per name.
        first_code = np.array([tokenizers.index(name) for name in tokenizers], dtype=np.int64)
        tokenizer_of_row = first_code[tokenizer_of_row]
        target = self.sums.add(codes, key_values, stats)
        if len(self.sums.keys) > known:  # new groups: note where each first appears
            first_row = np.full(len(key_values), len(codes), dtype=np.int64)
            np.minimum.at(first_row, codes, np.arange(len(codes), dtype=np.int64))
            for code in np.flatnonzero(target >= known):
                if target[code] == len(self.first):
                    self.first.append((position[0], position[1] + int(first_row[code])))
        # Each group's reference counts and tokenizers, from one sort of the rows
        # (a loop over the groups with a mask each cost groups x rows: minutes for
        # a batch of one document per row).
        group_of_row = target[codes]
        order = np.argsort(group_of_row, kind="stable")
        ordered = group_of_row[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]])
        present = ordered[starts]
        low = np.minimum.reduceat(refs_per_row[order], starts)
        high = np.maximum.reduceat(refs_per_row[order], starts)
        pairs = np.unique(group_of_row * len(tokenizers) + tokenizer_of_row)
        pair_group, pair_tokenizer = np.divmod(pairs, len(tokenizers))
        tokenizer_of_group = dict(zip(pair_group.tolist(), pair_tokenizer.tolist()))
        if pairs.size > present.size:  # some group uses two tokenizers in this batch
            g = int(pair_group[np.flatnonzero(pair_group[1:] == pair_group[:-1])[0]])
            names = sorted({tokenizers[t] for t in pair_tokenizer[pair_group == g]})
            raise InputError(f"group {self.sums.keys[g]} mixes the tokenizers {names}")
        for g, lo, hi in zip(present.tolist(), low.tolist(), high.tolist()):
            name = tokenizers[tokenizer_of_group[g]]
            if g == len(self.info):
                self.info.append(_Group(name, lo, hi))
                continue
            info = self.info[g]
            if info.tokenizer != name:
                names = sorted({info.tokenizer, name})
                raise InputError(f"group {self.sums.keys[g]} mixes the tokenizers {names}")
            info.min_refs = min(info.min_refs, lo)
            info.max_refs = max(info.max_refs, hi)
        self.rows += len(codes)

    def merge(self, other: _Groups) -> _Groups:
        """Add another partial result into this one (exact: int64 sums) and return this one."""
        _check_key_types(self.key_types, other.key_types, "one partition", "another")
        if not other.sums.keys:
            self.rows += other.rows
            self.key_types = _merged_types(self.key_types, other.key_types)
            return self
        count = len(other.sums.keys)
        # A NaN key is one group only through a shared NaN object (see groups.py),
        # which a partial result sent between processes no longer holds.
        keys = [tuple(_canonical(value) for value in key) for key in other.sums.keys]
        target = self.sums.add(np.arange(count, dtype=np.int64), keys, other.sums.totals())
        for code, g in enumerate(target):
            theirs = other.info[code]
            if g == len(self.info):
                self.info.append(_Group(theirs.tokenizer, theirs.min_refs, theirs.max_refs))
                self.first.append(other.first[code])
                continue
            mine = self.info[g]
            if mine.tokenizer != theirs.tokenizer:
                names = sorted({mine.tokenizer, theirs.tokenizer})
                raise InputError(f"group {self.sums.keys[g]} mixes the tokenizers {names}")
            mine.min_refs = min(mine.min_refs, theirs.min_refs)
            mine.max_refs = max(mine.max_refs, theirs.max_refs)
            self.first[g] = min(self.first[g], other.first[code])
        self.rows += other.rows
        self.key_types = _merged_types(self.key_types, other.key_types)
        return self

    def ordered(self) -> tuple[list[tuple], np.ndarray, list[_Group]]:
        """Keys, summed statistics and group information in order of first appearance."""
        order = sorted(range(len(self.first)), key=self.first.__getitem__)
        totals = self.sums.totals()[order] if order else self.sums.totals()
        return ([self.sums.keys[g] for g in order], totals, [self.info[g] for g in order])


def _check_key_types(known: dict, found: dict, where_known: str, where_found: str) -> None:
    """Refuse a key column whose type changed: "0" and 0 would be two groups printed alike."""
    for name, kind in found.items():
        if name in known and not same_kind(known[name], kind):
            raise InputError(f"column {name!r} holds {describe(known[name])} in {where_known} "
                             f"but {describe(kind)} in {where_found}; every part of a table needs the same column "
                             "types")


def _merged_types(known: dict, found: dict) -> dict:
    """Key types known so far, a null type (a column of nulls only) taking the other one."""
    import pyarrow as pa

    merged = dict(found)
    merged.update({k: v for k, v in known.items() if not pa.types.is_null(v) or k not in found})
    return merged


#: Columns of score_table's result besides the keys: no group column may be named so.
RESULT_COLUMNS = ("score", "bp", "ratio", "sys_len", "ref_len", "counts", "totals",
                  "precisions", "signature")


def segment_columns(max_ngram_order: int) -> list[str]:
    """The columns of a ``segments_out`` file besides the keys."""
    return ["row", "sentence_bleu", "hyp_len", "ref_len"] + \
        [f"match_{m + 1}" for m in range(max_ngram_order)] + \
        [f"total_{m + 1}" for m in range(max_ngram_order)]


def _names(value, what: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    names = list(value)
    if not all(isinstance(name, str) for name in names):
        raise TypeError(f"{what} must be a column name or a list of column names")
    return names


def _string_column(batch, name: str, first_row: int, errors: str):
    import pyarrow as pa

    column = batch.column(name)
    kind = column.type
    if pa.types.is_dictionary(kind):
        column = column.cast(kind.value_type)
        kind = column.type
    if pa.types.is_string_view(kind) or pa.types.is_null(kind):
        column = column.cast(pa.large_string())
    elif not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise InputError(f"column {name!r} holds {kind}, not strings")
    return valid_utf8(column, name, first_row, errors)


def _reference_streams(batch, refs: list[str], first_row: int, errors: str) -> list[TextColumn]:
    """The reference streams of a batch: one per column, or one per list position."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(refs) == 1 and (pa.types.is_list(batch.column(refs[0]).type)
                           or pa.types.is_large_list(batch.column(refs[0]).type)):
        lists = batch.column(refs[0])
        lengths = np.asarray(pc.fill_null(pc.list_value_length(lists), 0))
        width = int(lengths.max()) if lengths.size else 1
        # Offsets index the whole child array, also for a slice of a list array.
        starts = lists.offsets.to_numpy()[:-1]
        values = lists.values
        streams = []
        for r in range(max(width, 1)):
            has = lengths > r
            taken = values.take(pa.array(np.where(has, starts + r, 0)))
            column = pc.if_else(pa.array(has), taken, pa.scalar(None, taken.type))
            batch_like = pa.RecordBatch.from_arrays([column], [refs[0]])
            streams.append(as_text_column(_string_column(batch_like, refs[0], first_row, errors),
                                          refs[0], allow_null=True, trusted=True))
        return streams
    return [as_text_column(_string_column(batch, name, first_row, errors), name,
                           allow_null=True, trusted=True) for name in refs]


def _batch_statistics(batch, hyp, refs, tokenize_column, bleu, first_row, null_as_empty,
                      encoding_errors, buffers):
    """Statistics of one record batch, with each row's reference count and tokenizer."""
    import pyarrow as pa

    n = batch.num_rows
    hyp_column = _string_column(batch, hyp, first_row, encoding_errors)
    if hyp_column.null_count:
        if not null_as_empty:
            row = int(np.flatnonzero(~np.asarray(hyp_column.is_valid()))[0])
            raise InputError(f"column {hyp!r}, row {first_row + row}: the hypothesis is null "
                             "(--null-as-empty takes it as empty)")
        hyp_column = hyp_column.fill_null("")
    streams = _reference_streams(batch, refs, first_row, encoding_errors)
    present = np.stack([np.ones(n, bool) if s.valid is None else s.valid for s in streams])
    refs_per_row = present.sum(axis=0)
    if (refs_per_row == 0).any():
        row = int(np.flatnonzero(refs_per_row == 0)[0])
        raise InputError(f"row {first_row + row}: every reference is null")

    if tokenize_column is None:
        tokenizer_of_row, tokenizers = np.zeros(n, dtype=np.int64), [bleu.tokenizer.name]
    else:
        tokenizer_of_row, values = factorize([batch.column(tokenize_column)],
                                             [tokenize_column], first_row, encoding_errors)
        tokenizers = [value[0] for value in values]
    order = bleu.max_ngram_order
    stats = np.empty((n, 2 + 2 * order), dtype=np.int64)
    for code, name in enumerate(tokenizers):
        try:
            tokenizer = get_tokenizer(name, bleu.spm_model)
        except (TypeError, ValueError, ImportError, OSError) as error:
            raise InputError(f"column {tokenize_column!r}: {error}") from None
        rows = np.flatnonzero(tokenizer_of_row == code)
        if rows.size == n:
            part_hyps, part_refs = as_text_column(hyp_column, hyp, trusted=True), streams
        else:
            take = pa.array(rows)
            part_hyps = as_text_column(hyp_column.take(take), hyp, trusted=True)
            part_refs = _reference_streams(batch.take(take), refs, first_row, encoding_errors)
        stats[rows] = compute_statistics(part_hyps, part_refs, tokenizer, bleu.lowercase, order,
                                         buffers, ref_length=bleu._ref_length_code)
    return stats, refs_per_row, tokenizer_of_row, tokenizers


@dataclass
class GroupScores:
    """What :func:`score_groups` found: one score per group, in order of first appearance."""

    keys: list[str]
    key_types: dict
    key_values: list[tuple]
    scores: list
    signatures: list
    statistics: np.ndarray
    ref_length: str

    def to_table(self):
        """The result as a ``pyarrow.Table`` (see :func:`score_table`)."""
        import pyarrow as pa

        order = (self.statistics.shape[1] - 2) // 2
        arrays = []
        for i, name in enumerate(self.keys):
            kind = self.key_types.get(name, pa.large_string())
            if pa.types.is_dictionary(kind):
                kind = kind.value_type
            if pa.types.is_null(kind):  # only null keys in the first rows: infer from all
                kind = None
            arrays.append(pa.array([values[i] for values in self.key_values], type=kind))
        stats = self.statistics
        arrays += [
            pa.array([s.score for s in self.scores], pa.float64()),
            pa.array([s.bp for s in self.scores], pa.float64()),
            pa.array([float(s.ratio) for s in self.scores], pa.float64()),
            pa.array([s.sys_len for s in self.scores], pa.int64()),
            pa.array([s.ref_len for s in self.scores],
                     pa.float64() if self.ref_length == "average" else pa.int64()),
            pa.array(stats[:, 2:2 + order].tolist(), pa.list_(pa.int64())),
            pa.array(stats[:, 2 + order:].tolist(), pa.list_(pa.int64())),
            pa.array([s.precisions for s in self.scores], pa.list_(pa.float64())),
            pa.array([sig.format() for sig in self.signatures], pa.string()),
        ]
        names = self.keys + ["score", "bp", "ratio", "sys_len", "ref_len", "counts", "totals",
                             "precisions", "signature"]
        return pa.Table.from_arrays(arrays, names=names)


def score_table(source, hyp: str = "hyp", refs=("ref",), group_by=None, doc: str | None = None,
                *, tokenize_column: str | None = None, segments_out: str | None = None,
                null_as_empty: bool = False, encoding_errors: str = "strict",
                progress: bool | None = False, batch_size: int = 1 << 16, **bleu_options):
    """Corpus BLEU per group of a table, in one streaming pass.

    Parameters
    ----------
    source : str, os.PathLike, pyarrow.Table, pandas.DataFrame or polars.DataFrame
        A Parquet file, directory or glob; a CSV, TSV or JSON Lines file; or
        a table in memory.
    hyp : str
        The hypothesis column.
    refs : str or list of str
        Reference columns (a null is a missing reference), or one
        ``list<string>`` column holding a variable number of references.
    group_by : str or list of str, optional
        Columns whose value combinations each get a corpus BLEU (e.g.
        ``["system", "pair"]``); without, the whole table is one corpus.
    doc : str, optional
        A document column: every document of every group gets its own BLEU
        from its summed statistics (document-level BLEU).
    tokenize_column : str, optional
        A column naming each row's tokenizer; a group must use only one.
    segments_out : str, optional
        A Parquet file to write every segment's sentence BLEU to (with
        effective order, as sacrebleu's sentence level does), its statistics,
        its row number and its group and document values.  Written atomically.
    null_as_empty : bool
        Take a null hypothesis as an empty one instead of failing.
    encoding_errors : {"strict", "replace"}
        What to do with text that is not valid UTF-8.
    progress : bool or None
        Show a progress line on standard error (None: only on a terminal).
    batch_size : int
        Rows per record batch.
    **bleu_options
        :class:`fastbleu.BLEU`'s arguments (``tokenize``, ``lowercase``,
        ``smooth_method`` ...).

    Returns
    -------
    pyarrow.Table
        The group (and document) columns, then ``score, bp, ratio, sys_len,
        ref_len, counts, totals, precisions, signature``.  ``counts`` and
        ``totals`` are the summed statistics (without ``add-k``'s added k).

    Raises
    ------
    fastbleu.files.InputError
        For a missing, repeated or unreadable file or column, a column whose
        type differs between the files (or batches, or partitions) of the
        table, a group column that cannot be a key (struct, list), a null
        hypothesis, a row without any reference, text that is not UTF-8, or
        an unwritable ``segments_out``.
    ValueError
        For a group column given twice, or named like a column of the result
        (``score`` ...) or, with ``segments_out``, of that file (``row`` ...),
        and a ``batch_size`` outside 1 to 2**24.
    """
    return score_groups(source, hyp, refs, group_by, doc, tokenize_column=tokenize_column,
                        segments_out=segments_out, null_as_empty=null_as_empty,
                        encoding_errors=encoding_errors, progress=progress,
                        batch_size=batch_size, **bleu_options).to_table()


def score_groups(source, hyp: str = "hyp", refs=("ref",), group_by=None, doc: str | None = None,
                 *, tokenize_column: str | None = None, segments_out: str | None = None,
                 null_as_empty: bool = False, encoding_errors: str = "strict",
                 progress: bool | None = False, batch_size: int = 1 << 16,
                 **bleu_options) -> GroupScores:
    """:func:`score_table`'s work, returning the ``BLEUScore`` of every group."""
    job = TableJob.create(hyp, refs, group_by, doc, tokenize_column, null_as_empty,
                          encoding_errors, batch_size, bleu_options)
    if segments_out is not None:
        job.check_segment_columns()

    bleu = job.bleu()
    if segments_out is not None:
        check_writable(segments_out, source)
    table = open_table(source, job.columns, batch_size, dictionary_columns=job.keys,
                       encoding_errors=job.encoding_errors)

    meter = Progress(table.total_rows, progress)
    segments = _SegmentWriter(segments_out, job.keys, bleu, source) \
        if segments_out is not None else None

    def written(batch, stats, first_row):
        if segments is not None:
            segments.write(batch, stats, first_row)
        meter.update(batch.num_rows)

    try:
        groups = job.statistics(table.batches(), bleu, on_batch=written)
        if segments is not None:
            segments.commit()
    except BaseException:
        if segments is not None:
            segments.discard()
        raise
    finally:
        meter.close()
    return job.scores(groups, bleu)


@dataclass(frozen=True)
class TableJob:
    """What to score in a table, checked once; the same for one process and for a cluster.

    :meth:`statistics` turns record batches into per-group sums
    (:class:`_Groups`), :meth:`scores` turns merged sums into a
    :class:`GroupScores`; :mod:`fastbleu.dask` runs the first on every
    partition and the second on the client.
    """

    hyp: str
    refs: tuple
    keys: tuple
    tokenize_column: str | None
    null_as_empty: bool
    encoding_errors: str
    batch_size: int
    bleu_options: dict

    @classmethod
    def create(cls, hyp, refs, group_by, doc, tokenize_column, null_as_empty, encoding_errors,
               batch_size, bleu_options) -> TableJob:
        """Check the arguments of :func:`score_table` (raises TypeError/ValueError)."""
        if not isinstance(hyp, str):
            raise TypeError(f"hyp must be a column name, got {type(hyp).__name__}")
        refs = _names(refs, "refs")
        if not refs:
            raise ValueError("refs must name at least one reference column")
        keys = _names(group_by, "group_by") + _names(doc, "doc")
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"the column {repeated[0]!r} is given twice as a group or document "
                             "column; name each once")
        reserved = [k for k in keys if k in RESULT_COLUMNS]
        if reserved:
            raise ValueError(f"a group or document column cannot be named {reserved[0]!r}: "
                             f"the result has columns {', '.join(RESULT_COLUMNS)}; rename it "
                             "in the table")
        if tokenize_column is not None and not isinstance(tokenize_column, str):
            raise TypeError("tokenize_column must be a column name")
        if encoding_errors not in ("strict", "replace"):
            raise ValueError(f"encoding_errors must be 'strict' or 'replace', got "
                             f"{encoding_errors!r}")
        batch_size = check_batch_size(batch_size)
        job = cls(hyp, tuple(refs), tuple(keys), tokenize_column, bool(null_as_empty),
                  encoding_errors, int(batch_size), dict(bleu_options))
        job.bleu()  # check the BLEU options now, not on a worker
        return job

    def check_segment_columns(self) -> None:
        """Refuse keys named like a column of the ``segments_out`` file (ValueError)."""
        reserved = segment_columns(self.bleu().max_ngram_order)
        clash = [k for k in self.keys if k in reserved]
        if clash:
            raise ValueError(f"a group or document column cannot be named {clash[0]!r} with "
                             f"segments_out: the file has columns {', '.join(reserved)}; "
                             "rename it in the table")

    @property
    def columns(self) -> list[str]:
        """The columns to read."""
        return [self.hyp, *self.refs, *self.keys] + \
            ([self.tokenize_column] if self.tokenize_column else [])

    def bleu(self) -> BLEU:
        return BLEU(**self.bleu_options)

    def batch_statistics(self, batch, bleu: BLEU, first_row: int, buffers=None):
        """Statistics of one batch, each row's reference count and tokenizer (see ``_batch_statistics``)."""
        return _batch_statistics(batch, self.hyp, list(self.refs), self.tokenize_column, bleu,
                                 first_row, self.null_as_empty, self.encoding_errors,
                                 buffers or (HashBuffer(), HashBuffer()))

    def statistics(self, batches, bleu: BLEU, first_row: int = 0, partition: int = 0,
                   on_batch=None, buffers=None) -> _Groups:
        """Per-group sums of record batches whose first row is ``first_row``.

        ``partition`` and the row give each group's first position;
        ``on_batch(batch, stats, first_row)`` sees every batch's statistics;
        ``buffers`` are two :class:`HashBuffer` to reuse (new ones without).
        """
        groups = _Groups(2 + 2 * bleu.max_ngram_order)
        buffers = buffers or (HashBuffer(), HashBuffer())
        row = first_row
        keys = list(self.keys)
        for batch in batches:
            if batch.num_rows == 0:
                continue
            stats, refs_per_row, tokenizer_of_row, tokenizers = self.batch_statistics(
                batch, bleu, row, buffers)
            if keys:
                found = {k: batch.schema.field(k).type for k in keys}
                _check_key_types(groups.key_types, found, "the rows before",
                                 f"the rows from {row} on")
                groups.key_types = _merged_types(groups.key_types, found)
                codes, key_values = factorize([batch.column(k) for k in keys], keys, row,
                                              self.encoding_errors)
            else:
                codes, key_values = np.zeros(batch.num_rows, dtype=np.int64), [()]
            groups.add(codes, key_values, stats, refs_per_row, tokenizer_of_row, tokenizers,
                       (partition, row))
            if on_batch is not None:
                on_batch(batch, stats, row)
            row += batch.num_rows
        return groups

    def scores(self, groups: _Groups, bleu: BLEU) -> GroupScores:
        """One score and signature per group, in order of first appearance."""
        keys = list(self.keys)
        order = bleu.max_ngram_order
        if groups.rows == 0:
            logger.warning("the table has no rows; its BLEU is 0.0")
            if not keys:  # the whole (empty) table is one corpus
                groups.sums.add(np.zeros(0, dtype=np.int64), [()],
                                np.zeros((0, 2 + 2 * order), dtype=np.int64))
                groups.info.append(_Group(bleu.tokenizer.name, len(self.refs), len(self.refs)))
                groups.first.append((0, 0))
        key_values, totals, info = groups.ordered()
        signatures = [bleu._signature(g.min_refs if g.min_refs == g.max_refs else -1,
                                      get_tokenizer(g.tokenizer, bleu.spm_model).signature)
                      for g in info]
        return GroupScores(keys, groups.key_types, key_values,
                           [bleu._score(row) for row in totals], signatures, totals,
                           bleu.ref_length)


class _SegmentWriter:
    """Per-segment results streamed to a Parquet file that appears only when complete.

    Batches are encoded and written on a background thread (pyarrow does
    not hold the GIL there) while the next batch is scored; at most one
    write is pending, so memory stays bounded by the batch.
    """

    def __init__(self, path: str, keys: list[str], bleu: BLEU, source=None):
        from concurrent.futures import ThreadPoolExecutor

        self.output = AtomicFile(path, source)  # checked: never an input, never a device
        self.keys = keys
        self.bleu = bleu
        self.writer = None
        self._thread = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastbleu-write")
        self._pending = None

    def _schema(self, batch=None):
        import pyarrow as pa

        order = self.bleu.max_ngram_order
        fields = [pa.field("row", pa.int64())]
        fields += [batch.schema.field(k) if batch is not None else pa.field(k, pa.large_string())
                   for k in self.keys]
        fields += [pa.field(name, pa.float64() if name == "sentence_bleu" else pa.int64())
                   for name in ["sentence_bleu", "hyp_len", "ref_len"]
                   + [f"match_{m + 1}" for m in range(order)]
                   + [f"total_{m + 1}" for m in range(order)]]
        return pa.schema(fields)

    def _wait(self) -> None:
        if self._pending is not None:
            pending, self._pending = self._pending, None
            with self.output.writing():  # a full disk: one line, the old file intact
                pending.result()

    def write(self, batch, stats, first_row: int) -> None:
        import pyarrow as pa
        import pyarrow.parquet as pq

        sentence = self.bleu._scores(stats, effective_order=True)
        arrays = [pa.array(np.arange(first_row, first_row + batch.num_rows, dtype=np.int64))]
        arrays += [batch.column(k) for k in self.keys]
        arrays += [pa.array(sentence)] + [pa.array(stats[:, c]) for c in range(stats.shape[1])]
        schema = self._schema(batch)
        record = pa.RecordBatch.from_arrays(arrays, schema=schema)
        self._wait()
        if self.writer is None:
            with self.output.writing():
                self.writer = pq.ParquetWriter(self.output.temporary, schema)
        self._pending = self._thread.submit(self.writer.write_batch, record)

    def commit(self) -> None:
        import pyarrow.parquet as pq

        self._wait()
        self._thread.shutdown()
        with self.output.writing():
            if self.writer is None:  # no rows: still a valid, empty file
                self.writer = pq.ParquetWriter(self.output.temporary, self._schema())
            self.writer.close()
        self.output.commit()

    def discard(self) -> None:
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
