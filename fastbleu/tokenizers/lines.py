"""Tokenizers that run in Python, line by line, in front of the byte kernels.

MeCab and sentencepiece cannot run inside numba.  :class:`LineTransform`
wraps such a tokenizer so that it does as little as possible in Python: each
*distinct* segment of a column is tokenized once (and remembered across
calls, as sacrebleu's LRU cache does, so reference lines are not tokenized
again for the next system), and the tokenized lines, tokens joined by
spaces, are laid out as a new UTF-8 column (one ``bytes.join`` and a
cumulative sum; no pyarrow, whose import the command line avoids).  The ``none`` kernel then splits that column into token hashes, and
everything after it (n-grams, counts, scores) is the same vectorized
pipeline as for the kernel tokenizers.  Splitting the space-joined output
with ``str.split()`` is exactly what sacrebleu does with a tokenizer's
output, so the tokens are sacrebleu's by construction.
"""

from __future__ import annotations

import os
import threading
import weakref
from collections.abc import Callable

import numpy as np

from ..inputs.text import TextColumn

#: Distinct lines remembered across calls (sacrebleu's ``lru_cache`` holds 2**16).
CACHE_SIZE = 1 << 16

# Every transform, so that a forked child can give each a fresh lock: fork()
# copies a lock that another thread of the parent holds, and no thread of the
# child would ever release it.
_TRANSFORMS: weakref.WeakSet = weakref.WeakSet()


def _fresh_locks_after_fork() -> None:
    for transform in list(_TRANSFORMS):
        transform._lock = threading.Lock()


os.register_at_fork(after_in_child=_fresh_locks_after_fork)


class LineTransform:
    """A column -> tokenized-column transform around a line tokenizer.

    Parameters
    ----------
    tokenize_lines : callable
        Takes a list of lines (``str``, already right-stripped as sacrebleu's
        ``BLEU`` strips them) and returns the list of their tokenized forms,
        tokens separated by whitespace.
    cache_size : int
        How many distinct lines to remember across calls.
    """

    def __init__(self, tokenize_lines: Callable[[list[str]], list[str]],
                 cache_size: int = CACHE_SIZE):
        self._tokenize_lines = tokenize_lines
        self._cache: dict[bytes, bytes] = {}
        self._cache_size = cache_size
        self._lock = threading.Lock()  # the Python tokenizers are not thread-safe
        _TRANSFORMS.add(self)

    def lines(self, raw: list[bytes]) -> list[bytes]:
        """Tokenize UTF-8 lines, each distinct line once, remembering the results."""
        with self._lock:
            cache = self._cache
            todo = [line for line in dict.fromkeys(raw) if line not in cache]
            fresh = {}
            if todo:
                texts = [line.decode("utf-8", "surrogatepass").rstrip() for line in todo]
                fresh = {line: out.encode("utf-8", "surrogatepass")
                         for line, out in zip(todo, self._tokenize_lines(texts))}
            result = [fresh[line] if line in fresh else cache[line] for line in raw]
            if len(cache) + len(fresh) > self._cache_size:
                cache.clear()
            if len(fresh) <= self._cache_size:
                cache.update(fresh)
            return result

    def __call__(self, column: TextColumn) -> TextColumn:
        """The column of tokenized segments (missing segments stay missing, and empty)."""
        n = len(column)
        start = int(column.offsets[0])
        text = column.data[start:int(column.offsets[-1])].tobytes()
        bounds = (column.offsets - start).tolist()
        if column.valid is None:
            present = range(n)
        else:
            present = np.flatnonzero(column.valid).tolist()
        tokenized = self.lines([text[bounds[i]:bounds[i + 1]] for i in present])
        lengths = np.zeros(n, dtype=np.int64)
        lengths[present] = [len(line) for line in tokenized]
        offsets = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(lengths, out=offsets[1:])
        data = np.frombuffer(b"".join(tokenized), dtype=np.uint8)
        return TextColumn(data, offsets, column.valid)
