"""How a GEMM's rate falls with its inner size k on one GPU, against the step model's k / (k + gemm_k0).

Usage: python benchmarks/gemm_k_sweep.py [--gpu ID] [--mn 8192] [--runs 5]

For each k, C[m, n] = A[m, k] B[k, n] in bf16 on the GPU, timed by CUDA events over 20 multiplies after 5 warm-up
ones, the median of --runs runs. Prints TFLOP/s, the rate relative to the largest k, and the model's relative
rate k / (k + gemm_k0) with the catalog's gemm_k0 of --gpu (perf/compute.py; calibrated on whole training steps,
so the hardware's own loss is expected to be at most that). Needs a CUDA GPU.
"""

from __future__ import annotations

import argparse
import statistics
import sys

from clusterplan.catalog import load_catalog

KS = (256, 512, 1024, 2048, 4096, 8192, 16384)


def tflops(torch, mn: int, k: int, runs: int) -> float:
    a = torch.randn(mn, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(k, mn, device="cuda", dtype=torch.bfloat16)
    rates = []
    for _ in range(runs):
        for _ in range(5):
            torch.matmul(a, b)
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(20):
            torch.matmul(a, b)
        end.record()
        torch.cuda.synchronize()
        rates.append(2 * mn * mn * k * 20 / (start.elapsed_time(end) / 1e3) / 1e12)
    return statistics.median(rates)


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
    measured = {k: tflops(torch, args.mn, k, args.runs) for k in KS}
    top = measured[KS[-1]]
    print(f"# {torch.cuda.get_device_name()}, bf16, m = n = {args.mn}, median of {args.runs} runs; "
          f"model: k / (k + {gpu.gemm_k0:g}) ({args.gpu} gemm_k0)")
    print(f"{'k':>6} {'TFLOP/s':>9} {'of peak':>8} {'vs k max':>9} {'model':>7}")
    for k, rate in measured.items():
        model = (k / (k + gpu.gemm_k0)) / (KS[-1] / (KS[-1] + gpu.gemm_k0))
        print(f"{k:>6} {rate:>9.1f} {rate * 1e12 / gpu.bf16_flops:>8.1%} {rate / top:>9.1%} {model:>7.1%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
