"""Private numba kernels: nopython, ``cache=True``, no Python objects inside.

Each module is one stage of the pipeline::

    hashing          token bytes -> 64-bit token hashes; n-gram keys from token hashes
    tokenize         UTF-8 buffers -> token hashes per segment: codes, chunk kernels
                     (tokenize_13a: byte classes, none and 13a; tokenize_flat: their
                     branch-free scanner for common segments; tokenize_unicode:
                     UTF-8 decoding, whitespace, intl and zh)
    unicode_classes  the code-point tables of intl (from regex, cached) and zh
    counting         token hashes -> clipped n-gram statistics, one row per segment
    formula          statistics row -> BLEU score (sacrebleu's order of operations)
    resample         resampled and randomized sums -> BLEU per resample
    threads          chunks of segments on a thread pool (re-created after fork())
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
