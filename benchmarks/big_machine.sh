#!/usr/bin/env bash
# One prepared run of the benchmarks that need a bigger machine than a 2-core box:
# the 16-core scaling of issue "Every core" (cpu) and the H100 figures of issue
# "fastbleu on the GPU" (gpu).  Each part ends within about 4 minutes and writes its
# JSON and log under OUTDIR; nothing needs installing there beyond numpy, numba, pyarrow
# (and torch with numba's CUDA package for the gpu part): fastbleu runs from this checkout
# with JIT kernels, and the kernel cache is warmed before anything is timed.
#
#   bash benchmarks/big_machine.sh cpu OUTDIR   # bench_scaling.py, 1..16 threads
#   bash benchmarks/big_machine.sh gpu OUTDIR   # bench_gpu.py, 150 s budget
#
# The cpu part reads DATA (default .devdata/scaling-wmt22-ende.tsv, made here by
# `python benchmarks/bench_scaling.py --export-data .devdata/scaling-wmt22-ende.tsv`):
# the WMT22 text does not travel otherwise.  SIZES (default 0.25) scales issue 26's sizes.
set -uo pipefail
part=${1:?usage: big_machine.sh cpu|gpu OUTDIR}
out=${2:?usage: big_machine.sh cpu|gpu OUTDIR}
mkdir -p "$out"
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
export PYTHONUNBUFFERED=1
export PYTHONPATH="$root${PYTHONPATH:+:$PYTHONPATH}"
export NUMBA_CACHE_DIR=${NUMBA_CACHE_DIR:-/tmp/fastbleu-bench-cache}

python3 - > "$out/environment-$part.json" <<'EOF'
import json, os, platform, sys
found = {"python": sys.version.split()[0], "cpus": os.cpu_count(), "machine": platform.machine()}
for name in ("numpy", "numba", "pyarrow", "torch", "cupy"):
    try:
        found[name] = __import__(name).__version__
    except Exception as error:  # noqa: BLE001 (a missing package is a fact to record)
        found[name] = f"not importable: {type(error).__name__}"
print(json.dumps(found, indent=1))
EOF
cat "$out/environment-$part.json"

case $part in
cpu)
    data=${DATA:-.devdata/scaling-wmt22-ende.tsv}
    [ -f "$data" ] || { echo "big_machine.sh: no data file $data (see the header)" >&2; exit 2; }
    timeout 235 python3 benchmarks/bench_scaling.py --warm --sizes "${SIZES:-0.25}" \
        --data "$data" --json "$out/scaling-16core.json" 2>&1 | tee "$out/scaling.log"
    ;;
gpu)
    timeout 200 python3 benchmarks/bench_gpu.py --json "$out/gpu-h100.json" \
        --budget "${BUDGET:-150}" 2>&1 | tee "$out/gpu.log"
    ;;
*)
    echo "big_machine.sh: the part is cpu or gpu, not $part" >&2
    exit 2
    ;;
esac
