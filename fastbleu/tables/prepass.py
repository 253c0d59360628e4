"""NIST's first pass over a table: every group's reference n-gram counts, then fixed weights.

NIST's information weights (Doddington, 2002) are counted over every
reference of a corpus, so a table scored batch by batch (or partition by
partition on a cluster) would give every batch the weights of its own
references.  When NIST is among a job's metrics, the references are read
first and every *weight group* gets the counts of all its references
(:class:`~fastbleu.metrics.nist.weights.NISTCounts`); the scoring pass then
gives every row the fixed weights of its group (:class:`WeightedMetricSet`).
BLEU, chrF and TER jobs never come here.

**Two reads** (:func:`first_pass`, one process).  The first reads the
reference and group columns and keeps every group's multiset of reference
rows (a 64-bit fingerprint of each row's present references, with the first
row that has it: :class:`_Multiset`).  Groups whose multisets are the same
up to a factor (every system of a test set, however often the table repeats
it) have the same weights, every weight being a ratio of counts: they form
one class.  The second read takes only the first row of every distinct
reference row of every class, checks its fingerprint, tokenizes it and
counts its n-grams once, times its multiplicity (divided by the class's
greatest common divisor).  So the n-grams counted are those of the distinct
rows of the distinct classes, not of the table's rows.  Dask partitions
count their rows directly (:func:`count_batches`) and merge the counts in a
tree.

**What the corpus is.**  A weight group is a combination of the
``group_by`` values (the document column aside; without ``group_by``, the
whole table).  Its corpus is every row of it, each row's references counted
(a reference repeated on several rows is counted each time, as
``corpus_score`` and NLTK's ``corpus_nist`` count the references of the
segments they are given).  So a group's NIST equals
``NIST().corpus_score(group_hyps, group_refs)``: scoring each system alone,
as sacrebleu-style users expect; several systems over the same references
get exactly the weights of those references (the counts and the word total
all scale by the number of rows repeating them, and the ratios do not
change), while language pairs of one table never share their weights.  The
documents of a group, its ``--segments-out`` rows and its resampled scores
use the group's weights; a paired test weighs every system by its own
references (its groups are the test's groups and the system column).

Memory is that of the distinct reference n-grams of every class (16 bytes
each in a table 3/8 to 3/4 full) and of the distinct rows of every group (24
bytes each, likewise), not of the table; both are checked before they grow
(:mod:`fastbleu.metrics.nist.memory`), and a refusal names the rows being
counted.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import InputError
from .columns import reference_streams
from .groups import canonical_key, factorize
from .metric_set import MetricSet


def nist_positions(metric_set: MetricSet) -> tuple[int, ...]:
    """Where the metrics with corpus-level weights (NIST) are in a metric set."""
    return tuple(i for i, metric in enumerate(metric_set.metrics) if metric.corpus_pass)


def _keys_of(batch, columns: tuple, first_row: int, errors: str):
    """Every row's weight group: codes and the canonical key tuple of every code."""
    if not columns:
        return np.zeros(batch.num_rows, dtype=np.int64), [()]
    codes, values = factorize([batch.column(c) for c in columns], list(columns), first_row,
                              errors)
    return codes, [tuple(canonical_key(v) for v in value) for value in values]


def _by_key(codes: np.ndarray, keys: list) -> dict:
    """Rows of every distinct key (codes with equal keys together), in row order."""
    rows: dict = {}
    order = np.argsort(codes, kind="stable")
    bounds = np.searchsorted(codes[order], np.arange(len(keys) + 1))
    for code, key in enumerate(keys):
        part = order[bounds[code]:bounds[code + 1]]
        if part.size:
            rows[key] = np.sort(np.concatenate([rows[key], part])) if key in rows else part
    return rows


@dataclass
class TableCounts:
    """Reference n-gram counts of every weight group, for every NIST metric of a job.

    Attributes
    ----------
    columns : tuple of str
        The columns whose values make a weight group.
    counts : list of dict
        Per NIST metric (in :func:`nist_positions` order): ``{key tuple: NISTCounts}``.
    """

    columns: tuple
    counts: list

    def merge(self, *others: TableCounts) -> TableCounts:
        """The counts of several pieces of a table together (a new object)."""
        merged = []
        for per_metric in zip(self.counts, *(other.counts for other in others)):
            pieces: dict = {}  # each group's pieces, merged once
            for counts_of in per_metric:
                for key, counts in counts_of.items():
                    pieces.setdefault(key, []).append(counts)
            merged.append({key: parts[0].merge(*parts[1:]) if len(parts) > 1 else parts[0]
                           for key, parts in pieces.items()})
        return TableCounts(self.columns, merged)

    def weights(self, metric_set: MetricSet) -> TableWeights:
        """Every group's weights, for the metrics of ``metric_set`` (the job's)."""
        metrics = [metric_set.metrics[i] for i in nist_positions(metric_set)]
        weights = []
        for metric, per_metric in zip(metrics, self.counts):
            # Systems over the same references have proportional counts (equal, once
            # reduced): one table for all of them.
            done, mine, digests = {}, {}, {}
            for key, counts in per_metric.items():
                if id(counts) not in digests:  # groups may share one counted object
                    digests[id(counts)] = counts.digest(reduced=True)
                digest = digests[id(counts)]
                if digest not in done:
                    done[digest] = counts.reduced().weights(metric.variant)
                mine[key] = done[digest]
            weights.append(mine)
        return TableWeights(self.columns, weights)


@dataclass
class TableWeights:
    """Fixed NIST weights of every weight group (picklable: a cluster broadcasts them)."""

    columns: tuple
    weights: list


def _prepared(job, columns: tuple, metrics: list, buffer=None):
    """What counting a record batch needs, made off the counting thread: its rows by weight
    group and its references tokenized by every metric."""
    def prepare(item):
        batch, row = item
        codes, keys = _keys_of(batch, columns, row, job.encoding_errors)
        streams = reference_streams(batch, list(job.refs), row, job.encoding_errors)
        refs = [metric.tokenized_references(streams, buffer) for metric in metrics]
        return batch.num_rows, row, _by_key(codes, keys), refs
    return prepare


def _where(error: MemoryError, row: int, n_rows: int, total_rows: int | None) -> MemoryError:
    """A metric's one-line memory refusal (an InputError) with the rows it was counting
    and, for NIST's, what all of them would take at this rate; another MemoryError as it
    is."""
    if not isinstance(error, InputError):
        return error
    done = row + n_rows
    where = f"counting the references of rows {row:,} to {done - 1:,}"
    ngrams = getattr(error, "ngrams", 0)
    if total_rows:
        where += f" of {total_rows:,}"
        if ngrams and total_rows > done:
            from ..metrics.nist.memory import size_text, table_bytes

            need = size_text(table_bytes(ngrams * total_rows // done))
            where += f" (at this rate all of them need a table of about {need})"
    refused = type(error)(f"{where}: {error}")
    refused.ngrams = ngrams
    return refused


def count_batches(job, metric_set: MetricSet, batches, columns, first_row: int = 0,
                  buffer=None, total_rows: int | None = None) -> TableCounts:
    """The first pass: every weight group's reference counts over record batches.

    ``batches`` need hold only the job's reference columns and ``columns``.
    Every group's counts grow in place batch by batch (``reference_counts``'s
    ``add_to``), so memory is that of the distinct reference n-grams of every
    group.  Without a ``buffer`` (one process), the batches are tokenized on
    the pool's threads, and the groups of a batch counted side by side there
    and in this thread; with one (a Dask task, already one of many), all in
    this thread.  A metric's refusal for
    memory names the rows it was counting (of ``total_rows``, when known).
    """
    columns = tuple(columns)
    metrics = [metric_set.metrics[i] for i in nist_positions(metric_set)]
    groups = [{} for _ in metrics]
    prepare = _prepared(job, columns, metrics, buffer)

    def numbered():
        row = first_row
        for batch in batches:
            if batch.num_rows:
                yield batch, row
            row += batch.num_rows

    if buffer is None:
        from .._kernels.threads import ordered_map, submit

        prepared = ordered_map(prepare, numbered())
    else:
        prepared, submit = map(prepare, numbered()), None
    for n_rows, row, rows_of, refs_per_metric in prepared:
        def count(task):
            per_group, metric, refs, key, rows = task
            per_group[key] = metric.reference_counts(
                refs, rows=None if rows.size == n_rows else rows, add_to=per_group.get(key))

        # every group's counts on their own (the pool's threads and this one)
        tasks = [(per_group, metric, refs, key, rows)
                 for metric, per_group, refs in zip(metrics, groups, refs_per_metric)
                 for key, rows in rows_of.items()]
        futures = [submit(count, task) for task in tasks[1:]] if submit else []
        errors = []
        for task in tasks[:1] if futures else tasks:
            try:
                count(task)
            except MemoryError as error:
                errors.append(error)
        for future in futures:
            try:
                future.result()
            except MemoryError as error:
                errors.append(error)
        if errors:
            raise _where(errors[0], row, n_rows, total_rows)
    return TableCounts(columns, groups)


class WeightedMetricSet(MetricSet):
    """A metric set whose NIST metrics weigh every row by its group's fixed weights.

    :meth:`for_batch` gives each record batch a set of its own, whose NIST
    metrics are copies holding the weights of that batch's rows, so that
    batches scored side by side (or out of order) never share them.
    """

    def __init__(self, metrics, weights: TableWeights, errors: str):
        super().__init__(metrics)
        self.weights = weights
        self.errors = errors

    def for_batch(self, batch, first_row: int) -> MetricSet:
        """The metrics for the rows ``first_row:first_row + batch.num_rows`` of the table.

        Raises InputError for a row of a group the first pass did not see.
        """
        codes, keys = _keys_of(batch, self.weights.columns, first_row, self.errors)
        rows_of = _by_key(codes, keys)
        metrics = list(self.metrics)
        for i, per_group in zip(nist_positions(self), self.weights.weights):
            parts = []
            for key, rows in rows_of.items():
                if key not in per_group:
                    raise InputError(f"row {first_row + int(rows[0])}: a group the first pass "
                                     "over the table did not see; did the table change "
                                     "while it was read?")
                parts.append((None if rows.size == batch.num_rows else rows, per_group[key]))
            metrics[i] = metrics[i].with_row_weights(parts)  # [(rows or None, NISTWeights)]
        return MetricSet(metrics)


def fitted(metric_set: MetricSet, weights: TableWeights, errors: str) -> WeightedMetricSet:
    """``metric_set`` with its NIST metrics weighing every row by its group's ``weights``
    (:meth:`WeightedMetricSet.for_batch`, which the table job calls for every batch)."""
    return WeightedMetricSet(metric_set.metrics, weights, errors)


class _Multiset:
    """One weight group's reference rows so far: a multiset of row fingerprints, each with
    the first row that has it (:func:`fastbleu._kernels.nist.rows.add_fingerprints`)."""

    def __init__(self):
        self.table = np.zeros((64, 3), dtype=np.uint64)
        self.size = 0

    def add(self, fingerprints: np.ndarray, rows: np.ndarray, first_row: int) -> None:
        from .._kernels.nist.rows import add_fingerprints, rehash_fingerprints
        from ..metrics.nist.memory import check_table

        while True:
            stop, self.size = add_fingerprints(self.table, self.size,
                                               (3 * self.table.shape[0]) // 4, fingerprints,
                                               rows, first_row)
            if stop >= rows.size:
                return
            rows = rows[stop:]
            check_table(2 * self.table.nbytes, self.table.nbytes)
            bigger = np.zeros((2 * self.table.shape[0], 3), dtype=np.uint64)
            rehash_fingerprints(self.table, bigger)
            self.table = bigger

    def plan(self) -> tuple:
        """``(digest, first rows, times)``: the multiset divided by the greatest common
        divisor of its counts (proportional multisets give equal weights, every weight being
        a ratio of counts), its digest, and each distinct row's first row and count."""
        from .._kernels.nist.rows import multiset_digest

        used = self.table[self.table[:, 1] != 0]
        fingerprints, counts = used[:, 0].copy(), used[:, 1].astype(np.int64)
        divisor = int(np.gcd.reduce(counts)) if counts.size else 1
        digest = (tuple(int(multiset_digest(fingerprints, counts, divisor, np.uint64(seed)))
                        for seed in (0x243F6A8885A308D3, 0x13198A2E03707344)), counts.size)
        order = np.argsort(used[:, 2])
        return (digest, used[order, 2].astype(np.int64) - 1, counts[order] // divisor,
                fingerprints[order])


def _fingerprints(streams) -> np.ndarray:
    """Every row's fingerprint of its present reference texts and their streams."""
    from .._kernels.nist.rows import mix_stream

    out = np.zeros(len(streams[0]), dtype=np.uint64)
    for number, stream in enumerate(streams):
        valid = stream.valid
        mix_stream(out, stream.data, stream.offsets,
                   np.zeros(0, dtype=bool) if valid is None else valid, valid is not None,
                   number)
    return out


def _row_multisets(job, batches, columns: tuple) -> dict:
    """The first read: every weight group's multiset of reference rows."""
    from .._kernels.threads import ordered_map

    def prepare(item):
        batch, row = item
        codes, keys = _keys_of(batch, columns, row, job.encoding_errors)
        streams = reference_streams(batch, list(job.refs), row, job.encoding_errors)
        return row, _by_key(codes, keys), _fingerprints(streams)

    def numbered():
        row = 0
        for batch in batches:
            if batch.num_rows:
                yield batch, row
            row += batch.num_rows

    groups: dict = {}
    for row, rows_of, fingerprints in ordered_map(prepare, numbered()):
        for key, rows in rows_of.items():
            if key not in groups:
                groups[key] = _Multiset()
            groups[key].add(fingerprints, rows, row)
    return groups


def count_distinct_rows(job, metric_set: MetricSet, groups: dict, batches, columns,
                        total_rows: int | None = None) -> TableCounts:
    """The second read: the n-grams of every distinct reference row of every class of weight
    groups (groups with proportional multisets of rows), once, times its count.

    ``groups`` maps every group's key to its :class:`_Multiset`; ``batches``
    (the references, again) must hold the same rows as the first read.
    """
    import pyarrow as pa

    from .._kernels.threads import ordered_map

    metrics = [metric_set.metrics[i] for i in nist_positions(metric_set)]
    class_of, plans, digests = {}, [], {}
    for key, multiset in groups.items():
        digest, rows, times, fingerprints = multiset.plan()
        if digest not in digests:
            digests[digest] = len(plans)
            plans.append((rows, times, fingerprints))
        class_of[key] = digests[digest]
    del groups
    rows = np.concatenate([p[0] for p in plans]) if plans else np.zeros(0, dtype=np.int64)
    order = np.argsort(rows, kind="stable")
    rows = rows[order]
    owner = np.repeat(np.arange(len(plans)), [p[0].size for p in plans])[order]
    times = np.concatenate([p[1] for p in plans])[order] if plans else rows
    expected = np.concatenate([p[2] for p in plans])[order] if plans else rows
    del plans
    counts = [[None] * len(digests) for _ in metrics]

    def prepare(item):  # the rows some class counts, taken, checked, tokenized
        batch, row = item
        lo, hi = np.searchsorted(rows, [row, row + batch.num_rows])
        if lo == hi:
            return None
        local = rows[lo:hi] - row
        unique, where = np.unique(local, return_inverse=True)
        streams = reference_streams(batch.take(pa.array(unique)), list(job.refs), row,
                                    job.encoding_errors)
        if (_fingerprints(streams)[where.ravel()] != expected[lo:hi]).any():
            raise InputError(f"rows {row:,} to {row + batch.num_rows - 1:,}: the references "
                             "differ from the first read of the table; did it change while it "
                             "was read?")
        return row, batch.num_rows, lo, hi, where.ravel(), \
            [metric.tokenized_references(streams) for metric in metrics]

    def numbered():
        row = 0
        for batch in batches:
            if batch.num_rows:
                yield batch, row
            row += batch.num_rows

    for item in ordered_map(prepare, numbered()):
        if item is None:
            continue
        row, n_rows, lo, hi, where, refs_per_metric = item
        classes = owner[lo:hi]
        for m, (metric, refs) in enumerate(zip(metrics, refs_per_metric)):
            for c in np.unique(classes):
                mine = classes == c
                try:
                    counts[m][c] = metric.reference_counts(refs, rows=where[mine],
                                                           times=times[lo:hi][mine],
                                                           add_to=counts[m][c])
                except MemoryError as error:
                    raise _where(error, row, n_rows, total_rows)
    # every class has rows (every group has), so all were counted
    return TableCounts(tuple(columns), [{key: per_class[c] for key, c in class_of.items()}
                                        for per_class in counts])


def first_pass(source, job, metric_set: MetricSet, columns, batches):
    """For one process: ``(metric_set, batches)`` to score with, after reading the references
    and ``columns`` of ``source`` first if the job holds NIST (else both as they are).

    Two reads: every weight group's multiset of reference rows
    (fingerprints), then the references again, to count the n-grams of each
    distinct row once per class of groups with proportional multisets (a
    table of many systems over one test set counts that test set once).
    """
    from .readers import open_table

    if not nist_positions(metric_set):
        return metric_set, batches
    columns = tuple(columns)
    table = open_table(source, list(dict.fromkeys([*job.refs, *columns])), job.batch_size,
                       dictionary_columns=list(columns), encoding_errors=job.encoding_errors)
    groups = _row_multisets(job, table.batches(), columns)
    again = open_table(source, list(dict.fromkeys(job.refs)), job.batch_size,
                       encoding_errors=job.encoding_errors)
    counts = count_distinct_rows(job, metric_set, groups, again.batches(), columns,
                                 total_rows=table.total_rows)
    return fitted(metric_set, counts.weights(metric_set), job.encoding_errors), batches
