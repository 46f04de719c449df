"""Every policy on every job trace in shared/data/traces/: utilization and waits, as docs/scheduling.md shows.

Usage: python benchmarks/schedule_traces.py [--traces DIR] [--whatif-jobs N]

Each trace runs on its own machine (the size its header or sample cluster file gives) and on the
reference cluster (16 nodes x 8 H100). SWF processors are taken as GPUs. Then the what-if: the
reference cluster under a synthetic mixed workload, and what each policy's utilization does to the
cost per delivered GPU-hour.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from clusterplan.plan import plan
from clusterplan.sched import Cluster
from clusterplan.sched.replay import offered_load, replay
from clusterplan.sched.synthetic import Workload, synthetic
from clusterplan.sched.traces import read_trace
from clusterplan.spec import load_spec

ROOT = Path(__file__).resolve().parents[1]
TRACES_DIR = ROOT.parent / "shared" / "data" / "traces"
POLICIES = ("fifo", "easy", "conservative", "fairshare")
REFERENCE = Cluster(num_nodes=16, gpus_per_node=8)

# file -> (own machine, where its size comes from)
TRACES = {
    "lublin_256.swf": (Cluster(num_nodes=256, gpus_per_node=1), "header MaxNodes 256"),
    "NASA-iPSC-1993-3.1-cln.swf.gz": (Cluster(num_nodes=128, gpus_per_node=1), "header MaxProcs 128"),
    "hpc2n-alea-subset.swf": (Cluster(num_nodes=240, gpus_per_node=1), "header MaxProcs 240 (120 nodes x 2)"),
    "alibaba-openb_pod_list_default.csv": (Cluster(num_nodes=777, gpus_per_node=8),
                                           "6,212 GPUs on 1,213 mixed nodes, as 777 x 8"),
    "tiresias-60_job.csv": (Cluster(num_nodes=32, gpus_per_node=4), "tiresias-n32g4.csv: 32 nodes x 4"),
}
NOT_JOB_TRACES = {
    "acmetrace-cluster_summary.csv": "per-cluster summary statistics, not jobs",
    "helios-cluster_summary.csv": "per-cluster summary statistics, not jobs",
    "alibaba-openb_node_list_gpu_node.csv": "node list of the Alibaba trace (its cluster), not jobs",
    "hpc2n-alea-subset.swf.machines": "machine file of the HPC2N trace",
    "tiresias-n32g4.csv": "cluster file of the Tiresias trace",
    "README.md": "",
}
# Reference simulator figures from shared/research/scheduling_reliability.md A5 (mean wait s, bsld, util).
ANCHORS = {
    ("lublin_256.swf", "fifo"): (2_388_444, 66_502, 0.655), ("lublin_256.swf", "easy"): (97_156, 590, 0.936),
    ("lublin_256.swf", "conservative"): (131_568, 489, 0.936),
    ("NASA-iPSC-1993-3.1-cln.swf.gz", "fifo"): (8.08, 1.03, 0.466),
    ("NASA-iPSC-1993-3.1-cln.swf.gz", "easy"): (4.07, 1.01, 0.466),
    ("hpc2n-alea-subset.swf", "fifo"): (5_628, 47.4, 0.395), ("hpc2n-alea-subset.swf", "easy"): (3_560, 17.1, 0.397),
    ("hpc2n-alea-subset.swf", "conservative"): (3_676, 17.4, 0.397),
}


def table(name: str, trace, cluster: Cluster, where: str, own: bool) -> None:
    trace = trace.limited_to(cluster.num_gpus)
    dropped = ", ".join(f"{n:,} {reason}" for reason, n in trace.dropped.items()) or "none"
    print(f"\n{name} on {cluster.num_nodes} x {cluster.gpus_per_node} = {cluster.num_gpus} GPUs ({where}); "
          f"{trace.num_jobs:,} jobs, offered load {offered_load(trace, cluster.num_gpus):.3f}; left out: {dropped}")
    print(f"  {'policy':13} {'util':>6} {'mean wait s':>13} {'median s':>10} {'p95 wait s':>12} {'mean bsld':>10} "
          f"{'makespan h':>10}   reference simulator (wait, bsld, util)")
    for outcome in replay(trace, cluster, POLICIES):
        m = outcome.metrics
        anchor = ANCHORS.get((name, m.policy)) if own else None
        note = f"   {anchor[0]:,} / {anchor[1]:,} / {anchor[2]}" if anchor else ""
        print(f"  {m.policy:13} {m.utilization:6.3f} {m.mean_wait_s:13,.2f} {m.median_wait_s:10,.0f} "
              f"{m.p95_wait_s:12,.0f} {m.mean_bounded_slowdown:10,.2f} {m.makespan_s / 3600:10,.1f}{note}")


def whatif(num_jobs: int) -> None:
    trace = synthetic(Workload(num_jobs=num_jobs, load=0.85, seed=1), num_gpus=REFERENCE.num_gpus)
    print(f"\nWhat-if: the reference cluster (16 x 8 H100) under {trace.name}; offered load "
          f"{offered_load(trace, REFERENCE.num_gpus):.3f}")
    print(f"  {'policy':13} {'util':>6} {'mean wait':>12} {'p95 wait':>12} {'mean bsld':>10} {'$/delivered GPU-h':>18}")
    assumed = load_spec()
    print(f"  {'(assumed)':13} {assumed.finance.utilization:6.3f} {'':12} {'':12} {'':10} "
          f"{plan(assumed).costs.cost_per_gpu_hour_usd:18.2f}   the scenario's finance.utilization")
    for outcome in replay(trace, REFERENCE, ("fifo", "easy", "fairshare", "conservative")):
        m = outcome.metrics
        spec = load_spec(overrides=[f"finance.utilization={min(1.0, m.utilization):.4f}"])
        cost = plan(spec).costs.cost_per_gpu_hour_usd
        print(f"  {m.policy:13} {m.utilization:6.3f} {m.mean_wait_s / 3600:10,.2f} h {m.p95_wait_s / 3600:10,.2f} h "
              f"{m.mean_bounded_slowdown:10,.2f} {cost:18.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--traces", type=Path, default=TRACES_DIR)
    parser.add_argument("--whatif-jobs", type=int, default=100_000)
    args = parser.parse_args()
    files = sorted(p.name for p in args.traces.iterdir())
    for name in files:
        if name in TRACES:
            trace = read_trace(args.traces / name)
            own, where = TRACES[name]
            table(name, trace, own, where, own=True)
            table(name, trace, REFERENCE, "the reference cluster", own=False)
        elif name not in NOT_JOB_TRACES:
            print(f"\n{name}: not a known trace, skipped", file=sys.stderr)
    print("\nNot job traces: " + "; ".join(f"{n} ({why})" for n, why in NOT_JOB_TRACES.items() if why))
    if args.whatif_jobs:
        whatif(args.whatif_jobs)


if __name__ == "__main__":
    main()
