"""The reference streams a metric's API takes, checked and converted once."""

from __future__ import annotations

from collections.abc import Sequence

from ..statistics.tokens import even_bounds
from .text import TextColumn, as_text_column


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


def text_inputs(hypotheses, references, check_references, cache=None):
    """The hypotheses as a text column and the reference streams, or a metric's cache.

    Given references (even an empty list) are converted with
    :func:`reference_streams` and checked with ``check_references(streams)``,
    which returns their ``num_refs``; ``None`` takes ``cache`` (a metric's
    converted references, ``len(cache)`` segments), which must be as long as
    the hypotheses.

    Returns
    -------
    (TextColumn, list of TextColumn or the cache, int or None)
        The hypotheses, the references, and the given references' ``num_refs``
        (``None`` for the cache, whose count the metric already holds).
    """
    hyps = as_text_column(hypotheses, "hypotheses")
    if references is not None:  # given, even empty: never fall back to the cache
        streams = reference_streams(references, len(hyps))
        return hyps, streams, check_references(streams)
    if cache is None:
        raise RuntimeError("No references provided and the cache is empty.")
    if len(cache) != len(hyps):
        raise ValueError(f"the cached references have {len(cache)} segments but "
                         f"the hypotheses have {len(hyps)}")
    return hyps, cache, None


def list_batches(hypotheses, references, batch_size: int, check, whole, done, threads: int = 1,
                 bounds: list[int] | None = None):
    """Python lists of segments converted to text columns a batch at a time, or ``None``
    when the inputs are not such lists (or fit in one batch).

    The generator yields ``(hypotheses, reference_streams)`` for consecutive
    batches of even sizes, at most ``batch_size`` (:func:`~fastbleu.statistics.even_bounds`
    for ``threads`` threads), or between the given ``bounds``, so that only a few
    batches of the input are ever held as text.
    ``check(streams)`` validates a batch's references and returns its
    ``num_refs``; ``done(num_refs)`` receives the whole input's once every
    batch has been read (``-1`` when it varies).  A batch that cannot be
    converted or checked calls ``whole()``, which converts and checks the
    whole input at once and so raises the error naming the segment by its
    index in the whole input, as without batches.
    """
    n = len(hypotheses) if isinstance(hypotheses, list) else 0
    if n <= batch_size or not isinstance(references, (list, tuple)) or not references \
            or not all(isinstance(s, (list, tuple)) and len(s) == n for s in references):
        return None

    if bounds is None:
        bounds = even_bounds(n, batch_size, threads)

    def batches():
        counts = set()
        for first, last in zip(bounds[:-1], bounds[1:]):
            try:
                hyps = as_text_column(hypotheses[first:last], "hypotheses")
                streams = reference_streams([s[first:last] for s in references], last - first)
                counts.add(check(streams))
            except (TypeError, ValueError):
                whole()
                raise
            yield hyps, streams
        done(counts.pop() if len(counts) == 1 else -1)

    return batches()
