"""Hostile or damaged sacrebleu test-set files: one line naming the file, exit 2.

``$SACREBLEU`` is built here in sacrebleu's layout (as in test_cli_dropin), then
its raw WMT 2022 XML release or WMT 2019 SGML file is replaced by something
broken or hostile: truncated XML, two source languages, a ``<doc>`` without
``origlang``, a segment id that is not an integer, binary garbage, an
external entity, a billion-laughs file, invalid UTF-8, a FIFO, a folder, a
file far too large.  Every command that reads it (scoring, ``--echo``,
``-d``, ``--origlang``) must print one ``fastbleu: error:`` line that names
the file and gives the ``sacrebleu`` command fetching a fresh copy; never a
traceback, never a hang, never a file's content leaked.  A well-formed file
is unwrapped exactly as sacrebleu unwraps it.

Also from issue 28: ``-d`` without ``-t`` behaves as sacrebleu's.
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.data import HYP, REF, ROOT
from testkit.testsets import XML, XML_HYP, sacrebleu_folder, write_lines
from testkit.marks import slow

pytest.importorskip("sacrebleu")
pytest.importorskip("lxml")

SACREBLEU = shutil.which("sacrebleu")

SECRET = "fastbleu-secret-7d1f"

SGM_DOCS = [("d1", "de", ["Die Katze sitzt.", "Hallo Welt."]),
            ("d2", "en", ["Guten Morgen.", "Das ist gut."])]
SGM_HYP = ["The cat sat.", "Hello world!", "Good morning.", "This is good."]


@pytest.fixture
def sacrebleu_dir(tmp_path, monkeypatch):
    """$SACREBLEU with wmt22 en-de (XML) and wmt19 de-en (SGML), as sacrebleu leaves them."""
    root = sacrebleu_folder(tmp_path / "sacrebleu", SGM_DOCS, SGM_HYP)
    write_lines(tmp_path / "hyp22.txt", XML_HYP)
    write_lines(tmp_path / "hyp19.txt", SGM_HYP)
    (tmp_path / "secret.txt").write_text(SECRET)
    monkeypatch.setenv("SACREBLEU", str(root))
    monkeypatch.chdir(tmp_path)
    return root


def _xml_path(root: Path) -> Path:
    from sacrebleu.dataset import DATASETS

    return root / "wmt22" / "raw" / DATASETS["wmt22"].langpairs["en-de"][0]


def _sgm_path(root: Path) -> Path:
    from sacrebleu.dataset import DATASETS

    return root / "wmt19" / "raw" / DATASETS["wmt19"].langpairs["de-en"][0]


def ours(*args) -> subprocess.CompletedProcess:
    """The command in this process (``main``), its two streams captured."""
    from fastbleu.cli import main

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return subprocess.CompletedProcess(args, status, out.getvalue(), err.getvalue())


def _assert_one_line(result, path: Path, fetch: str) -> None:
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1, result.stderr
    assert result.stderr.startswith("fastbleu: error: ")
    assert str(path) in result.stderr
    assert fetch in result.stderr
    assert SECRET not in result.stderr


# --- broken XML releases -----------------------------------------------------------------

def _replace(old: str, new: str):
    def damage(path: Path) -> None:
        text = path.read_text(encoding="utf-8")
        assert old in text
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    damage.__name__ = f"replace {old!r}"
    return damage


def _bytes(data: bytes, name: str):
    def damage(path: Path) -> None:
        path.write_bytes(data)
    damage.__name__ = name
    return damage


def _truncated(path: Path) -> None:
    path.write_bytes(path.read_bytes()[: len(XML) // 2])


def _external_entity(path: Path) -> None:
    secret = Path("secret.txt").resolve()
    text = XML.replace('<?xml version="1.0" encoding="utf-8"?>\n',
                       '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE dataset [\n'
                       f'  <!ENTITY xxe SYSTEM "file://{secret}">\n]>\n')
    path.write_text(text.replace("Good evening.", "&xxe;"), encoding="utf-8")


def _billion_laughs(path: Path) -> None:
    entities = ['  <!ENTITY lol0 "lol">'] + [
        f'  <!ENTITY lol{k} "{("&lol" + str(k - 1) + ";") * 10}">' for k in range(1, 10)]
    text = XML.replace('<?xml version="1.0" encoding="utf-8"?>\n',
                       '<?xml version="1.0" encoding="utf-8"?>\n<!DOCTYPE dataset [\n'
                       + "\n".join(entities) + "\n]>\n")
    path.write_text(text.replace("Good evening.", "&lol9;"), encoding="utf-8")


def _invalid_utf8(path: Path) -> None:
    path.write_bytes(XML.encode().replace(b"Good evening.", b"Good \xff\xfe evening."))


def _a_folder(path: Path) -> None:
    path.unlink()
    path.mkdir()


def _too_large(path: Path) -> None:
    with path.open("r+b") as handle:  # sparse: takes no disk space
        handle.truncate(300 << 20)


def _undefined_entity(path: Path) -> None:
    path.write_text(XML.replace("Good evening.", "Good &nbsp; evening."), encoding="utf-8")


XML_DAMAGE = [
    _truncated,
    _replace('<src lang="en"><p><seg id="1">Good', '<src lang="fr"><p><seg id="1">Good'),
    _replace('<ref lang="de" translator="B"><p><seg id="1">Schönen',
             '<ref lang="fr" translator="B"><p><seg id="1">Schönen'),
    _replace('<doc origlang="de" id="a2">', '<doc id="a2">'),
    _replace('<doc origlang="de" id="a2">', '<doc origlang="de">'),
    _replace('<seg id="1">Good evening.', '<seg id="one">Good evening.'),
    _replace('<seg id="1">Good evening.', '<seg>Good evening.'),
    _replace('<seg id="2">Ich mag es.', '<seg id="2.5">Ich mag es.'),
    _bytes(bytes(range(256)) * 40, "binary garbage"),
    _bytes(b"", "empty"),
    _bytes(b"\x1f\x8b\x08\x00garbage", "gzip magic"),
    _external_entity,
    _billion_laughs,
    _undefined_entity,
    _invalid_utf8,
    _a_folder,
    _too_large,
]

XML_COMMANDS = [
    ["-t", "wmt22", "-l", "en-de", "-i", "hyp22.txt"],
    ["-t", "wmt22", "-l", "en-de", "--echo", "src"],
    ["-t", "wmt22", "-l", "en-de", "-i", "hyp22.txt", "-d"],
    ["-t", "wmt22", "-l", "en-de", "-i", "hyp22.txt", "--origlang", "en"],
]


@pytest.mark.parametrize("damage", XML_DAMAGE, ids=lambda d: d.__name__)
def test_a_broken_xml_release_is_one_line(sacrebleu_dir, damage):
    path = _xml_path(sacrebleu_dir)
    damage(path)
    for command in XML_COMMANDS:
        _assert_one_line(ours(*command), path, "sacrebleu --download wmt22 -l en-de")


def test_a_fifo_in_place_of_the_xml_release_does_not_hang(sacrebleu_dir):
    path = _xml_path(sacrebleu_dir)
    path.unlink()
    os.mkfifo(path)
    done = subprocess.run([sys.executable, "-m", "fastbleu", "-t", "wmt22", "-l", "en-de",
                           "--echo", "src"], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT)})
    _assert_one_line(done, path, "sacrebleu --download wmt22 -l en-de")


# --- broken SGML releases (read for --origlang and -d) -----------------------------------

SGM_COMMANDS = [
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp19.txt", "--origlang", "de"],
    ["-t", "wmt19", "-l", "de-en", "-i", "hyp19.txt", "-d"],
    ["-t", "wmt19", "-l", "de-en", "--echo", "src", "--origlang", "en"],
]


@pytest.mark.parametrize("damage", [
    _bytes('<doc sysid="ref" docid="d1" origlang="de">\n<seg id="1">Die \xff Katze</seg>\n'
           .encode("latin-1"), "invalid UTF-8"),
    _bytes(bytes(range(256)) * 40, "binary garbage"),
    _a_folder,
    _too_large,
], ids=lambda d: d.__name__)
def test_a_broken_sgm_release_is_one_line(sacrebleu_dir, damage):
    path = _sgm_path(sacrebleu_dir)
    damage(path)
    for command in SGM_COMMANDS:
        _assert_one_line(ours(*command), path, "sacrebleu --download wmt19 -l de-en")


def test_intact_files_still_score(sacrebleu_dir):
    for command in [*XML_COMMANDS, *SGM_COMMANDS]:
        result = ours(*command)
        assert result.returncode == 0, result.stderr
        assert result.stdout


# --- a well-formed release: exactly sacrebleu's fields -----------------------------------

WELL_FORMED = [
    XML,
    XML.replace('<doc origlang="en" id="a1">', '<doc origlang="en" id="a1" domain="news">')
       .replace('<doc origlang="de" id="a2">', '<doc origlang="de" id="a2" domain="chat">'),
    XML.replace('translator="B"', 'translator=""'),
    XML.replace("Ich mag es.</seg><seg id=\"2\">Es gefällt", "</seg><seg id=\"2\">Es gefällt")
       .replace("Ich mag es.", ""),
    XML.replace("I like it.", "I &amp; you &lt;3 &#169;").replace("Good evening.",
                                                                   "<![CDATA[a < b]]>"),
    XML.replace("</doc>\n  </collection>",
                '</doc>\n    <doc origlang="en" id="t1" testsuite="x"><src lang="en"><p>'
                '<seg id="1">Suite.</seg></p></src></doc>\n  </collection>', 1),
    XML.replace('<ref lang="de" translator="B"><p><seg id="1">Das Haus ist rot!</seg>',
                '<hyp system="sys1"><p><seg id="1">H1</seg><seg id="2">H2</seg></p></hyp>'
                '<ref lang="de" translator="B"><p><seg id="1">Das Haus ist rot!</seg>'),
    XML.replace('<seg id="2">I like it.</seg>', '<seg id="02">I like it.</seg><!-- c -->'),
]


@pytest.mark.parametrize("text", WELL_FORMED, ids=range(len(WELL_FORMED)))
def test_well_formed_releases_unwrap_as_sacrebleu(tmp_path, text):
    from sacrebleu.dataset.wmt_xml import WMTXMLDataset

    from fastbleu.cli.testset_files import wmt_xml_fields

    path = tmp_path / "release.xml"
    path.write_text(text, encoding="utf-8")
    expected = WMTXMLDataset._unwrap_wmt21_or_later(str(path))
    got = wmt_xml_fields(str(path), "wmt22", "en-de")
    assert got == expected
    assert list(got)[:1] == ["src"] and set(got) == set(expected)


# --- -d without -t, as sacrebleu (issue 28) ----------------------------------------------

DETAIL = [["-d", "-f", "text"], ["-d"], ["-d", "-b"], ["-d", "-m", "chrf", "bleu", "-f", "text"],
          ["-d", "-f", "json"]]


@pytest.mark.skipif(SACREBLEU is None, reason="no sacrebleu command")
# Quick: -d alone and with two metrics in text; the other three with -m slow (issue 28).
@pytest.mark.parametrize("flags", [f if f in (["-d"], ["-d", "-m", "chrf", "bleu", "-f", "text"])
                                   else slow(f) for f in DETAIL], ids=" ".join)
def test_detail_without_a_test_set_is_as_sacrebleu(flags):
    import sacrebleu

    from fastbleu._version import __version__

    mine = ours(REF, "-i", HYP, *flags)
    theirs = subprocess.run([SACREBLEU, REF, "-i", HYP, *flags], capture_output=True,
                            text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"})
    assert theirs.returncode == 0 and mine.returncode == 0, mine.stderr
    assert "No subset information found" in mine.stdout
    assert (mine.stdout.replace(f"fastbleu-{__version__}", "X")
            == theirs.stdout.replace(sacrebleu.__version__, "X"))


def test_detail_on_a_table_still_needs_a_test_set(tmp_path):
    table = tmp_path / "t.tsv"
    table.write_text("hyp\tref\na b\ta b\n", encoding="utf-8")
    result = ours(table, "--hyp-column", "hyp", "--ref-column", "ref", "-d")
    assert result.returncode == 2
    assert result.stderr.startswith("fastbleu: error: -d/--detail needs a test set")
