"""The cloud lines of a document, derived once (docs/cloud.md): which offer may be the headline "cheapest
cloud", the spot offer on its own line, and each reservation's whole terms with their idle remainder.

The rules themselves live in cost/cloud.py (``rented``, ``supplies``, ``headline``); this module only picks
and lays out what they say, so train, report, size, the XLSX and the live page print one answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterplan.catalog import CloudOffer
from clusterplan.cost.cloud import Rented, headline, supplies


def headline_offer(costs_usd: Mapping[str, float], offers: Mapping[str, CloudOffer], *, num_gpus: int,
                   always_on: bool) -> str | None:
    """The cheapest of ``costs_usd`` that may be a headline: it supplies ``num_gpus`` at once and is not spot
    under a synchronous multi-node job (``always_on``: a 24/7 cluster, where spot never is)."""
    allowed = {key: usd for key, usd in costs_usd.items()
               if key in offers and headline(offers[key], num_gpus=num_gpus, always_on=always_on)}
    return min(allowed, key=allowed.get) if allowed else None


def capacity_short(offers: Mapping[str, CloudOffer], num_gpus: int) -> dict[str, str]:
    """Each offer that cannot supply ``num_gpus`` at once -> why ("capacity: 512 GPUs at once")."""
    return {key: f"capacity: {offer.max_gpus:,} GPUs at once" for key, offer in offers.items()
            if not supplies(offer, num_gpus)}


def spot_line(rentals: Mapping[str, Rented], raw_usd: Mapping[str, float], goodputs: Mapping[str, float],
              *, num_gpus: int, always_on: bool) -> dict[str, Any] | None:
    """The cheapest spot offer that supplies ``num_gpus`` at once, by effective cost, on its own line: its
    reclaim rate, the goodput it leaves (the reliability model's restarts and lost work since the last
    checkpoint, reclaims counted) and its raw and effective costs; ``headline`` false where it may not be the
    headline. An offer short of capacity is listed with those instead (``capacity_short``), as size excludes it."""
    spot = [r for r in rentals.values()
            if r.offer.pricing == "spot" and r.offer.id in goodputs and supplies(r.offer, num_gpus)]
    if not spot:
        return None
    best = min(spot, key=lambda r: r.total_usd)
    offer = best.offer
    return {"offer": offer.id, "provider": offer.provider,
            "reclaim_per_1000_instance_days": offer.reclaim_per_1000_instance_days,
            "reclaim_source": offer.reclaim_source, "goodput": goodputs[offer.id],
            "cost_to_train_usd": raw_usd.get(offer.id), "effective_cost_to_train_usd": best.total_usd,
            "max_gpus": offer.max_gpus,
            "headline": headline(offer, num_gpus=num_gpus, always_on=always_on)}


def terms_table(rentals: Mapping[str, Rented]) -> dict[str, dict[str, Any]]:
    """Each reservation rented for the run: its term, the whole terms billed, the idle remainder."""
    return {key: {"term_years": r.offer.term_years, "terms": r.terms, "billed_gpu_hours": r.billed_gpu_hours,
                  "used_gpu_hours": r.used_gpu_hours, "idle_gpu_hours": r.idle_gpu_hours, "idle_usd": r.idle_usd,
                  "resale_fraction": r.resale_fraction, "resale_usd": r.resale_usd, "total_usd": r.total_usd}
            for key, r in rentals.items() if r.terms}
