"""BLEU's statistics rows of an input, a batch at a time.

Python lists are converted to text one batch at a time
(:func:`~fastbleu.metrics.inputs.list_batches`), so scoring never holds a
copy of the whole input.  Each batch's kernels (tokenize both sides, count)
run in one piece on one thread of the pool, as many batches at once as it has
threads (:func:`~fastbleu._kernels.threads.ordered_map`), while this thread
converts the next batches, which needs the GIL.  A batch thus costs one
hand-over to the pool, not a fork-join per kernel call whose dispatch and
collection wait for the GIL held by the conversion (issue 17; see "Two
cores" in ``benchmarks/README.md``).  Other inputs are converted at once and then
counted batch by batch as :func:`fastbleu.statistics.iter_statistics` does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator

import numpy as np

from ..id_statistics import iter_statistics  # text, or token ids (fastbleu.token_ids)
from ..statistics import KERNEL_BATCH_SIZE, BufferPairs, HashBuffer, compute_statistics
from ..text import TextColumn
from ..token_ids import is_token_ids
from .inputs import list_batches

logger = logging.getLogger("fastbleu")

#: sacrebleu warns once this many hypotheses end in a tokenized period (" .").
TOKENIZED_PERIODS = 100


def warn_if_tokenized(metric, hyps: TextColumn, n: int | None = None, tokenized: int = 0) -> int:
    """sacrebleu's warning for 100+ hypotheses ending in a tokenized period.

    ``hyps`` may be one batch of ``n`` hypotheses, ``tokenized`` the count of
    the batches before it; the warning comes once the count of all of them
    reaches 100.  Returns the count so far.
    """
    if metric._force or (len(hyps) if n is None else n) < TOKENIZED_PERIODS or \
            not isinstance(hyps, TextColumn):
        return tokenized
    starts, ends = hyps.offsets[:-1], hyps.offsets[1:]
    ends = ends[ends - starts >= 2]
    found = (hyps.data[ends - 1] == ord(".")) & (hyps.data[ends - 2] == ord(" "))
    before, tokenized = tokenized, tokenized + int(found.sum())
    if before < TOKENIZED_PERIODS <= tokenized:
        logger.warning("That's 100 lines that end in a tokenized period ('.')")
        logger.warning("It looks like you forgot to detokenize your test data, which may "
                       "hurt your score.")
        logger.warning("If you insist your data is detokenized, or don't care, you can "
                       "suppress this message with the `force` parameter.")
    return tokenized


def statistics_batches(metric, hypotheses, references) -> Iterator[np.ndarray]:
    """Yield the statistics rows of ``metric`` (a :class:`~fastbleu.BLEU`) batch by batch."""
    formula = metric.formula
    threads = 1
    if isinstance(hypotheses, list) and len(hypotheses) > KERNEL_BATCH_SIZE:
        from .._kernels.threads import pool_size  # imports numba: large inputs use it anyway

        threads = pool_size()
    batches = None if is_token_ids(hypotheses) else \
        list_batches(hypotheses, references, KERNEL_BATCH_SIZE, metric._check_references,
                     lambda: metric._prepare(hypotheses, references),
                     lambda num_refs: setattr(metric, "num_refs", num_refs), threads)
    buffers = (HashBuffer(), HashBuffer())

    def rows_of(hyps, refs) -> list[np.ndarray]:
        return list(iter_statistics(hyps, refs, metric.tokenizer, metric.lowercase,
                                    formula.max_order, buffers=buffers,
                                    ref_length=formula.ref_length_code))

    if batches is None:
        hyps, refs = metric._prepare(hypotheses, references)
        warn_if_tokenized(metric, hyps)
        yield from rows_of(hyps, refs)
        return
    tokenized = 0

    def converted():
        nonlocal tokenized
        for hyps, refs in batches:
            tokenized = warn_if_tokenized(metric, hyps, len(hypotheses), tokenized)
            yield hyps, refs

    def rows(batch, buffers):
        return compute_statistics(*batch, metric.tokenizer, metric.lowercase, formula.max_order,
                                  buffers, ref_length=formula.ref_length_code)

    from .._kernels.threads import ordered_map

    yield from ordered_map(BufferPairs().lend(rows), converted())
