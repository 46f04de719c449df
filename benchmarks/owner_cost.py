"""What owning the reference cluster costs per delivered GPU-hour, line by line, against public owner-cost figures.

Prints the reference's cost per delivered GPU-hour two ways (the cash TCO of its horizon, the residual credited;
the economic cost of a year over each asset class's life: depreciation, cost of capital and opex), the split of
each by line, the hardware against the seed case study (128 x H100, 16 servers, 200 TB: about $4.6M), and the
ratio of the figures to the public owner-cost figures below (docs/cost.md, "Validation").

    python benchmarks/owner_cost.py [--set section.key=value ...]
"""

from __future__ import annotations

import argparse

from clusterplan.catalog import load_catalog
from clusterplan.plan import plan
from clusterplan.spec import load_spec

NEOCLOUD = load_catalog().get("cloud", "nebius-h100-on-demand")   # read, not copied: it follows catalog refreshes
# (what, USD per GPU-hour or USD, how it compares, source). LOW CONFIDENCE marks an aggregator page.
PUBLIC = (
    ("owner's break-even rental price (facility and ops $50K per node over the life)", 1.65, "economic",
     "Eugene Cheah, 'H100 Freakonomics' / Latent Space '$2 H100s' sheet, 2024-08: renting below ~$1.65/h loses money"),
    ("H100 1-year contract index (an owner's cost plus its margin)", 2.35, "economic",
     "SemiAnalysis H100 rental index, 2026-03 (research notes)"),
    ("H100 on-demand, neocloud (an owner's cost plus margin and idle risk)", NEOCLOUD.price_usd, "economic",
     f"Nebius H100 on-demand, catalog nebius-h100-on-demand ({NEOCLOUD.date})"),
    ("3-year TCO of an 8-GPU H100 node, low end, per delivered GPU-hour at 80 %", 450_000 / (8 * 8760 * 3 * 0.8),
     "cash before residual", "v2-pseo-ai.pages.dev/tools/gpu-tco-analysis (seen 2026; LOW CONFIDENCE): "
     "$450K-$650K per node over 3 years with power and colocation"),
    ("3-year TCO of an 8-GPU H100 node, high end, per delivered GPU-hour at 80 %", 650_000 / (8 * 8760 * 3 * 0.8),
     "cash before residual", "the same page"),
    ("hardware-only depreciation, $30K GPU over 5 years at 70 % utilization", 0.98, "depreciation of the GPU",
     "computetape.com 'How Fast Does an H100 Depreciate?' (seen 2026)"),
)
SEED_HARDWARE_USD = 4.6e6   # the seed case study: 128 x H100, 16 servers, 200 TB, about $4.6M of hardware


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--set", dest="overrides", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args()
    costs = plan(load_spec(None, args.overrides)).costs
    hours = costs.delivered_gpu_hours_per_year
    years = costs.years
    print(f"reference: {costs.num_gpus} GPUs, {hours:,.0f} delivered GPU-hours a year, {years}-year horizon")
    cash_before = costs.tco_usd + costs.residual_usd
    print(f"cash TCO {years} years: ${costs.tco_usd / 1e6:.2f}M = ${cash_before / 1e6:.2f}M spent - residual "
          f"${costs.residual_usd / 1e6:.2f}M -> ${costs.cost_per_gpu_hour_usd:.2f} per delivered GPU-hour "
          f"(${cash_before / (hours * years):.2f} before the residual)")
    print("  split per delivered GPU-hour:")
    print(f"    capex + one-off ${costs.upfront_usd / (hours * years):.2f}, residual "
          f"-${costs.residual_usd / (hours * years):.2f}")
    for name, usd in costs.opex_usd_per_year.items():
        print(f"    {name} ${usd / hours:.2f}")
    economic = costs.economic_usd_per_year()
    print(f"economic cost a year over the lives: ${sum(economic.values()) / 1e6:.2f}M -> "
          f"${costs.economic_cost_per_gpu_hour_usd:.2f} per delivered GPU-hour")
    print("  split per delivered GPU-hour:")
    for name, usd in economic.items():
        print(f"    {name.replace('_', ' ')} ${usd / hours:.2f}")
    hardware = sum(line.total_usd for line in costs.bom
                   if line.category in ("compute", "storage") and "spare node" not in line.item)
    print(f"hardware (GPUs, servers, storage; no spares, network or facility) ${hardware / 1e6:.2f}M: "
          f"{hardware / SEED_HARDWARE_USD - 1:+.1%} vs the seed case study's ~$4.6M")
    print("against public owner-cost figures:")
    gpus = sum(line.total_usd for line in costs.bom if line.catalog_id == costs.bom[0].catalog_id
               and "spare node" not in line.item)   # the first line is the GPUs (cost/bom.py)
    figures = {"economic": costs.economic_cost_per_gpu_hour_usd, "cash before residual": cash_before / (hours * years),
               "depreciation of the GPU": gpus / costs.ownership.server_life_years / hours}
    for what, value, kind, source in PUBLIC:
        ours = figures[kind]
        print(f"  {what}: ${value:.2f}; ours ({kind}) ${ours:.2f} = {ours / value:.2f}x  [{source}]")
    low = min(v for _, v, kind, _ in PUBLIC if kind != "depreciation of the GPU")
    high = max(v for _, v, kind, _ in PUBLIC if kind != "depreciation of the GPU")
    inside = low <= costs.economic_cost_per_gpu_hour_usd <= high
    print(f"public owner-cost range ${low:.2f}-${high:.2f} per GPU-hour: "
          f"economic ${costs.economic_cost_per_gpu_hour_usd:.2f} "
          f"{'inside' if inside else 'OUTSIDE'}")


if __name__ == "__main__":
    main()
