"""Renting the same capacity: per-offer cost, break-even month, hybrid burst (docs/cloud.md).

- Pay-per-use offers (on-demand, spot) bill the delivered GPU-hours:
  GPUs x 8,760 h x utilisation x $/GPU-hour a year.
- Reserved offers bill every hour of the term: GPUs x 8,760 h x $/GPU-hour.
- Break-even: the first whole month at which renting has cost at least as
  much as owning (capex and one-off up front, opex month by month), in closed
  form for floats and numpy arrays alike (the sensitivity Monte Carlo calls it).
- Hybrid: demand follows a load-duration curve d(p) = (1 - p)^(1/u - 1)
  (fraction of peak GPUs busy at time-quantile p; its mean is u). Owning a
  fraction b of the peak leaves the demand above b to a pay-per-use offer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

import numpy as np

from clusterplan.catalog import CloudOffer
from clusterplan.cost.tco import HOURS_PER_YEAR, Amount, Costs, cumulative_spend_usd
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class CloudCost:
    """One offer priced for the scenario's GPUs and utilisation."""

    offer: CloudOffer
    billed_gpu_hours_per_year: float
    years: int

    @property
    def usd_per_year(self) -> float:
        return self.billed_gpu_hours_per_year * self.offer.price_usd

    @property
    def total_usd(self) -> float:
        return self.usd_per_year * self.years

    def cumulative_usd(self, month: float) -> float:
        return cumulative_spend_usd(upfront_usd=0.0, usd_per_year=self.usd_per_year, month=month)


def billed_gpu_hours_per_year(*, num_gpus: int, utilization: Amount, reserved: bool) -> Amount:
    """Pay-per-use bills the delivered GPU-hours; a reserved term bills every hour."""
    return num_gpus * HOURS_PER_YEAR * (1.0 if reserved else utilization)


def cloud_cost(offer: CloudOffer, *, num_gpus: int, utilization: float, years: int) -> CloudCost:
    """What ``offer`` charges for the same GPUs over ``years``."""
    billed = billed_gpu_hours_per_year(num_gpus=num_gpus, utilization=utilization, reserved=bool(offer.term_years))
    return CloudCost(offer=offer, billed_gpu_hours_per_year=billed, years=years)


def breakeven_months(*, upfront_usd: Amount, opex_usd_per_year: Amount, rent_usd_per_year: Amount,
                     horizon_months: int) -> np.ndarray:
    """First whole month m in 0 .. ``horizon_months`` by which renting has cost at least as much as owning,
    element by element; ``inf`` where renting stays cheaper for the whole horizon.

    Owning spends ``upfront_usd`` at month 0 and opex month by month, renting its yearly rent month by month.
    Where rent outpaces opex the month is ceil(12 upfront / (rent - opex)); it is checked against the
    cumulative curves at the months either side, so that rounding lands on the first month they cross.
    """
    upfront = np.asarray(upfront_usd, dtype=float)
    opex = np.asarray(opex_usd_per_year, dtype=float)
    rent = np.asarray(rent_usd_per_year, dtype=float)
    last = horizon_months

    def rented_more(month: np.ndarray) -> np.ndarray:
        return (cumulative_spend_usd(upfront_usd=0.0, usd_per_year=rent, month=month)
                >= cumulative_spend_usd(upfront_usd=upfront, usd_per_year=opex, month=month))

    gap = rent - opex
    with np.errstate(divide="ignore", invalid="ignore"):
        guess = np.where(gap > 0, np.ceil(12 * upfront / np.where(gap > 0, gap, 1.0)), last + 1.0)
    month = np.clip(np.where(upfront <= 0, 0.0, guess), 0, last + 1)
    month = np.where((month > 0) & rented_more(month - 1), month - 1, month)   # the division's rounding, both ways
    month = np.where((month <= last) & ~rented_more(month), month + 1, month)
    return np.where((month <= last) & rented_more(month), month, np.inf)


def breakeven_month(own: Costs, rent: CloudCost) -> int | None:
    """First month (0 .. 12 x years) by which renting has cost at least as much as owning; None: never."""
    month = float(breakeven_months(upfront_usd=own.upfront_usd, opex_usd_per_year=own.opex_total_usd_per_year,
                                   rent_usd_per_year=rent.usd_per_year, horizon_months=12 * own.years))
    return None if math.isinf(month) else int(month)


def burst_fraction(owned_fraction: float, utilization: float) -> float:
    """Share of peak GPU-hours above an owned base of ``owned_fraction`` of the peak.

    With a = 1/u - 1 and c = 1/a, the demand exceeds b until p* = 1 - b^c, and
    the integral of max(d - b, 0) is u (1 - b^(1+c)) - b + b^(1+c).
    """
    b, u = min(max(owned_fraction, 0.0), 1.0), utilization
    if u >= 1.0 or b >= 1.0:
        return max(u - b, 0.0)
    if b == 0.0:
        return u
    tail = b ** (1 + u / (1 - u))  # b^(1+c), c = 1/a = u / (1 - u)
    return max(u * (1 - tail) - b + tail, 0.0)


@dataclass(**FROZEN)
class Hybrid:
    """The cheapest split between owned nodes and burst GPU-hours."""

    offer: CloudOffer
    owned_nodes: int
    num_nodes: int
    own_usd: float
    burst_gpu_hours_per_year: float
    years: int

    @property
    def burst_usd(self) -> float:
        return self.burst_gpu_hours_per_year * self.offer.price_usd * self.years

    @property
    def total_usd(self) -> float:
        return self.own_usd + self.burst_usd


def hybrid(offer: CloudOffer, own_usd: Callable[[int], float], *, num_nodes: int, gpus_per_node: int,
           utilization: float, years: int, candidates: Iterable[int] | None = None, unit_nodes: int = 1) -> Hybrid:
    """Cheapest of owning ``k`` nodes (``own_usd(k)`` over the horizon) and bursting the rest; ``k`` in whole
    ``unit_nodes`` (a rack-scale NVLink domain's servers: 18 NVL72 trays)."""
    if candidates is None:
        step = unit_nodes * max(1, math.ceil(num_nodes / unit_nodes / 64))
        candidates = sorted({*range(0, num_nodes + 1, step), num_nodes})
    peak_gpu_hours = num_nodes * gpus_per_node * HOURS_PER_YEAR

    def option(k: int) -> Hybrid:
        burst = peak_gpu_hours * burst_fraction(k / num_nodes, utilization)
        return Hybrid(offer=offer, owned_nodes=k, num_nodes=num_nodes, own_usd=own_usd(k) if k else 0.0,
                      burst_gpu_hours_per_year=burst, years=years)

    return min((option(k) for k in candidates), key=lambda h: h.total_usd)
