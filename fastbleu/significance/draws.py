"""sacrebleu's bootstrap draws, ``rng.choice(n, size=(k, n))``, made on every core.

The values are numpy's own, to the last index, and the generator is left
where numpy's one call would leave it; only the work is spread.  How (see
:mod:`fastbleu._kernels.draws` for the generator and Lemire's method):

1. The draws of a chunk are cut into pieces.  Piece ``j`` would start ``j *
   D`` words into the chunk if no word were rejected, so each piece first
   scans those ``D`` words for rejected ones, all pieces at once.
2. The rejected positions, in order, say exactly which word each piece's
   first draw comes from (a draw ``d`` is word ``d + k``, ``k`` the rejected
   words before it); a few words past the chunk are scanned, one after the
   other, for the draws that rejections pushed beyond it.
3. Each piece then draws from its exact word, all pieces at once.

Scanning costs about as much as drawing, so with few threads (the pool has
fewer than :data:`PARALLEL_FROM_THREADS`) the calling thread draws the
whole chunk itself, as numpy would, while the pool counts the previous one.
Other bit generators than numpy's default (PCG64), a generator holding half
of a 64-bit output, and ``n`` outside ``2 .. 2**32 - 1`` are drawn by numpy.
"""

from __future__ import annotations

import numpy as np

from .._kernels.draws import bounded_draws, coin_flips, rejected_words
from .._kernels.threads import in_pool_thread, pool_size, submit

#: With fewer pool threads than this, a chunk is drawn on the calling thread.
PARALLEL_FROM_THREADS = 4
#: Fewest draws in a piece.
MIN_PIECE = 1 << 16
#: Pieces of a chunk per pool thread.  One: a piece's draws cost the same whatever its
#: place, and each piece is two hand-overs of the calling thread (about 20 us of its CPU
#: each), which with four a thread (a chunk of 4M draws in 64 pieces at 16 threads) cost
#: the calling thread about as long as the pool took to draw the chunk.
PIECES_PER_THREAD = 1
#: Room for rejected positions: this many times the expected count, plus 64.
ROOM = 2

_M64 = (1 << 64) - 1


class _Stream:
    """A PCG64 generator's stream of 32-bit words, drawn from anywhere by the kernels.

    ``exact``: the generator is numpy's default (PCG64) and holds no half output;
    otherwise the subclass lets numpy draw.  ``position``: words used so far.
    """

    def __init__(self, rng: np.random.Generator, parallel: bool | None):
        self.rng, self.parallel, self.position = rng, parallel, 0
        generator = rng.bit_generator if isinstance(rng, np.random.Generator) else None
        state = generator.state if type(generator) is np.random.PCG64 else None
        self.exact = state is not None and not state["has_uint32"]
        self.base = state
        if self.exact:
            value, inc = state["state"]["state"], state["state"]["inc"]
            self.words = np.array([value >> 64, value & _M64, inc >> 64, inc & _M64],
                                  dtype=np.uint64).view(np.int64)

    def _bounds(self, total: int, unit: int = 1) -> list[int]:
        """Pieces of ``range(total)`` for the pool (one piece on few threads), cut at
        multiples of ``unit``."""
        parallel = self.parallel
        if parallel is None:
            parallel = pool_size() >= PARALLEL_FROM_THREADS and not in_pool_thread()
        pieces = max(1, min(PIECES_PER_THREAD * pool_size(), total // MIN_PIECE)) \
            if parallel else 1
        cuts = [total * j // pieces // unit * unit for j in range(pieces)]
        return sorted(set(cuts)) + [total]

    def close(self) -> None:
        """Leave the generator where numpy's draws would have left it."""
        if not self.exact:
            return
        generator = np.random.PCG64()
        generator.state = self.base
        generator.advance(self.position // 2)
        state = generator.state
        if self.position % 2:  # the low half of the next output was used: numpy keeps the high
            output = int(generator.random_raw(1)[0])
            state = generator.state
            state["has_uint32"], state["uinteger"] = 1, output >> 32
        self.rng.bit_generator.state = state


class IndexDraws(_Stream):
    """``rng.choice(n, size=(rows, n))`` chunk after chunk (:meth:`take`), the values of
    the one big call; :meth:`close` leaves ``rng`` where that call would have.

    ``width``: draws a row (``n``, as sacrebleu's resamples).  ``parallel``: ``None``
    decides by the pool's size; ``True``/``False`` force the two ways (the tests
    compare both with numpy).
    """

    def __init__(self, rng: np.random.Generator, n: int, width: int | None = None,
                 parallel: bool | None = None):
        super().__init__(rng, parallel)
        self.n = int(n)
        self.width = self.n if width is None else int(width)
        self.exact = self.exact and 2 <= self.n < 1 << 32
        self.threshold = ((1 << 32) - self.n) % self.n if self.exact else 0
        self._ahead = None  # (first word, bounds, scans) of the next chunk, started early

    def take(self, rows: int, ahead: int = 0) -> np.ndarray:
        """The next ``rows`` resamples: int64 ``(rows, width)``.  ``ahead``: the rows the
        next call will take (0: none or unknown); drawn on the pool, its scan is started
        with this chunk's draws, so that the pool never waits for the calling thread
        between chunks."""
        if not self.exact:
            return self.rng.choice(self.n, size=(rows, self.width), replace=True)
        out = np.empty((rows, self.width), dtype=np.int64)
        flat = out.reshape(-1)
        bounds = self._bounds(flat.shape[0])
        if len(bounds) == 2:
            self.position += bounded_draws(self.words, self.position, self.n, flat)
            return out
        scans = self._scans_from(self.position, bounds)
        starts, end = self._piece_starts(bounds, scans)
        futures = [submit(bounded_draws, self.words, starts[j], self.n,
                          flat[bounds[j]:bounds[j + 1]]) for j in range(len(bounds) - 1)]
        if ahead:
            following = self._bounds(ahead * self.width)
            if len(following) > 2:
                self._ahead = (end, following, self._scan(end, following))
        used = [future.result() for future in futures]
        if starts[-1] + used[-1] != end:  # the scan and the draws disagree: a bug
            raise RuntimeError("fastbleu: parallel draws lost their place in the stream")
        self.position = end
        return out

    def close(self) -> None:
        ahead, self._ahead = getattr(self, "_ahead", None), None
        if ahead is not None:  # a scan started for a chunk that was not taken
            for *_, future in ahead[2]:
                future.result()
        super().close()

    # -- where the words are ------------------------------------------------------------

    def _scans_from(self, first: int, bounds: list[int]) -> list:
        """The scans of the chunk of ``bounds`` from word ``first``: those started ahead
        by the call before when they are for this very chunk, else started now."""
        ahead, self._ahead = getattr(self, "_ahead", None), None
        if ahead is not None:
            if ahead[0] == first and ahead[1] == bounds:
                return ahead[2]
            for *_, future in ahead[2]:
                future.result()
        return self._scan(first, bounds)

    def _scan(self, first: int, bounds: list[int]) -> list:
        """Start each piece's scan for rejected words on the pool."""
        rate = self.threshold / 2.0 ** 32
        scans = []
        for j in range(len(bounds) - 1):
            words = bounds[j + 1] - bounds[j]
            room = np.empty(int(words * rate * ROOM) + 64, dtype=np.int64)
            scans.append((first + bounds[j], words, room,
                          submit(rejected_words, self.words, first + bounds[j], words,
                                 self.n, room)))
        return scans

    def _piece_starts(self, bounds: list[int], scans: list) -> tuple[list[int], int]:
        """The word each piece's first draw comes from, and the word after the last draw."""
        first, total = self.position, bounds[-1]
        rejected = []
        for start, words, room, future in scans:
            found = future.result()
            if found > room.shape[0]:  # far more than expected: scan again with room for all
                room = np.empty(found, dtype=np.int64)
                rejected_words(self.words, start, words, self.n, room)
            rejected.append(room[:found] + (start - first))
        scanned = total
        missing = sum(part.shape[0] for part in rejected)
        while missing:  # draws that rejected words pushed past the chunk
            room = np.empty(missing, dtype=np.int64)
            found = rejected_words(self.words, first + scanned, missing, self.n, room)
            rejected.append(room[:found] + scanned)
            scanned, missing = scanned + missing, found
        positions = np.concatenate(rejected)
        # word of draw d = d + (rejected words before it) = d + #{k : positions[k] - k <= d}
        accepted_before = positions - np.arange(positions.shape[0])
        starts = [first + d + int(np.searchsorted(accepted_before, d, side="right"))
                  for d in bounds[:-1]]
        last = total - 1
        end = first + last + int(np.searchsorted(accepted_before, last, side="right")) + 1
        return starts, end


class FlipDraws(_Stream):
    """``rng.integers(2, size=(rows, n), dtype=bool)`` chunk after chunk (:meth:`take`):
    approximate randomization's coins, each call's as numpy's.  numpy takes 32 coins
    from each 32-bit word and drops the rest of a call's last word, so a call uses
    ``ceil(rows * n / 32)`` words and pieces start at whole words."""

    def __init__(self, rng: np.random.Generator, n: int, parallel: bool | None = None):
        super().__init__(rng, parallel)
        self.n = int(n)

    def take(self, rows: int) -> np.ndarray:
        if not self.exact:
            return self.rng.integers(2, size=(rows, self.n), dtype=bool)
        out = np.empty((rows, self.n), dtype=np.bool_)
        flat = out.reshape(-1)
        bounds = self._bounds(flat.shape[0], unit=32)
        if len(bounds) == 2:
            coin_flips(self.words, self.position, flat)
            self.position += -(-flat.shape[0] // 32)
            return out
        futures = [submit(coin_flips, self.words, self.position + bounds[j] // 32,
                          flat[bounds[j]:bounds[j + 1]]) for j in range(len(bounds) - 1)]
        for future in futures:
            future.result()
        self.position += -(-flat.shape[0] // 32)
        return out
