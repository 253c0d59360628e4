"""``fastbleu.BLEU``: a vectorized drop-in for ``sacrebleu.metrics.BLEU``."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np

from ..._native.codes import MAX_AVERAGED_REFERENCES
from ...statistics.id_tokens import check_text_references, id_batch_rows, prepare_ids
from ...statistics.token_ids import IDS_SIGNATURE, TokenIds, is_token_ids
from ...statistics.tokens import References, compute_statistics
from ...inputs.text import TextColumn
from ...tokenizers import (DEFAULT_TOKENIZER, TOKENIZER_NAMES, TRG_LANG_TOKENIZERS, Tokenizer,
                           get_tokenizer)
from ..base import Metric
from ...inputs.references import reference_streams
from .formula import SMOOTH_DEFAULTS, BLEUFormula
from .score import BLEUScore, BLEUSignature

logger = logging.getLogger("fastbleu")

#: Default maximum n-gram order.
MAX_NGRAM_ORDER = 4
#: sacrebleu warns once this many hypotheses end in a tokenized period (" .").
TOKENIZED_PERIODS = 100


class BLEU(Metric):
    """Corpus and sentence BLEU (Papineni et al., 2002) as sacrebleu computes it (Post, 2018).

    The constructor takes sacrebleu's arguments with sacrebleu's defaults,
    and for the same options every number equals sacrebleu 2.6's.

    Parameters
    ----------
    lowercase : bool
        Lowercase hypotheses and references (Python's ``str.lower()``).
    force : bool
        Do not warn about hypotheses that look tokenized.
    tokenize : str, optional
        sacrebleu's tokenizer names: ``"13a"`` (default), ``"none"``,
        ``"char"``, ``"intl"``, ``"zh"``, ``"ja-mecab"`` and ``"ko-mecab"``
        (extras ``fastbleu[ja]``, ``fastbleu[ko]``), ``"spm"``/``"flores101"``,
        ``"flores200"``, ``"spBLEU-1K"`` (extra ``fastbleu[spm]``).  When
        omitted, ``trg_lang`` picks it as in sacrebleu (zh -> zh, ja ->
        ja-mecab, ko -> ko-mecab, else 13a).
    smooth_method : {"exp", "floor", "add-k", "none"}
        Smoothing of zero n-gram precisions (Chen & Cherry, 2014).
    smooth_value : float, optional
        The value for ``floor`` (default 0.1) and ``add-k`` (default 1).
    max_ngram_order : int
        Highest n-gram order (default 4, at most 100).
    effective_order : bool
        Stop at the first n-gram order with no n-grams (for sentence BLEU).
    trg_lang : str
        Target language; picks the default tokenizer and warns about unusual
        choices as sacrebleu does.
    references : list of sequences of str, optional
        Reference streams to tokenize once and reuse for every
        ``corpus_score(hyps, None)`` call.
    ref_length : {"closest", "shortest", "average"}
        The brevity penalty's reference length per segment: the closest to
        the hypothesis, ties to the shorter (sacrebleu, NLTK; the default),
        the shortest (the original IBM script, HF evaluate's ``bleu``) or
        the mean of the references (at most 16).  Not a sacrebleu option;
        the signature names it when it is not the default.
    weights : sequence of float, optional
        Weights of the n-gram orders (``max_ngram_order`` of them), giving
        ``BP * exp(sum w_n log p_n / sum w_n)`` over the orders in use
        (Papineni et al., 2002).  The default is sacrebleu's uniform mean.
        A zero weight leaves its order out of the mean (``(0, 1, 0, 0)`` is
        the individual bigram score); at least one weight must be positive.
        Not a sacrebleu option; the signature names it when given.
    spm_model : str or os.PathLike, optional
        The sentencepiece model file of the ``spm``/``flores*``/``spBLEU-1K``
        tokenizers.  By default fastbleu reads sacrebleu's own copy in
        ``$SACREBLEU/models`` (``~/.sacrebleu/models``); it never downloads.
        Not a sacrebleu option.
    """

    name = "BLEU"
    key = "bleu"
    SMOOTH_DEFAULTS = SMOOTH_DEFAULTS
    TOKENIZERS = TOKENIZER_NAMES
    TOKENIZER_DEFAULT = DEFAULT_TOKENIZER

    def __init__(self, lowercase: bool = False, force: bool = False, tokenize: str | None = None,
                 smooth_method: str = "exp", smooth_value: float | None = None,
                 max_ngram_order: int = MAX_NGRAM_ORDER, effective_order: bool = False,
                 trg_lang: str = "", references: Sequence[Sequence[str]] | None = None,
                 ref_length: str = "closest", weights: Sequence[float] | None = None,
                 spm_model=None):
        # The formula checks its options (and names them as this constructor does).
        formula = BLEUFormula(max_ngram_order, smooth_method, smooth_value, effective_order,
                              weights, ref_length)
        self.lowercase = bool(lowercase)
        self._force = bool(force)
        self.trg_lang = trg_lang
        self.smooth_method = smooth_method
        self.smooth_value = smooth_value
        self.max_ngram_order = formula.max_order
        self.effective_order = formula.effective_order
        self.ref_length = ref_length
        self.weights = formula.weights
        self._formula, self._formula_key = formula, self._formula_options()
        if tokenize is None:
            tokenize = TRG_LANG_TOKENIZERS.get(trg_lang, DEFAULT_TOKENIZER)
        else:
            for lang, advised in (("zh", "'zh' or 'spm'"), ("ja", "'ja-mecab' or 'spm'"),
                                  ("ko", "'ko-mecab' or 'spm'")):
                if trg_lang == lang and tokenize != TRG_LANG_TOKENIZERS[lang]:
                    logger.warning("Consider using the %s tokenizer for %s.", advised,
                                   {"zh": "Chinese", "ja": "Japanese", "ko": "Korean"}[lang])
        self.spm_model = spm_model
        self.tokenizer = get_tokenizer(tokenize, spm_model)
        self.tokenizer_signature = self.tokenizer.signature
        self.num_refs: int | None = None
        self.n_bootstrap = None
        self.seed = None
        self._ref_cache: References | None = None
        if references is not None:
            check_text_references(references, "only text references are cached; pass token-id "
                                  "references to each call")
            streams = reference_streams(references, None)
            self.num_refs = self._check_references(streams)
            self._ref_cache = References.cached(streams, self.tokenizer, self.lowercase)

    @property
    def max_references(self) -> int | None:
        """16 with ``ref_length="average"`` (the mean length is kept exactly as an integer
        times lcm(1..16)), else no limit."""
        return MAX_AVERAGED_REFERENCES if self.ref_length == "average" else None

    def options(self) -> dict:
        """The constructor arguments that rebuild this metric (its cached references aside)."""
        return {"lowercase": self.lowercase, "force": self._force, "tokenize": self.tokenizer.name,
                "smooth_method": self.smooth_method, "smooth_value": self.smooth_value,
                "max_ngram_order": self.max_ngram_order, "effective_order": self.effective_order,
                "trg_lang": self.trg_lang, "ref_length": self.ref_length,
                "weights": self.weights, "spm_model": self.spm_model}

    def _limit_subject(self) -> str:
        return "ref_length='average'"

    # -- statistics: the batch pipeline's hooks (fastbleu.metrics.base) -------------------

    def _convert(self, hypotheses, references):
        """Text (as every metric) or token ids: ``(TokenIds, [TokenIds, ...])``."""
        if not is_token_ids(hypotheses):
            check_text_references(references)
            self.input_tokenizer_signature = self.tokenizer_signature
            return super()._convert(hypotheses, references)
        hyps, streams = prepare_ids(hypotheses, references, self.lowercase)
        self.num_refs = self._check_references(streams)
        self.input_tokenizer_signature = IDS_SIGNATURE
        return hyps, streams

    def _device_rows(self, hypotheses, references):
        """Token ids already on a GPU (CUDA arrays of torch, CuPy, JAX; :mod:`fastbleu.gpu`):
        their rows, computed and left there."""
        from ...gpu.arrays import on_device  # numpy only: asks the object where it lives

        if not on_device(hypotheses):
            return None
        if self.lowercase:
            raise ValueError("lowercase=True does not apply to token ids (ids have no case); "
                             "score them with BLEU(lowercase=False)")
        from ...gpu.metric import device_statistics

        formula = self.formula
        rows, self.num_refs = device_statistics(hypotheses, references, formula.max_order,
                                                formula.ref_length)
        self.input_tokenizer_signature = IDS_SIGNATURE
        return rows

    def _list_batches(self, hypotheses, references, threads: int):
        if is_token_ids(hypotheses):  # a list of id lists: converted whole
            return None
        check_text_references(references)
        self.input_tokenizer_signature = self.tokenizer_signature
        return super()._list_batches(hypotheses, references, threads)

    def _rows(self, hypotheses, references, first: int, last: int, buffers) -> np.ndarray:
        if isinstance(hypotheses, TokenIds):
            formula = self.formula
            return id_batch_rows(hypotheses, references, first, last, formula.max_order,
                                 formula.ref_length_code, buffers)
        return super()._rows(hypotheses, references, first, last, buffers)

    def _inspect(self, hypotheses, n: int, tally) -> None:
        """sacrebleu's warning once 100 hypotheses end in a tokenized period (" ."), over
        the batches of one input (``tally``: their count so far, see ``Metric._inspect``)."""
        if self._force or n < TOKENIZED_PERIODS or not isinstance(hypotheses, TextColumn):
            return
        offsets, data = hypotheses.offsets, hypotheses.data
        ends = offsets[1:]
        long_enough = ends - offsets[:-1] >= 2
        last, before_last = np.maximum(ends - 1, 0), np.maximum(ends - 2, 0)
        found = np.count_nonzero(long_enough & (data[last] == ord(".")) &
                                 (data[before_last] == ord(" "))) if data.size else 0
        before, after = tally.add(found)
        if before < TOKENIZED_PERIODS <= after:
            logger.warning("That's 100 lines that end in a tokenized period ('.')")
            logger.warning("It looks like you forgot to detokenize your test data, which may "
                           "hurt your score.")
            logger.warning("If you insist your data is detokenized, or don't care, you can "
                           "suppress this message with the `force` parameter.")

    def column_statistics(self, hypotheses: TextColumn, references, *, tokenizer=None,
                          buffers=None) -> np.ndarray:
        """Statistics of already-converted text columns: the fast path of tables and Dask.

        No conversion, checks or warnings: the caller has made the columns
        (``fastbleu.text.as_text_column``) and checked that the references
        are as long as the hypotheses.

        Parameters
        ----------
        hypotheses : TextColumn
        references : list of TextColumn (or cached ``References``)
        tokenizer : str or Tokenizer, optional
            The tokenizer of these rows (a name as ``tokenize=`` takes it);
            default this metric's.
        buffers : BufferPairs or (HashBuffer, HashBuffer), optional
            Hash scratch (hypotheses, references) to reuse across calls, or
            pairs of it to borrow from (one per batch running at once).

        Returns
        -------
        numpy.ndarray
            int64, shape ``(len(hypotheses), formula.row_width)``.
        """
        if tokenizer is None:
            tokenizer = self.tokenizer
        elif not isinstance(tokenizer, Tokenizer):
            tokenizer = get_tokenizer(tokenizer, self.spm_model)
        formula = self.formula
        return compute_statistics(hypotheses, references, tokenizer, self.lowercase,
                                  formula.max_order, buffers, ref_length=formula.ref_length_code)

    @property
    def formula(self) -> BLEUFormula:
        """The :class:`~fastbleu.metrics.bleu_formula.BLEUFormula` of this configuration.

        Rebuilt if a formula attribute (``max_ngram_order``, ``smooth_method``,
        ``smooth_value``, ``effective_order``, ``weights``, ``ref_length``)
        has been assigned since, as sacrebleu's attributes may be.
        """
        key = self._formula_options()
        if self._formula_key != key:
            self._formula = BLEUFormula(*key)
            self._formula_key = key
        return self._formula

    def _formula_options(self) -> tuple:
        return (self.max_ngram_order, self.smooth_method, self.smooth_value,
                self.effective_order, self.weights, self.ref_length)

    def signature(self, num_refs: int, tokenizer_signature: str | None = None) -> BLEUSignature:
        """The signature of this configuration for ``num_refs`` references per segment.

        Parameters
        ----------
        num_refs : int
            References per segment, ``-1`` when it varies (sacrebleu's ``var``).
        tokenizer_signature : str, optional
            The ``tok`` field, when rows were tokenized otherwise than by this
            metric's tokenizer (a table's tokenizer column); default the last input's.
        """
        if tokenizer_signature is None:
            tokenizer_signature = self.input_tokenizer_signature or self.tokenizer_signature
        return BLEUSignature(num_refs, self.lowercase, tokenizer_signature,
                             self.formula.signature_fields(), self.n_bootstrap, self.seed)

    # -- scores ------------------------------------------------------------------------

    def cumulative_scores(self, hypotheses, references=None, *,
                          sentence: bool = False) -> np.ndarray:
        """BLEU-1 .. BLEU-N from one pass over the text (N = ``max_ngram_order``).

        BLEU-``k`` is the brevity penalty times the geometric mean of the
        first ``k`` n-gram precisions (uniform weights ``1/k``), the number
        sacrebleu's ``BLEU(max_ngram_order=k)`` gives with the same
        tokenizer, smoothing and effective order
        (:meth:`BLEUFormula.cumulative_scores`).  The ``weights`` option is
        not used.  For both kinds from one pass, score the statistics with
        the formula: ``rows = bleu.segment_statistics(hyps, refs)``, then
        ``bleu.formula.cumulative_scores(rows.sum(axis=0), check=False)`` and
        ``bleu.formula.individual_scores(...)`` (or an accumulator's
        ``statistics``, for a streamed corpus).

        Parameters
        ----------
        hypotheses, references
            As for :meth:`corpus_score` (``None``: the cached references).
        sentence : bool
            Score every segment (sentence level, with this metric's options as
            :meth:`sentence_scores` uses them) instead of the corpus.

        Returns
        -------
        numpy.ndarray
            float64: ``(N,)`` for the corpus, ``(n_segments, N)`` with
            ``sentence=True``; column ``k - 1`` is BLEU-``k``.
        """
        stats = self.segment_statistics(hypotheses, references)
        rows = stats if sentence else stats.sum(axis=0)
        return self.formula.cumulative_scores(rows, check=False)

    def individual_scores(self, hypotheses, references=None, *,
                          sentence: bool = False) -> np.ndarray:
        """The individual 1-gram .. N-gram scores from one pass over the text.

        The individual ``k``-gram score is ``BLEU(weights=e_k)``, weight 1 on
        order ``k`` and 0 on the others: the brevity penalty times the
        (smoothed) ``k``-gram precision (:meth:`BLEUFormula.individual_scores`).
        Parameters and shapes as for :meth:`cumulative_scores`.
        """
        stats = self.segment_statistics(hypotheses, references)
        rows = stats if sentence else stats.sum(axis=0)
        return self.formula.individual_scores(rows, check=False)

    def pool_statistics(self, hypotheses, pool: Sequence[str]) -> np.ndarray:
        """Statistics rows of every hypothesis against one shared pool of references.

        Row ``i`` is what sacrebleu's ``sentence_score(hypotheses[i], pool)``
        scores: clip counts are the per-n-gram maxima over all pool sentences
        (Papineni et al., 2002), the reference length the closest pool length
        (ties to the shorter).  One table for the pool, O(N + M) n-grams
        (:mod:`fastbleu.metrics.bleu_pool`).  ``ref_length="average"`` is
        not supported.  Returns int64 ``(len(hypotheses), 2 + 2 * N)``.
        """
        from .pool import pool_statistics

        rows, self.input_tokenizer_signature = pool_statistics(self, hypotheses, pool)
        return rows

    def pool_scores(self, hypotheses, pool: Sequence[str]) -> np.ndarray:
        """Sentence BLEU of every hypothesis against the shared ``pool`` (float64 array).

        Equal to ``[sacrebleu BLEU(same options).sentence_score(h, pool).score
        for h in hypotheses]`` (Post, 2018), in linear time.
        """
        return self.formula.scores(self.pool_statistics(hypotheses, pool), check=False)

    def pool_score(self, hypotheses, pool: Sequence[str]) -> BLEUScore:
        """Corpus BLEU of the hypotheses, each with the whole ``pool`` as its references."""
        return self.formula.score(self.pool_statistics(hypotheses, pool).sum(axis=0),
                                  check=False)

    def self_statistics(self, sentences) -> np.ndarray:
        """Statistics rows of every sentence against all the others (Self-BLEU).

        Row ``i`` is what sacrebleu's ``sentence_score(sentences[i], others)``
        scores, ``others`` being every sentence but ``i``; clip counts are
        leave-one-out maxima (the top two counts of each n-gram and which
        sentence holds the top).  Needs two sentences or more (ValueError).
        """
        from .pool import self_statistics

        rows, self.input_tokenizer_signature = self_statistics(self, sentences)
        return rows

    def self_scores(self, sentences) -> np.ndarray:
        """Self-BLEU: the sentence BLEU of every sentence against all the others (float64).

        Equal to sacrebleu's ``sentence_score(sentences[i], [s for j, s in
        enumerate(sentences) if j != i]).score``, in linear time; its mean is
        the corpus's Self-BLEU (Texygen's diversity measure).
        """
        return self.formula.scores(self.self_statistics(sentences), check=False)

    def sentence_score(self, hypothesis: str, references: Sequence[str | None]) -> BLEUScore:
        """BLEU of one hypothesis against its references (``None`` = missing)."""
        if not self.effective_order:
            logger.warning("It is recommended to enable `effective_order` for sentence-level BLEU.")
        return super().sentence_score(hypothesis, references)

    @staticmethod
    def compute_bleu(correct, total, sys_len: int, ref_len: int, smooth_method: str = "none",
                     smooth_value=None, effective_order: bool = False,
                     max_ngram_order: int = MAX_NGRAM_ORDER) -> BLEUScore:
        """BLEU from summed statistics, with sacrebleu's signature and numbers.

        Parameters
        ----------
        correct, total : sequence of int
            Matching and total n-grams per order, ``max_ngram_order`` of each.
        sys_len, ref_len : int
            Hypothesis and reference lengths in tokens.
        smooth_method, smooth_value, effective_order, max_ngram_order
            As for :class:`BLEU`.

        Returns
        -------
        BLEUScore

        Raises
        ------
        ValueError
            For counts that cannot be statistics: fractional (counts that
            already include add-k's ``k``) or negative values, a match count
            above its total, or a total above ``sys_len``.
        """
        if len(correct) != max_ngram_order or len(total) != max_ngram_order:
            raise ValueError(f"correct and total need {max_ngram_order} values each, got "
                             f"{len(correct)} and {len(total)}")
        try:
            values = np.array([sys_len, ref_len, *correct, *total], dtype=np.float64)
        except (TypeError, ValueError):
            raise TypeError("compute_bleu takes numbers: correct and total sequences of int, "
                            "sys_len and ref_len ints") from None
        if not np.all(np.isfinite(values)) or np.any(values != np.floor(values)):
            raise ValueError("compute_bleu takes whole-number statistics; counts that already "
                             "include add-k's k are not statistics (smoothing adds it)")
        row = np.array([int(x) for x in (sys_len, ref_len, *correct, *total)], dtype=np.int64)
        formula = BLEUFormula(max_ngram_order, smooth_method, smooth_value, effective_order)
        return formula.score(formula.check_rows(row, "compute_bleu's statistics", ndim=1),
                             check=False)
