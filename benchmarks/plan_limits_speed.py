"""Wall time of ``clusterplan plan`` at the storage and size limits (issue 31), and of the rack packing alone.

Each case runs N times as its own process (median seconds, exit code, racks): the largest storage a scenario may
have on the largest three-tier cluster, a burst buffer at its limit beside it, and the issue's 82 million TB, now
refused at once. Then the packing of that storage's blocks and switches, by runs of identical racks (the
project's) and one box at a time (first-fit as it was before), in process.

    python benchmarks/plan_limits_speed.py [--runs N]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence

from clusterplan.catalog import load_catalog
from clusterplan.design import design
from clusterplan.design.racks import Gear, lay_out
from clusterplan.spec import load_spec

LIMIT = ["--set", "cluster.num_nodes=65536", "--set", "storage.usable_tb=1e6", "--set", "storage.burst_buffer_tb=1e6"]
CASES = {
    "65,536 nodes, 1 EB storage": LIMIT[:4],
    "65,536 nodes, 1 EB storage + 1 EB burst buffer": LIMIT,
    "1,024 nodes x 10,000 TB per GPU (refused)": ["--set", "cluster.num_nodes=1024", "--set", "storage.tb_per_gpu=1e4"],
}


def median_s(call: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def box_by_box(gear: list[Gear], *, budget_w: float, rack_units: int) -> list[float]:
    """First-fit by decreasing power, every box in turn into the first rack with room: the packing before."""
    racks: list[list[float]] = []
    for power_w, units, _ in sorted(((g.power_w, g.rack_units, g.name) for g in gear for _ in range(g.count)),
                                    reverse=True):
        rack = next((r for r in racks if r[0] + power_w <= budget_w and r[1] + units <= rack_units), None)
        if rack is None:
            racks.append([power_w, units])
        else:
            rack[0], rack[1] = rack[0] + power_w, rack[1] + units
    return [rack[0] for rack in racks]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5, help="runs of each case (default 5)")
    args = parser.parse_args(argv)
    command = [sys.executable, "-m", "clusterplan", "plan", "--format", "json"]
    print(f"median of {args.runs} runs")
    for name, overrides in CASES.items():
        done = subprocess.run([*command, *overrides], capture_output=True, check=False)
        racks = json.loads(done.stdout)["design"]["num_racks"] if done.returncode == 0 else "-"
        seconds = median_s(lambda: subprocess.run([*command, *overrides], capture_output=True, check=False),
                           args.runs)
        print(f"plan  {name:<48} exit {done.returncode}  {seconds:6.2f} s  racks {racks}")
    built = design(load_spec(overrides=[o for o in LIMIT if o != "--set"]), load_catalog())
    layout = built.racks
    # the design's counts; a switch's draw here leaves out its transceivers (the packing's work is the same)
    gear = [Gear(name="switch", count=built.topology.num_switches, power_w=built.parts.switch.power_w,
                 rack_units=built.parts.switch.rack_units),
            Gear(name="storage", count=built.storage_units, power_w=built.parts.storage.unit_power_w,
                 rack_units=built.parts.storage.unit_rack_units),
            Gear(name="burst", count=built.burst_buffer_units, power_w=built.parts.burst_buffer.unit_power_w,
                 rack_units=built.parts.burst_buffer.unit_rack_units)]
    server = Gear(name="server", count=1, power_w=1, rack_units=1)
    boxes = sum(g.count for g in gear)
    runs_s = median_s(lambda: lay_out(server, gear, budget_w=layout.budget_w, rack_units=layout.rack_units),
                      args.runs)
    single_s = median_s(lambda: box_by_box(gear, budget_w=layout.budget_w, rack_units=layout.rack_units), 1)
    print(f"pack  {boxes:,} switches and blocks: runs of racks {runs_s * 1e3:.2f} ms, box by box {single_s:.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
