"""Outputs are the user's data (issue 11, section 1): real files, real Parquet, real processes.

Every case: the output is refused with one line before any work (exit 2 on
the command line), or written whole; an input, a device, a FIFO, a
read-only file, a directory that is not fastbleu's is never replaced; no
hidden temporary is left behind, also on SIGTERM, SIGHUP, SIGINT and a full
disk.  Run as root, as this machine does: ``/dev/null`` is really tried.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import fastbleu
from fastbleu.cli import main
from fastbleu.errors import InputError
from fastbleu.tables.targets import MARKER, check_writable
from fastbleu.tables.writers import AtomicDirectory, AtomicFile
from fastbleu.signals import Terminated, terminating
from testkit.data import FASTBLEU, ROOT
from testkit.data import sample_table

ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
OLD = b"the old output, which must survive"


def _cli(argv, cwd=None, **options) -> subprocess.CompletedProcess:
    return subprocess.run(FASTBLEU + [str(a) for a in argv], capture_output=True, text=True,
                          cwd=cwd, env=ENV, timeout=300, **options)


def _refused(done, *words) -> str:
    """A one-line error with exit 2 and no traceback; returns the line."""
    assert done.returncode == 2, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("fastbleu: error: "), done.stderr
    for word in words:
        assert word in lines[0], lines[0]
    return lines[0]


def _hidden(folder) -> list[str]:
    return sorted(p for p in os.listdir(folder) if p.startswith("."))


@pytest.fixture
def table(tmp_path) -> Path:
    """A small Parquet input in its own directory."""
    path = tmp_path / "in" / "victim.parquet"
    path.parent.mkdir()
    pq.write_table(sample_table().slice(0, 300), path)
    return path


def _snapshot(path) -> tuple:
    info = os.lstat(path)
    return info.st_mode, info.st_ino, Path(path).read_bytes() if stat.S_ISREG(info.st_mode) \
        else None


# -- 1. never over an input ---------------------------------------------------------------


@pytest.mark.parametrize("how", ["same", "dot-slash", "absolute", "symlink", "hard-link",
                                 "symlinked-dir"])
def test_the_output_is_never_an_input_however_named(table, how):
    folder = table.parent
    before = _snapshot(table)
    if how == "symlink":
        out = folder.parent / "link.parquet"
        out.symlink_to(table)
    elif how == "hard-link":
        out = folder.parent / "hard.parquet"
        os.link(table, out)
    elif how == "symlinked-dir":
        (folder.parent / "alias").symlink_to(folder)
        out = folder.parent / "alias" / table.name
    else:
        out = {"same": table, "dot-slash": f"./{table.name}", "absolute": table.resolve()}[how]
    cwd = os.getcwd()
    os.chdir(folder)
    try:
        with pytest.raises(InputError, match="is (a hard link to )?the input"):
            fastbleu.score_table(table.name if how == "dot-slash" else table,
                                 segments_out=str(out))
    finally:
        os.chdir(cwd)
    assert _snapshot(table) == before and _hidden(folder) == []


def test_no_output_inside_an_input_directory_or_matching_an_input_glob(tmp_path):
    dataset = tmp_path / "dds"
    dataset.mkdir()
    pq.write_table(sample_table().slice(0, 100), dataset / "part.0.parquet")
    for out in [dataset, dataset / "seg.parquet", dataset / "sub" / "seg.parquet"]:
        with pytest.raises(InputError, match="input directory"):
            fastbleu.score_table(dataset, segments_out=str(out))
    with pytest.raises(InputError, match="matches the input pattern"):
        fastbleu.score_table(str(dataset / "*.parquet"), segments_out=str(dataset / "s.parquet"))
    assert os.listdir(dataset) == ["part.0.parquet"]
    fastbleu.score_table(str(dataset / "*.parquet"), segments_out=str(tmp_path / "s.parquet"))
    assert pq.read_table(tmp_path / "s.parquet").num_rows == 100


def test_cli_refuses_to_write_over_its_input_by_any_name(tmp_path):
    folder = tmp_path / "with spaces"
    folder.mkdir()
    victim = folder / "victim.parquet"
    pq.write_table(sample_table().slice(0, 300), victim)
    before = victim.read_bytes()
    (folder / "link.parquet").symlink_to("victim.parquet")
    os.link(victim, folder / "hard.parquet")
    for out in ["victim.parquet", "./victim.parquet", str(victim), "link.parquet",
                "hard.parquet"]:
        _refused(_cli(["victim.parquet", "--segments-out", out], cwd=folder), "the input")
    assert victim.read_bytes() == before and _hidden(folder) == []
    assert (folder / "link.parquet").is_symlink()


# -- 2. only regular files are replaced ---------------------------------------------------


def test_devices_fifos_sockets_and_directories_are_refused(table, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    sock_path = tmp_path / "sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(sock_path))
    (tmp_path / "folder").mkdir()
    (tmp_path / "to-null").symlink_to("/dev/null")
    try:
        cases = {"/dev/null": "character device", "/dev/full": "character device",
                 str(fifo): "FIFO", str(sock_path): "socket",
                 str(tmp_path / "folder"): "a directory",
                 str(tmp_path / "to-null"): "character device"}
        for out, kind in cases.items():
            with pytest.raises(InputError, match=kind):
                fastbleu.score_table(table, segments_out=out)
    finally:
        server.close()
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    assert stat.S_ISCHR(os.lstat("/dev/full").st_mode)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and stat.S_ISSOCK(os.lstat(sock_path).st_mode)
    assert (tmp_path / "to-null").is_symlink() and _hidden(tmp_path) == []


def test_cli_dev_null_stays_a_device_and_dev_stdout_is_refused(table, tmp_path):
    _refused(_cli([table, "--segments-out", "/dev/null"]), "/dev/null", "character device")
    assert stat.S_ISCHR(os.lstat("/dev/null").st_mode)
    _refused(_cli([table, "--segments-out", "/dev/full"]), "character device")
    # standard output a pipe: /dev/stdout names the pipe
    _refused(_cli([table, "--segments-out", "/dev/stdout"]), "FIFO")
    # standard output a file: replacing it would lose the score printed to it
    printed = tmp_path / "score.json"
    with open(printed, "w") as handle:
        done = subprocess.run(FASTBLEU + [str(table), "--segments-out", "/dev/stdout"],
                              stdout=handle, stderr=subprocess.PIPE, text=True, env=ENV)
    _refused(done, "standard output")
    assert printed.read_bytes() == b"" and _hidden(tmp_path) == []


def test_a_symlink_is_followed_as_the_shell_does(table, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    target = elsewhere / "real.parquet"
    target.write_bytes(OLD)
    os.chmod(target, 0o640)
    link = tmp_path / "link.parquet"
    link.symlink_to(target)
    fastbleu.score_table(table, segments_out=str(link))
    assert link.is_symlink() and os.readlink(link) == str(target)
    assert pq.read_table(target).num_rows == 300
    assert stat.S_IMODE(os.stat(target).st_mode) == 0o640
    assert _hidden(tmp_path) == [] and _hidden(elsewhere) == []
    # A dangling link: its target is created, as `>` creates it.
    dangling = tmp_path / "dangling.parquet"
    dangling.symlink_to(elsewhere / "new.parquet")
    fastbleu.score_table(table, segments_out=str(dangling))
    assert dangling.is_symlink() and pq.read_table(elsewhere / "new.parquet").num_rows == 300
    # ... but not in a directory that does not exist, and not through a loop.
    (tmp_path / "nowhere.parquet").symlink_to(tmp_path / "missing" / "x.parquet")
    with pytest.raises(InputError, match="does not exist"):
        fastbleu.score_table(table, segments_out=str(tmp_path / "nowhere.parquet"))
    (tmp_path / "loop").symlink_to(tmp_path / "loop")
    with pytest.raises(InputError, match="loop"):
        fastbleu.score_table(table, segments_out=str(tmp_path / "loop"))


# -- 3. permissions -----------------------------------------------------------------------


def test_an_existing_file_keeps_its_mode_and_owner(table, tmp_path):
    out = tmp_path / "private.parquet"
    out.write_bytes(OLD)
    os.chmod(out, 0o600)
    os.chown(out, 4321, 4321)  # as root: a file of another user, kept theirs
    fastbleu.score_table(table, segments_out=str(out))
    info = os.stat(out)
    assert stat.S_IMODE(info.st_mode) == 0o600 and (info.st_uid, info.st_gid) == (4321, 4321)
    assert pq.read_table(out).num_rows == 300


def test_a_new_file_gets_0666_less_the_umask(table, tmp_path):
    done = subprocess.run(FASTBLEU + [str(table), "--segments-out", "new.parquet"], cwd=tmp_path,
                          env=ENV, capture_output=True, text=True,
                          preexec_fn=lambda: os.umask(0o027))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(os.stat(tmp_path / "new.parquet").st_mode) == 0o640


def test_read_only_files_and_directories_are_refused_even_to_root(table, tmp_path):
    out = tmp_path / "read-only.parquet"
    out.write_bytes(OLD)
    os.chmod(out, 0o444)
    with pytest.raises(InputError, match=r"read-only \(mode 0444\)"):
        fastbleu.score_table(table, segments_out=str(out))
    assert out.read_bytes() == OLD and stat.S_IMODE(os.stat(out).st_mode) == 0o444
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "old.parquet").write_bytes(OLD)
    os.chmod(locked, 0o555)
    try:
        for name in ["old.parquet", "new.parquet"]:
            done = _cli([table, "--segments-out", locked / name])
            _refused(done, "is read-only")
        assert os.listdir(locked) == ["old.parquet"]
        assert (locked / "old.parquet").read_bytes() == OLD
    finally:
        os.chmod(locked, 0o755)


# -- hostile paths ------------------------------------------------------------------------


def test_hostile_output_paths(table, tmp_path):
    cases = {str(tmp_path / "missing" / "s.parquet"): "does not exist",
             str(tmp_path / "s.parquet") + "/": "names a directory",
             "": "empty",
             str(tmp_path / "file.txt" / "s.parquet"): "not a directory"}
    (tmp_path / "file.txt").write_text("keep me")
    for out, words in cases.items():
        _refused(_cli([table, "--segments-out", out]), words)
    assert (tmp_path / "file.txt").read_text() == "keep me"
    # spaces, a relative path and a very long name all work, and leave nothing behind
    long_name = "s" * 240 + ".parquet"
    for out in ["with space.parquet", "./rel.parquet", long_name]:
        done = _cli([table, "--segments-out", out, "--quiet"], cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        assert pq.read_table(tmp_path / out).num_rows == 300
    assert _hidden(tmp_path) == []


def test_atomic_file_api(table, tmp_path):
    out = tmp_path / "a.bin"
    out.write_bytes(OLD)
    with pytest.raises(RuntimeError):
        with AtomicFile(out) as atomic:
            Path(atomic.temporary).write_bytes(b"half")
            raise RuntimeError("stop")
    assert out.read_bytes() == OLD and _hidden(tmp_path) == []
    with AtomicFile(out) as atomic:
        Path(atomic.temporary).write_bytes(b"new")
    assert out.read_bytes() == b"new"
    # the target is checked again at commit: it became a FIFO meanwhile
    atomic = AtomicFile(tmp_path / "later")
    os.mkfifo(tmp_path / "later")
    with pytest.raises(InputError, match="FIFO"):
        atomic.commit()
    assert stat.S_ISFIFO(os.lstat(tmp_path / "later").st_mode) and _hidden(tmp_path) == []
    with pytest.raises(InputError, match="the input"):
        check_writable(table, table)


# -- 4. the Dask output directory ---------------------------------------------------------


def test_dask_library_refuses_before_any_work(tmp_path):
    pytest.importorskip("distributed")
    import fastbleu.dask as fd

    dataset = tmp_path / "dds"
    dataset.mkdir()
    pq.write_table(sample_table().slice(0, 100), dataset / "part.0.parquet")
    text = tmp_path / "notes.txt"
    text.write_text("keep me")
    foreign = tmp_path / "mine"
    foreign.mkdir()
    (foreign / "part.00000.parquet").write_bytes(OLD)  # looks like ours, but is not marked
    cases = {dataset: "holds the input", dataset / "inner": "inside the input directory",
             text: "not a directory", foreign: "not written by fastbleu",
             "/dev/null": "not a directory", tmp_path: "holds the input"}
    for out, words in cases.items():
        with pytest.raises(InputError, match=words):
            fd.score_table(dataset, segments_out=str(out))
    assert os.listdir(dataset) == ["part.0.parquet"] and text.read_text() == "keep me"
    assert (foreign / "part.00000.parquet").read_bytes() == OLD
    assert _hidden(tmp_path) == []


def test_atomic_directory_replaces_only_what_fastbleu_wrote(tmp_path):
    out = tmp_path / "segs"
    out.mkdir()
    os.chmod(out, 0o750)
    with AtomicDirectory(str(out) + "/") as folder:  # an empty directory: reused
        Path(folder.part("part.00000.parquet")).write_bytes(b"first")
    assert sorted(os.listdir(out)) == [MARKER, "part.00000.parquet"]
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o750
    with AtomicDirectory(out) as folder:  # an earlier run's: replaced whole
        Path(folder.part("part.00001.parquet")).write_bytes(b"second")
    assert sorted(os.listdir(out)) == [MARKER, "part.00001.parquet"]
    assert _hidden(tmp_path) == []
    (out / "notes.txt").write_text("keep me")  # the user added a file: no longer ours alone
    with pytest.raises(InputError, match="'notes.txt', which fastbleu did not write"):
        AtomicDirectory(out)
    # a file added during the run is not deleted: the old directory is kept aside
    (out / "notes.txt").unlink()
    folder = AtomicDirectory(out)
    (out / "late.txt").write_text("keep me")
    with pytest.raises(InputError, match="late.txt"):
        folder.commit()
    assert (out / "late.txt").read_text() == "keep me" and _hidden(tmp_path) == []


def test_atomic_directory_discard_leaves_the_old_one(tmp_path):
    out = tmp_path / "segs"
    with AtomicDirectory(out) as folder:
        Path(folder.part("part.00000.parquet")).write_bytes(b"first")
    with pytest.raises(KeyboardInterrupt):
        with AtomicDirectory(out) as folder:
            Path(folder.part("part.00000.parquet")).write_bytes(b"half")
            raise KeyboardInterrupt
    assert (out / "part.00000.parquet").read_bytes() == b"first" and _hidden(tmp_path) == []
    link = tmp_path / "segs-link"
    link.symlink_to(out)
    with AtomicDirectory(link) as folder:  # followed: the link stays a link
        Path(folder.part("part.00000.parquet")).write_bytes(b"again")
    assert link.is_symlink() and (out / "part.00000.parquet").read_bytes() == b"again"
    assert _hidden(tmp_path) == []


@pytest.fixture(scope="module")
def client():
    pytest.importorskip("distributed")
    import fastbleu.dask as fd

    fastbleu.score_table(sample_table().slice(0, 10))  # the workers load the compiled kernels
    with fd.connect(workers=1) as client:
        yield client


@pytest.mark.slow  # a real cluster (issue 28: -m slow)
def test_dask_directory_on_a_cluster(client, tmp_path):
    import fastbleu.dask as fd

    dataset = tmp_path / "dds"
    dataset.mkdir()
    table = sample_table()
    for k in range(2):
        pq.write_table(table.slice(1000 * k, 1000), dataset / f"part.{k}.parquet",
                       row_group_size=250)
    out = tmp_path / "segs"
    fd.score_table(dataset, segments_out=str(out), client=client, partition_rows=250)
    assert sorted(os.listdir(out)) == [MARKER] + [f"part.{k:05d}.parquet" for k in range(8)]
    fd.score_table(dataset, segments_out=str(out), client=client)  # ours: replaced
    assert sorted(os.listdir(out)) == [MARKER, "part.00000.parquet", "part.00001.parquet"]
    assert pq.read_table(out).num_rows == 2000
    with pytest.raises(InputError, match="holds the input"):
        fd.score_table(dataset, segments_out=str(dataset), client=client)
    assert sorted(os.listdir(dataset)) == ["part.0.parquet", "part.1.parquet"]
    assert pq.read_table(dataset).num_rows == 2000
    assert _hidden(tmp_path) == []


def test_cli_dask_refuses_its_input_dataset_and_a_file(tmp_path):
    pytest.importorskip("distributed")
    dataset = tmp_path / "dds"
    dataset.mkdir()
    pq.write_table(sample_table().slice(0, 100), dataset / "part.0.parquet")
    (tmp_path / "notes.txt").write_text("keep me")
    _refused(_cli(["dds", "--dask-workers", "1", "--segments-out", "dds"], cwd=tmp_path),
             "holds the input")
    _refused(_cli(["dds", "--dask-workers", "1", "--segments-out", "notes.txt"], cwd=tmp_path),
             "not a directory")
    assert os.listdir(dataset) == ["part.0.parquet"]
    assert (tmp_path / "notes.txt").read_text() == "keep me" and _hidden(tmp_path) == []


# -- 5. signals ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def big_table(tmp_path_factory) -> Path:
    """About a million rows: long enough to be stopped in the middle."""
    path = tmp_path_factory.mktemp("big") / "big.parquet"
    sample = sample_table()
    pq.write_table(pa.concat_tables([sample] * 500), path, row_group_size=1 << 16)
    return path


def _stop_when(process, ready, signum, timeout=120.0):
    """Send ``signum`` to ``process`` once ``ready()`` holds; return its exit status."""
    deadline = time.monotonic() + timeout
    while not ready():
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the run never started writing"
        time.sleep(0.01)
    process.send_signal(signum)
    return process.wait(timeout=timeout)


@pytest.mark.parametrize("signum, status", [(signal.SIGTERM, 143), (signal.SIGHUP, 129),
                                            (signal.SIGINT, 130)])
def test_a_signal_leaves_the_old_file_and_no_temporary(big_table, tmp_path, signum, status):
    out = tmp_path / "segments.parquet"
    out.write_bytes(OLD)
    os.chmod(out, 0o600)
    process = subprocess.Popen(FASTBLEU + [str(big_table), "--segments-out", str(out),
                                           "--batch-size", "4096"],
                               cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    code = _stop_when(process, lambda: _hidden(tmp_path), signum)
    stderr = process.stderr.read()
    assert code == status, stderr
    assert "Traceback" not in stderr and "no output was written" in stderr
    assert os.listdir(tmp_path) == ["segments.parquet"]
    assert out.read_bytes() == OLD and stat.S_IMODE(os.stat(out).st_mode) == 0o600


@pytest.mark.slow  # a real cluster (issue 28: -m slow)
def test_sigterm_on_a_cluster_leaves_no_partial_folder(big_table, tmp_path):
    pytest.importorskip("distributed")
    out = tmp_path / "segs"
    out.mkdir()
    (out / MARKER).write_text("an earlier run\n")
    (out / "part.00000.parquet").write_bytes(OLD)
    process = subprocess.Popen(FASTBLEU + [str(big_table), "--segments-out", str(out),
                                           "--dask-workers", "1", "--batch-size", "4096"],
                               cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    code = _stop_when(process, lambda: _hidden(tmp_path), signal.SIGTERM)
    stderr = process.stderr.read()
    assert code == 143, stderr
    # (the workers may log their lost scheduler as the cluster closes: Dask's, not ours)
    assert stderr.splitlines()[-1] == "fastbleu: stopped by SIGTERM; no output was written"
    assert "Terminated" not in stderr
    time.sleep(0.5)  # a worker still finishing its task must not bring a folder back
    assert os.listdir(tmp_path) == ["segs"]
    assert (out / "part.00000.parquet").read_bytes() == OLD


@pytest.mark.parametrize("moment", ["after the temporary", "after the writer"])
def test_a_signal_just_after_the_temporary_is_created_removes_it(table, tmp_path,
                                                                 monkeypatch, moment):
    """The moment the CLI test above aims at, made certain: a signal right after the
    segments file's temporary exists, before the writer or the run own it (a load-
    dependent failure once left the temporary behind)."""
    from fastbleu.tables import scoring, writers

    folder = tmp_path / "out"
    folder.mkdir()
    out = folder / "segments.parquet"
    out.write_bytes(OLD)
    created = writers.AtomicFile if moment == "after the temporary" else writers.SegmentWriter
    patched = writers if moment == "after the temporary" else scoring
    name = created.__name__

    class Signalled(created):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            os.kill(os.getpid(), signal.SIGTERM)  # its handler runs before the next line

    monkeypatch.setattr(patched, name, Signalled)
    with pytest.raises(Terminated):
        with terminating():
            fastbleu.score_table(str(table), segments_out=str(out))
    assert os.listdir(folder) == ["segments.parquet"] and out.read_bytes() == OLD


def test_a_signal_waits_for_a_held_step():
    from fastbleu.signals import held

    steps = []
    with pytest.raises(Terminated):  # caught inside, the signal still ends the block
        with terminating():
            with pytest.raises(Terminated):
                with held():
                    os.kill(os.getpid(), signal.SIGHUP)
                    time.sleep(0.2)
                    steps.append("finished")  # not cut in two
            with pytest.raises(KeyboardInterrupt):
                with held():
                    os.kill(os.getpid(), signal.SIGINT)
                    time.sleep(0.2)
                    steps.append("finished too")
    assert steps == ["finished", "finished too"]


def test_handlers_are_scoped_and_restored(table):
    def mine(signum, frame):
        raise AssertionError("not expected")

    previous = signal.signal(signal.SIGTERM, mine)
    ignored = signal.signal(signal.SIGHUP, signal.SIG_IGN)  # as under nohup
    try:
        with pytest.raises(Terminated) as stopped:
            with terminating():
                assert signal.getsignal(signal.SIGTERM) is not mine
                assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(1)
        assert stopped.value.exit_status == 143 and stopped.value.name == "SIGTERM"
        assert signal.getsignal(signal.SIGTERM) is mine
        assert main([str(table), "--quiet", "-b"]) == 0  # the CLI's handlers go away too
        assert signal.getsignal(signal.SIGTERM) is mine
        assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN
        assert signal.getsignal(signal.SIGINT) is signal.default_int_handler
    finally:
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGHUP, ignored)



@contextlib.contextmanager
def _swallowed_in_a_gc_callback(signum):
    """Deliver ``signum`` while a garbage collector callback runs, as distributed's does.

    Python reports an exception raised in a gc callback as "unraisable" and goes
    on: the handler's exception is lost there.  Yields the lost exceptions.
    """
    import gc

    lost, armed = [], [True]

    def callback(phase, info):
        if phase == "start" and armed:
            armed.clear()
            os.kill(os.getpid(), signum)
            time.sleep(0.2)  # the handler runs here, inside the callback

    previous_hook = sys.unraisablehook
    def hook(unraisable):
        lost.append(unraisable.exc_value)
        previous_hook(unraisable)  # terminating()'s: silent about its own signal

    sys.unraisablehook = hook
    gc.callbacks.append(callback)
    try:
        gc.collect()
        yield lost
    finally:
        gc.callbacks.remove(callback)
        sys.unraisablehook = previous_hook


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_signal_swallowed_in_a_gc_callback_still_ends_the_block(signum, capsys):
    went_on = []
    with pytest.raises(Terminated) as stopped:
        with terminating():
            with _swallowed_in_a_gc_callback(signum) as lost:
                pass
            assert [type(e) for e in lost] == [Terminated]  # lost on the way...
            went_on.append(True)
    assert went_on  # ...so the block went on, but its end raises it
    assert stopped.value.signum == signum and stopped.value.written == ()
    name = signal.Signals(signum).name
    assert stopped.value.message == f"stopped by {name}; no output was written"
    assert capsys.readouterr().err == ""  # no "Exception ignored in" traceback for it


def test_a_swallowed_signal_stops_the_commit_and_keeps_the_old_file(tmp_path):
    out = tmp_path / "out.parquet"
    out.write_bytes(OLD)
    with pytest.raises(Terminated) as stopped:
        with terminating():
            output = AtomicFile(out)
            Path(output.temporary).write_bytes(b"new")
            with _swallowed_in_a_gc_callback(signal.SIGTERM):
                pass
            output.commit()  # refuses: a signal was received
    assert stopped.value.written == ()
    assert os.listdir(tmp_path) == ["out.parquet"] and out.read_bytes() == OLD


def test_a_signal_after_the_commit_says_the_output_was_written(tmp_path):
    out, folder = tmp_path / "out.parquet", tmp_path / "segs"
    with pytest.raises(Terminated) as stopped:
        with terminating():
            for output in (AtomicFile(out), AtomicDirectory(folder)):
                with output:
                    if isinstance(output, AtomicFile):
                        Path(output.temporary).write_bytes(b"new")
            with _swallowed_in_a_gc_callback(signal.SIGTERM):
                pass
    assert out.read_bytes() == b"new" and (folder / MARKER).exists()
    assert stopped.value.written == (str(out), str(folder))
    assert stopped.value.message == f"stopped by SIGTERM after writing {out}, {folder}"


def test_another_error_after_a_lost_signal_is_reported_as_the_signal():
    with pytest.raises(Terminated) as stopped:
        with terminating():
            with _swallowed_in_a_gc_callback(signal.SIGHUP):
                pass
            raise InputError("a consequence of the stop")
    assert stopped.value.exit_status == 129
    assert isinstance(stopped.value.__cause__, InputError)


@pytest.mark.slow  # a real cluster (issue 28: -m slow)
@pytest.mark.parametrize("signum, status", [(signal.SIGHUP, 129), (signal.SIGTERM, 143)])
def test_a_signal_on_a_cluster_is_never_lost(big_table, tmp_path, signum, status):
    """Sent once the parts appear, as the QA did: distributed's gc callback may swallow
    the handler's exception; the run must still end with 128 + n, and say truly
    whether the output was written."""
    pytest.importorskip("distributed")
    out = tmp_path / "segdir"
    process = subprocess.Popen(FASTBLEU + [str(big_table), "--segments-out", str(out),
                                           "--dask-workers", "1", "--batch-size", "4096",
                                           "--quiet"],
                               cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)

    def parts_appear():
        hidden = [tmp_path / name for name in _hidden(tmp_path)]
        return any(p.is_dir() and any(p.iterdir()) for p in hidden) or out.exists()

    code = _stop_when(process, parts_appear, signum)
    stderr = process.stderr.read()
    assert code == status, stderr
    time.sleep(0.5)  # a worker still finishing its task must not bring a folder back
    last = stderr.strip().splitlines()[-1]
    name = signal.Signals(signum).name
    if out.exists():  # the signal came after the commit: the output is whole
        assert (out / MARKER).exists() and os.listdir(tmp_path) == ["segdir"]
        assert last == f"fastbleu: stopped by {name} after writing {out}", stderr
    else:
        assert os.listdir(tmp_path) == [], os.listdir(tmp_path)
        assert last == f"fastbleu: stopped by {name}; no output was written", stderr



@pytest.mark.slow  # a real cluster (issue 28: -m slow)
def test_a_late_signal_on_a_cluster_says_the_output_was_written(big_table, tmp_path):
    """The QA's case: SIGTERM once the folder is in place, while the cluster closes."""
    pytest.importorskip("distributed")
    out = tmp_path / "segdir"
    process = subprocess.Popen(FASTBLEU + [str(big_table), "--segments-out", str(out),
                                           "--dask-workers", "1", "--quiet"],
                               cwd=tmp_path, env=ENV, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    code = _stop_when(process, lambda: (out / MARKER).exists(), signal.SIGTERM)
    stderr = process.stderr.read()
    if code == 0:
        pytest.skip("the run ended before the signal")
    assert code == 143, stderr
    assert (out / MARKER).exists() and os.listdir(tmp_path) == ["segdir"]  # whole, kept
    assert "Traceback" not in stderr
    assert stderr.strip().splitlines()[-1] == f"fastbleu: stopped by SIGTERM after writing {out}"


# -- 6. write failures --------------------------------------------------------------------


def _file_size_limit(limit: int):
    def limited():
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write then fails with EFBIG
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return limited


def test_a_full_disk_is_one_line_and_the_old_file_stays(big_table, tmp_path):
    out = tmp_path / "segments.parquet"
    out.write_bytes(OLD)
    done = subprocess.run(FASTBLEU + [str(big_table), "--segments-out", str(out), "--quiet"],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          preexec_fn=_file_size_limit(1 << 20))
    _refused(done, "segments.parquet: cannot be written", "file size limit",
             "the old one is left as it was")
    assert os.listdir(tmp_path) == ["segments.parquet"] and out.read_bytes() == OLD


@pytest.mark.slow  # a real cluster (issue 28: -m slow)
def test_a_full_disk_on_a_cluster_names_the_output_and_keeps_the_old_one(tmp_path):
    pytest.importorskip("distributed")
    pq.write_table(sample_table(), tmp_path / "in.parquet")
    out = tmp_path / "segs"
    out.mkdir()
    (out / MARKER).write_text("an earlier run\n")
    (out / "part.00000.parquet").write_bytes(OLD)
    done = subprocess.run(FASTBLEU + ["in.parquet", "--dask-workers", "1", "--segments-out",
                                      "segs", "--quiet"],
                          cwd=tmp_path, env=ENV, capture_output=True, text=True,
                          preexec_fn=_file_size_limit(20000))  # the workers inherit it
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == (
        "fastbleu: error: segs/part.00000.parquet: cannot be written (the file size limit is "
        "reached); segs is left as it was")
    assert sorted(os.listdir(tmp_path)) == ["in.parquet", "segs"]
    assert (out / "part.00000.parquet").read_bytes() == OLD
