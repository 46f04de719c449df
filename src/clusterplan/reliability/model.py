"""What failures, checkpoints and restarts take from a training job: the one entry point.

``goodput(settings, design, rates, model=..., params=..., num_gpus=...)`` joins the
failure model (failures.py), the checkpoint and interval model (checkpoint.py) and
the storage sizing (storage.py) into one frozen ``Reliability``. The caller (the
plan) builds ``Settings`` from the scenario and resolves the failure ``rates`` from
its catalog; this package reads neither the scenario nor the catalog itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clusterplan.catalog import FailureRate
from clusterplan.design import Design
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.reliability.checkpoint import Checkpoint, Outcome, outcome, transfer_s
from clusterplan.reliability.failures import DAY_S, Exposure, Interruptions, Spares, job_failures
from clusterplan.reliability.storage import StorageNeeds, read_need, size_burst_buffer
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class Settings:
    """The scenario's reliability choices the model reads, in SI units (docs/reliability.md)."""

    days: float                          # the run's wall-clock length when the job gives no time to train
    interval_s: float                    # checkpoint interval; 0 = Daly's optimum
    async_checkpoint: bool               # only the GPU-to-host copy (and the metadata) blocks training
    checkpoint_metadata_s: float         # blocking per checkpoint whatever its size
    checkpoint_bytes_per_param: float
    checkpoints_kept: int
    dataset_tb: float                    # 0 = the job's tokens x bytes_per_token
    bytes_per_token: float
    read_Bps_per_gpu: float              # data loading when no tokens/s is predicted
    detect_s: float                      # failure to detection
    restart_overhead_s: float            # detection to training again, less the checkpoint reload
    repair_s: float                      # a failed node out of service
    spare_confidence: float              # probability that the spares cover the nodes in repair
    target_overhead: float               # most goodput the checkpoint tier's finite write bandwidth may cost


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


def wall_clock_s(useful_s: float, goodput: float) -> float:
    """The wall-clock time of a run that needs ``useful_s`` of failure-free work: useful / goodput. At goodput 0
    (interruptions come faster than a restart: failure rates near their limit) the run never ends."""
    if not goodput > 0:
        raise InfeasiblePlan(NEVER_ENDS)
    return useful_s / goodput


NEVER_ENDS = ("the job never finishes: failures and restarts take all of its time (goodput 0%; "
              "reliability.failure_rates, reliability.restart_overhead_min)")


def goodput(settings: Settings, design: Design, rates: Sequence[FailureRate], *, model: str, params: int,
            num_gpus: int, tokens: float = 0.0, tokens_per_s: float | None = None,
            useful_s: float | None = None) -> Reliability:
    """Interruptions, checkpoints, goodput and storage of training ``model`` (``params`` parameters, ``tokens``
    in its budget, 0 = none) on ``num_gpus`` of ``design``, each cause of ``rates`` striking its components.

    ``tokens_per_s`` (from the training model) sets the data-loading bandwidth; without it
    ``settings.read_Bps_per_gpu`` does. ``useful_s`` (the failure-free time to train) sets the run's length,
    its wall-clock time at the goodput found (goodput does not depend on it); without it ``settings.days``.
    """
    if not 1 <= num_gpus <= design.num_gpus or num_gpus % design.gpus_per_node:
        raise ConfigError(f"must be whole nodes of {design.gpus_per_node} within the cluster's {design.num_gpus} "
                          f"GPUs, got {num_gpus}", key="workload.gpus")
    if design.storage_units == 0:
        raise ConfigError("the cluster has no storage to checkpoint to", key="storage.usable_tb")
    failures = job_failures(rates, design, num_gpus=num_gpus, repair_s=settings.repair_s,
                            confidence=settings.spare_confidence)
    job, found = failures.job, failures.interruptions
    size = params * settings.checkpoint_bytes_per_param
    checkpoint_at, write_Bps = _checkpoints(settings, design, job, size)

    def run(rate_Bps: float) -> Outcome:
        return outcome(checkpoint_at(rate_Bps), mtti_s=found.mtti_s, interval_s=settings.interval_s,
                       detect_s=settings.detect_s, overhead_s=settings.restart_overhead_s)

    checkpoint, result = checkpoint_at(write_Bps), run(write_Bps)
    needs = _storage(settings, design, job, size, result, run, tokens=tokens, tokens_per_s=tokens_per_s)
    days = settings.days if useful_s is None else wall_clock_s(useful_s, result.goodput) / DAY_S
    return Reliability(model=model, params=params, job=job, days=days, interruptions=found,
                       spares=failures.spares, checkpoint=checkpoint, outcome=result, storage=needs)


def _checkpoints(settings: Settings, design: Design, job: Exposure, size: float
                 ) -> tuple[Callable[[float], Checkpoint], float]:
    """The job's checkpoint as a function of its write rate, and the rate of the checkpoint tier (the burst
    buffer where there is one) or of the job's storage clients, whichever is lower."""
    parts = design.parts
    burst = design.burst_buffer_units > 0
    tier = parts.burst_buffer if burst else parts.storage
    tier_write = design.burst_buffer_write_Bps if burst else design.storage_write_Bps
    tier_read = design.burst_buffer_read_Bps if burst else design.storage_read_Bps
    _, write_Bps = transfer_s(size, tier_Bps=tier_write, clients=job.num_nodes, client_Bps=tier.client_Bps)
    reload_s, _ = transfer_s(size, tier_Bps=tier_read, clients=job.num_nodes, client_Bps=tier.client_Bps)
    copy_s = size / job.num_gpus / parts.gpu.pcie_bw_Bps

    def checkpoint_at(rate_Bps: float) -> Checkpoint:
        return Checkpoint(size_bytes=size, asynchronous=settings.async_checkpoint,
                          metadata_s=settings.checkpoint_metadata_s, copy_s=copy_s,
                          write_s=size / rate_Bps, write_Bps=rate_Bps, reload_s=reload_s)

    return checkpoint_at, write_Bps


def _storage(settings: Settings, design: Design, job: Exposure, size: float, result: Outcome,
             run: Callable[[float], Outcome], *, tokens: float, tokens_per_s: float | None) -> StorageNeeds:
    parts = design.parts
    ideal = run(math.inf).goodput
    cost = ideal - result.goodput
    main_write = min(design.storage_write_Bps, job.num_nodes * parts.storage.client_Bps)
    main_read = min(design.storage_read_Bps, job.num_nodes * parts.storage.client_Bps)
    read_Bps, basis = read_need(tokens_per_s=tokens_per_s, bytes_per_token=settings.bytes_per_token,
                                read_Bps_per_gpu=settings.read_Bps_per_gpu, num_gpus=job.num_gpus)
    burst = design.burst_buffer_units > 0
    recommended, limited = None, False
    if not burst and cost > settings.target_overhead:
        recommended = size_burst_buffer(lambda rate: run(rate).goodput, ideal_goodput=ideal,
                                        target=settings.target_overhead, tier=parts.burst_buffer,
                                        num_nodes=job.num_nodes, checkpoint_bytes=size)
        limited = recommended is None
    dataset_tb = settings.dataset_tb or tokens * settings.bytes_per_token / 1e12
    return StorageNeeds(
        dataset_tb=dataset_tb, checkpoints_tb=settings.checkpoints_kept * size / 1e12,
        usable_tb=design.storage_tb, read_Bps=read_Bps, read_basis=basis, read_available_Bps=main_read,
        checkpoint_tier=f"{parts.burst_buffer.id} (burst buffer)" if burst else parts.storage.id,
        ideal_goodput=ideal, storage_cost=cost, target_overhead=settings.target_overhead,
        burst_buffer_tb=design.burst_buffer_tb, drain_Bps=size / result.interval.used_s if burst else 0.0,
        main_write_Bps=main_write, recommended=recommended, client_limited=limited)


def by_job_size(settings: Settings, design: Design, rates: Sequence[FailureRate], *, model: str, params: int,
                tokens: float = 0.0) -> tuple[Reliability, ...]:
    """The job at one node, doubling up to the whole cluster (and the whole cluster itself)."""
    sizes, gpus = [], design.gpus_per_node
    while gpus < design.num_gpus:
        sizes.append(gpus)
        gpus *= 2
    sizes.append(design.num_gpus)
    return tuple(goodput(settings, design, rates, model=model, params=params, num_gpus=size, tokens=tokens)
                 for size in sizes)
