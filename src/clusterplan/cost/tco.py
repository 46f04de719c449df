"""Capex, yearly opex, TCO, NPV and cost per delivered GPU-hour (docs/cost.md).

- electricity = average IT draw x PUE x 8,760 h x $/kWh, every hour of the year
- colocation  = nameplate IT kW x $/kW-month x 12 (a site contracts for peak power)
- maintenance = fraction of capex per year; staff = ops engineers x loaded cost;
  software = licences per GPU-year
- TCO = capex + one-off + years x opex; NPV discounts each year's opex at the
  end of that year; cost per GPU-hour = TCO / delivered GPU-hours
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass

from clusterplan.cost.bom import LineItem, bill_of_materials, one_off_items
from clusterplan.design import Design
from clusterplan.schema import FROZEN
from clusterplan.spec import Facility, Finance, Staff

HOURS_PER_YEAR = 8760  # 365 days, as the public case computes it


def electricity_usd_per_year(power_w: float, usd_per_kwh: float, pue: float = 1.0) -> float:
    """A steady ``power_w`` IT load for a year, through the facility's PUE."""
    return power_w / 1e3 * pue * HOURS_PER_YEAR * usd_per_kwh


@dataclass(**FROZEN)
class Costs:
    """Everything owning the design costs over the horizon."""

    bom: tuple[LineItem, ...]
    one_off: tuple[LineItem, ...]
    opex_usd_per_year: Mapping[str, float]  # by category
    years: int
    discount_rate: float
    num_gpus: int
    delivered_gpu_hours_per_year: float

    @property
    def capex_usd(self) -> float:
        return sum(line.total_usd for line in self.bom)

    @property
    def one_off_usd(self) -> float:
        return sum(line.total_usd for line in self.one_off)

    @property
    def opex_total_usd_per_year(self) -> float:
        return sum(self.opex_usd_per_year.values())

    @property
    def tco_usd(self) -> float:
        return self.capex_usd + self.one_off_usd + self.years * self.opex_total_usd_per_year

    @property
    def npv_usd(self) -> float:
        opex = self.opex_total_usd_per_year
        return self.capex_usd + self.one_off_usd + sum(
            opex / (1 + self.discount_rate) ** year for year in range(1, self.years + 1))

    @property
    def cost_per_gpu_hour_usd(self) -> float:
        return self.tco_usd / (self.delivered_gpu_hours_per_year * self.years)

    @property
    def capex_per_gpu_usd(self) -> float:
        """Fully loaded purchase cost per GPU: capex and one-off over the GPU count."""
        return (self.capex_usd + self.one_off_usd) / self.num_gpus

    def capex_by_category(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for line in self.bom:
            totals[line.category] = totals.get(line.category, 0.0) + line.total_usd
        return totals

    def cumulative_usd(self, month: float) -> float:
        """Cash spent by ``month``: capex and one-off up front, opex spread evenly."""
        return self.capex_usd + self.one_off_usd + self.opex_total_usd_per_year * month / 12


def costs(design: Design, *, facility: Facility, staff: Staff, finance: Finance) -> Costs:
    """Capex, one-off and yearly opex of owning ``design``."""
    bom = bill_of_materials(design)
    capex = sum(line.total_usd for line in bom)
    opex = {
        "electricity": electricity_usd_per_year(design.it_typical_power_w, facility.electricity_usd_per_kwh,
                                                design.pue),
        "colocation": design.it_power_w / 1e3 * facility.colocation_usd_per_kw_month * 12,
        "maintenance": capex * finance.maintenance_fraction_per_year,
        "staff": staff.ops_engineers * staff.loaded_cost_usd_per_year,
        "software": design.num_gpus * finance.software_usd_per_gpu_year,
    }
    return Costs(
        bom=bom,
        one_off=one_off_items(design, setup_engineers=staff.setup_engineers, setup_months=staff.setup_months,
                              loaded_cost_usd_per_year=staff.loaded_cost_usd_per_year),
        opex_usd_per_year=types.MappingProxyType(opex), years=finance.years,
        discount_rate=finance.discount_rate, num_gpus=design.num_gpus,
        delivered_gpu_hours_per_year=design.num_gpus * HOURS_PER_YEAR * finance.utilization,
    )
