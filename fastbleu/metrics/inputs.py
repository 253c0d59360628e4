"""The reference streams a metric's API takes, checked and converted once."""

from __future__ import annotations

from collections.abc import Sequence

from ..text import TextColumn, as_text_column


def sentence_streams(hypothesis, references) -> tuple[list[str], list[list]]:
    """``sentence_score``'s arguments as one segment: ``([hypothesis], [[ref], ...])``.

    Raises
    ------
    TypeError
        If ``hypothesis`` is not a str or ``references`` not a sequence of
        strings (``None`` entries are missing references).
    """
    if not isinstance(hypothesis, str):
        raise TypeError(f"hypothesis must be a str, got {type(hypothesis).__name__}")
    if isinstance(references, str) or not isinstance(references, Sequence):
        raise TypeError("references must be a sequence of strings, one per reference")
    return [hypothesis], [[ref] for ref in references]


def reference_streams(references, n_segments: int | None) -> list[TextColumn]:
    """Validate and convert a list of reference streams (``None`` entries are missing
    references) into text columns, each ``n_segments`` long (or as long as the first).

    Raises
    ------
    TypeError
        If ``references`` is not a list of streams of strings.
    ValueError
        If it is empty or the streams' lengths differ; the message names the stream.
    """
    if isinstance(references, (str, bytes)) or not hasattr(references, "__len__"):
        raise TypeError("references must be a list of reference streams (one sequence of "
                        "strings per reference)")
    if len(references) == 0:
        raise ValueError("references is empty: give at least one reference stream, or None "
                         "for the references given to the metric's constructor "
                         "(references=...)")
    first = references[0]
    if isinstance(first, str) or first is None:
        raise TypeError("references must be a list of reference streams, each a sequence of "
                        "strings; for a single stream write [refs]")
    streams = [as_text_column(stream, f"references[{r}]", allow_null=True)
               for r, stream in enumerate(references)]
    expected = len(streams[0]) if n_segments is None else n_segments
    for r, stream in enumerate(streams):
        if len(stream) != expected:
            what = "the hypotheses have" if n_segments is not None else "references[0] has"
            raise ValueError(f"references[{r}] has {len(stream)} segments but {what} "
                             f"{expected}")
    return streams
