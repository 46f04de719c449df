"""Wall time of a whole ``clusterplan plan`` process against a bare interpreter start.

Runs ``python -m clusterplan plan`` (and the installed ``clusterplan`` console
script, when it is on PATH) N times each with output to /dev/null, and
``python -c pass`` as the floor, then prints the medians, the difference and
the ratio, and a verdict against the 0.5 s budget for one plan (exit 1 on FAIL).
Each line also gives the median CPU time (user + system) of the process, which
other work on a shared machine inflates far less than the wall time: compare
changes by it when the load average is above the core count.

    python benchmarks/plan_startup.py [--runs N] [--budget-s 0.5]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence

BUDGET_S = 0.5


def wall_times(command: Sequence[str], runs: int) -> list[tuple[float, float]]:
    """(wall seconds, CPU seconds) each of ``runs`` runs of ``command`` took, start to exit."""
    times = []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.perf_counter()
        done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
        wall = time.perf_counter() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append((wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime))
        if done.returncode != 0:
            raise SystemExit(f"{' '.join(command)} exited {done.returncode}: "
                             f"{done.stderr.decode(errors='replace').strip()}")
    return times


def medians_of(times: list[tuple[float, float]]) -> tuple[float, float]:
    return statistics.median(t[0] for t in times), statistics.median(t[1] for t in times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7, help="runs of each command (default 7)")
    parser.add_argument("--budget-s", type=float, default=BUDGET_S, help="budget for one plan (default 0.5 s)")
    args = parser.parse_args(argv)
    if args.runs < 1:
        parser.error("--runs must be >= 1")

    commands = {"python -c pass": [sys.executable, "-c", "pass"],
                "python -m clusterplan plan": [sys.executable, "-m", "clusterplan", "plan"]}
    script = shutil.which("clusterplan")
    if script:
        commands["clusterplan plan (console script)"] = [script, "plan"]
    for command in commands.values():  # warm the OS file cache and the bytecode caches
        wall_times(command, 1)
    measured = {name: medians_of(wall_times(command, args.runs)) for name, command in commands.items()}
    cpu = {name: pair[1] for name, pair in measured.items()}
    medians = {name: pair[0] for name, pair in measured.items()}

    floor = medians.pop("python -c pass")
    width = max(len(name) for name in [*medians, "python -c pass"])
    print(f"Python {sys.version.split()[0]}, median of {args.runs} runs each")
    print(f"  {'python -c pass':<{width}}  {floor:7.3f} s   (CPU {cpu['python -c pass']:.3f} s)")
    verdicts = []
    for name, median in medians.items():
        print(f"  {name:<{width}}  {median:7.3f} s   +{median - floor:.3f} s over python -c pass, "
              f"x{median / floor:.1f}   (CPU {cpu[name]:.3f} s)")
        verdicts.append((name, median))
    if not script:
        print("  (no clusterplan console script on PATH; timed python -m clusterplan only)")
    worst_name, worst = max(verdicts, key=lambda item: item[1])
    verdict = "PASS" if worst <= args.budget_s else "FAIL"
    print(f"verdict: {verdict}: slowest, {worst_name}, {worst:.3f} s "
          f"{'<=' if worst <= args.budget_s else '>'} {args.budget_s:g} s budget")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
