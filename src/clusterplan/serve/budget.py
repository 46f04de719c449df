"""Each request's work budget (docs/serve.md, "Limits"): inputs whose cost is known to exceed it are refused
before any model runs, and the rest are sorted into light work and heavy work, each answered by its own pool
of worker processes under its own deadline (serve/workers.py).

The figures are this module's ASSUMPTIONS, set from timings on a 2-core machine (docs/serve.md): the
reference scenario plans in about 10 ms and 1,024 nodes of 8 GPUs in about 20 ms; a workload's layout
search takes 50-150 ms; a synthetic trace's replay grows with its jobs (10,000 jobs: 0.3 s FIFO, 0.8 s EASY,
7 s fair-share) and conservative backfilling far faster (1,000 jobs at load 50: 26 s).
"""

from __future__ import annotations

from clusterplan.errors import ConfigError
from clusterplan.sched.synthetic import parse_workload
from clusterplan.spec import Spec, synthetic_trace

LIGHT_MAX_GPUS = 8192          # a plan without workload or trace up to this size is light work
SYNTHETIC_MAX_JOBS = 20_000    # the most jobs of a synthetic trace the live server replays
CONSERVATIVE_MAX_JOBS = 1_000  # ... under conservative backfilling
TRACE_KEY, POLICY_KEY = "finance.utilization_from_trace", "finance.utilization_policy"


def refuse_costly(spec: Spec) -> None:
    """Raise ``ConfigError`` naming the key and the limit where ``spec`` asks for more than a request's budget."""
    trace = spec.finance.utilization_from_trace
    if not synthetic_trace(trace):
        return
    try:
        jobs = parse_workload(trace).num_jobs
    except ConfigError:
        return   # the plan names the problem, as the command line does
    if jobs > SYNTHETIC_MAX_JOBS:
        raise ConfigError(f"the live server replays at most {SYNTHETIC_MAX_JOBS:,} synthetic jobs per request "
                          f"(clusterplan plan has no such limit), got {jobs:,}", key=TRACE_KEY)
    if spec.finance.utilization_policy == "conservative" and jobs > CONSERVATIVE_MAX_JOBS:
        raise ConfigError(f"the live server replays at most {CONSERVATIVE_MAX_JOBS:,} jobs under conservative "
                          f"backfilling per request (clusterplan plan has no such limit), got {jobs:,}",
                          key=POLICY_KEY)


def heavy(spec: Spec) -> bool:
    """True where ``spec`` is heavy work: a workload's layout search, a trace replay, or a large cluster."""
    return (spec.workload.defined or bool(spec.finance.utilization_from_trace)
            or spec.cluster.num_gpus > LIGHT_MAX_GPUS)
