"""The command line's error policy and its two streams.

Only errors that user input raises by design are one line: an
:class:`~fastbleu.errors.InputError` (exit 2).  A module of fastbleu or of a
required dependency that cannot be imported is a broken installation (exit
1, one line).  Anything else is a bug: its traceback, then a line asking to
report it (exit 1).  Messages go to standard error only, and are dropped when
it is closed; standard output receives the result and nothing else.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback

from ..errors import InputError

#: fastbleu's required dependencies: without one of them the installation is broken.
REQUIRED = ("fastbleu", "numpy", "numba", "llvmlite", "pyarrow", "regex")

INTERNAL_ERROR = ("fastbleu: internal error: this is a bug; please report it with the "
                  "command line and the traceback above")


def is_broken_install(error: ImportError) -> bool:
    """Whether an ImportError is a broken installation (a module of fastbleu or of a
    required dependency is missing or cannot be loaded) rather than a missing extra."""
    name = error.name or ""
    return name.split(".")[0] in REQUIRED


def broken_install_message(error: ImportError) -> str:
    """The one line for an ImportError of fastbleu's own modules or required dependencies:
    the installation is broken (not the user's input), with the module and the fix."""
    name = error.name or "fastbleu"
    package = name.split(".")[0]
    what = "module" if package == "fastbleu" else f"required dependency {package}'s module"
    return (f"broken installation: fastbleu's {what} {name} cannot be imported ({error}); "
            f"this is not a problem with the input: reinstall with "
            f"pip install --force-reinstall {package}")


@contextlib.contextmanager
def user_values(*errors: type[BaseException]):
    """Around an API call that checks values the user typed: its refusal (one of
    ``errors``) is the user's to fix, an :class:`InputError` with the API's message.

    Only for calls that validate (building a metric from the flags, resolving a seed,
    checking a table job): a ``ValueError`` from scoring itself stays a bug.  An
    ImportError of a broken installation passes through; any other is a missing
    optional extra, whose message names it.
    """
    try:
        yield
    except errors as error:
        if isinstance(error, ImportError) and is_broken_install(error):
            raise
        raise InputError(str(error)) from None


class Outcome:
    """What :func:`guarded` saw: the exit status when the run failed, else ``None``."""

    def __init__(self):
        self.status: int | None = None


@contextlib.contextmanager
def guarded(debug: bool, product: str, memory_hint: str = "", extras: dict | None = None):
    """Run a command's work under the error policy; ``outcome.status`` is set on failure.

    One policy for every subcommand: an :class:`InputError` or ``MemoryError`` is one
    ``fastbleu: error:`` line and exit 2; SIGTERM/SIGHUP (:mod:`fastbleu.signals`) and
    Ctrl-C unwind, removing temporaries (exit 129/143/130); a broken installation is one
    line and exit 1; a missing optional extra named in ``extras`` (top-level module ->
    its message) is exit 2; anything else is a bug (traceback, exit 1).  ``--debug``
    (``debug``) lets user errors and bugs raise instead.  ``product`` names what was not
    written ("output", "report"); ``memory_hint`` follows the memory error.
    """
    from ..signals import Terminated, terminating

    outcome = Outcome()
    try:
        with terminating():  # SIGTERM and SIGHUP unwind as Ctrl-C does, removing temporaries
            yield outcome
    except InputError as error:
        if debug:
            raise
        say(f"fastbleu: error: {error}")
        outcome.status = 2
    except Terminated as stop:
        say(f"fastbleu: {stop.message}")
        outcome.status = stop.exit_status
    except KeyboardInterrupt:
        say(f"fastbleu: interrupted; no {product} was written")
        outcome.status = 130
    except MemoryError:  # a limit of the machine (or of ulimit -v), not a bug
        if debug:
            raise
        say(f"fastbleu: error: not enough memory for this input; no {product} was written"
            + (f" ({memory_hint})" if memory_hint else ""))
        outcome.status = 2
    except ImportError as error:
        if debug:
            raise
        if is_broken_install(error):
            say(f"fastbleu: error: {broken_install_message(error)}")
            outcome.status = 1
        elif (error.name or "").split(".")[0] in (extras or {}):
            say(f"fastbleu: error: {extras[error.name.split('.')[0]]}")
            outcome.status = 2
        else:
            outcome.status = report_bug()
    except Exception:  # not the user's input: a bug, shown as one
        if debug:
            raise
        outcome.status = report_bug()


def say(message: str) -> None:
    """One line on standard error; nothing (never standard output) if it is closed."""
    stream = sys.stderr
    if stream is None:
        return
    try:
        stream.write(message + "\n")
        stream.flush()
    except (OSError, ValueError):
        pass


def report_bug() -> int:
    """The traceback of the exception being handled, the line asking to report it; exit 1."""
    say(traceback.format_exc().rstrip("\n"))
    say(INTERNAL_ERROR)
    return 1


def write_output(output: str) -> int:
    """Print the result and flush it, so that a failed write is seen here and not lost.

    A closed standard output (``>&-``) or a failed write (``> /dev/full``) is an error:
    exit 2 with one line.  A closed pipe (``| head``) is not: as a Unix tool killed by
    SIGPIPE, exit 141 (128 + SIGPIPE) silently.
    """
    stream = sys.stdout
    if stream is None:
        say("fastbleu: error: standard output is closed; the result was not written")
        return 2
    try:
        stream.write(output + "\n")
        stream.flush()
    except BrokenPipeError:
        silence_stdout()
        return 141
    except UnicodeEncodeError as error:
        silence_stdout()
        say(f"fastbleu: error: standard output's encoding ({error.encoding}) cannot hold the "
            f"result ({error.reason}); set PYTHONIOENCODING=utf-8")
        return 2
    except (OSError, ValueError) as error:
        silence_stdout()
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        say(f"fastbleu: error: cannot write to standard output ({reason})")
        return 2
    return 0


def silence_stdout() -> None:
    """Point standard output at /dev/null, so that the interpreter's final flush of what
    is left in its buffer does not fail again."""
    try:
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    except (OSError, ValueError):
        pass
