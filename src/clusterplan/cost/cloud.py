"""Renting the same capacity: per-offer cost, break-even month, hybrid burst (docs/cloud.md).

- Pay-per-use offers (on-demand, spot) bill the delivered GPU-hours:
  GPUs x 8,760 h x utilisation x $/GPU-hour a year.
- Reserved offers bill every hour of the term: GPUs x 8,760 h x $/GPU-hour.
- A run (``rented``): pay-per-use bills the run's GPU-hours; a reservation or contract costs its whole
  term from the day it starts, whatever the run's length: ceil(run / term) terms. The idle remainder is
  shown and may be valued at a stated resale fraction (default none). Every command prices a run so.
- Capacity is finite: an offer supplies at most ``max_gpus`` at once (``supplies``); spot capacity is
  reclaimed, so it is never the headline of a synchronous multi-node job or of a 24/7 cluster
  (``headline``). ``cloud_choice`` applies both once: the headline offer, the spot offer that supplies the
  GPUs, and the offers short of capacity, which every command and view then prints.
- Break-even: the first whole month at which renting has cost at least as
  much as owning (capex and one-off up front, opex month by month), in closed
  form for floats and numpy arrays alike (the sensitivity Monte Carlo calls it).
- Hybrid: demand follows a load-duration curve d(p) = (1 - p)^(1/u - 1)
  (fraction of peak GPUs busy at time-quantile p; its mean is u). Owning a
  fraction b of the peak leaves the demand above b to a pay-per-use offer.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import numpy as np

from clusterplan.catalog import CloudOffer
from clusterplan.cost.tco import HOURS_PER_YEAR, Amount, Costs, cumulative_spend_usd
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class CloudCost:
    """One offer priced for the scenario's GPUs and utilisation over its horizon."""

    offer: CloudOffer
    num_gpus: int
    billed_gpu_hours_per_year: float
    years: int
    resale_fraction: float = 0.0      # of a reservation's idle remainder past the horizon (``rented``)

    @property
    def usd_per_year(self) -> float:
        return self.billed_gpu_hours_per_year * self.offer.price_usd

    @property
    def total_usd(self) -> float:
        """The horizon's rent: pay-per-use bills its years; a reservation is ``rented`` for the horizon, whole
        terms from the day it starts, less the idle remainder resold."""
        if not self.offer.term_years:
            return self.usd_per_year * self.years
        return rented(self.offer, num_gpus=self.num_gpus, run_s=self.years * HOURS_PER_YEAR * 3600.0,
                      resale_fraction=self.resale_fraction).total_usd

    def cumulative_usd(self, month: float) -> float:
        return cumulative_spend_usd(upfront_usd=0.0, usd_per_year=self.usd_per_year, month=month)


def billed_gpu_hours_per_year(*, num_gpus: int, utilization: Amount, reserved: bool) -> Amount:
    """Pay-per-use bills the delivered GPU-hours; a reserved term bills every hour."""
    return num_gpus * HOURS_PER_YEAR * (1.0 if reserved else utilization)


def cloud_cost(offer: CloudOffer, *, num_gpus: int, utilization: float, years: int,
               resale_fraction: float = 0.0) -> CloudCost:
    """What ``offer`` charges for the same GPUs over ``years``."""
    billed = billed_gpu_hours_per_year(num_gpus=num_gpus, utilization=utilization, reserved=bool(offer.term_years))
    return CloudCost(offer=offer, num_gpus=num_gpus, billed_gpu_hours_per_year=billed, years=years,
                     resale_fraction=resale_fraction)


@dataclass(**FROZEN)
class Rented:
    """One offer rented for one run: the GPU-hours billed (whole terms for a reservation), those the run
    uses, and the idle remainder's value at ``resale_fraction``."""

    offer: CloudOffer
    num_gpus: int
    run_s: float
    terms: int                        # whole terms billed (0: pay-per-use)
    billed_gpu_hours: float
    used_gpu_hours: float
    resale_fraction: float = 0.0

    @property
    def idle_gpu_hours(self) -> float:
        return self.billed_gpu_hours - self.used_gpu_hours

    @property
    def idle_days(self) -> float:
        """The days of the commitment its GPUs stand idle after the run."""
        return self.idle_gpu_hours / self.num_gpus / 24

    @property
    def billed_usd(self) -> float:
        return self.billed_gpu_hours * self.offer.price_usd

    @property
    def idle_usd(self) -> float:
        """What the idle remainder of the terms costs."""
        return self.idle_gpu_hours * self.offer.price_usd

    @property
    def resale_usd(self) -> float:
        return self.idle_usd * self.resale_fraction

    @property
    def total_usd(self) -> float:
        """What renting the run costs: every billed hour, less the idle remainder resold."""
        return self.billed_usd - self.resale_usd


def term_s(offer: CloudOffer) -> float:
    """The offer's commitment in seconds (0 for pay-per-use)."""
    return offer.term_years * HOURS_PER_YEAR * 3600.0


def rented(offer: CloudOffer, *, num_gpus: int, run_s: float, resale_fraction: float = 0.0) -> Rented:
    """``offer`` rented for a run of ``run_s`` wall-clock seconds on ``num_gpus``: THE commitment rule.

    Pay-per-use bills the run's GPU-hours; a reservation bills ``ceil(run / term)`` whole terms from the day
    it starts, used or not (a run of 85 days on a 3-year reservation pays 3 years)."""
    used = num_gpus * run_s / 3600.0
    if not offer.term_years:
        return Rented(offer=offer, num_gpus=num_gpus, run_s=run_s, terms=0, billed_gpu_hours=used,
                      used_gpu_hours=used)
    terms = max(1, math.ceil(run_s / term_s(offer) - 1e-12))
    return Rented(offer=offer, num_gpus=num_gpus, run_s=run_s, terms=terms,
                  billed_gpu_hours=num_gpus * terms * term_s(offer) / 3600.0, used_gpu_hours=used,
                  resale_fraction=resale_fraction)


def supplies(offer: CloudOffer, num_gpus: int) -> bool:
    """Whether ``offer`` supplies ``num_gpus`` at once (its ``max_gpus``)."""
    return num_gpus <= offer.max_gpus


def interruptible_excluded(offer: CloudOffer, *, num_gpus: int, always_on: bool) -> bool:
    """Spot capacity is reclaimed: it cannot carry a 24/7 cluster, nor a synchronous job spanning more than
    one instance (one reclaimed instance stops every rank)."""
    return offer.pricing == "spot" and (always_on or num_gpus > offer.gpus_per_instance)


def headline(offer: CloudOffer, *, num_gpus: int, always_on: bool) -> bool:
    """Whether ``offer`` may be the headline "cheapest cloud": it supplies the GPUs and is not interruptible
    capacity under a synchronous multi-node job or a 24/7 cluster."""
    return supplies(offer, num_gpus) and not interruptible_excluded(offer, num_gpus=num_gpus, always_on=always_on)


def cheapest(costs_usd: Mapping[str, float], offers: Iterable[CloudOffer], num_gpus: int) -> CloudOffer | None:
    """The offer of ``offers`` with the lowest cost in ``costs_usd`` among those that supply ``num_gpus`` at once
    (the first on a tie); None where none does."""
    able = [offer for offer in offers if offer.id in costs_usd and supplies(offer, num_gpus)]
    return min(able, key=lambda offer: costs_usd[offer.id]) if able else None


@dataclass(**FROZEN)
class CloudChoice:
    """The cloud lines of a result, chosen once (docs/cloud.md)."""

    headline: str | None            # the cheapest offer that may be the headline "cheapest cloud"
    spot: str | None                # the cheapest spot offer that supplies the GPUs, on its own line
    short: Mapping[str, str]        # each offer that cannot supply the GPUs at once -> why
    spot_headline: bool = False     # whether the spot offer may be the headline (a single-instance job)


NO_CHOICE = CloudChoice(headline=None, spot=None, short={})


def cloud_choice(costs_usd: Mapping[str, float], offers: Iterable[CloudOffer], *, num_gpus: int, always_on: bool,
                 spot: bool = True) -> CloudChoice:
    """Of ``offers`` priced in ``costs_usd`` (offer id -> cost, in the order ranked): the headline (``headline``:
    it supplies the GPUs and is not spot under a synchronous multi-node job or a 24/7 cluster, ``always_on``),
    the spot offer (``spot`` false: none, as where its goodput is unknown) and the offers short of capacity."""
    by_id = {offer.id: offer for offer in offers}
    ranked = [by_id[key] for key in costs_usd if key in by_id]
    top = cheapest(costs_usd, [offer for offer in ranked if headline(offer, num_gpus=num_gpus, always_on=always_on)],
                   num_gpus)
    spot_offer = cheapest(costs_usd, [offer for offer in ranked if offer.pricing == "spot"], num_gpus) if spot else None
    return CloudChoice(headline=top.id if top else None, spot=spot_offer.id if spot_offer else None,
                       spot_headline=spot_offer is not None and headline(spot_offer, num_gpus=num_gpus,
                                                                         always_on=always_on),
                       short={key: f"capacity: {offer.max_gpus:,} GPUs at once" for key, offer in by_id.items()
                              if not supplies(offer, num_gpus)})


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
