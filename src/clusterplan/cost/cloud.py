"""Renting the same capacity: per-offer cost, break-even month, hybrid burst (docs/cloud.md).

- Pay-per-use offers (on-demand, spot) bill the delivered GPU-hours:
  GPUs x 8,760 h x utilisation x $/GPU-hour a year.
- Reserved offers bill every hour of the term: GPUs x 8,760 h x $/GPU-hour.
- Break-even: the first whole month at which renting has cost at least as
  much as owning (capex and one-off up front, opex month by month).
- Hybrid: demand follows a load-duration curve d(p) = (1 - p)^(1/u - 1)
  (fraction of peak GPUs busy at time-quantile p; its mean is u). Owning a
  fraction b of the peak leaves the demand above b to a pay-per-use offer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from clusterplan.catalog import CloudOffer
from clusterplan.cost.tco import HOURS_PER_YEAR, Costs
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
        return self.usd_per_year * month / 12


def cloud_cost(offer: CloudOffer, *, num_gpus: int, utilization: float, years: int) -> CloudCost:
    """What ``offer`` charges for the same GPUs over ``years``."""
    billed = num_gpus * HOURS_PER_YEAR * (1.0 if offer.term_years else utilization)
    return CloudCost(offer=offer, billed_gpu_hours_per_year=billed, years=years)


def breakeven_month(own: Costs, rent: CloudCost) -> int | None:
    """First month (0 .. 12 x years) by which renting has cost at least as much as owning."""
    for month in range(0, 12 * own.years + 1):
        if rent.cumulative_usd(month) >= own.cumulative_usd(month):
            return month
    return None


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
           utilization: float, years: int, candidates: Iterable[int] | None = None) -> Hybrid:
    """Cheapest of owning ``k`` nodes (``own_usd(k)`` over the horizon) and bursting the rest."""
    if candidates is None:
        step = max(1, math.ceil(num_nodes / 64))
        candidates = sorted({*range(0, num_nodes + 1, step), num_nodes})
    peak_gpu_hours = num_nodes * gpus_per_node * HOURS_PER_YEAR

    def option(k: int) -> Hybrid:
        burst = peak_gpu_hours * burst_fraction(k / num_nodes, utilization)
        return Hybrid(offer=offer, owned_nodes=k, num_nodes=num_nodes, own_usd=own_usd(k) if k else 0.0,
                      burst_gpu_hours_per_year=burst, years=years)

    return min((option(k) for k in candidates), key=lambda h: h.total_usd)
