"""``fastbleu.TER``: a vectorized drop-in for ``sacrebleu.metrics.TER``."""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence

import numpy as np

from ..._kernels.ter.shifts import ter_statistics
from ...errors import SegmentError
from ...statistics.tokens import (BATCH_SIZE, BufferPairs, References, reference_presence,
                                  tokenize)
from ...inputs.text import TextColumn
from ...tokenizers.tercom import tercom_tokenizer
from ..base import Metric
from ...inputs.references import reference_streams, text_inputs
from .formula import TERFormula
from .scale import AVERAGE_SCALE, check_scale, counts_present, scale_fits, scale_for_counts
from .score import TERSignature

#: Up to this many references per segment every count divides ``AVERAGE_SCALE``.
_AVERAGED = 16

#: The largest edit-distance matrix of one hypothesis and one reference, in cells
#: ((words + 1) * (words + 1)): 9 bytes a cell, so about 600 MB.
MAX_MATRIX_CELLS = 1 << 26


class TER(Metric):
    """Corpus and sentence translation edit rate (Snover et al., 2006), as sacrebleu
    computes it (Post, 2018).

    The constructor takes sacrebleu's arguments with sacrebleu's defaults,
    and for the same options every number equals sacrebleu 2.6's: its
    Tercom-style tokenization, its shift search with all its limits and
    tie-breaks, and its references (the fewest edits of any reference, over
    the mean reference length).  Lower is better.

    Parameters
    ----------
    normalized : bool
        Tercom's normalization: XML entities unescaped, ASCII punctuation
        split off, possessives and periods/commas not in numbers split.
    no_punct : bool
        Remove ``.,?:;!"()`` (and, with ``asian_support``, CJK and full-width
        punctuation).
    asian_support : bool
        With ``normalized``, split CJK ideographs into characters (and more);
        with ``no_punct``, remove CJK punctuation.  Alone it changes nothing.
    case_sensitive : bool
        Compare words as written; by default everything is lowercased
        (Python's ``str.lower()``).
    references : list of sequences of str, optional
        Reference streams to tokenize once and keep for every
        ``corpus_score(hyps, None)`` call.
    reference_scale : int, optional
        The statistics keep each segment's mean reference length exactly, as
        an integer times this scale (``ref_length_scaled``), which must be a
        multiple of every segment's number of references.  By default
        (``None``) each input gets its own: 720720 (the least common
        multiple of 1 to 16) where every segment's count divides it, else
        the least common multiple of the counts present (17 for 17
        references everywhere); :attr:`formula` then scores the rows of the
        last input.  A fixed scale makes the rows of every input add up
        directly; a segment whose count does not divide it is refused.
        sacrebleu has no such option: it only changes how the statistics
        are stored, never a score.

    Any number of references per segment is scored, as sacrebleu scores
    them; only counts whose least common multiple is beyond 2**32 (many
    different large counts, :mod:`fastbleu.metrics.ter.scale`) are refused.
    """

    name = "TER"
    key = "ter"
    #: Beyond 16 references per segment the scale of the rows depends on the counts present.
    counted_beyond = _AVERAGED

    #: Segments per batch of the pipeline: an edit distance costs some hundred times a
    #: BLEU count, so batches of 1,024 (about 50 ms on one core) keep every thread
    #: of a many-core pool busy to the end instead of 16,384 (seconds each, and long
    #: segments sitting together in one of them).
    batch_segments = 1024
    batch_cost = "alignment"  # batches cut by (hyp x ref length) ** 1.5 (metrics/cuts.py)

    def __init__(self, normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False, case_sensitive: bool = False,
                 references: Sequence[Sequence[str]] | None = None, *,
                 reference_scale: int | None = None):
        self.normalized = bool(normalized)
        self.no_punct = bool(no_punct)
        self.asian_support = bool(asian_support)
        self.case_sensitive = bool(case_sensitive)
        self._tokenizer = tercom_tokenizer(self.normalized, self.no_punct, self.asian_support)
        # sacrebleu tokenizes references twice (see tercom_tokenizer)
        self._ref_tokenizer = tercom_tokenizer(self.normalized, self.no_punct,
                                               self.asian_support, passes=2)
        self.tokenizer_signature = self._tokenizer.signature
        self.reference_scale = None if reference_scale is None else check_scale(reference_scale)
        #: Whether this object's scale is fixed (an option, or a copy for one input).
        self._pinned = self.reference_scale is not None
        self._formula = TERFormula(self.reference_scale or AVERAGE_SCALE)
        self._cache_scale = self._formula.scale
        self.num_refs: int | None = None
        self.n_bootstrap = None
        self.seed = None
        self._ref_cache: References | None = None
        if references is not None:
            streams = reference_streams(references, None)
            self.num_refs = self._check_references(streams)
            present = reference_presence(streams)
            if self._pinned:
                _check_fit(self._formula.scale, present.sum(axis=0), 0)
            else:
                self._cache_scale = scale_for_counts(counts_present(present))
                self._formula = TERFormula(self._cache_scale)
            self._ref_cache = References.cached(streams, self._ref_tokenizer, self._lowercase)

    @property
    def _lowercase(self) -> bool:
        return not self.case_sensitive

    @property
    def formula(self) -> TERFormula:
        """The :class:`~fastbleu.metrics.ter.formula.TERFormula` of this metric's statistics:
        its :attr:`reference_scale`, or without one the scale of the last input (of the
        cached references before any; 720720 without them)."""
        return self._formula

    def options(self) -> dict:
        """The constructor arguments that rebuild this metric (its cached references aside)."""
        options = {"normalized": self.normalized, "no_punct": self.no_punct,
                   "asian_support": self.asian_support, "case_sensitive": self.case_sensitive}
        if self.reference_scale is not None:
            options["reference_scale"] = self.reference_scale
        return options

    # -- the scale of each input -------------------------------------------------------

    def options_for_counts(self, counts) -> dict:
        """The options that give the rows of segments with these numbers of references one
        scale: :meth:`options`, with ``reference_scale`` where the counts need another
        than 720720 (and this metric fixes none).

        Raises
        ------
        ValueError
            If the counts need a scale beyond 2**32
            (:func:`~fastbleu.metrics.ter.scale.scale_for_counts`).
        """
        options = self.options()
        if self.reference_scale is None:
            scale = scale_for_counts(counts)
            if scale != AVERAGE_SCALE:
                options["reference_scale"] = scale
        return options

    def _for_input(self, hypotheses, references):
        """A copy of this metric whose rows are at the scale this input's numbers of
        references need (this metric itself when its scale is fixed), and the input
        (converted here when more than 16 reference streams had to be counted)."""
        if self._pinned:
            return self, hypotheses, references
        if references is None:
            scale = self._cache_scale  # without a cache the pipeline raises its error
        elif _few_streams(references):
            scale = AVERAGE_SCALE
        else:
            hypotheses, references, _ = text_inputs(hypotheses, references,
                                                    self._check_references)
            scale = scale_for_counts(counts_present(reference_presence(references)))
        pinned = copy.copy(self)
        pinned._pinned = True
        if pinned._formula.scale != scale:
            pinned._formula = TERFormula(scale)
        return pinned, hypotheses, references

    def _adopt(self, metric: Metric) -> None:
        super()._adopt(metric)
        self._formula = metric.formula

    def accumulator(self):
        """A new, empty :class:`~fastbleu.metrics.ter.accumulator.TERAccumulator`: sums of
        inputs whose scales differ are added exactly at their common scale."""
        from .accumulator import TERAccumulator

        return TERAccumulator(self)

    # -- statistics --------------------------------------------------------------------

    def _batches(self, hyps: TextColumn, refs, buffers=None) -> Iterator[np.ndarray]:
        """The statistics rows of consecutive batches of segments."""
        with BufferPairs.of(buffers).borrowed() as (hyp_buffer, ref_buffer):
            n = len(hyps)
            for first in range(0, n, BATCH_SIZE):
                last = min(n, first + BATCH_SIZE)
                hyp = tokenize(hyps.slice(first, last), self._tokenizer, self._lowercase,
                               hyp_buffer)
                if isinstance(refs, References):
                    batch_refs = refs.slice(first, last)
                else:
                    batch_refs = References.tokenized([s.slice(first, last) for s in refs],
                                                      self._ref_tokenizer, self._lowercase,
                                                      ref_buffer)
                _check_matrices(hyp.count, batch_refs.count, first)
                scale = self._formula.scale
                if scale != AVERAGE_SCALE or batch_refs.count.shape[0] > _AVERAGED:
                    _check_fit(scale, (batch_refs.count >= 0).sum(axis=0), first)
                rows = np.empty((last - first, 2), dtype=np.int64)
                ter_statistics(hyp.hashes, hyp.start, hyp.count, batch_refs.hashes,
                               batch_refs.start, batch_refs.count, rows, scale)
                if rows.size and rows[:, 0].min() < 0:  # pragma: no cover - sacrebleu raises too
                    i = first + int(np.flatnonzero(rows[:, 0] < 0)[0])
                    raise RuntimeError(f"segment {i}: the edit-distance trace left the band "
                                       "(sacrebleu fails on this segment as well)")
                yield rows

    def _statistics(self, hyps: TextColumn, refs, buffers=None) -> np.ndarray:
        batches = list(self._batches(hyps, refs, buffers))
        if not batches:
            return np.zeros((0, 2), dtype=np.int64)
        return np.concatenate(batches) if len(batches) > 1 else batches[0]

    def column_statistics(self, hypotheses: TextColumn, references, *, tokenizer=None,
                          buffers=None) -> np.ndarray:
        """Statistics of already-converted text columns: the fast path of tables and Dask.

        No conversion; the caller has checked the lengths.  ``tokenizer`` is
        BLEU's and ignored (TER always uses its own).

        Returns
        -------
        numpy.ndarray
            int64, shape ``(len(hypotheses), 2)``.
        """
        if not isinstance(references, References):
            self._check_references(references)
        return self._statistics(hypotheses, references, buffers)

    def signature(self, num_refs: int, tokenizer_signature: str | None = None) -> TERSignature:
        """The signature for ``num_refs`` references per segment (``-1``: varies);
        ``tokenizer_signature`` is BLEU's and ignored."""
        return TERSignature(num_refs, self.case_sensitive, self.normalized, self.no_punct,
                            self.asian_support, self.n_bootstrap, self.seed)

def _few_streams(references) -> bool:
    """Whether there are at most 16 reference streams (every count of references then
    divides 720720); True for what is not a list of streams (the pipeline refuses it)."""
    try:
        return len(references) <= _AVERAGED
    except TypeError:
        return True


def _check_fit(scale: int, per_segment: np.ndarray, first: int) -> None:
    """Refuse a segment whose number of references does not divide ``scale``."""
    bad = scale_fits(scale, per_segment)
    if bad.size:
        i = int(bad[0])
        count = int(per_segment[i])
        raise SegmentError(first + i, f"{count} references, which do not divide the scale "
                           f"{scale:,} of TER's statistics (the mean reference length is kept "
                           f"as an integer times it): give reference_scale a multiple of "
                           f"every segment's number of references, or None to have one "
                           f"chosen")


def _check_matrices(hyp_count: np.ndarray, ref_count: np.ndarray, first: int) -> None:
    """Refuse a pair whose edit-distance matrix would not fit (sacrebleu's would not either)."""
    cells = (hyp_count.astype(np.int64) + 1) * (ref_count.max(axis=0).astype(np.int64) + 1)
    if cells.size and cells.max() > MAX_MATRIX_CELLS:
        i = int(np.argmax(cells))
        raise SegmentError(first + i, f"too long for TER: {int(hyp_count[i])} hypothesis "
                           f"words against {int(ref_count[:, i].max())} reference words need "
                           f"a {int(cells[i]):,}-cell edit-distance matrix (at most "
                           f"{MAX_MATRIX_CELLS:,})")
