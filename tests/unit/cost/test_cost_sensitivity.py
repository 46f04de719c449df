"""The closed-form cost model: evaluate by hand, tornado, Monte Carlo and ranks."""

import numpy as np
import pytest

from clusterplan.cost import sensitivity as s
from clusterplan.errors import ConfigError
from clusterplan.plan.sensitivity import model as build_model


@pytest.fixture(scope="module")
def model(reference, catalog):
    return build_model(reference, catalog)


def test_tornado_is_sorted_and_brackets_the_nominal(model):
    """Largest TCO swing first; every input's two ends lie either side of (or on) the nominal TCO."""
    nominal, swings = s.tornado(model)
    widths = [swing.tco_swing_usd for swing in swings]
    assert widths == sorted(widths, reverse=True)
    # the GPU servers' economic life swings the most (4 to 6 years: the residual at 3 years doubles); the GPU
    # price is in the top three (its residual offsets a third of it)
    assert swings[0].input.key == "finance.life_years.gpu-servers"
    assert "prices.h100-sxm" in [swing.input.key for swing in swings[:3]]
    for swing in swings:
        ends = sorted((swing.low.tco_usd, swing.high.tco_usd))   # a longer life or a higher resale lowers TCO
        assert ends[0] <= nominal.tco_usd + 1e-6 <= ends[1] + 2e-6


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
    """P10 <= P50 <= P90 inside the tornado's extremes; the servers' life and the resale drive TCO, utilization the
    GPU-hour."""
    mc = s.monte_carlo(model, samples=20_000, seed=1)
    for spread in (mc.tco_usd, mc.cost_per_gpu_hour_usd, mc.breakeven_month):
        assert spread.p10 <= spread.p50 <= spread.p90
    low = s.evaluate(model, np.array([i.low for i in model.inputs]))["tco_usd"][0]
    high = s.evaluate(model, np.array([i.high for i in model.inputs]))["tco_usd"][0]
    assert low <= mc.tco_usd.p10 and mc.tco_usd.p90 <= high
    assert isinstance(mc.breakeven_month.p50, int)
    life, correlation = mc.drivers["tco_usd"][0]   # a longer life leaves more residual value: TCO falls
    assert life == "finance.life_years.gpu-servers" and correlation < 0
    top = [key for key, _ in mc.drivers["tco_usd"][:4]]   # then staff, the GPU price and the resale fraction
    assert "prices.h100-sxm" in top and "finance.resale_fraction" in top
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



def _hand_model(offer_pay_per_use=True):
    """A GPU price, an offer price, a licence price, the rates and a server life; 10 GPUs drawing 1 kW typical,
    2 kW nameplate; 3 years; the servers' warranty ends after 1 year."""
    def fixed(key, nominal):
        return s.Input(key=key, name=key, unit="", nominal=nominal, low=nominal, high=nominal, range_source="")

    rates = {"facility.electricity_usd_per_kwh": 0.1, "facility.pue": 1.5,
             "facility.colocation_usd_per_kw_month": 100.0, "staff.loaded_cost_usd_per_year": 200_000.0,
             "finance.support_fraction_per_year": 0.1, "finance.maintenance_fraction_per_year": 0.0,
             "finance.resale_fraction": 0.5, "finance.utilization": 0.5, "finance.life_years.gpu-servers": 5.0}
    inputs = (fixed("prices.gpu", 20_000.0), fixed("prices.offer", 2.0), fixed("prices.licence", 1_000.0),
              *(fixed(key, value) for key, value in rates.items()))
    zeros = (0,) * (len(inputs) - 1)
    return s.Model(inputs=inputs, capex_weights=(10, *zeros),
                   one_off_weights=(0, 0, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0), typical_power_w=1_000.0, power_w=2_000.0,
                   ops_engineers=0.1, years=3, num_gpus=10, offer="offer", offer_pay_per_use=offer_pay_per_use,
                   assets=(("compute", 1.0, "finance.life_years.gpu-servers"),),
                   category_weights={"compute": (10, *zeros)}, licence_weights=(0, 0, 10, *zeros[2:]))


def test_evaluate_by_hand():
    """Capex 200,000 and one-off 100,000 up front; opex a year: electricity 1,314 + colocation 2,400 + support
    200,000 x 0.1 x (3 - 1) / 3 = 13,333.33 + staff 20,000 + licences 10 x 1,000 = 47,047.33; residual
    0.5 x 200,000 x (1 - 3 / 5) = 40,000; on-demand rent 87,600 a year never catches up in 36 months, reserved
    rent 175,200 does in month ceil(12 x 300,000 / (175,200 - 47,047.33)) = ceil(28.09) = 29."""
    model = _hand_model()
    values = s.evaluate(model, model.nominal)
    assert values["capex_usd"][0] == 200_000
    assert values["opex_usd_per_year"][0] == pytest.approx(47_047.3333)
    assert values["tco_usd"][0] == pytest.approx(300_000 + 3 * 47_047.3333 - 40_000)
    assert values["cost_per_gpu_hour_usd"][0] == pytest.approx((300_000 + 3 * 47_047.3333 - 40_000)
                                                               / (10 * 8760 * 0.5 * 3))
    assert np.isinf(values["breakeven_months"][0])
    reserved = s.evaluate(_hand_model(offer_pay_per_use=False), model.nominal)
    assert reserved["breakeven_months"][0] == 29
