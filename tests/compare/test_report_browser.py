"""The page in a real browser: headless Chromium (Debian's ``chromium`` package).

Each page must load with no console message, no uncaught exception and no error in the
log (a Content-Security-Policy violation is one), request nothing but itself and its
inline images, show every chart it lists, and hold in its tables the numbers that
``fastbleu`` prints as JSON for the same inputs.  A screenshot of each page is kept in
the test's ``tmp_path``.  Without a Chromium the tests skip, saying so.
"""

from __future__ import annotations

import pytest

pytest.importorskip("matplotlib")

RANKING_ROWS = """[...document.querySelectorAll('#chart-ranking-%s tbody tr')].map(tr => {
  const c = tr.querySelectorAll('td');
  return [c[2].textContent, c[3].dataset.value, c[4].dataset.value, c[5].dataset.value];
})"""

pytestmark = pytest.mark.slow  # headless Chromium


@pytest.fixture(scope="module")
def browser(tools):
    binary = tools.browser.find_chromium()
    if binary is None:
        pytest.skip("no Chromium to run the page in: install Debian's chromium package "
                    "(apt-get install chromium) or set $CHROMIUM to a Chromium binary")
    with tools.browser.Browser(binary, timeout=120) as opened:
        yield opened


def load(browser, path):
    """Open ``path``; return the problems and requests of this page only."""
    start = len(browser.events)
    browser.open(path)
    events, browser.events = browser.events, browser.events[start:]
    try:
        return browser.problems(), browser.requests()
    finally:
        browser.events = events


def check_page(browser, path, shot, tools):
    """The checks every page passes; returns its data."""
    problems, requests = load(browser, path)
    assert problems == []
    assert requests[0] == path.resolve().as_uri()
    assert all(url.startswith("data:") for url in requests[1:]), requests
    data = tools.page_data(path)
    drawn = browser.evaluate("""window.fastbleuReport.data.charts.map(key => {
        const svg = document.querySelector(`#chart-${key} .plot svg`);
        const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
        return [key, box.width > 100 && box.height > 50];
    })""")
    assert [key for key, _ in drawn] == data["charts"] and all(ok for _, ok in drawn)
    assert browser.evaluate("document.querySelectorAll('figure.chart').length") == \
        len(data["charts"])
    browser.screenshot(shot)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000
    return data


def test_the_sample_report(browser, tmp_path, capsys, tools):
    from fastbleu.cli import main

    S = tools.SAMPLE
    refs, systems = [str(S["ref-A"]), str(S["ref-B"])], [str(S["sys-A"]), str(S["sys-B"])]
    page = tmp_path / "sample.html"
    assert main(["report", *refs, "-i", *systems, "-m", "bleu", "chrf", "--src",
                 str(S["ref-B"]), "-o", str(page), "-q"]) == 0
    check_page(browser, page, tmp_path / "sample.png", tools)
    expected = tools.fastbleu_json([*refs, "-i", *systems, "-m", "bleu", "chrf",
                                    "--paired-bs"], capsys)
    for key, name in (("bleu", "BLEU"), ("chrf2", "chrF2")):
        shown = {row[0]: [float(v) for v in row[1:]]
                 for row in browser.evaluate(RANKING_ROWS % key)}
        for k, entry in enumerate(expected):
            assert shown[systems[k]] == [entry[name]["score"], entry[name]["mean"],
                                         entry[name]["ci"]]
        p_value = browser.evaluate(f"document.querySelector('#chart-pairs-{key} tbody "
                                   f"tr:nth-child(1) td:nth-child(3)').dataset.pValue")
        assert float(p_value) == expected[1][name]["p_value"]
    # keyboard: the first Tab reaches the skip link; the search filters the examples
    browser.key("Tab", 9)
    assert browser.evaluate("document.activeElement.className") == "skip"
    total = browser.evaluate("document.querySelectorAll('#examples tbody tr').length")
    shown = browser.evaluate("""(() => { const s = document.getElementById('example-search');
        s.value = 'court'; s.dispatchEvent(new Event('input'));
        return [...document.querySelectorAll('#examples tbody tr')].filter(r => !r.hidden)
               .length; })()""")
    assert 0 < shown < total == 50
    csv = browser.evaluate("window.fastbleuReport.exportText('ranking-bleu', 'csv')")
    assert csv.startswith("system,score,mean,ci,cluster,rank\r\n")
    assert browser.pdf()[:5] == b"%PDF-"


def test_a_grouped_table_of_eight_systems(browser, table8, tmp_path, capsys, tools):
    from fastbleu.cli import main

    page = tmp_path / "table8.html"
    assert main(["report", str(table8), "--system-column", "system", "--group-by", "domain",
                 "-m", "bleu", "chrf", "-o", str(page), "-q"]) == 0
    data = check_page(browser, page, tmp_path / "table8.png", tools)
    assert len(data["report"]["systems"]) == 8
    overall = tools.fastbleu_json([str(table8), "--system-column", "system", "--paired-bs",
                                   "-m", "bleu", "chrf"], capsys)
    shown = {row[0]: [float(v) for v in row[1:]] for row in browser.evaluate(RANKING_ROWS
                                                                             % "bleu")}
    for entry in overall:
        name = entry["system"].removeprefix("Baseline: ")
        assert shown[name] == [entry["BLEU"]["score"], entry["BLEU"]["mean"],
                               entry["BLEU"]["ci"]]
    grouped = tools.fastbleu_json([str(table8), "--system-column", "system", "--group-by",
                                   "domain", "--paired-bs", "-m", "bleu", "chrf"], capsys)
    cells = browser.evaluate("""[...document.querySelectorAll('#chart-groups-chrf2 tbody tr')]
        .map(tr => [...tr.querySelectorAll('td')].map(td => td.dataset.value ?? td.textContent))""")
    heads = browser.evaluate("""[...document.querySelectorAll('#chart-groups-chrf2 thead th')]
        .map(th => th.textContent)""")
    for entry in grouped:
        row = next(r for r in cells if r[0] == entry["domain"])
        assert float(row[heads.index(entry["system"])]) == entry["chrF2"]["score"]


def test_text_in_the_page_stays_text(browser, tmp_path, tools):
    from fastbleu.compare import report

    hostile = ['<img src="https://example.invalid/x.png" onerror="window.pwned = 1">',
               '</script><script>window.pwned = 2</script>']
    a = tools.lines(tools.SAMPLE["sys-A"])[:30] + hostile
    b = tools.lines(tools.SAMPLE["sys-B"])[:30] + ["x", "y"]
    ref = tools.lines(tools.SAMPLE["ref-A"])[:30] + hostile
    page = tmp_path / "hostile.html"
    report({'<script>window.pwned = 3</script>': a, "B": b}, [ref], output=page)
    check_page(browser, page, tmp_path / "hostile.png", tools)
    assert browser.evaluate("typeof window.pwned") == "undefined"
    assert browser.evaluate("document.querySelectorAll('img').length") == 0
