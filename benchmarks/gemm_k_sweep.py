"""How a GEMM's rate falls with its inner size k on one GPU, against the step model's k / (k + gemm_k0).

Usage: python benchmarks/gemm_k_sweep.py [--gpu ID] [--mn 8192] [--runs 5]

For each k, ``clusterplan bench gemm``'s bf16 multiply (C[m, n] = A[m, k] W[n, k]^T, 20 timed after 5 warm-up,
CUDA events) at m = n = --mn, the median of --runs runs. Prints TFLOP/s, the fraction of --gpu's peak, the rate
relative to the largest k, and the model's relative rate k / (k + gemm_k0) with the catalog's gemm_k0 of --gpu
(perf/compute.py; calibrated on whole training steps, so the hardware's own loss is expected to be at most that).
Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from clusterplan.bench.gemm import GemmShape, measure_gemm
from clusterplan.catalog import load_catalog

KS = (256, 512, 1024, 2048, 4096, 8192, 16384)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpu", default="h200-sxm", help="catalog GPU id whose gemm_k0 and peak to compare with")
    parser.add_argument("--mn", type=int, default=8192, help="m = n of every multiply")
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    import torch   # heavy: only here
    if not torch.cuda.is_available():
        print("gemm_k_sweep: needs a CUDA GPU", file=sys.stderr)
        return 2
    gpu = load_catalog().get("gpus", args.gpu)
    shapes = [GemmShape(name=f"k-{k}", m=args.mn, n=args.mn, k=k) for k in KS]
    runs = [measure_gemm(shapes=shapes, dtypes=("bf16",), iterations=20, warmup=5, device="cuda", gpu=gpu)
            for _ in range(args.runs)]
    measured = {k: statistics.median(run.cases[index].flops_per_s for run in runs) / 1e12
                for index, k in enumerate(KS)}
    top = measured[KS[-1]]
    print(f"# {runs[0].device.name}, bf16, m = n = {args.mn}, median of {args.runs} runs; "
          f"model: k / (k + {gpu.gemm_k0:g}) ({args.gpu} gemm_k0)")
    print(f"{'k':>6} {'TFLOP/s':>9} {'of peak':>8} {'vs k max':>9} {'model':>7}")
    for k, rate in measured.items():
        model = (k / (k + gpu.gemm_k0)) / (KS[-1] / (KS[-1] + gpu.gemm_k0))
        print(f"{k:>6} {rate:>9.1f} {rate * 1e12 / gpu.bf16_flops:>8.1%} {rate / top:>9.1%} {model:>7.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
