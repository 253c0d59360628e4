"""fastbleu.dask: a real LocalCluster (2 worker processes) gives one process's numbers exactly."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastbleu
import fastbleu.dask as fd
from fastbleu import BLEU
from fastbleu.cli import main
from fastbleu.errors import InputError
from fastbleu.tables.job import TableJob
from testkit.data import needs_wmt22, read_lines, wmt22_references, wmt22_system, wmt22_systems
from testkit.data import ROOT, sample_table

REFS = ["ref", "ref2"]

#: A test on a real cluster runs with -m slow (issue 28: seconds each, and a cluster for each
#: xdist worker that gets one), but for the quick run's one cluster test,
#: test_sample_dataset_equals_one_process.
on_cluster = pytest.mark.slow


def _shuffled_sample() -> pa.Table:
    """The sample table with its documents interleaved, so groups first appear in many partitions."""
    table = sample_table()
    order = np.random.default_rng(7).permutation(table.num_rows // 100)
    rows = np.concatenate([np.arange(100 * d, 100 * d + 100) for d in order])
    return table.take(pa.array(rows))


@pytest.fixture(scope="module")
def sample_dataset(tmp_path_factory):
    """The shuffled sample as a directory of 4 Parquet files with row groups of 100 rows."""
    path = tmp_path_factory.mktemp("dask") / "sample"
    path.mkdir()
    table = _shuffled_sample()
    for k in range(4):
        pq.write_table(table.slice(500 * k, 500), path / f"part-{k}.parquet", row_group_size=100)
    return path


@pytest.fixture(scope="module")
def client(sample_dataset):
    pytest.importorskip("distributed")
    # Load (or compile) the kernels here first: the workers then load them from numba's cache.
    fastbleu.score_table(sample_dataset, refs=REFS, tokenize="char")
    fastbleu.score_table(sample_dataset, refs=REFS)
    with fd.connect(workers=2) as client:
        yield client


# -- the group-by reduction, without a cluster -------------------------------------------


def test_partials_merged_in_any_order_keep_first_appearance_order():
    table = _shuffled_sample()
    job = TableJob.create("hyp", REFS, ["system"], "doc", None, False, "strict", 1 << 16, {})
    bleu = job.metric()
    whole = job.scores(job.statistics(table.to_batches(max_chunksize=300), bleu), bleu)
    partials = [job.statistics([batch], bleu, 300 * p, partition=p)
                for p, batch in enumerate(table.to_batches(max_chunksize=300))]
    from fastbleu.dask.partitions import merge_groups

    merged = merge_groups(*reversed(partials))  # later partitions first
    result = job.scores(merged, bleu)
    assert result.key_values == whole.key_values
    assert result.key_values[:2] != sorted(result.key_values)[:2]  # the order is not trivial
    assert (result.statistics == whole.statistics).all()
    assert result.to_table().equals(whole.to_table())
    assert merged.rows == table.num_rows
    assert partials[0].rows == 300  # merging did not change the inputs


# -- scoring on the cluster --------------------------------------------------------------


def test_sample_dataset_equals_one_process(client, sample_dataset):
    options = {"refs": REFS, "group_by": ["system", "pair"], "doc": "doc"}
    expected = fastbleu.score_table(sample_dataset, **options)
    result = fd.score_table(sample_dataset, client=client, partition_rows=250, **options)
    assert result.num_rows == 20
    assert result.schema == expected.schema
    for name in expected.column_names:
        assert result.column(name).to_pylist() == expected.column(name).to_pylist(), name
    assert result.equals(expected)
    # without groups, with other options, and from a Dask DataFrame
    for options in ({"refs": "ref"}, {"refs": REFS, "group_by": "system", "lowercase": True,
                                      "tokenize": "char", "smooth_method": "floor"}):
        assert fd.score_table(sample_dataset, client=client, partition_rows=100,
                              **options).equals(fastbleu.score_table(sample_dataset, **options))
    import dask.dataframe as dd

    ddf = dd.read_parquet(sample_dataset)
    assert ddf.npartitions == 4
    options = {"refs": REFS, "group_by": ["system", "pair"], "doc": "doc"}
    assert fd.score_table(ddf, client=client, **options).equals(
        fastbleu.score_table(ddf.compute(), **options))


@on_cluster
def test_segments_out_is_a_directory_of_the_same_rows(client, sample_dataset, tmp_path):
    single, parts = tmp_path / "one.parquet", tmp_path / "parts"
    fastbleu.score_table(sample_dataset, refs=REFS, group_by="system", segments_out=str(single))
    parts.mkdir()  # an earlier run's directory (marked as fastbleu's) is replaced whole
    (parts / ".fastbleu-segments").write_text("an older run\n")
    (parts / "part.00009.parquet").write_bytes(b"an older run")
    fd.score_table(sample_dataset, refs=REFS, group_by="system", segments_out=str(parts),
                   client=client, partition_rows=300)
    names = sorted(os.listdir(parts))
    assert len(names) == 9 and names[1] == "part.00000.parquet"  # 4 files x 2 pieces, old gone
    assert pq.read_table(parts).equals(pq.read_table(single))
    assert sorted(os.listdir(tmp_path)) == ["one.parquet", "parts"]  # no temporary left
    import dask.dataframe as dd

    ddf = dd.read_parquet(sample_dataset)  # partitions do not know their first row: counted
    fd.score_table(ddf, refs=REFS, segments_out=str(tmp_path / "frame"), client=client)
    from_frame, expected = pq.read_table(tmp_path / "frame"), pq.read_table(single)
    assert len(os.listdir(tmp_path / "frame")) == 5  # 4 parts and the marker
    for name in ["row", "sentence_bleu", "hyp_len", "match_4"]:
        assert from_frame.column(name).to_pylist() == expected.column(name).to_pylist()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(InputError, match="not empty and was not written by fastbleu"):
        fd.score_table(sample_dataset, segments_out=str(tmp_path / "mine"), client=client)


@on_cluster
def test_several_metrics_on_the_cluster_equal_one_process(client, sample_dataset, tmp_path):
    import sacrebleu

    metrics = ["bleu", "chrf", fastbleu.CHRF(word_order=2)]
    options = {"refs": REFS, "group_by": "system", "metrics": metrics}
    expected = fastbleu.score_table(sample_dataset, segments_out=str(tmp_path / "one.parquet"),
                                    **options)
    result = fd.score_table(sample_dataset, client=client, partition_rows=250,
                            segments_out=str(tmp_path / "parts"), **options)
    assert result.equals(expected) and "chrf2_score" in result.column_names
    assert pq.read_table(tmp_path / "parts").equals(pq.read_table(tmp_path / "one.parquet"))
    table = pq.read_table(sample_dataset)
    for row in result.to_pylist():  # each group's chrF is sacrebleu's on its rows
        rows = table.filter(pa.array(np.asarray(table.column("system").to_pylist())
                                     == row["system"]))
        hyps, refs = rows.column("hyp").to_pylist(), [rows.column(r).to_pylist() for r in REFS]
        assert row["chrf1_score"] == sacrebleu.CHRF().corpus_score(hyps, refs).score


@on_cluster
def test_data_errors_name_the_row_of_the_dataset(client, tmp_path):
    table = sample_table().slice(0, 900)
    hyps = table.column("hyp").to_pylist()
    hyps[777] = None
    table = table.set_column(0, "hyp", pa.array(hyps))
    for k in range(3):
        pq.write_table(table.slice(300 * k, 300), tmp_path / f"p{k}.parquet", row_group_size=50)
    with pytest.raises(InputError, match=r"column 'hyp', row 777: the hypothesis is null"):
        fd.score_table(tmp_path, client=client, partition_rows=100)
    result = fd.score_table(tmp_path, client=client, null_as_empty=True)
    assert result.equals(fastbleu.score_table(tmp_path, null_as_empty=True))
    # a group whose tokenizer changes between partitions, found while merging
    tokens = pa.table({"hyp": ["a b"] * 4, "ref": ["a b"] * 4, "system": ["S"] * 4,
                       "tok": ["13a", "13a", "char", "char"]})
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    for k in range(2):
        pq.write_table(tokens.slice(2 * k, 2), mixed / f"p{k}.parquet")
    with pytest.raises(InputError, match=r"group \('S',\) mixes the tokenizers \['13a', 'char'\]"):
        fd.score_table(mixed, group_by="system", tokenize_column="tok", client=client)
    per_row = fd.score_table(mixed, group_by="tok", tokenize_column="tok", client=client)
    assert per_row.equals(fastbleu.score_table(mixed, group_by="tok", tokenize_column="tok"))


@on_cluster
@needs_wmt22
def test_wmt22_dataset_equals_one_process(client, tmp_path):
    rows = {"hyp": [], "ref": [], "system": [], "pair": []}
    for pair in ("de-en", "en-de", "cs-en"):
        ref = read_lines(wmt22_references(pair)[0])
        for system in wmt22_systems(pair)[:3]:
            hyps = read_lines(wmt22_system(pair, system))
            rows["hyp"] += hyps
            rows["ref"] += ref
            rows["system"] += [system] * len(hyps)
            rows["pair"] += [pair] * len(hyps)
    table = pa.table(rows)
    bounds = np.linspace(0, table.num_rows, 7).astype(int)
    for k in range(6):
        pq.write_table(table.slice(bounds[k], bounds[k + 1] - bounds[k]),
                       tmp_path / f"part-{k}.parquet", row_group_size=1000)
    options = {"group_by": ["system", "pair"]}
    result = fd.score_table(tmp_path, client=client, partition_rows=3000, **options)
    assert result.num_rows == 9
    assert result.equals(fastbleu.score_table(tmp_path, **options))
    assert fd.score_table(tmp_path, client=client, lowercase=True).equals(
        fastbleu.score_table(tmp_path, lowercase=True))

    expected = BLEU().segment_statistics(rows["hyp"], [rows["ref"]])
    stats = fd.segment_statistics(tmp_path, client=client, partition_rows=3000)
    assert stats.dtype == np.int64 and stats.shape == (table.num_rows, 10)
    np.testing.assert_array_equal(stats, expected)
    per_system = fd.segment_statistics(tmp_path, group_by=["system", "pair"], client=client,
                                       partition_rows=3000)
    assert list(per_system) == [tuple(row.values()) for row in
                                result.select(["system", "pair"]).to_pylist()]
    keys = list(zip(rows["system"], rows["pair"]))
    for key, group in per_system.items():
        members = np.array([k == key for k in keys])
        np.testing.assert_array_equal(group, expected[members])


@on_cluster
def test_segment_statistics_of_a_dask_dataframe(client, sample_dataset):
    import dask.dataframe as dd

    ddf = dd.read_parquet(sample_dataset)
    table = pq.read_table(sample_dataset)
    hyps, refs = table.column("hyp").to_pylist(), [table.column(r).to_pylist() for r in REFS]
    stats = fd.segment_statistics(ddf, refs=REFS, max_ngram_order=6, client=client)
    np.testing.assert_array_equal(stats, BLEU(max_ngram_order=6).segment_statistics(hyps, refs))
    grouped = fd.segment_statistics(ddf, refs=REFS, group_by="system", client=client)
    systems = np.array(table.column("system").to_pylist())
    assert list(grouped) == [(s,) for s in dict.fromkeys(systems)]
    full = BLEU().segment_statistics(hyps, refs)
    for (system,), group in grouped.items():
        np.testing.assert_array_equal(group, full[systems == system])


@on_cluster
def test_chrf_statistics_and_sentence_scores_on_the_cluster(client, sample_dataset):
    """metric= gives any metric's statistics and sentence scores on Dask (chrF++ here),
    equal to the metric's own on the client; BLEU's options without BLEU are refused."""
    import dask.dataframe as dd
    from sacrebleu.metrics import CHRF as SacreCHRF

    ddf = dd.read_parquet(sample_dataset)
    table = pq.read_table(sample_dataset)
    hyps, refs = table.column("hyp").to_pylist(), [table.column(r).to_pylist() for r in REFS]
    chrf = fastbleu.CHRF(word_order=2)
    stats = fd.segment_statistics(ddf, refs=REFS, metric=chrf, client=client)
    np.testing.assert_array_equal(stats, chrf.segment_statistics(hyps, refs))
    assert stats[:50].tolist() == SacreCHRF(word_order=2)._extract_corpus_statistics(
        hyps[:50], [r[:50] for r in refs])
    grouped = fd.segment_statistics(ddf, refs=REFS, group_by="system", metric="chrf",
                                    client=client)
    systems = np.array(table.column("system").to_pylist())
    full = fastbleu.CHRF().segment_statistics(hyps, refs)
    for (system,), group in grouped.items():
        np.testing.assert_array_equal(group, full[systems == system])
    scored = fd.sentence_scores(ddf, refs=REFS, metric=chrf).compute()
    assert scored.columns[-1] == "sentence_chrf"
    np.testing.assert_array_equal(scored["sentence_chrf"].to_numpy(),
                                  chrf.sentence_scores(hyps, refs))
    with pytest.raises(ValueError):
        fd.sentence_scores(ddf, refs=REFS, metric="chrf", tokenize="intl")


@on_cluster
def test_ter_on_the_cluster_equals_one_process(client, tmp_path):
    """TER beside BLEU on the cluster: the table, segments_out, statistics and sentence scores
    equal one process's (tests/tables/test_table_ter.py checks those against sacrebleu), and
    sacrebleu's sentence TER on a few rows; rows with 1, 16 and 17 references share one scale.
    286 rows of the shuffled sample in 3 files of 2 row groups: TER is the slowest metric."""
    import dask.dataframe as dd
    from sacrebleu.metrics import TER as SacreTER

    from fastbleu import TER

    dataset = tmp_path / "dataset"
    dataset.mkdir()
    table = _shuffled_sample().take(pa.array(np.arange(0, 2000, 7)))  # every group, mixed
    for k in range(3):
        pq.write_table(table.slice(100 * k, 100), dataset / f"part-{k}.parquet",
                       row_group_size=50)
    ter = fastbleu.TER(normalized=True)
    options = {"refs": REFS, "group_by": ["system", "doc"], "metrics": ["bleu", ter]}
    expected = fastbleu.score_table(dataset, segments_out=str(tmp_path / "one.parquet"),
                                    **options)
    result = fd.score_table(dataset, client=client, partition_rows=50,
                            segments_out=str(tmp_path / "parts"), **options)
    assert result.equals(expected) and result.num_rows == 20
    assert result.column_names[-4:] == ["ter_score", "ter_num_edits", "ter_ref_length",
                                        "ter_signature"]
    assert pq.read_table(tmp_path / "parts").equals(pq.read_table(tmp_path / "one.parquet"))

    ddf = dd.read_parquet(dataset)
    hyps, refs = table.column("hyp").to_pylist(), [table.column(r).to_pylist() for r in REFS]
    full = ter.segment_statistics(hyps, refs)
    np.testing.assert_array_equal(fd.segment_statistics(ddf, refs=REFS, metric=ter,
                                                        client=client), full)
    grouped = fd.segment_statistics(dataset, refs=REFS, group_by="system", metric="ter",
                                    client=client, partition_rows=50)
    systems = np.array(table.column("system").to_pylist())
    plain = fastbleu.TER().segment_statistics(hyps, refs)
    assert sorted(grouped) == [("A",), ("B",)]
    for (system,), group in grouped.items():
        np.testing.assert_array_equal(group, plain[systems == system])
    scored = fd.sentence_scores(ddf, refs=REFS, metric=ter).compute()
    assert scored.columns[-1] == "sentence_ter"
    sentence = scored["sentence_ter"].to_numpy()
    np.testing.assert_array_equal(sentence, ter.formula.scores(full))
    sacre = SacreTER(normalized=True)
    assert sentence[:20].tolist() == [sacre.sentence_score(h, [r[i] for r in refs]).score
                                      for i, h in enumerate(hyps[:20])]
    with pytest.raises(TypeError, match=r"pass fastbleu.TER\(normalized=True\) in metrics"):
        fd.sentence_scores(ddf, refs=REFS, metric="ter", normalized=True)

    # 1, 16 and 17 references a row (a list column): one scale (lcm(16, 17) = 272) for the
    # whole table, counted by a first pass over the partitions
    many = tmp_path / "many"
    many.mkdir()
    lists = []
    for k in range(2):
        rows = {"hyp": ["a b c", "a b", "b"], "ref": [["a b"], ["a b"] * (17 if k else 16),
                                                     ["a c"]]}
        lists += rows["ref"]
        pq.write_table(pa.table(rows), many / f"p{k}.parquet")
    on_cluster = fd.score_table(many, metrics=["ter"], client=client)
    assert on_cluster.equals(fastbleu.score_table(many, metrics=["ter"]))
    expected = SacreTER().corpus_score(["a b c", "a b", "b"] * 2, [
        [row[r] if r < len(row) else None for row in lists] for r in range(17)])
    assert on_cluster.column("score")[0].as_py() == pytest.approx(expected.score, abs=1e-9)
    with pytest.raises(InputError, match=r"need the metric built with reference_scale=272"):
        fd.segment_statistics(many, metric="ter", client=client)
    fixed = TER(reference_scale=272)
    stats = fd.segment_statistics(many, metric=fixed, client=client)
    assert fixed.formula.score(stats.sum(axis=0)).score == on_cluster.column("score")[0].as_py()


@on_cluster
def test_sentence_scores_column_written_to_parquet(client, sample_dataset, tmp_path):
    import dask.dataframe as dd

    ddf = dd.read_parquet(sample_dataset)
    scored = fd.sentence_scores(ddf, refs=REFS, effective_order=True)
    assert scored.columns[-1] == "sentence_bleu" and scored.npartitions == 4
    scored.to_parquet(tmp_path / "scored", write_index=False)
    written = pq.read_table(tmp_path / "scored")
    table = pq.read_table(sample_dataset)
    assert written.column("hyp").to_pylist() == table.column("hyp").to_pylist()
    expected = BLEU(effective_order=True).sentence_scores(
        table.column("hyp").to_pylist(), [table.column(r).to_pylist() for r in REFS])
    np.testing.assert_array_equal(written.column("sentence_bleu").to_numpy(), expected)
    plain = fd.sentence_scores(ddf, refs="ref", column="bleu").compute()
    np.testing.assert_array_equal(plain["bleu"].to_numpy(), BLEU().sentence_scores(
        table.column("hyp").to_pylist(), [table.column("ref").to_pylist()]))
    with pytest.raises(ValueError, match="already has a column 'hyp'"):
        fd.sentence_scores(ddf, column="hyp")


def _slow(frame):
    time.sleep(0.2)
    return frame


@on_cluster
def test_a_worker_killed_mid_job_changes_nothing(client, sample_dataset):
    import cloudpickle
    import dask.dataframe as dd

    cloudpickle.register_pickle_by_value(sys.modules[__name__])  # _slow, for the workers
    try:
        ddf = dd.from_pandas(pq.read_table(sample_dataset).to_pandas(), npartitions=40)
        slow = ddf.map_partitions(_slow, meta=ddf._meta)
        options = {"refs": REFS, "group_by": ["system", "pair"], "doc": "doc"}
        expected = fastbleu.score_table(ddf.compute(), **options)
        pids = client.run(os.getpid)
        victim = sorted(pids)[0]
        with ThreadPoolExecutor(1) as runner:
            job = runner.submit(fd.score_table, slow, client=client, **options)
            deadline = time.monotonic() + 20
            while not any(client.processing().values()) and time.monotonic() < deadline:
                time.sleep(0.05)
            time.sleep(0.8)  # some partitions done, more running and waiting
            assert not job.done()
            os.kill(pids[victim], signal.SIGKILL)
            result = job.result(timeout=120)
        assert result.equals(expected)
        client.wait_for_workers(2, timeout=60)
        assert pids[victim] not in client.run(os.getpid).values()  # the nanny started a new one
        # the new worker has connect()'s environment too
        assert set(client.run(os.getenv, "NUMBA_NUM_THREADS").values()) == {"1"}
        assert set(client.run(os.getenv, "MALLOC_TRIM_THRESHOLD_").values()) == {None}
    finally:
        cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


# -- the command line --------------------------------------------------------------------


@on_cluster
def test_cli_dask_workers_and_scheduler_json_equal_one_process(client, sample_dataset, capsys):
    argv = [str(sample_dataset), "--ref-column", "ref", "--ref-column", "ref2", "--group-by",
            "system", "--doc-column", "doc", "-w", "4"]
    assert main(argv) == 0
    expected = json.loads(capsys.readouterr().out)
    assert len(expected) == 20
    assert main(argv + ["--dask-workers", "2"]) == 0
    captured = capsys.readouterr()
    assert json.loads(captured.out) == expected and captured.err == ""
    assert main(argv + ["--scheduler", client.scheduler.address]) == 0
    assert json.loads(capsys.readouterr().out) == expected


@on_cluster
def test_paired_bootstrap_on_gathered_statistics_equals_the_table_test(client, sample_dataset):
    """Significance on a cluster: statistics gathered per system, the tests run on the client."""
    from fastbleu.significance.tests import paired_ar, paired_bootstrap
    from fastbleu.tables import paired_table

    grouped = fd.segment_statistics(sample_dataset, refs=REFS, group_by="system", client=client)
    blocks = list(grouped.values())
    for test, run in (("bs", paired_bootstrap), ("ar", paired_ar)):
        ours = run(blocks, bleu=BLEU(), n_samples=300, seed=5)
        one_process = paired_table(sample_dataset, refs=REFS, system="system", test=test,
                                   n_samples=300, seed=5)
        assert [name for name in one_process.systems[0]] == [key[0] for key in grouped]
        assert ours == one_process.results[0]
        assert ours[1].p_value is not None and ours[0].p_value is None


def test_cli_dask_errors(sample_dataset, capsys, tmp_path):
    assert main([str(sample_dataset), "--dask-workers", "0"]) == 2
    assert "--dask-workers must be between 1 and" in capsys.readouterr().err
    text = str(tmp_path / "a.txt")
    open(text, "w").write("a b\n")
    assert main([text, "-i", text, "--dask-workers", "2"]) == 2
    assert "score a Parquet table" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([str(sample_dataset), "--dask-workers", "2", "--scheduler", "tcp://x:1"])
    assert main([str(sample_dataset), "--ref-column", "ref", "--system-column", "system",
                 "--paired-bs", "--dask-workers", "2"]) == 2
    assert "fastbleu.dask.segment_statistics" in capsys.readouterr().err


# -- arguments and the optional dependency ---------------------------------------------


def test_arguments_are_checked_before_any_work(sample_dataset, tmp_path):
    pytest.importorskip("distributed")
    import dask.dataframe as dd

    with pytest.raises(InputError, match=r"no column 'target'; the columns are 'hyp', 'ref', "
                                         r"'ref2', 'system', 'doc', 'pair'"):
        fd.score_table(sample_dataset, hyp="target")
    ddf = dd.read_parquet(sample_dataset)
    with pytest.raises(InputError, match=r"DataFrame: no column 'nope'; the columns are 'hyp'"):
        fd.score_table(ddf, refs=["nope"])
    with pytest.raises(TypeError, match="dask.dataframe.DataFrame, got Table"):
        fd.score_table(pq.read_table(sample_dataset))
    with pytest.raises(TypeError, match="must be a dask.dataframe.DataFrame"):
        fd.sentence_scores(str(sample_dataset))
    csv = tmp_path / "t.csv"
    csv.write_text("hyp,ref\na,a\n")
    with pytest.raises(InputError, match="read_csv"):
        fd.score_table(csv)
    with pytest.raises(ValueError, match="partition_rows must be a positive int"):
        fd.score_table(sample_dataset, partition_rows=0)
    with pytest.raises(ValueError, match="smooth"):
        fd.segment_statistics(sample_dataset, smooth_method="nope")
    with pytest.raises(ValueError, match="either a scheduler address or a number of workers"):
        with fd.connect():
            pass


def test_without_dask_the_error_names_the_extra(monkeypatch, sample_dataset, capsys):
    for name in ("dask", "dask.dataframe", "distributed"):
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(ImportError, match=r"pip install 'fastbleu\[dask\]'"):
        fd.score_table(sample_dataset)
    with pytest.raises(ImportError, match=r"fastbleu\[dask\]"):
        fd.segment_statistics(sample_dataset)
    assert main([str(sample_dataset), "--dask-workers", "2"]) == 2
    assert "pip install 'fastbleu[dask]'" in capsys.readouterr().err
    assert main([str(sample_dataset), "-b", "-f", "text"]) == 0  # one process needs no Dask


def test_one_process_does_not_import_dask(sample_dataset):
    code = ("import sys, fastbleu.dask; from fastbleu.cli import main; "
            f"main([{str(sample_dataset)!r}, '--group-by', 'system', '--quiet']); "
            "sys.exit(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('dask', 'distributed')) or None)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)[0]["system"] in ("A", "B")


@on_cluster
def test_cli_a_damaged_part_on_a_cluster_is_one_line_and_writes_nothing(tmp_path):
    """The QA's case: a damaged data page (footer intact) in a dataset scored with
    --dask-workers 1 --segments-out DIR: one ``fastbleu: error:`` line, no worker log."""
    pytest.importorskip("distributed")
    folder = tmp_path / "dataset"
    folder.mkdir()
    table = sample_table().select(["hyp", "ref", "system"])
    pq.write_table(table, folder / "part.0.parquet")
    damaged = folder / "part.1.parquet"
    pq.write_table(table, damaged, compression="none", use_dictionary=False)
    column = pq.ParquetFile(damaged).metadata.row_group(0).column(0)
    data = bytearray(damaged.read_bytes())
    for i in range(column.data_page_offset + 8, column.data_page_offset + 72):
        data[i] ^= 0xFF
    damaged.write_bytes(bytes(data))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        [str(ROOT),
         os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-m", "fastbleu", "dataset", "--dask-workers", "1",
                           "--segments-out", "segs", "--group-by", "system"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300,
                          stdin=subprocess.DEVNULL)
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "fastbleu: error: dataset/part.1.parquet: damaged Parquet data "
        + done.stderr.split("damaged Parquet data ", 1)[1].strip()], done.stderr
    assert os.listdir(tmp_path) == ["dataset"]


@on_cluster
def test_a_lost_signal_stops_the_wait_for_the_cluster(client):
    """A signal whose exception distributed's gc callback swallowed is only recorded
    (fastbleu.signals); the wait for the cluster looks for it every quarter second."""
    import threading

    import dask

    import fastbleu.signals as signals
    from fastbleu.dask.scoring import _compute

    slow = dask.delayed(time.sleep, pure=False)(4)
    start = time.monotonic()
    with pytest.raises(signals.Terminated) as stopped:
        with signals.terminating():
            # What the handler leaves when its exception is lost on the way.
            threading.Timer(0.5, signals._received.append, [signal.SIGTERM]).start()
            _compute(slow, client)
    assert stopped.value.signum == signal.SIGTERM
    assert time.monotonic() - start < 3
    time.sleep(4)  # the cancelled task's thread finishes its sleep before the next test


# -- one large file: partitions by row groups and workers, and the progress line (issue 28) --


@pytest.fixture(scope="module")
def single_file(tmp_path_factory):
    """The shuffled sample as ONE Parquet file of 20 row groups (100 rows each): far under
    the partition size, which once made it one partition for one worker."""
    path = tmp_path_factory.mktemp("single") / "single.parquet"
    pq.write_table(_shuffled_sample(), path, row_group_size=100)
    return path


def test_pieces_are_cut_for_every_thread(single_file, tmp_path):
    from fastbleu.tables.pieces import parquet_pieces

    assert len(parquet_pieces(single_file, REFS)) == 1  # one process: one piece is enough
    for threads in (2, 3, 8, 20, 50):
        pieces = parquet_pieces(single_file, REFS, min_pieces=threads)
        assert len(pieces) >= min(threads, 20)
        assert max(p.num_rows for p in pieces) <= max(100, -(-2000 // threads))
        groups = [g for p in pieces for g in p.row_groups]
        assert groups == list(range(20))  # every row group once, in order
        assert [p.first_row for p in pieces] == \
            np.cumsum([0] + [p.num_rows for p in pieces[:-1]]).tolist()
    # partition_rows still caps the pieces; a row group is never split
    assert {p.num_rows for p in parquet_pieces(single_file, REFS, 300, 2)} == {300, 200}
    whole = tmp_path / "whole.parquet"
    pq.write_table(_shuffled_sample(), whole)  # one row group
    assert len(parquet_pieces(whole, REFS, min_pieces=4)) == 1


@on_cluster
def test_one_file_keeps_every_worker_busy(client, single_file):
    from distributed import get_task_stream

    options = {"refs": REFS, "group_by": ["system", "pair"], "doc": "doc"}
    expected = fastbleu.score_table(single_file, **options)
    with get_task_stream(client) as stream:
        result = fd.score_table(single_file, client=client, **options)
    assert result.equals(expected)
    workers = {task["worker"] for task in stream.data
               if str(task["key"]).startswith("('group_statistics")
               or "group_statistics" in str(task["key"])}
    assert len(workers) == 2, stream.data
    stats = fd.segment_statistics(single_file, refs=REFS, client=client)
    assert (stats == BLEU().segment_statistics(
        _shuffled_sample().column("hyp").to_pylist(),
        [_shuffled_sample().column(r).to_pylist() for r in REFS])).all()


@on_cluster
def test_progress_line_on_a_cluster(client, single_file, capsys):
    fd.score_table(single_file, refs=REFS, client=client, progress=True)
    err = capsys.readouterr().err
    assert "2,000/2,000 rows (100%)" in err and err.endswith("\n")
    fd.score_table(single_file, refs=REFS, client=client)  # progress=False: nothing
    assert capsys.readouterr().err == ""
    argv = [str(single_file), "--ref-column", "ref", "--ref-column", "ref2", "-b"]
    assert main(argv) == 0
    score = capsys.readouterr().out
    assert main(argv + ["--scheduler", client.scheduler.address, "--progress"]) == 0
    captured = capsys.readouterr()
    assert captured.out == score and "2,000/2,000 rows (100%)" in captured.err
    assert main(argv + ["--scheduler", client.scheduler.address, "-q"]) == 0
    assert capsys.readouterr().err == ""
