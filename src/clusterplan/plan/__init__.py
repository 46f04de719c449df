"""The composer: one function per command's result, from a resolved Spec and a Catalog to frozen values.

Every join happens here, once (DESIGN.md, "The flow"); the models below are leaves and the
renderers above draw what these functions return.
"""

from clusterplan.plan.core import Plan, Rental, own, plan, planned
from clusterplan.plan.scenario import priced, resolved, scheduler_cluster, with_trace_utilization

__all__ = ["Plan", "Rental", "own", "plan", "planned", "priced", "resolved", "scheduler_cluster",
           "with_trace_utilization"]
