"""BLEU's statistics rows of an input, a batch at a time.

Python lists are converted to text one batch at a time
(:func:`~fastbleu.metrics.inputs.list_batches`), so scoring never holds a
copy of the whole input; the kernels of one batch run on a thread of their
own (they release the GIL) while this thread converts the next batch, which
needs the GIL.  Other inputs are converted at once and then counted batch by
batch as :func:`fastbleu.statistics.iter_statistics` does.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import numpy as np

from ..id_statistics import iter_statistics  # text, or token ids (fastbleu.token_ids)
from ..statistics import BATCH_SIZE, HashBuffer
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
    batches = None if is_token_ids(hypotheses) else \
        list_batches(hypotheses, references, BATCH_SIZE, metric._check_references,
                     lambda: metric._prepare(hypotheses, references),
                     lambda num_refs: setattr(metric, "num_refs", num_refs))
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
    pending = None
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="fastbleu-batch") as batch:
        for hyps, refs in batches:
            tokenized = warn_if_tokenized(metric, hyps, len(hypotheses), tokenized)
            job = batch.submit(rows_of, hyps, refs)
            if pending is not None:
                yield from pending.result()
            pending = job
        if pending is not None:
            yield from pending.result()
