"""The vectorised cost model against the scalar plan, tornado, Monte Carlo and the input ranges."""

import dataclasses

import numpy as np
import pytest

from clusterplan import sensitivity as s
from clusterplan.errors import ConfigError
from clusterplan.plan import plan
from clusterplan.spec import load_spec


@pytest.fixture(scope="module")
def model(reference, catalog):
    return s.model(reference, catalog)


def test_nominal_point_equals_plan(reference, reference_plan, model):
    """At the nominal inputs the closed form gives plan()'s TCO, cost per GPU-hour and break-even."""
    values = s.evaluate(model, model.nominal)
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
    points = list(s.draw(model, 8, rng))
    for item_index, item in enumerate(model.inputs):
        if item.varies:
            for end in (item.low, item.high):
                point = model.nominal.copy()
                point[item_index] = end
                points.append(point)
    values = s.evaluate(model, np.array(points))
    for row, point in enumerate(points):
        slow = s.scalar_outcome(reference, model, point, catalog)
        assert values["tco_usd"][row] == pytest.approx(slow.tco_usd, rel=1e-12)
        assert values["cost_per_gpu_hour_usd"][row] == pytest.approx(slow.cost_per_gpu_hour_usd, rel=1e-12)
        month = values["breakeven_months"][row]
        assert (None if np.isinf(month) else int(month)) == slow.breakeven_month


def test_perturbed_point_equals_full_plan(reference, catalog, model):
    """One perturbed scenario through plan() itself (with [prices] overrides) gives the same figures."""
    point = np.array([item.high for item in model.inputs])
    fast = s.evaluate(model, point)
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
    """The closed-form break-even equals the month-by-month search of cost.cloud for other offers and horizons."""
    spec = load_spec(None, overrides)
    model = s.model(spec, catalog)
    rng = np.random.default_rng(3)
    for point in [model.nominal, *s.draw(model, 20, rng)]:
        month = s.evaluate(model, point)["breakeven_months"][0]
        slow = s.scalar_outcome(spec, model, point, catalog)
        assert (None if np.isinf(month) else int(month)) == slow.breakeven_month


def test_breakeven_edge_cases():
    """Nothing up front breaks even at month 0; renting cheaper than running never does; rounding lands on the month."""
    upfront, opex, rent = np.array([0.0, 100.0, 1200.0, 1200.0]), np.array([10.0, 50.0, 0.0, 0.0]), \
        np.array([5.0, 40.0, 1200.0, 100.0])
    months = s._breakeven(upfront, opex, rent, horizon=36)
    assert months[0] == 0 and np.isinf(months[1]) and months[2] == 12 and np.isinf(months[3])


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
    """A zero software licence has no range: it does not vary and has no tornado bar."""
    spec = load_spec(None, ["finance.software_usd_per_gpu_year=0"])
    model = s.model(spec, catalog)
    assert not next(i for i in model.inputs if i.key == "finance.software_usd_per_gpu_year").varies
    _, swings = s.tornado(model)
    assert "finance.software_usd_per_gpu_year" not in [swing.input.key for swing in swings]


def test_tornado_is_sorted_and_brackets_the_nominal(model):
    """Largest TCO swing first; every input's two ends lie either side of (or on) the nominal TCO."""
    nominal, swings = s.tornado(model)
    widths = [swing.tco_swing_usd for swing in swings]
    assert widths == sorted(widths, reverse=True) and swings[0].input.key == "prices.h100-sxm"
    for swing in swings:
        assert swing.low.tco_usd <= nominal.tco_usd + 1e-6 <= swing.high.tco_usd + 2e-6


def test_monte_carlo_is_reproducible_for_a_seed(model):
    """The same seed gives identical results (across chunks); another seed gives others."""
    samples = s.CHUNK + 1234
    first = s.monte_carlo(model, samples=samples, seed=42)
    again = s.monte_carlo(model, samples=samples, seed=42)
    other = s.monte_carlo(model, samples=samples, seed=43)
    assert first == again
    assert first.tco_usd != other.tco_usd
    done = []
    s.monte_carlo(model, samples=samples, seed=42, progress=done.append)
    assert sum(done) == samples and len(done) == 2


def test_monte_carlo_quantiles_and_drivers(model):
    """P10 <= P50 <= P90 inside the tornado's extremes; the GPU price drives TCO, utilization the GPU-hour."""
    mc = s.monte_carlo(model, samples=20_000, seed=1)
    for spread in (mc.tco_usd, mc.cost_per_gpu_hour_usd, mc.breakeven_month):
        assert spread.p10 <= spread.p50 <= spread.p90
    low = s.evaluate(model, np.array([i.low for i in model.inputs]))["tco_usd"][0]
    high = s.evaluate(model, np.array([i.high for i in model.inputs]))["tco_usd"][0]
    assert low <= mc.tco_usd.p10 and mc.tco_usd.p90 <= high
    assert isinstance(mc.breakeven_month.p50, int)
    assert mc.drivers["tco_usd"][0][0] == "prices.h100-sxm"
    assert mc.drivers["cost_per_gpu_hour_usd"][0][0] == "finance.utilization"
    assert mc.drivers["cost_per_gpu_hour_usd"][0][1] < -0.5
    assert sum(mc.tco_histogram[1]) == 20_000


def test_ranks_share_ties():
    """Spearman ranks: ties take their average rank."""
    assert list(s._ranks(np.array([3.0, 1.0, 3.0, 2.0]))) == [3.5, 1.0, 3.5, 2.0]
    assert list(s._ranks(np.array([0.3, 0.1, 0.2]))) == [3.0, 1.0, 2.0]


def test_bad_sample_counts_are_config_errors(model):
    """--samples 0 and above the cap are errors naming --samples."""
    for samples in (0, s.MAX_SAMPLES + 1):
        with pytest.raises(ConfigError, match="--samples"):
            s.monte_carlo(model, samples=samples, seed=1)


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
    assert changed.prices["h100-sxm"] == 31250 and changed.facility.pue == reference.facility.pue
    assert dataclasses.replace(changed, prices=reference.prices) == reference
