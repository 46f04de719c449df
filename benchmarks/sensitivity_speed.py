"""Scenario evaluations per second of the sensitivity model: vectorised against the scalar plan in a loop.

Times, on the reference scenario (or SCENARIO), in this one process:

- ``evaluate``: the closed-form model (cost.sensitivity.evaluate) on N sampled input vectors;
- ``monte_carlo``: the whole Monte Carlo of ``clusterplan sensitivity`` (draws, evaluation,
  quantiles, rank correlations) for N samples;
- ``scalar``: the same outputs the long way (sensitivity.scalar_outcome: a perturbed scenario
  through plan.own, the cloud cost and breakeven_month) for M samples in a Python loop.

Prints the median of R runs of each, the ratio against the scalar loop, and a verdict against
the target of 100,000 scenario evaluations per second for the Monte Carlo (exit 1 on FAIL).

    python benchmarks/sensitivity_speed.py [SCENARIO] [--samples N] [--scalar M] [--runs R]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable, Sequence

import numpy as np

from clusterplan.catalog import load_catalog
from clusterplan.cost.sensitivity import draw, evaluate, monte_carlo
from clusterplan.plan.sensitivity import model as build_model
from clusterplan.plan.sensitivity import scalar_outcome
from clusterplan.spec import load_spec

TARGET_PER_S = 100_000


def median_seconds(work: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("scenario", nargs="?", help="scenario TOML (default: the reference)")
    parser.add_argument("--samples", type=int, default=1_000_000, help="vectorised samples per run (default 1e6)")
    parser.add_argument("--scalar", type=int, default=300, help="scalar samples per run (default 300)")
    parser.add_argument("--runs", type=int, default=5, help="runs of each, median kept (default 5)")
    args = parser.parse_args(argv)
    if min(args.samples, args.scalar, args.runs) < 1:
        parser.error("--samples, --scalar and --runs must be >= 1")

    spec, catalog = load_spec(args.scenario), load_catalog()
    model = build_model(spec, catalog)
    theta = draw(model, args.samples, np.random.default_rng(0))
    few = theta[: args.scalar]
    fast = evaluate(model, few)
    for row, point in enumerate(few):   # the two ways agree before either is timed
        slow = scalar_outcome(spec, model, point, catalog)
        assert abs(fast["tco_usd"][row] - slow.tco_usd) <= 1e-9 * slow.tco_usd

    evaluate_s = median_seconds(lambda: evaluate(model, theta), args.runs)
    monte_carlo_s = median_seconds(lambda: monte_carlo(model, samples=args.samples, seed=1), args.runs)
    scalar_s = median_seconds(lambda: [scalar_outcome(spec, model, point, catalog) for point in few], args.runs)
    rates = {"evaluate (closed form, numpy)": args.samples / evaluate_s,
             "monte_carlo (draw + evaluate + quantiles + ranks)": args.samples / monte_carlo_s,
             "scalar (perturbed scenario through plan.own, loop)": args.scalar / scalar_s}
    scalar_rate = rates["scalar (perturbed scenario through plan.own, loop)"]
    print(f"{len(model.inputs)} uncertain inputs, {sum(i.varies for i in model.inputs)} varying; "
          f"median of {args.runs} runs; {args.samples:,} vectorised and {args.scalar:,} scalar samples per run")
    width = max(len(name) for name in rates)
    for name, rate in rates.items():
        print(f"  {name:<{width}}  {rate:>14,.0f} evaluations/s   x{rate / scalar_rate:,.0f} vs scalar")
    achieved = rates["monte_carlo (draw + evaluate + quantiles + ranks)"]
    verdict = "PASS" if achieved >= TARGET_PER_S else "FAIL"
    print(f"verdict: {verdict}: Monte Carlo {achieved:,.0f} evaluations/s "
          f"{'>=' if verdict == 'PASS' else '<'} {TARGET_PER_S:,} target")
    return 0 if verdict == "PASS" else 1


if __name__ == "__main__":
    sys.exit(main())
