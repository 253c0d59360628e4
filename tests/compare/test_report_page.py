"""The page and the summary on hostile inputs: escaped text, one system, fifty systems, a
group of one segment, empty hypotheses, and outputs that must not be written."""

from __future__ import annotations

import html
import os

import pytest

from fastbleu.compare import report
from fastbleu.errors import InputError

pytest.importorskip("matplotlib")

HOSTILE_NAME = '<script>window.pwned = 1</script>'
HOSTILE_TEXT = ['</script><script>window.pwned = 2</script>', '<img src=x onerror="pwned=3">',
                'Tom &amp; Jerry <b>bold</b> $x$ | pipe', 'x' * 5000]


def _sample(tools, n=60):
    return (tools.lines(tools.SAMPLE["sys-A"])[:n], tools.lines(tools.SAMPLE["sys-B"])[:n],
            tools.lines(tools.SAMPLE["ref-A"])[:n])


def test_html_and_script_in_the_text_are_escaped(tmp_path, tools):
    a, b, ref = _sample(tools)
    a, ref = a + HOSTILE_TEXT, ref + HOSTILE_TEXT  # a perfect match: among the examples
    b = b + ["plain"] * len(HOSTILE_TEXT)
    found = report({HOSTILE_NAME: a, "B | $y$": b}, [ref], sources=ref,
                   groups=[HOSTILE_NAME] * len(a), output=tmp_path / "r.html", examples=40)
    page = (tmp_path / "r.html").read_text(encoding="utf-8")
    summary = (tmp_path / "r.md").read_text(encoding="utf-8")
    for raw in (HOSTILE_NAME, HOSTILE_TEXT[0], HOSTILE_TEXT[1], "<b>bold</b>"):
        assert raw not in page
        assert raw not in summary
    assert html.escape(HOSTILE_NAME) in page  # shown, as text
    assert page.count("<script") == 2  # the data and the page's own script, nothing else
    data = tools.page_data(tmp_path / "r.html")
    assert data["report"]["systems"][0] == HOSTILE_NAME  # the data holds the text as it is
    texts = [row["hyp_a"] for row in data["report"]["examples"]]
    assert HOSTILE_TEXT[0] in texts and any(t.startswith("x" * 2000 + " … [3,000 more")
                                            for t in texts)
    assert r"\<script\>" in summary and r"B \| $y$" in summary
    assert found.files == [str(tmp_path / "r.html"), str(tmp_path / "r.md")]


def test_one_system_has_no_significance_and_says_so(tmp_path, tools):
    a, _, ref = _sample(tools)
    found = report({"only": a}, [ref], output=tmp_path / "one.html")
    page = (tmp_path / "one.html").read_text(encoding="utf-8")
    assert "One system: there is nothing to compare it with, so no significance test" in page
    assert "One system: no pair to test." in page
    assert "pairs" not in tools.page_data(tmp_path / "one.html")["report"]["ranking"][0]
    assert found.rankings[0].p is None
    assert "One system: no significance test" in (tmp_path / "one.md").read_text()


@pytest.mark.slow  # fifty systems' pages (issue 28: -m slow)
def test_fifty_systems(tmp_path, tools):
    table = tools.systems_table(50, 30, domains=2)
    found = report(table, group_by=["domain"], metrics=["bleu", "chrf"], n_samples=200,
                   output=tmp_path / "fifty.html")
    data = tools.page_data(tmp_path / "fifty.html")
    assert len(found.systems) == 50 and len(data["report"]["ranking"][0]["pairs"]) == 50 * 49
    assert found.rankings[0].p.shape == (50, 50)
    page = (tmp_path / "fifty.html").read_text(encoding="utf-8")
    assert "The 50×50 table" in page  # folded, beside a matrix without numbers in its cells
    assert set(data["charts"]) >= {"ranking-bleu", "pairs-bleu", "groups-bleu",
                                   "pairs-chrf2"}
    assert os.path.getsize(tmp_path / "fifty.html") < 5_000_000


def test_a_group_of_one_segment(tmp_path, tools):
    a, b, ref = _sample(tools, 40)
    groups = ["big"] * 39 + ["alone"]
    found = report({"A": a, "B": b}, [ref], groups=groups, output=tmp_path / "g.html")
    alone = found.groups.values.index(("alone",))
    assert found.groups.sizes[alone] == 1
    for rank in found.groups.rankings[alone]:
        assert rank.ci.tolist() == [0.0, 0.0]  # every resample is that one segment
        assert rank.mean.tolist() == pytest.approx(rank.score.tolist())
        # no resample differs from the observed difference: the smallest p-value there is
        assert rank.score[0] != rank.score[1] and rank.p[0, 1] == 1 / 1001
    page = (tmp_path / "g.html").read_text(encoding="utf-8")
    assert "Fewer than 10 segments: alone (1)" in page


def test_empty_hypotheses(tmp_path, tools):
    _, b, ref = _sample(tools, 30)
    found = report({"empty": [""] * 30, "B": b}, [ref], metrics=["bleu", "chrf", "ter"],
                   output=tmp_path / "e.html")
    empty = found.systems.index("empty")
    assert found.rankings[0].score[empty] == 0.0 and found.rankings[1].score[empty] == 0.0
    assert found.rankings[2].score[empty] == 100.0  # TER: every reference word is an edit
    assert found.rankings[2].lower_is_better
    assert found.rankings[2].order.tolist()[-1] == empty
    with pytest.raises(InputError, match="no segments"):
        report({"A": []}, [[]], output=tmp_path / "none.html")
    assert not (tmp_path / "none.html").exists()


def test_the_same_inputs_make_the_same_page(tmp_path, tools):
    a, b, ref = _sample(tools, 40)
    for name in ("1.html", "2.html"):
        report({"A": a, "B": b}, [ref], output=tmp_path / name)
    assert (tmp_path / "1.html").read_bytes() == (tmp_path / "2.html").read_bytes()


def test_outputs_onto_an_input_are_refused_before_any_work(tmp_path, tools):
    import pyarrow.parquet as pq

    table = tmp_path / "t.parquet"
    pq.write_table(tools.systems_table(2, 20), table)
    before = table.read_bytes()
    with pytest.raises(InputError, match="is the input; not writing over it"):
        report(str(table), output=table)
    with pytest.raises(InputError, match="is the input"):
        report(str(table), output=tmp_path / "r.html", markdown=table)
    with pytest.raises(InputError, match="need two paths"):
        report(str(table), output=tmp_path / "r.html", markdown=tmp_path / "r.html")
    assert table.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.parquet"]  # no temporary left


def test_many_groups_keep_the_page_small(tmp_path, tools):
    a, b, ref = _sample(tools, 600)
    groups = [f"doc-{k // 2:03d}" for k in range(600)]  # 300 documents of 2 segments
    found = report({"A": a, "B": b}, [ref], groups=groups, n_samples=50, metrics=["bleu"],
                   output=tmp_path / "docs.html")
    assert len(found.groups.values) == 300
    data = tools.page_data(tmp_path / "docs.html")["report"]["groups"]
    assert data["count"] == 300 and len(data["groups"]) == 200
    assert "pairs" not in data["groups"][0]["ranking"][0]
    page = (tmp_path / "docs.html").read_text(encoding="utf-8")
    assert "The 24 largest groups are drawn; the table has the 200 largest of 300." in page
    assert "(200 largest of 300 groups)" in (tmp_path / "docs.md").read_text()


def test_a_single_group_is_the_whole_corpus(tmp_path, tools):
    a, b, ref = _sample(tools, 40)
    found = report({"A": a, "B": b}, [ref], groups=["all"] * 40, n_samples=100)
    assert found.groups.rankings == [found.rankings]
