"""The scheduler's property tests with fresh examples: how many examples ran and how many disagreed.

CI runs ``tests/properties`` on the same examples every time (a fixed seed, about 100 each), which never drew the
trace of issue 31. This script draws new ones (a random seed, printed so a finding can be replayed with ``--seed``),
runs each check on ``--examples`` of them without stopping at the first failure, and prints per check the count
run and the count that disagreed (with the first such example). Checks: conservative backfilling on the fast
profile against the reference profile (starts and reservations), the profile against the reference operation by
operation, and the scheduler's invariants (capacity, arrival, FIFO order, kept reservations, EASY's grouped
queue against its scan).

Usage: python benchmarks/sched_properties.py [--examples 2000] [--seed N] [--only NAME]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "properties"))

import test_profile_properties as profile_tests  # noqa: E402
import test_sched_properties as sched_tests  # noqa: E402

POLICIES = st.sampled_from(sched_tests.POLICIES)
CHECKS = {   # name -> (the property test, the strategies it is given)
    "conservative = reference": (profile_tests.test_conservative_equals_the_reference, (profile_tests.workloads(),)),
    "profile = reference": (profile_tests.test_profile_equals_the_reference, (profile_tests.operations(),)),
    "capacity never exceeded": (sched_tests.test_never_more_gpus_in_use_than_exist, (sched_tests.cases(), POLICIES)),
    "no start before arrival": (sched_tests.test_no_job_starts_before_it_arrives_and_every_job_finishes,
                                (sched_tests.cases(), POLICIES)),
    "fifo never backfills": (sched_tests.test_fifo_never_backfills, (sched_tests.cases(),)),
    "reservations kept": (sched_tests.test_reservations_are_kept,
                          (sched_tests.cases(), st.sampled_from(("easy", "conservative")))),
    "easy groups = scan": (sched_tests.test_easy_index_equals_the_scan, (sched_tests.cases(),)),
}


def run_check(test, strategies, examples: int, seed_value: int) -> tuple[int, int, str]:
    """Run ``test``'s body on ``examples`` fresh examples: (examples run, disagreements, the first one)."""
    inner = test.hypothesis.inner_test
    counts = {"run": 0, "bad": 0, "first": ""}

    def body(case):
        case = tuple(case)
        counts["run"] += 1
        try:
            inner(*case)
        except AssertionError as error:
            counts["bad"] += 1
            counts["first"] = counts["first"] or f"{case!r}: {error or 'an assertion failed'}"

    runner = seed(seed_value)(settings(max_examples=examples, derandomize=False, database=None, deadline=None,
                                       phases=[Phase.generate], suppress_health_check=list(HealthCheck))(
        given(st.tuples(*strategies))(body)))
    runner()
    return counts["run"], counts["bad"], counts["first"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--examples", type=int, default=2000, help="fresh examples per check (default 2,000)")
    parser.add_argument("--seed", type=int, default=None, help="replay a run (default: a new random seed)")
    parser.add_argument("--only", action="append", choices=sorted(CHECKS), help="run this check only (repeatable)")
    args = parser.parse_args()
    seed_value = random.SystemRandom().randrange(2**32) if args.seed is None else args.seed
    print(f"scheduler properties, {args.examples:,} fresh examples per check, seed {seed_value}")
    total_run = total_bad = 0
    for name, (test, strategies) in CHECKS.items():
        if args.only and name not in args.only:
            continue
        start = time.perf_counter()
        ran, bad, first = run_check(test, strategies, args.examples, seed_value)
        total_run, total_bad = total_run + ran, total_bad + bad
        print(f"  {name:26} {ran:6,} examples, {bad:,} disagreements ({time.perf_counter() - start:.0f} s)")
        if first:
            print(f"    first: {first[:2000]}")
    print(f"total: {total_run:,} examples, {total_bad:,} disagreements")
    sys.exit(1 if total_bad else 0)


if __name__ == "__main__":
    main()
