"""A corpus from a table: one row per (system, segment), read in passes of record batches.

The first pass reads only the system, group and segment-id columns and
decides where each row goes: the segment of each row, aligned as
:func:`fastbleu.tables.paired_table` aligns them (by the segment-id column,
else the k-th row of a system in a group is the k-th row of the baseline in
that group).  The segments' order is the baseline's row order, so the
draws, and every number, equal ``fastbleu TABLE --system-column ...
--paired-bs``'s.  Then the statistics, stored straight where they belong
(memory is the statistics array and a block of text, not the table): for
BLEU and chrF, each segment's reference side computed once for every system
(:mod:`fastbleu.compare.shared`); otherwise (TER, or one system) a pass that
scores each row with its own references (:class:`fastbleu.tables.TableJob`,
as every table run does).  Both give the same rows.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from ..errors import InputError
from .corpus import REPORT_METRICS, Corpus, StatisticsArray, word_counts
from .resampled import Layout
from .shared import BLOCK_BYTES, SHARED_METRICS, shared_statistics


def _label(keys, values) -> str:
    return " ".join(f"{k}={v}" for k, v in zip(keys, values)) if keys else "the table"


class _Codes:
    """Global codes of the values of one or more key columns, across batches."""

    def __init__(self):
        self.ids, self.values = {}, []

    def add(self, columns, names, first_row, errors) -> np.ndarray:
        from ..tables.groups import factorize

        codes, keys = factorize(columns, names, first_row, errors)
        mapping = np.array([self.ids.setdefault(key, len(self.ids)) for key in keys] or [0],
                           dtype=np.int64)
        for key in keys:
            if self.ids[key] == len(self.values):
                self.values.append(key)
        return mapping[codes]


def _first_pass(source, system, keys, segment, batch_size, errors):
    from ..tables import open_table

    columns = list(dict.fromkeys([system, *keys] + ([segment] if segment else [])))
    table = open_table(source, columns, batch_size, dictionary_columns=[system, *keys],
                       encoding_errors=errors)
    systems, groups, segments = _Codes(), _Codes(), _Codes()
    parts = ([], [], [])
    done = 0
    for batch in table.batches():
        if batch.num_rows == 0:
            continue
        parts[0].append(systems.add([batch.column(system)], [system], done, errors))
        parts[1].append(groups.add([batch.column(k) for k in keys], keys, done, errors) if keys
                        else np.zeros(batch.num_rows, dtype=np.int64))
        if segment:
            parts[2].append(segments.add([batch.column(segment)], [segment], done, errors))
        done += batch.num_rows
    if done == 0:
        raise InputError("the table has no rows: nothing to report")
    join = lambda p: np.concatenate(p).astype(np.int32)  # noqa: E731  (codes: 4 bytes a row)
    return (join(parts[0]), [v[0] for v in systems.values], join(parts[1]),
            groups.values if keys else [()], join(parts[2]) if segment else None,
            [v[0] for v in segments.values])


def _baseline(baseline, names, column) -> int:
    if baseline is None:
        return 0
    for code, value in enumerate(names):
        if value == baseline or str(value) == str(baseline):
            return code
    raise InputError(f"baseline {baseline!r} is not a value of column {column!r}")


def align(sys_codes, group_codes, segment_codes, base, names, keys, group_values,
          segment_values):
    """Each row's segment (int64), the baseline's rows being segments ``0..n-1`` in table
    order; an InputError naming the group and system of rows that do not align."""
    base_rows = np.flatnonzero(sys_codes == base)
    n_groups = len(group_values)
    dest = np.empty(sys_codes.size, dtype=np.int64)
    dest[base_rows] = np.arange(base_rows.size)
    base_groups = group_codes[base_rows]
    base_counts = np.bincount(base_groups, minlength=n_groups)
    if segment_codes is not None:
        width = max(len(segment_values), 1)
        base_keys = base_groups * width + segment_codes[base_rows]
        order = np.argsort(base_keys, kind="stable")
        sorted_keys = base_keys[order]
        if np.any(sorted_keys[1:] == sorted_keys[:-1]):
            g = int(sorted_keys[np.flatnonzero(sorted_keys[1:] == sorted_keys[:-1])[0]] // width)
            raise InputError(f"{_label(keys, group_values[g])}: the baseline "
                             f"{names[base]!r} has a segment id twice")
    else:
        base_order = np.argsort(base_groups, kind="stable")
    for code, name in enumerate(names):
        if code == base:
            continue
        rows = np.flatnonzero(sys_codes == code)
        groups = group_codes[rows]
        counts = np.bincount(groups, minlength=n_groups)
        wrong = np.flatnonzero(counts != base_counts)
        if wrong.size:
            g = int(wrong[0])
            raise InputError(f"{_label(keys, group_values[g])}: system {name!r} has "
                             f"{counts[g]} segments but the baseline {names[base]!r} has "
                             f"{base_counts[g]}; every system needs one row per segment")
        if segment_codes is None:
            dest[rows[np.argsort(groups, kind="stable")]] = base_order
            continue
        wanted = groups * width + segment_codes[rows]
        where = np.searchsorted(sorted_keys, wanted)
        found = (where < sorted_keys.size) & (sorted_keys[np.minimum(where,
                                                                     sorted_keys.size - 1)]
                                              == wanted)
        if not found.all():
            bad = int(np.flatnonzero(~found)[0])
            raise InputError(f"{_label(keys, group_values[int(groups[bad])])}: system {name!r} "
                             f"has segment {segment_values[int(segment_codes[rows[bad]])]!r}, "
                             f"which the baseline {names[base]!r} lacks")
        targets = order[where]
        if np.unique(targets).size != targets.size:
            raise InputError(f"system {name!r} has a segment id twice")
        dest[rows] = targets
    return dest, base_rows


def from_table(source, hyp="hyp", refs=("ref",), system="system", group_by=(), segment=None,
               src=None, metrics=(("bleu", {}),), baseline=None, null_as_empty=False,
               encoding_errors="strict", batch_size=1 << 16, block_bytes=BLOCK_BYTES) -> Corpus:
    """A corpus from a table (see the module docstring); arguments as for
    :func:`fastbleu.tables.paired_table`, ``src`` naming a source column to show
    beside the examples, ``metrics`` as ``(key, options)`` pairs and ``block_bytes`` the
    hypothesis text a pass over the table keeps (:mod:`fastbleu.compare.shared`)."""
    from ..tables import TableJob
    from ..tables.reference_counts import counted_job

    keys = list(group_by or ())
    for key, _ in metrics:
        if key not in REPORT_METRICS:
            raise InputError(f"a report scores {', '.join(REPORT_METRICS)}; not {key!r}")
    if system in keys or system == segment:
        raise InputError(f"the system column {system!r} cannot also be a group or segment "
                         "column")
    try:
        job = TableJob.create(hyp, list(refs), None, None, None, null_as_empty,
                              encoding_errors, batch_size)
    except (TypeError, ValueError) as error:
        raise InputError(str(error)) from None
    job = counted_job(source, dataclasses.replace(job, metrics=tuple(metrics)))  # TER > 16 refs
    metric_set = job.metric_set()
    sys_codes, names, group_codes, group_values, segment_codes, segment_values = _first_pass(
        source, system, keys, segment, batch_size, encoding_errors)
    names = [str(name) for name in names]
    base = _baseline(baseline, names, system)
    dest, base_rows = align(sys_codes, group_codes, segment_codes, base, names, keys,
                            group_values, segment_values)
    dest = dest.astype(np.int32) if dest.size < 1 << 31 else dest
    order = [base] + [code for code in range(len(names)) if code != base]
    position = np.empty(len(names), dtype=np.int64)
    position[order] = np.arange(len(order))
    n = base_rows.size
    layout = Layout([metric.formula for metric in metric_set.metrics], len(names))
    array = StatisticsArray(n, layout)
    ref_words = np.zeros(n, dtype=np.int64)
    if len(names) > 1 and all(key in SHARED_METRICS for key, _ in metrics):
        num_refs = shared_statistics(source, job, metric_set, sys_codes, dest, position, base,
                                     n, array, ref_words, null_as_empty, src, batch_size,
                                     encoding_errors, block_bytes)
    else:
        num_refs = _row_statistics(source, job, metric_set, sys_codes, dest, position, src,
                                   array, ref_words, batch_size, encoding_errors)
    group = group_codes[base_rows] if keys else None

    def fetch(segments, chosen):
        rows = np.flatnonzero(np.isin(dest, segments))  # a pass over the codes, no table
        row_of = {(int(position[sys_codes[r]]), int(dest[r])): int(r) for r in rows}
        return _fetch(source, hyp, job.refs, src, row_of, segments, chosen, batch_size,
                      encoding_errors)

    return Corpus([names[code] for code in order], metric_set.metrics, layout, array.array,
                  ref_words, num_refs, keys, group_values if keys else [], group, fetch)


def _row_statistics(source, job, metric_set, sys_codes, dest, position, src, array, ref_words,
                    batch_size, encoding_errors) -> int:
    """Every row scored with its own references (the table pipeline,
    :meth:`fastbleu.tables.TableJob.statistics`); return the references per segment."""
    import pyarrow as pa

    from ..tables import open_table

    columns = list(dict.fromkeys([job.hyp, *job.refs] + ([src] if src else [])))
    table = open_table(source, columns, batch_size, encoding_errors=encoding_errors)

    def store(batch, stats, done):
        """Put a batch's statistics where its rows' systems and segments are."""
        here = position[sys_codes[done:done + batch.num_rows]]
        segs = dest[done:done + batch.num_rows]
        systems = np.unique(here)
        for s in systems:
            mask = None if systems.size == 1 else here == s  # a batch of one system: no copy
            rows, where = (stats, segs) if mask is None else (stats[mask], segs[mask])
            for m, columns_of in enumerate(metric_set.slices):
                array.put(m, int(s), where, rows[:, columns_of])
        first = here == 0
        if first.any():
            ref_words[segs[first]] = word_counts(batch.column(job.refs[0]).filter(
                pa.array(first)))

    # the table pipeline: two batches at a time, each on its own thread (TableJob.statistics)
    _, _, info = job.statistics(table.batches(), metric_set, on_batch=store).ordered()
    low, high = min(g.min_refs for g in info), max(g.max_refs for g in info)
    return low if low == high else -1


def _fetch(source, hyp, refs, src, row_of, segments, chosen, batch_size, errors) -> dict:
    """Read the table again and keep the rows of ``segments`` of the ``chosen`` systems
    (their hypotheses) and of the baseline (references and source)."""
    import pyarrow as pa

    from ..tables import open_table

    wanted = {s: np.array([row_of[s, int(g)] for g in segments], dtype=np.int64)
              for s in chosen}
    base = np.array([row_of[0, int(g)] for g in segments], dtype=np.int64)
    rows = np.unique(np.concatenate([base, *wanted.values()]))
    columns = list(dict.fromkeys([hyp, *refs] + ([src] if src else [])))
    table = open_table(source, columns, batch_size, encoding_errors=errors)
    found, done = {}, 0
    for batch in table.batches():
        inside = rows[(rows >= done) & (rows < done + batch.num_rows)]
        if inside.size:
            taken = batch.take(pa.array(inside - done))
            values = {name: taken.column(name).to_pylist() for name in columns}
            for k, row in enumerate(inside.tolist()):
                found[row] = {name: values[name][k] for name in columns}
        done += batch.num_rows
        if done > rows[-1]:
            break

    def text(row, column):
        value = found[row][column]
        if isinstance(value, list):
            return value
        return "" if value is None else str(value)

    ref_lists = []
    for row in base.tolist():
        value = text(row, refs[0]) if len(refs) == 1 else [text(row, r) for r in refs]
        ref_lists.append(value if isinstance(value, list) else [value])
    width = max(len(r) for r in ref_lists)
    return {"hyp": {s: [text(row, hyp) for row in wanted[s].tolist()] for s in chosen},
            "ref": [[(r[k] if k < len(r) and r[k] is not None else "") for r in ref_lists]
                    for k in range(width)],
            "src": [text(row, src) for row in base.tolist()] if src else None}
