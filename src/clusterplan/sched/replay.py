"""From a trace and a cluster to outcomes per policy: the one entry point the CLI and scripts call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clusterplan.schema import FROZEN
from clusterplan.sched.engine import simulate
from clusterplan.sched.jobs import Trace
from clusterplan.sched.machine import Cluster
from clusterplan.sched.metrics import Metrics, Timeline, UserOutcome, per_user, summarize, timeline
from clusterplan.sched.priority import Multifactor


@dataclass(**FROZEN)
class Outcome:
    metrics: Metrics
    timeline: Timeline
    users: tuple[UserOutcome, ...]


def replay(trace: Trace, cluster: Cluster, policies: Sequence[str], *, priority: Multifactor | None = None,
           depth: int | None = None, num_bins: int = 24,
           on_policy: Callable[[str], None] | None = None) -> list[Outcome]:
    """Each policy on the same trace and cluster; ``on_policy(name)`` is told before each (for progress).
    ``depth``: conservative backfilling's reservation depth (default ``easy.BACKFILL_DEPTH``)."""
    outcomes = []
    for policy in policies:
        if on_policy is not None:
            on_policy(policy)
        options = {"priority": priority} if policy == "fairshare" and priority is not None else {}
        if policy == "conservative" and depth is not None:
            options = {"depth": depth}
        schedule = simulate(trace, cluster, policy, **options)
        outcomes.append(Outcome(metrics=summarize(schedule), timeline=timeline(schedule, num_bins),
                                users=per_user(schedule)))
    return outcomes


def achieved_utilization(trace: Trace, cluster: Cluster, policy: str = "easy") -> float:
    """The utilization ``policy`` reaches on ``trace``: what ``finance.utilization`` can be set to."""
    return summarize(simulate(trace, cluster, policy)).utilization


def offered_load(trace: Trace, num_gpus: int) -> float:
    """GPU-seconds asked for / (GPUs x submission span): above 1 the queue grows without bound."""
    span = float(trace.submit_s.max() - trace.submit_s.min()) if trace.num_jobs else 0.0
    work = float((trace.run_s * trace.gpus).sum())
    return work / (num_gpus * span) if span > 0 else 0.0
