"""NIST's information weights of a corpus read in pieces: :class:`NISTCounts` and
:class:`NISTWeights`.

NIST (Doddington, 2002) weighs a matched n-gram by its information in the
references, ``Info(w1..wk) = log2(count(w1..wk-1) / count(w1..wk))``,
counted over *every* reference of the corpus.  Scored in one call, the
corpus is that call's references.  For a corpus read in pieces (a table's
record batches, Dask partitions), the counts are summable: every piece
gives a :class:`NISTCounts` (its distinct reference n-grams, their counts
and their prefixes' keys), pieces merge by adding counts per n-gram, and
the merged counts give one :class:`NISTWeights` for every piece, so that
the pieces' statistics rows are those of the whole corpus in one call.

Memory is that of the distinct reference n-grams (about 25 bytes each, up
to ``N`` per reference word), not of the corpus.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np


def _mix(x: np.ndarray) -> np.ndarray:
    """SplitMix64's finalizer, element-wise (uint64, wrapping)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


@dataclass(frozen=True, eq=False)
class NISTCounts:
    """Reference n-gram counts of (a piece of) a corpus: summable, picklable.

    Made by :meth:`fastbleu.NIST.reference_counts`; merged with ``+`` (or
    :meth:`merge`); turned into weights by :meth:`weights`.

    Attributes
    ----------
    keys, orders, prefixes, counts : numpy.ndarray
        Per distinct n-gram: its 64-bit key, its order minus one, its
        prefix's key and its count.
    words : int
        Reference words (the count of the empty prefix).
    config : tuple
        ``(tokenizer, lowercase, max_ngram_order)`` of the metric that counted
        them: counts of other configurations do not merge.
    """

    keys: np.ndarray
    orders: np.ndarray
    prefixes: np.ndarray
    counts: np.ndarray
    words: int
    config: tuple
    #: Sorted by order, then key (:meth:`in_order`).
    canonical: bool = False

    @classmethod
    def empty(cls, config: tuple) -> NISTCounts:
        """No n-gram (the counts of a piece without references)."""
        u, i = np.zeros(0, dtype=np.uint64), np.zeros(0, dtype=np.int64)
        return cls(u, i, u, i, 0, config)

    @classmethod
    def of_tokens(cls, ref_hashes, ref_start, ref_count, config: tuple) -> NISTCounts:
        """The counts of tokenized references (``ref_count < 0``: missing)."""
        from ..._kernels.nist.corpus import count_ngrams

        keys, orders, prefixes, counts, words = count_ngrams(
            ref_hashes, np.ascontiguousarray(ref_start), np.ascontiguousarray(ref_count),
            config[2])
        return cls(keys, orders, prefixes, counts, int(words), config)

    def __len__(self) -> int:
        return int(self.keys.size)

    def merge(self, *others: NISTCounts) -> NISTCounts:
        """The counts of all these pieces together (new object; the inputs stay).

        Raises
        ------
        TypeError
            For something that is not a :class:`NISTCounts`.
        ValueError
            For counts of another tokenizer, case or n-gram order.
        """
        parts = [self, *others]
        for other in others:
            if not isinstance(other, NISTCounts):
                raise TypeError(f"can only merge NISTCounts, got {type(other).__name__}")
            if other.config != self.config:
                raise ValueError(f"cannot merge NIST reference counts of different "
                                 f"configurations (tokenizer, lowercase, max_ngram_order): "
                                 f"{self.config} vs {other.config}")
        from ..._kernels.nist.corpus import aggregate_counts

        words = sum(p.words for p in parts)
        parts = [p for p in parts if len(p)]
        if len(parts) == 1:
            base = parts[0]
            return NISTCounts(base.keys, base.orders, base.prefixes, base.counts, words,
                              self.config, base.canonical)
        if not parts:
            return NISTCounts.empty(self.config).merge_words(words)
        keys, orders, prefixes, counts = aggregate_counts(
            *(np.concatenate([getattr(p, name) for p in parts])
              for name in ("keys", "orders", "prefixes", "counts")))
        return NISTCounts(keys, orders, prefixes, counts, words, self.config)

    def in_order(self) -> NISTCounts:
        """These counts sorted by order, then key (what :meth:`weights` reads)."""
        if self.canonical:
            return self
        order = np.lexsort((self.keys, self.orders))
        return NISTCounts(self.keys[order], self.orders[order], self.prefixes[order],
                          self.counts[order], self.words, self.config, True)

    def merge_words(self, words: int) -> NISTCounts:
        """These counts with another word total (a piece of empty references)."""
        return NISTCounts(self.keys, self.orders, self.prefixes, self.counts, words,
                          self.config, True)

    def digest(self) -> bytes:
        """A digest of the counts as a multiset, whatever their order: two 64-bit sums of
        a mix of every entry (different counts agree with probability about 2**-128,
        far below that of two n-grams sharing a 64-bit key)."""
        with np.errstate(over="ignore"):
            entry = (self.keys ^ (self.prefixes * np.uint64(0x9E3779B97F4A7C15))
                     ^ (self.orders.astype(np.uint64) << np.uint64(59))
                     ^ (self.counts.astype(np.uint64) * np.uint64(0xC2B2AE3D27D4EB4F)))
            sums = [int(_mix(entry ^ np.uint64(seed)).sum(dtype=np.uint64))
                    for seed in (0x243F6A8885A308D3, 0x13198A2E03707344)]
        return repr((sums, self.words, len(self), self.config)).encode()

    def __add__(self, other: NISTCounts) -> NISTCounts:
        return self.merge(other)

    def weights(self, variant: str = "nltk") -> NISTWeights:
        """The information weight of every n-gram, as one call over the whole corpus gives.

        NLTK's weight is ``math.log(prefix / count, 2)``; mteval-v13a's
        ``-log(count / prefix) / log(2)``, a bigram whose first word is ``0``
        weighed against all words (Perl reads the prefix ``"0"`` as false).
        N-grams whose prefix occurs once weigh exactly 0, as do their
        extensions: they are left out of the table, as
        :func:`fastbleu._kernels.nist.information_weights` leaves them out.
        """
        from ..._kernels.text.hashing import hash_bytes
        from ..._kernels.nist.corpus import weight_table

        mteval = variant == "mteval"
        counted = self.in_order()
        keys, orders = counted.keys, counted.orders
        prefixes, counts = counted.prefixes, counted.counts
        prefix_count = np.full(keys.size, self.words, dtype=np.int64)
        bounds = np.searchsorted(orders, np.arange(self.config[2] + 1))
        for k in range(1, self.config[2]):
            lo, hi = bounds[k], bounds[k + 1]
            plo, phi = bounds[k - 1], bounds[k]
            at = plo + np.searchsorted(keys[plo:phi], prefixes[lo:hi])
            prefix_count[lo:hi] = counts[np.minimum(at, max(phi - 1, 0))]
        if self.words >= 1 << 31:
            raise ValueError(f"NIST's reference counts hold {self.words} words; at most 2**31 - 1 "
                             "are supported")
        keep = (orders == 0) | (prefix_count >= 2)
        if mteval:
            zero = hash_bytes(np.frombuffer(b"0", dtype=np.uint8), 0, 1)
            quirk = (orders == 1) & (prefixes == zero)
            prefix_count[quirk] = self.words
            keep |= quirk
        keys, orders = keys[keep], orders[keep]
        if not keys.size:
            table, shift = weight_table(keys, orders)
            return NISTWeights(table, shift, np.zeros(0), variant, self.config)
        # one logarithm per distinct (prefix count, count) pair, in Python's own math.log
        # (NLTK's); the pair packed into one int64 (counts are below 2**31 here)
        packed = (prefix_count[keep] << 32) | counts[keep]
        pairs, inverse = np.unique(packed, return_inverse=True)
        if mteval:  # mteval-v13a: - log(count / prefix) / log 2
            values = [-math.log((x & 0xFFFFFFFF) / (x >> 32)) / math.log(2)
                      for x in pairs.tolist()]
        else:  # NLTK: math.log(prefix / count, 2)
            values = [math.log((x >> 32) / (x & 0xFFFFFFFF), 2) for x in pairs.tolist()]
        weight = np.asarray(values, dtype=np.float64)[np.asarray(inverse).ravel()]
        table, shift = weight_table(np.ascontiguousarray(keys), np.ascontiguousarray(orders))
        return NISTWeights(table, shift, np.ascontiguousarray(weight), variant, self.config)


@dataclass(frozen=True, eq=False)
class NISTWeights:
    """Fixed information weights: the n-grams of a corpus's references and their weights.

    Made by :meth:`NISTCounts.weights`; given to :meth:`fastbleu.NIST.with_weights`.
    Picklable (numpy arrays), to broadcast to the workers of a cluster.
    """

    table: np.ndarray
    shift: np.uint64
    weight: np.ndarray
    variant: str
    config: tuple

    def for_references(self, ref_hashes, ref_start, ref_count):
        """``(base, rows, table, weight, shift)`` for
        :func:`fastbleu._kernels.nist.segment_matches`, the weights being these."""
        from ..._kernels.nist.corpus import reference_rows

        base, rows = reference_rows(ref_hashes, np.ascontiguousarray(ref_start),
                                    np.ascontiguousarray(ref_count), self.config[2],
                                    self.table, self.shift)
        weight = self.weight if self.weight.size else np.zeros(1, dtype=np.float64)
        return base, rows, self.table, weight, self.shift
