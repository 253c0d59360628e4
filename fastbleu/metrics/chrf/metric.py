"""``fastbleu.CHRF``: a vectorized drop-in for ``sacrebleu.metrics.CHRF``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..._kernels.chrf.statistics import chrf_statistics
from ...statistics.tokens import BATCH_SIZE, check_references, reference_presence
from ...inputs.text import TextColumn, lowercase as lowercase_column
from ..base import Metric
from .formula import CHRFFormula
from .score import CHRFSignature
from ...inputs.references import reference_streams


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
    #: Segments a pool job scores: chrF costs about 6 us a segment on one core (no
    #: ahead-of-time kernels that want large batches), so batches of 4,096 keep every
    #: thread of a many-core pool busy to the end.
    batch_segments = 4096
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
        self._ref_cache: PreparedStreams | None = None
        if references is not None:
            streams = reference_streams(references, None)
            self.num_refs = check_references(reference_presence(streams))
            self._ref_cache = PreparedStreams([self._prepared(stream) for stream in streams])

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

    def column_statistics(self, hypotheses: TextColumn, references, *, tokenizer=None,
                          buffers=None) -> np.ndarray:
        """The batch hook: statistics of already-converted text columns.

        No conversion or checks beyond a reference per segment: the caller
        has made the columns and checked their lengths.  ``tokenizer`` and
        ``buffers`` are BLEU's and ignored (chrF reads characters).

        Returns
        -------
        numpy.ndarray
            int64, shape ``(len(hypotheses), formula.row_width)``: ``[hyp, ref,
            match]`` per order, character orders first, as sacrebleu's
            ``_extract_corpus_statistics`` returns them.
        """
        prepared = isinstance(references, PreparedStreams)
        streams = references.streams if prepared else list(references)
        if not prepared:
            check_references(reference_presence(streams))
        formula = self.formula
        orders, factor, one_plus_factor, eps_smoothing = formula.kernel_args
        n = len(hypotheses)
        out = np.empty((n, formula.row_width), dtype=np.int64)
        for first in range(0, n, BATCH_SIZE):  # scratch bounded by BATCH_SIZE segments
            last = min(n, first + BATCH_SIZE)
            hyp = self._prepared(hypotheses.slice(first, last))
            refs = [stream.slice(first, last) for stream in streams]
            if not prepared:
                refs = [self._prepared(stream) for stream in refs]
            ref_data, ref_start, ref_end = _stacked(refs)
            rows = out[first:last]
            futures = chrf_statistics(hyp.data, hyp.offsets[:-1], hyp.offsets[1:], ref_data,
                                      ref_start, ref_end, formula.char_order,
                                      formula.word_order, self.whitespace, factor,
                                      one_plus_factor, eps_smoothing, rows)
            for future in futures:  # the kernels' inputs stay alive until they are done
                future.result()
        return out

    def signature(self, num_refs: int, tokenizer_signature: str | None = None) -> CHRFSignature:
        """The signature for ``num_refs`` references per segment (``-1``: varies);
        ``tokenizer_signature`` is BLEU's and ignored."""
        return CHRFSignature(num_refs, self.lowercase, self.eps_smoothing, self.char_order,
                             self.word_order, self.whitespace, self.n_bootstrap, self.seed)

class PreparedStreams:
    """chrF's cached reference streams, lowercased once when the metric was made."""

    def __init__(self, streams: list[TextColumn]):
        self.streams = streams

    def __len__(self) -> int:
        return len(self.streams[0])

    def slice(self, first: int, last: int) -> PreparedStreams:
        return PreparedStreams([stream.slice(first, last) for stream in self.streams])


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
