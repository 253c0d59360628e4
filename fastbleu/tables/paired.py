"""Paired significance tests across the systems of a table, group by group, in one pass.

A table holds the outputs of several systems, one row per (system,
segment), with a system column and optionally group columns (a language
pair, a test set).  :func:`paired_table` reads it once, keeps every row's
statistics (80 bytes a segment for BLEU-4, 144 more for chrF), and then runs a
paired test per group and metric: the baseline against every other system of
that group, every metric with the same draws.

How rows of different systems are paired, within a group:

* with ``segment`` (``--segment-column``), by the value of that column: every
  system must have each of the baseline's segment ids exactly once, and no
  others; the baseline's row order is the segments' order (it decides which
  segment the draws' index ``i`` means, as the line order of text files does
  for sacrebleu);
* without it, by position: the k-th row of a system in table order is the
  k-th segment, so every system needs as many rows as the baseline.

Anything else is an error naming the group and the system.  Each group
draws from a fresh generator with the same seed, so a group's results equal
a separate run on that group's files (and sacrebleu's, with
``sacrebleu_compat``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..significance import tests as significance
from ..errors import InputError
from ..progress import Progress
from ..statistics.tokens import HashBuffer
from .columns import check_key_types, column_names, merged_types
from .groups import factorize
from .job import TableJob
from .metric_set import metric_specs
from .readers import check_batch_size, open_table
from .reference_counts import counted_job


@dataclass
class PairedTable:
    """What :func:`paired_table` found for one metric, one entry per group in order of
    first appearance."""

    keys: list[str]
    key_values: list[tuple]
    systems: list[list]          # per group: system names, the baseline first
    results: list[list]          # per group: significance.Result per system
    signatures: list             # per group: the metric's signature with the test's fields
    metric_name: str = "BLEU"    # the metric's name as its scores print it (formula.name)


def _global_codes(column, name: str, first_row: int, errors: str, ids: dict,
                  values: list) -> np.ndarray:
    """Codes of a column's values, numbered across batches in order of first appearance."""
    codes, keys = factorize([column], [name], first_row, errors)
    mapping = np.empty(len(keys), dtype=np.int64)
    for local, key in enumerate(keys):
        value = key[0]
        if value not in ids:
            ids[value] = len(values)
            values.append(value)
        mapping[local] = ids[value]
    return mapping[codes]


def _label(keys: list[str], values: tuple) -> str:
    return " ".join(f"{k}={v}" for k, v in zip(keys, values)) if keys else "the table"


def check_paired_columns(system: str, keys: list[str], segment: str | None) -> None:
    """Refuse a group column given twice, or the system column reused as a group or
    segment column (ValueError): :func:`paired_table`'s column rules, for callers that
    check their arguments before any reading."""
    repeated = sorted({k for k in keys if keys.count(k) > 1})
    if repeated:
        raise ValueError(f"the column {repeated[0]!r} is given twice in group_by; name each once")
    if system in keys or system == segment:
        raise ValueError(f"the system column {system!r} cannot also be a group or segment "
                         "column")


def paired_table(source, hyp: str = "hyp", refs=("ref",), system: str = "system",
                 baseline=None, group_by=None, segment: str | None = None, *,
                 test: str = "bs", n_samples: int | None = None, seed=None,
                 sacrebleu_compat: bool = False, null_as_empty: bool = False,
                 encoding_errors: str = "strict", progress: bool | None = False,
                 batch_size: int = 1 << 16, metrics=None,
                 **bleu_options) -> PairedTable | list[PairedTable]:
    """Paired bootstrap (``test="bs"``) or approximate randomization (``"ar"``) per group,
    for one metric or several with the same draws.

    Parameters
    ----------
    source : str or table
        A Parquet file, directory or glob, a CSV/TSV/JSON Lines file, a
        ``pyarrow.Table`` or a pandas/polars DataFrame.
    hyp, refs : str, list of str
        Hypothesis and reference columns, as for :func:`fastbleu.score_table`.
    system : str
        The column naming each row's system.
    baseline : optional
        The baseline's value in ``system`` (compared as text if the column
        is not text); default: the first system of the table.
    group_by : list of str, optional
        One test per combination of these columns.
    segment : str, optional
        A segment id column that aligns the systems' rows (see the module
        docstring); default: row order within the group.
    test, n_samples, seed, sacrebleu_compat
        As for :func:`fastbleu.significance.paired_bootstrap` and
        :func:`~fastbleu.significance.paired_ar` (``n_samples`` defaults to
        1000 resamples or 10000 trials).
    metrics : list of str or Metric, optional
        As for :func:`fastbleu.score_table` (default BLEU).  Every metric of
        a group is tested with the same draws, as sacrebleu tests several
        metrics (with ``seed="none"`` too: one fresh seed per group).
    **bleu_options
        :class:`fastbleu.BLEU`'s options, for the metric named ``"bleu"``.

    Returns
    -------
    PairedTable or list of PairedTable
        One for a single metric; one per metric, in the order given, for several.
    """
    if test not in ("bs", "ar"):
        raise ValueError(f"test must be 'bs' or 'ar', got {test!r}")
    if n_samples is None:
        n_samples = significance.default_samples(test)
    significance.check_count(n_samples, "n_samples")
    seed_value, seed_label = significance.resolve_seed(seed)
    refs = column_names(refs, "refs")
    keys = column_names(group_by, "group_by")
    batch_size = check_batch_size(batch_size)
    if not isinstance(system, str) or not (segment is None or isinstance(segment, str)):
        raise TypeError("system and segment must be column names")
    check_paired_columns(system, keys, segment)
    job = TableJob(hyp, tuple(refs), (), None, bool(null_as_empty), encoding_errors, batch_size,
                   metric_specs(metrics, bleu_options))
    job = counted_job(source, job)  # TER beyond 16 references: its scale, from a first pass
    metric_set = job.metric_set()
    columns = [hyp, *refs, system, *keys] + ([segment] if segment else [])
    table = open_table(source, list(dict.fromkeys(columns)), batch_size,
                       dictionary_columns=keys + [system], encoding_errors=encoding_errors)

    # NIST weighs every system of every group by its own references (a first pass, NIST only)
    from .prepass import first_pass

    metric_set, batches = first_pass(source, job, metric_set, [*keys, system], table.batches())
    group_ids, group_values = {}, []
    system_ids, system_values = {}, []
    segment_ids, segment_values = {}, []
    key_types: dict = {}
    parts = {"stats": [], "group": [], "system": [], "segment": [], "refs": []}
    buffers = (HashBuffer(), HashBuffer())
    meter = Progress(table.total_rows, progress)
    rows_done = 0
    try:
        for batch in batches:
            if batch.num_rows == 0:
                continue
            stats, refs_per_row, _, _ = job.batch_statistics(batch, metric_set, rows_done,
                                                             buffers)
            parts["stats"].append(stats)
            parts["refs"].append(refs_per_row)
            # A system "0" in one file and 0 in another would be two systems printed alike.
            found = {k: batch.schema.field(k).type for k in [*keys, system]
                     + ([segment] if segment else [])}
            check_key_types(key_types, found, "the rows before", f"the rows from {rows_done} on")
            key_types = merged_types(key_types, found)
            if keys:
                codes, values = factorize([batch.column(k) for k in keys], keys, rows_done,
                                          encoding_errors)
                mapping = np.empty(len(values), dtype=np.int64)
                for local, value in enumerate(values):
                    mapping[local] = group_ids.setdefault(value, len(group_ids))
                    if mapping[local] == len(group_values):
                        group_values.append(value)
                parts["group"].append(mapping[codes])
            else:
                parts["group"].append(np.zeros(batch.num_rows, dtype=np.int64))
            parts["system"].append(_global_codes(batch.column(system), system, rows_done,
                                                 encoding_errors, system_ids, system_values))
            if segment:
                parts["segment"].append(_global_codes(batch.column(segment), segment, rows_done,
                                                      encoding_errors, segment_ids,
                                                      segment_values))
            rows_done += batch.num_rows
            meter.update(batch.num_rows)
    finally:
        meter.close()
    if rows_done == 0:
        raise InputError("the table has no rows: nothing to test")
    if not keys:
        group_values = [()]

    stats = np.concatenate(parts["stats"])
    group = np.concatenate(parts["group"])
    systems = np.concatenate(parts["system"])
    refs_per_row = np.concatenate(parts["refs"])
    segments = np.concatenate(parts["segment"]) if segment else None
    base = _baseline_code(baseline, system_values, system)

    order = np.argsort(group, kind="stable")
    bounds = np.concatenate([[0], np.cumsum(np.bincount(group, minlength=len(group_values)))])
    result = [PairedTable(keys, group_values, [], [], [], metric.formula.name)
              for metric in metric_set.metrics]
    for g, values in enumerate(group_values):
        rows = order[bounds[g]:bounds[g + 1]]
        label = _label(keys, values)
        blocks, names = _aligned(rows, systems, segments, stats, base, system_values, label,
                                 segment_values)
        counts = refs_per_row[rows]
        num_refs = int(counts[0]) if counts.min() == counts.max() else -1
        # Every metric draws with the same seed, so with the same resamples (or coins).
        draws = seed_value if seed_value is not None else \
            int(np.random.SeedSequence().entropy)
        for metric, columns, found in zip(metric_set.metrics, metric_set.slices, result):
            results = significance.paired_test(
                [np.ascontiguousarray(block[:, columns]) for block in blocks], metric.formula,
                test, n_samples=n_samples, seed=draws, sacrebleu_compat=sacrebleu_compat)
            found.systems.append(names)
            found.results.append(results)
            found.signatures.append(significance.paired_signature(
                metric.signature(num_refs), test, n_samples, seed_label))
    return result[0] if len(result) == 1 else result


def _baseline_code(baseline, system_values: list, column: str) -> int:
    if baseline is None:
        return 0
    for code, value in enumerate(system_values):
        if value == baseline or (not isinstance(value, str) and str(value) == str(baseline)):
            return code
    shown = ", ".join(repr(v) for v in system_values[:10])
    raise InputError(f"baseline {baseline!r} is not a value of column {column!r} "
                     f"(its systems: {shown}{' ...' if len(system_values) > 10 else ''})")


def _aligned(rows, systems, segments, stats, base: int, system_values, label: str,
             segment_values):
    """The statistics of every system of one group, aligned segment by segment."""
    codes = systems[rows]
    present = list(dict.fromkeys(codes.tolist()))
    base_name = system_values[base]
    if base not in present:
        raise InputError(f"{label}: no rows of the baseline {base_name!r}")
    if len(present) == 1:
        raise InputError(f"{label}: only the baseline {base_name!r}; a paired test needs "
                         "another system")
    ordered = [base] + [code for code in present if code != base]
    base_rows = rows[codes == base]
    if segments is not None:
        base_ids = segments[base_rows]
        if np.unique(base_ids).size != base_ids.size:
            raise InputError(f"{label}: the baseline {base_name!r} has a segment id twice")
        position = np.full(len(segment_values), -1, dtype=np.int64)
        position[base_ids] = np.arange(base_ids.size)
    blocks = []
    for code in ordered:
        own = rows[codes == code]
        name = system_values[code]
        if own.size != base_rows.size:
            raise InputError(f"{label}: system {name!r} has {own.size} segments but the "
                             f"baseline {base_name!r} has {base_rows.size}; every system needs "
                             "one row per segment")
        if segments is not None and code != base:
            where = position[segments[own]]
            if (where < 0).any():
                missing = segment_values[int(segments[own][np.flatnonzero(where < 0)[0]])]
                raise InputError(f"{label}: system {name!r} has segment {missing!r}, which "
                                 f"the baseline {base_name!r} lacks")
            if np.unique(where).size != where.size:
                raise InputError(f"{label}: system {name!r} has a segment id twice")
            aligned = np.empty_like(own)
            aligned[where] = own
            own = aligned
        blocks.append(stats[own])
    return blocks, [system_values[code] for code in ordered]
