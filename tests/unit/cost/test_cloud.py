import dataclasses

import numpy as np
import pytest

from clusterplan.cost import breakeven_month, breakeven_months, burst_fraction, cloud_cost, hybrid
from clusterplan.plan import plan
from clusterplan.spec import load_spec


def offer(catalog, pricing):
    return dataclasses.replace(catalog.get("cloud", "aws-p5-on-demand"), pricing=pricing, term_years=-1, price_usd=2.0)


def test_pay_per_use_bills_delivered_hours_and_reserved_every_hour(catalog):
    """On-demand bills GPUs x 8760 x utilization; reserved bills all 8760 hours."""
    on_demand = cloud_cost(offer(catalog, "on-demand"), num_gpus=128, utilization=0.5, years=3)
    reserved = cloud_cost(offer(catalog, "reserved-1y"), num_gpus=128, utilization=0.5, years=3)
    assert on_demand.usd_per_year == pytest.approx(128 * 8760 * 0.5 * 2.0)
    assert reserved.usd_per_year == pytest.approx(128 * 8760 * 2.0)
    assert reserved.total_usd == pytest.approx(3 * reserved.usd_per_year)


def test_a_horizon_rents_whole_terms_as_a_run_does(catalog):
    """A 4-year horizon on a 3-year reservation bills two terms (6 years), the 2 idle years resold at 25 %:
    128 x 8,760 h x $2 x (6 - 0.25 x 2) = $12.33M; pay-per-use bills the 4 years it is used."""
    reserved = cloud_cost(offer(catalog, "reserved-3y"), num_gpus=128, utilization=0.5, years=4, resale_fraction=0.25)
    assert reserved.total_usd == pytest.approx(128 * 8760 * 2.0 * 5.5)
    on_demand = cloud_cost(offer(catalog, "on-demand"), num_gpus=128, utilization=0.5, years=4, resale_fraction=0.25)
    assert on_demand.total_usd == pytest.approx(4 * 128 * 8760 * 0.5 * 2.0)


def test_breakeven_month_by_hand(reference_plan, catalog):
    """Renting at the owner's capex per year breaks even once its cumulative spend catches up."""
    own = reference_plan.costs
    upfront = own.capex_usd + own.one_off_usd
    per_year = upfront + own.opex_total_usd_per_year  # rent = own opex + capex again every year
    rate = per_year / (128 * 8760 * 0.8) * (1 + 1e-12)   # a hair above, so float rounding cannot land on month 13
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


def test_hybrid_owns_whole_nvlink_domains(catalog):
    """On a rack-scale server (18 trays a domain) every owned count is a whole number of domains."""
    seen = []

    def own_usd(k):
        seen.append(k)
        return 1.0 * k

    result = hybrid(offer(catalog, "on-demand"), own_usd, num_nodes=288, gpus_per_node=4, utilization=0.8, years=3,
                    unit_nodes=18)
    assert seen and all(k % 18 == 0 for k in seen) and 288 in seen and result.owned_nodes == 288
    wide = []
    hybrid(offer(catalog, "on-demand"), lambda k: wide.append(k) or 1.0, num_nodes=18 * 200, gpus_per_node=4,
           utilization=0.8, years=3, unit_nodes=18)
    assert all(k % 18 == 0 for k in wide) and len(wide) <= 66


def test_plan_of_nvl72_bursts_from_whole_racks():
    """The NVL72 example plans (its hybrid owns whole racks) now that the catalog rents GB200."""
    result = plan(load_spec("examples/gb200-nvl72-1152.toml", []))
    assert result.hybrid is not None and result.hybrid.owned_nodes % 18 == 0
    assert {rental.cost.offer.gpu for rental in result.rentals} == {"gb200"}


def test_breakeven_edge_cases():
    """Nothing up front breaks even at month 0; renting cheaper than running never does; rounding lands on the month."""
    upfront, opex, rent = np.array([0.0, 100.0, 1200.0, 1200.0]), np.array([10.0, 50.0, 0.0, 0.0]), \
        np.array([5.0, 40.0, 1200.0, 100.0])
    months = breakeven_months(upfront_usd=upfront, opex_usd_per_year=opex, rent_usd_per_year=rent, horizon_months=36)
    assert months[0] == 0 and np.isinf(months[1]) and months[2] == 12 and np.isinf(months[3])


def test_breakeven_of_arrays_is_breakeven_of_each_element():
    """The array form gives, element by element, what it gives for one float, as a month-by-month search finds it."""
    rng = np.random.default_rng(5)
    upfront, opex, rent = rng.uniform(0, 1e6, 200), rng.uniform(0, 2e5, 200), rng.uniform(0, 1e6, 200)
    months = breakeven_months(upfront_usd=upfront, opex_usd_per_year=opex, rent_usd_per_year=rent, horizon_months=36)
    for row in range(200):
        one = breakeven_months(upfront_usd=float(upfront[row]), opex_usd_per_year=float(opex[row]),
                               rent_usd_per_year=float(rent[row]), horizon_months=36)
        reached = [m for m in range(37) if rent[row] * m / 12 >= upfront[row] + opex[row] * m / 12]
        assert one == months[row] == (reached[0] if reached else np.inf)


def test_a_reservation_costs_its_whole_term_whatever_the_run(catalog):
    """The issue's case: 85 days on a 3-year reservation pay 3 years, the idle remainder shown; on-demand pays
    the run's hours; a stated resale fraction values the idle remainder."""
    from clusterplan.cost.cloud import rented
    three, on_demand = offer(catalog, "reserved-3y"), offer(catalog, "on-demand")
    run_s = 85 * 86400
    rent = rented(three, num_gpus=128, run_s=run_s)
    assert rent.terms == 1 and rent.total_usd == pytest.approx(128 * 3 * 8760 * 2.0)
    assert rent.idle_usd == pytest.approx(128 * (3 * 8760 - 85 * 24) * 2.0)
    assert rented(on_demand, num_gpus=128, run_s=run_s).total_usd == pytest.approx(128 * 85 * 24 * 2.0)
    resold = rented(three, num_gpus=128, run_s=run_s, resale_fraction=0.25)
    assert resold.total_usd == pytest.approx(rent.total_usd - 0.25 * rent.idle_usd)
    assert rented(three, num_gpus=8, run_s=3.5 * 8760 * 3600).terms == 2


def test_spot_and_short_capacity_are_never_the_headline(catalog):
    """Spot heads neither a 24/7 cluster nor a job over more than one instance; nothing heads past max_gpus."""
    from clusterplan.cost.cloud import headline
    spot, on_demand = catalog.get("cloud", "nebius-h100-spot"), catalog.get("cloud", "nebius-h100-on-demand")
    assert headline(spot, num_gpus=8, always_on=False)                 # one instance: a reclaim is a restart
    assert not headline(spot, num_gpus=16, always_on=False)
    assert not headline(spot, num_gpus=8, always_on=True)
    assert headline(on_demand, num_gpus=on_demand.max_gpus, always_on=True)
    assert not headline(on_demand, num_gpus=on_demand.max_gpus + 8, always_on=True)


def test_plan_headline_is_not_spot(reference_plan):
    """The reference runs 24/7: its cheapest cloud is the cheapest offer that is not spot."""
    from clusterplan.report.export import plan_document
    doc = plan_document(reference_plan)
    pricing = {row["offer"]: row["pricing"] for row in doc["cloud"]}
    assert pricing[doc["cheapest_cloud"]["offer"]] != "spot"
    assert doc["cheapest_cloud"]["total_usd"] == min(row["total_usd"] for row in doc["cloud"]
                                                     if row["pricing"] != "spot")


def test_cloud_choice_by_hand(catalog):
    """One rule picks the headline, the spot line and the offers short of capacity: spot is cheapest ($1) but a
    16-GPU job spans two instances, so the $2 on-demand heads; the $0.5 offer supplies only 8 GPUs at once."""
    from clusterplan.cost.cloud import cloud_choice
    spot = catalog.get("cloud", "nebius-h100-spot")
    on_demand = catalog.get("cloud", "nebius-h100-on-demand")
    small = dataclasses.replace(on_demand, id="small", max_gpus=8)
    costs = {"own": 0.1, spot.id: 1.0, on_demand.id: 2.0, "small": 0.5}
    offers = [spot, on_demand, small]
    choice = cloud_choice(costs, offers, num_gpus=16, always_on=False)
    assert (choice.headline, choice.spot, choice.spot_headline) == (on_demand.id, spot.id, False)
    assert choice.short == {"small": "capacity: 8 GPUs at once"}
    single = cloud_choice(costs, offers, num_gpus=8, always_on=False)   # one instance: spot may head
    assert (single.headline, single.spot, single.spot_headline, dict(single.short)) == ("small", spot.id, True, {})
    assert cloud_choice(costs, offers, num_gpus=8, always_on=True).headline == "small"   # 24/7: never spot
    assert cloud_choice(costs, offers, num_gpus=16, always_on=False, spot=False).spot is None


def test_a_reservations_idle_days_are_its_term_less_the_run(catalog):
    """A 1-year term (8,760 h) rented for a 100-day run stands idle 265 days, whatever the GPU count."""
    from clusterplan.cost.cloud import rented
    offer = catalog.get("cloud", "aws-p5-reserved-1y")
    for num_gpus in (8, 1024):
        assert rented(offer, num_gpus=num_gpus, run_s=100 * 86_400).idle_days == pytest.approx(265)
