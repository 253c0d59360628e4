"""The install-time warm-up: every common path once, on tiny inputs, so numba caches its kernels.

``setup.py`` runs ``python -m fastbleu._native.warmup`` in a child process whose
numba cache is a fresh folder (``NUMBA_CACHE_DIR``), then keeps what numba wrote
there as the package's seed of the kernel cache (:mod:`fastbleu._kernels.seed`).
A user's first run then copies the compiled kernels instead of compiling them.

Each call below is an ordinary use of the public API, chosen for the kernel
signatures it compiles: every metric and tokenizer, one batch (the calling
thread) and several (the pool), lists, numpy and Arrow inputs, token ids,
sentence scores, pools and Self-BLEU, MBR matrices, the significance tests,
NLTK's BLEU and NIST, and a Parquet table.  What it misses is compiled on
first use, as before.  ``tests/kernels/test_seed.py`` checks that a first run
of each metric from a seeded cache compiles nothing.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

_HYPS = ["The cat sat on the mat.", "Das ist ein Test, nicht wahr?", "",
         "他们在北京见面。", "It's 3.5% of $1,000 -- isn't it?"]
_REFS = [["The cat is on the mat.", "Das ist kein Test.", "x",
          "他们在上海见面了。", "It is 3.5 % of $1,000, isn't it?"],
         ["There is a cat on the mat.", "Ein Test, oder?", "",
          "他们见面。", "That's 3.5% of 1000."]]


def _many(lines: list[str], n: int) -> list[str]:
    return [lines[i % len(lines)] for i in range(n)]


def _metrics():
    from fastbleu import BLEU, CHRF, NIST, TER

    yield BLEU()
    for tokenize in ("none", "char", "intl", "zh", "13a"):
        yield BLEU(tokenize=tokenize, lowercase=tokenize == "13a")
    yield BLEU(smooth_method="floor", effective_order=True)
    yield CHRF()
    yield CHRF(word_order=2, lowercase=True)
    yield TER()
    yield TER(normalized=True, no_punct=True, asian_support=True, case_sensitive=True)
    yield NIST()


def _text(sizes) -> None:
    import numpy as np
    import pyarrow as pa

    for metric in _metrics():
        for n in sizes:
            hyps, refs = _many(_HYPS, n), [_many(r, n) for r in _REFS]
            metric.corpus_score(hyps, refs)
            metric.sentence_scores(hyps, refs)
            metric.corpus_score(pa.array(hyps), [pa.array(r) for r in refs])
            metric.corpus_score(np.array(hyps, dtype=object), [np.array(r, dtype=object)
                                                              for r in refs])
        metric.sentence_score(_HYPS[0], [_REFS[0][0]])
        accumulator = metric.accumulator()
        accumulator.update(_HYPS, _REFS)
        accumulator.score()


def _ids(n: int) -> None:
    import numpy as np

    from fastbleu import BLEU, TokenIds

    rng = np.random.default_rng(0)
    for dtype in (np.int64, np.int32):
        hyps = rng.integers(0, 100, size=(n, 12)).astype(dtype)
        refs = rng.integers(0, 100, size=(n, 12)).astype(dtype)
        BLEU().sentence_scores(TokenIds(hyps, pad_id=0), [TokenIds(refs, pad_id=0)])
        BLEU().corpus_score(TokenIds(hyps), [TokenIds(refs)])
        rows = [np.asarray(row, dtype=dtype) for row in hyps[:50]]
        BLEU().sentence_scores(rows, [[np.asarray(row, dtype=dtype) for row in refs[:50]]])


def _pairwise_and_pools() -> None:
    from fastbleu import nltk
    from fastbleu.pairwise import bleu_matrix, chrf_matrix

    from fastbleu import BLEU

    bleu = BLEU(effective_order=True)
    bleu.pool_scores(_HYPS, _REFS[0])
    bleu.pool_score(_HYPS, _REFS[0])
    bleu.self_scores(_many(_HYPS + _REFS[1], 30))
    BLEU(references=_REFS).corpus_score(_HYPS, None)
    candidates = [_HYPS, _REFS[0]]
    chrf_matrix(candidates)
    chrf_matrix(candidates, word_order=2)
    bleu_matrix(candidates)
    tokens = [line.split() for line in _many(_HYPS + _REFS[0], 40)]
    nltk.self_bleu(tokens)
    nltk.SelfBLEU(tokens).get_score()
    smoothing = nltk.SmoothingFunction()
    for method in range(8):
        nltk.sentence_bleu([tokens[1], tokens[2]], tokens[0],
                           smoothing_function=getattr(smoothing, f"method{method}"))
    nltk.sentence_bleu_many([[t] for t in tokens[1:]], tokens[:-1],
                            smoothing_function=smoothing.method1)
    nltk.corpus_bleu([[t] for t in tokens[1:]], tokens[:-1])
    nltk.corpus_nist([[t] for t in tokens[1:]], tokens[:-1])
    nltk.sentence_nist([tokens[1]], tokens[0])


def _significance(n: int) -> None:
    from fastbleu import BLEU, CHRF, significance

    hyps, refs = _many(_HYPS, n), [_many(r, n) for r in _REFS]
    other = _many(_REFS[1], n)
    significance.paired_bootstrap([hyps, other], refs, metrics=[BLEU(), CHRF()],
                                  n_samples=20)
    significance.paired_ar([hyps, other], refs, metrics=[BLEU()], n_samples=20)
    BLEU().corpus_score(hyps, refs, n_bootstrap=20)
    # the draws a many-core machine makes on the pool (few threads draw on one)
    import numpy as np

    from fastbleu.significance.draws import FlipDraws, IndexDraws

    for parallel in (False, True):
        IndexDraws(np.random.default_rng(1), 1000, parallel=parallel).take(200)
        FlipDraws(np.random.default_rng(1), 1000, parallel=parallel).take(200)


def _table(folder: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    from fastbleu import score_table

    n = 200
    path = folder / "table.parquet"
    # distinct references (some tables grow: NIST's multisets of reference rows)
    refs = [f"{line} {i // 2}" for i, line in enumerate(_many(_REFS[0], n))]
    pq.write_table(pa.table({"hyp": _many(_HYPS, n), "ref": refs,
                             "system": ["a", "b"] * (n // 2),
                             "domain": ["news"] * (n // 2) + ["chat"] * (n // 2)}), path)
    for metrics in (["bleu"], ["chrf"], ["ter"], ["nist"]):
        score_table(str(path), group_by="system", metrics=metrics)


def _cli(folder: Path) -> None:
    """The command line's own paths: confidence intervals (sacrebleu's float32 sums),
    paired tests, several metrics."""
    import contextlib
    import io

    from fastbleu.cli import main

    n = 60
    files = {}
    for name, lines in (("ref", _REFS[0]), ("ref2", _REFS[1]), ("a", _HYPS), ("b", _REFS[1])):
        files[name] = str(folder / name)
        Path(files[name]).write_text("\n".join(_many(lines, n)) + "\n", encoding="utf-8")
    refs = [files["ref"], files["ref2"]]
    for options in (["-m", "bleu", "chrf", "ter", "-ci", "-cin", "20"],
                    ["-m", "bleu", "chrf", "ter", "-ci", "-cin", "20", "--sacrebleu-compat"],
                    ["-m", "bleu", "chrf", "-pbs", "-pbsn", "20", "--b", files["b"]],
                    ["-m", "bleu", "chrf", "-par", "-parn", "20", "--b", files["b"]]):
        hyps = [files["a"]]
        if "--b" in options:
            at = options.index("--b")
            hyps.append(options[at + 1])
            options = options[:at] + options[at + 2:]
        errors = io.StringIO()
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(errors):
            status = main([*refs, "-i", *hyps, *options, "-q"])
        if status != 0:
            raise RuntimeError(f"fastbleu {' '.join(options)}: exit {status}: "
                               f"{errors.getvalue().strip()}")


def _report(folder: Path) -> None:
    """The comparison report's numbers (its charts need matplotlib, not numba)."""
    from fastbleu.compare.api import compare, load

    n = 60
    systems = {"a": _many(_HYPS, n), "b": _many(_REFS[1], n), "c": _many(_REFS[0], n)}
    compare(load(systems, [_many(_REFS[0], n)], metrics=("bleu", "chrf")), n_samples=20)
    compare(load(str(folder / "table.parquet"), system="system", metrics=("bleu", "chrf"),
                 group_by="domain"), n_samples=20)


def run() -> None:
    """Every path above; each call compiles what the numba cache does not hold yet."""
    from fastbleu.statistics.tokens import KERNEL_BATCH_SIZE

    # One batch (the calling thread) and more than one (whole batches on the pool).
    _text((7, 2 * KERNEL_BATCH_SIZE + 3))
    _ids(2 * KERNEL_BATCH_SIZE + 3)
    _pairwise_and_pools()
    _significance(60)
    with tempfile.TemporaryDirectory() as folder:
        _table(Path(folder))
        _cli(Path(folder))
        _report(Path(folder))


if __name__ == "__main__":
    run()
    sys.exit(0)
