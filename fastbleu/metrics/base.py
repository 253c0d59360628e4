"""The shape every metric has: statistics, a formula, a signature.

A metric turns text into an int64 array with one fixed-width, summable row
per segment (its *statistics*); a *formula* turns rows into scores, and the
corpus score is the formula of the column sums; a *signature* records the
options that make a number reproducible.  Everything downstream of the
statistics (groups, documents, ``--segments-out``, Dask merges, bootstrap and
approximate randomization, reports) works through this seam and knows
nothing of a particular metric.

The split follows sacrebleu's ``sacrebleu/metrics/base.py`` (a metric
extracts statistics, computes a score from them, and wraps it in a score
object with a signature), made array-first: a formula scores many rows, or
many resampled sums, in one kernel call instead of one Python call per row.

This module imports numpy only (no numba), so that ``fastbleu.metrics`` can
be imported cheaply.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from typing import TYPE_CHECKING, ClassVar

import numpy as np

from .formula import Formula, Score, Signature, checked_counts
from .results import ResolvedCount

if TYPE_CHECKING:  # pragma: no cover
    from ..statistics.tokens import BufferPairs, HashBuffer
    from ..inputs.text import TextColumn

__all__ = ["Metric", "Formula", "Score", "Signature", "checked_counts", "check_bootstrap"]


def check_bootstrap(n_bootstrap) -> int:
    """``corpus_score``'s ``n_bootstrap``: an int (TypeError otherwise)."""
    if isinstance(n_bootstrap, bool) or not isinstance(n_bootstrap, (int, np.integer)):
        raise TypeError(f"n_bootstrap must be an int, got {type(n_bootstrap).__name__}")
    return int(n_bootstrap)


def _sum_and_count(rows: np.ndarray) -> tuple[np.ndarray, int]:
    """A batch's column sums and its number of segments (on the batch's pool thread)."""
    return rows.sum(axis=0), len(rows)


class Tally:
    """A count over the batches of one input, added to from the pool's threads."""

    def __init__(self):
        import threading

        self._lock = threading.Lock()
        self.total = 0

    def add(self, count: int) -> tuple[int, int]:
        """Add ``count``; return the total before and after."""
        with self._lock:
            before = self.total
            self.total += count
            return before, self.total


class Metric(ABC):
    """A metric: statistics extraction, a :class:`Formula` and a signature.

    The input side of the seam is written here once.  A metric supplies one
    batch hook, :meth:`column_statistics` (converted text columns of a batch
    -> its statistics rows: the metric's tokenization and kernel), and the
    checks of its references (:meth:`_check_references`); :meth:`corpus_score`,
    :meth:`segment_statistics`, :meth:`sentence_scores`, :meth:`sentence_score`
    and :meth:`accumulator` are this class's, over :meth:`statistics_batches`,
    the one batch pipeline of every metric: inputs converted (Python lists a
    batch at a time, while the pool counts the batches before), then each
    batch's hook run whole on a thread of the pool (:mod:`fastbleu._kernels.threads`).

    A metric whose statistics need a pass over the corpus first (NIST's
    information weights, Doddington 2002) sets :attr:`corpus_pass` and
    supplies :meth:`reference_counts`, :meth:`with_weights` and
    :meth:`with_row_weights`; tables, Dask and accumulators call these for
    every metric whose :attr:`corpus_pass` is true, and nothing else.

    Attributes
    ----------
    name : str
        The metric's name.
    formula : Formula
        Its formula (options of scoring, not of statistics extraction).
    num_refs : int or None
        References per segment once seen (``-1`` when it varies).
    n_bootstrap : int or None
    seed : str or None
        The bootstrap fields of the signature, once a confidence interval
        has been estimated.
    """

    name: ClassVar[str]
    #: The metric's key in :data:`fastbleu.metrics.METRICS` (``get_metric(key, **options())``).
    key: ClassVar[str]
    formula: Formula
    #: The tokenizer of a metric whose tokenizer a table's tokenizer column may replace
    #: (BLEU); ``None`` for one without that choice (chrF reads characters, TER always
    #: uses Tercom's): such a column is then refused.
    tokenizer = None
    #: The signature's ``tok`` field of the last input (BLEU: ``"ids"`` after token ids, its
    #: tokenizer's after text), recorded as ``num_refs`` is; None if the metric has none.
    input_tokenizer_signature: str | None = None
    #: The most references a segment may have (None: no limit).
    max_references: int | None = None
    #: Up to this many references per segment, a segment's statistics do not depend on the
    #: numbers of references of the other segments (None: they never do).  Beyond it (TER:
    #: its mean reference length is scaled by a multiple of every count present) a table
    #: counts its rows' references first and scores with :meth:`options_for_counts`.
    counted_beyond: ClassVar[int | None] = None
    #: Whether a segment's statistics depend on the references of the whole corpus (NIST's
    #: information weights): the corpus is then one batch, and tables, Dask and
    #: accumulators count :meth:`reference_counts` over the corpus first.
    corpus_pass: ClassVar[bool] = False
    #: Segments per batch of :meth:`statistics_batches` (None: the kernels' default,
    #: 16,384).  A metric whose segments cost far more (TER's edit distances) takes
    #: fewer, so that a many-core pool gets many jobs and no thread is left with most
    #: of the work.
    batch_segments: ClassVar[int | None] = None
    #: How a segment's cost grows with its text (:mod:`fastbleu.metrics.cuts`):
    #: ``"linear"`` (tokenizing and counting) or ``"alignment"`` (an edit distance with
    #: shifts, TER); the pipeline cuts batches of about equal cost by it.
    batch_cost: ClassVar[str] = "linear"
    #: ``num_refs`` as recorded: an int, or a count still on the device (token ids with a
    #: reference mask there, :class:`fastbleu.gpu.statistics.PendingNumRefs`), which
    #: :attr:`num_refs` reads back the first time it is asked for.
    _num_refs = None
    n_bootstrap: int | None = None
    seed: str | None = None

    #: References per segment once seen (``-1`` when it varies): a plain int.
    num_refs = ResolvedCount()
    #: References given to the constructor, converted once (``None``: none cached).
    _ref_cache = None

    @abstractmethod
    def options(self) -> dict:
        """The constructor arguments that rebuild this metric, cached references aside.

        ``get_metric(self.key, **self.options())`` is an equal metric; Dask
        workers and table jobs rebuild metrics this way.
        """

    def options_for_counts(self, counts) -> dict:
        """The options that give the rows of an input whose segments have these numbers of
        references (ints) one layout: :meth:`options`, unless :attr:`counted_beyond` is
        set (TER: with the scale those counts need)."""
        return self.options()

    # -- the hooks a metric supplies ---------------------------------------------------

    @abstractmethod
    def column_statistics(self, hypotheses: TextColumn, references, *,
                          tokenizer=None,
                          buffers: BufferPairs | tuple[HashBuffer, HashBuffer] | None = None
                          ) -> np.ndarray:
        """The batch hook: statistics rows of already-converted text columns.

        The one place a metric tokenizes and runs its kernel.  Tables and
        Dask call it on their record batches, and :meth:`statistics_batches`
        on the batches of every other input.

        Parameters
        ----------
        hypotheses : TextColumn
        references : list of TextColumn, or the metric's cached references
            As long as ``hypotheses``; the caller has checked them.
        tokenizer : str, optional
            A tokenizer name for these rows instead of the metric's own.
        buffers : BufferPairs or (HashBuffer, HashBuffer), optional
            Hash scratch to reuse across calls: one pair, or pairs to borrow
            from (:class:`~fastbleu.statistics.tokens.BufferPairs`; a table job
            shares one among the record batches it scores side by side).

        Returns
        -------
        numpy.ndarray
            int64, shape ``(len(hypotheses), formula.row_width)``.
        """

    def _check_references(self, streams) -> int:
        """The references' ``num_refs`` (sacrebleu's: per segment, ``-1`` when it varies),
        after :attr:`max_references`."""
        from ..statistics.tokens import check_references, reference_presence

        present = reference_presence(streams)
        limit = self.max_references
        if limit is not None and present.sum(axis=0).max(initial=0) > limit:
            raise ValueError(f"{self._limit_subject()} takes at most {limit} references per "
                             "segment")
        return check_references(present)

    def _limit_subject(self) -> str:
        """What :attr:`max_references` is the limit of, as its message names it (the metric,
        or the option that sets the limit)."""
        return self.name

    def _convert(self, hypotheses, references):
        """The whole input converted and checked: ``(hyps, refs)`` for :meth:`_rows`.

        Records ``num_refs`` (and a metric's other facts of its input).  Text
        by default (BLEU also takes token ids); ``references=None`` takes the
        cached references.
        """
        from ..inputs.references import text_inputs

        hyps, refs, num_refs = text_inputs(hypotheses, references, self._check_references,
                                           self._ref_cache)
        if num_refs is not None:
            self.num_refs = num_refs
        return hyps, refs

    def _list_batches(self, hypotheses, references, threads: int):
        """Python lists converted a batch at a time (``None`` for other inputs, or one batch)."""
        from ..inputs.references import list_batches
        from ..statistics.tokens import KERNEL_BATCH_SIZE
        from .cuts import list_bounds

        size = self.batch_segments or KERNEL_BATCH_SIZE
        return list_batches(hypotheses, references, size, self._check_references,
                            lambda: self._convert(hypotheses, references), self._seen_num_refs,
                            threads,
                            list_bounds(self.batch_cost, hypotheses, references, size, threads))

    def _seen_num_refs(self, num_refs: int) -> None:
        self.num_refs = num_refs

    def _for_input(self, hypotheses, references):
        """``(metric, hypotheses, references)``: the metric that scores this input, and the
        input.  This one by default; a metric whose statistics depend on a fact of the
        whole input (TER's scale of the mean reference length) returns a copy fixed for
        it, whose facts :meth:`_adopt` then records here."""
        return self, hypotheses, references

    def _adopt(self, metric: Metric) -> None:
        """Record what ``metric`` (a copy from :meth:`_for_input`) learnt of its input."""
        self.num_refs, self.n_bootstrap, self.seed = metric.num_refs, metric.n_bootstrap, \
            metric.seed

    def _inspect(self, hypotheses, n: int, tally: Tally) -> None:
        """Look at a converted batch of hypotheses (of ``n`` in all) before it is scored, on
        the batch's pool thread; ``tally`` adds up counts over the batches of one input.
        BLEU warns here of tokenized text, as sacrebleu does."""

    def _device_rows(self, hypotheses, references):
        """Rows left on the GPU for an input already there (BLEU's token ids as CUDA arrays:
        :mod:`fastbleu.gpu`), or None for any other input."""
        return None

    def _summed(self, hypotheses, references) -> tuple[np.ndarray, int]:
        """The column sums of the input's rows (int64, on the host) and its segments."""
        device = self._device_rows(hypotheses, references)
        if device is not None:  # summed on the device; one row (and its check) comes back
            from ..gpu.scores import summed_row

            return summed_row(device), int(device.shape[0])
        total = np.zeros(self.formula.row_width, dtype=np.int64)
        n = 0
        for summed, count in self._batch_results(hypotheses, references, _sum_and_count):
            total += summed
            n += count
        return total, n

    def _rows(self, hypotheses, references, first: int, last: int, buffers) -> np.ndarray:
        """The rows of segments ``first:last`` of a converted input (:meth:`_convert`)."""
        refs = [stream.slice(first, last) for stream in references] \
            if isinstance(references, list) else references.slice(first, last)
        return self.column_statistics(hypotheses.slice(first, last), refs, buffers=buffers)

    # -- the corpus pass (NIST) ----------------------------------------------------------

    def reference_counts(self, references, tokenizer=None):
        """The summable reference counts of a piece of a corpus, for :meth:`with_weights`.

        Only metrics with a :attr:`corpus_pass` have them.

        Raises
        ------
        TypeError
            For a metric without a corpus pass.
        """
        raise TypeError(f"{self.name} has no corpus pass (corpus_pass is False)")

    def with_weights(self, weights) -> Metric:
        """A copy that scores with the corpus weights of ``weights`` (the sum of the pieces'
        :meth:`reference_counts`); only metrics with a :attr:`corpus_pass`."""
        raise TypeError(f"{self.name} has no corpus pass (corpus_pass is False)")

    def with_row_weights(self, parts) -> Metric:
        """A copy for one batch of a table whose rows have their groups' weights: ``parts``
        pairs rows (None: all) with fixed weights; only metrics with a :attr:`corpus_pass`."""
        raise TypeError(f"{self.name} has no corpus pass (corpus_pass is False)")

    # -- the batch pipeline, one for every metric ---------------------------------------

    def statistics_batches(self, hypotheses, references=None) -> Iterator[np.ndarray]:
        """The statistics rows of the input, a batch at a time, in order.

        Python lists of text are converted a batch at a time while the pool's
        threads count the batches before (conversion needs the GIL); other
        inputs are converted at once.  Batches are cut where the input's
        estimated cost (:attr:`batch_cost`, :mod:`fastbleu.metrics.cuts`)
        crosses equal shares, so that long segments sitting together do not
        give one thread most of the work (a list is measured only for TER's
        cost, whose segments differ most; otherwise its batches have even sizes).
        Each batch runs whole on one thread of the pool (one hand-over per
        batch); an input of one batch runs here, without starting numba's
        threads.  A metric with a :attr:`corpus_pass` scores its input as one
        batch (its weights are those of the whole input).

        Parameters
        ----------
        hypotheses, references
            As for :meth:`corpus_score`.

        Yields
        ------
        numpy.ndarray
            int64 rows of consecutive segments.
        """
        metric, hypotheses, references = self._for_input(hypotheses, references)
        if metric is not self:
            return self._adopting(metric, metric.statistics_batches(hypotheses, references))
        return self._batch_results(hypotheses, references)

    def _adopting(self, metric: Metric, batches: Iterator) -> Iterator:
        yield from batches
        self._adopt(metric)

    def _batch_results(self, hypotheses, references, reduce=None) -> Iterator:
        """:meth:`statistics_batches`, each batch's rows first passed through ``reduce`` on
        the batch's own pool thread (the corpus sum of a batch: the calling thread then
        only adds one row a batch)."""
        from ..statistics.tokens import KERNEL_BATCH_SIZE, BufferPairs

        pairs = BufferPairs()
        threads = 1
        size = self.batch_segments or KERNEL_BATCH_SIZE
        large = isinstance(hypotheses, list) and len(hypotheses) > size
        if large and not self.corpus_pass:
            from .._kernels.threads import pool_size  # imports numba: large inputs use it

            threads = pool_size()
            batches = self._list_batches(hypotheses, references, threads)
            if batches is not None:
                tally = Tally()
                yield from self._pooled(pairs, ((hyps, refs, tally, len(hypotheses))
                                                for hyps, refs in batches), reduce)
                return
        hyps, refs = self._convert(hypotheses, references)
        n = len(hyps)
        tally = Tally()
        if n <= size or self.corpus_pass:
            self._inspect(hyps, n, tally)
            if n:
                rows = pairs.lend(self._rows)(hyps, refs, 0, n)
                yield rows if reduce is None else reduce(rows)
            return
        from .._kernels.threads import ordered_map, pool_size
        from ..inputs.text import TextColumn
        from .cuts import text_plan

        text = isinstance(hyps, TextColumn)
        # batches of about equal cost (token ids: of equal counts), the costliest first
        threads = pool_size()
        bounds, early = text_plan(self.batch_cost if text else None, hyps, refs, size, threads)

        def rows(k: int, pair) -> np.ndarray:
            # the batch's own look at its hypotheses, on its pool thread (not serial here)
            first, last = bounds[k], bounds[k + 1]
            if text:  # token ids have nothing to look at
                self._inspect(hyps.slice(first, last), n, tally)
            found = self._rows(hyps, refs, first, last, pair)
            return found if reduce is None else reduce(found)

        # twice the threads + 1 batches handed out (one thread: the default), so that a batch
        # longer than its estimate does not keep the next ones from the free threads: the
        # input is in memory already, and what they hold is rows or sums
        window = 2 * threads + 1 if threads > 1 else None
        yield from ordered_map(pairs.lend(rows), range(len(bounds) - 1), window, early=early)

    def _pooled(self, pairs, batches, reduce=None) -> Iterator:
        from .._kernels.threads import ordered_map

        def rows(batch, pair):
            hyps, refs, tally, n = batch
            self._inspect(hyps, n, tally)
            found = self.column_statistics(hyps, refs, buffers=pair)
            return found if reduce is None else reduce(found)

        yield from ordered_map(pairs.lend(rows), batches, self._window())

    def _window(self) -> int | None:
        """Batches handed to the pool before the oldest one's rows are taken: the default
        (threads + 1), or twice the threads + 1 where batch costs are estimates of very
        uneven work (TER): there one batch longer than its estimate at the head of the
        window would keep the next ones from the free threads (a replay of 16 threads,
        ``benchmarks/bench_cuts.py``: 12.1 against 14.7 times one thread on WMT22).  For
        Python lists, whose batches are converted ahead on the calling thread: text columns
        hand out twice the threads + 1 for every metric (:meth:`_batch_results`)."""
        from .cuts import ALIGNMENT

        if self.batch_cost != ALIGNMENT:
            return None
        from .._kernels.threads import pool_size

        threads = pool_size()
        return 2 * threads + 1 if threads > 1 else None  # one thread: nothing to balance

    def segment_statistics(self, hypotheses, references=None) -> np.ndarray:
        """Statistics rows, one per segment.

        Parameters
        ----------
        hypotheses : sequence of str or a string column
            One hypothesis per segment (BLEU also takes token ids,
            :class:`fastbleu.TokenIds`).
        references : list of sequences of str, optional
            Reference streams, each as long as ``hypotheses``; ``None``
            entries are missing references.  Defaults to the cached ones.

        Returns
        -------
        numpy.ndarray
            int64, shape ``(n_segments, formula.row_width)``, columns named by
            ``formula.statistics_names`` (in sacrebleu's order, so that a row
            means the same in both tools).
        """
        metric, hypotheses, references = self._for_input(hypotheses, references)
        if metric is not self:
            rows = metric.segment_statistics(hypotheses, references)
            self._adopt(metric)
            return rows
        device = self._device_rows(hypotheses, references)
        if device is not None:  # on the GPU, left there (an array of the input's library)
            return device
        batches = self.statistics_batches(hypotheses, references)
        width = self.formula.row_width
        if isinstance(hypotheses, list):  # rows straight into the result, not concatenated
            out = np.empty((len(hypotheses), width), dtype=np.int64)
            first = 0
            for rows in batches:
                out[first:first + len(rows)] = rows
                first += len(rows)
            return out
        rows = list(batches)
        if len(rows) == 1:
            return rows[0]
        return np.concatenate(rows) if rows else np.zeros((0, width), dtype=np.int64)

    def corpus_score(self, hypotheses, references, n_bootstrap: int = 1) -> Score:
        """The corpus score: the formula of the summed statistics rows.

        Parameters
        ----------
        hypotheses : sequence of str or a string column (BLEU: or token ids)
        references : list of sequences of str, or None
            Reference streams (``None`` entries are missing references), or
            ``None`` for the cached ones.
        n_bootstrap : int
            With more than 1, also estimate the score's mean and 95 % confidence
            interval from this many bootstrap resamples, as sacrebleu does (its
            draws and seed, ``$SACREBLEU_SEED``); the score prints them and the
            signature gains ``bs`` and ``seed``.  Resampled sums are exact (int64);
            :func:`fastbleu.significance.score_with_confidence` offers sacrebleu's
            float32 sums.  A metric with a corpus pass keeps the weights of the
            whole input fixed.

        Returns
        -------
        Score
            The metric's score object (``BLEUScore``, ``CHRFScore``, ...).
        """
        metric, hypotheses, references = self._for_input(hypotheses, references)
        if metric is not self:
            score = metric.corpus_score(hypotheses, references, n_bootstrap)
            self._adopt(metric)
            return score
        if check_bootstrap(n_bootstrap) > 1:
            return self._score_with_confidence(hypotheses, references, n_bootstrap)
        return self.formula.score(self._summed(hypotheses, references)[0], check=False)

    def _score_with_confidence(self, hypotheses, references, n_bootstrap: int) -> Score:
        """The corpus score with sacrebleu's bootstrap mean and 95 % interval (Koehn, 2004).

        ``n_bootstrap`` resamples of the segments, with sacrebleu's draws and
        seed (``$SACREBLEU_SEED``); sums are exact (int64).  Records
        ``n_bootstrap`` and ``seed``, so the signature gains ``bs`` and ``seed``.
        """
        from ..significance import resampling

        n_samples = resampling.check_count(n_bootstrap, "n_bootstrap")
        resampling.resolve_seed()  # a bad $SACREBLEU_SEED before the statistics
        stats = self.segment_statistics(hypotheses, references)
        if not stats.shape[0]:
            raise ValueError("no segments: resampling needs at least one")
        formula = self.formula
        score = formula.score(stats.sum(axis=0), check=False)
        mean, ci, self.seed = resampling.confidence(stats, formula, n_samples)
        score.set_confidence(mean, ci)
        self.n_bootstrap = n_samples
        return score

    def sentence_scores(self, hypotheses, references=None) -> np.ndarray:
        """The sentence score of every segment, vectorized: the formula of each row of
        :meth:`segment_statistics`.

        Element ``i`` equals ``sentence_score(hypotheses[i], [refs[i] for refs
        in references]).score`` with the same options (NIST: with the weights
        of all ``references``, as mteval's segment scores, not of segment
        ``i``'s alone).

        Returns
        -------
        numpy.ndarray
            float64, one score per segment (for token ids on a GPU, a device
            array of the input's library: :mod:`fastbleu.gpu`).
        """
        metric, hypotheses, references = self._for_input(hypotheses, references)
        if metric is not self:
            scores = metric.sentence_scores(hypotheses, references)
            self._adopt(metric)
            return scores
        device = self._device_rows(hypotheses, references)
        if device is not None:  # scored on the GPU, left there
            from ..gpu.scores import sentence_scores

            return sentence_scores(device, self.formula)
        return self.formula.scores(self.segment_statistics(hypotheses, references), check=False)

    def sentence_score(self, hypothesis: str, references) -> Score:
        """The score of one hypothesis against its references (``None`` = missing)."""
        from ..inputs.references import sentence_streams

        hyps, streams = sentence_streams(hypothesis, references)
        metric, hyps, streams = self._for_input(hyps, streams)
        score = metric.formula.score(metric.segment_statistics(hyps, streams)[0], check=False)
        if metric is not self:
            self._adopt(metric)
        return score

    def accumulator(self):
        """A new, empty :class:`~fastbleu.metrics.accumulator.Accumulator` of this metric.

        ``acc.update(hyps, refs)`` adds segments, ``acc.merge(other)`` adds
        another accumulator's (from another process: accumulators pickle),
        and ``acc.score()`` equals :meth:`corpus_score` of all of it
        concatenated.  A metric with a corpus pass keeps its updates' tokens
        and weighs them when scored.
        """
        from .accumulator import Accumulator

        return Accumulator(self)

    @abstractmethod
    def signature(self, num_refs: int, tokenizer_signature: str | None = None) -> Signature:
        """The signature for ``num_refs`` references per segment (``-1``: varies)."""

    def get_signature(self) -> Signature:
        """The signature of this configuration, once references have been seen."""
        if self.num_refs is None:
            raise ValueError("Number of references unknown, please evaluate the metric first.")
        return self.signature(self.num_refs)
