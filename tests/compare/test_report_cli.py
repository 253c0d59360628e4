"""``fastbleu report``: the command's flags, and one line and exit 2 for every user error."""

from __future__ import annotations

import pytest

from fastbleu.cli import main

pytest.importorskip("matplotlib")


def run(argv, capsys):
    capsys.readouterr()
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_text_files_with_the_commands_flags(tmp_path, capsys, tools):
    S = tools.SAMPLE
    out = tmp_path / "r.html"
    status, stdout, stderr = run(["report", str(S["ref-A"]), "-i", str(S["sys-A"]),
                                  str(S["sys-B"]), "-m", "chrf", "bleu", "-lc", "-tok", "intl",
                                  "-pbsn", "100", "--seed", "7", "--src", str(S["ref-B"]),
                                  "--pair", str(S["sys-B"]), str(S["sys-A"]), "--examples",
                                  "3", "--title", "Sample <A> & <B>", "-o", str(out)],
                                 capsys)
    assert (status, stdout) == (0, "")
    assert stderr.startswith(f"fastbleu: wrote {out} and {tmp_path / 'r.md'} (2 systems")
    data = tools.page_data(out)["report"]
    assert data["metrics"] == ["chrF2", "BLEU"]  # the order of -m: chrF orders the examples
    assert "case:lc|" in data["ranking"][1]["signature"]
    assert "tok:intl" in data["ranking"][1]["signature"]
    assert data["resamples"] == 100 and data["seed"] == "7"
    assert data["pair"] == {"a": str(S["sys-B"]), "b": str(S["sys-A"])}
    assert len(data["examples"]) <= 6 and data["examples"][0]["src"]
    assert data["title"] == "Sample <A> & <B>"


def test_a_table(tmp_path, capsys, table8, tools):
    out = tmp_path / "t.html"
    status, _, _ = run(["report", str(table8), "--system-column", "system", "--group-by",
                        "domain", "-m", "bleu", "--no-markdown", "-q", "-o", str(out)], capsys)
    assert status == 0 and not (tmp_path / "t.md").exists()
    data = tools.page_data(out)["report"]
    assert len(data["systems"]) == 8 and len(data["groups"]["groups"]) == 3


@pytest.mark.parametrize("argv, message", [
    (["-m", "nist"], "a report scores bleu, chrf and ter; not 'nist'"),
    (["-m", "meteor"], "unknown metric 'meteor'"),
    (["--pair", "x", "y"], "pair: no system 'x'"),
    (["--alpha", "1.5"], "--alpha must be between 0 and 1"),
    (["-pbsn", "0"], "-pbsn/--paired-bs-n must be at least 1"),
    (["-pbsn", "10", "-cin", "20"], "are one number of resamples here"),
    (["--examples", "-1"], "--examples must be 0 or more"),
    (["--group-by", "domain"], "a table is reported on its own"),
    (["--markdown", "s.md", "--no-markdown"], "contradict each other"),
])
def test_user_errors_are_one_line_and_exit_2(argv, message, tmp_path, capsys, tools):
    S = tools.SAMPLE
    out = tmp_path / "r.html"
    status, stdout, stderr = run(["report", str(S["ref-A"]), "-i", str(S["sys-A"]),
                                  str(S["sys-B"]), "-o", str(out), *argv], capsys)
    assert (status, stdout) == (2, "")
    assert stderr.count("\n") == 1 and stderr.startswith("fastbleu: error: ")
    assert message in stderr
    assert list(tmp_path.iterdir()) == []


def test_inputs_are_never_written_over(tmp_path, capsys, tools, table8):
    S = tools.SAMPLE
    system = tmp_path / "sys.txt"
    system.write_bytes(S["sys-A"].read_bytes())
    link = tmp_path / "link.html"
    link.symlink_to(system)
    for argv in ([str(S["ref-A"]), "-i", str(system), "-o", str(system)],
                 [str(S["ref-A"]), "-i", str(system), "-o", str(link)],
                 [str(S["ref-A"]), "-i", str(system), "-o", str(tmp_path / "r.html"),
                  "--markdown", str(S["ref-A"])],
                 [str(S["ref-A"]), "-i", str(system), "--src", str(S["ref-B"]), "-o",
                  str(S["ref-B"])],
                 [str(table8), "-o", str(table8)]):
        status, stdout, stderr = run(["report", *argv], capsys)
        assert (status, stdout) == (2, "")
        assert stderr.count("\n") == 1 and "not writing over it" in stderr
    assert system.read_bytes() == S["sys-A"].read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.html", "sys.txt"]


def test_a_default_summary_onto_an_input_says_how_to_choose(tmp_path, capsys, tools):
    """``-o sys.html`` puts the summary at ``sys.md``; when that is an input, the refusal
    names the flags that choose another path or none (only then: a chosen path is the
    user's own words and needs no hint)."""
    S = tools.SAMPLE
    system = tmp_path / "sys.md"
    system.write_bytes(S["sys-A"].read_bytes())
    base = ["report", str(S["ref-A"]), "-i", str(system), "-o", str(tmp_path / "sys.html")]
    status, stdout, stderr = run(base, capsys)
    assert (status, stdout) == (2, "") and stderr.count("\n") == 1
    assert "not writing over it" in stderr and "--no-markdown" in stderr
    status, _, stderr = run(base[:-2] + ["-o", str(tmp_path / "r.html"), "--markdown",
                                         str(system)], capsys)
    assert status == 2 and "not writing over it" in stderr and "--no-markdown" not in stderr
    assert run(base + ["--no-markdown"], capsys)[0] == 0
    assert system.read_bytes() == S["sys-A"].read_bytes()


@pytest.mark.parametrize("case", ["missing", "empty", "short", "column"])
def test_bad_inputs(case, tmp_path, capsys, tools, table8):
    S = tools.SAMPLE
    empty = tmp_path / "empty.txt"
    empty.write_text("")
    short = tmp_path / "short.txt"
    short.write_text("one line\n")
    argv = {"missing": [str(S["ref-A"]), "-i", str(tmp_path / "nope.txt")],
            "empty": [str(empty), "-i", str(empty)],
            "short": [str(S["ref-A"]), "-i", str(short)],
            "column": [str(table8), "--hyp-column", "nope"]}[case]
    status, stdout, stderr = run(["report", *argv, "-o", str(tmp_path / "r.html")], capsys)
    assert (status, stdout) == (2, "") and stderr.count("\n") == 1
    assert not (tmp_path / "r.html").exists()


def test_help_lists_the_report_flags(capsys):
    with pytest.raises(SystemExit) as stop:
        main(["report", "--help"])
    assert stop.value.code == 0
    shown = capsys.readouterr().out
    for flag in ("--system-column", "--group-by", "--pair", "-pbsn", "--seed",
                 "-o REPORT.html"):
        assert flag in shown


def test_without_matplotlib_one_line_names_the_extra(tmp_path, capsys, monkeypatch, tools):
    import sys

    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if it were not installed
    S = tools.SAMPLE
    status, stdout, stderr = run(["report", str(S["ref-A"]), "-i", str(S["sys-A"]), "-o",
                                  str(tmp_path / "r.html")], capsys)
    assert (status, stdout) == (2, "")
    assert stderr == ("fastbleu: error: fastbleu report draws its charts with matplotlib, "
                      "which is not installed: pip install 'fastbleu[report]'\n")
    assert list(tmp_path.iterdir()) == []


def test_dash_writes_the_page_to_standard_output(tmp_path, capsys, tools, table8,
                                                 monkeypatch):
    """``-o -`` prints the page (no file named ``-``, no ``-.md``); a summary is written
    only where ``--markdown`` says, and links to no page; the page equals the file's."""
    S = tools.SAMPLE
    monkeypatch.chdir(tmp_path)
    base = ["report", str(S["ref-A"]), "-i", str(S["sys-A"]), str(S["sys-B"]), "-pbsn", "50"]
    status, stdout, stderr = run(base + ["-o", "-"], capsys)
    assert status == 0 and list(tmp_path.iterdir()) == []
    assert stdout.startswith("<!DOCTYPE html>") and stdout.rstrip().endswith("</html>")
    assert stderr.startswith("fastbleu: wrote the page to standard output (2 systems")
    assert run(base + ["-o", "r.html", "--no-markdown"], capsys)[0] == 0
    assert (tmp_path / "r.html").read_text(encoding="utf-8") == stdout
    summary = tmp_path / "summary.md"
    status, stdout, stderr = run(base + ["-o", "-", "--markdown", str(summary), "-q"], capsys)
    assert status == 0 and stderr == "" and stdout.startswith("<!DOCTYPE html>")
    text = summary.read_text(encoding="utf-8")
    assert str(S["sys-A"].name) in text and "BLEU" in text
    assert "The charts, every pair and the examples" not in text  # no page to link to
    status, stdout, _ = run(["report", str(table8), "-m", "bleu", "-pbsn", "20", "-q",
                             "-o", "-"], capsys)
    assert status == 0 and tools.page_data_text(stdout)["report"]["systems"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html", "summary.md"]


def test_dash_with_a_summary_onto_an_input_is_refused_before_any_output(tmp_path, capsys,
                                                                        tools, table8):
    S = tools.SAMPLE
    system = tmp_path / "sys.txt"
    system.write_bytes(S["sys-A"].read_bytes())
    for argv in ([str(S["ref-A"]), "-i", str(system), "--markdown", str(system)],
                 [str(table8), "--markdown", str(table8)]):
        status, stdout, stderr = run(["report", *argv, "-o", "-"], capsys)
        assert (status, stdout) == (2, "")
        assert stderr.count("\n") == 1 and "not writing over it" in stderr
    assert system.read_bytes() == S["sys-A"].read_bytes()


def test_dash_into_a_closed_pipe_exits_quietly(tmp_path, tools):
    """``fastbleu report ... -o - | head -c 10``: the reader leaves early; the command ends
    with the broken-pipe status and no traceback."""
    import subprocess
    import sys

    S = tools.SAMPLE
    command = [sys.executable, "-m", "fastbleu", "report", str(S["ref-A"]), "-i",
               str(S["sys-A"]), "-pbsn", "20", "-o", "-"]
    writer = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              cwd=tmp_path, env=_env())
    head = writer.stdout.read(10)
    writer.stdout.close()
    stderr = writer.stderr.read().decode()
    assert writer.wait(timeout=120) in (0, 141, -13)
    assert head == b"<!DOCTYPE " and "Traceback" not in stderr
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("summary", ["-", ""])
@pytest.mark.parametrize("output", ["-", "r.html"])
def test_a_dash_summary_is_refused_in_one_line(output, summary, tmp_path, capsys, tools,
                                               monkeypatch):
    """``--markdown -`` would write a file named ``-`` (or, with ``-o -``, put two documents
    into one stream), ``--markdown ''`` silently none or the default: refused before any
    work, nothing written."""
    S = tools.SAMPLE
    monkeypatch.chdir(tmp_path)
    status, stdout, stderr = run(["report", str(S["ref-A"]), "-i", str(S["sys-A"]), "-pbsn",
                                  "20", "-o", output, "--markdown", summary], capsys)
    assert (status, stdout) == (2, "")
    assert stderr.count("\n") == 1 and "--markdown" in stderr and "--no-markdown" in stderr
    assert list(tmp_path.iterdir()) == []


def _report_to(stdout, tmp_path, tools, *flags, env=None, close_stdout=False):
    """``fastbleu report REF -i SYS -o - FLAGS`` run in ``tmp_path``, its standard output
    ``stdout`` (``close_stdout``: closed, as ``>&-``)."""
    import os
    import subprocess
    import sys

    S = tools.SAMPLE
    start = ([sys.executable, "-c", "import os, runpy, sys; os.close(1); "
              "sys.argv[0] = 'fastbleu'; runpy.run_module('fastbleu', run_name='__main__')"]
             if close_stdout else [sys.executable, "-m", "fastbleu"])
    return subprocess.run([*start, "report", str(S["ref-A"]), "-i", str(S["sys-A"]), "-pbsn",
                           "20", "-o", "-", *flags], stdout=stdout, stderr=subprocess.PIPE,
                          cwd=tmp_path, timeout=300, env=_env(**(env or {})))


def _env(**extra):
    """The environment of a child ``fastbleu``: this checkout's package first."""
    import os
    from pathlib import Path

    root = str(Path(__file__).resolve().parents[2])
    return dict(os.environ, PYTHONPATH=os.pathsep.join([root, os.environ.get("PYTHONPATH", "")]),
                **extra)


@pytest.mark.parametrize("case", ["closed", "full", "broken"])
def test_dash_onto_a_stdout_that_fails_leaves_no_summary(case, tmp_path, tools):
    """Standard output closed (``>&-``) or full (``> /dev/full``): one line, exit 2; its
    reader gone (``| true``): silent, exit 141.  No traceback, and no summary either way
    (the summary is committed only once the page is out)."""
    import os

    summary = ["--markdown", "s.md"]
    if case == "broken":
        read, write = os.pipe()
        os.close(read)
        try:
            done = _report_to(write, tmp_path, tools, *summary)
        finally:
            os.close(write)
        assert (done.returncode, done.stderr) == (141, b"")
    else:
        if case == "full":
            if not os.path.exists("/dev/full"):
                pytest.skip("no /dev/full")
            with open("/dev/full", "wb") as full:
                done = _report_to(full, tmp_path, tools, *summary)
        else:
            done = _report_to(None, tmp_path, tools, *summary, close_stdout=True)
        stderr = done.stderr.decode()
        assert done.returncode == 2 and stderr.count("\n") == 1, stderr
        assert stderr.startswith("fastbleu: error: ") and "standard output" in stderr
    assert list(tmp_path.iterdir()) == []


def test_dash_writes_the_pages_utf8_bytes_whatever_the_locale(tmp_path, tools):
    """The page says ``charset="utf-8"``: its bytes on standard output are UTF-8 and equal
    the file's, even where standard output's encoding is ASCII or Latin-1."""
    import subprocess
    import sys

    S = tools.SAMPLE
    expected = tmp_path / "page.html"
    title = ["--title", "Ünï — ✓ <b>"]
    subprocess.run([sys.executable, "-m", "fastbleu", "report", str(S["ref-A"]), "-i",
                    str(S["sys-A"]), "-pbsn", "20", *title, "-q", "--no-markdown", "-o",
                    str(expected)], check=True, timeout=300, env=_env())
    for encoding in ("ascii", "latin-1"):
        out = tmp_path / f"{encoding}.html"
        with open(out, "wb") as stream:
            done = _report_to(stream, tmp_path, tools, *title,
                              env={"PYTHONIOENCODING": encoding})
        assert done.returncode == 0, done.stderr.decode()
        assert out.read_bytes() == expected.read_bytes()
