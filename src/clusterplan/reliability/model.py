"""What failures, checkpoints and restarts take from a training job: the one entry point.

``goodput(spec, design, model, num_gpus, tokens_per_s)`` joins the failure
model (failures.py), the checkpoint and interval model (checkpoint.py) and the
storage sizing (storage.py) into one frozen ``Reliability``. The training model
divides its raw time-to-train by ``Reliability.goodput``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.catalog import Catalog, load_catalog
from clusterplan.design import Design
from clusterplan.errors import ConfigError
from clusterplan.perf import training
from clusterplan.perf.model import Transformer
from clusterplan.perf.training import job_gpus
from clusterplan.reliability.checkpoint import Checkpoint, Outcome, outcome, transfer_s
from clusterplan.reliability.failures import (DAY_S, Exposure, Interruptions, Spares, exposure, failure_rates,
                                              interruptions, spares)
from clusterplan.reliability.storage import StorageNeeds, read_need, size_burst_buffer
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec, Workload

DEFAULT_MODEL = "llama2-13b"   # when the scenario's [workload] names no model


@dataclass(**FROZEN)
class Reliability:
    """A training job's interruptions, checkpoints, restarts, goodput and storage needs."""

    model: str
    params: int
    job: Exposure
    days: float
    interruptions: Interruptions
    spares: Spares
    checkpoint: Checkpoint
    outcome: Outcome
    storage: StorageNeeds

    @property
    def interruptions_per_day(self) -> float:
        return self.interruptions.per_day

    @property
    def expected_interruptions(self) -> float:
        return self.interruptions.per_day * self.days

    @property
    def mtti_s(self) -> float:
        return self.interruptions.mtti_s

    @property
    def goodput(self) -> float:
        return self.outcome.goodput

    @property
    def checkpoint_bytes(self) -> float:
        return self.checkpoint.size_bytes

    @property
    def checkpoint_write_s(self) -> float:
        return self.checkpoint.write_s

    @property
    def interval_s(self) -> float:
        return self.outcome.interval.used_s

    def waste_by_cause(self) -> dict[str, float]:
        """Wall-time fractions lost: to checkpointing, and to each failure cause (its share of the
        interruptions times the lost work and restarts they bring)."""
        waste = self.outcome.waste
        failures = waste.lost_work + waste.restart
        return {"checkpoint": waste.checkpoint,
                **{cause: failures * share for cause, share in self.interruptions.share().items()}}


def workload_model(workload: Workload) -> Transformer:
    """The scenario's model, or DEFAULT_MODEL when the ``[workload]`` names none."""
    return training.workload_model(workload, default=DEFAULT_MODEL)


def goodput(spec: Spec, design: Design, model: Transformer, num_gpus: int, tokens_per_s: float | None = None,
            *, catalog: Catalog | None = None, days: float | None = None) -> Reliability:
    """Interruptions, checkpoints, goodput and storage of training ``model`` on ``num_gpus`` of ``design``.

    ``tokens_per_s`` (from the training model) sets the data-loading bandwidth; without it the scenario's
    ``storage.read_Bps_per_gpu`` does. ``days`` defaults to ``reliability.days``.
    """
    settings = spec.reliability
    if not 1 <= num_gpus <= design.num_gpus or num_gpus % design.gpus_per_node:
        raise ConfigError(f"must be whole nodes of {design.gpus_per_node} within the cluster's {design.num_gpus} "
                          f"GPUs, got {num_gpus}", key="workload.gpus")
    if design.storage_units == 0:
        raise ConfigError("the cluster has no storage to checkpoint to", key="storage.usable_tb")
    rates = failure_rates(catalog or load_catalog(), settings.failures, settings.failure_rates)
    job = exposure(num_gpus=num_gpus, gpus_per_node=design.gpus_per_node, nics_per_node=design.nics_per_node,
                   cluster_nodes=design.num_nodes, cluster_switches=design.topology.num_switches)
    found = interruptions(rates, job)
    size = model.params * settings.checkpoint_bytes_per_param
    parts = design.parts
    burst = design.burst_buffer_units > 0
    tier = parts.burst_buffer if burst else parts.storage
    tier_write = design.burst_buffer_write_Bps if burst else design.storage_write_Bps
    tier_read = design.burst_buffer_read_Bps if burst else design.storage_read_Bps
    _, write_Bps = transfer_s(size, tier_Bps=tier_write, clients=job.num_nodes, client_Bps=tier.client_Bps)
    reload_s, _ = transfer_s(size, tier_Bps=tier_read, clients=job.num_nodes, client_Bps=tier.client_Bps)
    copy_s = size / num_gpus / parts.gpu.pcie_bw_Bps

    def checkpoint_at(rate_Bps: float) -> Checkpoint:
        return Checkpoint(size_bytes=size, asynchronous=settings.async_checkpoint,
                          metadata_s=settings.checkpoint_metadata_s, copy_s=copy_s,
                          write_s=size / rate_Bps, write_Bps=rate_Bps, reload_s=reload_s)

    def run(rate_Bps: float) -> Outcome:
        return outcome(checkpoint_at(rate_Bps), mtti_s=found.mtti_s,
                       interval_s=settings.checkpoint_interval_min * 60, detect_s=settings.detect_min * 60,
                       overhead_s=settings.restart_overhead_min * 60)

    checkpoint, result = checkpoint_at(write_Bps), run(write_Bps)
    needs = _storage(spec, design, job, size, result, run, tokens_per_s)
    return Reliability(model=model.name, params=model.params, job=job, days=days or settings.days,
                       interruptions=found,
                       spares=spares(found, repair_s=settings.repair_hours * 3600,
                                     confidence=settings.spare_confidence),
                       checkpoint=checkpoint, outcome=result, storage=needs)


def _storage(spec: Spec, design: Design, job: Exposure, size: float, result: Outcome, run,
             tokens_per_s: float | None) -> StorageNeeds:
    settings, parts = spec.reliability, design.parts
    ideal = run(math.inf).goodput
    cost = ideal - result.goodput
    main_write = min(design.storage_write_Bps, job.num_nodes * parts.storage.client_Bps)
    main_read = min(design.storage_read_Bps, job.num_nodes * parts.storage.client_Bps)
    read_Bps, basis = read_need(tokens_per_s=tokens_per_s, bytes_per_token=settings.bytes_per_token,
                                read_Bps_per_gpu=spec.storage.read_Bps_per_gpu, num_gpus=job.num_gpus)
    burst = design.burst_buffer_units > 0
    recommended, limited = None, False
    if not burst and cost > settings.target_overhead:
        recommended = size_burst_buffer(lambda rate: run(rate).goodput, ideal_goodput=ideal,
                                        target=settings.target_overhead, tier=parts.burst_buffer,
                                        num_nodes=job.num_nodes, checkpoint_bytes=size)
        limited = recommended is None
    dataset_tb = settings.dataset_tb or spec.workload.tokens * settings.bytes_per_token / 1e12
    return StorageNeeds(
        dataset_tb=dataset_tb, checkpoints_tb=settings.checkpoints_kept * size / 1e12,
        usable_tb=design.storage_tb, read_Bps=read_Bps, read_basis=basis, read_available_Bps=main_read,
        checkpoint_tier=f"{parts.burst_buffer.id} (burst buffer)" if burst else parts.storage.id,
        ideal_goodput=ideal, storage_cost=cost, target_overhead=settings.target_overhead,
        burst_buffer_tb=design.burst_buffer_tb, drain_Bps=size / result.interval.used_s if burst else 0.0,
        main_write_Bps=main_write, recommended=recommended, client_limited=limited)


def by_job_size(spec: Spec, design: Design, model: Transformer, *, catalog: Catalog | None = None
                ) -> tuple[Reliability, ...]:
    """The job at one node, doubling up to the whole cluster (and the whole cluster itself)."""
    sizes, gpus = [], design.gpus_per_node
    while gpus < design.num_gpus:
        sizes.append(gpus)
        gpus *= 2
    sizes.append(design.num_gpus)
    catalog = catalog or load_catalog()
    return tuple(goodput(spec, design, model, size, catalog=catalog) for size in sizes)


