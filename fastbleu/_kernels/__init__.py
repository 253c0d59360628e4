"""Private numba kernels: nopython, ``cache=True``, no Python objects inside.

Grouped by pipeline stage and by metric, so that a metric's kernels are in its folder::

    text/            UTF-8 buffers -> token hashes, and ids -> token hashes
      hashing          token bytes -> 64-bit token hashes; n-gram keys from token hashes
      tokenize         codes and chunk kernels of every byte tokenizer
      tokenize_13a     byte classes, none and 13a; tokenize_flat: their branch-free scanner
      tokenize_unicode UTF-8 decoding, whitespace, intl and zh; tokenize_flat_unicode: its
                       branch-free scanner
      unicode_classes  the code-point tables of intl (from regex, cached) and zh
      ids              token ids -> token hashes (padding, end of sequence)
    bleu/            counting (token hashes -> clipped n-gram rows), formula (rows and
                     resampled sums -> BLEU, sacrebleu's order), nltk_formula (NLTK's
                     sentence BLEU), pool (shared and leave-one-out maxima: pools, Self-BLEU)
    chrf/            statistics (characters and words -> per-order counts), formula
    ter/             shifts (Tercom's shift search -> [edits, ref length]), distance (the
                     edit distances: banded with a trace, banded, bit-parallel)
    nist/            counts (reference n-gram counts, one table grown in place), matches
                     (weighted matches, weights from two counts), rows (reference rows'
                     fingerprints: a table's first pass), formula
    cuda/            the GPU path's kernels (numba's CUDA target, fastbleu.gpu): tokens,
                     counting, formula, reduce, pairwise; loader imports the CUDA target
    pairwise         MBR matrices: each sentence's n-grams once per source
    resample         resampled and randomized sums (metric-agnostic)
    threads          the pool: whole batches on threads, chunks of segments (re-created
                     after fork(); stops on a signal)
    cache            where numba caches these kernels: a per-user folder only the user can
                     write (never the package), or none; cache_files: its files, checked
    notice           the line a first run prints when it compiles (fastbleu.progress)
    aot              the ahead-of-time build of plain BLEU's kernels (numba.pycc, at install
                     time; fastbleu._native calls them without importing numba)

Kernels trust their inputs; the public modules validate and convert.
"""

from . import cache as _cache

# Before any kernel module is imported: numba picks a function's cache folder
# when ``@njit(cache=True)`` decorates it.
_cache.register()

# The compile notice of the command line (fastbleu.progress.COMPILE_NOTICE).
from . import notice as _notice  # noqa: E402

_notice.install()
