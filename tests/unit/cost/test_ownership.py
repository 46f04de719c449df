"""The ownership rules of docs/cost.md, each pinned by a hand-computed case: warranty then support, economic
life and residual value, the economic cost per GPU-hour, licences by id, spares, the Ethernet networks, sales
tax, the loan, the dating rule of the catalog and the stale-price warning."""

import datetime as dt

import numpy as np
import pytest

from clusterplan.catalog import load_catalog, parse_family
from clusterplan.catalog.entries import Priced
from clusterplan.cli.main import main
from clusterplan.cost.bom import network_size
from clusterplan.cost.tco import (HOURS_PER_YEAR, book_value_usd, capital_recovery_factor, loan_interest_usd,
                                  owned_support_usd_per_year, residual_usd, support_usd_per_year)
from clusterplan.errors import CatalogError
from clusterplan.plan import plan
from clusterplan.plan.ownership import observed, stale_prices
from clusterplan.spec import load_spec


def test_support_starts_when_the_warranty_ends():
    """$1M of servers, 10 % a year, warranty 3 years: nothing in a 3-year horizon, $100K a year in a 5-year one
    on average 2 of 5 years -> $40K; from day one (start 0) the full $100K a year."""
    assert support_usd_per_year(capex_usd=1e6, rate=0.1, start_years=3, span_years=3) == 0
    assert support_usd_per_year(capex_usd=1e6, rate=0.1, start_years=3, span_years=5) == pytest.approx(40_000)
    assert support_usd_per_year(capex_usd=1e6, rate=0.1, start_years=0, span_years=3) == pytest.approx(100_000)


def test_support_rule_over_the_classes_flat_or_per_class_for_floats_and_arrays():
    """Compute $1M from year 3, network $0.5M from year 1, 10 % a year over 5 years: 1M x 0.1 x 2/5 + 0.5M x 0.1
    x 4/5 = 40K + 40K = $80K a year; a flat 2 % replaces it: 2 % of $1.5M = $30K. Each class's own span (the
    economic cost): compute over 4 years 1M x 0.1 x 1/4 = 25K, network over 2 years 0.5M x 0.1 x 1/2 = 25K."""
    capex, starts = {"compute": 1e6, "network": 5e5}, {"compute": 3.0, "network": 1.0}
    assert owned_support_usd_per_year(capex, starts, rate=0.1, flat=0.0, span_years=5) == pytest.approx(80_000)
    assert owned_support_usd_per_year(capex, starts, rate=0.1, flat=0.02, span_years=5) == pytest.approx(30_000)
    assert owned_support_usd_per_year(capex, starts, rate=0.1, flat=0.0,
                                      span_years={"compute": 4, "network": 2}) == pytest.approx(50_000)
    sampled = owned_support_usd_per_year(capex, starts, rate=np.array([0.1, 0.1]), flat=np.array([0.0, 0.02]),
                                         span_years=5)
    assert sampled == pytest.approx([80_000, 30_000])


def test_residual_is_resale_times_the_book_values():
    """Compute $1M over 5 years and network $0.5M over 2 years, at year 3: book values $400K and $0; at 50 %
    resale $200K, and per sample for arrays of lives."""
    capex = {"compute": 1e6, "network": 5e5}
    assert residual_usd(capex, {"compute": 5, "network": 2}, resale=0.5, years=3) == pytest.approx(200_000)
    lives = {"compute": np.array([5.0, 6.0]), "network": np.array([2.0, 6.0])}
    assert residual_usd(capex, lives, resale=0.5, years=3) == pytest.approx([200_000, 250_000 + 125_000])


def test_straight_line_book_value_and_capital_recovery():
    """$1M over 5 years is worth $400K after 3 and nothing after 6; at 8 % over 5 years the level charge is
    0.08 / (1 - 1.08^-5) = 0.250456 a dollar a year, at 0 % one fifth."""
    assert book_value_usd(capex_usd=1e6, life_years=5, age_years=3) == pytest.approx(400_000)
    assert book_value_usd(capex_usd=1e6, life_years=5, age_years=6) == 0
    assert capital_recovery_factor(0.08, 5) == pytest.approx(0.250456, rel=1e-5)
    assert capital_recovery_factor(0.0, 5) == pytest.approx(0.2)


def test_loan_interest_within_the_horizon():
    """$1M at 10 % over 2 years: payment 576,190.48; interest 100,000 in year 1, then 10 % of the 523,809.52
    left = 52,380.95 in year 2."""
    assert loan_interest_usd(principal_usd=1e6, rate=0.1, loan_years=2, years=1) == pytest.approx(100_000)
    assert loan_interest_usd(principal_usd=1e6, rate=0.1, loan_years=2, years=3) == pytest.approx(152_380.95)
    assert loan_interest_usd(principal_usd=1e6, rate=0.0, loan_years=2, years=3) == 0


def test_network_size():
    """36 ports fit one 64-port switch; 100 need ceil(100 / 32) = 4 leaves and 4 x 32 / 64 = 2 spines."""
    assert network_size(36, 64) == (1, 0)
    assert network_size(100, 64) == (4, 2)
    assert network_size(0, 48) == (0, 0)


def test_reference_economic_cost_by_hand(reference_plan):
    """Depreciation: each class's capex over its life, the one-off over the servers'; the cost of capital is
    the capital recovery charge less depreciation; support over the life: network 10 % x (6 - 1) / 6, facility
    10 % x (10 - 2) / 10, servers 10 % x (5 - 3) / 5, storage 10 % x (6 - 3) / 6; per delivered GPU-hour."""
    costs = reference_plan.costs
    c = costs.capex_by_category()
    economic = costs.economic_usd_per_year()
    lives = {"compute": 5, "network": 6, "storage": 6, "facility": 10}
    depreciation = costs.one_off_usd / 5 + sum(c[k] / life for k, life in lives.items())
    charge = costs.one_off_usd * capital_recovery_factor(0.08, 5) + sum(
        c[k] * capital_recovery_factor(0.08, life) for k, life in lives.items())
    support = 0.1 * (c["compute"] * 2 / 5 + c["network"] * 5 / 6 + c["storage"] * 3 / 6 + c["facility"] * 8 / 10)
    assert economic["depreciation"] == pytest.approx(depreciation)
    assert economic["cost_of_capital"] == pytest.approx(charge - depreciation)
    assert economic["support"] == pytest.approx(support)
    assert economic["software"] == 0
    total = charge + support + sum(costs.opex_usd_per_year[k] for k in ("electricity", "colocation", "staff"))
    assert costs.economic_cost_per_gpu_hour_usd == pytest.approx(total / (128 * HOURS_PER_YEAR * 0.8))


def test_licence_by_id_and_bundled_years(catalog):
    """NVIDIA AI Enterprise on the reference: 128 x $4,500 a year; on H100 PCIe (5 years bundled) nothing in a
    3-year horizon; the flat maintenance fraction replaces support: 10 % of all capex."""
    on = plan(load_spec(None, ['finance.licences=["nvidia-ai-enterprise"]']), catalog).costs
    assert on.opex_usd_per_year["software"] == pytest.approx(128 * 4_500)
    pcie = plan(load_spec(None, ['cluster.gpu="h100-pcie"', 'network.nics_per_node=4',
                                 'finance.licences=["nvidia-ai-enterprise"]']),
                catalog).costs
    assert pcie.opex_usd_per_year["software"] == 0
    flat = plan(load_spec(None, ["finance.maintenance_fraction_per_year=0.1"]), catalog).costs
    assert flat.opex_usd_per_year["support"] == pytest.approx(0.1 * flat.capex_usd)


def test_warranty_override(catalog):
    """finance.warranty_years = { network = 3 }: the network's support starts after the 3-year horizon, so only the
    facility (2-year warranty) pays: 10 % x facility capex x (3 - 2) / 3."""
    costs = plan(load_spec(None, ["finance.warranty_years={ network = 3 }"]), catalog).costs
    assert costs.opex_usd_per_year["support"] == pytest.approx(0.1 * costs.capex_by_category()["facility"] / 3)


def test_support_from_day_one(catalog):
    """finance.support_start_year = 0: every class pays 10 % of its capex every year of the horizon."""
    costs = plan(load_spec(None, ["finance.support_start_year=0"]), catalog).costs
    assert costs.opex_usd_per_year["support"] == pytest.approx(0.1 * costs.capex_usd)


def test_spares_off_tax_and_loan(reference_plan, catalog):
    """spare_nodes = 0 removes the spare node; 5 % sales tax is 5 % of the hardware; a 5-year loan at 6 %
    pays, in 3 years, the interest of its schedule on the capex (with tax)."""
    without = plan(load_spec(None, ["finance.spare_nodes=0"]), catalog).costs
    gpu = catalog.get("gpus", "h100-sxm").price_usd
    server = catalog.get("servers", "hgx-h100").price_usd
    nic = catalog.get("nics", "cx7-ndr200").price_usd
    assert reference_plan.costs.capex_usd - without.capex_usd == pytest.approx(8 * gpu + server + 8 * nic)
    taxed = plan(load_spec(None, ["finance.sales_tax=0.05"]), catalog).costs
    assert taxed.capex_usd == pytest.approx(1.05 * reference_plan.costs.capex_usd)
    loan = plan(load_spec(None, ["finance.loan_rate=0.06", "finance.loan_years=5"]), catalog).costs
    interest = loan_interest_usd(principal_usd=loan.capex_usd, rate=0.06, loan_years=5, years=3)
    assert loan.opex_usd_per_year["financing"] == pytest.approx(interest / 3)


def test_frontend_and_management_networks(reference_plan):
    """16 nodes x 2 front-end ports + 1 storage block x 2 = 34 ports on one SN4600C; management: 16 x 2 + 1 block
    + 3 fabric switches + 1 front-end switch = 37 ports on one SN2201; a cable per port (a spare node takes the
    ports of the node it replaces)."""
    by_id = {line.catalog_id: line.quantity for line in reference_plan.costs.bom}
    assert (by_id["sn4600c-100g"], by_id["dac-qsfp28-100g-3m"]) == (1, 34)
    assert (by_id["sn2201-1g-mgmt"], by_id["cat6-rj45-3m"]) == (1, 37)


@pytest.mark.parametrize("setting, key", [
    ("finance.life_years={ gpu-servers = 0.5 }", "finance.life_years.gpu-servers"),
    ("finance.life_years={ racks = 5 }", "finance.life_years.racks"),
    ("finance.warranty_years={ network = 31 }", "finance.warranty_years.network"),
    ("finance.warranty_years={ switches = 3 }", "finance.warranty_years.switches"),
    ("finance.resale_fraction=1.5", "finance.resale_fraction"),
    ("finance.support_fraction_per_year=-0.1", "finance.support_fraction_per_year"),
    ("finance.support_start_year=3", "finance.support_start_year"),
    ('finance.licences=["nvaie"]', "finance.licences[0]"),
    ('finance.fabric_manager="ufm"', "finance.fabric_manager"),
    ("finance.sales_tax=1", "finance.sales_tax"),
])
def test_bad_ownership_input_names_its_key(capsys, tmp_path, setting, key):
    """One line on stderr naming the key, exit 2, nothing written."""
    out = tmp_path / "plan.json"
    code = main(["plan", "--set", setting, "--format", "json", "-o", str(out)])
    err = capsys.readouterr().err
    assert code == 2 and key in err and len(err.strip().splitlines()) == 1 and not out.exists()


def test_assumption_entries_carry_no_date(catalog):
    """No ASSUMPTION entry of the shipped catalog has a date; a file giving one is refused, naming the key."""
    for entries in catalog.families.values():
        for entry in entries.values():
            assert not (getattr(entry, "assumption", False) and entry.date), entry.id
    text = '[x]\nname = "x"\nsource = "ASSUMPTION: x"\ndate = "2026-12-02"\nprice_usd = 1\nassumption = true\n'
    with pytest.raises(CatalogError, match="carries no observation date"):
        parse_family(text, Priced, source="t.toml")


def test_observed_dates_and_the_stale_warning():
    """A date means its last day; entries seen over 365 days before today are named once; undated ones never."""
    assert observed("2024-08") == dt.date(2024, 8, 31) and observed("2025") == dt.date(2025, 12, 31)
    assert observed("2024-12") == dt.date(2024, 12, 31) and observed("undated") is None
    # a span of years means its later year, not a month 25 (regression: "2024-25" read as 2026-01-31)
    assert observed("catalog snapshot (2024-25)") == dt.date(2025, 12, 31)
    assert observed("undated (2025-26)") == dt.date(2026, 12, 31)
    today = dt.date(2026, 12, 5)
    text = stale_prices([("a", "2025-12-04"), ("b", "2025-12-05"), ("c", ""), ("a", "2025-12-04")], today)
    assert text.startswith("prices: 1 prices used") and "(a)" in text
    assert stale_prices([("b", "2026-01")], today) == ""


def test_plan_warns_once_about_stale_prices(catalog):
    """plan(today=...) names the old prices in one warning; without today there is no such check."""
    spec = load_spec()
    late = [w for w in plan(spec, catalog, today=dt.date(2026, 12, 5)).warnings if "12 months" in w]
    assert len(late) == 1 and "hgx-h100" in late[0] and "qm9700-ndr200" in late[0] and "h100-sxm," not in late[0]
    assert not [w for w in plan(spec, catalog).warnings if "12 months" in w]
    assert not [w for w in plan(spec, catalog, today=dt.date(2024, 1, 1)).warnings if "12 months" in w]
