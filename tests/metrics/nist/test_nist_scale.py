"""NIST at scale: large vocabularies and many distinct references against NLTK, the count
table's kernels against plain Python (keys shared by two orders, growth, probing past the
table's end), a table's first pass (row fingerprints, classes of groups with proportional
references, a table that changes between reads), and the memory refusal's one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

nltk_nist = pytest.importorskip("nltk.translate.nist_score")

from fastbleu import NIST, score_table  # noqa: E402
from fastbleu.nltk import corpus_nist  # noqa: E402
from fastbleu.errors import InputError  # noqa: E402
from fastbleu.metrics.nist.memory import NISTMemoryError, check_table, message  # noqa: E402
from fastbleu.metrics.nist.weights import CountsBuilder  # noqa: E402
from fastbleu._kernels.nist.counts import (COUNT_MASK, TAG_SHIFT, count_references,  # noqa: E402
                                           lookup)
from fastbleu._kernels.nist.counts import ORDER_MIX  # noqa: E402
from fastbleu.inputs.text import as_text_column  # noqa: E402
from fastbleu.statistics.tokens import References  # noqa: E402


def _words(rng, vocabulary: int, n: int, low: int = 0, high: int = 40) -> list[str]:
    """``n`` lines of Zipf-ish words from a vocabulary of ``vocabulary`` words."""
    ranks = np.minimum(rng.zipf(1.2, size=(n, high)), vocabulary) - 1
    lengths = rng.integers(low, high + 1, size=n)
    return [" ".join(f"w{r}" for r in ranks[i, :lengths[i]]) for i in range(n)]


# -- many distinct references, a large vocabulary: NLTK's numbers --------------------------

@pytest.mark.parametrize("seed", [1, 2])
def test_large_vocabulary_many_distinct_references_equal_nltk(seed):
    rng = np.random.default_rng(seed)
    n = 1500
    hyps = _words(rng, 20_000, n)
    refs = [_words(rng, 20_000, n, low=1), [None if rng.random() < 0.2 else s
                                          for s in _words(rng, 20_000, n, low=1)]]
    tokens = [[r[i].split() for r in refs if r[i] is not None] for i in range(n)]
    hyp_tokens = [h.split() for h in hyps]
    expected = nltk_nist.corpus_nist(tokens, hyp_tokens)
    assert corpus_nist(tokens, hyp_tokens) == expected  # bit for bit
    got = NIST(tokenize="none").corpus_score(hyps, refs).score
    assert got == pytest.approx(expected, rel=1e-12)
    # the counts grew many times from a small table; pieces merged give the same rows
    metric = NIST(tokenize="none")
    counts = [metric.reference_counts([r[a:a + 300] for r in refs]) for a in range(0, n, 300)]
    assert len(counts[0].merge(*counts[1:])) > 50_000
    fitted = metric.with_weights(counts[0].merge(*counts[1:]))
    assert (fitted.segment_statistics(hyps, refs) == metric.segment_statistics(hyps, refs)).all()


def test_one_segment_longer_than_the_table_grows_to():
    words = [f"t{i}" for i in range(20_000)]
    hyp = " ".join(words[::-1][:5000] + words[:3000])
    ref = " ".join(words)
    expected = nltk_nist.corpus_nist([[ref.split()]], [hyp.split()])
    assert NIST(tokenize="none").corpus_score([hyp], [[ref]]).score == \
        pytest.approx(expected, rel=1e-12)


# -- the count table's kernels against plain Python ------------------------------------------

_G = 0x9E3779B97F4A7C15


def _python_counts(segments, max_order):
    counts = Counter()
    for tokens in segments:
        for p in range(len(tokens)):
            key = 0
            for k in range(min(max_order, len(tokens) - p)):
                key = (key * _G + tokens[p + k]) % (1 << 64)
                counts[key, k] += 1
    return counts


def _table_counts(table):
    used = table[table[:, 1] != 0]
    return Counter({(int(key), int(word >> TAG_SHIFT) - 1): int(word & COUNT_MASK)
                    for key, word in used})


def _last_row_tokens(rng, n):
    """Token hashes whose unigrams all start probing at the last row of any table of up to
    2**16 rows (their slot's top 16 bits set), so that probing wraps around to row 0."""
    inverse = pow(_G, -1, 1 << 64)
    mix = int(ORDER_MIX)  # order 1
    low = rng.integers(0, 1 << 48, size=n, dtype=np.int64)
    return [(((0xFFFF << 48) | int(x)) * inverse % (1 << 64)) ^ mix for x in low]


def test_keys_shared_by_two_orders_stay_apart_and_probing_wraps():
    # token "a" whose hash is the key of the bigram "b c": a unigram and a bigram with one
    # key; and tokens whose unigrams all start at the table's last row
    b, c = 12345, 678
    a = (b * _G + c) % (1 << 64)
    rng = np.random.default_rng(3)
    crowd = _last_row_tokens(rng, 40)
    segments = [[b, c, a, b, c], [a, a, b, c], crowd, crowd[::-1], [b, c]]
    flat = np.array([t for s in segments for t in s], dtype=np.uint64)
    lengths = np.array([len(s) for s in segments])
    start = np.concatenate([[0], np.cumsum(lengths)[:-1]]).reshape(1, -1)
    count = lengths.reshape(1, -1)
    expected = _python_counts(segments, 4)
    for bits in (6, 12):  # a full table (growing in the builder) and a roomy one
        builder = CountsBuilder((None, False, 4), expected=0 if bits == 6 else 3000)
        builder.add_references(flat, start, count)
        counts = builder.finish()
        assert _table_counts(counts.table) == expected
        assert len(counts) == len(expected) and counts.words == sum(lengths)
        for (key, order), n in expected.items():
            assert lookup(counts.table, counts.shift, np.uint64(key), order) == n
        assert lookup(counts.table, counts.shift, np.uint64(a), 2) == 0
    # the kernel stops before passing its limit, and says where
    table = np.zeros((64, 2), dtype=np.uint64)
    stop, size, words = count_references(table, np.uint64(58), 0, 10, flat, start, count,
                                         np.arange(5), np.ones(5, dtype=np.int64), 0, 4)
    assert stop < 5 and size <= 10


def test_counted_times_equal_repeated_rows():
    metric = NIST(tokenize="none", max_ngram_order=3)
    refs = [["a b c a", "b b", "c a b"], [None, "a", "b c"]]
    repeated = [[s for s, k in zip(r, (3, 1, 2)) for _ in range(k)] for r in refs]
    tokens = metric.tokenized_references(
        [as_text_column(pa.array(r, pa.string()), "r", allow_null=True, trusted=True)
         for r in refs])
    assert isinstance(tokens, References)
    times = metric.reference_counts(tokens, rows=np.arange(3), times=np.array([3, 1, 2]))
    plain = metric.reference_counts(repeated)
    assert times.digest() == plain.digest() and times.words == plain.words
    assert times.reduced().digest() == plain.reduced().digest()
    with pytest.raises(ValueError, match="times"):
        metric.reference_counts(tokens, rows=np.arange(3), times=np.array([1, 0, 1]))
    with pytest.raises(ValueError, match="add_to"):
        metric.reference_counts(refs, add_to=NIST().reference_counts(refs))


def test_reduced_counts_weigh_the_same():
    metric = NIST(tokenize="none")
    refs = ["a b c d", "a b", "c d a b c"]
    hyps = ["a b c", "d a", "c d a b"]
    once = metric.reference_counts([refs])
    thrice = metric.reference_counts([refs * 3])
    assert thrice.divisor() == 3 and thrice.reduced().digest() == once.digest()
    rows = metric.with_weights(thrice).segment_statistics(hyps, [refs])
    assert (rows == metric.segment_statistics(hyps, [refs])).all()


# -- a table's first pass --------------------------------------------------------------------

def _proportional_table(rng):
    """System A over a test set once, B over it twice (shuffled), C over it once but one row
    twice (not proportional), D over other references; two reference columns, nulls."""
    n = 40
    hyps = lambda: _words(rng, 60, n, high=12)  # noqa: E731
    refs, refs2 = _words(rng, 60, n, low=1, high=12), _words(rng, 60, n, low=1, high=12)
    refs2 = [None if i % 7 == 0 else s for i, s in enumerate(refs2)]
    other = _words(rng, 60, n, low=1, high=12)
    rows = {"system": [], "hyp": [], "ref": [], "ref2": []}

    def add(system, order, r, r2):
        rows["system"] += [system] * len(order)
        rows["hyp"] += [h for h, _ in zip(hyps() * 2, order)]
        rows["ref"] += [r[i] for i in order]
        rows["ref2"] += [r2[i] for i in order]

    add("A", list(range(n)), refs, refs2)
    add("B", list(rng.permutation(2 * n) % n), refs, refs2)
    add("C", list(range(n)) + [5], refs, refs2)
    add("D", list(range(n)), other, refs2)
    order = rng.permutation(len(rows["hyp"]))
    return pa.table({k: [v[i] for i in order] for k, v in rows.items()})


@pytest.mark.parametrize("batch_size", [7, 1 << 16])
def test_groups_with_proportional_references_each_equal_their_own_corpus(batch_size, tmp_path):
    table = _proportional_table(np.random.default_rng(4))
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=13)
    metric = NIST(tokenize="none")
    result = score_table(str(path), refs=["ref", "ref2"], group_by="system", metrics=[metric],
                         batch_size=batch_size)
    systems = table["system"].to_pylist()
    for row in result.to_pylist():
        mask = [s == row["system"] for s in systems]
        hyps = [h for h, m in zip(table["hyp"].to_pylist(), mask) if m]
        refs = [[r for r, m in zip(table[c].to_pylist(), mask) if m] for c in ("ref", "ref2")]
        assert row["score"] == metric.corpus_score(hyps, refs).score


def test_a_table_that_changes_between_reads_is_one_line():
    from fastbleu.tables.job import TableJob
    from fastbleu.tables.prepass import _row_multisets, count_distinct_rows

    table = _proportional_table(np.random.default_rng(5))
    changed = table.set_column(table.schema.get_field_index("ref"), "ref",
                               pa.array([s + " x" if s else s
                                         for s in table["ref"].to_pylist()]))
    job = TableJob.planned("hyp", ["ref", "ref2"], ["system"], None, None, False, "strict",
                           50, metrics=["nist"])
    metric_set = job.metric_set()
    groups = _row_multisets(job, table.to_batches(50), ("system",))
    with pytest.raises(InputError, match="differ from the first read"):
        count_distinct_rows(job, metric_set, groups, changed.to_batches(50), ("system",))


@pytest.mark.parametrize("batch_size", [2, 1 << 16])
def test_list_references_of_varying_widths_count_alike(batch_size):
    # The widest list differs from batch to batch, and between a batch and the rows the
    # second read takes from it (the second batch's wide row repeats the first's, so only
    # its narrow row is counted again): a row's fingerprint must depend on neither.
    refs = [["x y", "c", "d"], ["a"], ["x y", "c", "d"], ["b a"], ["c"], ["a", "b"]]
    hyps = ["x y c", "a", "x", "b a", "c d", "a b"]
    table = pa.table({"hyp": hyps, "refs": pa.array(refs, pa.list_(pa.string()))})
    metric = NIST(tokenize="none", max_ngram_order=2)
    result = score_table(table, refs="refs", metrics=[metric], batch_size=batch_size)
    streams = [[r[k] if len(r) > k else None for r in refs] for k in range(3)]
    assert result["score"][0].as_py() == metric.corpus_score(hyps, streams).score


def test_null_and_empty_references_and_swapped_columns_are_different_rows():
    from fastbleu.tables.prepass import _fingerprints

    def streams(*columns):
        return [as_text_column(pa.array(c, pa.string()), "r", allow_null=True, trusted=True)
                for c in columns]

    prints = _fingerprints(streams(["a", "", None, "a b", "b"], ["b", "x", "x", None, "a"]))
    assert len(set(prints.tolist())) == 5
    again = _fingerprints(streams(["a", "", None, "a b", "b"], ["b", "x", "x", None, "a"]))
    assert (prints == again).all()


# -- memory: bounded by the distinct n-grams, refused in one line ---------------------------

def test_message_gives_the_real_options():
    text = message(1 << 33, 1 << 32, 123_456_789, (3 << 30, "left under ulimit -v/-d"))
    assert "\n" not in text
    for option in ("--nist-order", "fewer rows", "more memory", "a smaller batch does not help",
                   "123,456,789", "8.0 GiB", "3.0 GiB is left under ulimit"):
        assert option in text
    with pytest.raises(NISTMemoryError) as caught:
        check_table(1 << 62)
    assert isinstance(caught.value, MemoryError) and isinstance(caught.value, InputError)


_CHILD = textwrap.dedent("""
    import json, resource, sys
    import numpy as np, pyarrow as pa
    from fastbleu import score_table
    from fastbleu.cli import main

    path, mode = sys.argv[1], sys.argv[2]
    score_table(pa.table({"hyp": ["a b"], "ref": ["a b c"]}), metrics=["nist"])  # compiled
    with open("/proc/self/statm") as f:
        vm = int(f.read().split()[0]) * resource.getpagesize()
    resource.setrlimit(resource.RLIMIT_AS, (vm + (160 << 20), resource.getrlimit(
        resource.RLIMIT_AS)[1]))
    if mode == "api":
        try:
            score_table(path, metrics=["nist"])
        except MemoryError as error:
            print(json.dumps([type(error).__name__, str(error)]))
    else:
        sys.exit(main([path, "-m", "nist", "--quiet"]))
""")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="RLIMIT_AS and /proc")
def test_counts_past_the_memory_left_are_refused_in_one_line(tmp_path):
    rng = np.random.default_rng(6)
    n = 120_000  # about 12M distinct reference n-grams: a count table of 256 MiB or more
    path = tmp_path / "distinct.parquet"
    pq.write_table(pa.table({"hyp": _words(rng, 1 << 20, n, 10, 30),
                             "ref": _words(rng, 1 << 20, n, 10, 30)}), path)
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    # One malloc arena: each thread's own arena reserves 64 MiB of address space, which
    # RLIMIT_AS counts, so that a thread started late could fail before NIST's check.
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[3]),
           "MALLOC_ARENA_MAX": "1"}
    api = subprocess.run([sys.executable, str(script), str(path), "api"], capture_output=True,
                         text=True, timeout=600, env=env)
    kind, text = json.loads(api.stdout)
    assert kind == "NISTMemoryError", api.stderr
    assert text.startswith("counting the references of rows ") and " of 120,000 (" in text
    assert "at this rate all of them need a table of about " in text
    assert "ulimit" in text and "--nist-order" in text
    cli = subprocess.run([sys.executable, str(script), str(path), "cli"], capture_output=True,
                         text=True, timeout=600, env=env)
    assert cli.returncode == 2, cli.stderr
    lines = cli.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastbleu: error: counting the references")
    assert "Traceback" not in cli.stderr and not cli.stdout
