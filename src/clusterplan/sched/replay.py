"""From a scenario and a trace to outcomes per policy: the one entry point the CLI and scripts call."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clusterplan.errors import ConfigError
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


def cluster_for(spec, *, num_gpus: int | None = None, num_nodes: int | None = None,
                topology_aware: bool = False, catalog=None) -> Cluster:
    """The scheduler's view of the scenario's cluster: its nodes (or ``num_nodes``, or ``num_gpus`` worth)
    of its GPUs per node, and the leaf size of its designed fabric."""
    per_node = spec.cluster.gpus_per_node
    if num_gpus is not None:
        if num_gpus < 1 or num_gpus % per_node:
            raise ConfigError(f"must be a positive multiple of the {per_node} GPUs per node, got {num_gpus}",
                              key="--gpus")
        num_nodes = num_gpus // per_node
    if num_nodes is not None and num_nodes < 1:
        raise ConfigError(f"must be >= 1, got {num_nodes}", key="--nodes")
    nodes = num_nodes or spec.cluster.num_nodes
    return Cluster(num_nodes=nodes, gpus_per_node=per_node, topology_aware=topology_aware,
                   nodes_per_leaf=_nodes_per_leaf(spec, nodes, catalog, required=topology_aware))


def _nodes_per_leaf(spec, num_nodes: int, catalog, *, required: bool) -> int:
    """NIC ports per leaf switch of the designed fabric / NICs per node; 0 if it cannot be designed
    and only the count of leaves spanned (not placement) depends on it."""
    from clusterplan.catalog import load_catalog
    from clusterplan.design import design
    from clusterplan.errors import InfeasiblePlan

    try:
        built = design(spec.with_nodes(num_nodes), (catalog or load_catalog()).with_prices(spec.prices))
    except (ConfigError, InfeasiblePlan):
        if required:
            raise
        return 0
    return max(1, built.topology.endpoints_per_leaf // spec.network.nics_per_node)

def replay(trace: Trace, cluster: Cluster, policies: Sequence[str], *, priority: Multifactor | None = None,
           num_bins: int = 24, on_policy: Callable[[str], None] | None = None) -> list[Outcome]:
    """Each policy on the same trace and cluster; ``on_policy(name)`` is told before each (for progress)."""
    outcomes = []
    for policy in policies:
        if on_policy is not None:
            on_policy(policy)
        options = {"priority": priority} if policy == "fairshare" and priority is not None else {}
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
