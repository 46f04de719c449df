"""Collective-time evaluations per second: the vectorised model against one call per size.

Usage: python benchmarks/collectives_speed.py [--runs N] [--sizes N]

One evaluation = one (size, group) priced over every algorithm and protocol
and the fastest kept. Prints the median over runs of the vectorised call and,
as the baseline in the same process, the same sizes predicted one call each.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from clusterplan.catalog import load_catalog
from clusterplan.design import design
from clusterplan.perf.collectives import predict, system_from_design
from clusterplan.spec import load_spec

TARGET = 1_000_000


def timed(call, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--sizes", type=int, default=100_000)
    args = parser.parse_args()
    system = system_from_design(design(load_spec(), load_catalog()))
    sizes = np.logspace(3, 34, args.sizes, base=2)
    print(f"reference cluster, all_reduce, median of {args.runs} runs")
    for ranks in (8, 16, 128):
        vectorised = timed(lambda: predict("all_reduce", sizes, system, ranks), args.runs)
        few = sizes[:: max(1, args.sizes // 2000)]
        scalar = timed(lambda: [predict("all_reduce", [s], system, ranks) for s in few], max(3, args.runs // 2))
        rate, scalar_rate = args.sizes / vectorised, few.size / scalar
        print(f"  {ranks:4} GPUs: {rate:12,.0f} evaluations/s vectorised ({vectorised * 1e3:.1f} ms for "
              f"{args.sizes:,} sizes); one call per size {scalar_rate:9,.0f}/s; x{rate / scalar_rate:.0f}")
    print(f"target >= {TARGET:,} evaluations/s on one core")


if __name__ == "__main__":
    main()
