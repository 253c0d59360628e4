"""``fastbleu.TER``: a vectorized drop-in for ``sacrebleu.metrics.TER``."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import numpy as np

from ..._kernels.bleu.counting import MAX_AVERAGED_REFERENCES
from ..._kernels.ter.shifts import ter_statistics
from ...errors import SegmentError
from ...statistics.tokens import BATCH_SIZE, BufferPairs, References, tokenize
from ...inputs.text import TextColumn
from ...tokenizers.tercom import tercom_tokenizer
from ..base import Metric
from ...inputs.references import reference_streams
from .formula import TERFormula
from .score import TERSignature

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
    """

    name = "TER"
    key = "ter"
    #: The mean reference length is kept exactly as an integer times lcm(1..16).
    max_references = MAX_AVERAGED_REFERENCES

    #: Segments per batch of the pipeline: an edit distance costs some hundred times a
    #: BLEU count, so batches of 1,024 (about 50 ms on one core) keep every thread
    #: of a many-core pool busy to the end instead of 16,384 (seconds each, and long
    #: segments sitting together in one of them).
    batch_segments = 1024
    batch_cost = "alignment"  # batches cut by (hyp x ref length) ** 1.5 (metrics/cuts.py)

    def __init__(self, normalized: bool = False, no_punct: bool = False,
                 asian_support: bool = False, case_sensitive: bool = False,
                 references: Sequence[Sequence[str]] | None = None):
        self.normalized = bool(normalized)
        self.no_punct = bool(no_punct)
        self.asian_support = bool(asian_support)
        self.case_sensitive = bool(case_sensitive)
        self._tokenizer = tercom_tokenizer(self.normalized, self.no_punct, self.asian_support)
        # sacrebleu tokenizes references twice (see tercom_tokenizer)
        self._ref_tokenizer = tercom_tokenizer(self.normalized, self.no_punct,
                                               self.asian_support, passes=2)
        self.tokenizer_signature = self._tokenizer.signature
        self._formula = TERFormula()
        self.num_refs: int | None = None
        self.n_bootstrap = None
        self.seed = None
        self._ref_cache: References | None = None
        if references is not None:
            streams = reference_streams(references, None)
            self.num_refs = self._check_references(streams)
            self._ref_cache = References.cached(streams, self._ref_tokenizer, self._lowercase)

    @property
    def _lowercase(self) -> bool:
        return not self.case_sensitive

    @property
    def formula(self) -> TERFormula:
        """The :class:`~fastbleu.metrics.ter_formula.TERFormula` (TER has no scoring options)."""
        return self._formula

    def options(self) -> dict:
        """The constructor arguments that rebuild this metric (its cached references aside)."""
        return {"normalized": self.normalized, "no_punct": self.no_punct,
                "asian_support": self.asian_support, "case_sensitive": self.case_sensitive}

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
                rows = np.empty((last - first, 2), dtype=np.int64)
                ter_statistics(hyp.hashes, hyp.start, hyp.count, batch_refs.hashes,
                               batch_refs.start, batch_refs.count, rows)
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

def _check_matrices(hyp_count: np.ndarray, ref_count: np.ndarray, first: int) -> None:
    """Refuse a pair whose edit-distance matrix would not fit (sacrebleu's would not either)."""
    cells = (hyp_count.astype(np.int64) + 1) * (ref_count.max(axis=0).astype(np.int64) + 1)
    if cells.size and cells.max() > MAX_MATRIX_CELLS:
        i = int(np.argmax(cells))
        raise SegmentError(first + i, f"too long for TER: {int(hyp_count[i])} hypothesis "
                           f"words against {int(ref_count[:, i].max())} reference words need "
                           f"a {int(cells[i]):,}-cell edit-distance matrix (at most "
                           f"{MAX_MATRIX_CELLS:,})")
