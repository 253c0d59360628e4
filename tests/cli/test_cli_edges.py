"""The command line at its edges: every bad input is one line on standard error and exit 2,
a broken installation says so, and no output is silently lost (issue 11)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from testkit.data import FASTBLEU, HYP, HYP_B, REF, ROOT, SACREBLEU
from testkit.marks import slow_unless



def _env(pythonpath: str | os.PathLike = ROOT) -> dict:
    return {**os.environ, "PYTHONPATH": str(pythonpath), "PYTHONIOENCODING": "utf-8"}


def _run(args, stdin=None, **kwargs):
    kwargs.setdefault("env", _env())
    return subprocess.run(FASTBLEU + [str(a) for a in args], capture_output=True, input=stdin,
                          **kwargs)


def _shell(script: str, *args):
    """``script`` run by sh with the fastbleu command as ``$@`` (for redirections such as
    ``>&-`` that subprocess cannot express)."""
    return subprocess.run(["sh", "-c", script, "sh", *FASTBLEU, *[str(a) for a in args]],
                          capture_output=True, env=_env())


def _one_error(result, status: int = 2) -> str:
    """The single ``fastbleu: error: ...`` line of a failed run."""
    stderr = result.stderr.decode("utf-8") if isinstance(result.stderr, bytes) else result.stderr
    assert result.returncode == status, stderr
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastbleu: error: "), stderr
    return lines[0]


def _score(result) -> float:
    assert result.returncode == 0, result.stderr
    return float(result.stdout)


# -- §2: a broken installation is not a user error ---------------------------------------

@pytest.mark.slow  # the copy has no kernel cache: its child processes compile (20 s)
def test_missing_kernel_module_is_a_broken_installation(tmp_path):
    shutil.copytree(ROOT / "fastbleu", tmp_path / "fastbleu",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    (tmp_path / "fastbleu" / "_kernels" / "bleu" / "counting.py").unlink()
    result = _run([REF, "-i", HYP], env=_env(tmp_path), cwd=tmp_path)
    line = _one_error(result, status=1)  # 1, not 2: the input is fine
    assert "broken installation" in line
    assert "fastbleu._kernels.bleu.counting" in line
    assert "pip install --force-reinstall fastbleu" in line
    debug = _run([REF, "-i", HYP, "--debug"], env=_env(tmp_path), cwd=tmp_path)
    assert debug.returncode != 0 and b"Traceback" in debug.stderr


def test_missing_cli_module_is_a_broken_installation(tmp_path):
    """The command line's own imports (python -m fastbleu) fail the same way."""
    shutil.copytree(ROOT / "fastbleu", tmp_path / "fastbleu",
                    ignore=shutil.ignore_patterns("__pycache__", "*.nbi", "*.nbc"))
    (tmp_path / "fastbleu" / "inputs" / "files.py").unlink()
    # -S: without site-packages, so that an editable install of another checkout (whose
    # path hook serves fastbleu's top-level modules) cannot fill the gap; the CLI module
    # fails before it needs numpy.
    result = subprocess.run([sys.executable, "-S", "-m", "fastbleu", REF, "-i", HYP],
                            capture_output=True, env=_env(tmp_path), cwd=tmp_path)
    line = _one_error(result, status=1)
    assert "broken installation" in line and "fastbleu.inputs.files" in line


def test_missing_extra_stays_a_user_error():
    from fastbleu.cli import _is_broken_install

    assert not _is_broken_install(ImportError("install fastbleu[ja]", name=None))
    assert not _is_broken_install(ModuleNotFoundError("No module named 'MeCab'", name="MeCab"))
    assert _is_broken_install(ModuleNotFoundError("x", name="fastbleu._kernels.counting"))
    assert _is_broken_install(ModuleNotFoundError("x", name="numba.core"))


# -- §3: standard input is decoded first, then split as sacrebleu splits it ----------------

_WIDE = ["Čeština řeší ďábelské číslo č. 13.", "ക്ക മലയാളം ഒരു ഭാഷ.", "Une ligne simple ici.",
         "Another plain line with words.", "čč ക ഒ ഷ and more words here."]
_LATIN = ["Café crème, déjà vu.", "Une ligne simple ici.", "Ça va très bien, merci.",
          "Another plain line with words.", "Noël à Paris."]


_ENCODINGS = [
    ("utf-16", "utf-16", _WIDE),
    ("utf-16-le", "utf-16-le", _WIDE),  # with a BOM written by hand below
    ("utf-32", "utf-32", _WIDE),
    ("latin-1", "latin-1", _LATIN),
]


# The quick run: each encoding once, with \n and \r\n in turn; the rest with -m slow.
@pytest.mark.parametrize("newline, encoding, codec, lines", [
    slow_unless(k % 2 == n, newline, *case, id=f"{name}-{case[0]}-{case[1]}-lines{k}")
    for n, (name, newline) in enumerate([("lf", "\n"), ("crlf", "\r\n")])
    for k, case in enumerate(_ENCODINGS)])
def test_stdin_in_other_encodings_equals_sacrebleu(tmp_path, encoding, codec, lines, newline):
    refs = lines * 3
    hyps = [line.replace("e", "a", 1) if k % 2 else line for k, line in enumerate(refs)]
    bom = "\ufeff" if encoding == "utf-16-le" else ""
    ref_file, hyp_file = tmp_path / "ref.txt", tmp_path / "hyp.txt"
    ref_file.write_bytes((bom + "\n".join(refs) + "\n").encode(codec))
    hyp_bytes = (bom + newline.join(hyps) + newline).encode(codec)
    hyp_file.write_bytes(hyp_bytes)
    if encoding.startswith("utf-16"):
        assert b"\r" in (bom + "\n".join(hyps)).encode(codec)  # 0x0D inside characters
    flags = [ref_file, "-e", encoding, "-b", "-w", "4"]
    ours = _score(_run(flags, stdin=hyp_bytes))
    theirs = float(subprocess.run(SACREBLEU + [str(f) for f in flags], input=hyp_bytes,
                                  capture_output=True).stdout)
    assert ours == theirs
    if newline == "\n":  # -i reads the file as sacrebleu does (split at \n only)
        assert _score(_run(flags + ["-i", hyp_file])) == ours
    assert ours < 100.0


def test_several_systems_on_stdin_in_utf16(tmp_path):
    """Tab-separated systems on standard input go through the same decoding."""
    refs = _WIDE * 2
    ref_file = tmp_path / "ref.txt"
    ref_file.write_bytes(("\n".join(refs) + "\n").encode("utf-16"))
    stdin = "\r\n".join(f"{r}\t{r.replace('a', 'o')}" for r in refs).encode("utf-16")
    flags = [ref_file, "-e", "utf-16", "-w", "4"]
    ours = json.loads(_run(flags, stdin=stdin).stdout)
    theirs = json.loads(subprocess.run(SACREBLEU + [str(f) for f in flags], input=stdin,
                                       capture_output=True).stdout)
    assert [s["BLEU"] for s in ours] == [s["BLEU"] for s in theirs]
    assert ours[0]["BLEU"] == "100.0000" and ours[1]["BLEU"] != "100.0000"


# -- §3: --hyp-column at its default value still selects table mode ------------------------

def test_explicit_default_hyp_column_selects_table_mode(tmp_path):
    from sacrebleu.metrics import BLEU as SacreBLEU

    table = tmp_path / "scores.csv"
    hyps = ["the cat sat on the mat", "a dog ran in the park today"]
    refs = ["the cat sat on a mat", "a dog ran in the park"]
    table.write_text("hyp,ref\n" + "".join(f"{h},{r}\n" for h, r in zip(hyps, refs)))
    ours = _score(_run([table, "--hyp-column", "hyp", "-b", "-w", "4"]))
    expected = SacreBLEU().corpus_score(hyps, [refs]).score
    assert ours == round(expected, 4)


# -- §3: output that goes nowhere is an error ----------------------------------------------

def test_closed_stdout_is_an_error():
    result = _shell('exec "$@" >&-', REF, "-i", HYP)
    assert "standard output is closed" in _one_error(result)


def test_full_stdout_is_an_error():
    with open("/dev/full", "w") as full:
        result = subprocess.run(FASTBLEU + [REF, "-i", HYP], stdout=full, stderr=subprocess.PIPE,
                                env=_env())
    assert "cannot write to standard output" in _one_error(result)


def test_broken_pipe_is_silent_like_a_unix_tool():
    """A reader that has gone (``| head``): exit 141, as if killed by SIGPIPE, no message."""
    process = subprocess.Popen(FASTBLEU + [REF, "-i", HYP], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=_env())
    process.stdout.close()  # before fastbleu has scored anything
    stderr = process.stderr.read()
    assert process.wait() == 141
    assert stderr == b""


# -- §3: NaN group keys are valid JSON ------------------------------------------------------

def test_nan_group_key_prints_valid_json(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": ["a b c d e", "f g h i j", "k l m n o"],
                             "ref": ["a b c d e", "f g h i x", "k l m n o"],
                             "g": [float("nan"), 1.5, float("inf")]}), path)
    result = _run([path, "--group-by", "g"])
    assert result.returncode == 0, result.stderr
    records = json.loads(result.stdout, parse_constant=lambda name: pytest.fail(name))
    assert sorted(map(str, (r["g"] for r in records))) == ["1.5", "Infinity", "NaN"]
    text = _run([path, "--group-by", "g", "-f", "text"])
    assert text.returncode == 0 and b"g=nan\t" in text.stdout


# -- §5: numeric flags are checked before anything is allocated ------------------------------

@pytest.mark.parametrize("flags, flag", [
    (["-w", "-1"], "--width"), (["-w", "1000000"], "--width"),
    (["--max-ngram-order", "10000000"], "--max-ngram-order"),
    (["--max-ngram-order", "0"], "--max-ngram-order"),
    (["-nr", "0"], "--num-refs"), (["-nr", "-3"], "--num-refs"),
    (["-sv", "-1", "-s", "floor"], "--smooth-value"), (["-sv", "nan"], "--smooth-value"),
    (["-sv", "inf", "-s", "add-k"], "--smooth-value"),
    (["--batch-size", "0"], "--batch-size"), (["--batch-size", "-5"], "--batch-size"),
    (["-ci", "-cin", "1000000000000"], "--confidence-n"),
    (["-pbs", "-pbsn", "1000000000000"], "--paired-bs-n"),
    (["-par", "-parn", "1000000000000"], "--paired-ar-n"),
    (["-j", "-1"], "--paired-jobs"),
    (["--dask-workers", "0"], "--dask-workers"),
], ids=lambda value: " ".join(value) if isinstance(value, list) else value)
def test_numeric_flags_out_of_range(flags, flag):
    line = _one_error(_run([REF, "-i", HYP, HYP_B] + flags))
    assert flag in line


def test_sacrebleu_sample_defaults_still_apply():
    """-pbsn 0 means sacrebleu's default, as in sacrebleu; not an error."""
    result = _run([REF, "-i", HYP, HYP_B, "-pbs", "-pbsn", "0", "-sh"])
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)[0]["system"].startswith("Baseline")


# -- §5/§7: standard error and standard input that are closed or unusable ------------------

def test_progress_with_closed_or_full_stderr(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": ["a b c d e"] * 1000, "ref": ["a b c d f"] * 1000}), path)
    for redirect in ("2>&-", "2>/dev/full"):
        result = _shell(f'exec "$@" {redirect}', path, "--progress", "--batch-size", "100", "-b")
        assert result.returncode == 0, redirect
        assert float(result.stdout) > 0


def test_error_with_closed_stderr_never_goes_to_stdout(tmp_path):
    for args in ([REF, "-i", tmp_path / "missing.txt"], [REF, "-i", HYP, "-w", "-1"],
                 [REF, "-i", HYP, "--no-such-flag"]):
        result = _shell('exec "$@" 2>&-', *args)
        assert result.returncode == 2
        assert result.stdout == b""


def test_warning_with_closed_stderr_never_goes_to_stdout(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    result = _shell('exec "$@" 2>&-', empty, "-i", empty, "-b")
    assert result.returncode == 0 and result.stdout == b"0.0\n"


def test_output_the_terminal_encoding_cannot_hold(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": ["a b c d e"], "ref": ["a b c d e"], "g": ["日本"]}), path)
    result = _run([path, "--group-by", "g", "-f", "text"],
                  env={**_env(), "PYTHONIOENCODING": "ascii"})
    assert "PYTHONIOENCODING=utf-8" in _one_error(result)
    assert result.stdout == b""


def test_unreadable_stdin(tmp_path):
    closed = _shell('exec "$@" <&-', REF)
    assert "standard input" in _one_error(closed)
    write_only = tmp_path / "w"
    with open(write_only, "w") as handle:
        result = subprocess.run(FASTBLEU + [REF], stdin=handle, capture_output=True, env=_env())
    assert "standard input cannot be read" in _one_error(result)


def test_empty_text_corpus_warns_as_table_mode_does(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    result = _run([empty, "-i", empty, "-b"])
    assert result.returncode == 0
    assert float(result.stdout) == 0.0
    assert result.stderr.decode().splitlines() == [
        "fastbleu: warning: the input has no lines; its BLEU is 0.0"]


# -- §7: LaTeX, sentencepiece signatures, tables given as text -------------------------------

def test_latex_escapes_system_names_as_sacrebleu(tmp_path):
    odd = tmp_path / "sys_a&b%c\\d#e$f{g}~h^i.txt"
    shutil.copy(HYP, odd)
    args = [REF, "-i", HYP_B, odd, "-f", "latex"]
    ours = _run(args).stdout.decode()
    theirs = subprocess.run(SACREBLEU + [str(a) for a in args], capture_output=True).stdout
    escaped = [line.split("&")[0].strip() for line in theirs.decode().splitlines()
               if "sys" in line and "textbackslash" in line]
    assert escaped and escaped[0] in ours
    assert str(odd) not in ours
    paired = _run(args + ["-pbs", "-pbsn", "10"]).stdout.decode()
    assert escaped[0] in paired and "95\\% CI" in paired


def test_latex_escapes_group_keys(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": ["a b c d e"], "ref": ["a b c d e"], "g": ["x_y & 5%"]}),
                   path)
    out = _run([path, "--group-by", "g", "-f", "latex"]).stdout.decode()
    assert "x\\_y \\& 5\\% & 100.0 \\\\" in out


def test_spm_model_is_named_in_the_signature(tmp_path):
    spm = pytest.importorskip("sentencepiece")
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("\n".join(f"the quick brown fox jumps {i} over lazy dogs" for i in
                                range(200)) + "\n")
    spm.SentencePieceTrainer.train(input=str(corpus), model_prefix=str(tmp_path / "my:model"),
                                   vocab_size=40, hard_vocab_limit=False, minloglevel=2)
    text = tmp_path / "t.txt"
    text.write_text("the quick brown fox\nover lazy dogs\n")
    result = _run([text, "-i", text, "-tok", "flores200", "--spm-model",
                   tmp_path / "my:model.model"])
    assert result.returncode == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["tok"] == "spm-my_model.model"
    assert "tok:spm-my_model.model|" in record["signature"]


@pytest.mark.parametrize("tokenize", [[], ["-tok", "char"]])
def test_spm_model_with_another_tokenizer_is_refused(tmp_path, tokenize):
    """It used to be ignored silently: the score was 13a's."""
    line = _one_error(_run([REF, "-i", HYP, "--spm-model", tmp_path / "m.model"] + tokenize))
    assert "--spm-model" in line and "flores200" in line


@pytest.mark.parametrize("where", ["ref", "hyp", "stdin"])
def test_parquet_given_as_text_says_it_is_a_table(tmp_path, where):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tmp_path / "scores.dat"  # no .parquet suffix: only the content tells
    pq.write_table(pa.table({"hyp": ["a b"], "ref": ["a b"]}), table)
    text = tmp_path / "one.txt"
    text.write_text("a b\n")
    if where == "stdin":
        result = _run([text], stdin=table.read_bytes())
    else:
        result = _run([table, "-i", text] if where == "ref" else [text, "-i", table])
    line = _one_error(result)
    assert "Parquet table" in line and "--hyp-column" in line and "UTF-8" not in line


# -- found by a second hostile pass ----------------------------------------------------

@pytest.mark.parametrize("flag", ["-h", "-V"])
@pytest.mark.parametrize("redirect", [">&-", ">/dev/full"])
def test_help_and_version_that_cannot_be_written_are_an_error(flag, redirect):
    """argparse drops a failed write of --help/--version (or sends it to standard error
    when standard output is closed) and exits 0."""
    result = subprocess.run(["sh", "-c", f'"$@" {flag} {redirect}', "sh", *FASTBLEU],
                            capture_output=True, env=_env())
    assert _one_error(result).endswith(")")
    assert "cannot write to standard output" in result.stderr.decode()


@pytest.mark.parametrize("value", ["", ",", "system,", " , "])
def test_an_empty_group_column_is_refused(tmp_path, value):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": ["a b"], "ref": ["a b"], "system": ["A"]}), table)
    assert "--group-by" in _one_error(_run([table, "--group-by", value]))


def test_dask_workers_beyond_the_machine_are_refused_before_starting_any(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = tmp_path / "t.parquet"
    pq.write_table(pa.table({"hyp": ["a b"], "ref": ["a b"]}), table)
    assert "--scheduler" in _one_error(_run([table, "--dask-workers", 100000], timeout=60))


def test_damaged_gzip_is_one_line(tmp_path):
    import gzip

    data = bytearray(gzip.compress(Path(HYP).read_bytes()))
    failures = set()
    for position in range(12, 200, 17):  # CRC errors, truncations and zlib's own errors
        damaged = bytearray(data)
        damaged[position] ^= 0xFF
        damaged[position + 1] ^= 0x0F
        path = tmp_path / "hyp.gz"
        path.write_bytes(bytes(damaged))
        line = _one_error(_run([REF, "-i", path]))
        assert line.startswith(f"fastbleu: error: {path}: "), line
        failures.add(line.split(": ")[3].split(" (")[0])
    assert failures <= {"damaged gzip data", "cannot be read"}
    assert "damaged gzip data" in failures  # zlib's own error, a traceback before
