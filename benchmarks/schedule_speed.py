"""Jobs simulated per second, per policy: the shipped traces (median of several runs) and synthetic traces of
10,000, 100,000 and 1,000,000 jobs, at a normal load (0.85) and overloaded (3x) on 128 GPUs; and how long
reading a 1,000,000-line SWF takes.

Usage: python benchmarks/schedule_speed.py [--runs N] [--sizes 10000,100000,1000000] [--loads 0.85,3]
                                           [--limit SECONDS] [--parallel N] [--skip-traces] [--depth N]...

Each synthetic run is a fresh process (its peak memory is its own) stopped after ``--limit`` seconds; runs go
``--parallel`` at a time (one core each). The synthetic traces are generated inside each run (seed 1) and the
SWF file is written to a temporary folder and removed: no big trace is kept. ``--depth N`` (repeatable) adds a
column: conservative backfilling with reservations for the first N queued jobs only (default: 2,000). Goals
(issue 19, settled in issue 31): EASY on the 1,000,000-job overloaded trace in <= 60 s and <= 1 GB (conservative
backfilling stays exact by default; ``--depth N`` is its bound for such overloads); 1,000,000 SWF lines read in
<= 3 s.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from clusterplan.sched import Cluster, simulate
from clusterplan.sched.synthetic import Workload, synthetic
from clusterplan.sched.traces import read_trace

POLICIES = ("fifo", "easy", "conservative", "fairshare")
REFERENCE = Cluster(num_nodes=16, gpus_per_node=8)
HERE = Path(__file__).resolve().parent


def timed(call, runs: int) -> float:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples)


def shipped(runs: int) -> None:
    sys.path.insert(0, str(HERE))
    from schedule_traces import TRACES, TRACES_DIR

    print(f"jobs simulated per second on the shipped traces, median of {runs} runs (simulate() only)")
    print(f"  {'trace':36} {'machine':>10} {'jobs':>7}  " + "  ".join(f"{p:>12}" for p in POLICIES))
    for name, (cluster, _) in TRACES.items():
        if not (TRACES_DIR / name).exists():
            continue
        trace = read_trace(TRACES_DIR / name).limited_to(cluster.num_gpus)
        rates = [trace.num_jobs / timed(lambda: simulate(trace, cluster, policy), runs) for policy in POLICIES]
        machine = f"{cluster.num_nodes}x{cluster.gpus_per_node}"
        print(f"  {name:36} {machine:>10} {trace.num_jobs:7,}  " + "  ".join(f"{r:12,.0f}" for r in rates))


def one_run(policy: str, jobs: int, load: float) -> dict:
    """In this process: generate, simulate, report seconds and peak memory (the child's own).
    ``policy`` is a policy's name, or ``conservative:N`` for conservative backfilling of depth N."""
    trace = synthetic(Workload(num_jobs=jobs, load=load, seed=1), num_gpus=REFERENCE.num_gpus)
    name, _, depth = policy.partition(":")
    options = {"depth": int(depth)} if depth else {}
    start, cpu = time.perf_counter(), time.process_time()
    schedule = simulate(trace, REFERENCE, name, **options)
    took, cpu = time.perf_counter() - start, time.process_time() - cpu
    peak = peak_gib()
    started = np.searchsorted(np.sort(schedule.start_s), trace.submit_s, side="right")
    queue = int(np.max(np.arange(1, trace.num_jobs + 1) - started)) if trace.num_jobs else 0
    return {"seconds": took, "cpu_seconds": cpu, "peak_gib": peak, "events": schedule.num_events, "max_queue": queue}


def peak_gib() -> float:
    """This process's peak resident memory (VmHWM: unlike ru_maxrss, not inherited from the parent)."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 2**20   # kB -> GiB
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def spawn(policy: str, jobs: int, load: float, limit: float) -> dict | None:
    command = [sys.executable, __file__, "--one", f"{policy},{jobs},{load}"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=limit)
    except subprocess.TimeoutExpired:
        return None
    if done.returncode:
        raise RuntimeError(done.stderr)
    return json.loads(done.stdout)


def synthetic_rates(sizes: list[int], loads: list[float], limit: float, parallel: int,
                    depths: tuple[int, ...] = ()) -> None:
    policies = POLICIES + tuple(f"conservative:{depth}" for depth in depths)
    cases = [(policy, jobs, load) for load in loads for jobs in sizes for policy in policies]
    with ThreadPoolExecutor(parallel) as pool:
        results = list(pool.map(lambda case: spawn(*case, limit), cases))
    print(f"\nsynthetic traces (seed 1) on the reference cluster (16 x 8 = 128 GPUs); one run each, stopped at "
          f"{limit:.0f} s; jobs/s (seconds, peak memory of the process)")
    for load in loads:
        print(f"  offered load {load:g}")
        for jobs in sizes:
            cells = []
            for policy in policies:
                result = results[cases.index((policy, jobs, load))]
                if result is None:
                    cells.append(f"{policy} > {limit:.0f} s")
                else:
                    cells.append(f"{policy} {jobs / result['seconds']:,.0f} ({result['seconds']:.1f} s, "
                                 f"CPU {result['cpu_seconds']:.1f} s, "
                                 f"{result['peak_gib']:.2f} GiB, queue <= {result['max_queue']:,})")
            print(f"    {jobs:>9,} jobs  " + "; ".join(cells))
    print("goal: easy on 1,000,000 jobs at load 3 in <= 60 s and <= 1 GB (conservative stays exact by default; "
          "--depth N bounds it: docs/scheduling.md)")


def swf_read(jobs: int, runs: int) -> None:
    trace = synthetic(Workload(num_jobs=jobs, load=3.0, seed=1), num_gpus=REFERENCE.num_gpus)
    fields = np.full((trace.num_jobs, 18), -1.0)
    fields[:, 0], fields[:, 1], fields[:, 3] = trace.job_id + 1, trace.submit_s, trace.run_s
    fields[:, 4] = fields[:, 7] = trace.gpus
    fields[:, 8], fields[:, 11] = trace.estimate_s, trace.user + 1
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "overloaded.swf"
        with open(path, "w") as stream:
            stream.write("; MaxProcs: 128\n")
            np.savetxt(stream, fields, fmt="%d")
        size = path.stat().st_size
        took = timed(lambda: read_trace(path), runs)
        cpu = time.process_time()
        read_trace(path)
        cpu = time.process_time() - cpu
    print(f"\nreading a {jobs:,}-line SWF ({size / 1e6:.0f} MB): {took:.2f} s, median of {runs} runs "
          f"({jobs / took:,.0f} lines/s), CPU {cpu:.2f} s; goal <= 3 s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--sizes", default="10000,100000,1000000")
    parser.add_argument("--loads", default="0.85,3")
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--parallel", type=int, default=1)
    parser.add_argument("--skip-traces", action="store_true")
    parser.add_argument("--depth", type=int, action="append", default=[],
                        help="also conservative backfilling of this reservation depth (repeatable)")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        policy, jobs, load = args.one.split(",")
        print(json.dumps(one_run(policy, int(jobs), float(load))))
        return
    if not args.skip_traces:
        shipped(args.runs)
    swf_read(1_000_000, args.runs)
    synthetic_rates([int(n) for n in args.sizes.split(",")], [float(x) for x in args.loads.split(",")],
                    args.limit, args.parallel, tuple(args.depth))


if __name__ == "__main__":
    main()
