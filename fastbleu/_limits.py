"""Upper limits on sizes a user chooses, checked before anything is allocated.

Kept apart from the kernels' modules so that the command line can check its
flags without starting numba.
"""

#: Highest n-gram order accepted: a statistics row holds 2 + 2 * order int64 counts per
#: segment, and orders beyond a few dozen carry no information for BLEU.
MAX_NGRAM_ORDER_LIMIT = 100

#: Most bootstrap resamples or randomization trials: one float64 score is kept per sample
#: and system (80 MB per system at this limit).
MAX_SAMPLES = 10_000_000
