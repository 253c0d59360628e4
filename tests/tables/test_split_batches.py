"""The last batches of a table split into jobs of consecutive rows (issue 26: every core).

On many threads :meth:`fastbleu.tables.job.TableJob.statistics` hands the last
reader batches of a table of known rows to the pool as two or four jobs
(:func:`~fastbleu.tables.job.tail_pieces`), merged in row order.  Every score,
every group's order and signature, and the ``segments_out`` file (its rows and
its row groups) must be those of whole batches, however the batches are split.
"""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import fastbleu
from fastbleu.errors import InputError
from fastbleu.tables import job as job_module
from testkit.data import sample_table


def _score(path, out, batch_size, metrics, **options):
    result = fastbleu.score_table(path, "hyp", ["ref", "ref2"], group_by="system", doc="doc",
                                  segments_out=str(out), batch_size=batch_size,
                                  metrics=metrics, **options)
    written = pq.ParquetFile(str(out))
    groups = [written.metadata.row_group(k).num_rows for k in range(written.num_row_groups)]
    return result.to_pydict(), written.read(), groups


def _split(monkeypatch, pieces):
    """Split batch ``k`` (in reading order) into ``pieces[k % len(pieces)]`` jobs."""
    seen = []

    def tail_pieces(rows, rows_left, batch_size, threads):
        seen.append(rows)
        return min(rows, pieces[(len(seen) - 1) % len(pieces)])
    monkeypatch.setattr(job_module, "SPLIT_FROM_THREADS", 1)
    monkeypatch.setattr(job_module, "tail_pieces", tail_pieces)
    return seen


@pytest.fixture(scope="module")
def table_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("split") / "t.parquet"
    pq.write_table(sample_table(), path, row_group_size=700)
    return str(path)


@pytest.mark.parametrize("batch_size", [64, 333, 1024])
@pytest.mark.parametrize("metrics", [None, ["bleu", "chrf"], ["ter"]])
def test_split_batches_give_the_whole_batches_results(table_path, tmp_path, monkeypatch,
                                                      batch_size, metrics):
    whole = _score(table_path, tmp_path / "whole.parquet", batch_size, metrics)
    seen = _split(monkeypatch, [1, 2, 4, 3])
    split = _score(table_path, tmp_path / "split.parquet", batch_size, metrics)
    assert len(seen) > 2  # batches were split (the test would pass vacuously otherwise)
    assert split[0] == whole[0]
    assert split[1].equals(whole[1])
    assert split[2] == whole[2]  # the same row groups in segments_out


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(pieces=st.lists(st.integers(1, 9), min_size=1, max_size=5),
       batch_size=st.integers(2, 900))
def test_any_split_of_any_batches_changes_nothing(table_path, tmp_path_factory, pieces,
                                                  batch_size):
    folder = tmp_path_factory.mktemp("any")
    whole = _score(table_path, folder / "whole.parquet", batch_size, None)
    with pytest.MonkeyPatch.context() as monkeypatch:
        _split(monkeypatch, pieces)
        split = _score(table_path, folder / "split.parquet", batch_size, None)
    assert split[0] == whole[0] and split[1].equals(whole[1]) and split[2] == whole[2]


@pytest.mark.parametrize("bad", [1000, 1234, 1499])
def test_an_error_in_a_piece_names_its_table_row(tmp_path, monkeypatch, bad):
    """The batch's first piece (in ordered_map's window) or one started beside it."""
    table = sample_table()
    hyps = table.column("hyp").to_pylist()
    hyps[bad] = None
    path = tmp_path / "null.parquet"
    pq.write_table(table.set_column(0, "hyp", pa.array(hyps)), path)
    _split(monkeypatch, [4])
    with pytest.raises(InputError, match=f"row {bad}: the hypothesis is null"):
        fastbleu.score_table(str(path), "hyp", "ref", group_by="system", batch_size=500)


@pytest.mark.parametrize("threads", [1, 2, 3, 4, 16, 64])
def test_tail_pieces(threads):
    """Whole batches but in the last round of the pool; the smallest piece is kept."""
    size = 1 << 16
    counts = [job_module.tail_pieces(size, left * size, size, threads)
              for left in range(1, 200)]
    assert counts[threads:] == [1] * (199 - threads)  # before the last round: whole
    assert all(c in (1, 2, 4) for c in counts) and counts == sorted(counts, reverse=True)
    assert job_module.tail_pieces(20_000, 20_000, size, 16) == 1  # pieces >= 16,384 rows
    assert job_module.tail_pieces(40_000, 40_000, size, 16) == 2
