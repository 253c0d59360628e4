"""Writing a report: both files checked before any work, written beside, swapped in together.

The rules are the package's for every output (:mod:`fastbleu.tables.targets`):
never over an input (a path, a link to it, a file inside an input folder or
matched by an input glob), only regular files replaced, permissions kept,
and a hidden temporary file renamed onto the target once complete
(:class:`fastbleu.tables.writers.AtomicFile`).
"""

from __future__ import annotations

import os

from ..errors import InputError


def check_outputs(html: str | None, markdown: str | None, inputs: list,
                  default_markdown: bool = False) -> None:
    """Refuse, before any work, outputs that may not be written (InputError, one line).

    ``html`` None: the page goes to a stream (the command's ``-o -``), not a file.
    ``default_markdown``: the summary's path was not chosen but derived from the page's
    (``NAME.md``), so a refusal of it says how to choose another or none.
    """
    from ..tables.targets import check_writable

    if html is not None and markdown is not None and \
            os.path.realpath(html) == os.path.realpath(markdown):
        raise InputError(f"{html}: the HTML page and the Markdown summary need two paths")
    outputs = ([(html, False)] if html is not None else []) + \
        ([(markdown, default_markdown)] if markdown is not None else [])
    for path, derived in outputs:
        for source in inputs or [None]:
            try:
                check_writable(path, source)
            except InputError as error:
                if not derived:
                    raise
                raise InputError(f"{error} (the Markdown summary's default path, beside the "
                                 "page: choose another with --markdown PATH (markdown=PATH), "
                                 "or none with --no-markdown (markdown=False))") from None


def write_outputs(report, html: str | None, markdown: str | None, inputs: list,
                  stream=None) -> None:
    """Render ``report`` and write the page (and the summary) safely.

    ``html`` None: the page is written to ``stream`` (a text stream; its UTF-8 bytes, as
    the page declares, through its binary buffer where it has one), before the summary
    file is committed, so that a failed write leaves no summary; the summary links to no
    page.  A stream that cannot be written is an :class:`InputError` (one line), except a
    reader gone away (``BrokenPipeError``), which is raised as it is.
    """
    from ..tables.writers import AtomicFile
    from .markdown import render_markdown
    from .page import render_page

    page = render_page(report)
    texts = [(html, page)] if html is not None else []
    if markdown is not None:
        texts.append((markdown, render_markdown(
            report, os.path.basename(html) if html is not None else None)))
    check_outputs(html, markdown, inputs)  # again: the inputs may have moved meanwhile
    files = []
    try:
        for path, text in texts:
            out = AtomicFile(path, inputs[0] if inputs else None)
            files.append(out)
            with out.writing(), open(out.temporary, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
        if html is None:
            _write_stream(stream, page)
        for out in files:
            out.commit()
    except BaseException:
        for out in files:
            out.discard()
        raise


def _write_stream(stream, text: str) -> None:
    """``text`` as UTF-8 onto ``stream``, flushed; its failure one line (but a broken pipe)."""
    if stream is None:
        raise InputError("standard output is closed; the page was not written")
    try:
        binary = getattr(stream, "buffer", None)
        if binary is not None:
            stream.flush()
            binary.write(text.encode("utf-8"))
            binary.flush()
        else:
            stream.write(text)
            stream.flush()
    except BrokenPipeError:
        raise
    except (OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else error
        raise InputError(f"cannot write to standard output ({reason}); the page is incomplete "
                         "and no summary was written") from None
