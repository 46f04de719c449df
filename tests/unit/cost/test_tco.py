import numpy as np
import pytest

from clusterplan.cost import (HOURS_PER_YEAR, electricity_usd_per_year, net_present_cost_usd, opex_lines_usd_per_year,
                              total_cost_of_ownership_usd)
from clusterplan.plan import plan


def test_public_case_rack_electricity():
    """A 40 kW rack all year at $0.12/kWh costs $42,048; eight such racks $336,384."""
    assert electricity_usd_per_year(40e3, 0.12) == pytest.approx(42_048)
    assert 8 * electricity_usd_per_year(40e3, 0.12) == pytest.approx(336_384)


def test_pue_multiplies_electricity():
    """The facility draws IT power x PUE."""
    assert electricity_usd_per_year(40e3, 0.12, pue=1.5) == pytest.approx(63_072)


def test_reference_opex_lines_by_hand(reference_plan, reference):
    """Each opex line of the reference follows its formula from the design and the scenario."""
    design, costs = reference_plan.design, reference_plan.costs
    opex = costs.opex_usd_per_year
    assert opex["electricity"] == pytest.approx(design.it_typical_power_w / 1e3 * 1.25 * 8760 * 0.12)
    assert opex["colocation"] == pytest.approx(design.it_power_w / 1e3 * 194.95 * 12)
    by_category = costs.capex_by_category()
    # support: 10 % a year after the warranty, averaged over 3 years; servers and storage (3-year warranty) none,
    # network (1 year) two years of three, facility (2 years) one of three
    assert opex["support"] == pytest.approx(0.10 * (by_category["network"] * 2 / 3 + by_category["facility"] / 3))
    assert opex["staff"] == pytest.approx(2 * 252_000)
    assert opex["software"] == 0   # no licence by default; OpenSM manages the InfiniBand fabric for free
    assert opex["financing"] == 0


def test_reference_totals_by_hand(reference_plan, catalog):
    """GPU line, TCO, NPV and cost per delivered GPU-hour of the reference."""
    costs = reference_plan.costs
    gpus = next(line for line in costs.bom if line.catalog_id == "h100-sxm")
    assert gpus.total_usd == 128 * catalog.get("gpus", "h100-sxm").price_usd
    opex = sum(costs.opex_usd_per_year.values())
    by_category = costs.capex_by_category()
    residual = (by_category["compute"] * (1 - 3 / 5) + by_category["network"] * (1 - 3 / 6)
                + by_category["storage"] * (1 - 3 / 6) + by_category["facility"] * (1 - 3 / 10))
    assert costs.residual_usd == pytest.approx(residual)
    assert costs.tco_usd == pytest.approx(costs.capex_usd + costs.one_off_usd + 3 * opex - residual)
    assert costs.npv_usd == pytest.approx(costs.capex_usd + costs.one_off_usd
                                          + opex / 1.08 + opex / 1.08**2 + opex / 1.08**3 - residual / 1.08**3)
    assert costs.cost_per_gpu_hour_usd == pytest.approx(costs.tco_usd / (128 * HOURS_PER_YEAR * 0.8 * 3))
    assert costs.capex_per_gpu_usd == pytest.approx((costs.capex_usd + costs.one_off_usd) / 128)


def test_one_off_is_integration_and_setup_staff(reference_plan, catalog):
    """Integration per node plus setup engineers x months / 12 x loaded cost."""
    one_off = {line.item: line.total_usd for line in reference_plan.costs.one_off}
    integration = catalog.get("services", "integration")
    assert one_off[integration.name] == 16 * integration.price_usd
    setup = [total for item, total in one_off.items() if item.startswith("Setup engineers (engineer-years): 2 for 3")]
    assert setup == [pytest.approx(2 * 3 / 12 * 252_000)]


def test_bom_is_physically_consistent(reference_plan):
    """One NIC per fabric endpoint, one cable per link, one GPU line per GPU, a cooling line per IT kW."""
    design = reference_plan.design
    bom = reference_plan.costs.bom
    by_id = {line.catalog_id: line.quantity for line in bom if "spare node" not in line.item}
    spares = {line.catalog_id: line.quantity for line in bom if "spare node" in line.item}
    parts = design.parts
    # the reliability model recommends one spare node for the reference (docs/reliability.md): its 8 GPUs, its
    # platform and its 8 fabric NICs, on the shelf
    assert spares == {parts.gpu.id: 8, parts.server.id: 1, parts.nic.id: 8}
    assert by_id[parts.nic.id] == design.topology.num_endpoints == 128
    assert by_id[parts.cable.id] == design.topology.num_links == 256   # two leaves and a spine (automatic tiers)
    assert by_id[parts.gpu.id] == 128 and by_id[parts.server.id] == 16
    assert by_id[parts.cooling.id] == pytest.approx(design.it_power_w / 1e3)
    assert by_id[parts.rack.id] == design.racks.num_racks


def test_price_override_flows_into_capex(reference, catalog):
    """[prices] "h100-sxm" = 30000 lowers the GPU lines by (128 + 8 on the spare node) x 1,250."""
    from dataclasses import replace

    base = plan(reference, catalog).costs.capex_usd
    cheaper = plan(replace(reference, prices={"h100-sxm": 30_000.0}), catalog).costs.capex_usd
    delta = (128 + 8) * (catalog.get("gpus", "h100-sxm").price_usd - 30_000)
    assert base - cheaper == pytest.approx(delta)


def test_formulas_take_arrays_as_they_take_floats(reference_plan, reference):
    """The opex lines, TCO and NPV of an array of rates are, element by element, those of each rate alone."""
    design, facility = reference_plan.design, reference.facility
    prices = np.array([0.06, facility.electricity_usd_per_kwh, 0.30])

    def lines(price):
        return opex_lines_usd_per_year(
            typical_power_w=design.it_typical_power_w, power_w=design.it_power_w, pue=design.pue,
            electricity_usd_per_kwh=price, colocation_usd_per_kw_month=facility.colocation_usd_per_kw_month,
            support_usd=reference_plan.costs.opex_usd_per_year["support"], ops_engineers=2,
            loaded_cost_usd_per_year=252_000, software_usd=0.0, financing_usd=0.0)

    together = sum(lines(prices).values())
    alone = [sum(lines(float(price)).values()) for price in prices]
    assert list(together) == alone
    assert alone[1] == reference_plan.costs.opex_total_usd_per_year
    tco = total_cost_of_ownership_usd(upfront_usd=1e6, opex_usd_per_year=together, years=3)
    npv = net_present_cost_usd(upfront_usd=1e6, opex_usd_per_year=together, years=3, discount_rate=0.08)
    for row, opex in enumerate(alone):
        assert tco[row] == total_cost_of_ownership_usd(upfront_usd=1e6, opex_usd_per_year=opex, years=3)
        assert npv[row] == net_present_cost_usd(upfront_usd=1e6, opex_usd_per_year=opex, years=3, discount_rate=0.08)
