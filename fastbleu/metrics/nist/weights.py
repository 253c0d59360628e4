"""NIST's information weights of a corpus read in pieces: :class:`NISTCounts` and
:class:`NISTWeights`.

NIST (Doddington, 2002) weighs a matched n-gram by its information in the
references, ``Info(w1..wk) = log2(count(w1..wk-1) / count(w1..wk))``,
counted over *every* reference of the corpus.  Scored in one call, the
corpus is that call's references.  For a corpus read in pieces (a table's
record batches, Dask partitions), the counts are summable: every piece
gives a :class:`NISTCounts` (its distinct reference n-grams and their
counts), pieces merge by adding counts per n-gram, and the merged counts
give one :class:`NISTWeights` for every piece, so that the pieces'
statistics rows are those of the whole corpus in one call.

Memory is that of the distinct reference n-grams, not of the corpus: 16
bytes an n-gram in a table 3/8 to 3/4 full
(:mod:`fastbleu._kernels.nist.counts`), checked before it grows
(:mod:`fastbleu.metrics.nist.memory`).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .memory import check_table

#: Reference words a corpus may have (a count and its prefix's must divide exactly).
MAX_WORDS = (1 << 31) - 1


_SEEDS = np.array([0x243F6A8885A308D3, 0x13198A2E03707344], dtype=np.uint64)


def _check_words(words: int) -> None:
    if words > MAX_WORDS:
        raise ValueError(f"NIST's reference counts hold {words} words; at most 2**31 - 1 are "
                         "supported")


class CountsBuilder:
    """A corpus's reference counts while they are counted: a table grown in place.

    Every new table is first checked
    (:func:`~fastbleu.metrics.nist.memory.check_table`): one that does not
    fit raises :class:`~fastbleu.metrics.nist.memory.NISTMemoryError`.
    :meth:`finish` hands the table over as :class:`NISTCounts`.
    """

    def __init__(self, config: tuple, expected: int = 0):
        from ..._kernels.nist.counts import rows_for

        self.config = config
        self.words = 0
        self.size = 0
        bits = rows_for(expected)
        check_table(16 << bits)
        self.table = np.zeros((1 << bits, 2), dtype=np.uint64)

    @classmethod
    def resume(cls, counts: NISTCounts) -> CountsBuilder:
        """A builder that goes on counting into ``counts``'s own table (in place: ``counts``
        is not to be used after)."""
        builder = cls.__new__(cls)
        builder.config = counts.config
        builder.words, builder.size, builder.table = counts.words, counts.size, counts.table
        return builder

    @property
    def _shift(self) -> np.uint64:
        return np.uint64(64 - self.table.shape[0].bit_length() + 1)

    def _grow(self, at_least: int) -> None:
        from ..._kernels.nist.counts import rehash, rows_for

        bits = max(rows_for(at_least), self.table.shape[0].bit_length())  # at least double
        check_table(16 << bits, self.table.nbytes, self.size)
        bigger = np.zeros((1 << bits, 2), dtype=np.uint64)
        rehash(self.table, bigger)
        self.table = bigger

    def add_references(self, ref_hashes, ref_start, ref_count, rows=None,
                       times=None) -> CountsBuilder:
        """Count the references of segments ``rows`` (an index array; None: all), each
        ``times`` times (an array like ``rows``; None: once)."""
        from ..._kernels.nist.counts import count_references, load_limit

        ref_start = np.ascontiguousarray(ref_start, dtype=np.int64)
        ref_count = np.ascontiguousarray(ref_count, dtype=np.int64)
        if rows is None:
            rows = np.arange(ref_count.shape[1], dtype=np.int64)
        rows = np.ascontiguousarray(rows, dtype=np.int64)
        times = np.ones(rows.size, dtype=np.int64) if times is None else \
            np.ascontiguousarray(times, dtype=np.int64)
        first = 0
        while True:
            first, self.size, words = count_references(
                self.table, self._shift, self.size, load_limit(self.table), ref_hashes,
                ref_start, ref_count, rows, times, first, self.config[2])
            self.words += int(words)
            if first >= rows.size:
                break
            self._grow(2 * self.size + 1)
        _check_words(self.words)
        return self

    def add(self, counts: NISTCounts) -> CountsBuilder:
        """Add another piece's counts (same configuration)."""
        from ..._kernels.nist.counts import add_table, load_limit

        first = 0
        while True:
            first, self.size = add_table(self.table, self._shift, self.size,
                                         load_limit(self.table), counts.table, first)
            if first >= counts.table.shape[0]:
                break
            self._grow(2 * self.size + 1)
        self.words += counts.words
        _check_words(self.words)
        return self

    def finish(self) -> NISTCounts:
        """The counts (the builder is not to be used after)."""
        counts = NISTCounts(self.table, self.size, self.words, self.config)
        self.table = None
        return counts


@dataclass(frozen=True, eq=False)
class NISTCounts:
    """Reference n-gram counts of (a piece of) a corpus: summable, picklable.

    Made by :meth:`fastbleu.NIST.reference_counts`; merged with ``+`` (or
    :meth:`merge`); turned into weights by :meth:`weights`.

    Attributes
    ----------
    table : numpy.ndarray
        uint64 ``(2**bits, 2)``: a row ``[key, order << 40 | count]`` per
        distinct n-gram (order from 1), the others zero
        (:mod:`fastbleu._kernels.nist.counts`).
    size : int
        Distinct n-grams.
    words : int
        Reference words (the count of the empty prefix).
    config : tuple
        ``(tokenizer, lowercase, max_ngram_order)`` of the metric that counted
        them: counts of other configurations do not merge.
    """

    table: np.ndarray
    size: int
    words: int
    config: tuple

    @classmethod
    def empty(cls, config: tuple) -> NISTCounts:
        """No n-gram (the counts of a piece without references)."""
        return CountsBuilder(config).finish()

    @classmethod
    def of_tokens(cls, ref_hashes, ref_start, ref_count, config: tuple) -> NISTCounts:
        """The counts of tokenized references (``ref_count < 0``: missing)."""
        ref_count = np.asarray(ref_count)
        # about the distinct n-grams of text without repeats, for a table that seldom grows
        words = int(np.maximum(ref_count, 0).sum())
        expected = min(words * config[2] // 4, 1 << 20)
        builder = CountsBuilder(config, expected)
        return builder.add_references(ref_hashes, ref_start, ref_count).finish()

    @property
    def shift(self) -> np.uint64:
        """The table's Fibonacci-hashing shift (64 - bits)."""
        return np.uint64(64 - self.table.shape[0].bit_length() + 1)

    def __len__(self) -> int:
        return int(self.size)

    def merge(self, *others: NISTCounts) -> NISTCounts:
        """The counts of all these pieces together (new object; the inputs stay).

        Raises
        ------
        TypeError
            For something that is not a :class:`NISTCounts`.
        ValueError
            For counts of another tokenizer, case or n-gram order.
        NISTMemoryError
            When the merged counts would not fit in memory.
        """
        for other in others:
            if not isinstance(other, NISTCounts):
                raise TypeError(f"can only merge NISTCounts, got {type(other).__name__}")
            if other.config != self.config:
                raise ValueError(f"cannot merge NIST reference counts of different "
                                 f"configurations (tokenizer, lowercase, max_ngram_order): "
                                 f"{self.config} vs {other.config}")
        parts = sorted([self, *others], key=len, reverse=True)
        words = sum(p.words for p in parts)
        _check_words(words)
        if len(parts) == 1 or not len(parts[1]):  # nothing to add but words
            return NISTCounts(parts[0].table, parts[0].size, words, self.config)
        largest = parts[0]  # copied, the others added to the copy
        check_table(largest.table.nbytes, 0, largest.size)
        builder = CountsBuilder.resume(NISTCounts(largest.table.copy(), largest.size,
                                                  largest.words, self.config))
        for part in parts[1:]:
            builder.add(part)
        return builder.finish()

    def divisor(self) -> int:
        """The greatest common divisor of every count and of the word total (1: none)."""
        from ..._kernels.nist.counts import counts_gcd

        return int(counts_gcd(self.table, self.words)) if self.words else 1

    def reduced(self) -> NISTCounts:
        """These counts and the word total divided by their greatest common divisor.

        Every weight is a ratio of two of them, and a float quotient of two
        integers is their exact ratio correctly rounded, so the weights do not
        change; a table of several passes over the same references (``k``
        systems' rows) reduces to one pass's counts, which :meth:`digest` then
        finds equal.
        """
        from ..._kernels.nist.counts import divide

        divisor = self.divisor()
        if divisor <= 1:
            return self
        table = self.table.copy()
        divide(table, divisor)
        return NISTCounts(table, self.size, self.words // divisor, self.config)

    def __add__(self, other: NISTCounts) -> NISTCounts:
        return self.merge(other)

    def digest(self, reduced: bool = False) -> bytes:
        """A digest of the counts as a multiset, whatever the table's size and layout: two
        64-bit sums of a mix of every row (different counts agree with probability about
        2**-128, far below that of two n-grams sharing a 64-bit key).  With ``reduced``,
        that of :meth:`reduced` (without making it)."""
        from ..._kernels.nist.counts import digest_sums

        divisor = self.divisor() if reduced else 1
        sums = digest_sums(self.table, divisor, _SEEDS)
        return repr(([int(x) for x in sums], self.words // divisor, len(self),
                     self.config)).encode()

    def weights(self, variant: str = "nltk") -> NISTWeights:
        """The information weights of these counts, as one call over the whole corpus has them.

        No copy: a weight is computed from two counts when a match needs it
        (:mod:`fastbleu._kernels.nist.matches`): NLTK's ``math.log(prefix /
        count, 2)``, or mteval-v13a's ``-log(count / prefix) / log(2)`` with a
        bigram whose first word is ``0`` weighed against all words (Perl reads
        the prefix ``"0"`` as false).
        """
        return NISTWeights(self, variant, self.config)


@dataclass(frozen=True, eq=False)
class NISTWeights:
    """Fixed information weights: a corpus's reference counts, read as weights of a variant.

    Made by :meth:`NISTCounts.weights`; given to :meth:`fastbleu.NIST.with_weights`.
    Picklable (numpy arrays), to broadcast to the workers of a cluster.
    """

    counts: NISTCounts
    variant: str
    config: tuple

    def kernel_arguments(self) -> tuple:
        """``(table, shift, words, zero_hash)`` for
        :func:`fastbleu._kernels.nist.matches.segment_matches`."""
        return kernel_arguments(self.counts, self.variant)


def kernel_arguments(counts: NISTCounts, variant: str) -> tuple:
    """``(table, shift, words, zero_hash)`` of ``counts`` for the matches kernel: mteval's
    quirk needs the token hash of ``0`` (0 for NLTK: no quirk)."""
    zero = np.uint64(0)
    if variant == "mteval":
        from ..._kernels.text.hashing import hash_bytes

        zero = hash_bytes(np.frombuffer(b"0", dtype=np.uint8), 0, 1)
    return counts.table, counts.shift, counts.words, zero
