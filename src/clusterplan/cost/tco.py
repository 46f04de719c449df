"""Capex, yearly opex, TCO, NPV, residual value and cost per delivered GPU-hour (docs/cost.md).

- electricity = average IT draw x PUE x 8,760 h x $/kWh, every hour of the year
- colocation  = nameplate IT kW x $/kW-month x 12 (a site contracts for peak power)
- support     = each asset class's capex x the support rate, from the end of its warranty (or the
  scenario's support start); or a flat maintenance fraction of all capex from year 1
- staff = ops engineers x loaded cost; software = the licences switched on, past their bundled years
- financing   = the interest a loan for the capex pays within the horizon
- residual    = resale fraction x straight-line book value of each asset class at the horizon
- TCO = capex + one-off + years x opex + financing - residual (cash over the horizon); NPV discounts each
  year's opex at the end of that year and the residual at the horizon
- economic cost a year = capital charge (depreciation and cost of capital: capex x the capital recovery
  factor over each class's life) + opex averaged over the life; per delivered GPU-hour beside the cash figure

Lines that start or stop within the horizon (support after the warranty, a licence past its bundled years,
loan interest) enter the opex as their average over the horizon, so cash is spread evenly over the months
as the rest of the opex is. Each formula is written once, here, for floats and numpy arrays alike:
``Costs`` calls it with one scenario's numbers, the sensitivity Monte Carlo with arrays of sampled inputs.
"""

from __future__ import annotations

import types
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from clusterplan.cost.bom import Extras, LineItem, bill_of_materials, one_off_items
from clusterplan.design import Design
from clusterplan.schema import FROZEN

HOURS_PER_YEAR = 8760  # 365 days, as the public case computes it

Amount = float | np.ndarray   # one figure, or one per sample


def electricity_usd_per_year(power_w: Amount, usd_per_kwh: Amount, pue: Amount = 1.0) -> Amount:
    """A steady ``power_w`` IT load for a year, through the facility's PUE."""
    return power_w / 1e3 * pue * HOURS_PER_YEAR * usd_per_kwh


def years_after(start_years: Amount, span_years: Amount) -> Amount:
    """The years of ``[0, span_years]`` after ``start_years``: what a contract starting then covers."""
    return np.maximum(0.0, span_years - start_years)


def support_usd_per_year(*, capex_usd: Amount, rate: Amount, start_years: Amount, span_years: Amount) -> Amount:
    """A support contract of ``rate`` x ``capex_usd`` a year from ``start_years``, averaged over ``span_years``."""
    return capex_usd * rate * years_after(start_years, span_years) / span_years


def book_value_usd(*, capex_usd: Amount, life_years: Amount, age_years: Amount) -> Amount:
    """Straight-line book value of ``capex_usd`` after ``age_years`` of a ``life_years`` life."""
    return capex_usd * np.maximum(0.0, 1.0 - age_years / life_years)


def owned_support_usd_per_year(by_category: Mapping[str, Amount], starts: Mapping[str, float], *, rate: Amount,
                               flat: Amount, span_years: Amount | Mapping[str, Amount]) -> Amount:
    """Support a year, averaged over ``span_years`` (one span, or one per category): ``flat`` x all capex when
    ``flat`` > 0 (finance.maintenance_fraction_per_year), else each class's contract of ``rate`` x its capex from
    its start (``starts``: category -> support start in years)."""
    spans = span_years if isinstance(span_years, Mapping) else dict.fromkeys(starts, span_years)
    contracts = sum(support_usd_per_year(capex_usd=by_category.get(category, 0.0), rate=rate, start_years=start,
                                         span_years=spans[category]) for category, start in starts.items())
    support = np.where(np.asarray(flat) > 0, sum(by_category.values()) * flat, contracts)
    return float(support) if support.ndim == 0 else support


def residual_by_category_usd(by_category: Mapping[str, Amount], lives: Mapping[str, Amount], *, resale: Amount,
                             years: Amount) -> dict[str, Amount]:
    """Resale fraction x straight-line book value at ``years`` of each class (``lives``: category -> life)."""
    return {category: resale * book_value_usd(capex_usd=by_category.get(category, 0.0), life_years=life,
                                              age_years=years) for category, life in lives.items()}


def residual_usd(by_category: Mapping[str, Amount], lives: Mapping[str, Amount], *, resale: Amount,
                 years: Amount) -> Amount:
    """What the hardware is worth at ``years``: resale fraction x the classes' book values summed."""
    return resale * sum(book_value_usd(capex_usd=by_category.get(category, 0.0), life_years=life, age_years=years)
                        for category, life in lives.items())


def capital_recovery_factor(rate: Amount, life_years: Amount) -> Amount:
    """The level yearly charge per dollar invested that repays it with interest ``rate`` over ``life_years``
    (depreciation plus cost of capital); 1 / life at a zero rate."""
    rate = np.asarray(rate, dtype=float)
    safe = np.where(rate > 0, rate, 1.0)
    factor = np.where(rate > 0, safe / (1 - (1 + safe) ** -np.asarray(life_years, dtype=float)),
                      1.0 / np.asarray(life_years, dtype=float))
    return float(factor) if factor.ndim == 0 else factor


def loan_interest_usd(*, principal_usd: Amount, rate: float, loan_years: int, years: int) -> Amount:
    """Interest a level-payment loan of ``principal_usd`` over ``loan_years`` pays in the first ``years``."""
    if rate <= 0 or loan_years <= 0:
        return principal_usd * 0.0
    payment = capital_recovery_factor(rate, loan_years)
    balance, interest = 1.0, 0.0
    for _ in range(min(years, loan_years)):
        interest += balance * rate
        balance -= payment - balance * rate
    return principal_usd * interest


def opex_lines_usd_per_year(*, typical_power_w: float, power_w: float, pue: Amount, electricity_usd_per_kwh: Amount,
                            colocation_usd_per_kw_month: Amount, support_usd: Amount, ops_engineers: float,
                            loaded_cost_usd_per_year: Amount, software_usd: Amount,
                            financing_usd: Amount) -> dict[str, Amount]:
    """The yearly opex lines by category; their total is ``sum(lines.values())``."""
    return {
        "electricity": electricity_usd_per_year(typical_power_w, electricity_usd_per_kwh, pue),
        "colocation": power_w / 1e3 * colocation_usd_per_kw_month * 12,
        "support": support_usd,
        "staff": ops_engineers * loaded_cost_usd_per_year,
        "software": software_usd,
        "financing": financing_usd,
    }


def total_cost_of_ownership_usd(*, upfront_usd: Amount, opex_usd_per_year: Amount, years: int,
                                residual_usd: Amount = 0.0) -> Amount:
    """Capex and one-off (``upfront_usd``) plus ``years`` of opex, less the residual value at the horizon."""
    return upfront_usd + years * opex_usd_per_year - residual_usd


def net_present_cost_usd(*, upfront_usd: Amount, opex_usd_per_year: Amount, years: int,
                         discount_rate: float, residual_usd: Amount = 0.0) -> Amount:
    """``upfront_usd`` now, each year's opex discounted from the end of that year, the residual from the horizon."""
    return (upfront_usd + sum(opex_usd_per_year / (1 + discount_rate) ** year for year in range(1, years + 1))
            - residual_usd / (1 + discount_rate) ** years)


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
class AssetTerms:
    """One asset class as the scenario owns it: the BoM category, its warranty, support start and life."""

    asset: str                 # catalog id (catalog/assets.toml)
    category: str              # the BoM category it covers
    warranty_years: float
    support_start_years: float  # the warranty's end, or the scenario's support_start_year
    life_years: float
    source: str


@dataclass(**FROZEN)
class LicenceCharge:
    """A licence the scenario pays for: units x price a year, nothing for its first ``bundled_years``."""

    licence: str
    name: str
    units: float
    unit: str
    unit_price_usd: float
    bundled_years: float
    source: str = ""


@dataclass(**FROZEN)
class Ownership:
    """The rules of owning, resolved from the scenario and the catalog (docs/cost.md)."""

    assets: tuple[AssetTerms, ...]
    support_fraction_per_year: float
    maintenance_fraction_per_year: float     # > 0: a flat fraction of all capex a year instead of support
    resale_fraction: float
    licences: tuple[LicenceCharge, ...] = ()
    loan_rate: float = 0.0
    loan_years: int = 0
    extras: Extras = Extras()

    def terms(self, category: str) -> AssetTerms:
        return next(a for a in self.assets if a.category == category)

    @property
    def server_life_years(self) -> float:
        return self.terms("compute").life_years

    @property
    def support_starts(self) -> dict[str, float]:
        """Category -> the year its support contract starts."""
        return {terms.category: terms.support_start_years for terms in self.assets}

    @property
    def lives(self) -> dict[str, float]:
        """Category -> its economic life in years."""
        return {terms.category: terms.life_years for terms in self.assets}

    def support_usd_per_year(self, by_category: Mapping[str, Amount], span_years: Amount | Mapping[str, Amount]
                             ) -> Amount:
        """The scenario's support rule over ``span_years`` (``owned_support_usd_per_year``)."""
        return owned_support_usd_per_year(by_category, self.support_starts, rate=self.support_fraction_per_year,
                                          flat=self.maintenance_fraction_per_year, span_years=span_years)


def licence_usd_per_year(charge: LicenceCharge, span_years: Amount, price_usd: Amount | None = None) -> Amount:
    """``charge`` averaged over ``span_years``: nothing in its bundled years."""
    price = charge.unit_price_usd if price_usd is None else price_usd
    return charge.units * price * years_after(charge.bundled_years, span_years) / span_years


def capex_by_category(bom: tuple[LineItem, ...]) -> dict[str, float]:
    """Capex by BoM category; sales tax is shared out over the categories in proportion."""
    totals: dict[str, float] = {}
    for line in bom:
        if line.category != "tax":
            totals[line.category] = totals.get(line.category, 0.0) + line.total_usd
    tax = sum(line.total_usd for line in bom if line.category == "tax")
    base = sum(totals.values())
    return {category: total * (1 + tax / base) if base else total for category, total in totals.items()}


@dataclass(**FROZEN)
class Costs:
    """Everything owning the design costs over the horizon, and over each asset class's economic life."""

    bom: tuple[LineItem, ...]
    one_off: tuple[LineItem, ...]
    opex_usd_per_year: Mapping[str, float]  # by category, averaged over the horizon
    opex_rules: Mapping[str, str]           # by category: the rule that gave the line
    years: int
    discount_rate: float
    num_gpus: int
    delivered_gpu_hours_per_year: float
    ownership: Ownership

    @property
    def capex_usd(self) -> float:
        """The hardware bought (with sales tax): what owning commits before the first GPU-hour."""
        return sum(line.total_usd for line in self.bom)

    @property
    def one_off_usd(self) -> float:
        return sum(line.total_usd for line in self.one_off)

    @property
    def upfront_usd(self) -> float:
        """Paid at month 0: capex and one-off (the money committed to own, before any opex)."""
        return self.capex_usd + self.one_off_usd

    @property
    def opex_total_usd_per_year(self) -> float:
        return sum(self.opex_usd_per_year.values())

    def capex_by_category(self) -> dict[str, float]:
        return capex_by_category(self.bom)

    def residual_by_category(self) -> dict[str, float]:
        """Resale fraction x straight-line book value of each class at the horizon."""
        return {category: float(value) for category, value in residual_by_category_usd(
            self.capex_by_category(), self.ownership.lives, resale=self.ownership.resale_fraction,
            years=self.years).items()}

    @property
    def residual_usd(self) -> float:
        """What the hardware is worth at the horizon, credited in TCO and NPV."""
        return float(residual_usd(self.capex_by_category(), self.ownership.lives,
                                  resale=self.ownership.resale_fraction, years=self.years))

    @property
    def tco_usd(self) -> float:
        return total_cost_of_ownership_usd(upfront_usd=self.upfront_usd, opex_usd_per_year=self.opex_total_usd_per_year,
                                           years=self.years, residual_usd=self.residual_usd)

    @property
    def npv_usd(self) -> float:
        return net_present_cost_usd(upfront_usd=self.upfront_usd, opex_usd_per_year=self.opex_total_usd_per_year,
                                    years=self.years, discount_rate=self.discount_rate, residual_usd=self.residual_usd)

    @property
    def cost_per_gpu_hour_usd(self) -> float:
        """The cash TCO of the horizon per delivered GPU-hour."""
        return usd_per_gpu_hour(total_usd=self.tco_usd, gpu_hours_per_year=self.delivered_gpu_hours_per_year,
                                years=self.years)

    @property
    def capex_per_gpu_usd(self) -> float:
        """Fully loaded purchase cost per GPU: capex and one-off over the GPU count."""
        return self.upfront_usd / self.num_gpus

    def economic_usd_per_year(self) -> dict[str, float]:
        """A year of owning over each class's economic life: depreciation, cost of capital, and the opex with
        support and licences averaged over the life instead of the horizon (financing is inside the cost of
        capital)."""
        own, rate = self.ownership, self.discount_rate
        by_category = self.capex_by_category()
        server_life = own.server_life_years
        depreciation = self.one_off_usd / server_life
        capital = self.one_off_usd * capital_recovery_factor(rate, server_life)
        for terms in own.assets:
            capex = by_category.get(terms.category, 0.0)
            depreciation += capex / terms.life_years
            capital += capex * capital_recovery_factor(rate, terms.life_years)
        support = float(own.support_usd_per_year(by_category, own.lives))
        opex = self.opex_usd_per_year
        return {"depreciation": depreciation, "cost_of_capital": float(capital - depreciation),
                "electricity": opex["electricity"], "colocation": opex["colocation"], "support": support,
                "staff": opex["staff"],
                "software": float(sum(licence_usd_per_year(charge, server_life) for charge in own.licences))}

    @property
    def economic_cost_per_gpu_hour_usd(self) -> float:
        """The economic cost of a year (depreciation + opex + cost of capital) per delivered GPU-hour."""
        return sum(self.economic_usd_per_year().values()) / self.delivered_gpu_hours_per_year

    def cumulative_usd(self, month: float) -> float:
        """Cash spent by ``month``: capex and one-off up front, opex spread evenly (the residual is not cash
        until the hardware is sold)."""
        return cumulative_spend_usd(upfront_usd=self.upfront_usd, usd_per_year=self.opex_total_usd_per_year,
                                    month=month)


def costs(design: Design, ownership: Ownership, *, electricity_usd_per_kwh: float, colocation_usd_per_kw_month: float,
          ops_engineers: float, setup_engineers: float, setup_months: float, loaded_cost_usd_per_year: float,
          years: int, discount_rate: float, utilization: float, sales_tax: float = 0.0) -> Costs:
    """Capex, one-off and yearly opex of owning ``design`` under ``ownership`` at the scenario's prices and rates."""
    bom = bill_of_materials(design, ownership.extras, sales_tax=sales_tax)
    by_category = capex_by_category(bom)
    capex = sum(line.total_usd for line in bom)
    opex = opex_lines_usd_per_year(
        typical_power_w=design.it_typical_power_w, power_w=design.it_power_w, pue=design.pue,
        electricity_usd_per_kwh=electricity_usd_per_kwh, colocation_usd_per_kw_month=colocation_usd_per_kw_month,
        support_usd=ownership.support_usd_per_year(by_category, years), ops_engineers=ops_engineers,
        loaded_cost_usd_per_year=loaded_cost_usd_per_year,
        software_usd=sum(licence_usd_per_year(charge, years) for charge in ownership.licences),
        financing_usd=loan_interest_usd(principal_usd=capex, rate=ownership.loan_rate,
                                        loan_years=ownership.loan_years, years=years) / years)
    return Costs(
        bom=bom,
        one_off=one_off_items(design, setup_engineers=setup_engineers, setup_months=setup_months,
                              loaded_cost_usd_per_year=loaded_cost_usd_per_year),
        opex_usd_per_year=types.MappingProxyType({k: float(v) for k, v in opex.items()}),
        opex_rules=types.MappingProxyType(opex_rules(ownership, years)), years=years,
        discount_rate=discount_rate, num_gpus=design.num_gpus,
        delivered_gpu_hours_per_year=delivered_gpu_hours_per_year(num_gpus=design.num_gpus, utilization=utilization),
        ownership=ownership)


def opex_rules(ownership: Ownership, years: int) -> dict[str, str]:
    """The rule behind the support, software and financing lines, in words (also when they are $0)."""
    if ownership.maintenance_fraction_per_year:
        support = (f"flat {ownership.maintenance_fraction_per_year:.0%} of capex a year "
                   "(finance.maintenance_fraction_per_year)")
    else:
        starts = ", ".join(f"{t.category} from year {t.support_start_years:g}" for t in ownership.assets)
        support = (f"{ownership.support_fraction_per_year:.0%} of a class's capex a year after its warranty "
                   f"({starts}), averaged over {years} years")
    software = "; ".join(
        f"{c.licence} {c.units:,g} {c.unit}s x ${c.unit_price_usd:,.0f}"
        + (f", bundled for {c.bundled_years:g} years" if c.bundled_years else "") for c in ownership.licences)
    financing = (f"loan at {ownership.loan_rate:.1%} over {ownership.loan_years} years: interest in the horizon"
                 if ownership.loan_rate and ownership.loan_years else "none: paid in cash (finance.loan_rate)")
    return {"support": support, "software": software or "none (finance.licences = [])", "financing": financing}
