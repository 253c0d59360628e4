"""``fastbleu.NIST``: the NIST score (Doddington, 2002) on text, on the metric seam."""

from __future__ import annotations

import copy
from collections.abc import Sequence

import numpy as np

from ..._kernels.bleu.counting import MAX_AVERAGED_REFERENCES
from ...statistics.tokens import BATCH_SIZE, BufferPairs, References
from ...inputs.text import TextColumn
from ...tokenizers import DEFAULT_TOKENIZER, get_tokenizer
from ..base import Metric
from ...inputs.references import reference_streams
from .formula import NISTFormula, statistics_rows
from .score import NISTSignature
from .weights import CountsBuilder, NISTCounts, NISTWeights


class NIST(Metric):
    """Corpus and sentence NIST (Doddington, 2002) of text, tokenized as sacrebleu tokenizes.

    NIST averages, per n-gram order, the *information* of the matched
    n-grams, ``Info(w1..wk) = log2(count(w1..wk-1) / count(w1..wk))`` counted
    over the references, sums the orders 1..N, and multiplies by a brevity
    penalty ``exp(beta * log(min(ratio, 1))**2)`` that is 0.5 at a length
    ratio of 2/3.  With ``variant="nltk"`` (default) every number is NLTK's
    ``corpus_nist`` of the tokens (to ~1e-15 relative; see
    :mod:`fastbleu.metrics.nist.formula`); ``variant="mteval"`` is NIST's
    ``mteval-v13a.pl`` as published (counts clipped by their largest count in
    any reference, the average reference length, ``max(count, 1)``
    denominators).  :mod:`fastbleu.nltk.nist` lists the differences.

    **Information weights are corpus-level.**  They come from every reference
    of the input of one call (``corpus_score``, ``segment_statistics``,
    ``sentence_scores``), or, for a metric built with ``references=...``, from
    those cached references, in every call.  Given the weights, a segment's
    statistics row (its information-weighted matches, fixed point, and its
    counts) is an int64, summable row like every metric's, so
    ``segment_statistics`` rows sum to the corpus score, and bootstrap
    resampling, groups and ``--segments-out`` work on them: all with the
    weights of the whole input.  ``sentence_score(hyp, refs)`` scores one
    segment alone (its own references give the weights), as NLTK's
    ``sentence_nist`` does; ``sentence_scores`` scores every segment with the
    corpus weights.  A corpus scored in pieces gets the weights of the whole:
    an accumulator keeps its updates' tokens and weighs them all at the end;
    tables (:func:`fastbleu.score_table`) and Dask count the references in a
    first pass (:mod:`fastbleu.tables.prepass`); elsewhere, sum
    :meth:`reference_counts` of the pieces and score each with
    :meth:`with_weights`.

    Parameters
    ----------
    max_ngram_order : int
        The highest n-gram order N (default 5, as in NIST; 1 to 9).
    tokenize : str
        A sacrebleu tokenizer name (default ``"13a"``: mteval-v13a's own
        normalization, without its lowercasing); see :class:`fastbleu.BLEU`.
    lowercase : bool
        Lowercase text first (Python's ``str.lower()``; mteval lowercases only
        ASCII letters, and does by default).
    variant : {"nltk", "mteval"}
        Whose NIST.
    references : list of sequences of str, optional
        Reference streams to tokenize once, for ``corpus_score(hyps, None)``;
        their n-grams also fix the information weights.
    spm_model : str or os.PathLike, optional
        For the sentencepiece tokenizers, as for :class:`fastbleu.BLEU`.
    """

    name = "NIST"
    corpus_pass = True
    key = "nist"
    #: The table's tokenizer column is BLEU's; NIST keeps its own tokenizer.
    tokenizer = None

    def __init__(self, max_ngram_order: int = 5, tokenize: str = DEFAULT_TOKENIZER,
                 lowercase: bool = False, variant: str = "nltk",
                 references: Sequence[Sequence[str]] | None = None, spm_model=None):
        self._formula = NISTFormula(max_ngram_order, variant)
        self.max_ngram_order = self._formula.max_order
        self.variant = variant
        self.lowercase = bool(lowercase)
        self.spm_model = spm_model
        self._tokenizer = get_tokenizer(tokenize, spm_model)
        self.tokenizer_signature = self._tokenizer.signature
        self.num_refs: int | None = None
        self.n_bootstrap = None
        self.seed = None
        self._ref_cache: References | None = None
        self._cached_weights = None
        self._fixed = None  # NISTWeights given by with_weights
        # [(rows or None, NISTWeights)]: the rows of one record batch of a table and their
        # groups' weights, on a copy made for that batch (tables.prepass.WeightedMetricSet)
        self._batch_weights = None
        if references is not None:
            streams = reference_streams(references, None)
            self.num_refs = self._check_references(streams)
            self._ref_cache = References.cached(streams, self._tokenizer, self.lowercase)
            self._cached_weights = self._weights(self._ref_cache)

    @property
    def max_references(self) -> int | None:
        """16 with ``variant="mteval"`` (the mean reference length is kept exactly as an
        integer times lcm(1..16)), else no limit."""
        return MAX_AVERAGED_REFERENCES if self.variant == "mteval" else None

    @property
    def formula(self) -> NISTFormula:
        """The :class:`~fastbleu.metrics.nist.formula.NISTFormula` of this configuration."""
        return self._formula

    def options(self) -> dict:
        """The constructor arguments that rebuild this metric (its cached references aside)."""
        return {"max_ngram_order": self.max_ngram_order, "tokenize": self._tokenizer.name,
                "lowercase": self.lowercase, "variant": self.variant,
                "spm_model": self.spm_model}

    # -- statistics --------------------------------------------------------------------

    def _limit_subject(self) -> str:
        return "NIST with variant='mteval'"

    def _rows(self, hypotheses, references, first: int, last: int, buffers) -> np.ndarray:
        # A corpus pass: the batch pipeline hands over the whole input (first=0, last=n),
        # whose references give the weights (the cached ones theirs, computed once).
        return self._statistics(hypotheses, references, buffers=buffers)

    def _weights(self, refs: References):
        """The information weights of these tokenized references (their counts)."""
        counts = NISTCounts.of_tokens(refs.hashes, refs.start, refs.count, self._config)
        return counts.weights(self.variant)

    def _statistics(self, hyps: TextColumn, refs, tokenizer=None, buffers=None) -> np.ndarray:
        """Rows of every segment: with the fixed weights (of the whole table's group, or
        given), else those of these references (or the cached ones)."""
        tokenizer = tokenizer or self._tokenizer
        parts = self._batch_weights or ([(None, self._fixed)] if self._fixed else None)
        if parts is None and isinstance(refs, References) and refs is self._ref_cache:
            parts = [(None, self._cached_weights)]
        if len(hyps) > BATCH_SIZE:  # compacted, 8 bytes a token (a buffer takes 8 a byte)
            hyp = References.cached([hyps], tokenizer, self.lowercase)
            if not isinstance(refs, References):
                refs = References.cached(refs, tokenizer, self.lowercase)
            return self._weighted_rows(hyp, refs, parts)
        with BufferPairs.of(buffers).borrowed() as (hyp_buffer, ref_buffer):
            hyp = References.tokenized([hyps], tokenizer, self.lowercase, hyp_buffer)
            if not isinstance(refs, References):
                refs = References.tokenized(refs, tokenizer, self.lowercase, ref_buffer)
            return self._weighted_rows(hyp, refs, parts)

    def _weighted_rows(self, hyp: References, refs: References, parts) -> np.ndarray:
        """Rows of tokenized segments; ``parts`` pairs rows (an index array; None: all) with
        their weights (None: the weights of ``refs``)."""
        if parts is None:
            parts = [(None, self._weights(refs))]
        out = np.empty((len(refs), self.formula.row_width), dtype=np.int64)
        for rows, weights in parts:
            if rows is None:
                out[:] = self._matched_rows(hyp, refs, weights)
            else:
                out[rows] = self._matched_rows(hyp, refs, weights, rows)
        return out

    def _matched_rows(self, hyp: References, refs: References, weights, rows=None):
        """Statistics rows of segments ``rows`` (None: all) weighed by ``weights``."""
        from ..._kernels.nist.matches import segment_matches
        from ...nltk.nist import COMPENSATED_SUM

        h_start, h_count = hyp.start[0], hyp.count[0]
        r_start, r_count = refs.start, refs.count
        if rows is not None:
            h_start, h_count = h_start[rows], h_count[rows]
            r_start, r_count = r_start[:, rows], r_count[:, rows]
        table, shift, words, zero = weights.kernel_arguments()
        num, den, ref_len = segment_matches(hyp.hashes, h_start, h_count, refs.hashes, r_start,
                                            r_count, table, shift, words, zero,
                                            self.max_ngram_order, self.variant == "mteval",
                                            COMPENSATED_SUM)
        return statistics_rows(h_count, num, den, ref_len, self.variant)

    # -- weights of a corpus in pieces ---------------------------------------------------

    @property
    def _config(self) -> tuple:
        return (self._tokenizer.signature, self.lowercase, self.max_ngram_order)

    def reference_counts(self, references, tokenizer=None, *, rows=None, times=None,
                         add_to=None):
        """The reference n-gram counts of a piece of a corpus, to merge with other pieces'.

        Parameters
        ----------
        references : list of sequences of str
            Reference streams (``None`` entries are missing references), as
            for :meth:`corpus_score`; or text columns.
        tokenizer : Tokenizer, optional
            Default: this metric's.
        rows : numpy.ndarray, optional
            Count only the references of these segments (indices).
        times : numpy.ndarray, optional
            How many times to count each of ``rows`` (positive integers; the
            counts of a row repeated so many times).
        add_to : NISTCounts, optional
            Counts of earlier pieces (of this configuration) to add these to, in
            their own table: ``add_to`` is used up (not to be used after), and
            the returned counts are of both.  A table's first pass counts every
            record batch so, without a merge per batch.

        Returns
        -------
        fastbleu.metrics.nist.weights.NISTCounts
            Summable (``a + b``) and picklable; :meth:`with_weights` turns the
            whole corpus's into its weights (Doddington, 2002).

        Raises
        ------
        NISTMemoryError
            (a ``MemoryError``) when the distinct reference n-grams do not fit
            in the memory left (:mod:`fastbleu.metrics.nist.memory`).
        """
        if isinstance(references, References):
            refs = references
        else:
            streams = list(references)
            if not (streams and all(isinstance(x, TextColumn) for x in streams)):
                streams = reference_streams(references, None)
            refs = References.cached(streams, tokenizer or self._tokenizer, self.lowercase)
        if add_to is None:
            if rows is None and times is None:
                return NISTCounts.of_tokens(refs.hashes, refs.start, refs.count, self._config)
            builder = CountsBuilder(self._config)
        else:
            if not isinstance(add_to, NISTCounts) or add_to.config != self._config:
                raise ValueError("add_to must be NISTCounts of this metric's configuration")
            builder = CountsBuilder.resume(add_to)
        if times is not None:
            times = np.asarray(times)
            n = len(refs) if rows is None else len(rows)
            if times.shape != (n,) or not np.issubdtype(times.dtype, np.integer) or \
                    (times.size and times.min() < 1):
                raise ValueError("times must hold a positive integer for each counted row")
        return builder.add_references(refs.hashes, refs.start, refs.count, rows,
                                      times).finish()

    def tokenized_references(self, streams, buffer=None) -> References:
        """Reference streams (text columns) tokenized as this metric tokenizes, for
        :meth:`reference_counts` of parts of them (a table's first pass)."""
        return References.tokenized(streams, self._tokenizer, self.lowercase, buffer)

    def with_row_weights(self, parts) -> NIST:
        """A copy for one record batch of a table: ``parts`` pairs the batch's rows (an
        index array, or None: all) with their group's fixed weights (``NISTWeights``)."""
        fitted = copy.copy(self)
        fitted._batch_weights = list(parts)
        return fitted

    def with_weights(self, weights) -> NIST:
        """A copy of this metric whose every call uses these fixed information weights.

        Score the pieces of a corpus with the weights of the whole: sum the
        pieces' :meth:`reference_counts`, then score every piece with
        ``metric.with_weights(total)``; the rows are those of one call over
        the whole corpus, so their sums and scores are too.

        Parameters
        ----------
        weights : NISTCounts or NISTWeights
            Counts of the whole corpus's references (made by a metric of the
            same tokenizer, case and order), or ``counts.weights(variant)``.

        Returns
        -------
        NIST
            A shallow copy (tokenizer and cached references shared).

        Raises
        ------
        TypeError
            For another object.
        ValueError
            For counts or weights of another configuration.
        """
        if isinstance(weights, NISTCounts):
            if weights.config != self._config:
                raise ValueError(f"these NIST reference counts were made with (tokenizer, "
                                 f"lowercase, max_ngram_order) = {weights.config}; this "
                                 f"metric has {self._config}")
            weights = weights.weights(self.variant)
        if not isinstance(weights, NISTWeights):
            raise TypeError(f"weights must be NISTCounts (from NIST.reference_counts) or "
                            f"NISTWeights, got {type(weights).__name__}")
        if (weights.config, weights.variant) != (self._config, self.variant):
            raise ValueError(f"these NIST weights were made for {weights.config}, variant "
                             f"{weights.variant!r}; this metric has {self._config}, variant "
                             f"{self.variant!r}")
        fitted = copy.copy(self)
        fitted._fixed = weights
        fitted._batch_weights = None
        return fitted

    def accumulator(self):
        """An accumulator whose score is exactly :meth:`corpus_score` of all its updates
        together (the weights of all their references): it keeps the updates' token
        hashes, 8 bytes a word
        (:class:`~fastbleu.metrics.nist.accumulator.NISTAccumulator`).

        Raises
        ------
        ValueError
            For a metric with fixed weights (:meth:`with_weights`): the
            accumulator weighs the references of its updates.
        """
        from .accumulator import NISTAccumulator

        if self._fixed is not None:
            raise ValueError("an accumulator weighs the references of its updates, not fixed "
                             "weights: make it from a NIST without with_weights(...)")

        return NISTAccumulator(self)

    def column_statistics(self, hypotheses: TextColumn, references, *, tokenizer=None,
                          buffers=None) -> np.ndarray:
        """Statistics of already-converted text columns: the fast path of tables and Dask.

        The weights are the fixed ones (:meth:`with_weights`; a table's first
        pass gives every batch those of its whole group,
        :mod:`fastbleu.tables.prepass`), else those of these references (or
        the cached ones).  ``buffers`` (a table job's) lend the token-hash scratch.
        """
        if not isinstance(references, References):
            self._check_references(references)
        if tokenizer is not None and not hasattr(tokenizer, "kernel"):
            tokenizer = get_tokenizer(tokenizer, self.spm_model)
        return self._statistics(hypotheses, references, tokenizer, buffers)

    def signature(self, num_refs: int, tokenizer_signature: str | None = None) -> NISTSignature:
        """The signature for ``num_refs`` references per segment (``-1``: varies)."""
        return NISTSignature(num_refs, self.lowercase, tokenizer_signature or
                             self.tokenizer_signature, self.max_ngram_order, self.variant,
                             self.n_bootstrap, self.seed)
