"""TER in tables: per-group corpus TER, ``segments_out`` and the table command line, each
number equal to sacrebleu 2.6's on the same rows; and the refusals that make sense for TER.

sacrebleu's TER scores about 150 segment-reference pairs a second here, so the table is
small (60 rows) and sacrebleu computes each segment's statistics once per set of options:
its ``corpus_score`` is ``_aggregate_and_compute`` of ``_extract_corpus_statistics`` of the
rows, and a segment's statistics do not depend on the other rows, so a group's score is
that aggregation of its own rows' statistics (checked against ``corpus_score`` once).
"""

from __future__ import annotations

import functools
import json
import subprocess
import sys

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from sacrebleu.metrics import TER as SacreTER

import fastbleu
from fastbleu import TER
from fastbleu.cli import main
from fastbleu.errors import InputError
from testkit.data import sample_table

REFS = ["ref", "ref2"]
#: 1, 2 or 4 references a row (a list column): sacrebleu's sum of mean reference lengths
#: is then exact, as fastbleu's one division is.
WIDTHS = (1, 2, 4)


def _ter_table() -> pa.Table:
    """30 segments of each sample system, two documents each, and a list column ``refs4``
    of 1, 2 or 4 references a row (the other system's output and a shortened ``ref2``
    are the third and fourth)."""
    sample = sample_table()
    table = pa.concat_tables([sample.slice(0, 30), sample.slice(1000, 30)])
    hyps, ref, ref2 = (table.column(c).to_pylist() for c in ("hyp", "ref", "ref2"))
    other = hyps[30:] + hyps[:30]
    refs4 = [[ref[i], ref2[i], other[i], ref2[i].split(" ", 1)[-1]][:WIDTHS[i % 3]]
             for i in range(len(hyps))]
    docs = [f"d{(i % 30) // 15}" for i in range(len(hyps))]
    table = table.set_column(table.column_names.index("doc"), "doc", pa.array(docs))
    return table.append_column("refs4", pa.array(refs4, pa.list_(pa.string())))


@pytest.fixture(scope="module")
def ter_parquet(tmp_path_factory):
    """The table as Parquet, row groups of 16 rows (so batches split groups)."""
    path = tmp_path_factory.mktemp("ter") / "ter.parquet"
    pq.write_table(_ter_table(), path, row_group_size=16)
    return path


def _texts(table: pa.Table, refs: tuple[str, ...]):
    """Hypotheses and sacrebleu's reference streams of some rows (None pads a short list)."""
    hyps = table.column("hyp").to_pylist()
    if refs == ("refs4",):
        lists = table.column("refs4").to_pylist()
        width = max(len(r) for r in lists)
        return hyps, [[r[k] if k < len(r) else None for r in lists] for k in range(width)]
    return hyps, [table.column(r).to_pylist() for r in refs]


def _mask(keys: tuple) -> np.ndarray:
    """The rows of one (system, doc) group, or of one system, or all rows for ()."""
    table = _ter_table()
    mask = np.ones(table.num_rows, bool)
    for column, value in zip(("system", "doc"), keys):
        mask &= np.asarray(table.column(column).to_pylist()) == value
    return mask


@functools.lru_cache(maxsize=None)
def _sacre_statistics(refs: tuple, options: tuple = ()):
    """sacrebleu's TER with these options and its statistics of every segment."""
    hyps, streams = _texts(_ter_table(), refs)
    ter = SacreTER(**dict(options))
    return ter, ter._extract_corpus_statistics(hyps, streams)


def _sacre_corpus(keys: tuple, refs: tuple, options: tuple = ()):
    """sacrebleu's corpus TER of a group's rows, and its signature (fastbleu's version)."""
    ter, stats = _sacre_statistics(refs, options)
    score = ter._aggregate_and_compute([s for s, keep in zip(stats, _mask(keys)) if keep])
    signature = ter.get_signature().format().replace(
        "version:2.6.0", f"version:fastbleu-{fastbleu.__version__}")
    return score, signature


def _sacre_sentences(refs: tuple, options: tuple = ()) -> list:
    """sacrebleu's sentence TER of every row (its sentence_score aggregates one row)."""
    ter, stats = _sacre_statistics(refs, options)
    return [ter._aggregate_and_compute([s]) for s in stats]


def test_the_shortcut_is_sacrebleus_public_api():
    table = _ter_table()
    hyps, streams = _texts(table, ("refs4",))
    mask = _mask(("B", "d1"))
    expected = SacreTER().corpus_score([h for h, m in zip(hyps, mask) if m],
                                       [[r for r, m in zip(s, mask) if m] for s in streams])
    found = _sacre_corpus(("B", "d1"), ("refs4",))[0]
    assert (found.score, found.num_edits, found.ref_length) == \
        (expected.score, expected.num_edits, expected.ref_length)
    for i in (0, 1, 2, 47):  # 1, 2 and 4 references
        refs = [s[i] for s in streams if s[i] is not None]
        found, expected = _sacre_sentences(("refs4",))[i], SacreTER().sentence_score(hyps[i], refs)
        assert (found.score, found.num_edits, found.ref_length) == \
            (expected.score, expected.num_edits, expected.ref_length)


# -- corpus TER per group ------------------------------------------------------------------

@pytest.mark.parametrize("refs", [("ref",), tuple(REFS), ("refs4",)], ids="+".join)
def test_ter_per_group_equals_sacrebleu(ter_parquet, refs):
    result = fastbleu.score_table(ter_parquet, refs=list(refs), group_by=["system", "doc"],
                                  metrics=["ter"], batch_size=50)
    assert result.column_names == ["system", "doc", "score", "num_edits", "ref_length",
                                   "signature"]
    rows = result.to_pylist()
    assert [(r["system"], r["doc"]) for r in rows] == \
        [("A", "d0"), ("A", "d1"), ("B", "d0"), ("B", "d1")]
    for row in rows:
        expected, signature = _sacre_corpus((row["system"], row["doc"]), refs)
        assert (row["score"], row["num_edits"], row["ref_length"]) == \
            (expected.score, expected.num_edits, expected.ref_length)
        assert row["signature"] == signature


def test_ter_options_as_objects_and_beside_bleu_and_chrf(ter_parquet):
    options = (("normalized", True), ("case_sensitive", True))
    result = fastbleu.score_table(ter_parquet, refs=REFS, group_by="system",
                                  metrics=["bleu", "chrf", TER(**dict(options))], batch_size=40)
    assert result.column_names[-4:] == ["ter_score", "ter_num_edits", "ter_ref_length",
                                        "ter_signature"]
    assert "bleu_score" in result.column_names and "chrf_score" in result.column_names
    for row in result.to_pylist():
        expected = _sacre_corpus((row["system"],), tuple(REFS), options)[0]
        assert (row["ter_score"], row["ter_num_edits"], row["ter_ref_length"]) == \
            (expected.score, expected.num_edits, expected.ref_length)
        assert "|case:mixed|tok:tercom|norm:yes|" in row["ter_signature"]
    # each metric's columns equal that metric alone
    alone = fastbleu.score_table(ter_parquet, refs=REFS, group_by="system",
                                 metrics=[TER(**dict(options))])
    bleu = fastbleu.score_table(ter_parquet, refs=REFS, group_by="system")
    for name in alone.column_names[1:]:
        assert result.column(f"ter_{name}").equals(alone.column(name))
    for name in bleu.column_names[1:]:
        assert result.column(f"bleu_{name}").equals(bleu.column(name))
    # by name, TER's defaults: the same as TER()
    assert fastbleu.score_table(ter_parquet, refs=REFS, metrics=["ter"]).equals(
        fastbleu.score_table(ter_parquet, refs=REFS, metrics=[TER()]))


def test_two_ters_are_numbered(ter_parquet):
    result = fastbleu.score_table(ter_parquet, refs=["ref"], metrics=["ter", TER(no_punct=True)])
    assert result.column_names == [f"ter{k}_{n}" for k in (1, 2)
                                   for n in ("score", "num_edits", "ref_length", "signature")]
    row = result.to_pylist()[0]
    assert row["ter1_score"] == _sacre_corpus((), ("ref",))[0].score
    assert row["ter2_score"] == _sacre_corpus((), ("ref",), (("no_punct", True),))[0].score
    assert "punct:no" in row["ter2_signature"]


# -- segments_out ----------------------------------------------------------------------------

@pytest.mark.parametrize("refs", [tuple(REFS), ("refs4",)], ids="+".join)
def test_segments_out_sentence_ter_equals_sacrebleu(ter_parquet, tmp_path, refs):
    out = tmp_path / "segments.parquet"
    fastbleu.score_table(ter_parquet, refs=list(refs), group_by="system", metrics=["ter"],
                         segments_out=out, batch_size=50)
    segments = pq.read_table(out)
    assert segments.column_names == ["row", "system", "sentence_ter", "num_edits",
                                     "ref_length_scaled"]
    expected = _sacre_sentences(refs)
    assert segments.column("sentence_ter").to_pylist() == [s.score for s in expected]
    assert segments.column("num_edits").to_pylist() == [s.num_edits for s in expected]
    # the summable integer column is the mean reference length times 720720
    assert (segments.column("ref_length_scaled").to_numpy() / 720720).tolist() == \
        [s.ref_length for s in expected]
    assert segments.column("row").to_pylist() == list(range(60))


def test_segments_out_with_other_metrics(ter_parquet, tmp_path):
    out = tmp_path / "segments.parquet"
    fastbleu.score_table(ter_parquet, refs=REFS, metrics=["chrf", "ter", "bleu"],
                         segments_out=out, batch_size=64)
    segments = pq.read_table(out)
    names = segments.column_names
    start = names.index("ter_sentence_ter")
    assert names[start:start + 3] == ["ter_sentence_ter", "ter_num_edits",
                                      "ter_ref_length_scaled"]
    assert names[1].startswith("chrf_") and names[-1].startswith("bleu_")
    assert segments.column("ter_sentence_ter").to_pylist() == \
        [s.score for s in _sacre_sentences(tuple(REFS))]
    hyps, streams = _texts(_ter_table(), tuple(REFS))
    np.testing.assert_array_equal(segments.column("chrf_sentence_chrf").to_numpy(),
                                  fastbleu.CHRF().sentence_scores(hyps, streams))


# -- the command line ------------------------------------------------------------------------

def _cli(capsys, *argv):
    status = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return status, out, err


@pytest.mark.parametrize("fmt", ["json", "text"])
def test_cli_no_groups_prints_as_sacrebleu(ter_parquet, tmp_path, capsys, fmt):
    table = _ter_table()
    files = []
    for name in ("hyp", "ref"):
        files.append(tmp_path / f"{name}.txt")
        files[-1].write_text("\n".join(table.column(name).to_pylist()) + "\n")
    status, out, _ = _cli(capsys, ter_parquet, "--ref-column", "ref", "-m", "bleu", "ter",
                          "--ter-normalized", "--ter-no-punct", "-f", fmt, "--quiet")
    theirs = subprocess.run([sys.executable, "-m", "sacrebleu", files[1], "-i", files[0],
                             "-m", "bleu", "ter", "--ter-normalized", "--ter-no-punct",
                             "-f", fmt],
                            capture_output=True, text=True, check=True).stdout
    assert status == 0 and "norm:yes|punct:no" in out
    assert out.replace(f"fastbleu-{fastbleu.__version__}", "2.6.0").rstrip("\n") == \
        theirs.rstrip("\n")


def test_cli_groups_and_segments_out(ter_parquet, tmp_path, capsys):
    out = tmp_path / "cli.parquet"
    status, text, _ = _cli(capsys, ter_parquet, "--ref-column", "ref", "--group-by", "system",
                           "--doc-column", "doc", "-m", "ter", "--ter-case-sensitive",
                           "--segments-out", out, "--quiet")
    records = json.loads(text)
    assert status == 0 and [(r["system"], r["doc"], r["name"]) for r in records] == \
        [("A", "d0", "TER"), ("A", "d1", "TER"), ("B", "d0", "TER"), ("B", "d1", "TER")]
    options = (("case_sensitive", True),)
    for record in records:
        expected = _sacre_corpus((record["system"], record["doc"]), ("ref",), options)[0]
        assert record["score"] == round(expected.score, 1)
        assert record["case"] == "mixed"
    api = tmp_path / "api.parquet"
    fastbleu.score_table(ter_parquet, refs=["ref"], group_by="system", doc="doc",
                         metrics=[TER(case_sensitive=True)], segments_out=api)
    assert pq.read_table(out).equals(pq.read_table(api))
    status, text, _ = _cli(capsys, ter_parquet, "--ref-column", "ref", "--group-by", "system",
                           "-m", "ter", "chrf", "-f", "text", "--quiet")
    lines = text.splitlines()
    assert [line.split("\t")[0] for line in lines] == ["system=A"] * 2 + ["system=B"] * 2
    assert lines[1].split("\t")[1].startswith("TER|nrefs:1|case:lc|tok:tercom|")
    assert lines[1].endswith(f"= {_sacre_corpus(('A',), ('ref',))[0].score:.1f}")


@pytest.fixture(scope="module")
def seventeen_refs(tmp_path_factory):
    """Two rows, 17 reference columns; row 1 has all 17, row 0 has 16 (one null)."""
    refs = {f"r{i}": ["a b", "c d"] for i in range(17)}
    refs["r16"] = [None, "c d"]
    path = tmp_path_factory.mktemp("ter17") / "refs17.parquet"
    pq.write_table(pa.table({"hyp": ["a b c", "c e"], **refs, "tok": ["13a", "intl"]}), path)
    return path, list(refs)


def test_cli_refusals_are_one_line(seventeen_refs, capsys):
    path, refs = seventeen_refs
    flags = [a for r in refs for a in ("--ref-column", r)]
    # 16 and 17 references (one null): scored, as sacrebleu scores them
    status, out, err = _cli(capsys, path, *flags, "-m", "ter", "-b")
    expected = SacreTER().corpus_score(["a b c", "c e"], [["a b", "c d"]] * 16
                                       + [[None, "c d"]]).score
    assert status == 0 and out.strip() == f"{expected:.1f}", err
    status, _, err = _cli(capsys, path, "--ref-column", "r0", "--tokenize-column", "tok",
                          "-m", "chrf", "ter")
    assert status == 2 and len(err.splitlines()) == 1
    assert "only BLEU uses; chrF and TER do not take one" in err
    # 16 of them are fine, and give sacrebleu's number
    status, out, _ = _cli(capsys, path, *flags[:-2], "-m", "ter", "-b")
    expected = SacreTER().corpus_score(["a b c", "c e"], [["a b", "c d"]] * 16).score
    assert status == 0 and out.strip() == f"{expected:.1f}"


# -- refusals --------------------------------------------------------------------------------

def test_tokenize_column_is_refused_naming_ter(ter_parquet):
    with pytest.raises(ValueError, match="only BLEU uses; TER does not take one: drop the "
                                         "column or add BLEU"):
        fastbleu.score_table(ter_parquet, refs=REFS, metrics=["ter"], tokenize_column="system")


def test_a_tokenizer_column_beside_bleu_leaves_ter_alone(ter_parquet):
    table = pq.read_table(ter_parquet)
    table = table.append_column("tok", pa.array(
        ["13a" if s == "A" else "char" for s in table.column("system").to_pylist()]))
    both = fastbleu.score_table(table, refs=REFS, group_by="system", metrics=["bleu", "ter"],
                                tokenize_column="tok")
    alone = fastbleu.score_table(table, refs=REFS, group_by="system", metrics=["ter"])
    assert both.column("ter_score").equals(alone.column("score"))
    assert both.column("ter_signature").equals(alone.column("signature"))
    assert "tok:char" in both.column("bleu_signature")[1].as_py()


def test_more_than_16_references(seventeen_refs):
    """TER takes any number (tests/metrics/ter/test_many_references.py); BLEU averaging
    reference lengths keeps its limit of 16, naming the row."""
    path, refs = seventeen_refs
    both = fastbleu.score_table(path, refs=refs, metrics=["chrf", "ter"])
    expected = SacreTER().corpus_score(["a b c", "c e"], [["a b", "c d"]] * 16
                                       + [[None, "c d"]])
    assert both.column("ter_score").to_pylist() == [pytest.approx(expected.score, abs=1e-9)]
    lists = pa.table({"hyp": ["a", "b", "c"], "refs": [["a"], ["b"] * 16, ["c"] * 17]})
    scored = fastbleu.score_table(lists, refs="refs", metrics=["ter"], batch_size=2)
    rows = [["a"], ["b"] * 16, ["c"] * 17]
    expected = SacreTER().corpus_score(["a", "b", "c"], [
        [row[r] if r < len(row) else None for row in rows] for r in range(17)])
    assert scored.column("score").to_pylist() == [pytest.approx(expected.score, abs=1e-9)]
    with pytest.raises(InputError, match=r"row 1: 17 references, but BLEU with "
                                         r"ref_length='average' takes at most 16"):
        fastbleu.score_table(path, refs=refs, ref_length="average")
    assert fastbleu.score_table(path, refs=refs).num_rows == 1  # BLEU takes any number
    assert fastbleu.score_table(lists.slice(0, 2), refs="refs", metrics=["ter"]).num_rows == 1


def test_a_row_without_references_is_refused(ter_parquet):
    table = pa.table({"hyp": ["a", "b"], "ref": ["a", None], "refs": [["a"], []]})
    with pytest.raises(InputError, match="^row 1: every reference is null"):
        fastbleu.score_table(table, metrics=["ter"])
    with pytest.raises(InputError, match="^row 1: every reference is null"):
        fastbleu.score_table(table, refs="refs", metrics=["ter"])


def test_a_segment_too_long_for_ter_is_the_users_error():
    long = " ".join(["w"] * 8192)  # an 8193 x 8193 edit-distance matrix: over the limit
    table = pa.table({"hyp": ["a", "b", "c", long], "ref": ["a", "b", "c", long]})
    with pytest.raises(InputError, match=r"^row 3: too long for TER: 8192 hypothesis"):
        fastbleu.score_table(table, metrics=["bleu", "ter"], batch_size=2)


@pytest.mark.parametrize("metrics", [["ter"], ["bleu", "ter"]])
def test_ter_options_as_keywords_name_the_object_to_pass(ter_parquet, metrics):
    with pytest.raises(TypeError, match=r"^normalized is an option of TER, not of BLEU .*: "
                                        r"pass fastbleu.TER\(normalized=True\) in metrics"):
        fastbleu.score_table(ter_parquet, refs=REFS, metrics=metrics, normalized=True)
    with pytest.raises(TypeError, match=r"pass fastbleu.CHRF\(word_order=2\)"):
        fastbleu.score_table(ter_parquet, refs=REFS, metrics=["ter"], word_order=2)


def test_empty_inputs():
    empty = pa.table({"hyp": pa.array([], pa.string()), "ref": pa.array([], pa.string())})
    result = fastbleu.score_table(empty, metrics=["ter"])
    assert result.to_pylist()[0]["score"] == 0.0 and result.num_rows == 1
    # empty text: sacrebleu's 0 edits over nothing is 0, edits over nothing 100
    table = pa.table({"hyp": ["", "a", ""], "ref": ["", "", "b"], "system": ["x", "y", "z"]})
    rows = fastbleu.score_table(table, group_by="system", metrics=["ter"]).to_pylist()
    for row, (hyp, ref) in zip(rows, [("", ""), ("a", ""), ("", "b")]):
        expected = SacreTER().corpus_score([hyp], [[ref]])
        assert (row["score"], row["num_edits"], row["ref_length"]) == \
            (expected.score, expected.num_edits, expected.ref_length)


# -- paired tests per group ------------------------------------------------------------------

@pytest.mark.parametrize("test", ["bs", "ar"])
def test_paired_ter_per_group_equals_sacrebleu(ter_parquet, test, monkeypatch):
    """Each document's paired test of B against A equals sacrebleu's PairedTest on that
    document's rows (its float32 bootstrap with sacrebleu_compat)."""
    from sacrebleu.significance import PairedTest

    from fastbleu.tables.paired import paired_table

    monkeypatch.setenv("SACREBLEU_SEED", "5")  # PairedTest's seed
    found = paired_table(ter_parquet, refs=["ref"], system="system", group_by="doc",
                         metrics=["ter"], test=test, n_samples=40, seed=5,
                         sacrebleu_compat=True)
    assert found.metric_name == "TER" and found.key_values == [("d0",), ("d1",)]
    table = _ter_table()
    for (doc,), results in zip(found.key_values, found.results):
        rows = [r for r in table.to_pylist() if r["doc"] == doc]
        systems = [(s, [r["hyp"] for r in rows if r["system"] == s]) for s in ("A", "B")]
        refs = [[r["ref"] for r in rows if r["system"] == "A"]]
        theirs = PairedTest(systems, {"TER": SacreTER(references=refs)}, None, test_type=test,
                            n_samples=40)()[1]["TER"]
        assert [(r.score, r.p_value, r.mean, r.ci) for r in results] == \
            [(r.score, r.p_value, r.mean, r.ci) for r in theirs]


def test_sacrebleus_ter_object_and_clashing_column_names(ter_parquet, tmp_path):
    with pytest.raises(TypeError, match="metrics holds a TER; give metric names"):
        fastbleu.score_table(ter_parquet, metrics=[SacreTER()])
    table = pq.read_table(ter_parquet).rename_columns(
        ["hyp", "ref", "ref2", "system", "ref_length", "pair", "refs4"])
    with pytest.raises(ValueError, match="cannot be named 'ref_length': the result has columns "
                                         "score, num_edits, ref_length, signature"):
        fastbleu.score_table(table, group_by="ref_length", metrics=["ter"])
    assert fastbleu.score_table(table, group_by="ref_length", metrics=["bleu"]).num_rows == 2
    with pytest.raises(ValueError, match="cannot be named 'sentence_ter' with segments_out"):
        fastbleu.score_table(table.rename_columns(
            ["hyp", "ref", "ref2", "sentence_ter", "doc", "pair", "refs4"]),
            group_by="sentence_ter", metrics=["ter"], segments_out=tmp_path / "s.parquet")
    assert not (tmp_path / "s.parquet").exists()
