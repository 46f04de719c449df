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

"before" is the same prediction with the software rate the catalog carried
until issue 17 (item 6): the Blue Waters HPC ratio, 1.57 per 1000 node-days.
A second check compares the predicted interruptions per node-day with the
range Meta published for its A100 research clusters (Kokolis et al.).
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import sys
import types
from pathlib import Path

from clusterplan.catalog import Catalog, load_catalog
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


# The software rate before issue 17 (item 6): Blue Waters' 20/42 software-to-hardware ratio (Di Martino et al.,
# DSN 2014) on the GPU and host rates of an 8-GPU node, 20/42 x (8 x 0.361 + 0.412), with the GPU bounds.
BEFORE = {"software": {"per_1000_unit_days": 1.57, "low_per_1000_unit_days": 1.22, "high_per_1000_unit_days": 3.03}}

# Second check: Meta's A100 research clusters over 11 months (Kokolis et al., "Revisiting Reliability in
# Large-Scale Machine Learning Research Clusters", arXiv 2410.21680, 2024-10): failures per 1000 node-days.
RSC_PER_1000_NODE_DAYS = {"RSC-2": 2.34, "RSC-1": 6.50}


def catalog_before() -> Catalog:
    """The shipped catalog with the rates of ``BEFORE`` in place of the current ones."""
    catalog = load_catalog()
    failures = dict(catalog.families["failures"])
    for cause_id, figures in BEFORE.items():
        failures[cause_id] = dataclasses.replace(failures[cause_id], **figures, source="previous catalog")
    return Catalog(types.MappingProxyType({**catalog.families, "failures": types.MappingProxyType(failures)}))


def predicted(catalog: Catalog | None = None):
    """The model's Reliability for the Llama 3 run (catalog rates as shipped, or ``catalog``'s), as
    `clusterplan reliability` computes it."""
    return reliability(load_spec(None, LLAMA3), catalog or load_catalog()).job


def expected_by_group(job, days: float) -> tuple[dict[str, float], float, float]:
    """Predicted interruptions over ``days`` by cause group, and the total at the rates' low and high ends."""
    expected = dict.fromkeys(GROUPS, 0.0)
    low, high = 0.0, 0.0
    for cause in job.interruptions.causes:
        expected[GROUP_OF_CAUSE[cause.rate.id]] += cause.per_day * days
        low += cause.bound_per_day("low") * days
        high += cause.bound_per_day("high") * days
    return expected, low, high


def compare(data: Path) -> dict:
    """Published and predicted interruptions by cause group over the run, with relative errors, now and with the
    rates of ``BEFORE``."""
    counts, facts = published(data)
    job, before = predicted(), predicted(catalog_before())
    days = float(facts["snapshot period"])
    total = int(facts["unexpected interruptions"])
    if sum(counts.values()) != total:
        raise SystemExit(f"{TABLE} counts sum to {sum(counts.values())}, the text says {total}")
    expected, low, high = expected_by_group(job, days)
    expected_before, low_before, high_before = expected_by_group(before, days)
    rows = [{"group": g, "published": counts[g], "predicted": expected[g],
             "error": (expected[g] - counts[g]) / counts[g], "predicted_before": expected_before[g],
             "error_before": (expected_before[g] - counts[g]) / counts[g]} for g in GROUPS]
    predicted_total, before_total = sum(expected.values()), sum(expected_before.values())
    chosen = reliability_settings(load_spec(None, LLAMA3))
    at_published = outcome(job.checkpoint, mtti_s=days * 86400 / total, interval_s=0, detect_s=chosen.detect_s,
                           overhead_s=chosen.restart_overhead_s)
    nodes = job.job.num_nodes
    return {"rows": rows, "published_total": total, "predicted_total": predicted_total,
            "total_error": (predicted_total - total) / total, "predicted_low": low, "predicted_high": high,
            "before_total": before_total, "before_error": (before_total - total) / total,
            "before_low": low_before, "before_high": high_before, "before_mtti_h": before.mtti_s / 3600,
            "days": days, "num_gpus": job.job.num_gpus, "num_nodes": nodes, "published_mtti_h": days * 24 / total,
            "predicted_mtti_h": job.mtti_s / 3600, "goodput": job.goodput,
            "published_goodput": facts["effective training time"], "interval_s": job.interval_s,
            "goodput_at_published_mtti": at_published.goodput,
            "hardware_per_1000_node_days": sum(expected[g] for g in GROUPS if g != "software") / days / nodes * 1000}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="shared/data/validation folder")
    args = parser.parse_args(argv)
    if not (args.data / TABLE).exists():
        print(f"no {TABLE} under {args.data}", file=sys.stderr)
        return 2
    result = compare(args.data)
    print(f"Llama 3 405B: {result['num_gpus']:,} H100, {result['days']:g} days, unexpected interruptions "
          f"(Table 5 counts vs catalog rates; before = software rate of the previous catalog)")
    print(f"{'cause':<10} {'published':>9} {'share':>7} {'before':>8} {'error':>7} {'after':>8} {'share':>7} "
          f"{'error':>7}")
    for row in result["rows"]:
        print(f"{row['group']:<10} {row['published']:>9,} {row['published'] / result['published_total']:>7.1%} "
              f"{row['predicted_before']:>8,.0f} {row['error_before']:>+7.0%} {row['predicted']:>8,.0f} "
              f"{row['predicted'] / result['predicted_total']:>7.1%} {row['error']:>+7.0%}")
    print(f"{'total':<10} {result['published_total']:>9,} {1:>7.1%} {result['before_total']:>8,.0f} "
          f"{result['before_error']:>+7.0%} {result['predicted_total']:>8,.0f} {1:>7.1%} {result['total_error']:>+7.0%}")
    print(f"predicted range from the rates' low/high: {result['predicted_low']:,.0f} to "
          f"{result['predicted_high']:,.0f} (before {result['before_low']:,.0f} to {result['before_high']:,.0f})")
    print(f"job MTTI: published {result['published_mtti_h']:.2f} h, predicted {result['predicted_mtti_h']:.2f} h "
          f"(before {result['before_mtti_h']:.2f} h)")
    print(f"goodput (asynchronous checkpoints, Daly interval {result['interval_s'] / 60:.1f} min, reference restart "
          f"costs): predicted {result['goodput']:.1%}; at the published MTTI {result['goodput_at_published_mtti']:.1%}; "
          f"published effective training time {result['published_goodput']} %")
    low, high = min(RSC_PER_1000_NODE_DAYS.values()), max(RSC_PER_1000_NODE_DAYS.values())
    mtti = {name: 24 / (result["num_nodes"] * rate / 1000) for name, rate in RSC_PER_1000_NODE_DAYS.items()}
    hardware = result["hardware_per_1000_node_days"]
    print(f"second check, Meta RSC-2 / RSC-1 (A100, Kokolis et al. 2024; hardware-attributed failures): {low:.2f} to "
          f"{high:.2f} per 1000 node-days, predicted without software {hardware:.2f}; hardware MTTI at "
          f"{result['num_nodes']:,} nodes {mtti['RSC-2']:.2f} to {mtti['RSC-1']:.2f} h, predicted "
          f"{24 / (result['num_nodes'] * hardware / 1000):.2f} h")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
