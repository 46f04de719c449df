"""The discrete-event core: a heap of (time, sequence, kind, job) and one loop.

Three kinds of event: a job's submission, its completion, and a wake-up a
policy asked for (fair-share's priority recalculation). The sequence number
breaks ties, so two runs on the same input pop events in the same order.
Submissions are pushed one at a time (the next when the previous pops), so
the heap holds running jobs and at most one submission. All events of one
instant are applied first (completions free their GPUs, submissions join the
queue), then the policy is asked once what to start: what happens at a time
does not depend on the order events were pushed in.

Nothing here is global: every run builds its own machine, policy and heap,
and returns a frozen ``Schedule``. The simulator itself draws no random
numbers; randomness lives in the synthetic generator, under an explicit seed.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN
from clusterplan.sched.jobs import Trace
from clusterplan.sched.machine import Cluster, Machine
from clusterplan.sched.policies import POLICIES

SUBMIT, FINISH, WAKEUP = 0, 1, 2


class EventQueue:
    """Min-heap of (time, sequence, kind, job); the sequence makes equal times pop in push order."""

    __slots__ = ("_heap", "_sequence")

    def __init__(self) -> None:
        self._heap: list[tuple[float, int, int, int]] = []
        self._sequence = itertools.count()

    def push(self, time: float, kind: int, job: int = -1) -> None:
        heapq.heappush(self._heap, (time, next(self._sequence), kind, job))

    def pop(self) -> tuple[float, int, int]:
        time, _, kind, job = heapq.heappop(self._heap)
        return time, kind, job

    def next_time(self) -> float:
        return self._heap[0][0] if self._heap else math.inf

    def __len__(self) -> int:
        return len(self._heap)


class Jobs:
    """The columns policies read, as Python lists (fast to index one at a time) and numpy arrays."""

    def __init__(self, trace: Trace, cluster: Cluster):
        self.trace = trace
        self.cluster = cluster
        self.num_jobs = trace.num_jobs
        self.demand_array = cluster.demand(trace.gpus)
        self.demand: list[int] = self.demand_array.tolist()
        self.estimate: list[float] = trace.estimate_s.tolist()
        self.run: list[float] = trace.run_s.tolist()
        self.submit: list[float] = trace.submit_s.tolist()


@dataclass(**FROZEN)
class Schedule:
    """When each job of ``trace`` (in its order) started and ended under ``policy`` on ``cluster``."""

    trace: Trace
    cluster: Cluster
    policy: str
    start_s: np.ndarray
    end_s: np.ndarray
    demand: np.ndarray       # GPUs held: the GPUs asked for, or whole nodes for multi-node jobs
    backfilled: np.ndarray   # started while a job ahead of it in the policy's order still waited
    reserved_s: np.ndarray   # first start a reservation promised (EASY: as queue head), NaN if none
    leaves: np.ndarray       # leaf switches a multi-node job spans (0: one node, or no topology)
    num_events: int

    @property
    def wait_s(self) -> np.ndarray:
        return self.start_s - self.trace.submit_s


PolicyFactory = Callable[..., object]


def simulate(trace: Trace, cluster: Cluster, policy: str | PolicyFactory = "easy", **options) -> Schedule:
    """Replay ``trace`` on ``cluster`` under ``policy`` (a name in ``POLICIES`` or a factory)."""
    if isinstance(policy, str):
        if policy not in POLICIES:
            raise ConfigError(f"unknown policy {policy!r}; one of {', '.join(POLICIES)}", key="--policy")
        factory = POLICIES[policy]
    else:
        factory = policy
    trace = trace.limited_to(cluster.num_gpus)
    jobs = Jobs(trace, cluster)
    machine = Machine(cluster)
    scheduler = factory(jobs, machine, **options)
    start, num_events = _run(jobs, machine, scheduler)
    n = jobs.num_jobs
    reserved = np.full(n, np.nan)
    for job, time in scheduler.reserved.items():
        reserved[job] = time
    backfilled = np.zeros(n, dtype=bool)
    backfilled[list(scheduler.backfilled)] = True
    leaves = np.zeros(n, dtype=np.int64)
    for job, count in machine.leaves_used.items():
        leaves[job] = count
    start_s = np.asarray(start)
    arrays = dict(start_s=start_s, end_s=start_s + trace.run_s, demand=jobs.demand_array, backfilled=backfilled,
                  reserved_s=reserved, leaves=leaves)
    for array in arrays.values():
        array.flags.writeable = False
    return Schedule(trace=trace, cluster=cluster, policy=scheduler.name, num_events=num_events, **arrays)


def _run(jobs: Jobs, machine: Machine, scheduler) -> tuple[list[float], int]:
    n = jobs.num_jobs
    submit, run, estimate = jobs.submit, jobs.run, jobs.estimate
    start = [math.nan] * n
    events = EventQueue()
    push, pop, next_time = events.push, events.pop, events.next_time
    if n:
        push(submit[0], SUBMIT, 0)
    wake_at = math.inf
    num_events = 0
    while len(events):
        now = next_time()
        finished = early = False
        while next_time() == now:
            _, kind, job = pop()
            num_events += 1
            if kind == FINISH:
                machine.release(job)
                before_estimate = now < start[job] + estimate[job]
                scheduler.finish(job, now, before_estimate)
                finished = True
                early = early or before_estimate
            elif kind == SUBMIT:
                scheduler.submit(job, now)
                if job + 1 < n:
                    push(submit[job + 1], SUBMIT, job + 1)
            elif now >= wake_at:
                wake_at = math.inf
        for job in scheduler.schedule(now, finished, early):
            start[job] = now
            push(now + run[job], FINISH, job)
        wake = scheduler.wakeup()
        if now < wake < wake_at:
            wake_at = wake
            push(wake, WAKEUP)
    missing = [i for i, s in enumerate(start) if s != s]
    assert not missing, f"jobs never started: {missing[:5]}"
    return start, num_events
