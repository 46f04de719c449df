import dataclasses

import pytest

from clusterplan.cost import burst_fraction, cloud_cost, hybrid
from clusterplan.cost.cloud import breakeven_month


def offer(catalog, pricing):
    return dataclasses.replace(catalog.get("cloud", "aws-p5-on-demand"), pricing=pricing, price_usd=2.0)


def test_pay_per_use_bills_delivered_hours_and_reserved_every_hour(catalog):
    """On-demand bills GPUs x 8760 x utilization; reserved bills all 8760 hours."""
    on_demand = cloud_cost(offer(catalog, "on-demand"), num_gpus=128, utilization=0.5, years=3)
    reserved = cloud_cost(offer(catalog, "reserved-1y"), num_gpus=128, utilization=0.5, years=3)
    assert on_demand.usd_per_year == pytest.approx(128 * 8760 * 0.5 * 2.0)
    assert reserved.usd_per_year == pytest.approx(128 * 8760 * 2.0)
    assert reserved.total_usd == pytest.approx(3 * reserved.usd_per_year)


def test_breakeven_month_by_hand(reference_plan, catalog):
    """Renting at the owner's capex per year breaks even once its cumulative spend catches up."""
    own = reference_plan.costs
    upfront = own.capex_usd + own.one_off_usd
    per_year = upfront + own.opex_total_usd_per_year  # rent = own opex + capex again every year
    rate = per_year / (128 * 8760 * 0.8)
    rent = cloud_cost(dataclasses.replace(offer(catalog, "on-demand"), price_usd=rate),
                      num_gpus=128, utilization=0.8, years=3)
    assert breakeven_month(own, rent) == 12
    cheap = cloud_cost(dataclasses.replace(offer(catalog, "on-demand"), price_usd=0.01),
                       num_gpus=128, utilization=0.8, years=3)
    assert breakeven_month(own, cheap) is None


def test_burst_fraction_linear_demand():
    """At u = 0.5 demand falls linearly; owning half the peak leaves (1 - b)^2 / 2 = 0.125 to burst."""
    assert burst_fraction(0.5, 0.5) == pytest.approx(0.125)
    assert burst_fraction(0.0, 0.8) == pytest.approx(0.8)
    assert burst_fraction(1.0, 0.8) == 0.0
    assert burst_fraction(0.3, 1.0) == pytest.approx(0.7)


def test_hybrid_picks_the_cheapest_split(catalog):
    """Cheap ownership owns everything; ruinous ownership owns nothing."""
    burst = offer(catalog, "on-demand")
    cheap = hybrid(burst, lambda k: 1.0 * k, num_nodes=16, gpus_per_node=8, utilization=0.8, years=3)
    dear = hybrid(burst, lambda k: 1e12 * k, num_nodes=16, gpus_per_node=8, utilization=0.8, years=3)
    assert cheap.owned_nodes == 16 and cheap.burst_gpu_hours_per_year == 0
    assert dear.owned_nodes == 0
    assert dear.total_usd == pytest.approx(16 * 8 * 8760 * 0.8 * 2.0 * 3)
