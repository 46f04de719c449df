"""Failures, checkpoints, storage and goodput of a training job (docs/reliability.md)."""

from clusterplan.reliability.failures import failure_rates
from clusterplan.reliability.model import Reliability, Settings, by_job_size, goodput, wall_clock_s

__all__ = ["Reliability", "Settings", "by_job_size", "failure_rates", "goodput", "wall_clock_s"]
