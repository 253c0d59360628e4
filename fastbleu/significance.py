"""Significance of BLEU differences: bootstrap confidence intervals, paired bootstrap
resampling and paired approximate randomization, with sacrebleu's draws.

Three tests, as sacrebleu 2.6 runs them:

* :func:`confidence_interval` -- the percentile bootstrap (Efron & Tibshirani,
  1993): resample the segments with replacement ``n_samples`` times, score
  each resample, report the mean and half the width of the central 95 %
  interval of those scores.
* :func:`paired_bootstrap` -- paired bootstrap resampling (Koehn, 2004): the
  same resamples for the baseline and every system; the p-value of a system
  is the share of resamples whose centred absolute score difference exceeds
  the observed one (with the +1 smoothing of Riezler & Maxwell's test).
* :func:`paired_ar` -- paired approximate randomization (Riezler & Maxwell,
  2005; Noreen, 1989): in each trial a coin decides, segment by segment,
  whether the baseline's and the system's outputs swap places; the p-value is
  the share of trials whose absolute score difference exceeds the observed
  one, again with +1 smoothing.

**Same draws as sacrebleu.**  The seed defaults to 12345, or the
``SACREBLEU_SEED`` environment variable (``none`` draws fresh entropy).
Resample indices are ``numpy.random.default_rng(seed).choice(n, size=(k,
n))`` and coin flips ``rng.integers(2, size=(k, n), dtype=bool)``, exactly
as sacrebleu calls them, but drawn a chunk of rows at a time so that memory
stays O(segments + resamples).  Chunks do not change the values:
``choice``/``integers`` of 64-bit indices draw each value from the bit
generator's stream with no buffer local to the call, so consecutive calls
continue the stream exactly; boolean draws take 32 coins from each 32-bit
word and drop the unused bits of the last word of every call, so flip chunks
hold a whole number of 32-coin words (a multiple of ``32 / gcd(n, 32)``
rows).  ``tests/test_significance.py`` checks both against one big draw.
All systems share the draws, as they do in sacrebleu with a fixed seed (with
``none``, sacrebleu draws afresh for every system; fastbleu once).

**Exact by default.**  Resampled statistics are summed in int64 and scored in
float64, so a resample's BLEU is exactly what :class:`fastbleu.BLEU` gives
for those segments.  sacrebleu sums them in float32, which rounds once a sum
passes 2**24 (about 150,000 WMT segments); ``sacrebleu_compat=True``
reproduces its float32 arithmetic bit for bit (see
:mod:`fastbleu._kernels.resample`).  Approximate randomization sums int64 in
both tools.

References
----------
Efron, B. & Tibshirani, R. (1993). *An Introduction to the Bootstrap.* Chapman & Hall.
Koehn, P. (2004). Statistical significance tests for machine translation evaluation. EMNLP.
Riezler, S. & Maxwell, J. T. (2005). On some pitfalls in automatic evaluation and
significance testing for MT. ACL Workshop on Intrinsic and Extrinsic Evaluation Measures.
"""

from __future__ import annotations

import math
import os
import statistics as _statistics
from collections import deque
from dataclasses import dataclass

import numpy as np

from ._kernels.resample import count_draws, float32_sums, randomization_sums, weighted_sums
from ._kernels.threads import chunk_bounds, submit, submit_chunks
from ._limits import MAX_SAMPLES
from .metrics.base import Formula, Metric, Signature
from .score import BLEUScore, validate_statistics

#: sacrebleu's default seed, and its default numbers of resamples and trials
#: (at most ``MAX_SAMPLES``, from ``fastbleu._limits``).
DEFAULT_SEED = 12345
DEFAULT_BOOTSTRAP = 1000
DEFAULT_TRIALS = 10000

# Draws per chunk: 2**22 int64 indices (32 MiB) or 2**24 coin flips (16 MiB); a batch of
# resamples' segment counts: 2**25 uint16 (64 MiB, two batches alive at a time).
_INDEX_BUDGET = 1 << 22
_FLIP_BUDGET = 1 << 24
_COUNT_BUDGET = 1 << 25
_COUNT_DTYPE = np.uint16
_MAX_COUNTING = 2
# Additions per thread piece below which splitting a chunk is not worth it.
_MIN_WORK = 1 << 16


@dataclass
class Result:
    """One system's result, with sacrebleu's fields (its JSON prints them in this order).

    Attributes
    ----------
    score : float
        The system's corpus BLEU.
    p_value : float or None
        p-value against the baseline (None for the baseline itself).
    mean : float or None
        Mean BLEU over the bootstrap resamples.
    ci : float or None
        Half the width of the 95 % percentile interval of those scores.
    """

    score: float
    p_value: float | None = None
    mean: float | None = None
    ci: float | None = None


# -- seeds -------------------------------------------------------------------------------

def resolve_seed(seed=None) -> tuple[int | None, str]:
    """The seed to draw with, and its label for the signature.

    Parameters
    ----------
    seed : int, str or None
        ``None`` takes ``$SACREBLEU_SEED``, else 12345 (sacrebleu's rule);
        ``"none"`` (any case) means fresh entropy from the operating system;
        otherwise a non-negative integer, or a string of one.

    Returns
    -------
    (int or None, str)
        The value for ``numpy.random.default_rng`` and the signature's ``seed``.
    """
    if seed is None:
        seed = os.environ.get("SACREBLEU_SEED", str(DEFAULT_SEED))
        where = "SACREBLEU_SEED"
    else:
        where = "seed"
    if isinstance(seed, str):
        text = seed.strip()
        if text.lower() == "none":
            return None, "none"
        try:
            seed = int(text)
        except ValueError:
            raise ValueError(f"{where} must be a non-negative integer or 'none', got "
                             f"{text!r}") from None
    elif isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed must be an int, a string or None, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"{where} must be a non-negative integer or 'none', got {seed}")
    return int(seed), str(int(seed))


def _check_count(value, name: str) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < 1:
        raise ValueError(f"{name} must be at least 1, got {value}")
    if value > MAX_SAMPLES:
        raise ValueError(f"{name} must be at most {MAX_SAMPLES:,} (one float64 score is kept "
                         f"per sample and system), got {value:,}")
    return int(value)


# -- draws, chunk by chunk ---------------------------------------------------------------

def index_chunks(rng: np.random.Generator, n_segments: int, n_samples: int,
                 chunk_rows: int | None = None):
    """Yield ``(first_row, indices)``: ``rng.choice(n_segments, size=(n_samples, n_segments))``
    a block of rows at a time, the same values as the one big call."""
    if chunk_rows is None:
        chunk_rows = _chunk_rows(n_segments)
    done = 0
    while done < n_samples:
        rows = min(chunk_rows, n_samples - done)
        yield done, rng.choice(n_segments, size=(rows, n_segments), replace=True)
        done += rows


def flip_rows_step(n_segments: int) -> int:
    """Rows of coin flips that make a whole number of the generator's 32-coin words."""
    return 32 // math.gcd(n_segments, 32)


def flip_chunks(rng: np.random.Generator, n_segments: int, n_trials: int,
                chunk_rows: int | None = None):
    """Yield ``(first_row, flips)``: ``rng.integers(2, size=(n_trials, n_segments),
    dtype=bool)`` a block of rows at a time, the same values as the one big call.

    ``chunk_rows`` is rounded down to a multiple of :func:`flip_rows_step`
    (at least one step): numpy drops the unused coins of a call's last
    32-bit word, so only whole words keep the stream.
    """
    step = flip_rows_step(n_segments)
    if chunk_rows is None:
        chunk_rows = _FLIP_BUDGET // n_segments
    chunk_rows = max(step, chunk_rows // step * step)
    done = 0
    while done < n_trials:
        rows = min(chunk_rows, n_trials - done)
        yield done, rng.integers(2, size=(rows, n_segments), dtype=bool)
        done += rows


def _pipelined(chunks, launch) -> None:
    """Run ``launch(first_row, draws)`` (which starts kernels on the thread pool and
    returns their futures) on every chunk; numpy draws the next chunk meanwhile."""
    iterator = iter(chunks)
    current = next(iterator, None)
    while current is not None:
        futures = launch(*current)
        current = next(iterator, None)
        for future in futures:
            future.result()


# -- statistics in, scores out -----------------------------------------------------------

class _Formula:
    """Until the tests move to ``bleu.formula``: ``_Formula.of(bleu)`` is ``bleu.formula``."""

    @staticmethod
    def of(bleu) -> Formula:
        return bleu.formula


def _side_by_side(stats: list[np.ndarray], dtype) -> np.ndarray:
    """``(n_segments, n_systems * width)``: each segment's rows of all systems, contiguous."""
    n, width = stats[0].shape
    joined = np.empty((n, len(stats) * width), dtype=dtype)
    for s, block in enumerate(stats):
        joined[:, s * width:(s + 1) * width] = block
    return joined


def _min_rows(n_segments: int, width: int) -> int:
    return max(1, _MIN_WORK // max(1, n_segments * width))


def bootstrap_scores(stats: list[np.ndarray], formula: Formula, n_samples: int,
                     rng: np.random.Generator, sacrebleu_compat: bool = False) -> np.ndarray:
    """The score of every system on every bootstrap resample: float64 ``(n_systems, n_samples)``.

    Resample ``r`` is row ``r`` of ``rng.choice(n, size=(n_samples, n))``,
    drawn chunk by chunk; all systems use the same resamples.  The sums of a
    batch of resamples are scored by one ``formula.resampled_scores`` call.
    """
    if sacrebleu_compat:
        return _bootstrap_float32(stats, formula, n_samples, rng)
    n_segments = stats[0].shape[0]
    joined = _side_by_side(stats, np.int64)
    width = joined.shape[1]
    out = np.empty((len(stats), n_samples), dtype=np.float64)
    batch = max(1, min(n_samples, _COUNT_BUDGET // n_segments))
    buffers = [np.empty((batch, n_segments), dtype=_COUNT_DTYPE) for _ in range(2)]
    min_segments = max(256, _MIN_WORK // (batch * width))
    wrapped = {}  # resample -> its sums, for the (astronomically rare) count that wrapped

    def launch(counts, n_rows, offset):
        """Start the sums of a full batch on the pool; return what ``finish`` needs."""
        bounds = chunk_bounds(n_segments, min_segments)
        partial = np.zeros((len(bounds) - 1, n_rows, width), dtype=np.int64)
        futures = [submit(weighted_sums, joined, counts, n_rows, partial[k], bounds[k],
                          bounds[k + 1]) for k in range(len(bounds) - 1)]
        return futures, partial, n_rows, offset

    def finish(pending):
        futures, partial, n_rows, offset = pending
        for future in futures:
            future.result()
        sums = partial.sum(axis=0)
        for row in range(offset, offset + n_rows):
            if row in wrapped:
                sums[row - offset] = wrapped.pop(row)
        formula.resampled_scores(sums, len(stats), out, offset)

    def count(part, counts, first_row, first_resample):
        """Count a block of draws into ``counts`` (runs on the pool)."""
        if count_draws(part, counts, first_row):
            for r in range(part.shape[0]):
                exact = np.bincount(part[r], minlength=n_segments)  # int64
                if exact.max() > np.iinfo(_COUNT_DTYPE).max:
                    wrapped[first_resample + r] = exact @ joined

    # The main thread only draws (numpy, one stream); the pool counts the draws of
    # batch k + 1 and sums batch k.  At most _MAX_COUNTING blocks of draws wait.
    counting = deque()
    pending, current, filled, offset = None, 0, 0, 0
    for _, idx in index_chunks(rng, n_segments, n_samples, min(batch, _chunk_rows(n_segments))):
        while idx.shape[0]:
            take = min(idx.shape[0], batch - filled)
            counting.append(submit(count, idx[:take], buffers[current], filled,
                                   offset + filled))
            while len(counting) > _MAX_COUNTING:
                counting.popleft().result()
            idx, filled = idx[take:], filled + take
            if filled == batch or offset + filled == n_samples:
                while counting:
                    counting.popleft().result()
                if pending is not None:
                    finish(pending)
                pending = launch(buffers[current], filled, offset)
                offset, filled, current = offset + filled, 0, 1 - current
    finish(pending)
    return out


def _chunk_rows(n_segments: int) -> int:
    return max(1, _INDEX_BUDGET // n_segments)


def _bootstrap_float32(stats, formula, n_samples, rng) -> np.ndarray:
    """sacrebleu's float32 bootstrap: each resample's rows gathered and added in index order."""
    n_segments = stats[0].shape[0]
    joined = _side_by_side(stats, np.float32)
    out = np.empty((len(stats), n_samples), dtype=np.float64)
    width = joined.shape[1]
    min_rows = _min_rows(n_segments, width)

    def piece(idx, first_row, first, last):
        """Sum resamples ``first..last`` of a chunk of draws, then score them (one call each)."""
        sums = np.empty((last - first, width), dtype=np.float32)
        float32_sums(joined, idx, sums, first, last)
        formula.resampled_scores(sums, len(stats), out, first_row + first)

    def launch(first_row, idx):
        return submit_chunks(piece, idx.shape[0], idx, first_row, min_chunk=min_rows)

    _pipelined(index_chunks(rng, n_segments, n_samples), launch)
    return out


def randomization_scores(baseline: np.ndarray, systems: list[np.ndarray], formula: Formula,
                         n_trials: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """BLEU of both pseudo-systems of every system and trial: two ``(n_systems, n_trials)``
    arrays, A and B of sacrebleu's ``_paired_ar_test`` (A takes the baseline's segment where
    the coin ``rng.integers(2, size=(n_trials, n), dtype=bool)`` is set)."""
    n_segments = baseline.shape[0]
    diff = _side_by_side([baseline - s for s in systems], np.int64)
    start = np.concatenate([s.sum(axis=0) for s in systems]).astype(np.int64)
    pair_sum = start + np.tile(baseline.sum(axis=0), len(systems))
    out_a = np.empty((len(systems), n_trials), dtype=np.float64)
    out_b = np.empty_like(out_a)
    width = diff.shape[1]
    min_rows = _min_rows(n_segments // 2, width)

    def piece(flips, first_row, first, last):
        """Sum trials ``first..last`` of a chunk of coins, then score A and B (one call each)."""
        sums_a = np.empty((last - first, width), dtype=np.int64)
        sums_b = np.empty_like(sums_a)
        randomization_sums(diff, start, pair_sum, flips, sums_a, sums_b, first, last)
        formula.resampled_scores(sums_a, len(systems), out_a, first_row + first)
        formula.resampled_scores(sums_b, len(systems), out_b, first_row + first)

    def launch(first_row, flips):
        return submit_chunks(piece, flips.shape[0], flips, first_row, min_chunk=min_rows)

    _pipelined(flip_chunks(rng, n_segments, n_trials), launch)
    return out_a, out_b


# -- sacrebleu's summaries ---------------------------------------------------------------

def paired_mean_ci(scores: np.ndarray) -> tuple[float, float]:
    """Mean and 95 % half-interval as ``sacrebleu.significance.estimate_ci`` computes them:
    numpy's (pairwise) mean of the sorted scores, and half the distance between the
    ``n // 40``-th smallest and largest."""
    ordered = np.sort(scores)
    low = ordered.size // 40
    high = ordered.size - low - 1
    return float(ordered.mean()), float(0.5 * (ordered[high] - ordered[low]))


def single_mean_ci(scores: np.ndarray) -> tuple[float, float]:
    """The same summary as ``Score.estimate_ci`` of a single system computes it: the mean
    is Python's ``statistics.mean`` (exact, then rounded) rather than numpy's."""
    ordered = sorted(scores.tolist())
    low = len(ordered) // 40
    high = len(ordered) - low - 1
    return _statistics.mean(ordered), 0.5 * (ordered[high] - ordered[low])


def p_value(null_statistics: np.ndarray, observed: float) -> float:
    """``(count(null_statistics > observed) + 1) / (n + 1)`` (Riezler & Maxwell, 2005).

    The strict ``>`` means a system compared with itself does not count its
    zero difference as chance; the +1 keeps the test's false rejection rate
    at or below its level for few trials.
    """
    count = int(np.sum(null_statistics > observed))
    return (count + 1) / (null_statistics.size + 1)


# -- inputs ------------------------------------------------------------------------------

def _bleu_or_default(bleu, metric=None) -> Metric:
    """The metric of ``metric=`` or its alias ``bleu=``; default ``BLEU()``."""
    if metric is not None:
        if bleu is not None:
            raise TypeError("pass metric= or its alias bleu=, not both")
        if not isinstance(metric, Metric):
            raise TypeError(f"metric must be a fastbleu metric (fastbleu.metrics.Metric), got "
                            f"{type(metric).__name__}")
        return metric
    if bleu is None:
        from .metrics import get_metric

        return get_metric("bleu")
    if not isinstance(bleu, Metric):
        raise TypeError(f"bleu must be a fastbleu.BLEU, got {type(bleu).__name__}")
    return bleu


def _is_statistics(value) -> bool:
    """A numeric numpy array (any shape: validation says what is wrong with it); an
    array of strings or objects is hypotheses."""
    return isinstance(value, np.ndarray) and (np.issubdtype(value.dtype, np.integer)
                                              or np.issubdtype(value.dtype, np.floating))


def system_statistics(systems, references, bleu, min_systems: int) -> list[np.ndarray]:
    """Each system's int64 segment statistics, from hypotheses or given as arrays."""
    if isinstance(systems, (str, bytes)) or not hasattr(systems, "__len__"):
        raise TypeError("systems must be a list: one system's hypotheses (or statistics "
                        "array) per element")
    if len(systems) < min_systems:
        raise ValueError(f"a paired test needs a baseline and at least one system; got "
                         f"{len(systems)} system(s)")
    given = [_is_statistics(system) for system in systems]
    if all(given):
        if references is not None:
            raise ValueError("systems are statistics arrays: references are not used, pass "
                             "references=None")
        stats = [validate_statistics(system, bleu.max_ngram_order,
                                     f"statistics of system {k}", ndim=(2,))
                 for k, system in enumerate(systems)]
    elif any(given):
        raise TypeError("give all systems as hypotheses or all as statistics arrays, not both")
    else:
        stats = [bleu.segment_statistics(system, references) for system in systems]
    n = stats[0].shape[0]
    for k, block in enumerate(stats):
        if block.shape[0] != n:
            raise ValueError(f"system {k} has {block.shape[0]} segments but system 0 has {n}")
    if n == 0:
        raise ValueError("no segments: resampling needs at least one")
    return stats


def _corpus_score(bleu, stats: np.ndarray) -> BLEUScore:
    return bleu.formula.score(stats.sum(axis=0))


# -- the tests ---------------------------------------------------------------------------

def confidence_interval(hypotheses, references=None, *, bleu=None,
                        n_samples: int = DEFAULT_BOOTSTRAP, seed=None,
                        sacrebleu_compat: bool = False, metric=None) -> Result:
    """Corpus BLEU with a bootstrap estimate of its mean and 95 % confidence interval.

    The percentile bootstrap (Efron & Tibshirani, 1993), as sacrebleu's
    ``corpus_score(..., n_bootstrap=n_samples)`` runs it.

    Parameters
    ----------
    hypotheses : sequence of str, a string column, or an int array
        The system's hypotheses, or its segment statistics
        (``BLEU.segment_statistics``, one row per segment).
    references : list of reference streams, optional
        Needed with hypotheses (unless ``bleu`` caches references).
    bleu : fastbleu.BLEU, optional
        The BLEU options (default ``BLEU()``); an alias of ``metric``.
    n_samples : int
        Bootstrap resamples (default 1000).
    seed : int, str or None
        See :func:`resolve_seed` (default: ``$SACREBLEU_SEED`` or 12345).
    sacrebleu_compat : bool
        Sum resamples in float32 as sacrebleu does, for its numbers bit for bit.
    metric : fastbleu.metrics.Metric, optional
        The metric (default ``BLEU()``); ``bleu`` is its alias.

    Returns
    -------
    Result
        ``score``, ``mean`` and ``ci`` (``p_value`` is None).
    """
    score = score_with_confidence(hypotheses, references, bleu=bleu, n_samples=n_samples,
                                  seed=seed, sacrebleu_compat=sacrebleu_compat, metric=metric)
    return Result(score.score, None, score.mean, score.ci)


def score_with_confidence(hypotheses, references=None, *, bleu=None,
                          n_samples: int = DEFAULT_BOOTSTRAP, seed=None,
                          sacrebleu_compat: bool = False, metric=None) -> BLEUScore:
    """As :func:`confidence_interval`, but returns the ``BLEUScore`` (which prints
    ``(μ = mean ± ci)`` as sacrebleu's does) and records ``bs`` and ``seed`` in ``bleu``'s
    signature."""
    bleu = _bleu_or_default(bleu, metric)
    n_samples = _check_count(n_samples, "n_samples")
    value, label = resolve_seed(seed)
    stats = system_statistics([hypotheses], references, bleu, 1)[0]
    score = _corpus_score(bleu, stats)
    scores = bootstrap_scores([stats], bleu.formula, n_samples,
                              np.random.default_rng(value), sacrebleu_compat)[0]
    score.set_confidence(*single_mean_ci(scores))
    bleu.n_bootstrap = n_samples
    bleu.seed = label
    return score


def paired_bootstrap(systems, references=None, *, bleu=None,
                     n_samples: int = DEFAULT_BOOTSTRAP, seed=None,
                     sacrebleu_compat: bool = False, metric=None) -> list[Result]:
    """Paired bootstrap resampling (Koehn, 2004) of every system against the first.

    All systems are scored on the same ``n_samples`` resamples of the
    segments.  For system ``s``, with ``d_r = |BLEU_s(r) - BLEU_base(r)|``,
    the p-value is ``(#{r : d_r - mean(d) > |BLEU_s - BLEU_base|} + 1) /
    (n_samples + 1)``: how often resampling alone, centred to the null
    hypothesis of no difference, gives a difference as large as the one
    observed.  ``mean``/``ci`` summarise each system's resampled scores
    (the baseline's too), as in sacrebleu.

    Parameters
    ----------
    systems : list
        The baseline first, then the systems: hypotheses (sequences of
        str or string columns) or segment statistics arrays, all of the
        same number of segments.
    references, bleu, n_samples, seed, sacrebleu_compat, metric
        As for :func:`confidence_interval`.  With many systems, pass
        ``bleu=BLEU(references=refs)`` and no ``references`` to tokenize the
        references once rather than once per system.

    Returns
    -------
    list of Result
        One per system, the baseline's with ``p_value`` None.
    """
    bleu = _bleu_or_default(bleu, metric)
    n_samples = _check_count(n_samples, "n_samples")
    value, _ = resolve_seed(seed)
    stats = system_statistics(systems, references, bleu, 2)
    return _bootstrap_test(stats, bleu.formula, n_samples, value, sacrebleu_compat)


def _bootstrap_test(stats, formula, n_samples, value, sacrebleu_compat) -> list[Result]:
    """Koehn's test on checked statistics (``value``: the resolved seed)."""
    real = [formula.score(block.sum(axis=0)).score for block in stats]
    scores = bootstrap_scores(stats, formula, n_samples, np.random.default_rng(value),
                              sacrebleu_compat)
    results = [Result(real[0], None, *paired_mean_ci(scores[0]))]
    for s in range(1, len(stats)):
        observed = abs(real[0] - real[s])
        differences = np.abs(scores[s] - scores[0])
        centred = differences - differences.mean()
        results.append(Result(real[s], p_value(centred, observed), *paired_mean_ci(scores[s])))
    return results


def paired_ar(systems, references=None, *, bleu=None, n_samples: int = DEFAULT_TRIALS,
              n_confidence: int = -1, seed=None, sacrebleu_compat: bool = False,
              metric=None) -> list[Result]:
    """Paired approximate randomization (Riezler & Maxwell, 2005) against the first system.

    In every trial a fair coin per segment decides whether the baseline's
    and the system's statistics of that segment swap; the p-value is
    ``(#{t : |BLEU(A_t) - BLEU(B_t)| > |BLEU_s - BLEU_base|} + 1) /
    (n_samples + 1)``.  All systems see the same coins, drawn as sacrebleu
    draws them.

    Parameters
    ----------
    systems, references, bleu, seed, sacrebleu_compat, metric
        As for :func:`paired_bootstrap`.
    n_samples : int
        Trials (default 10000).
    n_confidence : int
        Also estimate every system's mean and CI from this many bootstrap
        resamples (sacrebleu's ``n_ar_confidence``): ``-1`` (default) does
        not, ``0`` uses 1000.  As in sacrebleu, the baseline's resamples are
        the first draws of a fresh generator and the systems' are drawn
        after the coins.

    Returns
    -------
    list of Result
    """
    bleu = _bleu_or_default(bleu, metric)
    n_samples = _check_count(n_samples, "n_samples")
    n_confidence = _confidence_count(n_confidence)
    value, _ = resolve_seed(seed)
    stats = system_statistics(systems, references, bleu, 2)
    return _ar_test(stats, bleu.formula, n_samples, n_confidence, value, sacrebleu_compat)


def _confidence_count(n_confidence) -> int:
    """``n_confidence`` checked: ``-1`` (none) or a number of resamples (``0``: 1000)."""
    if isinstance(n_confidence, bool) or not isinstance(n_confidence, (int, np.integer)):
        raise TypeError(f"n_confidence must be an int, got {type(n_confidence).__name__}")
    if n_confidence == 0:
        n_confidence = DEFAULT_BOOTSTRAP
    elif n_confidence < -1:
        raise ValueError(f"n_confidence must be -1 (none), 0 (1000) or positive, got "
                         f"{n_confidence}")
    elif n_confidence > 0:
        n_confidence = _check_count(n_confidence, "n_confidence")
    return int(n_confidence)


def _ar_test(stats, formula, n_samples, n_confidence, value, sacrebleu_compat) -> list[Result]:
    """Riezler & Maxwell's test on checked statistics (``value``: the resolved seed)."""
    real = [formula.score(block.sum(axis=0)).score for block in stats]
    rng = np.random.default_rng(value)
    scores_a, scores_b = randomization_scores(stats[0], stats[1:], formula, n_samples, rng)
    results = [Result(real[0])]
    for s in range(1, len(stats)):
        null = np.abs(scores_a[s - 1] - scores_b[s - 1])
        results.append(Result(real[s], p_value(null, abs(real[0] - real[s]))))
    if n_confidence > 0:
        # The systems' resamples continue the generator that drew the coins; the
        # baseline's come from a fresh one (sacrebleu's _bootstrap_resample).
        systems_scores = bootstrap_scores(stats[1:], formula, n_confidence, rng,
                                          sacrebleu_compat)
        base_scores = bootstrap_scores(stats[:1], formula, n_confidence,
                                       np.random.default_rng(value), sacrebleu_compat)
        results[0].mean, results[0].ci = paired_mean_ci(base_scores[0])
        for s in range(1, len(stats)):
            results[s].mean, results[s].ci = paired_mean_ci(systems_scores[s - 1])
    return results


def paired_signature(signature, test: str, n_samples: int, seed_label: str,
                     n_confidence: int = -1) -> Signature:
    """A signature with sacrebleu's fields for a paired test: the one builder.

    Parameters
    ----------
    signature : Signature
        The metric's signature (``metric.signature(num_refs, ...)`` or
        ``metric.get_signature()``); it is copied, not changed.  A metric is
        accepted too (its ``get_signature()``), for callers not yet updated.
    test : {"bs", "ar"}
        The field of the test, set to ``n_samples``.
    n_samples : int
        Resamples (``bs``) or trials (``ar``).
    seed_label : str
        The ``seed`` field (:func:`resolve_seed`'s label).
    n_confidence : int
        With ``ar``, the bootstrap resamples of the confidence intervals
        (``bs`` field) when positive.

    Returns
    -------
    Signature
    """
    if isinstance(signature, Metric):
        signature = signature.get_signature()
    else:
        signature = signature.copy()
    signature.update("seed", seed_label)
    signature.update(test, n_samples)
    if n_confidence > 0:
        signature.update("bs", n_confidence)
    return signature


#: The paired tests by their sacrebleu names, with their default numbers of samples.
TESTS = {"bs": DEFAULT_BOOTSTRAP, "ar": DEFAULT_TRIALS}


def default_samples(test: str) -> int:
    """sacrebleu's default number of resamples (``bs``: 1000) or trials (``ar``: 10000)."""
    return TESTS[_check_test(test)]


def _check_test(test) -> str:
    if test not in TESTS:
        raise ValueError(f"unknown paired test {test!r}; choose 'bs' (paired bootstrap) or "
                         "'ar' (approximate randomization)")
    return test


def check_count(value, name: str) -> int:
    """``value`` as an int if it is a whole number of at least 1, else a TypeError/ValueError
    naming ``name`` (numbers of resamples and trials)."""
    return _check_count(value, name)


def paired_test(stats: list, formula: Formula, test: str = "bs", *, n_samples: int | None = None,
                n_confidence: int = -1, seed=None, sacrebleu_compat: bool = False
                ) -> list[Result]:
    """A paired test of every system against the first, on statistics: the one entry point.

    Paired bootstrap resampling (Koehn, 2004; see :func:`paired_bootstrap`)
    or paired approximate randomization (Riezler & Maxwell, 2005; see
    :func:`paired_ar`), with sacrebleu's draws and numbers.

    Parameters
    ----------
    stats : list of numpy.ndarray
        The baseline's segment statistics first, then each system's, all of
        the same number of rows (``metric.segment_statistics``); each is
        checked by ``formula.check_rows``.
    formula : Formula
        The metric's formula (``metric.formula``).
    test : {"bs", "ar"}
        Paired bootstrap or approximate randomization.
    n_samples : int, optional
        Resamples or trials; default :func:`default_samples`.
    n_confidence : int
        ``ar`` only: bootstrap resamples for every system's mean and CI
        (``-1``: none, ``0``: 1000).
    seed : int, str or None
        See :func:`resolve_seed`.
    sacrebleu_compat : bool
        Sum bootstrap resamples in float32 as sacrebleu does.

    Returns
    -------
    list of Result
        One per system, the baseline's first with ``p_value`` None.
    """
    test = _check_test(test)
    n_samples = check_count(default_samples(test) if n_samples is None else n_samples,
                            "n_samples")
    n_confidence = _confidence_count(n_confidence)
    if test == "bs" and n_confidence != -1:
        raise ValueError("n_confidence is for the 'ar' test; the bootstrap estimates the "
                         "confidence intervals from its own resamples")
    value, _ = resolve_seed(seed)
    if isinstance(stats, np.ndarray) or not hasattr(stats, "__len__"):
        raise TypeError("stats must be a list of statistics arrays, baseline first")
    if len(stats) < 2:
        raise ValueError(f"a paired test needs a baseline and at least one system; got "
                         f"{len(stats)} system(s)")
    stats = [formula.check_rows(block, f"statistics of system {k}")
             for k, block in enumerate(stats)]
    n = stats[0].shape[0]
    for k, block in enumerate(stats):
        if block.shape[0] != n:
            raise ValueError(f"system {k} has {block.shape[0]} segments but system 0 has {n}")
    if n == 0:
        raise ValueError("no segments: resampling needs at least one")
    if test == "bs":
        return _bootstrap_test(stats, formula, n_samples, value, sacrebleu_compat)
    return _ar_test(stats, formula, n_samples, n_confidence, value, sacrebleu_compat)
