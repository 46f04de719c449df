"""How long `clusterplan accept` takes on the CPU, phase by phase, and how far repeated clean runs agree.

Runs the issue's command N times (torchrun, 4 gloo ranks, 2 per "node") with --json, then prints the
median wall time and the median seconds of each phase, and, for each collective check, the spread of
its measured busbw over the runs (max / min): the noise a CPU calibration has to live with.

    python benchmarks/accept_cpu.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

COMMAND = ("-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "4", "-m", "clusterplan", "accept",
           "examples/starter-32.toml", "--backend", "gloo", "--ranks-per-node", "2")


def one_run(folder: Path, number: int) -> tuple[float, dict]:
    out = folder / f"accept-{number}.json"
    began = time.perf_counter()
    subprocess.run([sys.executable, *COMMAND, "--json", str(out)], stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - began, json.loads(out.read_text())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        runs = [one_run(Path(folder), number) for number in range(args.runs)]
    print(f"clusterplan accept, 4 gloo ranks in 2 nodes, {args.runs} runs")
    print(f"wall time: median {statistics.median(t for t, _ in runs):.1f} s "
          f"(min {min(t for t, _ in runs):.1f}, max {max(t for t, _ in runs):.1f})")
    phases: dict[str, list[float]] = {}
    for _, doc in runs:
        for phase in doc["run"]["phases"]:
            phases.setdefault(phase["phase"], []).append(phase["seconds"])
    print("phases (median s): " + ", ".join(f"{name} {statistics.median(v):.2f}" for name, v in phases.items()))
    measured: dict[tuple, list[float]] = {}
    for _, doc in runs:
        for check in doc["checks"]:
            if check["phase"] in ("intra-node", "node pairs", "cluster"):
                key = (check["phase"], check["subject"], check["check"], check["size_bytes"])
                measured.setdefault(key, []).append(check["measured"])
    spreads = sorted(max(v) / min(v) for v in measured.values() if len(v) == args.runs and min(v) > 0)
    print(f"collective busbw spread over runs (max/min), {len(spreads)} checks: median "
          f"{statistics.median(spreads):.2f}, worst {spreads[-1]:.2f}")


if __name__ == "__main__":
    main()
