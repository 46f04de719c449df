"""What the reliability model reads of a scenario: its ``[reliability]`` and ``[storage]`` settings in seconds,
and the catalog's failure causes with the scenario's rate overrides (docs/reliability.md). Apart from
``plan.reliability`` so that owning (the spare nodes) reads them without the training workload's modules."""

from __future__ import annotations

from clusterplan.catalog import Catalog, FailureRate
from clusterplan.reliability import Settings, failure_rates
from clusterplan.spec import Spec


def reliability_settings(spec: Spec) -> Settings:
    """What the reliability model reads of ``[reliability]`` and ``[storage]``, in seconds."""
    chosen = spec.reliability
    return Settings(days=chosen.days, interval_s=chosen.checkpoint_interval_min * 60,
                    async_checkpoint=chosen.async_checkpoint, checkpoint_metadata_s=chosen.checkpoint_metadata_s,
                    checkpoint_bytes_per_param=chosen.checkpoint_bytes_per_param,
                    checkpoints_kept=chosen.checkpoints_kept, dataset_tb=chosen.dataset_tb,
                    bytes_per_token=chosen.bytes_per_token, read_Bps_per_gpu=spec.storage.read_Bps_per_gpu,
                    detect_s=chosen.detect_min * 60, restart_overhead_s=chosen.restart_overhead_min * 60,
                    repair_s=chosen.repair_hours * 3600, spare_confidence=chosen.spare_confidence,
                    target_overhead=chosen.target_overhead)


def scenario_rates(spec: Spec, catalog: Catalog) -> tuple[FailureRate, ...]:
    """The scenario's failure causes from ``catalog``, with its rate overrides."""
    return failure_rates(catalog, spec.reliability.failures, spec.reliability.failure_rates)
