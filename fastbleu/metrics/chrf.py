"""``fastbleu.CHRF``: a vectorized drop-in for ``sacrebleu.metrics.CHRF``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .._kernels.chrf import chrf_statistics
from ..statistics import BATCH_SIZE, check_references, reference_presence
from ..text import TextColumn, lowercase as lowercase_column
from .base import Metric, check_bootstrap
from .chrf_formula import CHRFFormula
from .chrf_score import CHRFScore, CHRFSignature
from .inputs import list_batches, reference_streams, sentence_streams, text_inputs


class CHRF(Metric):
    """Corpus and sentence chrF (Popović, 2015) and chrF++ (Popović, 2017), as sacrebleu
    computes them (Post, 2018).

    The constructor takes sacrebleu's arguments with sacrebleu's defaults,
    and for the same options every number equals sacrebleu 2.6's: the
    statistics of each segment are those of the reference with the best
    sentence chrF (the first on ties), and the corpus score is the chrF of
    the summed statistics.

    Parameters
    ----------
    char_order : int
        Character n-gram orders (default 6).
    word_order : int
        Word n-gram orders (default 0); 2 is chrF++.  Words are split on
        whitespace, with one ASCII punctuation character split off the end
        (or else the start) of each word longer than one character.
    beta : int or float
        Weight of recall against precision (default 2): the F-beta score.
    lowercase : bool
        Lowercase hypotheses and references (Python's ``str.lower()``).
    whitespace : bool
        Keep whitespace characters in character n-grams (default: removed).
    eps_smoothing : bool
        chrF++.py's epsilon smoothing (also NLTK's and Moses'): the mean of
        the per-order F-scores.  By default, sacrebleu's effective order:
        the F-score of precision and recall averaged over the orders both
        sides have.
    references : list of sequences of str, optional
        Reference streams to keep for every ``corpus_score(hyps, None)`` call.
    """

    name = "chrF"
    key = "chrf"
    CHAR_ORDER = 6
    WORD_ORDER = 0
    BETA = 2
    spm_model = None

    def __init__(self, char_order: int = CHAR_ORDER, word_order: int = WORD_ORDER,
                 beta: int = BETA, lowercase: bool = False, whitespace: bool = False,
                 eps_smoothing: bool = False,
                 references: Sequence[Sequence[str]] | None = None):
        formula = CHRFFormula(char_order, word_order, beta, eps_smoothing)  # checks them
        self.char_order = formula.char_order
        self.word_order = formula.word_order
        self.beta = formula.beta
        self.order = formula.orders
        self.lowercase = bool(lowercase)
        self.whitespace = bool(whitespace)
        self.eps_smoothing = formula.eps_smoothing
        self._formula, self._formula_key = formula, self._formula_options()
        self.num_refs: int | None = None
        self.n_bootstrap = None
        self.seed = None
        self._ref_cache: list[TextColumn] | None = None
        if references is not None:
            streams = reference_streams(references, None)
            self.num_refs = check_references(reference_presence(streams))
            self._ref_cache = [self._prepared(stream) for stream in streams]

    def options(self) -> dict:
        """The constructor arguments that rebuild this metric (its cached references aside)."""
        return {"char_order": self.char_order, "word_order": self.word_order,
                "beta": self.beta, "lowercase": self.lowercase, "whitespace": self.whitespace,
                "eps_smoothing": self.eps_smoothing}

    @property
    def formula(self) -> CHRFFormula:
        """The :class:`~fastbleu.metrics.chrf_formula.CHRFFormula` of this configuration
        (rebuilt if ``char_order``, ``word_order``, ``beta`` or ``eps_smoothing`` has been
        assigned since)."""
        key = self._formula_options()
        if self._formula_key != key:
            self._formula = CHRFFormula(*key)
            self._formula_key = key
            self.order = self._formula.orders
        return self._formula

    def _formula_options(self) -> tuple:
        return (self.char_order, self.word_order, self.beta, self.eps_smoothing)

    # -- statistics --------------------------------------------------------------------

    def _prepared(self, column: TextColumn) -> TextColumn:
        return lowercase_column(column) if self.lowercase else column

    def _prepare(self, hypotheses, references):
        hyps, refs = text_inputs(self, hypotheses, references,
                                 lambda streams: check_references(reference_presence(streams)),
                                 cached_length=lambda cache: len(cache[0]))
        return hyps, refs, references is None

    def segment_statistics(self, hypotheses, references=None) -> np.ndarray:
        """Per-segment chrF statistics.

        Parameters
        ----------
        hypotheses : sequence of str or a string column
            One hypothesis per segment.
        references : list of sequences of str, optional
            Reference streams, each as long as ``hypotheses``; ``None``
            entries are missing references (every segment needs one).
            Defaults to the cached ones.

        Returns
        -------
        numpy.ndarray
            int64, shape ``(n_segments, 3 * (char_order + word_order))``:
            ``[hyp, ref, match]`` per order, character orders first, as
            sacrebleu's ``_extract_corpus_statistics`` returns them.
        """
        return self._statistics(*self._text_batches(hypotheses, references))

    def column_statistics(self, hypotheses: TextColumn, references, *, tokenizer=None,
                          buffers=None) -> np.ndarray:
        """Statistics of already-converted text columns: the fast path of tables and Dask.

        No conversion or checks beyond a reference per segment: the caller
        has made the columns and checked their lengths.  ``tokenizer`` and
        ``buffers`` are BLEU's and ignored (chrF reads characters).

        Returns
        -------
        numpy.ndarray
            int64, shape ``(len(hypotheses), formula.row_width)``.
        """
        check_references(reference_presence(references))
        return self._statistics(_sliced(hypotheses, references, False), len(hypotheses))

    def _text_batches(self, hypotheses, references):
        """The input a batch of text at a time (Python lists converted batch by batch, see
        :meth:`_list_batches`; anything else converted and checked at once), and its
        number of segments."""
        batches = self._list_batches(hypotheses, references)
        if batches is not None:
            return batches, len(hypotheses)
        hyps, refs, prepared = self._prepare(hypotheses, references)
        return _sliced(hyps, refs, prepared), len(hyps)

    def _statistics(self, text_batches, n: int) -> np.ndarray:
        """All ``n`` rows of the statistics of ``text_batches``, in one array."""
        out = np.empty((n, self.formula.row_width), dtype=np.int64)
        for _ in self._batches(text_batches, out):
            pass
        return out

    def _batches(self, text_batches, out=None):
        """Compute the statistics of each batch of ``text_batches`` and yield its rows.

        Rows are views of ``out`` (all rows) if given, else of two batch-sized
        buffers used in turn, so that scratch is bounded by a batch.  A
        batch's kernels run on the thread pool while the next batch is
        converted (Python lists become text a batch at a time, see
        :meth:`_list_batches`); its rows are yielded once they are done.
        """
        formula = self.formula
        orders, factor, one_plus_factor, eps_smoothing = formula.kernel_args
        buffers = []
        first = 0
        pending = None
        for hyp, streams, prepared in text_batches:
            size = len(hyp)
            hyp = self._prepared(hyp)
            if not prepared:
                streams = [self._prepared(stream) for stream in streams]
            ref_data, ref_start, ref_end = _stacked(streams)
            if out is not None:
                rows = out[first:first + size]
            else:  # the first batch is the largest; the kernels of one run while the
                # caller reads the rows of the other
                if not buffers:
                    buffers = [np.empty((size, formula.row_width), dtype=np.int64)
                               for _ in range(2)]
                rows = buffers[0][:size]
                buffers.reverse()
            futures = chrf_statistics(hyp.data, hyp.offsets[:-1], hyp.offsets[1:], ref_data,
                                      ref_start, ref_end, formula.char_order,
                                      formula.word_order, self.whitespace, factor,
                                      one_plus_factor, eps_smoothing, rows)
            first += size
            if pending is not None:
                yield _finished(*pending)
            pending = (futures, rows, hyp, ref_data)  # the kernels' inputs stay alive
        if pending is not None:
            yield _finished(*pending)

    def _list_batches(self, hypotheses, references):
        """Python lists of segments converted a batch at a time (``None`` if the inputs are
        not such lists); sets ``num_refs`` once every batch has been read.

        A batch that cannot be converted sends the whole input through
        :meth:`_prepare`, so that an error names the segment as it would
        without batches.
        """
        batches = list_batches(hypotheses, references, BATCH_SIZE,
                               lambda streams: check_references(reference_presence(streams)),
                               lambda: self._prepare(hypotheses, references),
                               lambda num_refs: setattr(self, "num_refs", num_refs))
        return None if batches is None else ((hyps, streams, False) for hyps, streams in batches)

    def signature(self, num_refs: int, tokenizer_signature: str | None = None) -> CHRFSignature:
        """The signature for ``num_refs`` references per segment (``-1``: varies);
        ``tokenizer_signature`` is BLEU's and ignored."""
        return CHRFSignature(num_refs, self.lowercase, self.eps_smoothing, self.char_order,
                             self.word_order, self.whitespace, self.n_bootstrap, self.seed)

    # -- scores ------------------------------------------------------------------------

    def corpus_score(self, hypotheses, references, n_bootstrap: int = 1) -> CHRFScore:
        """Corpus chrF: the statistics of all segments summed, then scored.

        Parameters
        ----------
        hypotheses : sequence of str or a string column
        references : list of sequences of str, or None
            Reference streams (``None`` entries are missing references), or
            ``None`` for the cached ones.
        n_bootstrap : int
            With more than 1, also estimate the mean and 95 % confidence
            interval from this many bootstrap resamples, as sacrebleu does
            (:func:`~fastbleu.metrics.confidence.score_with_confidence`).

        Returns
        -------
        CHRFScore
        """
        if check_bootstrap(n_bootstrap) > 1:
            from .confidence import score_with_confidence

            return score_with_confidence(self, hypotheses, references, n_bootstrap)
        text_batches, _ = self._text_batches(hypotheses, references)
        formula = self.formula
        total = np.zeros(formula.row_width, dtype=np.int64)
        for rows in self._batches(text_batches):  # a batch's rows at a time
            total += rows.sum(axis=0)
        return formula.score(total, check=False)

    def sentence_score(self, hypothesis: str, references: Sequence[str | None]) -> CHRFScore:
        """chrF of one hypothesis against its references (``None`` = missing)."""
        hyps, streams = sentence_streams(hypothesis, references)
        stats = self.segment_statistics(hyps, streams)
        return self.formula.score(stats[0], check=False)



def _sliced(hyps: TextColumn, refs: list[TextColumn], prepared: bool):
    """Converted columns, a batch of segments at a time: ``(hyps, refs, prepared)`` each."""
    for first in range(0, len(hyps), BATCH_SIZE):
        last = min(len(hyps), first + BATCH_SIZE)
        yield hyps.slice(first, last), [stream.slice(first, last) for stream in refs], prepared


def _finished(futures, rows, *inputs) -> np.ndarray:
    """``rows`` once the kernels writing them are done."""
    for future in futures:
        future.result()
    return rows


def _stacked(streams: list[TextColumn]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """One byte buffer and ``(n_refs, n)`` start/end arrays for the kernel (start -1: missing).

    A single stream is used in place; several are copied into one buffer,
    only the bytes of these segments.
    """
    if len(streams) == 1:
        stream = streams[0]
        data, start, end = stream.data, stream.offsets[:-1], stream.offsets[1:]
        if stream.valid is not None:
            start = np.where(stream.valid, start, -1)
        return data, start.reshape(1, -1), end.reshape(1, -1)
    parts, starts, ends = [], [], []
    base = 0
    for stream in streams:
        low, high = int(stream.offsets[0]), int(stream.offsets[-1])
        parts.append(stream.data[low:high])
        start = stream.offsets[:-1] - (low - base)
        if stream.valid is not None:
            start = np.where(stream.valid, start, -1)
        starts.append(start)
        ends.append(stream.offsets[1:] - (low - base))
        base += high - low
    return np.concatenate(parts), np.stack(starts), np.stack(ends)
