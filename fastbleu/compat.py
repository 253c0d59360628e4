"""sacrebleu's module functions: ``corpus_bleu``, ``sentence_bleu``, ``raw_corpus_bleu``,
``corpus_chrf``, ``sentence_chrf``, ``corpus_ter`` and ``sentence_ter``.

Each builds the metric with the same arguments and defaults as sacrebleu
2.6's ``sacrebleu.compat`` function of that name and returns its score, so a
script that calls ``sacrebleu.corpus_bleu(...)`` gets the same numbers from
``fastbleu.corpus_bleu(...)``.  Metrics are imported on first call, so
importing fastbleu stays cheap.
"""

from __future__ import annotations

from collections.abc import Sequence

_DEFAULT_TOKENIZER = "13a"  # BLEU.TOKENIZER_DEFAULT, without importing the metric


def corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                smooth_method: str = "exp", smooth_value: float | None = None,
                force: bool = False, lowercase: bool = False,
                tokenize: str = _DEFAULT_TOKENIZER, use_effective_order: bool = False):
    """Corpus BLEU (Papineni et al., 2002) as ``sacrebleu.corpus_bleu`` computes it.

    Parameters
    ----------
    hypotheses : sequence of str
        One system output per segment.
    references : sequence of sequences of str
        Reference streams, each as long as ``hypotheses``.
    smooth_method, smooth_value, force, lowercase, tokenize
        As for :class:`fastbleu.BLEU`.
    use_effective_order : bool
        Leave out n-gram orders without any hypothesis n-gram.

    Returns
    -------
    BLEUScore
    """
    from .metrics.bleu.metric import BLEU

    metric = BLEU(lowercase=lowercase, force=force, tokenize=tokenize,
                  smooth_method=smooth_method, smooth_value=smooth_value,
                  effective_order=use_effective_order)
    return metric.corpus_score(hypotheses, references)


def raw_corpus_bleu(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                    smooth_value: float | None = 0.1):
    """BLEU of text taken as already tokenized: no tokenizer (split on whitespace),
    ``floor`` smoothing (default 0.1) and effective order, as
    ``sacrebleu.raw_corpus_bleu`` computes it.

    Returns
    -------
    BLEUScore
    """
    return corpus_bleu(hypotheses, references, smooth_method="floor",
                       smooth_value=smooth_value, force=True, tokenize="none",
                       use_effective_order=True)


def sentence_bleu(hypothesis: str, references: Sequence[str], smooth_method: str = "exp",
                  smooth_value: float | None = None, lowercase: bool = False,
                  tokenize: str = _DEFAULT_TOKENIZER, use_effective_order: bool = True):
    """BLEU of one hypothesis against its references, as ``sacrebleu.sentence_bleu``
    computes it (effective order by default; for many sentences at once,
    :meth:`fastbleu.BLEU.sentence_scores` is far faster).

    Parameters
    ----------
    hypothesis : str
    references : sequence of str
        Its references.
    smooth_method, smooth_value, lowercase, tokenize, use_effective_order
        As for :func:`corpus_bleu`.

    Returns
    -------
    BLEUScore
    """
    from .metrics.bleu.metric import BLEU

    metric = BLEU(lowercase=lowercase, tokenize=tokenize, force=False,
                  smooth_method=smooth_method, smooth_value=smooth_value,
                  effective_order=use_effective_order)
    return metric.sentence_score(hypothesis, references)


def corpus_chrf(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
                char_order: int = 6, word_order: int = 0, beta: int = 2,
                remove_whitespace: bool = True, eps_smoothing: bool = False):
    """Corpus chrF (Popović, 2015; chrF++ with ``word_order=2``) as
    ``sacrebleu.corpus_chrf`` computes it.

    Parameters
    ----------
    hypotheses : sequence of str
    references : sequence of sequences of str
    char_order, word_order, beta, eps_smoothing
        As for :class:`fastbleu.CHRF`.
    remove_whitespace : bool
        Drop whitespace from character n-grams (``CHRF(whitespace=not
        remove_whitespace)``).

    Returns
    -------
    CHRFScore
    """
    return _chrf(char_order, word_order, beta, remove_whitespace,
                 eps_smoothing).corpus_score(hypotheses, references)


def sentence_chrf(hypothesis: str, references: Sequence[str], char_order: int = 6,
                  word_order: int = 0, beta: int = 2, remove_whitespace: bool = True,
                  eps_smoothing: bool = False):
    """chrF of one hypothesis against its references, as ``sacrebleu.sentence_chrf``
    computes it (arguments as for :func:`corpus_chrf`).

    Returns
    -------
    CHRFScore
    """
    return _chrf(char_order, word_order, beta, remove_whitespace,
                 eps_smoothing).sentence_score(hypothesis, references)


def _chrf(char_order, word_order, beta, remove_whitespace, eps_smoothing):
    from .metrics.chrf.metric import CHRF

    return CHRF(char_order=char_order, word_order=word_order, beta=beta,
                whitespace=not remove_whitespace, eps_smoothing=eps_smoothing)


def corpus_ter(hypotheses: Sequence[str], references: Sequence[Sequence[str]],
               normalized: bool = False, no_punct: bool = False, asian_support: bool = False,
               case_sensitive: bool = False):
    """Corpus TER (Snover et al., 2006) as ``sacrebleu.corpus_ter`` computes it.

    Parameters
    ----------
    hypotheses : sequence of str
    references : sequence of sequences of str
    normalized, no_punct, asian_support, case_sensitive
        As for :class:`fastbleu.TER`.

    Returns
    -------
    TERScore
    """
    return _ter(normalized, no_punct, asian_support,
                case_sensitive).corpus_score(hypotheses, references)


def sentence_ter(hypothesis: str, references: Sequence[str], normalized: bool = False,
                 no_punct: bool = False, asian_support: bool = False,
                 case_sensitive: bool = False):
    """TER of one hypothesis against its references, as ``sacrebleu.sentence_ter``
    computes it (arguments as for :func:`corpus_ter`).

    Returns
    -------
    TERScore
    """
    return _ter(normalized, no_punct, asian_support,
                case_sensitive).sentence_score(hypothesis, references)


def _ter(normalized, no_punct, asian_support, case_sensitive):
    from .metrics.ter.metric import TER

    return TER(normalized=normalized, no_punct=no_punct, asian_support=asian_support,
               case_sensitive=case_sensitive)
