"""The kernels' codes and sizes as plain constants: importing them starts no numba.

The kernel modules of :mod:`fastbleu._kernels` import these (and re-export
them under their old names); the Python modules that only need a code
(tokenizers, formulas, statistics) import them from here, so that a run served
by the ahead-of-time kernels (:mod:`fastbleu._native`) never imports numba.
"""

# Tokenizers of the tokenize kernels (fastbleu._kernels.tokenize).
TOKENIZE_NONE = 0
TOKENIZE_13A = 1
TOKENIZE_CHAR = 2
TOKENIZE_INTL = 3
TOKENIZE_ZH = 4

# The reference length of a segment (fastbleu._kernels.counting).
REF_CLOSEST = 0
REF_SHORTEST = 1
REF_AVERAGE = 2
#: lcm(1..16): the average of up to 16 reference lengths, times this, is an integer.
AVERAGE_SCALE = 720720
MAX_AVERAGED_REFERENCES = 16
#: Reference n-grams (all orders and references of a segment) above which the
#: segment is counted in the compact table (see fastbleu._kernels.counting).
LARGE_ABOVE = 1 << 13

# Smoothing methods of the BLEU formula (fastbleu._kernels.formula).
SMOOTH_NONE = 0
SMOOTH_FLOOR = 1
SMOOTH_ADD_K = 2
SMOOTH_EXP = 3

#: Segments per piece of work on the thread pool (fastbleu._kernels.threads): fewer than
#: two pieces' worth run as one piece, in the calling thread.
MIN_CHUNK = 4096


def row_width(max_order: int) -> int:
    """Columns of the BLEU statistics row: ``[hyp_len, ref_len, match_1..N, total_1..N]``,
    sacrebleu's order, so ``2 + 2 * max_order``."""
    return 2 + 2 * max_order
