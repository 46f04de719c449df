"""Capex, yearly opex, TCO, NPV and cost per delivered GPU-hour (docs/cost.md).

- electricity = average IT draw x PUE x 8,760 h x $/kWh, every hour of the year
- colocation  = nameplate IT kW x $/kW-month x 12 (a site contracts for peak power)
- maintenance = fraction of capex per year; staff = ops engineers x loaded cost;
  software = licences per GPU-year
- TCO = capex + one-off + years x opex; NPV discounts each year's opex at the
  end of that year; cost per GPU-hour = TCO / delivered GPU-hours

Each formula is written once, here, for floats and numpy arrays alike: ``Costs``
calls it with one scenario's numbers, the sensitivity Monte Carlo with arrays of
sampled prices and rates.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from clusterplan.cost.bom import LineItem, bill_of_materials, one_off_items
from clusterplan.design import Design
from clusterplan.schema import FROZEN

HOURS_PER_YEAR = 8760  # 365 days, as the public case computes it

Amount = float | np.ndarray   # one figure, or one per sample


def electricity_usd_per_year(power_w: Amount, usd_per_kwh: Amount, pue: Amount = 1.0) -> Amount:
    """A steady ``power_w`` IT load for a year, through the facility's PUE."""
    return power_w / 1e3 * pue * HOURS_PER_YEAR * usd_per_kwh


def opex_lines_usd_per_year(*, typical_power_w: float, power_w: float, pue: Amount, electricity_usd_per_kwh: Amount,
                            colocation_usd_per_kw_month: Amount, capex_usd: Amount,
                            maintenance_fraction_per_year: Amount, ops_engineers: float,
                            loaded_cost_usd_per_year: Amount, num_gpus: int,
                            software_usd_per_gpu_year: Amount) -> dict[str, Amount]:
    """The five yearly opex lines by category; their total is ``sum(lines.values())``."""
    return {
        "electricity": electricity_usd_per_year(typical_power_w, electricity_usd_per_kwh, pue),
        "colocation": power_w / 1e3 * colocation_usd_per_kw_month * 12,
        "maintenance": capex_usd * maintenance_fraction_per_year,
        "staff": ops_engineers * loaded_cost_usd_per_year,
        "software": num_gpus * software_usd_per_gpu_year,
    }


def total_cost_of_ownership_usd(*, upfront_usd: Amount, opex_usd_per_year: Amount, years: int) -> Amount:
    """Capex and one-off (``upfront_usd``) plus ``years`` of opex."""
    return upfront_usd + years * opex_usd_per_year


def net_present_cost_usd(*, upfront_usd: Amount, opex_usd_per_year: Amount, years: int,
                         discount_rate: float) -> Amount:
    """``upfront_usd`` now, each year's opex discounted from the end of that year."""
    return upfront_usd + sum(opex_usd_per_year / (1 + discount_rate) ** year for year in range(1, years + 1))


def delivered_gpu_hours_per_year(*, num_gpus: int, utilization: Amount) -> Amount:
    """The GPU-hours a year that do useful work."""
    return num_gpus * HOURS_PER_YEAR * utilization


def usd_per_gpu_hour(*, total_usd: Amount, gpu_hours_per_year: Amount, years: int) -> Amount:
    """``total_usd`` over the horizon's GPU-hours."""
    return total_usd / (gpu_hours_per_year * years)


def cumulative_spend_usd(*, upfront_usd: Amount, usd_per_year: Amount, month: Amount) -> Amount:
    """Cash spent by ``month``: ``upfront_usd`` at month 0, ``usd_per_year`` spread evenly over the months."""
    return upfront_usd + usd_per_year * month / 12


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
    def upfront_usd(self) -> float:
        """Paid at month 0: capex and one-off."""
        return self.capex_usd + self.one_off_usd

    @property
    def opex_total_usd_per_year(self) -> float:
        return sum(self.opex_usd_per_year.values())

    @property
    def tco_usd(self) -> float:
        return total_cost_of_ownership_usd(upfront_usd=self.upfront_usd,
                                           opex_usd_per_year=self.opex_total_usd_per_year, years=self.years)

    @property
    def npv_usd(self) -> float:
        return net_present_cost_usd(upfront_usd=self.upfront_usd, opex_usd_per_year=self.opex_total_usd_per_year,
                                    years=self.years, discount_rate=self.discount_rate)

    @property
    def cost_per_gpu_hour_usd(self) -> float:
        return usd_per_gpu_hour(total_usd=self.tco_usd, gpu_hours_per_year=self.delivered_gpu_hours_per_year,
                                years=self.years)

    @property
    def capex_per_gpu_usd(self) -> float:
        """Fully loaded purchase cost per GPU: capex and one-off over the GPU count."""
        return self.upfront_usd / self.num_gpus

    def capex_by_category(self) -> dict[str, float]:
        totals: dict[str, float] = {}
        for line in self.bom:
            totals[line.category] = totals.get(line.category, 0.0) + line.total_usd
        return totals

    def cumulative_usd(self, month: float) -> float:
        """Cash spent by ``month``: capex and one-off up front, opex spread evenly."""
        return cumulative_spend_usd(upfront_usd=self.upfront_usd, usd_per_year=self.opex_total_usd_per_year,
                                    month=month)


def costs(design: Design, *, electricity_usd_per_kwh: float, colocation_usd_per_kw_month: float,
          maintenance_fraction_per_year: float, software_usd_per_gpu_year: float, ops_engineers: float,
          setup_engineers: float, setup_months: float, loaded_cost_usd_per_year: float, years: int,
          discount_rate: float, utilization: float) -> Costs:
    """Capex, one-off and yearly opex of owning ``design`` at the scenario's prices and rates."""
    bom = bill_of_materials(design)
    opex = opex_lines_usd_per_year(
        typical_power_w=design.it_typical_power_w, power_w=design.it_power_w, pue=design.pue,
        electricity_usd_per_kwh=electricity_usd_per_kwh, colocation_usd_per_kw_month=colocation_usd_per_kw_month,
        capex_usd=sum(line.total_usd for line in bom), maintenance_fraction_per_year=maintenance_fraction_per_year,
        ops_engineers=ops_engineers, loaded_cost_usd_per_year=loaded_cost_usd_per_year, num_gpus=design.num_gpus,
        software_usd_per_gpu_year=software_usd_per_gpu_year)
    return Costs(
        bom=bom,
        one_off=one_off_items(design, setup_engineers=setup_engineers, setup_months=setup_months,
                              loaded_cost_usd_per_year=loaded_cost_usd_per_year),
        opex_usd_per_year=types.MappingProxyType(opex), years=years, discount_rate=discount_rate,
        num_gpus=design.num_gpus,
        delivered_gpu_hours_per_year=delivered_gpu_hours_per_year(num_gpus=design.num_gpus, utilization=utilization),
    )
