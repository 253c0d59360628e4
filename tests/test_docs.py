"""The docs run: every ```python block of README.md and docs/*.md is a test of its own.

Blocks of one page run in order in one namespace, so a page may build on its earlier
blocks; running one block alone (``-k``) runs the page's earlier blocks first.  Each
page runs in a temporary folder holding a copy of ``data/``, so a block may read
``data/sample.ref-A.en`` and write what it likes.  A block preceded by
``<!-- docs-test: skip (reason) -->`` is reported as skipped with that reason; use it
only for what cannot run on a CPU-only machine with the test extras (a GPU, a running
cluster, a model file).

The other checks keep the pages honest: every relative link points to a file that exists
(and every ``#anchor`` to a heading), every command-line flag is on the command-line page,
every page is listed in the index, and the README stays short with its quick start intact.
"""

from __future__ import annotations

import os
import re
import shutil
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote

import pytest


def _root() -> Path:
    """The repository root: the first folder above this file that holds pyproject.toml."""
    for folder in Path(__file__).resolve().parents:
        if (folder / "pyproject.toml").is_file():
            return folder
    raise RuntimeError("tests/test_docs.py is not inside the repository")


ROOT = _root()
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.glob("*.md"))]

#: Pages that other branches are writing: links to them may point nowhere until those
#: branches are merged. Remove a name once its page lands (none pending now).
PENDING_PAGES: frozenset = frozenset()

#: The README's length limit (issue 25): what it is, the quick start, tables, commands, links.
README_MAX_LINES = 300

SKIP_MARKER = re.compile(r"^<!--\s*docs-test:\s*skip\s*\((?P<reason>.+)\)\s*-->\s*$")
FENCE = re.compile(r"^(?P<indent> {0,3})(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
#: Info strings that look like Python but would not be run: write ```python instead.
NOT_RUN_PYTHON = {"py", "python3", "py3", "pycon", "ipython", "pyodide", "Python"}


def _relative(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


@dataclass
class Block:
    """A fenced code block of a page."""

    page: Path
    line: int  # 1-based line of the opening fence
    info: str
    source: str
    skip: str | None = None  # the skip marker's reason

    @property
    def id(self) -> str:
        return f"{_relative(self.page)}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    """Every fenced block of a page, with the skip marker that precedes it (if any)."""
    lines = page.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening.group("fence"), len(opening.group("indent"))
        info = opening.group("info").strip().split()[0] if opening.group("info").strip() else ""
        body, j = [], i + 1
        while j < len(lines):
            closing = FENCE.match(lines[j])
            if (closing and closing.group("fence")[0] == fence[0]
                    and len(closing.group("fence")) >= len(fence)
                    and not closing.group("info").strip()):
                break
            line = lines[j]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))):])
            j += 1
        previous = next((lines[k] for k in range(i - 1, -1, -1) if lines[k].strip()), "")
        marker = SKIP_MARKER.match(previous.strip())
        blocks.append(Block(page, i + 1, info, "\n".join(body) + "\n",
                            marker.group("reason").strip() if marker else None))
        i = j + 1
    return blocks


BLOCKS = {page: _blocks(page) for page in PAGES}
PYTHON = [block for page in PAGES for block in BLOCKS[page] if block.info == "python"]


# ---------------------------------------------------------------------------------------
# Every python block runs
# ---------------------------------------------------------------------------------------


@dataclass
class _PageRun:
    """One page's namespace, its folder, and how many of its python blocks have run."""

    folder: Path
    namespace: dict = field(default_factory=dict)
    done: int = 0


_RUNS: dict[Path, _PageRun] = {}


def _page_run(page: Path, tmp_path_factory) -> _PageRun:
    if page not in _RUNS:
        folder = tmp_path_factory.mktemp(f"docs-{page.stem}")
        data = ROOT / "data"
        if data.is_dir():
            shutil.copytree(data, folder / "data")
        _RUNS[page] = _PageRun(folder, {"__name__": f"docs_{page.stem.replace('-', '_')}"})
    return _RUNS[page]


def _execute(block: Block, namespace: dict) -> None:
    # Padded so that a traceback's line numbers are the page's own.
    code = compile("\n" * block.line + block.source, str(block.page), "exec")
    exec(code, namespace)  # noqa: S102 - the docs' own examples


@pytest.mark.parametrize("block", PYTHON, ids=[block.id for block in PYTHON])
def test_python_block_runs(block, tmp_path_factory, monkeypatch):
    if block.skip:
        pytest.skip(block.skip)
    run = _page_run(block.page, tmp_path_factory)
    monkeypatch.chdir(run.folder)
    page_blocks = [b for b in PYTHON if b.page == block.page and not b.skip]
    index = page_blocks.index(block)
    for earlier in page_blocks[run.done:index]:  # when this block was selected alone
        try:
            _execute(earlier, run.namespace)
        except Exception as error:
            pytest.fail(f"the page's earlier block at line {earlier.line} failed: "
                        f"{type(error).__name__}: {error}")
    run.done = max(run.done, index + 1)
    _execute(block, run.namespace)


def test_the_docs_have_python_blocks():
    """The collection found the blocks (a changed fence syntax would silently test nothing)."""
    assert len(PYTHON) >= 30
    assert {block.page for block in PYTHON} >= {ROOT / "README.md", DOCS / "python-api.md"}


def test_python_blocks_are_fenced_as_python():
    """A block fenced ```py or ```python3 would not be run: use ```python."""
    wrong = [f"{block.id} ({block.info})" for page in PAGES for block in BLOCKS[page]
             if block.info in NOT_RUN_PYTHON]
    assert not wrong, f"fence these as ```python so that they run: {wrong}"


def test_skip_markers_stand_before_python_blocks():
    """A skip marker skips the python block right after it, and nothing else."""
    for page in PAGES:
        lines = page.read_text(encoding="utf-8").splitlines()
        starts = {block.line: block for block in BLOCKS[page]}
        for number, line in _prose(page):  # outside code: a marker quoted in `...` is text
            if "docs-test:" not in line:
                continue
            assert SKIP_MARKER.match(line.strip()), \
                f"{_relative(page)}:{number}: write <!-- docs-test: skip (reason) -->"
            following = next(n for n in range(number + 1, len(lines) + 2)
                             if n > len(lines) or lines[n - 1].strip())
            block = starts.get(following)
            assert block is not None and block.info == "python", \
                f"{_relative(page)}:{number}: the skip marker is not right before a python block"


# ---------------------------------------------------------------------------------------
# Links
# ---------------------------------------------------------------------------------------

LINK = re.compile(r"(?<!!)\[[^\]]*\]\((?P<target><[^>]*>|[^)\s]+)(?:\s+\"[^\"]*\")?\)")
DEFINITION = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(?P<target><[^>]*>|\S+)")  # [name]: target
INLINE_CODE = re.compile(r"(`+).+?\1")


def _prose(page: Path) -> list[tuple[int, str]]:
    """The page's lines outside fenced blocks, with inline code removed."""
    fenced = set()
    for block in BLOCKS.get(page) or _blocks(page):
        fenced.update(range(block.line, block.line + block.source.count("\n") + 2))
    lines = page.read_text(encoding="utf-8").splitlines()
    return [(n, INLINE_CODE.sub("", line)) for n, line in enumerate(lines, 1) if n not in fenced]


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lowercased, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    kept = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LNM")
    return kept.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    anchors, seen = set(), {}
    for _, line in _prose(page):
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            slug = _slug(heading.group(1))
            anchors.add(slug if slug not in seen else f"{slug}-{seen[slug]}")
            seen[slug] = seen.get(slug, 0) + 1
    return anchors


def _links(page: Path) -> list[tuple[int, str]]:
    """Every link target of the page's prose: inline links and reference definitions."""
    found = []
    for number, line in _prose(page):
        matches = [*LINK.finditer(line), *filter(None, [DEFINITION.match(line)])]
        found.extend((number, match.group("target").strip("<>")) for match in matches)
    return found


def _broken_links(page: Path, root: Path = ROOT, pending=PENDING_PAGES) -> list[str]:
    """The page's relative links that point to no file (pending pages aside), outside the
    repository, or to a heading the target page does not have."""
    broken = []
    for number, target in _links(page):
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto: ...
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / unquote(path)).resolve() if path else page
        where = f"{page.relative_to(root).as_posix()}:{number}: {target}"
        if not resolved.is_relative_to(root):
            broken.append(f"{where} (outside the repository)")
        elif not resolved.exists():
            if resolved.relative_to(root).as_posix() not in pending:
                broken.append(f"{where} (no such file)")
        elif anchor and resolved.suffix == ".md" and anchor not in _anchors(resolved):
            broken.append(f"{where} (no heading with that anchor)")
    return broken


@pytest.mark.parametrize("page", PAGES, ids=[_relative(page) for page in PAGES])
def test_relative_links_point_to_files_and_headings(page):
    broken = _broken_links(page)
    assert not broken, "broken links:\n" + "\n".join(broken)


def test_link_check_finds_what_is_broken(tmp_path):
    """The checker itself, on a small tree: each kind of broken link is found, and only those."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "other.md").write_text("# A heading\n\n## chrF and chrF++\n",
                                                encoding="utf-8")
    page = tmp_path / "docs" / "page.md"
    page.write_text(
        "# Page\n\n[ok](other.md) [ok](other.md#chrf-and-chrf) [ok](#page) [ok](https://x.org)\n"
        "[bad](missing.md) [bad](other.md#no-such-heading) [bad](../../outside.md)\n"
        "[pending](gpu.md) `[not a link](nowhere.md)`\n\n"
        "```text\n[not a link](nowhere.md)\n```\n\n[ref]: <also missing.md>\n",
        encoding="utf-8")
    broken = _broken_links(page, tmp_path, pending={"docs/gpu.md"})
    assert [line.split(": ", 1)[1] for line in broken] == [
        "missing.md (no such file)", "other.md#no-such-heading (no heading with that anchor)",
        "../../outside.md (outside the repository)", "also missing.md (no such file)"]


def test_slugs_follow_github():
    assert _slug("chrF and chrF++") == "chrf-and-chrf"
    assert _slug("Start-up: ahead-of-time kernels") == "start-up-ahead-of-time-kernels"
    assert _slug("NLTK's numbers") == "nltks-numbers"
    assert _slug("Pairwise matrices (MBR)") == "pairwise-matrices-mbr"


def test_every_docs_page_is_in_the_index_and_the_readme_links_the_index():
    index = {target.partition("#")[0] for _, target in _links(DOCS / "index.md")}
    missing = [page.name for page in DOCS.glob("*.md")
               if page.name != "index.md" and page.name not in index]
    assert not missing, f"docs/index.md does not list {missing}"
    readme = {target.partition("#")[0] for _, target in _links(ROOT / "README.md")}
    assert "docs/index.md" in readme
    assert {name for name in PENDING_PAGES} <= readme, "link the pending pages from the README"


# ---------------------------------------------------------------------------------------
# What the pages must hold
# ---------------------------------------------------------------------------------------


def test_every_command_line_flag_is_documented():
    from fastbleu.cli import build_parser

    page = (DOCS / "command-line.md").read_text(encoding="utf-8")
    flags = [flag for action in build_parser()._actions for flag in action.option_strings]
    missing = [flag for flag in flags if f"`{flag}" not in page and f" {flag}`" not in page
               and f", {flag}" not in page]
    assert flags and not missing, f"docs/command-line.md does not mention {missing}"


def test_readme_is_short_and_keeps_its_quick_start():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= README_MAX_LINES
    block = re.search(r"<!-- quick-start:begin -->\s*```bash\n(.*?)```\s*<!-- quick-start:end -->",
                      readme, re.S)
    assert block, "README.md lost its quick-start block (.ci/run reads it)"
    commands = [line for line in block.group(1).splitlines()
                if line.strip() and not line.lstrip().startswith("#")]
    assert len(commands) == 2


def test_block_parser_on_a_page_of_its_own(tmp_path):
    """Fences, info strings, indentation and skip markers, as the tests above rely on."""
    page = tmp_path / "page.md"
    page.write_text("text\n\n```python\nx = 1\n```\n\n<!-- docs-test: skip (needs a GPU) -->\n"
                    "```python\nimport cupy\n```\n\n- item\n\n  ```bash\n  ls\n  ```\n"
                    "````text\n```python\nnot a block\n```\n````\n", encoding="utf-8")
    blocks = _blocks(page)
    assert [(b.line, b.info, b.skip) for b in blocks] == [
        (3, "python", None), (8, "python", "needs a GPU"), (14, "bash", None), (17, "text", None)]
    assert blocks[0].source == "x = 1\n" and blocks[2].source == "ls\n"
    assert "not a block" in blocks[3].source
