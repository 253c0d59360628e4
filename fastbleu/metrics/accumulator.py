"""Streaming and distributed scoring: summed statistics that merge.

A metric's corpus score is its formula of the column sums of its statistics
rows (:mod:`fastbleu.metrics.base`), so a corpus can be scored in pieces:
each piece adds its rows' sum to an :class:`Accumulator`, accumulators of
separate pieces (threads, processes, Dask partitions, machines) merge by
adding their sums, and the score of the total is exactly the corpus score of
the concatenated input.  Besides the sum, an accumulator keeps sacrebleu's
``nrefs`` bookkeeping: references per segment, or ``var`` (``-1``) as soon as
two pieces disagree.

An accumulator pickles as its metric's registry key and options, its sum and
its counts; the metric is rebuilt where it is unpickled (its cached
references are not carried: pass references to :meth:`Accumulator.update`).

NIST's information weights are counted over the whole corpus, so its
accumulator (:class:`~fastbleu.metrics.nist_accumulator.NISTAccumulator`)
keeps the tokens of its updates instead of a sum and weighs them when scored.

Example
-------
>>> import pickle
>>> from fastbleu import BLEU
>>> a = BLEU().accumulator().update(["the cat sat on the mat"], [["the cat sat on a mat"]])
>>> b = BLEU().accumulator().update(["a dog barked"], [["the dog barked"]])
>>> total = a.merge(pickle.loads(pickle.dumps(b)))
>>> total.score().score == BLEU().corpus_score(
...     ["the cat sat on the mat", "a dog barked"],
...     [["the cat sat on a mat", "the dog barked"]]).score
True
"""

from __future__ import annotations

import numpy as np

from .results import ResolvedCount


def merged_num_refs(a: int | None, b: int | None) -> int | None:
    """References per segment of two pieces together: equal counts stay, else ``-1``."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    return -1


class Accumulator:
    """Summed statistics of any metric on the seam, to update, merge, pickle and score.

    Made by :meth:`Metric.accumulator` (``BLEU().accumulator()``, ``CHRF()``,
    ``TER()`` alike).

    Parameters
    ----------
    metric : Metric
        The metric whose statistics are summed.  Its options are recorded
        now; updating after they have been changed is refused.

    Attributes
    ----------
    key : str
        The metric's registry key (``"bleu"``, ``"chrf"``, ``"ter"``).
    options : dict
        The metric's constructor options (:meth:`Metric.options`).
    formula : Formula
        The metric's formula, which scores the sum.
    n_segments : int
        Segments added so far (by updates and merges).
    num_refs : int or None
        References per segment, ``-1`` when it varies, ``None`` before any
        reference has been seen.
    """

    def __init__(self, metric):
        try:
            key, options, formula = metric.key, metric.options(), metric.formula
        except (AttributeError, TypeError):
            raise TypeError(f"an accumulator needs a fastbleu metric, got "
                            f"{type(metric).__name__}") from None
        self._metric = metric  # None after unpickling, until first needed
        self.key: str = key
        self.options: dict = options
        self.formula = formula
        self._total = np.zeros(self.formula.row_width, dtype=np.int64)
        self.n_segments = 0
        # num_refs as recorded: an int, or a count still on the device (token ids with a
        # reference mask there), read back when num_refs is first asked for
        self._num_refs = None
        # References per segment of empty pieces: sacrebleu's nrefs of an empty corpus is
        # its number of streams, which must not outvote a piece that has segments.
        self._empty_num_refs: int | None = None
        # The signature's tok field of the input added (BLEU: "ids" for token ids), if the
        # metric records one; text and ids are not mixed in one sum.
        self._input_signature: str | None = None

    #: References per segment (``-1`` when it varies), None before any: a plain int.
    num_refs = ResolvedCount()

    # -- building it up ------------------------------------------------------------------

    @property
    def metric(self):
        """The metric (rebuilt from :attr:`key` and :attr:`options` after unpickling)."""
        if self._metric is None:
            from . import get_metric

            self._metric = get_metric(self.key, **self.options)
        return self._metric

    @property
    def statistics(self) -> np.ndarray:
        """A copy of the summed statistics row (int64, ``formula.row_width`` columns)."""
        return self._total.copy()

    def update(self, hypotheses, references=None) -> Accumulator:
        """Add the statistics of more segments; return this accumulator.

        Parameters
        ----------
        hypotheses, references
            As for the metric's ``corpus_score`` (``None`` references: the
            metric's cached ones).  An empty piece adds nothing.

        Raises
        ------
        ValueError
            If the metric's options were changed since the accumulator was
            made, or as the metric raises for bad input.
        """
        metric = self.metric
        if metric.options() != self.options:
            raise ValueError(f"the {self.key} metric's options changed since this accumulator "
                             "was made; make a new accumulator for the new options")
        total, n = metric._summed(hypotheses, references)  # GPU inputs: summed there
        if n:
            self._add_input_signature(metric.input_tokenizer_signature)
            self._total += total
            self.n_segments += n
            # the metric's count as recorded: one still on the device is not waited for here
            self._num_refs = merged_num_refs(self._num_refs, metric._num_refs)
        elif self._empty_num_refs is None:
            self._empty_num_refs = metric.num_refs
        return self

    def merge(self, other: Accumulator) -> Accumulator:
        """Add another accumulator's sums (same metric and options); return this one.

        Raises
        ------
        TypeError
            If ``other`` is not an :class:`Accumulator`.
        ValueError
            If it sums another metric's statistics, or the same metric's with
            other options.
        """
        if not isinstance(other, Accumulator):
            raise TypeError(f"can only merge another Accumulator, got {type(other).__name__}")
        if (other.key, other.options) != (self.key, self.options) or \
                not self._formula_merges(other.formula):
            raise ValueError(f"cannot merge accumulators of different metrics or options: "
                             f"{self.key} {self.options} vs {other.key} {other.options}")
        self._add_input_signature(other._input_signature)
        self._merge_sums(other)
        if self._empty_num_refs is None:
            self._empty_num_refs = other._empty_num_refs
        return self

    def _formula_merges(self, formula) -> bool:
        """Whether sums scored by ``formula`` add to this accumulator's (the same formula)."""
        return formula == self.formula

    def _merge_sums(self, other: Accumulator) -> None:
        """Add ``other``'s sums, segments and reference counts (its formula merges)."""
        self._total += other._total
        self.n_segments += other.n_segments
        self._num_refs = merged_num_refs(self._num_refs, other._num_refs)

    def _add_input_signature(self, signature: str | None) -> None:
        if signature is None:
            return
        if self._input_signature is not None and signature != self._input_signature:
            raise ValueError(f"cannot add input tokenized as '{signature}' to an accumulator "
                             f"of input tokenized as '{self._input_signature}' (token ids "
                             "and text do not mix)")
        self._input_signature = signature

    def __iadd__(self, other: Accumulator) -> Accumulator:
        return self.merge(other)

    # -- results -----------------------------------------------------------------------------

    def score(self):
        """The corpus score of everything added: ``formula.score`` of the sum, exactly the
        metric's ``corpus_score`` of the concatenated input."""
        return self.formula.score(self._total, check=False)

    def signature(self):
        """The metric's signature for the references seen (``nrefs:var`` when they varied).

        Raises
        ------
        ValueError
            Before any update, as the metric's ``get_signature`` does.
        """
        num_refs = self.num_refs if self.num_refs is not None else self._empty_num_refs
        if num_refs is None:
            raise ValueError("Number of references unknown, please update the accumulator "
                             "first.")
        return self.metric.signature(num_refs, self._input_signature)

    # -- pickling ------------------------------------------------------------------------------

    def __getstate__(self) -> dict:
        # The metric holds tokenizers and cached references; its key and options rebuild it.
        state = self.__dict__.copy()
        state["_metric"] = None
        return state

    def __setstate__(self, state: dict) -> None:
        if "num_refs" in state:  # pickled before num_refs became a property
            state = {**state, "_num_refs": state["num_refs"]}
            del state["num_refs"]
        self.__dict__.update(state)

    def __repr__(self) -> str:
        return (f"Accumulator({self.key}, {self.n_segments} segments, "
                f"num_refs={self.num_refs})")
