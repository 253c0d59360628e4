"""NIST's accumulator: exact across updates and merges, because it keeps the tokens.

NIST's information weights (Doddington, 2002) are counted over every
reference of the corpus, and with NLTK's variant a segment's matches come
from its best reference, chosen by weighted precision: so a segment's row
depends on the weights, which depend on every other update.  Summed rows
cannot carry that, and per-n-gram matched counts cannot either (the best
reference changes with the weights).  :class:`NISTAccumulator` therefore
keeps every update's token hashes (8 bytes a word, hypotheses and
references), merges by concatenating them, and scores at the end: its score
is exactly ``NIST().corpus_score`` of all the updates' segments together, and
so NLTK's ``corpus_nist`` of their tokens.
"""

from __future__ import annotations

import numpy as np

from ...statistics.tokens import References
from ..accumulator import Accumulator, merged_num_refs


def _concatenated(parts: list[References]) -> References:
    """Several References (one hash buffer each) as one, streams padded with missing ones."""
    width = max(part.count.shape[0] for part in parts)
    hashes, starts, counts, offset = [], [], [], 0
    for part in parts:
        pad = width - part.count.shape[0]
        start = part.start + offset
        count = part.count
        if pad:
            n = count.shape[1]
            start = np.vstack([start, np.zeros((pad, n), dtype=start.dtype)])
            count = np.vstack([count, np.full((pad, n), -1, dtype=count.dtype)])
        hashes.append(part.hashes)
        starts.append(start)
        counts.append(count)
        offset += part.hashes.size
    return References(np.concatenate(hashes), np.ascontiguousarray(np.hstack(starts)),
                      np.ascontiguousarray(np.hstack(counts)))


class NISTAccumulator(Accumulator):
    """An :class:`~fastbleu.metrics.accumulator.Accumulator` of NIST that keeps the tokens.

    Made by :meth:`fastbleu.NIST.accumulator`.  ``update``, ``merge``,
    pickling and ``signature`` work as for every metric; :attr:`statistics`
    and :meth:`score` weigh everything added so far with the weights of all
    of its references.  Memory: 8 bytes per hypothesis and reference word.
    """

    def __init__(self, metric):
        super().__init__(metric)
        self._hyps: list[References] = []
        self._refs: list[References] = []

    def update(self, hypotheses, references=None) -> NISTAccumulator:
        """Add more segments (see :meth:`Accumulator.update`); their tokens are kept."""
        metric = self.metric
        if metric.options() != self.options:
            raise ValueError(f"the {self.key} metric's options changed since this accumulator "
                             "was made; make a new accumulator for the new options")
        hyps, refs = metric._convert(hypotheses, references)
        if not len(hyps):
            if self._empty_num_refs is None:
                self._empty_num_refs = metric.num_refs
            return self
        tokenizer, lowercase = metric._tokenizer, metric.lowercase
        if not isinstance(refs, References):
            refs = References.cached(refs, tokenizer, lowercase)
        self._hyps.append(References.cached([hyps], tokenizer, lowercase))
        self._refs.append(refs)
        self.n_segments += len(hyps)
        self.num_refs = merged_num_refs(self.num_refs, metric.num_refs)
        return self

    def merge(self, other: Accumulator) -> NISTAccumulator:
        """Add another NIST accumulator's segments (same options); return this one.

        A refused merge leaves this accumulator as it was (checked before anything changes).
        """
        if isinstance(other, Accumulator) and other.n_segments and \
                not isinstance(other, NISTAccumulator):
            raise ValueError("cannot merge a NIST accumulator with one that kept sums only")
        super().merge(other)
        if isinstance(other, NISTAccumulator):
            self._hyps.extend(other._hyps)
            self._refs.extend(other._refs)
        return self

    @property
    def statistics(self) -> np.ndarray:
        """The summed statistics row of everything added, with the weights of all of it."""
        if not self._hyps:
            return np.zeros(self.formula.row_width, dtype=np.int64)
        metric = self.metric
        refs = _concatenated(self._refs)
        hyp = _concatenated(self._hyps)
        rows = metric._matched_rows(hyp, refs, metric._weights(refs))
        return rows.sum(axis=0)

    def score(self):
        """Exactly ``NIST().corpus_score`` of every segment added (updates and merges)."""
        return self.formula.score(self.statistics, check=False)

    def __repr__(self) -> str:
        return (f"NISTAccumulator({self.n_segments} segments, num_refs={self.num_refs})")

