"""The cloud lines of a training document, laid out: the spot offer on its own line and each reservation's
whole terms with their idle remainder (docs/cloud.md).

Which offer is the headline, which spot offer supplies the GPUs and which are short of capacity is chosen once
in plan/ (``Training.cloud``, cost/cloud.py ``cloud_choice``); this module only serialises what was chosen, so
train, report, size, the XLSX and the live page print one answer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterplan.cost.cloud import Rented
from clusterplan.plan.training import Training


def spot_line(job: Training) -> dict[str, Any] | None:
    """The chosen spot offer (``job.cloud.spot``) on its own line: its reclaim rate, the goodput it leaves (the
    reliability model's restarts and lost work since the last checkpoint, reclaims counted) and its raw and
    effective costs; ``headline`` false where it may not be the headline. None where no spot offer supplies the
    job's GPUs (one short of capacity is listed in ``job.cloud.short`` instead, as size excludes it)."""
    if job.cloud.spot is None:
        return None
    rent = job.rentals[job.cloud.spot]
    offer = rent.offer
    return {"offer": offer.id, "provider": offer.provider,
            "reclaim_per_1000_instance_days": offer.reclaim_per_1000_instance_days,
            "reclaim_source": offer.reclaim_source, "goodput": job.offer_goodputs[offer.id],
            "cost_to_train_usd": job.costs_usd.get(offer.id), "effective_cost_to_train_usd": rent.total_usd,
            "max_gpus": offer.max_gpus, "headline": job.cloud.spot_headline}


def terms_table(rentals: Mapping[str, Rented]) -> dict[str, dict[str, Any]]:
    """Each reservation rented for the run: its term, the whole terms billed, the idle remainder."""
    return {key: {"term_years": r.offer.term_years, "terms": r.terms, "billed_gpu_hours": r.billed_gpu_hours,
                  "used_gpu_hours": r.used_gpu_hours, "idle_gpu_hours": r.idle_gpu_hours,
                  "idle_days": r.idle_days, "idle_usd": r.idle_usd,
                  "resale_fraction": r.resale_fraction, "resale_usd": r.resale_usd, "total_usd": r.total_usd}
            for key, r in rentals.items() if r.terms}
