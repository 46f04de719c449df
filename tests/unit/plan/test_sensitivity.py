"""The sensitivity model built from a scenario: against plan(), the scalar model run the long way, and its ranges."""

import dataclasses

import numpy as np
import pytest

from clusterplan.plan import sensitivity as s
from clusterplan.cost import cloud_cost
from clusterplan.cost.sensitivity import draw, evaluate, tornado
from clusterplan.plan import own, plan
from clusterplan.spec import load_spec


@pytest.fixture(scope="module")
def model(reference, catalog):
    return s.model(reference, catalog)


def test_nominal_point_equals_plan(reference, reference_plan, model):
    """At the nominal inputs the closed form gives plan()'s TCO, cost per GPU-hour and break-even."""
    values = evaluate(model, model.nominal)
    costs = reference_plan.costs
    assert values["tco_usd"][0] == pytest.approx(costs.tco_usd, rel=1e-12)
    assert values["capex_usd"][0] == pytest.approx(costs.capex_usd, rel=1e-12)
    assert values["opex_usd_per_year"][0] == pytest.approx(costs.opex_total_usd_per_year, rel=1e-12)
    assert values["cost_per_gpu_hour_usd"][0] == pytest.approx(costs.cost_per_gpu_hour_usd, rel=1e-12)
    first = reference_plan.rentals[0]
    assert model.offer == first.cost.offer.id and values["breakeven_months"][0] == first.breakeven_month


def test_perturbed_points_equal_the_scalar_model(reference, catalog, model):
    """At seeded random inputs and at every tornado end, evaluate() equals a perturbed scenario run the long way."""
    rng = np.random.default_rng(7)
    points = list(draw(model, 8, rng))
    for item_index, item in enumerate(model.inputs):
        if item.varies:
            for end in (item.low, item.high):
                point = model.nominal.copy()
                point[item_index] = end
                points.append(point)
    values = evaluate(model, np.array(points))
    for row, point in enumerate(points):
        slow = s.scalar_outcome(reference, model, point, catalog)
        assert values["tco_usd"][row] == pytest.approx(slow.tco_usd, rel=1e-12)
        assert values["cost_per_gpu_hour_usd"][row] == pytest.approx(slow.cost_per_gpu_hour_usd, rel=1e-12)
        month = values["breakeven_months"][row]
        assert (None if np.isinf(month) else int(month)) == slow.breakeven_month


def test_perturbed_point_equals_full_plan(reference, catalog, model):
    """One perturbed scenario through plan() itself (with [prices] overrides) gives the same figures."""
    point = np.array([item.high for item in model.inputs])
    fast = evaluate(model, point)
    full = plan(s.perturbed(reference, model, point), catalog)
    assert fast["tco_usd"][0] == pytest.approx(full.costs.tco_usd, rel=1e-12)
    month = fast["breakeven_months"][0]
    assert (None if np.isinf(month) else int(month)) == full.rentals[0].breakeven_month


@pytest.mark.parametrize("overrides", [
    ["cloud.offers=[\"aws-p5-reserved-3y\"]"],                       # reserved: billed every hour
    ["cloud.offers=[\"nebius-h100-spot\"]"],                        # never breaks even
    ["cloud.offers=[\"aws-p5-on-demand-pre-2025-06\"]", "finance.years=1"],
    ["cluster.num_nodes=4", "network.tiers=0", "finance.years=7"],
])


def test_breakeven_matches_the_monthly_search(catalog, overrides):
    """The closed-form break-even equals a month-by-month search of the cumulative curves of the perturbed
    scenario (and the scalar model) for other offers and horizons."""
    spec = load_spec(None, overrides)
    model = s.model(spec, catalog)
    rng = np.random.default_rng(3)
    for point in [model.nominal, *draw(model, 20, rng)]:
        month = evaluate(model, point)["breakeven_months"][0]
        month = None if np.isinf(month) else int(month)
        assert month == _monthly_search(s.perturbed(spec, model, point), model.offer, catalog)
        assert month == s.scalar_outcome(spec, model, point, catalog).breakeven_month


def _monthly_search(spec, offer, catalog):
    """The first month 0 .. 12 x years at which the cumulative rent reaches the cumulative cost of owning."""
    catalog = catalog.with_prices(spec.prices)
    built, owned = own(spec, catalog)
    rent = cloud_cost(catalog.get("cloud", offer), num_gpus=built.num_gpus, utilization=spec.finance.utilization,
                      years=spec.finance.years)
    reached = [m for m in range(12 * owned.years + 1) if rent.cumulative_usd(m) >= owned.cumulative_usd(m)]
    return reached[0] if reached else None


def test_ranges_come_from_the_catalog_or_twenty_percent(model, catalog):
    """Catalog low/high where sources disagree; +-20 % otherwise, PUE kept >= 1 and utilization <= 1."""
    by_key = {item.key: item for item in model.inputs}
    gpu = catalog.get("gpus", "h100-sxm")
    h100 = by_key["prices.h100-sxm"]
    assert (h100.low, h100.nominal, h100.high, h100.range_source) == (gpu.price_low_usd, gpu.price_usd,
                                                                       gpu.price_high_usd, "catalog")
    electricity = by_key["facility.electricity_usd_per_kwh"]
    assert (electricity.low, electricity.high) == pytest.approx((0.12 * 0.8, 0.12 * 1.2))
    strict = s.model(load_spec(None, ["facility.pue=1.1", "finance.utilization=0.9"]), catalog)
    by_key = {item.key: item for item in strict.inputs}
    assert by_key["facility.pue"].low == 1.0 and by_key["finance.utilization"].high == 1.0


def test_a_price_override_loses_the_catalog_range(catalog):
    """A [prices] quote replaces the catalog figure, so its range is +-20 % of the quote."""
    spec = load_spec(None, ["prices.h100-sxm=28000"])
    item = next(i for i in s.model(spec, catalog).inputs if i.key == "prices.h100-sxm")
    assert (item.nominal, item.low, item.high, item.range_source) == (28000, 22400, 33600, "+-20 %")


def test_zero_nominal_is_fixed_and_left_out_of_the_tornado(catalog):
    """The flat maintenance fraction, 0 by default, has no range: it does not vary and has no tornado bar."""
    spec = load_spec(None, [])
    model = s.model(spec, catalog)
    assert not next(i for i in model.inputs if i.key == "finance.maintenance_fraction_per_year").varies
    _, swings = tornado(model)
    assert "finance.maintenance_fraction_per_year" not in [swing.input.key for swing in swings]


def test_without_cloud_offers_there_is_no_breakeven(catalog):
    """A scenario that rents nothing has TCO and GPU-hour figures but no break-even."""
    spec = load_spec(None, ["cloud.offers=[]", "cloud.burst_offer=\"\""])
    result = s.sensitivity(spec, catalog, samples=500, seed=1)
    assert result.model.offer is None and result.nominal.breakeven_month is None
    assert result.monte_carlo.breakeven_month is None and "breakeven_months" not in result.monte_carlo.drivers


def test_perturbed_changes_only_the_inputs(reference, model):
    """perturbed() writes prices as [prices] overrides and rates into their sections; nothing else moves."""
    changed = s.perturbed(reference, model, model.nominal * 1.0)
    assert changed.cluster == reference.cluster and changed.network == reference.network
    assert changed.prices["h100-sxm"] == 30000 and changed.facility.pue == reference.facility.pue
    assert dataclasses.replace(changed, prices=reference.prices) == reference
