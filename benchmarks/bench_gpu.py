#!/usr/bin/env python3
"""fastbleu on the GPU (issue 27): token-id sentence BLEU, chrF++ MBR matrices, resampling.

What is measured (one H100 in the issue; any CUDA GPU, or numba's simulator with --smoke)
------------------------------------------------------------------------------------------
1. Sentence BLEU of token ids (sacrebleu's ``sentence_score`` options: ``exp``
   smoothing, effective order) for batch x length 256x1024, 512x1024, 4096x256,
   65536x64 and 262144x30.  Ids are Zipf-distributed over 32,000 (weight
   ``1 / rank``), fixed seed; a reference is its hypothesis with 30 % of the
   positions redrawn.  Three implementations, each from ids on the GPU to
   scores (best of ``--repeat`` runs after a warm-up that compiles):
   - ``fastbleu_gpu``: ``fastbleu.gpu.bleu_statistics`` + ``sentence_scores``
     (``fastbleu_gpu_statistics``: the rows alone);
   - ``torch``: TensorBLEU's method (arXiv 2510.05485) written here in torch:
     n-grams by ``unfold``, a batch-wide dictionary by ``torch.unique(dim=0)``,
     per-sentence counts by an offset ``bincount`` (by ``unique`` counts where
     batch x dictionary passes 2**27 entries), clipped by ``minimum``, then
     the same BLEU formula in torch;
   - ``fastbleu_cpu``: the ids copied to the host, then
     ``BLEU(effective_order=True).sentence_scores(TokenIds(...))`` on all cores.
   The statistics (matches and totals of every order) of the three must be
   identical; the scores of torch must be within 1e-9 of fastbleu's.  Each
   case also records ``launches_per_call``: the kernel launches, read-backs
   to the host and waits of one ``bleu_statistics`` call and of one
   statistics + ``sentence_scores`` call, counted at numba's launch and copy
   points (``tests/gpu/launches.py``), outside the timed runs.
2. chrF++ matrices (``word_order=2``) of 1,000 sources x 64 candidates x 64
   pseudo-references (the candidates themselves): ``fastbleu.gpu.chrf_matrix``
   against ``fastbleu.pairwise.chrf_matrix`` on all cores (values must agree).
3. Paired bootstrap of 2 systems x 1,000,000 segments x 1,000 resamples on
   statistics already on the GPU (``fastbleu.gpu.bootstrap_scores``, numpy's
   draws made on the device), checked against the CPU's sums of sacrebleu's
   draws (``default_rng(seed).choice``) for the first two resamples.
4. Approximate randomization of 2 systems against a baseline x 1,000,000
   segments x 1,000 trials on statistics already on the GPU
   (``fastbleu.gpu.randomization_scores``, numpy's coins made on the device),
   against ``fastbleu.significance.resampling.randomization_scores`` on all
   cores with the same seed (run once; A and B must agree).

Running it
----------
From the repository root, on a machine with a GPU::

    python benchmarks/bench_gpu.py --json benchmarks/results/gpu.json

and without one, a few seconds on the simulator with tiny sizes::

    python benchmarks/bench_gpu.py --smoke --simulator --json /tmp/gpu-smoke.json

It stops starting new measurements after ``--budget`` seconds (default 150)
and records what it skipped; a failure to load the CUDA stack is one line on
stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
SIZES = [(256, 1024), (512, 1024), (4096, 256), (65536, 64), (262144, 30)]
SMOKE_SIZES = [(3, 9), (4, 6), (5, 4)]
VOCAB = 32000


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True, help="where to write the results (JSON)")
    parser.add_argument("--smoke", action="store_true", help="tiny sizes, one run each")
    parser.add_argument("--simulator", action="store_true",
                        help="run the kernels on numba's CUDA simulator (no GPU needed)")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measurement (best)")
    parser.add_argument("--budget", type=float, default=150.0,
                        help="seconds after which no new measurement starts")
    return parser.parse_args(argv)


class Clock:
    def __init__(self, budget: float, sync):
        self.start = time.perf_counter()
        self.budget = budget
        self.sync = sync

    def left(self) -> bool:
        return time.perf_counter() - self.start < self.budget

    def best(self, run, repeat: int) -> float:
        """Best wall seconds of ``run()`` over ``repeat`` runs (device synchronised)."""
        best = float("inf")
        for _ in range(repeat):
            self.sync()
            t = time.perf_counter()
            run()
            self.sync()
            best = min(best, time.perf_counter() - t)
            if not self.left():
                break
        return best


def zipf_ids(rng, shape) -> np.ndarray:
    weights = 1.0 / np.arange(1, VOCAB + 1)
    return rng.choice(VOCAB, size=shape, p=weights / weights.sum()).astype(np.int64)


def pairs(rng, batch, length):
    hyp = zipf_ids(rng, (batch, length))
    redraw = rng.random((batch, length)) < 0.3
    ref = np.where(redraw, zipf_ids(rng, (batch, length)), hyp)
    return hyp, ref


# -- the peer: TensorBLEU's counting, in torch ---------------------------------------------

def torch_rows(torch, hyp, ref, max_order=4):
    """Statistics rows ``[hyp_len, ref_len, matches, totals]`` of unpadded id tensors."""
    batch, length = hyp.shape
    rows = torch.zeros((batch, 2 + 2 * max_order), dtype=torch.int64, device=hyp.device)
    rows[:, 0] = length
    rows[:, 1] = ref.shape[1]
    for n in range(1, max_order + 1):
        if length < n or ref.shape[1] < n:
            continue
        h = hyp.unfold(1, n, 1)
        r = ref.unfold(1, n, 1)
        nh, nr = h.shape[1], r.shape[1]
        grams = torch.cat([h.reshape(-1, n), r.reshape(-1, n)])
        unique, inverse = torch.unique(grams, dim=0, return_inverse=True)
        size = unique.shape[0]
        hid = inverse[:batch * nh].view(batch, nh)
        rid = inverse[batch * nh:].view(batch, nr)
        offset = (torch.arange(batch, device=hyp.device) * size)[:, None]
        if batch * size <= 1 << 27:  # TensorBLEU's batched bincount
            hc = torch.bincount((hid + offset).flatten(), minlength=batch * size)
            rc = torch.bincount((rid + offset).flatten(), minlength=batch * size)
            matches = torch.minimum(hc, rc).view(batch, size).sum(1)
        else:  # the same counts without a batch x dictionary table
            hk, hcount = torch.unique((hid + offset).flatten(), return_counts=True)
            rk, rcount = torch.unique((rid + offset).flatten(), return_counts=True)
            at = torch.searchsorted(rk, hk).clamp(max=rk.numel() - 1)
            clipped = torch.where(rk[at] == hk, torch.minimum(hcount, rcount[at]), 0)
            matches = torch.zeros(batch, dtype=torch.int64, device=hyp.device)
            matches.scatter_add_(0, hk // size, clipped)
        rows[:, 1 + n] = matches
        rows[:, 1 + max_order + n] = nh
    return rows


def torch_bleu(torch, rows, max_order=4):
    """sacrebleu's sentence BLEU (exp smoothing, effective order) of rows, in torch."""
    rows = rows.double()
    sys_len, ref_len = rows[:, 0], rows[:, 1]
    matches, totals = rows[:, 2:2 + max_order], rows[:, 2 + max_order:]
    present = totals > 0
    zero = (matches == 0) & present
    halvings = torch.cumsum(zero.double(), 1)
    precision = torch.where(zero, 100.0 / (torch.pow(2.0, halvings) * totals.clamp(min=1)),
                            100.0 * matches / totals.clamp(min=1))
    order = present.sum(1).clamp(min=1)
    logs = torch.where(present, torch.log(precision.clamp(min=1e-300)), 0.0).sum(1)
    bp = torch.where(sys_len < ref_len, torch.exp(1 - ref_len / sys_len.clamp(min=1)), 1.0)
    bp = torch.where(sys_len == 0, 0.0, bp)
    return torch.where(matches.sum(1) > 0, bp * torch.exp(logs / order), 0.0)


# -- the measurements ------------------------------------------------------------------------

def device_calls():
    """``tests/gpu/launches.py``'s counter of launches, read-backs and waits."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("launches", ROOT / "tests" / "gpu" /
                                                  "launches.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.DeviceCalls()


def counted(run) -> dict:
    """Launches (by kernel), read-backs and waits of one ``run()``."""
    with device_calls() as calls:
        run()
    return {"launches": calls.launches, "kernels": dict(calls.kernels),
            "readbacks": calls.readbacks, "waits": calls.waits}


def bleu_cases(args, clock, lib, sizes, results):
    import fastbleu
    from fastbleu import gpu

    bleu = fastbleu.BLEU(effective_order=True)
    formula = bleu.formula
    torch = lib.get("torch")
    rng = np.random.default_rng(2026)
    for batch, length in sizes:
        case = {"batch": batch, "length": length}
        results["bleu"].append(case)
        if not clock.left():
            case["skipped"] = "time budget spent"
            continue
        hyp, ref = pairs(rng, batch, length)
        h, r = lib["to_device"](hyp), lib["to_device"](ref)
        expected = bleu.segment_statistics(fastbleu.TokenIds(hyp), [fastbleu.TokenIds(ref)])

        rows = gpu.bleu_statistics(h, r)  # warm-up: compiles the kernels once
        gpu.sentence_scores(rows, formula)
        case["launches_per_call"] = {
            "statistics": counted(lambda: gpu.bleu_statistics(h, r)),
            "sentence_scores": counted(
                lambda: gpu.sentence_scores(gpu.bleu_statistics(h, r), formula))}
        case["fastbleu_gpu_statistics_s"] = clock.best(lambda: gpu.bleu_statistics(h, r),
                                                       args.repeat)
        case["fastbleu_gpu_s"] = clock.best(
            lambda: gpu.sentence_scores(gpu.bleu_statistics(h, r), formula), args.repeat)
        ours = lib["host"](gpu.bleu_statistics(h, r))
        scores = lib["host"](gpu.sentence_scores(gpu.bleu_statistics(h, r), formula))
        case["identical_gpu_cpu_statistics"] = bool(np.array_equal(ours, expected))

        def on_cpu():
            return bleu.sentence_scores(fastbleu.TokenIds(lib["host"](h)),
                                        [fastbleu.TokenIds(lib["host"](r))])
        cpu_scores = on_cpu()
        case["fastbleu_cpu_s"] = clock.best(on_cpu, args.repeat)
        case["max_score_difference_gpu_cpu"] = float(np.max(np.abs(scores - cpu_scores),
                                                            initial=0.0))
        if torch is not None:
            torch_rows(torch, h, r)
            case["torch_s"] = clock.best(lambda: torch_bleu(torch, torch_rows(torch, h, r)),
                                         args.repeat)
            theirs = torch_rows(torch, h, r).cpu().numpy()
            case["identical_torch_statistics"] = bool(np.array_equal(theirs, expected))
            peer = torch_bleu(torch, torch_rows(torch, h, r)).cpu().numpy()
            case["max_score_difference_torch"] = float(np.max(np.abs(peer - scores),
                                                              initial=0.0))
            case["speedup_vs_torch"] = case["torch_s"] / case["fastbleu_gpu_s"]
        case["speedup_vs_cpu"] = case["fastbleu_cpu_s"] / case["fastbleu_gpu_s"]
        print(json.dumps(case), flush=True)


def words(rng, n_words, vocabulary):
    return " ".join(vocabulary[i] for i in rng.integers(0, len(vocabulary), n_words))


def chrf_case(args, clock, lib, results):
    from fastbleu import gpu, pairwise

    sources, n = (3, 4) if args.smoke else (1000, 64)
    case = {"sources": sources, "candidates": n, "pseudo_references": n, "word_order": 2}
    results["chrf"] = case
    if not hasattr(gpu, "chrf_matrix"):
        case["skipped"] = "fastbleu.gpu.chrf_matrix is not built yet"
        return
    if not clock.left():
        case["skipped"] = "time budget spent"
        return
    rng = np.random.default_rng(5)
    letters = np.array(list("abcdefghijklmnopqrstuvwxyz"))
    vocabulary = ["".join(rng.choice(letters, rng.integers(2, 9))) for _ in range(3000)]
    base = [words(rng, 22, vocabulary) for _ in range(sources)]
    cands = [[" ".join(w if rng.random() > 0.3 else vocabulary[rng.integers(3000)]
                       for w in text.split()) for _ in range(n)] for text in base]
    matrices = gpu.chrf_matrix(cands, word_order=2)  # warm-ups: both compile their kernels
    pairwise.chrf_matrix(cands[:1], word_order=2)
    case["launches_per_call"] = counted(lambda: gpu.chrf_matrix(cands, word_order=2))
    case["fastbleu_gpu_s"] = clock.best(lambda: gpu.chrf_matrix(cands, word_order=2),
                                        max(1, args.repeat // 2))
    t = time.perf_counter()
    cpu = pairwise.chrf_matrix(cands, word_order=2)
    case["fastbleu_cpu_s"] = time.perf_counter() - t
    case["max_difference"] = float(np.nanmax(np.abs(lib["host"](matrices) - cpu)))
    case["speedup_vs_cpu"] = case["fastbleu_cpu_s"] / case["fastbleu_gpu_s"]
    print(json.dumps(case), flush=True)


def draws(seed, resamples, n):
    """sacrebleu's first ``resamples`` bootstrap resamples, which the device draws too."""
    return np.random.default_rng(seed).choice(n, size=(resamples, n), replace=True)


def bootstrap_case(args, clock, lib, results):
    import fastbleu
    from fastbleu import gpu

    n, samples = (40, 20) if args.smoke else (1_000_000, 1000)
    case = {"systems": 2, "segments": n, "resamples": samples}
    results["bootstrap"] = case
    if not clock.left():
        case["skipped"] = "time budget spent"
        return
    rng = np.random.default_rng(9)
    formula = fastbleu.BLEU().formula
    ref = zipf_ids(rng, (n, 20))
    on_device = lib["to_device"](ref)
    systems = []
    for share in (0.5, 0.6):  # two systems, the second closer to the references
        hyp = np.where(rng.random((n, 20)) < share, ref, zipf_ids(rng, (n, 20)))
        systems.append(gpu.bleu_statistics(lib["to_device"](hyp), on_device))
    gpu.bootstrap_scores(systems, formula, n_samples=2, seed=1)  # warm-up: compiles
    case["launches_per_call"] = counted(
        lambda: gpu.bootstrap_scores(systems, formula, n_samples=samples, seed=12345))
    case["fastbleu_gpu_s"] = clock.best(
        lambda: gpu.bootstrap_scores(systems, formula, n_samples=samples, seed=12345),
        max(1, args.repeat // 2))
    scores = lib["host"](gpu.bootstrap_scores(systems, formula, n_samples=samples, seed=12345))
    rows = [lib["host"](s) for s in systems]
    check = []
    first = draws(12345, 2, n)
    for b in range(2):
        idx = first[b]
        expected = [formula.scores(r[idx].sum(axis=0, keepdims=True), check=False)[0]
                    for r in rows]
        check.append(float(np.max(np.abs(scores[:, b] - expected))))
    case["max_difference_to_cpu_sums_of_the_same_draws"] = max(check)
    print(json.dumps(case), flush=True)


def randomization_case(args, clock, lib, results):
    import fastbleu
    from fastbleu import gpu
    from fastbleu.significance.resampling import randomization_scores

    n, trials = (40, 20) if args.smoke else (1_000_000, 1000)
    case = {"systems": 2, "segments": n, "trials": trials}
    results["randomization"] = case
    if not clock.left():
        case["skipped"] = "time budget spent"
        return
    rng = np.random.default_rng(10)
    formula = fastbleu.BLEU().formula
    ref = zipf_ids(rng, (n, 20))
    on_device = lib["to_device"](ref)
    rows = []
    for share in (0.55, 0.5, 0.6):  # the baseline, then two systems
        hyp = np.where(rng.random((n, 20)) < share, ref, zipf_ids(rng, (n, 20)))
        rows.append(gpu.bleu_statistics(lib["to_device"](hyp), on_device))
    gpu.randomization_scores(rows[0], rows[1:], formula, n_trials=2, seed=1)  # compiles

    def run():
        return gpu.randomization_scores(rows[0], rows[1:], formula, n_trials=trials, seed=12345)

    case["launches_per_call"] = counted(run)
    case["fastbleu_gpu_s"] = clock.best(run, max(1, args.repeat // 2))
    a, b = (lib["host"](x) for x in run())
    host_rows = [lib["host"](r) for r in rows]
    t = time.perf_counter()
    cpu_a, cpu_b = randomization_scores(host_rows[0], host_rows[1:], formula, trials,
                                        np.random.default_rng(12345))
    case["fastbleu_cpu_s"] = time.perf_counter() - t
    case["max_difference_to_cpu"] = float(max(np.max(np.abs(a - cpu_a)),
                                              np.max(np.abs(b - cpu_b))))
    case["speedup_vs_cpu"] = case["fastbleu_cpu_s"] / case["fastbleu_gpu_s"]
    print(json.dumps(case), flush=True)


def library(args):
    """How arrays get to the device and back: torch if it sees a GPU, else numba."""
    lib = {"torch": None}
    try:
        import torch
        if torch.cuda.is_available() and not args.simulator:
            lib.update(torch=torch, to_device=lambda a: torch.from_numpy(a).cuda(),
                       host=lambda a: a.copy_to_host() if hasattr(a, "copy_to_host") else
                       a.cpu().numpy(), sync=torch.cuda.synchronize,
                       name=torch.cuda.get_device_name(), torch_version=torch.__version__)
            return lib
    except ImportError:
        lib["torch_missing"] = "torch is not installed: the torch peer is skipped"
    from fastbleu._kernels.cuda.loader import cuda
    lib.update(to_device=lambda a: cuda.to_device(a),
               host=lambda a: a.copy_to_host() if hasattr(a, "copy_to_host") else np.asarray(a),
               sync=(lambda: None) if args.simulator else cuda.synchronize,
               name="numba CUDA simulator" if args.simulator else str(cuda.get_current_device()))
    return lib


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.simulator:
        os.environ["NUMBA_ENABLE_CUDASIM"] = "1"  # before numba is imported
        # The simulator runs the kernels as Python, where uint64 hashes wrap with a warning.
        warnings.filterwarnings("ignore", category=RuntimeWarning)
    from fastbleu.gpu import GPUUnavailable

    try:
        lib = library(args)
        import fastbleu._kernels.cuda.loader  # noqa: F401  (a broken CUDA stack fails here)
    except GPUUnavailable as error:
        print(f"bench_gpu: {error}", file=sys.stderr)
        return 2
    import numba

    results = {"device": lib["name"], "torch": lib.get("torch_version"),
               "torch_note": lib.get("torch_missing"), "numba": numba.__version__,
               "numpy": np.__version__, "python": platform.python_version(),
               "cpu_count": os.cpu_count(), "smoke": args.smoke, "repeat": args.repeat,
               "bleu": []}
    clock = Clock(args.budget, lib["sync"])
    sizes = SMOKE_SIZES if args.smoke else SIZES
    if args.smoke:
        args.repeat = 1
    bleu_cases(args, clock, lib, sizes, results)
    chrf_case(args, clock, lib, results)
    bootstrap_case(args, clock, lib, results)
    randomization_case(args, clock, lib, results)
    results["wall_s"] = time.perf_counter() - clock.start
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.json} ({results['wall_s']:.1f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
