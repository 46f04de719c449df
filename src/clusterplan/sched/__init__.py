"""Job-scheduler simulation: replay a trace on the planned cluster under a policy.

``read_trace`` / ``synthetic`` -> ``Trace``; ``simulate(trace, Cluster(...), policy)``
-> ``Schedule``; ``summarize(schedule)`` -> ``Metrics``. docs/scheduling.md
gives each policy's rules, the allocation, the metrics and the trace formats.
"""

from clusterplan.sched.engine import EventQueue, Schedule, simulate
from clusterplan.sched.jobs import Trace, make_trace
from clusterplan.sched.machine import Cluster
from clusterplan.sched.policies import POLICIES
from clusterplan.sched.priority import Multifactor, parse_multifactor

__all__ = ["Cluster", "EventQueue", "Multifactor", "POLICIES", "Schedule", "Trace", "make_trace",
           "parse_multifactor", "simulate"]
