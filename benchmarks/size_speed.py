"""Speed of the whole default ``clusterplan size`` search on one core: candidates/s and where the time goes.

Pins the process to one CPU, runs the README's question (llama3-70b on 2T tokens, deadline 120 days) over the
default search (6 GPU types x 12 counts x 3 fabrics x 5 modes, each (GPU, count, fabric) with its layout search)
N times, and prints the median wall and CPU seconds, the candidates per second, the split between the layout
search and the rest (design, cost, reliability, pricing the modes, ranking), and a verdict against the issue's
10 s budget (exit 1 on FAIL). On a shared machine the CPU time is the figure to read: the wall time counts the
other processes too.

    python benchmarks/size_speed.py [--runs N] [--budget-s 10]
"""

from __future__ import annotations

import argparse
import datetime
import os
import statistics
import time
from collections.abc import Sequence

from clusterplan.catalog import load_catalog
from clusterplan.plan.size import size
from clusterplan.spec import load_spec

BUDGET_S = 10.0
QUESTION = ('size.model="llama3-70b"', 'size.tokens="2T"', "size.deadline_days=120", 'size.start="2026-12-04"')


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3, help="runs of the whole search (default 3)")
    parser.add_argument("--budget-s", type=float, default=BUDGET_S, help="budget for the search (default 10 s)")
    args = parser.parse_args(argv)
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    spec = load_spec("examples/reference-128x-h100.toml", QUESTION)
    catalog = load_catalog()
    walls, cpus, searches, rests, count = [], [], [], [], 0
    for _ in range(args.runs):
        wall, cpu = time.perf_counter(), time.process_time()
        result = size(spec, catalog, today=datetime.date(2026, 12, 4))
        walls.append(time.perf_counter() - wall)
        cpus.append(time.process_time() - cpu)
        searches.append(result.search_s)
        rests.append(result.rest_s)
        count = len(result.candidates)
    wall, cpu = statistics.median(walls), statistics.median(cpus)
    search, rest = statistics.median(searches), statistics.median(rests)
    print(f"candidates: {count:,} ({len(result.question.gpus)} GPUs x {len(result.question.counts)} counts x "
          f"{len(result.question.fabrics)} fabrics x {len(result.question.modes)} modes), one core, "
          f"median of {args.runs} runs")
    print(f"wall {wall:.2f} s, CPU {cpu:.2f} s: {count / cpu:,.0f} candidates/s of CPU ({count / wall:,.0f} per wall s)")
    print(f"layout search {search:.2f} s ({search / (search + rest):.0%}), the rest {rest:.2f} s "
          f"({rest / (search + rest):.0%}) of wall time")
    verdict = "PASS" if cpu <= args.budget_s else "FAIL"
    print(f"{verdict}: {cpu:.2f} s of CPU against the {args.budget_s:g} s budget")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    raise SystemExit(main())
