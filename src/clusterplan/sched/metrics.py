"""What a schedule delivered: utilization, waits, bounded slowdown, queue length, per-user outcome.

Definitions (docs/scheduling.md):

* wait = start - submit; mean, median and 95th percentile (numpy's linear interpolation).
* bounded slowdown = max(1, (wait + run) / max(run, 10 s)), the usual bound of 10 s
  (Feitelson et al., "Theory and practice in parallel job scheduling", 1997).
* makespan = last end - first submit.
* utilization = GPU-seconds the jobs asked for and ran / (GPUs x makespan); allocated
  utilization counts the whole nodes multi-node jobs hold. Delivered GPU-hours = the numerator / 3600.
* over time: the same ratios averaged over equal bins of the makespan, from the exact step functions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clusterplan.schema import FROZEN
from clusterplan.sched.engine import Schedule

BSLD_BOUND_S = 10.0


@dataclass(**FROZEN)
class Metrics:
    policy: str
    num_jobs: int
    num_gpus: int
    utilization: float
    allocated_utilization: float
    mean_wait_s: float
    median_wait_s: float
    p95_wait_s: float
    max_wait_s: float
    mean_bounded_slowdown: float
    makespan_s: float
    delivered_gpu_hours: float
    mean_queue_length: float
    max_queue_length: int
    num_backfilled: int
    num_multi_node: int
    num_multi_node_one_leaf: int   # of those, the ones under a single leaf switch (topology-aware runs)


@dataclass(**FROZEN)
class Timeline:
    start_s: float
    bin_s: float
    utilization: tuple[float, ...]
    queue_length: tuple[float, ...]


@dataclass(**FROZEN)
class UserOutcome:
    user: str
    num_jobs: int
    gpu_hours: float
    share_of_gpu_hours: float
    mean_wait_s: float
    mean_bounded_slowdown: float


def bounded_slowdown(wait_s: np.ndarray, run_s: np.ndarray) -> np.ndarray:
    return np.maximum(1.0, (wait_s + run_s) / np.maximum(run_s, BSLD_BOUND_S))


def summarize(schedule: Schedule) -> Metrics:
    trace = schedule.trace
    num_gpus = schedule.cluster.num_gpus
    n = trace.num_jobs
    wait = schedule.wait_s
    makespan = float(schedule.end_s.max() - trace.submit_s.min()) if n else 0.0
    used = float(np.dot(trace.run_s, trace.gpus))
    held = float(np.dot(trace.run_s, schedule.demand))
    capacity = num_gpus * makespan
    times, queue = queue_steps(schedule)
    area = float(np.dot(queue[:-1], np.diff(times))) if times.size > 1 else 0.0
    multi = schedule.demand > schedule.cluster.gpus_per_node
    return Metrics(
        policy=schedule.policy, num_jobs=n, num_gpus=num_gpus,
        utilization=used / capacity if capacity else 0.0,
        allocated_utilization=held / capacity if capacity else 0.0,
        mean_wait_s=_stat(np.mean, wait), median_wait_s=_stat(np.median, wait),
        p95_wait_s=_stat(lambda w: np.percentile(w, 95), wait), max_wait_s=_stat(np.max, wait),
        mean_bounded_slowdown=_stat(np.mean, bounded_slowdown(wait, trace.run_s)),
        makespan_s=makespan, delivered_gpu_hours=used / 3600.0,
        mean_queue_length=area / makespan if makespan else 0.0,
        max_queue_length=int(queue.max()) if queue.size else 0,
        num_backfilled=int(schedule.backfilled.sum()), num_multi_node=int(multi.sum()),
        num_multi_node_one_leaf=int((multi & (schedule.leaves == 1)).sum()))


def _stat(function, values: np.ndarray) -> float:
    return float(function(values)) if values.size else 0.0


def busy_steps(schedule: Schedule, *, allocated: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """GPUs in use as a step function: ``values[i]`` holds from ``times[i]`` to ``times[i + 1]``."""
    gpus = schedule.demand if allocated else schedule.trace.gpus
    return _steps(schedule.start_s, schedule.end_s, gpus)


def queue_steps(schedule: Schedule) -> tuple[np.ndarray, np.ndarray]:
    """Jobs waiting as a step function."""
    return _steps(schedule.trace.submit_s, schedule.start_s, np.ones(schedule.trace.num_jobs, dtype=np.int64))


def _steps(begin: np.ndarray, end: np.ndarray, amount: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    times = np.concatenate([begin, end])
    change = np.concatenate([amount, -amount])
    order = np.argsort(times, kind="stable")
    times, change = times[order], change[order]
    unique, first = np.unique(times, return_index=True)
    totals = np.add.reduceat(change, first) if times.size else change
    return unique, np.cumsum(totals)


def timeline(schedule: Schedule, num_bins: int = 48) -> Timeline:
    """Utilization and queue length averaged over ``num_bins`` equal slices of the makespan."""
    trace = schedule.trace
    if not trace.num_jobs:
        return Timeline(start_s=0.0, bin_s=0.0, utilization=(), queue_length=())
    first, last = float(trace.submit_s.min()), float(schedule.end_s.max())
    edges = np.linspace(first, last, num_bins + 1)
    width = (last - first) / num_bins
    busy = _binned(*busy_steps(schedule), edges) / schedule.cluster.num_gpus
    queue = _binned(*queue_steps(schedule), edges)
    return Timeline(start_s=first, bin_s=width, utilization=tuple(busy.tolist()), queue_length=tuple(queue.tolist()))


def _binned(times: np.ndarray, values: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """Time average of a step function over each [edges[i], edges[i + 1])."""
    integral = np.concatenate([[0.0], np.cumsum(values[:-1] * np.diff(times))])
    at_edges = np.interp(edges, times, integral)
    width = np.diff(edges)
    return np.divide(np.diff(at_edges), width, out=np.zeros(width.size), where=width > 0)


def recorded_mean_wait(trace) -> float | None:
    """The mean wait the trace's own scheduler gave, where the trace records it for every job."""
    recorded = trace.recorded_wait_s
    if not recorded.size or np.isnan(recorded).any():
        return None
    return float(recorded.mean())


def per_user(schedule: Schedule) -> tuple[UserOutcome, ...]:
    """Each user's jobs, GPU-hours, share of all GPU-hours, mean wait and slowdown; most GPU-hours first."""
    trace = schedule.trace
    if not trace.num_jobs:
        return ()
    users, index = np.unique(trace.user, return_inverse=True)
    count = np.bincount(index)
    gpu_hours = np.bincount(index, weights=trace.run_s * trace.gpus) / 3600.0
    wait = np.bincount(index, weights=schedule.wait_s) / count
    slowdown = np.bincount(index, weights=bounded_slowdown(schedule.wait_s, trace.run_s)) / count
    total = gpu_hours.sum()
    order = np.lexsort((users, -gpu_hours))
    names = trace.users
    return tuple(UserOutcome(user=names[u] if 0 <= u < len(names) else str(u), num_jobs=int(count[i]),
                             gpu_hours=float(gpu_hours[i]),
                             share_of_gpu_hours=float(gpu_hours[i] / total) if total else 0.0,
                             mean_wait_s=float(wait[i]), mean_bounded_slowdown=float(slowdown[i]))
                 for i, u in ((i, int(users[i])) for i in order.tolist()))
