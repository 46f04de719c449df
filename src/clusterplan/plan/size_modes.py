"""One sized cluster, five ways to get it: time to capacity and cost per procurement mode (docs/size.md).

Every figure here comes from the plan of the candidate's own scenario (``plan.core.own`` and
``plan.training.training``, the functions ``plan`` and ``train`` print from): the owned cost is the effective
cost to train at the cluster's cost per GPU-hour, the rented ones the effective cost at each offer's price
(a spot offer's goodput counting its reclaims), a reservation the whole commitment.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.catalog import Catalog, CloudOffer, LeadTime
from clusterplan.cost import Costs
from clusterplan.cost.tco import HOURS_PER_YEAR
from clusterplan.perf.layout import Layout
from clusterplan.plan.training import Training
from clusterplan.schema import FROZEN

DAY_S = 86_400.0
# AWS EC2 Capacity Blocks for ML reserve 1 to 64 instances (512 GPUs) at a time (aws.amazon.com/ec2/capacityblocks,
# 2024); beyond that on-demand capacity is a sales conversation, not a click: the caveat printed past it.
ON_DEMAND_CAVEAT_GPUS = 512
# Book life of AI servers: Amazon 5 years (2024 10-K), Meta 5.5 (2025), Microsoft and Alphabet 6 (2022-23),
# Epoch AI 5 for hardware from 2023. Residual value = capex x (1 - age / life), straight line, floored at 0:
# ASSUMPTION that resale follows book value (no dated resale curve for GPU servers was found).
USEFUL_LIFE_YEARS = 5.0
OWN_STEPS = ("order", "delivery", "install", "burn-in")


@dataclass(**FROZEN)
class Window:
    """Days to the first GPU-hour: the central figure and its range."""

    days: float
    low_days: float
    high_days: float
    assumption: bool = False


NOW = Window(days=0.0, low_days=0.0, high_days=0.0)


@dataclass(**FROZEN)
class Candidate:
    """One (GPU, count, fabric, mode): its layout, calendar and cost, or the reason it is out."""

    gpu: str
    num_gpus: int
    fabric: str
    mode: str
    reason: str = ""                 # "" = modelled; else memory, design, no offer, horizon, no handover
    offer: str = ""                  # the offer rented ("" when owned)
    provider: str = ""
    layout: Layout | None = None
    mfu: float = 0.0
    tokens_per_s: float = 0.0
    goodput: float = 0.0
    train_days: float = 0.0          # effective: wall-clock with failures (and reclaims) counted
    capacity: Window = NOW           # days from the start to the first GPU-hour
    cost_usd: float = 0.0            # the default figure: rented cost, or the owned cost attributable to the job
    rented_usd: float = 0.0
    own_share_usd: float = 0.0       # TCO x the job's share of the delivered GPU-hours (what `train` prints)
    own_tco_usd: float = 0.0         # the whole TCO, when the cluster is bought for this job alone
    residual_usd: float = 0.0        # what the owned cluster is worth at the end of the horizon
    note: str = ""

    @property
    def done_days(self) -> float:
        """Days from the start to the trained model."""
        return self.capacity.days + self.train_days

    @property
    def done_high_days(self) -> float:
        return self.capacity.high_days + self.train_days


def lead(catalog: Catalog, entry_id: str, key: str) -> LeadTime:
    return catalog.get("leadtimes", entry_id, key=key)


def own_window(catalog: Catalog, gpu: str, num_gpus: int) -> Window:
    """Order, delivery, install and burn-in of ``num_gpus`` of ``gpu``: each a catalog entry, summed."""
    steps = [lead(catalog, f"order-{gpu}", "--gpu-types"),
             *(lead(catalog, step, "leadtimes") for step in OWN_STEPS[1:])]
    days = [step.for_gpus(num_gpus) for step in steps]
    return Window(days=sum(d[0] for d in days), low_days=sum(d[1] for d in days),
                  high_days=sum(d[2] for d in days), assumption=any(step.assumption for step in steps))


def reserved_window(catalog: Catalog) -> Window:
    step = lead(catalog, "reserved-provisioning", "leadtimes")
    return Window(days=step.days, low_days=step.low_days, high_days=step.high_days, assumption=step.assumption)


def residual_usd(capex_usd: float, age_years: float) -> float:
    """Straight-line book value of ``capex_usd`` after ``age_years`` of a ``USEFUL_LIFE_YEARS`` life."""
    return capex_usd * max(0.0, 1.0 - age_years / USEFUL_LIFE_YEARS)


def reserved_usd(offer: CloudOffer, num_gpus: int, run_s: float) -> float:
    """A reservation bills every hour of whole terms, used or not: enough terms to cover ``run_s``."""
    term_s = offer.term_years * HOURS_PER_YEAR * 3600
    return num_gpus * HOURS_PER_YEAR * offer.term_years * math.ceil(run_s / term_s) * offer.price_usd


@dataclass(**FROZEN)
class Base:
    """What every mode of one (GPU, count, fabric) shares: the plan of its owned cluster and its training."""

    gpu: str
    num_gpus: int
    fabric: str
    costs: Costs
    job: Training
    offers: tuple[CloudOffer, ...]    # the catalog's current offers for the GPU

    def candidate(self, mode: str, **fields) -> Candidate:
        best = self.job.best
        return Candidate(gpu=self.gpu, num_gpus=self.num_gpus, fabric=self.fabric, mode=mode,
                         layout=best.layout, mfu=float(best.mfu), tokens_per_s=float(best.tokens_per_s), **fields)

    @property
    def train_days(self) -> float:
        return self.job.effective_time_to_train_s / DAY_S

    def cheapest(self, pricing: tuple[str, ...]) -> CloudOffer | None:
        """The offer of one of ``pricing`` with the lowest effective cost to train."""
        costs = self.job.effective_costs_usd
        chosen = [offer for offer in self.offers if offer.pricing in pricing]
        return min(chosen, key=lambda offer: costs[offer.id], default=None)


def own(base: Base, window: Window) -> Candidate:
    """Bought: the lead time, then the run; the job's share of the TCO is the default cost."""
    costs, share = base.costs, base.job.effective_costs_usd["own"]
    reason = "horizon" if base.train_days > 365 * costs.years else ""
    return base.candidate("own", reason=reason, goodput=base.job.goodput, train_days=base.train_days,
                          capacity=window, cost_usd=share, own_share_usd=share, own_tco_usd=costs.tco_usd,
                          residual_usd=residual_usd(costs.capex_usd, costs.years))


def reserved(base: Base, window: Window) -> Candidate:
    """The cheapest whole commitment (1 or 3 years) that covers the run."""
    run_s = base.job.effective_time_to_train_s
    offers = [offer for offer in base.offers if offer.term_years]
    if not offers:
        return Candidate(gpu=base.gpu, num_gpus=base.num_gpus, fabric=base.fabric, mode="reserved", reason="no offer")
    offer = min(offers, key=lambda o: reserved_usd(o, base.num_gpus, run_s))
    usd = reserved_usd(offer, base.num_gpus, run_s)
    return base.candidate("reserved", offer=offer.id, provider=offer.provider, goodput=base.job.goodput, train_days=base.train_days,
                          capacity=window, cost_usd=usd, rented_usd=usd,
                          note=f"{offer.term_years}-year term x {math.ceil(run_s / (offer.term_years * HOURS_PER_YEAR * 3600))}")


def pay_per_use(base: Base, mode: str) -> Candidate:
    """On-demand or spot: now, billed by the wall-clock GPU-hours (spot's goodput counts its reclaims)."""
    offer = base.cheapest((mode,))
    if offer is None:
        return Candidate(gpu=base.gpu, num_gpus=base.num_gpus, fabric=base.fabric, mode=mode, reason="no offer")
    goodput = base.job.offer_goodputs.get(offer.id, base.job.goodput)
    usd = base.job.effective_costs_usd[offer.id]
    note = (f"on-demand at {base.num_gpus:,} GPUs is not assured (AWS Capacity Blocks stop at "
            f"{ON_DEMAND_CAVEAT_GPUS} GPUs)" if base.num_gpus > ON_DEMAND_CAVEAT_GPUS else "")
    return base.candidate(mode, offer=offer.id, provider=offer.provider, goodput=goodput, train_days=base.train_days * base.job.goodput / goodput,
                          cost_usd=usd, rented_usd=usd, note=note)


def hybrid(base: Base, window: Window) -> Candidate:
    """Start now on the cheapest on-demand offer, move to the owned cluster when it is accepted."""
    offer = base.cheapest(("on-demand",))
    if offer is None:
        return Candidate(gpu=base.gpu, num_gpus=base.num_gpus, fabric=base.fabric, mode="hybrid", reason="no offer")
    rented_share = window.days / base.train_days
    if rented_share >= 1:
        return Candidate(gpu=base.gpu, num_gpus=base.num_gpus, fabric=base.fabric, mode="hybrid",
                         reason="no handover")
    rented = base.job.effective_costs_usd[offer.id] * rented_share
    owned = base.job.effective_costs_usd["own"] * (1 - rented_share)
    costs = base.costs
    return base.candidate("hybrid", offer=offer.id, provider=offer.provider, goodput=base.job.goodput, train_days=base.train_days,
                          cost_usd=rented + owned, rented_usd=rented, own_share_usd=owned, own_tco_usd=costs.tco_usd,
                          residual_usd=residual_usd(costs.capex_usd, costs.years),
                          note=f"{window.days:,.0f} days on {offer.id}, then owned")


def candidates(base: Base, modes: tuple[str, ...], catalog: Catalog) -> list[Candidate]:
    """``base`` in each of ``modes``."""
    owned = own_window(catalog, base.gpu, base.num_gpus)
    build = {"own": lambda: own(base, owned), "reserved": lambda: reserved(base, reserved_window(catalog)),
             "on-demand": lambda: pay_per_use(base, "on-demand"), "spot": lambda: pay_per_use(base, "spot"),
             "hybrid": lambda: hybrid(base, owned)}
    return [build[mode]() for mode in modes]
