"""TER with more than 16 references, against sacrebleu 2.6, which scores any number.

fastbleu keeps each segment's mean reference length as an integer times a scale
(:mod:`fastbleu.metrics.ter.scale`): 720720 where every segment's number of references
divides it, else the least common multiple of the numbers present.  Every number here is
sacrebleu's: the corpus score (to 1e-9), each segment's statistics (the mean reference
length ``row[1] / scale`` is sacrebleu's float exactly: both are the correctly rounded
quotient of the same two integers), sentence scores and signatures, through the API, the
command line (files, ``-nr``, ``-sl``, paired tests), tables with a list column or more
than 16 reference columns, accumulators and their merges; and the limits left (a scale
beyond 2**32) are one ``ValueError``, or one line with exit 2.
"""

from __future__ import annotations

import math
import pickle
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sacrebleu.metrics import TER as SacreTER

import fastbleu
from fastbleu import TER
from fastbleu.cli import main
from fastbleu.errors import InputError, SegmentError
from fastbleu.metrics import get_metric
from fastbleu.metrics.ter.formula import TERFormula
from fastbleu.metrics.ter.scale import MAX_SCALE, scale_for_counts
from fastbleu.significance import tests as significance
from fastbleu.tables import paired_table
from testkit.data import SAMPLE_REFS, SAMPLE_SYSTEMS, cli_same
from testkit.marks import slow

#: sacrebleu's TER is slow: a dozen segments, each against up to 40 references.
N = 12
COUNTS = (17, 20, 25, 40)
#: Counts whose least common multiple is beyond 2**32 (about 1.1e10).
TOO_MANY = (17, 19, 23, 29, 31, 37, 41)


def _streams(k: int, n: int = N) -> list[list[str]]:
    """``k`` different reference streams of ``n`` segments: the two sample references and
    the other system's output, each shortened by 0 to 4 words, so means are not whole."""
    pool = [SAMPLE_REFS[0], SAMPLE_REFS[1], SAMPLE_SYSTEMS["B"]]
    streams = []
    for r in range(k):
        lines = [_short(line) for line in pool[r % 3][:n]]
        cut = r % 5
        streams.append([" ".join(line.split()[:max(1, len(line.split()) - cut)])
                        for line in lines])
    return streams


def _short(line: str) -> str:
    """At most 14 words (sacrebleu's shift search is slow on long segments)."""
    return " ".join(line.split()[:14])


HYPS = [_short(line) for line in SAMPLE_SYSTEMS["A"][:N]]
SYSTEM_B = [_short(line) for line in SAMPLE_SYSTEMS["B"][:N]]


def _same_statistics(ours: np.ndarray, scale: int, hyps, refs) -> None:
    theirs = SacreTER()._extract_corpus_statistics(hyps, refs)
    assert ours[:, 0].tolist() == [int(edits) for edits, _ in theirs]
    assert (ours[:, 1] / scale).tolist() == [length for _, length in theirs]
    return theirs


# -- the API ------------------------------------------------------------------------------

# Every count once in the quick run, here or in test_cli_files_equal_sacrebleu (issue 28).
@pytest.mark.parametrize("k", [k if k in (17, 40) else slow(k) for k in COUNTS])
def test_lists_equal_sacrebleu(k):
    refs = _streams(k)
    sacre = SacreTER()
    theirs = sacre.corpus_score(HYPS, refs)
    ter = TER()
    ours = ter.corpus_score(HYPS, refs)
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)
    assert ours.num_edits == theirs.num_edits
    assert ours.ref_length == pytest.approx(theirs.ref_length, rel=1e-15)
    assert ter.get_signature().format().split("version")[0] == \
        str(sacre.get_signature()).split("version")[0]
    assert ter.formula.scale == (720720 if 720720 % k == 0 else k)
    stats = ter.segment_statistics(HYPS, refs)
    theirs = _same_statistics(stats, ter.formula.scale, HYPS, refs)
    # sacrebleu's own formula of those statistics, as floats, gives the same score
    floats = ter.formula.float_statistics(stats).tolist()
    assert sacre._compute_score_from_stats(np.sum(floats, axis=0).tolist()).score == \
        pytest.approx(ours.score, abs=1e-9)
    assert ter.formula.score(stats.sum(axis=0)).score == ours.score
    sentences = ter.sentence_scores(HYPS, refs)
    # sacrebleu's sentence_score is _compute_score_from_stats of the segment's statistics
    assert sentences.tolist() == [sacre._compute_score_from_stats(row).score for row in theirs]
    one = ter.sentence_score(HYPS[3], [r[3] for r in refs])
    assert one.score == sentences[3]


def test_missing_references_take_the_lcm_of_the_counts_present():
    """None references (17 to 25 a segment): the scale is the lcm of the counts present."""
    refs = _streams(25)
    present = [17, 25, 18, 17, 25, 25, 20, 17, 19, 25, 25, 21]
    refs = [[line if r < present[i] else None for i, line in enumerate(stream)]
            for r, stream in enumerate(refs)]
    ter = TER()
    ours = ter.corpus_score(HYPS, refs)
    theirs = SacreTER().corpus_score(HYPS, refs)
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)
    assert ter.formula.scale == math.lcm(*present) == scale_for_counts(present)
    assert ter.get_signature().format().startswith("nrefs:var|")
    _same_statistics(ter.segment_statistics(HYPS, refs), ter.formula.scale, HYPS, refs)


def test_up_to_16_references_keep_720720():
    """Bit for bit the rows of before: every count up to 16 divides 720720."""
    refs = _streams(16)
    ter = TER()
    stats = ter.segment_statistics(HYPS, refs)
    assert ter.formula == TERFormula() and ter.formula.scale == 720720
    assert stats[:, 1].tolist() == [sum(len(r[i].split()) for r in refs) * 720720 // 16
                                    for i in range(N)]


def test_cached_references_and_several_systems():
    refs = _streams(17)
    ter = TER(references=refs)
    assert ter.formula.scale == 17
    for system in SAMPLE_SYSTEMS.values():
        assert ter.corpus_score(system[:N], None).score == \
            pytest.approx(SacreTER().corpus_score(system[:N], refs).score, abs=1e-9)
    assert ter.get_signature().format().startswith("nrefs:17|")


def test_large_python_lists_run_in_batches():
    """More segments than a batch (1,024 for TER): the scale is the whole input's."""
    refs = [stream * 100 for stream in _streams(17)]
    hyps = HYPS * 100
    ter = TER()
    assert ter.corpus_score(hyps, refs).score == \
        pytest.approx(TER().corpus_score(HYPS, _streams(17)).score, abs=1e-9)
    assert sum(len(b) for b in ter.statistics_batches(hyps, refs)) == len(hyps)
    assert ter.formula.scale == 17


def test_a_shared_metric_scores_each_input_at_its_own_scale():
    """Threads sharing one TER object: each call runs on a copy fixed to its input's scale,
    so no call sees another's (17 and 4 references side by side give serial results)."""
    inputs = [(HYPS, _streams(17)), (HYPS, _streams(4)), (HYPS, _streams(25))] * 4
    serial = [TER().corpus_score(h, r).score for h, r in inputs]
    shared = TER()
    with ThreadPoolExecutor(4) as pool:
        found = list(pool.map(lambda args: shared.corpus_score(*args).score, inputs))
    assert found == serial


# -- a fixed scale -----------------------------------------------------------------------------

def test_a_fixed_reference_scale():
    refs = _streams(17)
    fixed = TER(reference_scale=17 * 720720)
    assert fixed.options()["reference_scale"] == 17 * 720720
    assert get_metric("ter", **fixed.options()).formula.scale == 17 * 720720
    both = np.concatenate([fixed.segment_statistics(HYPS, refs),
                           fixed.segment_statistics(HYPS, _streams(3))])
    expected = TER().corpus_score(HYPS * 2, [s + t for s, t in zip(
        refs, _streams(3) + [[None] * N] * 14)])
    assert fixed.formula.score(both.sum(axis=0)).score == pytest.approx(expected.score,
                                                                        abs=1e-12)
    with pytest.raises(SegmentError, match=r"^segment 0: 3 references, which do not divide "
                                           r"the scale 17 of TER's statistics"):
        TER(reference_scale=17).corpus_score(HYPS, _streams(3))
    with pytest.raises(ValueError, match="segment 0: 17 references"):
        TER(reference_scale=720720, references=refs)
    with pytest.raises(ValueError, match=r"reference_scale must be from 1 to"):
        TER(reference_scale=0)
    with pytest.raises(ValueError, match=r"reference_scale must be from 1 to"):
        TER(reference_scale=MAX_SCALE + 1)
    with pytest.raises(TypeError, match="reference_scale must be an int"):
        TER(reference_scale=17.0)
    with pytest.raises(TypeError, match="reference_scale must be an int"):
        TER(reference_scale=True)


# -- limits ------------------------------------------------------------------------------------

def test_a_thousand_references_are_scored():
    refs = [[" ".join(line.split()[:5]) for line in stream] for stream in _streams(1000, 2)]
    ter = TER()
    assert ter.corpus_score(HYPS[:2], refs).score == \
        pytest.approx(SacreTER().corpus_score(HYPS[:2], refs).score, abs=1e-9)
    assert ter.formula.scale == 1000  # 1000 = 8 * 125 does not divide 720720


def _too_many_scales():
    """Segments with 17, 19, 23, 29, 31, 37 and 41 references (None pads the rest)."""
    width = max(TOO_MANY)
    hyps = ["a b c"] * len(TOO_MANY)
    refs = [[("a b" if r % 2 else "b c d") if r < count else None for count in TOO_MANY]
            for r in range(width)]
    return hyps, refs


def test_counts_whose_scale_passes_2_32_are_one_value_error():
    hyps, refs = _too_many_scales()
    assert math.lcm(*TOO_MANY) > MAX_SCALE
    for call in (lambda t: t.corpus_score(hyps, refs), lambda t: t.segment_statistics(hyps, refs),
                 lambda t: t.sentence_scores(hyps, refs), lambda t: TER(references=refs),
                 lambda t: t.accumulator().update(hyps, refs)):
        with pytest.raises(ValueError, match=r"^TER keeps the mean reference length exactly.*"
                                             r"17, 19, 23, 29, 31, 37, 41 references"):
            call(TER())
    # each part alone is scored (sacrebleu's numbers), and sums of parts add up
    ter = TER()
    first = ter.corpus_score(hyps[:4], [r[:4] for r in refs])
    assert first.score == pytest.approx(
        SacreTER().corpus_score(hyps[:4], [r[:4] for r in refs]).score, abs=1e-9)


def test_the_table_command_line_refuses_such_counts_in_one_line(tmp_path, capsys):
    hyps, refs = _too_many_scales()
    lists = [[r[i] for r in refs if r[i] is not None] for i in range(len(hyps))]
    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": hyps, "refs": lists}), path)
    status = main([str(path), "--ref-column", "refs", "-m", "ter"])
    out, err = capsys.readouterr()
    assert status == 2 and out == ""
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "fastbleu: error: the references of column 'refs': TER keeps the mean reference "
        "length exactly")
    with pytest.raises(InputError, match="17, 19, 23, 29, 31, 37, 41 references"):
        fastbleu.score_table(path, refs="refs", metrics=["ter"])


# -- accumulators ----------------------------------------------------------------------------

def test_accumulators_of_two_scales_merge_exactly():
    four, seventeen = _streams(4), _streams(17)
    a = TER().accumulator().update(HYPS[:6], [s[:6] for s in four])
    b = TER().accumulator().update(HYPS[6:], [s[6:] for s in seventeen])
    assert (a.formula.scale, b.formula.scale) == (720720, 17)
    total = a.merge(pickle.loads(pickle.dumps(b)))
    assert total.formula.scale == 720720 * 17 and total.n_segments == N
    refs = [s[:6] + t[6:] for s, t in zip(four + [[None] * N] * 13, seventeen)]
    expected = SacreTER().corpus_score(HYPS, refs)
    assert total.score().score == pytest.approx(expected.score, abs=1e-9)
    assert total.score().score == pytest.approx(TER().corpus_score(HYPS, refs).score,
                                                abs=1e-12)
    assert total.signature().format().startswith("nrefs:var|")
    # updates of two scales into one accumulator: the same
    c = TER().accumulator()
    c.update(HYPS[6:], [s[6:] for s in seventeen]).update(HYPS[:6], [s[:6] for s in four])
    assert c.statistics.tolist() == total.statistics.tolist()
    assert pickle.loads(pickle.dumps(c)).score().score == total.score().score


def test_a_refused_merge_or_update_changes_nothing():
    hyps, refs = _too_many_scales()
    a = TER().accumulator().update(hyps[:4], [r[:4] for r in refs[:29]])  # 17..29: lcm 3.8e6
    b = TER().accumulator().update(hyps[4:], [r[4:] for r in refs])  # 31, 37, 41
    assert math.lcm(a.formula.scale, b.formula.scale) > MAX_SCALE
    before = [(x.statistics.tolist(), x.n_segments, x.formula, x.num_refs) for x in (a, b)]
    with pytest.raises(ValueError, match=r"cannot add TER statistics whose mean reference "
                                         r"lengths are scaled by"):
        a.merge(b)
    with pytest.raises(ValueError, match="common scale"):
        a.update(hyps[4:], [r[4:] for r in refs])
    assert [(x.statistics.tolist(), x.n_segments, x.formula, x.num_refs)
            for x in (a, b)] == before
    with pytest.raises(ValueError, match="different metrics or options"):
        TER(reference_scale=17).accumulator().merge(TER().accumulator())


# -- the command line --------------------------------------------------------------------------

@pytest.mark.parametrize("k", [k if k in (20, 25) else slow(k) for k in COUNTS])
def test_cli_files_equal_sacrebleu(tmp_path, capsys, monkeypatch, k):
    files = []
    for r, stream in enumerate(_streams(k)):
        files.append(tmp_path / f"ref{r}")
        files[-1].write_text("\n".join(stream) + "\n", encoding="utf-8")
    hyp = tmp_path / "hyp"
    hyp.write_text("\n".join(HYPS) + "\n", encoding="utf-8")
    cli_same([*files, "-i", hyp, "-m", "ter"], capsys, monkeypatch)
    if k == 17:
        cli_same([*files, "-i", hyp, "-m", "ter", "-sl"], capsys, monkeypatch)
        tsv = tmp_path / "refs.tsv"
        tsv.write_text("\n".join("\t".join(line) for line in zip(*_streams(k))) + "\n",
                       encoding="utf-8")
        cli_same([tsv, "-nr", str(k), "-i", hyp, "-m", "ter", "-f", "text"], capsys,
                 monkeypatch)


@pytest.mark.parametrize("test", ["--paired-bs", "--paired-ar"])
def test_cli_paired_tests_equal_sacrebleu(tmp_path, capsys, monkeypatch, test):
    files = []
    for r, stream in enumerate(_streams(17)):
        files.append(tmp_path / f"ref{r}")
        files[-1].write_text("\n".join(stream) + "\n", encoding="utf-8")
    systems = []
    for name, lines in (("A", HYPS), ("B", SYSTEM_B),
                        ("C", [h.lower() for h in HYPS])):
        systems.append(tmp_path / name)
        systems[-1].write_text("\n".join(lines) + "\n", encoding="utf-8")
    n = ["--paired-bs-n", "60"] if test == "--paired-bs" else ["--paired-ar-n", "80"]
    cli_same([*files, "-i", *systems, "-m", "ter", test, *n, "-f", "text"], capsys,
             monkeypatch)


def test_paired_api_with_17_references():
    """The API's paired tests read metric.formula after the statistics: the 17-scale one."""
    refs = _streams(17)
    systems = [HYPS, SYSTEM_B]
    ours = significance.paired_bootstrap(systems, refs, metric=TER(), n_samples=50,
                                         sacrebleu_compat=True)
    stats = [TER().segment_statistics(s, refs) for s in systems]
    again = significance.paired_bootstrap(stats, metric=TER(reference_scale=17), n_samples=50,
                                          sacrebleu_compat=True)
    assert [(r.score, r.p_value, r.mean, r.ci) for r in ours] == \
        [(r.score, r.p_value, r.mean, r.ci) for r in again]
    assert ours[1].score == pytest.approx(SacreTER().corpus_score(systems[1], refs).score,
                                          abs=1e-9)


# -- tables -------------------------------------------------------------------------------------

def _list_table():
    """A list column: groups of rows with 17, 20, 25 and 40 references, and one mixed."""
    hyps, lists, groups = [], [], []
    for k in COUNTS:
        refs = _streams(k, 4)
        hyps += HYPS[:4]
        lists += [[r[i] for r in refs] for i in range(4)]
        groups += [f"k{k}"] * 4
    mixed = _streams(25)
    for i in range(4, N):
        count = (17, 3, 25, 20)[i % 4]
        hyps.append(HYPS[i])
        lists.append([r[i] for r in mixed[:count]])
        groups.append("mixed")
    return pa.table({"hyp": hyps, "refs": pa.array(lists, pa.list_(pa.string())),
                     "group": groups})


def _padded(lists):
    width = max(len(row) for row in lists)
    return [[row[r] if r < len(row) else None for row in lists] for r in range(width)]


def test_a_list_column_equals_sacrebleu(tmp_path):
    table = _list_table()
    path = tmp_path / "t.parquet"
    pq.write_table(table, path, row_group_size=5)
    segments = tmp_path / "segments.parquet"
    result = fastbleu.score_table(path, refs="refs", group_by="group", metrics=["ter"],
                                  batch_size=3, segments_out=str(segments))
    groups = table.column("group").to_pylist()
    hyps, lists = table.column("hyp").to_pylist(), table.column("refs").to_pylist()
    for g, score, signature in zip(result.column("group").to_pylist(),
                                   result.column("score").to_pylist(),
                                   result.column("signature").to_pylist()):
        rows = [i for i, x in enumerate(groups) if x == g]
        sacre = SacreTER()
        theirs = sacre.corpus_score([hyps[i] for i in rows], _padded([lists[i] for i in rows]))
        assert score == pytest.approx(theirs.score, abs=1e-9), g
        assert signature.split("version")[0] == str(sacre.get_signature()).split("version")[0]
    # one scale for the whole table: the lcm of its counts, 17, 20, 25, 40 and 3
    scale = scale_for_counts(len(row) for row in lists)
    assert scale == math.lcm(17, 20, 25, 40, 3) == 10200
    written = pq.read_table(segments).to_pydict()
    assert [s / scale for s in written["ref_length_scaled"]] == \
        [length for _, length in SacreTER()._extract_corpus_statistics(
            hyps, _padded(lists))]
    assert written["sentence_ter"] == [SacreTER().sentence_score(h, refs).score
                                       for h, refs in zip(hyps, lists)]
    # the same with in-memory batches of other sizes, and on a paired test of the groups
    assert fastbleu.score_table(table, refs="refs", group_by="group", metrics=["ter"],
                                batch_size=7).equals(result)


def test_more_than_16_reference_columns_with_nulls(tmp_path):
    refs = _streams(18)
    columns = {f"r{k}": stream for k, stream in enumerate(refs)}
    columns["r17"] = [None if i % 3 else line for i, line in enumerate(refs[17])]
    path = tmp_path / "wide.parquet"
    pq.write_table(pa.table({"hyp": HYPS, **columns}), path)
    result = fastbleu.score_table(path, refs=list(columns), metrics=["bleu", "ter"])
    streams = list(columns.values())
    assert result.column("ter_score")[0].as_py() == pytest.approx(
        SacreTER().corpus_score(HYPS, streams).score, abs=1e-9)
    assert result.column("ter_signature")[0].as_py().startswith("nrefs:var|")
    # a paired test of the table's systems: the API's on the same draws
    paired = paired_table(pa.table({"hyp": HYPS + SYSTEM_B, "sys": ["A"] * N + ["B"] * N,
                                    **{k: v * 2 for k, v in columns.items()}}),
                          refs=list(columns), system="sys", metrics=["ter"], n_samples=40,
                          seed=3)
    alone = significance.paired_bootstrap([HYPS, SYSTEM_B], streams, metric=TER(),
                                          n_samples=40, seed=3)
    assert [(r.score, r.p_value, r.mean, r.ci) for r in paired.results[0]] == \
        [(r.score, r.p_value, r.mean, r.ci) for r in alone]
    assert paired.results[0][1].score == pytest.approx(
        SacreTER().corpus_score(SYSTEM_B, streams).score, abs=1e-9)


# -- any numbers of references ----------------------------------------------------------------

WORDS = ["a", "b", "c", "the", "cat", "sat", "on", "mat"]
sentence = st.lists(st.sampled_from(WORDS), max_size=6).map(" ".join)


@settings(max_examples=25, deadline=None)
@given(st.lists(st.tuples(sentence, st.integers(1, 40), st.integers(0, 2 ** 16)),
                min_size=1, max_size=4),
       st.lists(sentence, min_size=3, max_size=3))
def test_random_numbers_of_references(segments, pool):
    """Segments with 1 to 40 references each (None pads the rest, anywhere among the
    streams): sacrebleu's corpus score and statistics, whatever the scale."""
    width = max(count for _, count, _ in segments)
    hyps = [hyp for hyp, _, _ in segments]
    refs = [[None] * len(segments) for _ in range(width)]
    for i, (_, count, seed) in enumerate(segments):
        rng = np.random.default_rng(seed)
        for r in sorted(rng.choice(width, size=count, replace=False)):
            refs[r][i] = pool[int(rng.integers(3))] + " " * int(rng.integers(2)) + \
                WORDS[int(r) % len(WORDS)]
    ter = TER()
    ours = ter.corpus_score(hyps, refs)
    theirs = SacreTER().corpus_score(hyps, refs)
    assert ours.score == pytest.approx(theirs.score, abs=1e-9)
    assert ter.formula.scale == scale_for_counts(count for _, count, _ in segments)
    _same_statistics(ter.segment_statistics(hyps, refs), ter.formula.scale, hyps, refs)
