"""Jobs simulated per second, per policy and trace (median of several runs), and a 1,000,000-job synthetic run.

Usage: python benchmarks/schedule_speed.py [--runs N] [--jobs N] [--policies fifo,easy,...]

Times ``simulate`` only (the trace is read once beforehand). Each trace runs on its own machine
(see schedule_traces.py). Targets (issue 8): >= 50,000 jobs/s for EASY on the 10,000-job Lublin
trace; the 1,000,000-job synthetic trace in under a minute.
"""

from __future__ import annotations

import argparse
import statistics
import time

from schedule_traces import REFERENCE, TRACES, TRACES_DIR

from clusterplan.sched import simulate
from clusterplan.sched.synthetic import Workload, synthetic
from clusterplan.sched.traces import read_trace

POLICIES = ("fifo", "easy", "conservative", "fairshare")


def timed(call, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--jobs", type=int, default=1_000_000)
    parser.add_argument("--policies", default="fifo,easy,fairshare", help="policies for the big synthetic run")
    parser.add_argument("--conservative-jobs", type=int, default=20_000, help="jobs for the conservative run")
    args = parser.parse_args()
    print(f"jobs simulated per second, median of {args.runs} runs (simulate() only; the trace read once)")
    print(f"  {'trace':36} {'machine':>10} {'jobs':>7}  " + "  ".join(f"{p:>12}" for p in POLICIES))
    for name, (cluster, _) in TRACES.items():
        trace = read_trace(TRACES_DIR / name).limited_to(cluster.num_gpus)
        rates = [trace.num_jobs / timed(lambda: simulate(trace, cluster, policy), args.runs) for policy in POLICIES]
        machine = f"{cluster.num_nodes}x{cluster.gpus_per_node}"
        print(f"  {name:36} {machine:>10} {trace.num_jobs:7,}  " + "  ".join(f"{r:12,.0f}" for r in rates))
    print("target: EASY on lublin_256.swf >= 50,000 jobs/s")

    start = time.perf_counter()
    trace = synthetic(Workload(num_jobs=args.jobs, load=0.85, seed=1), num_gpus=REFERENCE.num_gpus)
    made = time.perf_counter() - start
    print(f"\n{trace.name} on the reference cluster (16 x 8), generated in {made:.2f} s; one run each")
    for policy in args.policies.split(","):
        start = time.perf_counter()
        schedule = simulate(trace, REFERENCE, policy)
        took = time.perf_counter() - start
        print(f"  {policy:13} {took:7.1f} s  {args.jobs / took:9,.0f} jobs/s  ({schedule.num_events:,} events)")
    print(f"target: {args.jobs:,} jobs in under 60 s")
    if args.conservative_jobs:
        small = synthetic(Workload(num_jobs=args.conservative_jobs, load=0.85, seed=1), num_gpus=REFERENCE.num_gpus)
        start = time.perf_counter()
        simulate(small, REFERENCE, "conservative")
        took = time.perf_counter() - start
        print(f"  conservative on {small.name}: {took:.1f} s, {small.num_jobs / took:,.0f} jobs/s "
              f"(compression on every early end; too slow for the 1M run)")


if __name__ == "__main__":
    main()
