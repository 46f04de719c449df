"""Spec -> Plan: design, cost, cloud comparison, the workload's training and the checks joined.

The one result ``plan``, ``train`` and ``compare`` print, and the base of the report.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from clusterplan.catalog import Catalog, CloudOffer
from clusterplan.checks import design_checks
from clusterplan.cost import CloudCost, Costs, Hybrid, cloud_cost, costs, hybrid
from clusterplan.cost.cloud import NO_CHOICE, CloudChoice, breakeven_month, cloud_choice
from clusterplan.design import Design, design
from clusterplan.errors import ConfigError
from clusterplan.plan.ownership import ownership, stale_prices
from clusterplan.plan.scenario import priced, resolved
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec

if TYPE_CHECKING:   # the training model (perf/'s search) is imported for a [workload] only: `plan` starts faster
    from clusterplan.plan.training import Training


@dataclass(**FROZEN)
class Rental:
    """One cloud offer against owning: its cost and the month renting overtakes owning."""

    cost: CloudCost
    breakeven_month: int | None


@dataclass(**FROZEN)
class Plan:
    spec: Spec
    design: Design
    costs: Costs
    rentals: tuple[Rental, ...]
    hybrid: Hybrid | None
    warnings: tuple[str, ...]
    training: Training | None = None   # when the scenario has a [workload]
    cloud: CloudChoice = NO_CHOICE      # the headline offer of a 24/7 cluster (never spot) and those short of capacity


def own(spec: Spec, catalog: Catalog) -> tuple[Design, Costs]:
    """Design and cost of owning the cluster ``spec`` describes."""
    built = design(spec, catalog)
    facility, staff, finance = spec.facility, spec.staff, spec.finance
    return built, costs(
        built, ownership(spec, catalog, built), electricity_usd_per_kwh=facility.electricity_usd_per_kwh,
        colocation_usd_per_kw_month=facility.colocation_usd_per_kw_month, ops_engineers=built.staff.ops_engineers,
        setup_engineers=built.staff.setup_engineers, setup_months=staff.setup_months,
        loaded_cost_usd_per_year=staff.loaded_cost_usd_per_year, years=finance.years,
        discount_rate=finance.discount_rate, utilization=finance.utilization, sales_tax=finance.sales_tax)


def plan(spec: Spec, catalog: Catalog | None = None, *, top: int = 10, today: dt.date | None = None) -> Plan:
    """Everything clusterplan knows about the scenario; ``top``: the training layouts kept, best first;
    ``today``: warn about prices observed more than 12 months before it (None: no such check)."""
    catalog = priced(spec, catalog)
    return planned(resolved(spec, catalog), catalog, top=top, today=today)


def used_prices(catalog: Catalog, owned: Costs, rentals: list[Rental]) -> list[tuple[str, str]]:
    """(id, observation date) of every catalog price the plan uses: BoM, one-off, licences, offers; an offer
    whose price has ended (``ended``, kept as history) is not aged."""
    ids = [line.catalog_id for line in (*owned.bom, *owned.one_off) if line.catalog_id]
    ids += [charge.licence for charge in owned.ownership.licences]
    ids += [r.cost.offer.id for r in rentals if not r.cost.offer.ended]
    return [(entry_id, catalog.find(entry_id)[1].date) for entry_id in dict.fromkeys(ids)]


def planned(spec: Spec, catalog: Catalog, *, top: int = 10, today: dt.date | None = None) -> Plan:
    """The plan of a resolved ``spec`` on a priced ``catalog`` (``plan`` resolves and prices first)."""
    built, owned = own(spec, catalog)
    finance = spec.finance
    offers, burst_offer, note = compared_offers(spec, catalog)
    rentals = []
    for offer in offers:
        rent = cloud_cost(offer, num_gpus=built.num_gpus, utilization=finance.utilization, years=finance.years,
                          resale_fraction=spec.cloud.resale_fraction)
        rentals.append(Rental(cost=rent, breakeven_month=breakeven_month(owned, rent)))
    burst = _hybrid(spec, catalog, burst_offer, built) if burst_offer else None
    job, reliability, predicted = None, None, True
    if spec.workload.defined:
        from clusterplan.plan.training import checked_reliability, training, training_warnings

        job = training(spec, catalog, built, owned.cost_per_gpu_hour_usd, [r.cost.offer for r in rentals], top=top)
        reliability, predicted = checked_reliability(spec, catalog, built, job)
        job = replace(job, warnings=training_warnings(job, years=finance.years, tco_usd=owned.tco_usd))
    warnings = design_checks(built, owned, [r.cost for r in rentals], rack_power_kw=spec.facility.rack_power_kw,
                             oversubscription=spec.network.oversubscription,
                             read_Bps_per_gpu=spec.storage.read_Bps_per_gpu, utilization=finance.utilization,
                             years=finance.years, workload=job is not None, reliability=reliability,
                             predicted_reading=predicted)
    warnings = (note, *warnings) if note else warnings
    stale = stale_prices(used_prices(catalog, owned, rentals), today) if today is not None else ""
    warnings = (*warnings, stale) if stale else warnings
    if job is not None and job.band.warning:
        warnings = (*warnings, job.band.warning)
    if job is not None:
        warnings = (*warnings, *job.warnings)
    chosen = cloud_choice({r.cost.offer.id: r.cost.total_usd for r in rentals}, [r.cost.offer for r in rentals],
                          num_gpus=built.num_gpus, always_on=True, spot=False)
    return Plan(spec=spec, design=built, costs=owned, rentals=tuple(rentals), hybrid=burst, warnings=warnings,
                training=job, cloud=chosen)


def compared_offers(spec: Spec, catalog: Catalog) -> tuple[list[CloudOffer], CloudOffer | None, str]:
    """The offers renting is compared against, the burst offer of the hybrid, and a note when they changed.

    The scenario's ``cloud.offers`` and ``cloud.burst_offer`` as written, unless none of the offers rents the
    cluster's GPU (the reference's H100 list under ``--set cluster.gpu=b200``): then the catalog's offers for
    that GPU, and its cheapest on-demand offer to burst to; where the catalog has none, no comparison.
    """
    offers = [catalog.get("cloud", offer_id, key=f"cloud.offers[{index}]")
              for index, offer_id in enumerate(spec.cloud.offers)]
    burst = catalog.get("cloud", spec.cloud.burst_offer, key="cloud.burst_offer") if spec.cloud.burst_offer else None
    gpu = spec.cluster.gpu
    if not offers or any(offer.gpu == gpu for offer in offers):
        return offers, burst, ""
    others = ", ".join(sorted({offer.gpu for offer in offers}))
    own_gpu = gpu_offers(catalog, gpu)
    if not own_gpu:
        return [], None, f"cloud: the catalog has no {gpu} offer; renting is not compared (cloud.offers rent {others})"
    on_demand = [offer for offer in own_gpu if offer.pricing == "on-demand"]
    burst = min(on_demand, key=lambda offer: offer.price_usd) if burst and on_demand else None
    return own_gpu, burst, (f"cloud: cloud.offers rent {others}; compared against the catalog's {len(own_gpu)} "
                            f"{gpu} offers instead")


def gpu_offers(catalog: Catalog, gpu: str) -> list[CloudOffer]:
    """The catalog's current offers for ``gpu``, in catalog order; prices kept as history (``ended``,
    catalog/cloud.toml) are left out."""
    return [offer for offer in catalog.families["cloud"].values() if offer.gpu == gpu and not offer.ended]


def _hybrid(spec: Spec, catalog: Catalog, offer: CloudOffer, built: Design) -> Hybrid:
    if offer.term_years:
        raise ConfigError(f"{offer.id} is {offer.pricing}; bursting needs an on-demand or spot offer",
                          key="cloud.burst_offer")
    return hybrid(offer, lambda nodes: own(spec.with_nodes(nodes), catalog)[1].tco_usd,
                  num_nodes=spec.cluster.num_nodes, gpus_per_node=spec.cluster.gpus_per_node,
                  utilization=spec.finance.utilization, years=spec.finance.years,
                  unit_nodes=built.parts.server.servers_per_domain)
