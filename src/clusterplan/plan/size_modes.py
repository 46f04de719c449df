"""One sized cluster, five ways to get it: time to capacity and cost per procurement mode (docs/size.md).

Every figure here comes from the plan of the candidate's own scenario (``plan.core.own`` and
``plan.training.training``, the functions ``plan`` and ``train`` print from). The cost is the money the buyer
commits: an owned cluster's capex and setup plus its opex while held for the run (the job's share of the TCO
beside it), a rental what ``train`` prints for the offer (cost/cloud.py ``rented``: a reservation its whole
terms, a spot offer over its own goodput). No offer supplies more than its ``max_gpus`` at once: beyond it
the candidate is out ("capacity"); a reservation starts after the offer's ``capacity_days``.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.catalog import Catalog, CloudOffer, LeadTime
from clusterplan.cost import Costs
from clusterplan.cost.cloud import cheapest, interruptible_excluded
from clusterplan.perf.layout import Layout
from clusterplan.plan.training import Training
from clusterplan.schema import FROZEN
from clusterplan.units import plural

DAY_S = 86_400.0
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
    reason: str = ""                 # "" = modelled; else memory, design, no offer, capacity, horizon, no handover
    offer: str = ""                  # the offer rented ("" when owned)
    provider: str = ""
    layout: Layout | None = None
    mfu: float = 0.0
    tokens_per_s: float = 0.0
    goodput: float = 0.0
    train_days: float = 0.0          # effective: wall-clock with failures (and reclaims) counted
    capacity: Window = NOW           # days from the start to the first GPU-hour
    cost_usd: float = 0.0            # the money committed: rented cost, or capex + setup + opex while held
    rented_usd: float = 0.0
    committed_usd: float = 0.0       # owned: capex + setup + opex over the days held for the run
    own_share_usd: float = 0.0       # TCO x the job's share of the delivered GPU-hours (what `train` prints)
    own_tco_usd: float = 0.0         # the whole TCO, when the cluster is bought for this job alone
    residual_usd: float = 0.0        # what the owned cluster is worth at the end of the horizon
    note: str = ""
    whole_run_days: float = 0.0      # the whole run by cause (plan.training, docs/reliability.md#whole-run); 0 = none
    whole_run_band_days: tuple[float, float] = (0.0, 0.0)   # ... within the "whole run" band of published runs
    interruptible: bool = False      # spot under a synchronous multi-node job: never a headline

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


def reserved_window(catalog: Catalog, offer: CloudOffer) -> Window:
    """Signing to the first GPU-hour of a reservation: the provisioning lead time, or the offer's own time to
    capacity where that is longer."""
    step = lead(catalog, "reserved-provisioning", "leadtimes")
    days = offer.capacity_days
    return Window(days=max(step.days, days), low_days=max(step.low_days, days), high_days=max(step.high_days, days),
                  assumption=step.assumption or offer.capacity_source.startswith("ASSUMPTION"))


def offer_window(offer: CloudOffer) -> Window:
    """A pay-per-use offer's time to capacity: at once unless the offer says otherwise."""
    days = offer.capacity_days
    return Window(days=days, low_days=days, high_days=days,
                  assumption=bool(days) and offer.capacity_source.startswith("ASSUMPTION"))


def committed_usd(costs: Costs, held_days: float) -> float:
    """What buying the cluster commits: capex and setup up front, and opex over the days it is held."""
    return costs.upfront_usd + costs.opex_total_usd_per_year * held_days / 365.25


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
        run, band = self.job.whole_run_time_to_train_s, self.job.whole_run_band
        whole = ({"whole_run_days": run / DAY_S,
                  "whole_run_band_days": tuple(seconds / DAY_S for seconds in band.time_range(run))}
                 if run is not None and band is not None else {})
        return Candidate(gpu=self.gpu, num_gpus=self.num_gpus, fabric=self.fabric, mode=mode,
                         layout=best.layout, mfu=float(best.mfu), tokens_per_s=float(best.tokens_per_s),
                         **whole, **fields)

    @property
    def train_days(self) -> float:
        return self.job.effective_time_to_train_s / DAY_S

    def cheapest(self, pricing: tuple[str, ...]) -> CloudOffer | str:
        """The offer of one of ``pricing`` with the lowest effective cost to train among those that supply the
        GPUs at once (cost/cloud.py ``cheapest``, the rule ``train``'s cloud lines are chosen by); else why none:
        "no offer" or "capacity"."""
        chosen = [offer for offer in self.offers if offer.pricing in pricing or (pricing == ("reserved",)
                                                                                 and offer.term_years)]
        found = cheapest(self.job.effective_costs_usd, chosen, self.num_gpus)
        if found is None:
            return "capacity" if chosen else "no offer"
        return found

    def out(self, mode: str, reason: str) -> Candidate:
        return Candidate(gpu=self.gpu, num_gpus=self.num_gpus, fabric=self.fabric, mode=mode, reason=reason)


def own(base: Base, window: Window) -> Candidate:
    """Bought: the lead time, then the run; the money committed (capex, setup, opex over the run) is the
    cost, the job's share of the TCO beside it."""
    costs, share = base.costs, base.job.effective_costs_usd["own"]
    reason = "horizon" if base.train_days > 365 * costs.years else ""
    committed = committed_usd(costs, base.train_days)
    return base.candidate("own", reason=reason, goodput=base.job.goodput, train_days=base.train_days,
                          capacity=window, cost_usd=committed, committed_usd=committed, own_share_usd=share,
                          own_tco_usd=costs.tco_usd, residual_usd=costs.residual_usd)


def reserved(base: Base, catalog: Catalog) -> Candidate:
    """The cheapest whole commitment (cost/cloud.py ``rented``, as ``train`` prints it) among the offers that
    supply the GPUs, starting after its time to capacity."""
    offer = base.cheapest(("reserved",))
    if isinstance(offer, str):
        return base.out("reserved", offer)
    rent = base.job.rentals[offer.id]
    return base.candidate("reserved", offer=offer.id, provider=offer.provider, goodput=base.job.goodput,
                          train_days=base.train_days, capacity=reserved_window(catalog, offer),
                          cost_usd=rent.total_usd, rented_usd=rent.total_usd,
                          note=f"{rent.terms} whole {offer.term_years}-year {plural(rent.terms, 'terms')}, "
                               f"{rent.idle_days:,.0f} days idle")


def pay_per_use(base: Base, mode: str) -> Candidate:
    """On-demand or spot within what the offer supplies at once, billed by the wall-clock GPU-hours (spot's
    goodput counts its reclaims; spot under a multi-node job is marked interruptible: never a headline)."""
    offer = base.cheapest((mode,))
    if isinstance(offer, str):
        return base.out(mode, offer)
    goodput = base.job.offer_goodputs.get(offer.id, base.job.goodput)
    usd = base.job.effective_costs_usd[offer.id]
    interruptible = interruptible_excluded(offer, num_gpus=base.num_gpus, always_on=False)
    note = (f"interruptible: {offer.reclaim_per_1000_instance_days:.3g} reclaims per 1000 instance-days"
            if offer.pricing == "spot" else "")
    return base.candidate(mode, offer=offer.id, provider=offer.provider, goodput=goodput,
                          train_days=base.train_days * base.job.goodput / goodput, capacity=offer_window(offer),
                          cost_usd=usd, rented_usd=usd, note=note, interruptible=interruptible)


def hybrid(base: Base, window: Window) -> Candidate:
    """Start now on the cheapest on-demand offer that supplies the GPUs, move to the owned cluster when it is
    accepted; the money committed is the rent and the owned cluster's for its part of the run."""
    offer = base.cheapest(("on-demand",))
    if isinstance(offer, str):
        return base.out("hybrid", offer)
    rented_share = window.days / base.train_days
    if rented_share >= 1:
        return base.out("hybrid", "no handover")
    rented = base.job.effective_costs_usd[offer.id] * rented_share
    owned = base.job.effective_costs_usd["own"] * (1 - rented_share)
    costs = base.costs
    committed = committed_usd(costs, base.train_days - window.days)
    return base.candidate("hybrid", offer=offer.id, provider=offer.provider, goodput=base.job.goodput,
                          train_days=base.train_days, cost_usd=rented + committed, rented_usd=rented,
                          committed_usd=committed, own_share_usd=owned, own_tco_usd=costs.tco_usd,
                          residual_usd=costs.residual_usd,
                          note=f"{window.days:,.0f} days on {offer.id}, then owned")


def candidates(base: Base, modes: tuple[str, ...], catalog: Catalog) -> list[Candidate]:
    """``base`` in each of ``modes``."""
    owned = own_window(catalog, base.gpu, base.num_gpus)
    build = {"own": lambda: own(base, owned), "reserved": lambda: reserved(base, catalog),
             "on-demand": lambda: pay_per_use(base, "on-demand"), "spot": lambda: pay_per_use(base, "spot"),
             "hybrid": lambda: hybrid(base, owned)}
    return [build[mode]() for mode in modes]
