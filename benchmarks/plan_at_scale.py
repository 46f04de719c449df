"""Wall time of ``clusterplan plan`` and ``clusterplan report`` from 128 to 32,768 GPUs, and what each designs.

Runs each command N times per size (``--set cluster.num_nodes=...`` on the reference), output to a temporary
folder, and prints the median seconds with the design's tiers, racks, cable media and engineers.

    python benchmarks/plan_at_scale.py [--runs N] [--samples 500]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

NODES = (16, 128, 2048, 4096)   # 128, 1,024, 16,384 and 32,768 GPUs


def seconds(command: Sequence[str], runs: int) -> float:
    """Median wall time of ``runs`` runs of ``command`` (it must exit 0)."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        done = subprocess.run(command, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}: {done.stderr.decode().strip()}")
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each command per size (default 5)")
    parser.add_argument("--samples", type=int, default=500, help="report's Monte Carlo samples (default 500)")
    args = parser.parse_args(argv)
    base = [sys.executable, "-m", "clusterplan"]
    print(f"median of {args.runs} runs; report with --samples {args.samples}")
    print(f"{'GPUs':>7} {'plan s':>7} {'report s':>9}  tiers  racks  engineers  media by tier")
    with tempfile.TemporaryDirectory() as folder:
        for nodes in NODES:
            size = ["--set", f"cluster.num_nodes={nodes}"]
            plan_s = seconds([*base, "plan", *size], args.runs)
            report = Path(folder) / f"report-{nodes}.html"
            report_s = seconds([*base, "report", *size, "--samples", str(args.samples), "-o", str(report)],
                               args.runs)
            doc = json.loads(subprocess.run([*base, "plan", *size, "--format", "json"], capture_output=True,
                                            check=True).stdout)
            design = doc["design"]
            media = ", ".join(f"{run['link']} {run['medium']} {run['length_m']:.0f} m"
                              for run in design["fabric"]["cabling"])
            print(f"{design['num_gpus']:>7,} {plan_s:>7.2f} {report_s:>9.2f}  {design['fabric']['tiers']:>5}  "
                  f"{design['num_racks']:>5,}  {design['staff']['ops_engineers']:>9,g}  {media}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
