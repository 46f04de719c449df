"""The scenario made explicit before any model runs: the catalog priced with its ``[prices]``, and the
utilization it leaves to a trace replay derived (docs/scheduling.md). Every composer starts here."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from clusterplan.catalog import Catalog, load_catalog
from clusterplan.design import design
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.limits import LIMITS, within
from clusterplan.reliability import failure_rates
from clusterplan.spec import Spec, reference_value, synthetic_trace

if TYPE_CHECKING:   # sched/ is imported where a trace is replayed: a plan without one starts without it (issue 30)
    from clusterplan.sched.jobs import Trace
    from clusterplan.sched.machine import Cluster


def priced(spec: Spec, catalog: Catalog | None) -> Catalog:
    """``catalog`` (default: the built-in one) with the scenario's ``[prices]`` and ``cloud.capacity``: the one catalog every join uses.

    The scenario's failure causes are looked up here too, so that an unknown one is an error for every
    command, not only for those that model failures.
    """
    catalog = (catalog or load_catalog()).with_prices(spec.prices).with_capacity(spec.cloud.capacity)
    failure_rates(catalog, spec.reliability.failures, spec.reliability.failure_rates)
    return catalog


def resolved(spec: Spec, catalog: Catalog) -> Spec:
    """``spec`` with what it leaves to be derived made explicit: ``finance.utilization`` from the replay of
    ``finance.utilization_from_trace`` under ``finance.utilization_policy``, when it names a trace."""
    trace = spec.finance.utilization_from_trace
    if not trace:
        return spec
    try:
        jobs = read_jobs(trace, spec.cluster.num_gpus)
    except ConfigError as error:   # a synthetic spec's error names its own key: say which setting gave it
        raise ConfigError(error.message, key="finance.utilization_from_trace", source=error.source,
                          line=error.line) from None
    return with_trace_utilization(spec, jobs.limited_to(spec.cluster.num_gpus), catalog)


def read_jobs(trace: str, num_gpus: int, *, trace_format: str | None = None, skip_bad: bool = False) -> Trace:
    """The jobs of ``trace``: a trace file, or ``synthetic[:key=value,...]`` generated for ``num_gpus`` GPUs
    (the one reader of trace specs: ``schedule`` and ``finance.utilization_from_trace`` accept the same)."""
    from clusterplan.sched.synthetic import parse_workload, synthetic
    from clusterplan.sched.traces import read_trace

    if synthetic_trace(trace):
        return synthetic(parse_workload(trace), num_gpus=num_gpus)
    return read_trace(trace, format=trace_format, skip_bad=skip_bad)


def utilization_source(spec: Spec) -> str:
    """Where a resolved ``spec``'s ``finance.utilization`` came from, in words (shown beside the figure)."""
    finance = spec.finance
    if finance.utilization_from_trace:
        return f"replay of {finance.utilization_from_trace}, {finance.utilization_policy} policy"
    if finance.utilization == reference_value("finance", "utilization"):
        return "reference default"
    return "finance.utilization"


def with_trace_utilization(spec: Spec, trace: Trace, catalog: Catalog) -> Spec:
    """``spec`` with ``finance.utilization`` set to what its policy achieves on ``trace`` (a sched Trace)."""
    from clusterplan.sched.replay import achieved_utilization

    cluster = scheduler_cluster(spec, catalog)
    achieved = achieved_utilization(trace, cluster, spec.finance.utilization_policy)
    if achieved <= 0:
        raise ConfigError("the trace keeps no GPU busy on this cluster", key="finance.utilization_from_trace")
    return replace(spec, finance=replace(spec.finance, utilization=min(achieved, 1.0)))


def scheduler_cluster(spec: Spec, catalog: Catalog, *, num_gpus: int | None = None, num_nodes: int | None = None,
                      topology_aware: bool = False) -> Cluster:
    """The scheduler's view (a sched ``Cluster``) of the scenario's cluster: its nodes (or ``num_nodes``, or
    ``num_gpus`` worth) of its GPUs per node, and the nodes under one leaf switch of its designed fabric
    (0 where that fabric cannot be designed and placement does not need it)."""
    from clusterplan.sched.machine import Cluster

    per_node = spec.cluster.gpus_per_node
    if num_gpus is not None:
        if num_gpus < 1 or num_gpus % per_node:
            raise ConfigError(f"must be a positive multiple of the {per_node} GPUs per node, got {num_gpus}",
                              key="--gpus")
        num_nodes = num_gpus // per_node
    low, high = LIMITS["cluster.num_nodes"]
    if num_gpus is not None:
        within("--gpus", num_gpus, low * per_node, high * per_node)
    if num_nodes is not None:
        within("--nodes", num_nodes, low, high)
    nodes = num_nodes or spec.cluster.num_nodes
    try:
        built = design(spec.with_nodes(nodes), catalog)
    except (ConfigError, InfeasiblePlan):
        if topology_aware:
            raise
        nodes_per_leaf = 0
    else:
        nodes_per_leaf = max(1, built.topology.endpoints_per_leaf // spec.network.nics_per_node)
    return Cluster(num_nodes=nodes, gpus_per_node=per_node, nodes_per_leaf=nodes_per_leaf,
                   topology_aware=topology_aware)
