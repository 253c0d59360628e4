"""numpy's ``Generator.choice(n, size)`` draws, made anywhere in the stream: the kernels.

``numpy.random.default_rng(seed)`` is a PCG64 bit generator (O'Neill, 2014,
"PCG: A family of simple fast space-efficient statistically good algorithms
for random number generation"): a 128-bit linear congruential state, stepped
before each 64-bit output, which is the XSL-RR permutation of the new state.
``choice(n, size)`` with replacement draws each index with Lemire's method
(Lemire, 2019, "Fast random integer generation in an interval") on 32-bit
words taken from the outputs low half first: ``m = word * n``; the index is
``m >> 32``; the word is rejected, and the next one tried, when ``m``'s low 32
bits are below ``2**32 mod n``.

Whether a word is rejected depends on the word alone, so the stream of draws
is the stream of words without the rejected ones.  That lets the caller
(:mod:`fastbleu.significance.draws`) cut a long draw into pieces for the
thread pool and still give numpy's values: :func:`rejected_words` finds the
rejected positions of stretches of words (in parallel), which fixes where each
piece of draws starts, and :func:`bounded_draws` then makes each piece.  Both
start anywhere in the stream: the LCG jumps there in O(log n) steps.

The 128-bit arithmetic is done on pairs of uint64 (high, low).
"""

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic

_MASK32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_S58 = np.uint64(58)
_S63 = np.uint64(63)
_ONE = np.uint64(1)
_ZERO = np.uint64(0)
#: PCG's default 128-bit multiplier, as (high, low).
_MUL_HI = np.uint64(2549297995355413924)
_MUL_LO = np.uint64(4865540595714422341)


@intrinsic
def _mul_high(typingctx, a, b):
    """The high 64 bits of the 128-bit product of two uint64 (one machine multiply)."""
    def codegen(context, builder, signature, args):
        wide = ir.IntType(128)
        product = builder.mul(builder.zext(args[0], wide), builder.zext(args[1], wide))
        return builder.trunc(builder.lshr(product, ir.Constant(wide, 64)), ir.IntType(64))
    return types.uint64(types.uint64, types.uint64), codegen


@njit(cache=True, nogil=True, inline="always")
def _step(hi, lo, inc_hi, inc_lo):
    """``state * multiplier + increment`` mod 2**128, on (high, low) uint64 pairs."""
    hi, lo = _mul128(hi, lo, _MUL_HI, _MUL_LO)
    return _add128(hi, lo, inc_hi, inc_lo)


@njit(cache=True, nogil=True, inline="always")
def _mul128(a_hi, a_lo, b_hi, b_lo):
    """``a * b`` mod 2**128 on (high, low) uint64 pairs."""
    return _mul_high(a_lo, b_lo) + a_hi * b_lo + a_lo * b_hi, a_lo * b_lo


@njit(cache=True, nogil=True, inline="always")
def _add128(a_hi, a_lo, b_hi, b_lo):
    low = a_lo + b_lo
    return a_hi + b_hi + (_ONE if low < a_lo else _ZERO), low


@njit(cache=True, nogil=True)
def _seek(base, word):
    """The state before the output that holds 32-bit word ``word`` of the stream that
    starts at ``base`` (int64-viewed ``[state_hi, state_lo, inc_hi, inc_lo]``), as
    ``(hi, lo, inc_hi, inc_lo, skip_low)``: the LCG jumped ``word // 2`` steps at once
    (Brown, 1994, "Random number generation with arbitrary strides")."""
    hi, lo = np.uint64(base[0]), np.uint64(base[1])
    inc_hi, inc_lo = np.uint64(base[2]), np.uint64(base[3])
    steps = np.uint64(word // 2)
    acc_mult_hi, acc_mult_lo, acc_plus_hi, acc_plus_lo = _ZERO, _ONE, _ZERO, _ZERO
    mult_hi, mult_lo, plus_hi, plus_lo = _MUL_HI, _MUL_LO, inc_hi, inc_lo
    while steps > _ZERO:
        if steps & _ONE:
            acc_mult_hi, acc_mult_lo = _mul128(acc_mult_hi, acc_mult_lo, mult_hi, mult_lo)
            acc_plus_hi, acc_plus_lo = _mul128(acc_plus_hi, acc_plus_lo, mult_hi, mult_lo)
            acc_plus_hi, acc_plus_lo = _add128(acc_plus_hi, acc_plus_lo, plus_hi, plus_lo)
        m1_hi, m1_lo = _add128(mult_hi, mult_lo, _ZERO, _ONE)
        plus_hi, plus_lo = _mul128(m1_hi, m1_lo, plus_hi, plus_lo)
        mult_hi, mult_lo = _mul128(mult_hi, mult_lo, mult_hi, mult_lo)
        steps = steps >> _ONE
    hi, lo = _mul128(acc_mult_hi, acc_mult_lo, hi, lo)
    hi, lo = _add128(hi, lo, acc_plus_hi, acc_plus_lo)
    return hi, lo, inc_hi, inc_lo, word % 2 == 1


@njit(cache=True, nogil=True, inline="always")
def _output(hi, lo):
    """PCG64's XSL-RR output of a (new) state."""
    x = hi ^ lo
    rot = hi >> _S58
    return (x >> rot) | (x << ((-rot) & _S63))


@njit(cache=True, nogil=True, inline="always")
def _words_from(base, word):
    """The stream at 32-bit word ``word``, as ``(hi, lo, inc_hi, inc_lo, x, half)`` for
    :func:`_next_word`: ``x`` the current output, ``half`` 1 when its high word is next."""
    hi, lo, inc_hi, inc_lo, skip_low = _seek(base, word)
    if skip_low:  # the low word of the next output is used already
        hi, lo = _step(hi, lo, inc_hi, inc_lo)
        return hi, lo, inc_hi, inc_lo, _output(hi, lo), 1
    return hi, lo, inc_hi, inc_lo, _ZERO, 0


@njit(cache=True, nogil=True, inline="always")
def _next_word(hi, lo, inc_hi, inc_lo, x, half):
    """The next 32-bit word, as numpy's ``next_uint32`` takes them (an output's low word,
    then its high word); returns ``(hi, lo, x, half, word)``."""
    if half == 0:
        hi, lo = _step(hi, lo, inc_hi, inc_lo)
        x = _output(hi, lo)
        return hi, lo, x, 1, x & _MASK32
    return hi, lo, x, 0, x >> _S32


@njit(cache=True, nogil=True, inline="always")
def _threshold(bound):
    """Lemire's threshold for ``n`` = ``bound``: ``2**32 mod n`` (numpy's
    ``(UINT32_MAX - rng) % rng_excl``); a word whose ``word * n`` has low 32 bits below
    it is rejected."""
    return np.uint64((np.uint64(1 << 32) - bound) % bound)


@njit(cache=True, nogil=True)
def rejected_words(base, word, n_words, n, out):
    """Positions (from ``word``) of the words that Lemire's method rejects among
    ``n_words`` words from word ``word`` of ``base``'s stream (see :func:`_seek`);
    returns how many there are (only the first ``len(out)`` are written: call again
    with room for all when the count is larger)."""
    hi, lo, inc_hi, inc_lo, x, half = _words_from(base, word)
    bound = np.uint64(n)
    threshold = _threshold(bound)
    found = 0
    for position in range(n_words):
        hi, lo, x, half, value = _next_word(hi, lo, inc_hi, inc_lo, x, half)
        if ((value * bound) & _MASK32) < threshold:
            if found < out.shape[0]:
                out[found] = position
            found += 1
    return found


@njit(cache=True, nogil=True)
def bounded_draws(base, word, n, out):
    """Fill ``out`` (int64) with ``Generator.integers(0, n)`` draws from word ``word``
    of ``base``'s stream (see :func:`_seek`); returns the number of words used."""
    hi, lo, inc_hi, inc_lo, x, half = _words_from(base, word)
    bound = np.uint64(n)
    threshold = _threshold(bound)
    used = 0
    i = 0
    while i < out.shape[0]:
        hi, lo, x, half, value = _next_word(hi, lo, inc_hi, inc_lo, x, half)
        used += 1
        m = value * bound
        if (m & _MASK32) >= threshold:
            out[i] = np.int64(m >> _S32)
            i += 1
    return used


@njit(cache=True, nogil=True)
def coin_flips(base, word, out):
    """Fill ``out`` (bool) with ``Generator.integers(2, dtype=bool)`` coins from word
    ``word`` of ``base``'s stream (see :func:`_seek`): numpy takes 32 coins from each
    32-bit word, lowest bit first, so coin ``i`` is bit ``i % 32`` of word ``i // 32``."""
    hi, lo, inc_hi, inc_lo, x, half = _words_from(base, word)
    n = out.shape[0]
    i = 0
    while i < n:
        hi, lo, x, half, bits = _next_word(hi, lo, inc_hi, inc_lo, x, half)
        for b in range(min(32, n - i)):
            out[i + b] = (bits >> np.uint64(b)) & _ONE
        i += 32
