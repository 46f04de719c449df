#!/usr/bin/env bash
# One GPU: dense GEMM TFLOP/s in bf16 and fp8 at m = n = k = 8192 (`bench gemm`), each the median of
# RUNS runs of 20 timed multiplies after 5 warm-up ones, against the catalog's dense peaks of GPU_ID;
# then the GPU-only fp8 tests (an fp8 GEMM checked against a float reference, an fp8 all_gather).
# Usage: benchmarks/gpu_checks.sh [GPU_ID (default h200-sxm)] [RUNS (default 5)]
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="src${PYTHONPATH:+:$PYTHONPATH}"
gpu="${1:-h200-sxm}"
runs="${2:-5}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python -c 'import torch; print(f"torch {torch.__version__}, CUDA {torch.version.cuda}, NCCL {torch.cuda.nccl.version()}, "
                               f"{torch.cuda.get_device_name()} (compute capability {torch.cuda.get_device_capability()})")'
for run in $(seq "$runs"); do
    python -m clusterplan bench gemm --dtype bf16,fp8 --sizes 8192 --shapes none -n 20 -w 5 --gpu "$gpu" \
        --format json -o "$work/run$run.json"
done
python -m clusterplan bench gemm --dtype bf16,fp8 --sizes 8192 --shapes none -n 20 -w 5 --gpu "$gpu"
python - "$work" <<'PY'
import json, statistics, sys
from pathlib import Path
docs = [json.loads(path.read_text()) for path in sorted(Path(sys.argv[1]).glob("run*.json"))]
print(f"# median of {len(docs)} runs, square-8192:")
for dtype in dict.fromkeys(row["dtype"] for doc in docs for row in doc["rows"]):
    rows = [row for doc in docs for row in doc["rows"] if row["dtype"] == dtype and row["tflops"]]
    tflops = statistics.median(row["tflops"] for row in rows)
    runs = ", ".join(f"{row['tflops']:.1f}" for row in rows)
    peak = ""
    if rows[0]["fraction_of_peak"] is not None:
        share = statistics.median(row["fraction_of_peak"] for row in rows)
        peak = f", {share:.1%} of the catalog's {rows[0]['peak_tflops']:.1f}"
    print(f"  {dtype:<5} {tflops:8.1f} TFLOP/s{peak} (runs: {runs})")
PY
python -m clusterplan bench collectives --op all_gather -d fp8 -b 1M -e 256M -f 4 --backend nccl
python -m pytest -q -p no:cacheprovider tests/bench/test_fp8.py -k "gpu"
