"""The command line's one error policy (fastbleu.cli.policy.guarded), branch by branch."""

import pytest

from fastbleu.cli.policy import guarded
from fastbleu.errors import InputError

EXTRAS = {"matplotlib": "needs matplotlib: pip install 'fastbleu[report]'"}


def _status(error, capsys, debug=False):
    with guarded(debug, "report", memory_hint="try less", extras=EXTRAS) as outcome:
        raise error
    return outcome.status, capsys.readouterr()


@pytest.mark.parametrize("error, status, first", [
    (InputError("no such file: x.txt"), 2, "fastbleu: error: no such file: x.txt"),
    (MemoryError(), 2, "fastbleu: error: not enough memory for this input; no report was "
                       "written (try less)"),
    (KeyboardInterrupt(), 130, "fastbleu: interrupted; no report was written"),
    (ModuleNotFoundError("x", name="matplotlib.pyplot"), 2,
     "fastbleu: error: needs matplotlib: pip install 'fastbleu[report]'"),
    (ModuleNotFoundError("x", name="fastbleu.compare.page"), 1,
     "fastbleu: error: broken installation"),
])
def test_user_errors_are_one_line(error, status, first, capsys):
    got, captured = _status(error, capsys)
    lines = captured.err.splitlines()
    assert got == status and captured.out == "" and len(lines) == 1
    assert lines[0].startswith(first)


@pytest.mark.parametrize("error", [RuntimeError("boom"), ModuleNotFoundError("x", name="zzz")])
def test_bugs_show_their_traceback(error, capsys):
    got, captured = _status(error, capsys)
    assert got == 1 and "Traceback" in captured.err and "this is a bug" in captured.err


@pytest.mark.parametrize("error", [InputError("bad"), MemoryError(), RuntimeError("boom")])
def test_debug_raises(error, capsys):
    with pytest.raises(type(error)):
        _status(error, capsys, debug=True)


def test_success_leaves_no_status(capsys):
    with guarded(False, "output") as outcome:
        pass
    assert outcome.status is None and capsys.readouterr().err == ""
