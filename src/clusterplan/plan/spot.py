"""A spot offer runs the job under one more cause of interruptions: its instances are reclaimed. The offer's
reclaim rate (catalog: ``reclaim_per_1000_instance_days`` with its ``reclaim_source``) joins the scenario's
failure causes, and the job's goodput on that offer is found by the same reliability model (docs/size.md)."""

from __future__ import annotations

from collections.abc import Sequence

from clusterplan.catalog import Catalog, CloudOffer, FailureRate
from clusterplan.design import Design
from clusterplan.perf.model import Transformer
from clusterplan.plan.reliability_inputs import reliability_settings, scenario_rates
from clusterplan.reliability import goodput
from clusterplan.spec import Spec


def reclaim_cause(offer: CloudOffer) -> FailureRate:
    """The reclaiming of ``offer``'s instances as a failure cause: per node for multi-GPU instances, per GPU
    for offers the provider rents one GPU at a time; no repair (a reclaimed instance is replaced at once)."""
    return FailureRate(id=f"{offer.id}-reclaim", name=f"{offer.id} reclaimed", source=offer.reclaim_source,
                       date=offer.date, scope="gpu" if offer.gpus_per_instance == 1 else "node",
                       per_1000_unit_days=offer.reclaim_per_1000_instance_days, repair=False)


def spot_goodputs(spec: Spec, catalog: Catalog, built: Design, model: Transformer, num_gpus: int,
                  offers: Sequence[CloudOffer], *, tokens_per_s: float, useful_s: float | None) -> dict[str, float]:
    """Each spot offer of ``offers`` -> the job's goodput on it (the scenario's failures and its reclaims)."""
    settings, rates = reliability_settings(spec), scenario_rates(spec, catalog)
    return {offer.id: goodput(settings, built, (*rates, reclaim_cause(offer)), model=model.name,
                              params=model.params, num_gpus=num_gpus, tokens=spec.workload.tokens,
                              tokens_per_s=tokens_per_s, useful_s=useful_s).goodput
            for offer in offers if offer.pricing == "spot"}
