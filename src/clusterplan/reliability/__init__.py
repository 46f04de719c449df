"""Failures, checkpoints, storage and goodput of a training job (docs/reliability.md)."""

from clusterplan.reliability.model import (DEFAULT_MODEL, Reliability, by_job_size, goodput, job_gpus,
                                           workload_model)

__all__ = ["DEFAULT_MODEL", "Reliability", "by_job_size", "goodput", "job_gpus", "workload_model"]
