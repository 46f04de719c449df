"""A job trace replayed on the scenario's cluster under scheduling policies, each priced: what a delivered
GPU-hour costs at the utilization the policy reaches (docs/scheduling.md)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from clusterplan.catalog import Catalog
from clusterplan.cost import delivered_gpu_hours_per_year, usd_per_gpu_hour
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.plan.core import own
from clusterplan.plan.scenario import priced, read_jobs, scheduler_cluster
from clusterplan.sched.jobs import Trace
from clusterplan.sched.machine import Cluster
from clusterplan.sched.metrics import recorded_mean_wait
from clusterplan.sched.priority import Multifactor
from clusterplan.sched.replay import Outcome, offered_load, replay
from clusterplan.schema import FROZEN
from clusterplan.spec import Spec

MAX_DEPTH = 10_000_000   # reservations conservative backfilling may hold: past any trace a machine can read


@dataclass(**FROZEN)
class Schedule:
    """The trace, the cluster it ran on, one outcome per policy, and each policy's cost per delivered GPU-hour."""

    spec: Spec
    trace: Trace
    cluster: Cluster
    outcomes: tuple[Outcome, ...]
    offered_load: float
    recorded_mean_wait_s: float | None
    cost_per_gpu_hour_usd: tuple[float | None, ...]   # per outcome; None where the cluster cannot be priced


def schedule(spec: Spec, catalog: Catalog | None = None, *, trace: str, policies: Sequence[str],
             trace_format: str | None = None, skip_bad: bool = False, priority: Multifactor | None = None,
             num_gpus: int | None = None, num_nodes: int | None = None, topology_aware: bool = False,
             depth: int | None = None, num_bins: int = 24,
             on_policy: Callable[[str], None] | None = None) -> Schedule:
    """Replay ``trace`` (a file, or ``synthetic[:key=value,...]``) under each of ``policies``.

    The cluster is the scenario's (or ``num_gpus`` / ``num_nodes`` of its nodes); jobs larger than it are
    cut to it. Each policy is priced at the TCO of owning that cluster over the GPU-hours it delivers.
    ``depth``: how many queued jobs hold reservations under conservative backfilling (default 2,000).
    """
    if not 1 <= num_bins <= 1000:
        raise ConfigError(f"must be between 1 and 1000, got {num_bins}", key="--bins")
    if depth is not None and not 1 <= depth <= MAX_DEPTH:
        raise ConfigError(f"must be between 1 and {MAX_DEPTH:,}, got {depth}", key="--depth")
    if depth is not None and "conservative" not in policies:
        raise ConfigError("applies to conservative backfilling only (--policy conservative or --compare)",
                          key="--depth")
    catalog = priced(spec, catalog)
    cluster = scheduler_cluster(spec, catalog, num_gpus=num_gpus, num_nodes=num_nodes,
                                topology_aware=topology_aware)
    jobs = read_jobs(trace, cluster.num_gpus, trace_format=trace_format,
                     skip_bad=skip_bad).limited_to(cluster.num_gpus)
    outcomes = tuple(replay(jobs, cluster, policies, priority=priority, depth=depth, num_bins=num_bins,
                            on_policy=on_policy))
    return Schedule(spec=spec, trace=jobs, cluster=cluster, outcomes=outcomes,
                    offered_load=offered_load(jobs, cluster.num_gpus), recorded_mean_wait_s=recorded_mean_wait(jobs),
                    cost_per_gpu_hour_usd=_prices(spec, catalog, cluster, outcomes))


def _prices(spec: Spec, catalog: Catalog, cluster: Cluster,
            outcomes: Sequence[Outcome]) -> tuple[float | None, ...]:
    """The owned cluster's cost per GPU-hour delivered at each outcome's utilization (None: no design, or idle)."""
    try:
        _, owned = own(spec.with_nodes(cluster.num_nodes), catalog)
    except (ConfigError, InfeasiblePlan):
        return tuple(None for _ in outcomes)
    return tuple(usd_per_gpu_hour(total_usd=owned.tco_usd, years=owned.years,
                                  gpu_hours_per_year=delivered_gpu_hours_per_year(
                                      num_gpus=cluster.num_gpus, utilization=outcome.metrics.utilization))
                 if outcome.metrics.utilization > 0 else None for outcome in outcomes)
