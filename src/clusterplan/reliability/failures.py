"""Job interruptions from per-component failure rates, and the spare nodes that cover repairs.

A job is interrupted when any component it uses fails. With independent
causes, each a Poisson process on each component of its scope, the job's
interruption rate is the sum

    lambda = sum over causes c of  rate_c x count_c(job)

and its mean time to interruption MTTI = 1 / lambda (docs/reliability.md).
Counts: every GPU, every node, every NIC link (NICs x nodes), and the job's
share (job nodes / cluster nodes) of the fabric's switches and of its
switch-to-switch links.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

import numpy as np

from clusterplan.catalog import Catalog, FailureRate
from clusterplan.design import Design
from clusterplan.errors import CatalogError
from clusterplan.schema import FROZEN

TAIL_SIGMAS = 10      # the Poisson quantile's sum starts this many standard deviations below the mean
BLOCK = 1 << 16       # terms summed at once

DAY_S = 86400.0


@dataclass(**FROZEN)
class Exposure:
    """How many components of each failure scope a job of ``num_gpus`` depends on."""

    num_gpus: int
    num_nodes: int
    num_links: int
    num_switches: float   # the job's share of the fabric's switches
    num_fabric_links: float = 0.0   # the job's share of the switch-to-switch links (leaf-spine and above)

    def count(self, scope: str) -> float:
        return {"gpu": self.num_gpus, "node": self.num_nodes, "link": self.num_links,
                "fabric-link": self.num_fabric_links, "switch": self.num_switches}[scope]


@dataclass(**FROZEN)
class Cause:
    """One failure cause scaled to the job: its rate per component and how many the job uses."""

    rate: FailureRate
    count: float

    @property
    def per_day(self) -> float:
        return self.rate.per_1000_unit_days / 1000 * self.count

    def bound_per_day(self, bound: str) -> float:
        """The low or high end of the cause's published range (the central figure where none)."""
        value = getattr(self.rate, f"{bound}_per_1000_unit_days")
        return (self.rate.per_1000_unit_days if value is None else value) / 1000 * self.count


@dataclass(**FROZEN)
class Interruptions:
    """The job's failure causes; their sum is its interruption rate."""

    causes: tuple[Cause, ...]

    @property
    def per_day(self) -> float:
        return sum(cause.per_day for cause in self.causes)

    @property
    def rate_per_s(self) -> float:
        return self.per_day / DAY_S

    @property
    def mtti_s(self) -> float:
        """Mean time to interruption of the job."""
        return 1.0 / self.rate_per_s

    @property
    def repair_per_day(self) -> float:
        """Interruptions that take a node out until it is repaired."""
        return sum(cause.per_day for cause in self.causes if cause.rate.repair)

    def share(self) -> dict[str, float]:
        """Each cause's fraction of the interruptions."""
        total = self.per_day
        return {cause.rate.id: cause.per_day / total for cause in self.causes}


@dataclass(**FROZEN)
class Spares:
    """Spare nodes that keep the job at its size while failed nodes are repaired."""

    nodes_in_repair: float   # mean nodes out at any time: repair failures per second x repair time
    spare_nodes: int         # smallest k with P(Poisson(nodes_in_repair) <= k) >= confidence
    confidence: float
    repair_s: float


def failure_rates(catalog: Catalog, ids: Sequence[str], overrides: Mapping[str, float] | None = None,
                  *, key: str = "reliability") -> tuple[FailureRate, ...]:
    """The named causes from the catalog, with the scenario's rate overrides applied."""
    overrides = overrides or {}
    rates = []
    for index, cause_id in enumerate(ids):
        rate = catalog.get("failures", cause_id, key=f"{key}.failures[{index}]")
        if cause_id in overrides:
            rate = replace(rate, per_1000_unit_days=overrides[cause_id], low_per_1000_unit_days=None,
                           high_per_1000_unit_days=None, source="scenario reliability.failure_rates override",
                           date="")
        rates.append(rate)
    for cause_id in overrides:
        if cause_id not in ids:
            raise CatalogError(f"{cause_id!r} is not among reliability.failures ({', '.join(ids)})",
                               key=f"{key}.failure_rates.{cause_id}")
    return tuple(rates)


def exposure(*, num_gpus: int, gpus_per_node: int, nics_per_node: int, cluster_nodes: int,
             cluster_switches: int, cluster_fabric_links: int = 0) -> Exposure:
    """The components a job of ``num_gpus`` (whole nodes) uses on a cluster: its own GPUs, nodes and NIC links,
    and its share (job nodes / cluster nodes) of the switches and of the switch-to-switch links."""
    nodes = math.ceil(num_gpus / gpus_per_node)
    share = nodes / cluster_nodes
    return Exposure(num_gpus=num_gpus, num_nodes=nodes, num_links=nodes * nics_per_node,
                    num_switches=cluster_switches * share, num_fabric_links=cluster_fabric_links * share)


def interruptions(rates: Sequence[FailureRate], job: Exposure) -> Interruptions:
    """Each cause's rate times the job's count of its components."""
    return Interruptions(causes=tuple(Cause(rate=rate, count=job.count(rate.scope)) for rate in rates))


def spares(found: Interruptions, *, repair_s: float, confidence: float) -> Spares:
    """Nodes in repair are Poisson with mean (repair failures per second) x repair time."""
    mean = found.repair_per_day / DAY_S * repair_s
    return Spares(nodes_in_repair=mean, spare_nodes=poisson_quantile(mean, confidence), confidence=confidence,
                  repair_s=repair_s)


@dataclass(**FROZEN)
class JobFailures:
    """A job's components on a design, the interruptions its failure causes give, and the spares they need."""

    job: Exposure
    interruptions: Interruptions
    spares: Spares


def job_failures(rates: Sequence[FailureRate], design: Design, *, num_gpus: int, repair_s: float,
                 confidence: float) -> JobFailures:
    """A job of ``num_gpus`` on ``design``: its exposure, each cause of ``rates`` striking it, and the spare
    nodes that cover its repairs with probability ``confidence``."""
    job = exposure(num_gpus=num_gpus, gpus_per_node=design.gpus_per_node, nics_per_node=design.nics_per_node,
                   cluster_nodes=design.num_nodes, cluster_switches=design.topology.num_switches,
                   cluster_fabric_links=design.topology.num_switch_links)
    found = interruptions(rates, job)
    return JobFailures(job=job, interruptions=found, spares=spares(found, repair_s=repair_s, confidence=confidence))


def cluster_spares(rates: Sequence[FailureRate], design: Design, *, repair_s: float, confidence: float) -> int:
    """The spare nodes the whole of ``design`` needs (a job on every GPU)."""
    return job_failures(rates, design, num_gpus=design.num_gpus, repair_s=repair_s,
                        confidence=confidence).spares.spare_nodes


def poisson_quantile(mean: float, probability: float) -> int:
    """The smallest k with P(X <= k) >= probability for X ~ Poisson(mean).

    The tail sum starts ``TAIL_SIGMAS`` standard deviations below the mean (the mass below is under 1e-23, past
    a float's resolution) and runs in blocks of ``BLOCK`` terms, so the work grows with sqrt(mean), not the mean:
    a mean of 1e11 nodes in repair (every key at its limit) is answered in a moment, not hours."""
    if not 0 < probability < 1:
        raise ValueError(f"probability must be in (0, 1), got {probability}")
    if mean <= 0:
        return 0
    limit = int(mean + 40 * math.sqrt(mean) + 40)
    k = max(0, math.floor(mean - TAIL_SIGMAS * math.sqrt(mean)))
    log_term = _log_poisson(mean, k)
    cumulative = 0.0
    while k <= limit:
        ks = np.arange(k, min(k + BLOCK, limit + 1), dtype=np.float64)
        logs = log_term + np.concatenate(([0.0], np.cumsum(np.log1p((mean - ks[1:]) / ks[1:]))))
        sums = cumulative + np.cumsum(np.exp(logs))
        reached = int(np.searchsorted(sums, probability))
        if reached < len(ks):
            return k + reached
        cumulative, log_term, k = float(sums[-1]), float(logs[-1]) + math.log(mean / (k + len(ks))), k + len(ks)
    return limit


def _log_poisson(mean: float, k: int) -> float:
    """log P(X = k) for X ~ Poisson(mean). From k = 1,000 on, k log(mean / k) + k - mean and Stirling's series
    for log k!: written as k log mean - mean - log k!, two numbers near 5e12 would cancel and leave an error of
    1e-3 in the log at a mean of 1e11 (the quantile then off by a few hundredths of a standard deviation)."""
    if k < 1000:
        return k * math.log(mean) - mean - math.lgamma(k + 1)
    stirling = 0.5 * math.log(2 * math.pi * k) + 1 / (12 * k) - 1 / (360 * k ** 3)   # log k! - (k log k - k)
    return k * math.log1p((mean - k) / k) + (k - mean) - stirling
