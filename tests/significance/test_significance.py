"""Significance tests: the draws, the kernels and the results against sacrebleu 2.6.

What is held against what:

* chunked draws against numpy's one big ``choice``/``integers`` call (values
  and the generator's state afterwards);
* the kernels against plain numpy/Python references: exact resampled sums
  scored by ``BLEUFormula.score``, and sacrebleu's own float32 code path
  (``_compute_score_from_stats(block.sum(0))``) for the compat kernel;
* the public API and the command line against sacrebleu's ``PairedTest``,
  ``corpus_score(n_bootstrap=...)`` and its command line's JSON.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
from sacrebleu.metrics import BLEU as SacreBLEU
from sacrebleu.significance import PairedTest

from fastbleu import BLEU
from fastbleu.significance import tests as sig
from fastbleu.cli import main
from fastbleu.significance import resampling
from fastbleu.metrics.bleu.formula import BLEUFormula
from testkit.data import DATA, needs_wmt22, read_lines, wmt22_references, wmt22_system, wmt22_systems
from testkit.marks import slow

SAMPLE_REF = str(DATA / "sample.ref-A.en")
SAMPLE_SYSTEMS = [str(DATA / f"sample.{name}.en") for name in ("sys-A", "sys-B", "ref-B")]


@pytest.fixture(autouse=True)
def _default_seed(monkeypatch):
    monkeypatch.delenv("SACREBLEU_SEED", raising=False)


def _sample():
    return [read_lines(SAMPLE_REF)], [read_lines(path) for path in SAMPLE_SYSTEMS]


def _random_stats(rng, n, order=4, scale=40, zeros=0.0):
    """Plausible statistics rows: totals shrink with the order, matches <= totals."""
    hyp = rng.integers(0, scale, size=n)
    ref = np.maximum(hyp + rng.integers(-3, 4, size=n), 0)
    totals = np.stack([np.maximum(hyp - k, 0) for k in range(order)], axis=1)
    matches = np.floor(totals * rng.uniform(0, 1, size=(n, 1))).astype(np.int64)
    matches[rng.uniform(size=n) < zeros] = 0
    return np.concatenate([hyp[:, None], ref[:, None], matches, totals], axis=1).astype(np.int64)


# -- the draws --------------------------------------------------------------------------

@pytest.mark.parametrize("n", [1, 2, 3, 7, 31, 32, 33, 100, 1000, 1023, 1025, 70000])
def test_chunked_indices_equal_one_draw(n):
    m = 23
    whole = np.random.default_rng(12345).choice(n, size=(m, n), replace=True)
    for chunk in (1, 4, 7, m):
        rng = np.random.default_rng(12345)
        parts = list(resampling.index_chunks(rng, n, m, chunk_rows=chunk))
        assert [first for first, _ in parts] == list(range(0, m, chunk))
        assert np.array_equal(np.concatenate([block for _, block in parts]), whole)
        # the stream goes on where the big draw leaves it (the AR bootstrap draws next)
        after = np.random.default_rng(12345)
        after.choice(n, size=(m, n), replace=True)
        assert np.array_equal(rng.integers(0, 1 << 40, size=5), after.integers(0, 1 << 40, 5))


@pytest.mark.parametrize("n", [1, 3, 8, 31, 32, 33, 100, 1025])
def test_chunked_flips_equal_one_draw(n):
    m = 70
    whole = np.random.default_rng(7).integers(2, size=(m, n), dtype=bool)
    for chunk in (1, 5, 33, m):
        rng = np.random.default_rng(7)
        parts = list(resampling.flip_chunks(rng, n, m, chunk_rows=chunk))
        step = resampling.flip_rows_step(n)
        assert all(block.shape[0] % step == 0 for _, block in parts[:-1])
        assert np.array_equal(np.concatenate([block for _, block in parts]), whole)
        after = np.random.default_rng(7)
        after.integers(2, size=(m, n), dtype=bool)
        assert np.array_equal(rng.choice(n, size=3), after.choice(n, size=3))


def test_unaligned_flip_chunks_would_break_the_stream():
    """Why flip chunks hold whole 32-coin words: numpy drops a call's unused coins."""
    n, m = 33, 8
    whole = np.random.default_rng(7).integers(2, size=(m, n), dtype=bool)
    rng = np.random.default_rng(7)
    rows = np.concatenate([rng.integers(2, size=(1, n), dtype=bool) for _ in range(m)])
    assert not np.array_equal(rows, whole)


# -- the kernels against references ------------------------------------------------------

def _reference_bootstrap(stats_list, bleu, idx):
    formula = BLEUFormula(bleu.max_ngram_order, bleu.smooth_method, bleu.smooth_value,
                          bleu.effective_order)
    return np.array([[formula.score(stats[row].sum(axis=0)).score for row in idx]
                     for stats in stats_list])


@pytest.mark.parametrize("options", [{}, {"smooth_method": "floor"}, {"smooth_method": "none"},
                                     {"smooth_method": "add-k", "smooth_value": 2},
                                     {"effective_order": True, "max_ngram_order": 3}])
def test_exact_bootstrap_kernel_matches_plain_sums(options, monkeypatch):
    # small budgets: several batches, both count buffers, a split over segments
    monkeypatch.setattr(resampling, "_COUNT_BUDGET", 3 * 257)
    monkeypatch.setattr(resampling, "_INDEX_BUDGET", 2 * 257)
    monkeypatch.setattr(resampling, "_MIN_WORK", 1)
    bleu = BLEU(**options)
    rng = np.random.default_rng(3)
    stats = [_random_stats(rng, 257, bleu.max_ngram_order, zeros=0.3) for _ in range(3)]
    n_samples = 20
    ours = resampling.bootstrap_scores(stats, bleu.formula, n_samples,
                                np.random.default_rng(5))
    idx = np.random.default_rng(5).choice(257, size=(n_samples, 257), replace=True)
    assert np.array_equal(ours, _reference_bootstrap(stats, bleu, idx))


def test_exact_bootstrap_survives_a_wrapped_count(monkeypatch):
    """A segment drawn more often than the count type holds (uint16: 65,536 times) is
    summed another way; forced here with uint8 counts and rigged draws."""
    monkeypatch.setattr(resampling, "_COUNT_DTYPE", np.uint8)
    monkeypatch.setattr(resampling, "_COUNT_BUDGET", 2 * 300)

    class Rigged:
        def __init__(self):
            self.rng, self.drawn = np.random.default_rng(5), []

        def choice(self, n, size, replace):
            idx = self.rng.choice(n, size=size, replace=replace)
            idx[::2] = 7  # every other resample: segment 7, 300 times
            self.drawn.append(idx)
            return idx

    rng = np.random.default_rng(8)
    stats = [_random_stats(rng, 300) for _ in range(2)]
    rigged = Rigged()
    ours = resampling.bootstrap_scores(stats, BLEU().formula, 5, rigged)
    assert np.array_equal(ours, _reference_bootstrap(stats, BLEU(), np.concatenate(rigged.drawn)))


@pytest.mark.parametrize("options", [{}, {"smooth_method": "floor"}, {"smooth_method": "none"},
                                     {"smooth_method": "add-k"},
                                     {"smooth_method": "floor", "smooth_value": 0.3},
                                     {"effective_order": True}])
def test_float32_kernel_is_sacrebleus_code_path(options):
    """The compat kernel against sacrebleu's own loop body, with sums far above 2**24."""
    bleu, theirs = BLEU(**options), SacreBLEU(**options)
    rng = np.random.default_rng(11)
    stats = [_random_stats(rng, 300, scale=200000, zeros=0.2) for _ in range(2)]
    stats[1][:5, 2:] = 0  # segments without matches
    n_samples = 12
    ours = resampling.bootstrap_scores(stats, bleu.formula, n_samples,
                                np.random.default_rng(9), sacrebleu_compat=True)
    idx = np.random.default_rng(9).choice(300, size=(n_samples, 300), replace=True)
    for s, block in enumerate(stats):
        blocks = np.array(block.tolist(), dtype="float32")[idx]
        expected = [theirs._compute_score_from_stats(b.sum(0)).score for b in blocks]
        assert ours[s].tolist() == expected


@pytest.mark.parametrize("order, n", [(1, 20000), (4, 20000), (6, 9000)])
def test_float32_sums_follow_numpy_block_sum(order, n):
    """numpy's ``block.sum(0)`` on a C-ordered float32 (n, width) block adds the rows one
    after the other; the compat kernel's scores equal sacrebleu's on such sums for several
    widths and for n past numpy's 8192-element buffers."""
    theirs = SacreBLEU(max_ngram_order=order)
    rng = np.random.default_rng(order)
    stats = [_random_stats(rng, n, order, scale=5000)]
    idx = np.random.default_rng(3).choice(n, size=(3, n), replace=True)
    blocks = np.array(stats[0], dtype=np.float32)[idx]
    sums = [block.sum(0) for block in blocks]
    running = [np.add.accumulate(block, axis=0)[-1] for block in blocks]  # row by row
    assert all(np.array_equal(a, b) for a, b in zip(sums, running))
    assert any(float(x) != float(y) for a, b in zip(sums, blocks)
               for x, y in zip(a, b.astype(np.int64).sum(0)))  # float32 really rounds here
    ours = resampling.bootstrap_scores(stats, BLEU(max_ngram_order=order).formula, 3,
                                np.random.default_rng(3), sacrebleu_compat=True)
    assert ours[0].tolist() == [theirs._compute_score_from_stats(t).score for t in sums]


def test_randomization_kernel_matches_matrix_products(monkeypatch):
    monkeypatch.setattr(resampling, "_FLIP_BUDGET", 3 * 130)
    monkeypatch.setattr(resampling, "_MIN_WORK", 1)
    bleu = BLEU()
    rng = np.random.default_rng(4)
    base, *others = [_random_stats(rng, 130, zeros=0.2) for _ in range(3)]
    n_trials = 50
    a, b = resampling.randomization_scores(base, others, bleu.formula, n_trials,
                                    np.random.default_rng(1))
    flips = np.random.default_rng(1).integers(2, size=(n_trials, 130), dtype=bool)
    for s, other in enumerate(others):
        shuf_a, shuf_b = flips @ base + ~flips @ other, ~flips @ base + flips @ other
        assert a[s].tolist() == [BLEUFormula(4, "exp").score(row).score for row in shuf_a]
        assert b[s].tolist() == [BLEUFormula(4, "exp").score(row).score for row in shuf_b]


def test_exact_beyond_float32():
    """Totals above 2**24: the default equals an exact integer reference, float32 does not."""
    rng = np.random.default_rng(2)
    n = 400
    stats = [_random_stats(rng, n, scale=120000) for _ in range(2)]
    assert stats[0][:, 0].sum() > 2 ** 24
    n_samples = 8
    idx = np.random.default_rng(12345).choice(n, size=(n_samples, n), replace=True)
    exact = resampling.bootstrap_scores(stats, BLEU().formula, n_samples,
                                 np.random.default_rng(12345))
    compat = resampling.bootstrap_scores(stats, BLEU().formula, n_samples,
                                  np.random.default_rng(12345), sacrebleu_compat=True)
    rows = stats[0].tolist()
    for r in range(n_samples):
        sums = [sum(rows[i][c] for i in idx[r]) for c in range(10)]  # Python ints
        reference = SacreBLEU.compute_bleu(sums[2:6], sums[6:], sums[0], sums[1],
                                           smooth_method="exp").score
        assert exact[0, r] == reference
        # the float32 sums lose units: compare them with the exact ones
        float32_sums = np.array(stats[0], dtype=np.float32)[idx[r]].sum(0)
        assert any(Fraction(float(x)) != s for x, s in zip(float32_sums, sums))
    assert not np.array_equal(exact, compat)
    assert np.abs(exact - compat).max() < 1e-3


# -- API against sacrebleu ---------------------------------------------------------------

def _sacrebleu_paired(systems, refs, test, n, n_confidence=-1):
    named = [(str(k), system) for k, system in enumerate(systems)]
    _, scores = PairedTest(named, {"BLEU": SacreBLEU(references=refs)}, None, test_type=test,
                           n_samples=n, n_ar_confidence=n_confidence)()
    return [(r.score, r.p_value, r.mean, r.ci) for r in scores["BLEU"]]


def _fields(results):
    return [(r.score, r.p_value, r.mean, r.ci) for r in results]


def test_paired_bootstrap_equals_sacrebleu_bit_for_bit():
    refs, systems = _sample()
    theirs = _sacrebleu_paired(systems, refs, "bs", 300)
    compat = sig.paired_bootstrap(systems, refs, n_samples=300, sacrebleu_compat=True)
    assert _fields(compat) == theirs
    exact = sig.paired_bootstrap(systems, refs, n_samples=300)
    for ours, other in zip(_fields(exact), theirs):
        assert ours[0] == other[0] and ours[1] == other[1]
        assert abs(ours[2] - other[2]) < 1e-6 and abs(ours[3] - other[3]) < 1e-6


def test_paired_ar_with_confidence_equals_sacrebleu():
    refs, systems = _sample()
    theirs = _sacrebleu_paired(systems, refs, "ar", 400, n_confidence=100)
    compat = sig.paired_ar(systems, refs, n_samples=400, n_confidence=100,
                           sacrebleu_compat=True)
    assert _fields(compat) == theirs
    exact = sig.paired_ar(systems, refs, n_samples=400, n_confidence=100)
    assert [r.p_value for r in exact] == [t[1] for t in theirs]
    assert all(abs(r.mean - t[2]) < 1e-6 for r, t in zip(exact, theirs))


@pytest.mark.parametrize("options", [{"smooth_method": "add-k"},
                                     {"smooth_method": "add-k", "smooth_value": 0.5},
                                     {"smooth_method": "floor", "smooth_value": 0.2},
                                     {"smooth_method": "none", "lowercase": True}])
@pytest.mark.parametrize("test", ["bs", "ar"])
def test_options_equal_sacrebleu(options, test):
    refs, systems = _sample()
    refs, systems = [refs[0][:300]], [system[:300] for system in systems]
    named = [(str(k), system) for k, system in enumerate(systems)]
    _, scores = PairedTest(named, {"BLEU": SacreBLEU(references=refs, **options)}, None,
                           test_type=test, n_samples=200)()
    run = sig.paired_bootstrap if test == "bs" else sig.paired_ar
    ours = run(systems, refs, bleu=BLEU(**options), n_samples=200, sacrebleu_compat=True)
    assert _fields(ours) == [(r.score, r.p_value, r.mean, r.ci) for r in scores["BLEU"]]


def test_confidence_interval_equals_sacrebleu():
    refs, systems = _sample()
    theirs = SacreBLEU().corpus_score(systems[1], refs, n_bootstrap=500)
    compat = sig.confidence_interval(systems[1], refs, n_samples=500, sacrebleu_compat=True)
    assert (compat.score, compat.mean, compat.ci) == (theirs.score, theirs._mean, theirs._ci)
    exact = sig.confidence_interval(systems[1], refs, n_samples=500)
    assert abs(exact.mean - theirs._mean) < 1e-6 and abs(exact.ci - theirs._ci) < 1e-6


def test_statistics_or_hypotheses_give_the_same_results():
    refs, systems = _sample()
    bleu = BLEU()
    stats = [bleu.segment_statistics(system, refs) for system in systems]
    assert _fields(sig.paired_bootstrap(stats, n_samples=50)) == \
        _fields(sig.paired_bootstrap(systems, refs, n_samples=50))
    assert _fields(sig.paired_ar(stats, n_samples=64)) == \
        _fields(sig.paired_ar(systems, refs, n_samples=64))
    cached = BLEU(references=refs)  # references tokenized once for all systems
    assert _fields(sig.paired_bootstrap(systems, bleu=cached, n_samples=50)) == \
        _fields(sig.paired_bootstrap(stats, n_samples=50))


def test_a_system_against_itself_gets_sacrebleus_smallest_p():
    """sacrebleu's strict ``>`` with a zero observed difference gives identical systems
    p = 1 / (n + 1), the smallest p possible: a quirk we reproduce, not a finding."""
    refs, systems = _sample()
    twins = [systems[0], list(systems[0])]
    assert sig.paired_ar(twins, refs, n_samples=99)[1].p_value == 1 / 100
    results = sig.paired_bootstrap(twins, refs, n_samples=99)
    assert results[1].p_value == 1 / 100 and results[1].mean == results[0].mean
    compat = sig.paired_bootstrap(twins, refs, n_samples=99, sacrebleu_compat=True)
    assert _fields(compat) == _sacrebleu_paired(twins, refs, "bs", 99)


# -- seeds ---------------------------------------------------------------------------------

def test_seed_sources(monkeypatch):
    refs, systems = _sample()
    default = _fields(sig.paired_bootstrap(systems[:2], refs, n_samples=40))
    assert default == _fields(sig.paired_bootstrap(systems[:2], refs, n_samples=40, seed=12345))
    monkeypatch.setenv("SACREBLEU_SEED", "7")
    from_env = _fields(sig.paired_bootstrap(systems[:2], refs, n_samples=40))
    assert from_env == _fields(sig.paired_bootstrap(systems[:2], refs, n_samples=40, seed="7"))
    assert from_env != default
    assert sig.resolve_seed() == (7, "7")
    monkeypatch.setenv("SACREBLEU_SEED", "None")
    assert sig.resolve_seed() == (None, "none")
    # fresh entropy: two runs differ (identical means have probability ~0)
    fresh = [sig.paired_bootstrap(systems[:2], refs, n_samples=40)[0].mean for _ in range(2)]
    assert fresh[0] != fresh[1]
    assert sig.paired_bootstrap(systems[:2], refs, n_samples=40, seed="NONE")[0].mean \
        not in fresh


@pytest.mark.parametrize("seed, error", [("abc", ValueError), (-1, ValueError),
                                         (1.5, TypeError), (True, TypeError)])
def test_bad_seeds(seed, error):
    with pytest.raises(error, match="seed"):
        sig.resolve_seed(seed)


def test_bad_seed_in_the_environment(monkeypatch):
    monkeypatch.setenv("SACREBLEU_SEED", "twelve")
    with pytest.raises(ValueError, match="SACREBLEU_SEED must be"):
        sig.resolve_seed()


# -- API validation ----------------------------------------------------------------------

def test_api_errors():
    refs, systems = _sample()
    stats = BLEU().segment_statistics(systems[0], refs)
    with pytest.raises(ValueError, match="needs a baseline and at least one system"):
        sig.paired_bootstrap([systems[0]], refs)
    with pytest.raises(ValueError, match="system 1 has 999 segments but system 0 has 1000"):
        sig.paired_bootstrap([stats, stats[:-1]])
    with pytest.raises(TypeError, match="all systems as hypotheses or all as statistics"):
        sig.paired_ar([stats, systems[1]], refs)
    with pytest.raises(ValueError, match="references are not used"):
        sig.paired_ar([stats, stats], refs)
    with pytest.raises(ValueError, match="needs 10"):
        sig.paired_bootstrap([stats[:, :6], stats[:, :6]])
    with pytest.raises(ValueError, match="n_samples must be at least 1"):
        sig.paired_bootstrap([stats, stats], n_samples=0)
    with pytest.raises(TypeError, match="n_samples must be an int"):
        sig.confidence_interval(stats, n_samples=10.0)
    with pytest.raises(ValueError, match="no segments"):
        sig.confidence_interval(stats[:0])
    with pytest.raises(TypeError, match="bleu must be a fastbleu.BLEU"):
        sig.confidence_interval(stats, bleu=SacreBLEU())
    with pytest.raises(ValueError, match="n_confidence"):
        sig.paired_ar([stats, stats], n_confidence=-5)


# -- the command line ----------------------------------------------------------------------

def _run(capsys, argv):
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def _sacrebleu_cli(argv) -> str:
    """sacrebleu's command line (its main() reopens the standard streams: a subprocess)."""
    done = subprocess.run([sys.executable, "-m", "sacrebleu", *argv], capture_output=True,
                          text=True, stdin=subprocess.DEVNULL, check=True,
                          env={**os.environ, "PYTHONIOENCODING": "utf-8"})
    return done.stdout


def _assert_same_json(ours: str, theirs: str, tolerance: float = 1e-9):
    ours, theirs = json.loads(ours), json.loads(theirs)

    def compare(a, b, where):
        if isinstance(a, dict):
            assert a.keys() == b.keys(), where
            for key in a:
                compare(a[key], b[key], f"{where}.{key}")
        elif isinstance(a, list):
            assert len(a) == len(b), where
            for k, (x, y) in enumerate(zip(a, b)):
                compare(x, y, f"{where}[{k}]")
        elif isinstance(a, float) and isinstance(b, float):
            assert abs(a - b) <= tolerance, (where, a, b)
        elif isinstance(a, str) and "version:" in a:
            assert a.rsplit("version:", 1)[0] == b.rsplit("version:", 1)[0], where
        elif where.endswith(".version"):
            pass
        else:
            assert a == b, (where, a, b)

    compare(ours, theirs, "$")


# Quick: the bootstrap here and the randomization test on WMT22 below (issue 28).
@pytest.mark.parametrize("flags", [["--paired-bs"], slow(["--paired-ar", "--paired-ar-n", "2000"]),
                                   ["--paired-bs", "-pbsn", "0", "-w", "3"]])
def test_cli_paired_json_equals_sacrebleu(capsys, flags):
    argv = [SAMPLE_REF, "-i", *SAMPLE_SYSTEMS, *flags]
    status, ours, _ = _run(capsys, argv + ["--sacrebleu-compat"])
    assert status == 0
    _assert_same_json(ours, _sacrebleu_cli(argv))
    _, exact, _ = _run(capsys, argv)
    _assert_same_json(exact, ours, tolerance=1e-6)


def test_cli_confidence_json_equals_sacrebleu(capsys):
    argv = [SAMPLE_REF, str(DATA / "sample.ref-B.en"), "-i", SAMPLE_SYSTEMS[1], "--confidence",
            "-w", "4"]
    status, ours, _ = _run(capsys, argv + ["--sacrebleu-compat"])
    assert status == 0 and '"bs": "1000"' in ours and '"seed": "12345"' in ours
    _assert_same_json(ours, _sacrebleu_cli(argv))


def test_cli_seed_flag_and_environment(capsys, monkeypatch):
    argv = [SAMPLE_REF, "-i", *SAMPLE_SYSTEMS[:2], "--paired-bs", "-pbsn", "100"]
    _, with_flag, _ = _run(capsys, argv + ["--seed", "99"])
    monkeypatch.setenv("SACREBLEU_SEED", "99")
    _, with_env, _ = _run(capsys, argv)
    assert with_flag == with_env
    _assert_same_json(_run(capsys, argv + ["--sacrebleu-compat"])[1], _sacrebleu_cli(argv))
    _, text, _ = _run(capsys, argv + ["-f", "text", "--seed", "none"])
    assert "seed:none" in text and "bs:100" in text
    status, _, err = _run(capsys, argv + ["--seed", "x1"])
    assert status == 2 and err.count("\n") == 1 and "seed" in err


def test_cli_text_and_latex(capsys):
    argv = [SAMPLE_REF, "-i", *SAMPLE_SYSTEMS, "--paired-ar", "-parn", "200"]
    status, text, _ = _run(capsys, argv + ["-f", "text"])
    assert status == 0
    assert "Baseline: " in text and "(p = 0.0050)*" in text and "ar:200|seed:12345" in text
    status, latex, _ = _run(capsys, argv + ["-f", "latex"])
    assert latex.startswith("\\begin{tabular}") and "(p = 0.0050)*" in latex


@pytest.mark.parametrize("argv, message", [
    ([SAMPLE_REF, "-i", SAMPLE_SYSTEMS[0], "--paired-bs"], "paired tests need several systems"),
    ([SAMPLE_REF, "-i", *SAMPLE_SYSTEMS[:2], "--confidence"], "--confidence is for a single"),
    ([SAMPLE_REF, "-i", SAMPLE_SYSTEMS[0], "--confidence", "-sl"], "unavailable at sentence"),
    ([SAMPLE_REF, "-i", *SAMPLE_SYSTEMS[:2], "--paired-bs", "--confidence"], "--confidence is"),
])
def test_cli_refuses_what_sacrebleu_refuses(capsys, argv, message):
    status, out, err = _run(capsys, argv)
    assert status == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_cli_repeated_baseline_file_is_skipped(capsys):
    # sacrebleu ignores a second copy of the baseline in a paired test
    argv = [SAMPLE_REF, "-i", SAMPLE_SYSTEMS[0], SAMPLE_SYSTEMS[1], SAMPLE_SYSTEMS[0],
            "--paired-bs", "-pbsn", "50"]
    status, ours, _ = _run(capsys, argv + ["--sacrebleu-compat"])
    assert status == 0 and len(json.loads(ours)) == 2
    _assert_same_json(ours, _sacrebleu_cli(argv))


# -- tables -------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def sample_table(tmp_path_factory):
    import pyarrow as pa
    import pyarrow.parquet as pq

    refs, systems = _sample()
    names = ["sys-A", "sys-B", "ref-B"]
    rows = {"pair": [], "system": [], "seg": [], "hyp": [], "ref": []}
    for name, system in zip(names, systems):
        for i, (hyp, ref) in enumerate(zip(system, refs[0])):
            rows["pair"].append("p1" if i < 600 else "p2")
            rows["system"].append(name)
            rows["seg"].append(f"s{i}")
            rows["hyp"].append(hyp)
            rows["ref"].append(ref)
    table = pa.table(rows)
    folder = tmp_path_factory.mktemp("tables")
    pq.write_table(table, folder / "aligned.parquet")
    # systems' rows shuffled, the baseline's left in order: --segment-column must realign
    order = np.arange(table.num_rows)
    others = order[1000:].copy()
    np.random.default_rng(0).shuffle(others)
    pq.write_table(table.take(np.concatenate([order[:1000], others])),
                   folder / "shuffled.parquet")
    pq.write_table(table.take(np.delete(order, 2500)), folder / "short.parquet")
    return folder


def test_table_paired_equals_sacrebleu_per_group(capsys, sample_table, tmp_path):
    refs, systems = _sample()
    base = ["--system-column", "system", "--group-by", "pair", "--paired-bs", "-pbsn", "200",
            "--sacrebleu-compat"]
    status, aligned, _ = _run(capsys, [str(sample_table / "aligned.parquet"), *base])
    assert status == 0
    _, realigned, _ = _run(capsys, [str(sample_table / "shuffled.parquet"), *base,
                                    "--segment-column", "seg", "--baseline", "sys-A"])
    records = json.loads(aligned)
    # other systems are listed in order of first appearance, which the shuffle changed
    key = lambda r: (r["pair"], r["system"])  # noqa: E731
    assert sorted(json.loads(realigned), key=key) == sorted(records, key=key)
    # group p1 = the first 600 lines of every file, run through sacrebleu
    paths = []
    for k, system in enumerate([refs[0], *systems]):
        path = tmp_path / f"f{k}"
        path.write_text("\n".join(system[:600]) + "\n", encoding="utf-8")
        paths.append(str(path))
    theirs = json.loads(_sacrebleu_cli([paths[0], "-i", *paths[1:], "--paired-bs", "-pbsn",
                                        "200"]))
    p1 = [r for r in records if r["pair"] == "p1"]
    assert [r["system"] for r in p1] == ["sys-A", "sys-B", "ref-B"]
    for ours, other in zip(p1, theirs):
        for key, value in other["BLEU"].items():
            assert value is None and ours["BLEU"][key] is None or \
                abs(ours["BLEU"][key] - value) <= 1e-9
    assert all("bs:200|seed:12345" in r["signature"] for r in records)


@pytest.mark.parametrize("extra, message", [
    ([], "pair=p1: system 'ref-B' has 599 segments but the baseline 'sys-A' has 600"),
    (["--baseline", "nope"], "baseline 'nope' is not a value of column 'system'"),
])
def test_table_misaligned_systems_exit_2(capsys, sample_table, extra, message):
    status, out, err = _run(capsys, [str(sample_table / "short.parquet"), "--system-column",
                                     "system", "--group-by", "pair", "--paired-ar", *extra])
    assert status == 2 and out == "" and message in err and err.count("\n") == 1


def test_table_segment_ids_must_match(capsys, sample_table, tmp_path):
    import pyarrow.parquet as pq

    table = pq.read_table(sample_table / "aligned.parquet")
    seg = table.column("seg").to_pylist()
    seg[2999] = "unknown"
    pq.write_table(table.set_column(2, "seg", [seg]), tmp_path / "ids.parquet")
    status, _, err = _run(capsys, [str(tmp_path / "ids.parquet"), "--system-column", "system",
                                   "--group-by", "pair", "--segment-column", "seg",
                                   "--paired-bs"])
    assert status == 2 and "has segment 'unknown', which the baseline 'sys-A' lacks" in err


def test_table_needs_a_system_column(capsys, sample_table):
    status, _, err = _run(capsys, [str(sample_table / "aligned.parquet"), "--paired-bs"])
    assert status == 2 and "needs --system-column" in err


# -- WMT22 -----------------------------------------------------------------------------------

@needs_wmt22
@pytest.mark.parametrize("flags", [slow(["--paired-bs"]), ["--paired-ar", "-parn", "3000"]])
def test_wmt22_paired_json_equals_sacrebleu(capsys, flags):
    pair = "de-en"
    systems = [str(wmt22_system(pair, name)) for name in wmt22_systems(pair)[:4]]
    refs = [str(path) for path in wmt22_references(pair)[:1]]
    argv = [*refs, "-i", *systems, *flags]
    status, ours, _ = _run(capsys, argv + ["--sacrebleu-compat"])
    assert status == 0
    _assert_same_json(ours, _sacrebleu_cli(argv))
    _, exact, _ = _run(capsys, argv)
    _assert_same_json(exact, ours, tolerance=1e-6)


@needs_wmt22
def test_wmt22_confidence_json_equals_sacrebleu(capsys):
    pair = "cs-en"
    argv = [*map(str, wmt22_references(pair)), "-i", str(wmt22_system(pair,
                                                                      wmt22_systems(pair)[0])),
            "--confidence", "-w", "6"]
    status, ours, _ = _run(capsys, argv + ["--sacrebleu-compat"])
    assert status == 0
    _assert_same_json(ours, _sacrebleu_cli(argv))
