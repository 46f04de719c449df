"""Predicted vs published interruptions of the Llama 3 405B pre-training run.

Usage: python benchmarks/validate_reliability.py [--data DIR]

The run (Dubey et al., "The Llama 3 Herd of Models", arXiv 2407.21783,
Sec. 3.3.4 and Table 5; shared/data/validation/llama3_405b_*.csv): 419
unexpected interruptions in a 54-day snapshot on up to 16,384 H100 80GB,
8 per server, one 400 Gb/s RoCE NIC per GPU. The prediction uses the failure
rates of the catalog as shipped (catalog/data/failures.toml), none of which
comes from this run, on a design of 2,048 H100 nodes with 8 x 400 GbE NICs,
scaled by the same code as `clusterplan reliability`.

Table 5's rows are grouped into the model's causes by their category, and the
counts are used, not the printed percentages: "Faulty GPU" prints 30.1 % but
148/419 is 35.3 % (the counts sum to 419; shared/data/README.md).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from clusterplan.catalog import load_catalog
from clusterplan.plan.reliability import reliability, reliability_settings
from clusterplan.reliability.checkpoint import outcome
from clusterplan.spec import load_spec
from validation_data import shared

DATA = shared()
TABLE = "llama3_405b_table5_interruptions.csv"
FACTS = "llama3_405b_training_facts.csv"

# Table 5 category -> the model's cause group; NIC (category Host) is a fabric link in the model.
GROUP_OF_CATEGORY = {"GPU": "gpu", "Host": "host", "Unplanned Maintenance": "host", "Network": "network",
                     "Dependency": "software", "Unknown": "software"}
GROUP_OF_COMPONENT = {"NIC": "network"}
GROUP_OF_CAUSE = {"gpu": "gpu", "host": "host", "network-link": "network", "network-fabric-link": "network",
                  "network-switch": "network",
                  "software": "software"}
GROUPS = ("gpu", "host", "network", "software")

# The run's hardware (Sec. 3.3.1) as scenario overrides; storage: Tectonic sustains 2 TB/s, about 30 blocks of
# the catalog's nvme-pfs tier (30 x 65 GB/s write); it only affects the goodput line, not the interruptions.
LLAMA3 = ("cluster.gpu=h100-sxm", "cluster.num_nodes=2048", "cluster.gpus_per_node=8", "network.fabric=roce-400g",
          "network.nics_per_node=8", "network.tiers=0", "storage.tier=nvme-pfs", "storage.usable_tb=7500",
          "workload.model=llama3.1-405b", "reliability.days=54", "cloud.offers=[]", 'cloud.burst_offer=""')


def published(data: Path) -> tuple[dict[str, int], dict[str, str]]:
    """Table 5 counts by cause group, and the run's facts by quantity."""
    counts = dict.fromkeys(GROUPS, 0)
    for row in csv.DictReader(open(data / TABLE, encoding="utf-8")):
        group = GROUP_OF_COMPONENT.get(row["component"]) or GROUP_OF_CATEGORY[row["category"]]
        counts[group] += int(row["interruption_count"])
    facts = {row["quantity"]: row["value"] for row in csv.DictReader(open(data / FACTS, encoding="utf-8"))}
    return counts, facts


def predicted():
    """The model's Reliability for the Llama 3 run (catalog rates as shipped), as `clusterplan reliability`
    computes it."""
    return reliability(load_spec(None, LLAMA3), load_catalog()).job


def compare(data: Path) -> dict:
    """Published and predicted interruptions by cause group over the run, with relative errors."""
    counts, facts = published(data)
    job = predicted()
    days = float(facts["snapshot period"])
    total = int(facts["unexpected interruptions"])
    if sum(counts.values()) != total:
        raise SystemExit(f"{TABLE} counts sum to {sum(counts.values())}, the text says {total}")
    expected = dict.fromkeys(GROUPS, 0.0)
    low, high = 0.0, 0.0
    for cause in job.interruptions.causes:
        expected[GROUP_OF_CAUSE[cause.rate.id]] += cause.per_day * days
        low += cause.bound_per_day("low") * days
        high += cause.bound_per_day("high") * days
    rows = [{"group": g, "published": counts[g], "predicted": expected[g],
             "error": (expected[g] - counts[g]) / counts[g]} for g in GROUPS]
    predicted_total = sum(expected.values())
    chosen = reliability_settings(load_spec(None, LLAMA3))
    at_published = outcome(job.checkpoint, mtti_s=days * 86400 / total, interval_s=0, detect_s=chosen.detect_s,
                           overhead_s=chosen.restart_overhead_s)
    return {"rows": rows, "published_total": total, "predicted_total": predicted_total,
            "total_error": (predicted_total - total) / total, "predicted_low": low, "predicted_high": high,
            "days": days, "num_gpus": job.job.num_gpus, "published_mtti_h": days * 24 / total,
            "predicted_mtti_h": job.mtti_s / 3600, "goodput": job.goodput,
            "published_goodput": facts["effective training time"], "interval_s": job.interval_s,
            "goodput_at_published_mtti": at_published.goodput}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="shared/data/validation folder")
    args = parser.parse_args(argv)
    if not (args.data / TABLE).exists():
        print(f"no {TABLE} under {args.data}", file=sys.stderr)
        return 2
    result = compare(args.data)
    print(f"Llama 3 405B: {result['num_gpus']:,} H100, {result['days']:g} days, unexpected interruptions "
          f"(Table 5 counts vs catalog rates)")
    print(f"{'cause':<10} {'published':>9} {'share':>7} {'predicted':>9} {'share':>7} {'error':>8}")
    for row in result["rows"]:
        print(f"{row['group']:<10} {row['published']:>9,} {row['published'] / result['published_total']:>7.1%} "
              f"{row['predicted']:>9,.0f} {row['predicted'] / result['predicted_total']:>7.1%} "
              f"{row['error']:>+8.0%}")
    print(f"{'total':<10} {result['published_total']:>9,} {1:>7.1%} {result['predicted_total']:>9,.0f} "
          f"{1:>7.1%} {result['total_error']:>+8.0%}")
    print(f"predicted range from the rates' low/high: {result['predicted_low']:,.0f} to {result['predicted_high']:,.0f}")
    print(f"job MTTI: published {result['published_mtti_h']:.2f} h, predicted {result['predicted_mtti_h']:.2f} h")
    print(f"goodput (asynchronous checkpoints, Daly interval {result['interval_s'] / 60:.1f} min, reference restart "
          f"costs): predicted {result['goodput']:.1%}; at the published MTTI {result['goodput_at_published_mtti']:.1%}; "
          f"published effective training time {result['published_goodput']} %")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
