"""Bootstrap draws made on the pool (fastbleu.significance.draws) are numpy's own values,
and leave the generator where numpy's one call would have."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fastbleu.significance import draws as draws_module
from fastbleu.significance import resampling
from fastbleu.significance.draws import FlipDraws, IndexDraws

#: Segment counts with no rejection (powers of two), few, about half (2**31 + 11), and
#: the largest numpy draws with 32-bit words.
SIZES = [2, 3, 7, 1000, 1024, 999_983, 1_000_000, 2**31 + 11, 3_000_000_000, 2**32 - 1]


def _numpy(seed, n, rows, width):
    rng = np.random.default_rng(seed)
    values = rng.choice(n, size=(sum(rows), width), replace=True)
    return values, rng.integers(0, 2**62, size=4)


def _ours(seed, n, rows, width, parallel, hint="none"):
    """``hint``: what each call says of the next (``ahead``): nothing, the truth, or a
    wrong size (its scan started early is then not used)."""
    rng = np.random.default_rng(seed)
    draws = IndexDraws(rng, n, width=width, parallel=parallel)
    following = list(rows[1:]) + [0]
    ahead = {"none": [0] * len(rows), "next": following,
             "wrong": [r + 1 for r in following]}[hint]
    values = np.concatenate([draws.take(r, a) for r, a in zip(rows, ahead)])
    draws.close()
    return values, rng.integers(0, 2**62, size=4)


@pytest.fixture
def small_pieces(monkeypatch):
    monkeypatch.setattr(draws_module, "MIN_PIECE", 64)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**63), n=st.sampled_from(SIZES),
       rows=st.lists(st.integers(1, 4), min_size=1, max_size=4),
       width=st.integers(1, 3000), parallel=st.booleans(),
       hint=st.sampled_from(["none", "next", "wrong"]))
def test_same_values_and_state_as_numpy(seed, n, rows, width, parallel, hint):
    draws_module.MIN_PIECE, saved = 64, draws_module.MIN_PIECE
    try:
        theirs, after = _numpy(seed, n, rows, width)
        ours, ours_after = _ours(seed, n, rows, width, parallel, hint)
    finally:
        draws_module.MIN_PIECE = saved
    assert np.array_equal(ours, theirs)
    assert np.array_equal(ours_after, after)  # the stream goes on where numpy's would


def test_room_for_rejections_runs_out(monkeypatch, small_pieces):
    """Half the words rejected and no room planned: each piece scans again."""
    monkeypatch.setattr(draws_module, "ROOM", 0)
    theirs, after = _numpy(3, 2**31 + 11, [2, 3], 5000)
    ours, ours_after = _ours(3, 2**31 + 11, [2, 3], 5000, True)
    assert np.array_equal(ours, theirs) and np.array_equal(ours_after, after)


@pytest.mark.parametrize("half", [False, True])
def test_other_generators_are_drawn_by_numpy(half, small_pieces):
    """A bit generator other than numpy's default, or one holding half of a 64-bit
    output: numpy draws, with the same values."""
    if half:
        rng, twin = np.random.default_rng(4), np.random.default_rng(4)
        for g in (rng, twin):
            g.integers(0, 10, size=1, dtype=np.uint32)  # one 32-bit word: half an output
        assert rng.bit_generator.state["has_uint32"]
    else:
        rng, twin = (np.random.Generator(np.random.MT19937(4)) for _ in range(2))
    draws = IndexDraws(rng, 1000, parallel=True)
    assert not draws.exact
    assert np.array_equal(draws.take(3), twin.choice(1000, size=(3, 1000)))
    draws.close()
    assert rng.integers(0, 2**62) == twin.integers(0, 2**62)


def test_one_segment_draws_nothing(small_pieces):
    rng, twin = np.random.default_rng(1), np.random.default_rng(1)
    draws = IndexDraws(rng, 1, parallel=True)
    assert np.array_equal(draws.take(2), twin.choice(1, size=(2, 1)))
    draws.close()
    assert rng.integers(0, 2**62) == twin.integers(0, 2**62)


def test_bootstrap_on_the_pool_equals_bootstrap_on_one_thread(monkeypatch, small_pieces):
    """The whole exact bootstrap, drawn in pieces on the pool, against numpy's own draws."""
    from fastbleu import BLEU

    rng = np.random.default_rng(8)
    stats = [np.column_stack([rng.integers(0, 40, size=(5000, 8)),
                              rng.integers(1, 40, size=(5000, 1)),
                              rng.integers(1, 40, size=(5000, 1))]).astype(np.int64)
             for _ in range(2)]
    for block in stats:  # matches <= totals, as real statistics
        block[:, :4] = np.minimum(block[:, :4], block[:, 4:8])
    formula = BLEU().formula
    monkeypatch.setattr(draws_module, "PARALLEL_FROM_THREADS", 1)
    monkeypatch.setattr(resampling, "_MIN_COUNT", 5000)  # one row a counting job
    pooled = resampling.bootstrap_scores(stats, formula, 30, np.random.default_rng(12345))
    monkeypatch.setattr(draws_module, "PARALLEL_FROM_THREADS", 10**6)
    alone = resampling.bootstrap_scores(stats, formula, 30, np.random.default_rng(12345))
    monkeypatch.setattr(resampling, "IndexDraws", _NumpyDraws)
    numpy_drawn = resampling.bootstrap_scores(stats, formula, 30, np.random.default_rng(12345))
    assert np.array_equal(pooled, alone) and np.array_equal(pooled, numpy_drawn)


class _NumpyDraws:
    """numpy's own ``choice``, chunk by chunk: the reference for the test above."""

    def __init__(self, rng, n):
        self.rng, self.n = rng, n

    def take(self, rows, ahead=0):
        return self.rng.choice(self.n, size=(rows, self.n), replace=True)

    def close(self):
        pass


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**63), n=st.integers(1, 3000),
       rows=st.lists(st.integers(1, 5), min_size=1, max_size=4), parallel=st.booleans(),
       offset=st.integers(0, 3))
def test_coin_flips_are_numpys(seed, n, rows, parallel, offset):
    """Each take is one numpy call (a call drops the rest of its last 32-coin word),
    from a generator that may hold half of an output (``offset`` words drawn before)."""
    draws_module.MIN_PIECE, saved = 64, draws_module.MIN_PIECE
    try:
        rng, twin = np.random.default_rng(seed), np.random.default_rng(seed)
        for g in (rng, twin):
            g.integers(0, 10, size=offset, dtype=np.uint32)
        flips = FlipDraws(rng, n, parallel=parallel)
        ours = [flips.take(r) for r in rows]
        flips.close()
    finally:
        draws_module.MIN_PIECE = saved
    theirs = [twin.integers(2, size=(r, n), dtype=bool) for r in rows]
    assert all(np.array_equal(a, b) for a, b in zip(ours, theirs))
    assert rng.integers(0, 2**62) == twin.integers(0, 2**62)


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 400), samples=st.integers(1, 70), min_count=st.integers(1, 2000),
       budget=st.sampled_from([1 << 12, 1 << 14, 1 << 25]))
def test_bootstrap_counted_in_pieces_of_rows_equals_one_job_a_block(n, samples, min_count,
                                                                     budget):
    """Blocks of draws counted in pieces of whole rows on the pool (many threads) give
    the scores of one counting job a block (one thread), and numpy's draws' scores, for
    any segment count, resamples, piece and batch size."""
    from fastbleu import BLEU

    rng = np.random.default_rng(n * 1000 + samples)
    stats = [np.column_stack([rng.integers(0, 40, size=(n, 8)),
                              rng.integers(1, 40, size=(n, 1)),
                              rng.integers(1, 40, size=(n, 1))]).astype(np.int64)
             for _ in range(2)]
    for block in stats:
        block[:, :4] = np.minimum(block[:, :4], block[:, 4:8])
    formula = BLEU().formula
    saved = (draws_module.PARALLEL_FROM_THREADS, resampling._MIN_COUNT,
             resampling._COUNT_BUDGET, resampling.IndexDraws)
    try:
        resampling._COUNT_BUDGET = budget  # batches of a few resamples, several blocks each
        draws_module.PARALLEL_FROM_THREADS, resampling._MIN_COUNT = 1, min_count
        pieces = resampling.bootstrap_scores(stats, formula, samples, np.random.default_rng(7))
        draws_module.PARALLEL_FROM_THREADS = 10**6
        whole = resampling.bootstrap_scores(stats, formula, samples, np.random.default_rng(7))
        resampling.IndexDraws = _NumpyDraws
        numpy_drawn = resampling.bootstrap_scores(stats, formula, samples,
                                                  np.random.default_rng(7))
    finally:
        (draws_module.PARALLEL_FROM_THREADS, resampling._MIN_COUNT,
         resampling._COUNT_BUDGET, resampling.IndexDraws) = saved
    assert np.array_equal(pieces, whole) and np.array_equal(pieces, numpy_drawn)
