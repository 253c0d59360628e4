"""The listener that prints :data:`fastbleu.progress.COMPILE_NOTICE` at a kernel's compile.

numba fires its ``numba:compile`` event when it is about to compile a function
for a signature that neither this process nor the cache holds, and only then
(a kernel loaded from the cache is not one).  The listener is installed once,
when the kernels are first imported (``fastbleu/_kernels/__init__.py``), and
asks the notice to show itself at the first such event of a fastbleu function;
the notice prints only while the command line has set its text.  Checking
numba's event is exact where guessing from the cache's files is not (an index
file may hold another signature, or source that has changed since).
"""

from __future__ import annotations

from numba.core import event

from ..progress import COMPILE_NOTICE


class CompileListener(event.Listener):
    """Shows the compile notice at the start of a compile of a fastbleu function."""

    def on_start(self, ev):
        if COMPILE_NOTICE.text is None or COMPILE_NOTICE.shown:
            return
        dispatcher = (ev.data or {}).get("dispatcher")
        module = getattr(getattr(dispatcher, "py_func", None), "__module__", "") or ""
        if module.startswith("fastbleu."):
            COMPILE_NOTICE.show()

    def on_end(self, ev):
        pass


_installed: list[CompileListener] = []


def install() -> None:
    """Register the listener with numba, once per process."""
    if not _installed:
        _installed.append(CompileListener())
        event.register("numba:compile", _installed[0])
