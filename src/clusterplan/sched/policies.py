"""Scheduling policies as plug-ins behind one small interface.

A policy is built per run as ``factory(jobs, machine, **options)`` and is told
what happens (``submit``, ``finish``); once per instant the engine asks
``schedule(now, finished, early)`` for the jobs to start now (the policy has
already placed them on ``machine``) and ``wakeup()`` for the next time it
wants to be asked without an event (``inf``: never). It keeps ``reserved``
(job -> first start a reservation promised it) and ``backfilled`` (jobs
started ahead of a job that precedes them in its order).

* FIFO/FCFS: start jobs in submission order while the head fits; never skip.
* EASY (Lifka 1995; Mu'alem & Feitelson 2001): when the head does not fit,
  reserve for it the earliest time it would, if running jobs end at their
  requested times (the "shadow time") and on the nodes it would take then;
  a later job may start now if it fits now and either ends by the shadow time
  by its own request or uses only GPUs the head will not need then. So the head
  starts no later than its reservation; other queued jobs have no guarantee.
* Conservative backfilling: every queued job gets a reservation, in
  submission order, at the earliest time and place it fits without disturbing
  earlier reservations; a job starts when its reservation comes. When a job
  ends before its request the reservations are compressed, in order, each to
  its earliest slot, never later than before: no job starts after the
  reservation it was given at submission.
* Fair-share (``priority.py``): SLURM-multifactor priority order with EASY
  backfilling for the top job.
"""

from __future__ import annotations

import bisect
import heapq
import itertools
import math
from collections import deque
from itertools import islice
from typing import Protocol

import numpy as np

from clusterplan.sched.machine import Machine
from clusterplan.sched.profile import Profile


class Policy(Protocol):
    name: str
    reserved: dict[int, float]
    backfilled: set[int]

    def submit(self, job: int, now: float) -> None: ...
    def finish(self, job: int, now: float, early: bool) -> None: ...
    def schedule(self, now: float, finished: bool, early: bool) -> list[int]: ...
    def wakeup(self) -> float: ...


class Fifo:
    """First come, first served: the head blocks everything behind it."""

    name = "fifo"

    def __init__(self, jobs, machine: Machine):
        self.jobs, self.machine = jobs, machine
        self.queue: deque[int] = deque()
        self.reserved: dict[int, float] = {}
        self.backfilled: set[int] = set()

    def submit(self, job: int, now: float) -> None:
        self.queue.append(job)

    def finish(self, job: int, now: float, early: bool) -> None:
        pass

    def schedule(self, now: float, finished: bool, early: bool) -> list[int]:
        queue, machine, demand, estimate = self.queue, self.machine, self.jobs.demand, self.jobs.estimate
        started = []
        capacity = machine.capacity()
        while queue and demand[queue[0]] <= capacity:
            job = queue.popleft()
            nodes, per_node = machine.place(demand[job])
            machine.start(job, nodes, per_node, now + estimate[job])
            started.append(job)
            capacity = machine.capacity()
        return started

    def wakeup(self) -> float:
        return math.inf


class Easy:
    """EASY backfilling: one reservation, for the head of the queue (FCFS order here)."""

    name = "easy"

    def __init__(self, jobs, machine: Machine):
        self.jobs, self.machine = jobs, machine
        self.queue: list[int] = []
        self.fresh: list[int] = []          # submitted since the last pass
        self.reserved: dict[int, float] = {}
        self.backfilled: set[int] = set()
        self.head = -1                      # the job the reservation below is for
        self.shadow = math.inf
        self.spare = np.zeros(0, dtype=np.int64)  # GPUs per node free at the shadow time, beyond the head's
        self.usable = self.spare
        self.capacity = self.capacity_long = 0

    # order hooks (fair-share overrides) -------------------------------------------------------------------
    def enqueue(self, job: int, now: float) -> None:
        self.queue.append(job)

    def reorder(self, now: float) -> None:
        pass

    def started(self, job: int, now: float) -> None:
        pass

    # the interface -----------------------------------------------------------------------------------------
    def submit(self, job: int, now: float) -> None:
        self.enqueue(job, now)
        self.fresh.append(job)

    def finish(self, job: int, now: float, early: bool) -> None:
        if early:
            self.head = -1

    def schedule(self, now: float, finished: bool, early: bool) -> list[int]:
        self.reorder(now)
        fresh, self.fresh = self.fresh, []
        if self.queue and not finished and self.head == self.queue[0]:
            return self._backfill_fresh(fresh, now)
        return self._pass(now)

    def wakeup(self) -> float:
        return math.inf

    # the work ----------------------------------------------------------------------------------------------
    def _start(self, job: int, now: float, avail: np.ndarray | None = None) -> None:
        nodes, per_node = self.machine.place(self.jobs.demand[job], avail)
        self.machine.start(job, nodes, per_node, now + self.jobs.estimate[job])
        self.started(job, now)
        if avail is not None:
            self.spare[nodes] -= per_node

    def _pass(self, now: float) -> list[int]:
        queue, machine, demand = self.queue, self.machine, self.jobs.demand
        started: list[int] = []
        capacity = machine.capacity()
        first = 0
        while first < len(queue) and demand[queue[first]] <= capacity:
            self._start(queue[first], now)
            started.append(queue[first])
            first += 1
            capacity = machine.capacity()
        if first:
            del queue[:first]
        if not queue:
            self.head = -1
            return started
        if self.head != queue[0]:
            self._reserve(queue[0], now)
        self._refresh()
        self.queue = self._scan(queue, 1, now, started)
        return started

    def _reserve(self, head: int, now: float) -> None:
        machine = self.machine
        shadow, nodes, per_node = machine.earliest(self.jobs.demand[head], now)
        spare = machine.free_at(shadow)
        spare[nodes] -= per_node
        self.head, self.shadow, self.spare = head, shadow, spare
        self.reserved.setdefault(head, shadow)

    def _refresh(self) -> None:
        machine = self.machine
        if machine.num_nodes == 1:  # one node (or a folded pool): plain numbers; place() needs no array
            self.capacity = free = int(machine.free[0])
            self.capacity_long = min(free, int(self.spare[0]))
            self.usable = self.spare
            return
        self.capacity = machine.capacity()
        self.usable = np.minimum(machine.free, self.spare)
        self.capacity_long = Machine.capacity_of(self.usable, machine.size)

    def _scan(self, queue: list[int], begin: int, now: float, started: list[int]) -> list[int]:
        """Backfill ``queue[begin:]`` in order; return the queue without the jobs started."""
        demand, estimate = self.jobs.demand, self.jobs.estimate
        capacity, capacity_long = self.capacity, self.capacity_long
        shadow = self.shadow
        taken: list[int] = []
        if capacity <= 0:
            return queue
        for index, job in enumerate(islice(queue, begin, None), begin):
            need = demand[job]
            if need > capacity:
                continue
            if now + estimate[job] <= shadow:   # ends by the head's reservation
                self._start(job, now)
            elif need <= capacity_long:
                self._start(job, now, self.usable)
            else:
                continue
            taken.append(index)
            started.append(job)
            self.backfilled.add(job)
            self._refresh()
            capacity, capacity_long = self.capacity, self.capacity_long
            if capacity <= 0:
                break
        for index in reversed(taken):
            del queue[index]
        return queue

    def _backfill_fresh(self, fresh: list[int], now: float) -> list[int]:
        """Only new jobs can start when nothing ended: the rest failed against the same reservation."""
        started: list[int] = []
        demand, estimate = self.jobs.demand, self.jobs.estimate
        for job in fresh:
            need = demand[job]
            if need > self.capacity or job == self.head:
                continue
            if now + estimate[job] <= self.shadow:
                self._start(job, now)
            elif need <= self.capacity_long:
                self._start(job, now, self.usable)
            else:
                continue
            self.queue.remove(job)
            started.append(job)
            self.backfilled.add(job)
            self._refresh()
        return started


class Conservative:
    """Conservative backfilling: a reservation for every queued job, in submission order."""

    name = "conservative"

    def __init__(self, jobs, machine: Machine):
        self.jobs, self.machine = jobs, machine
        self.profile = Profile(machine.num_nodes, machine.size, machine.placement_leaf)
        self.queue: dict[int, None] = {}     # insertion-ordered: submission order
        self.plan: dict[int, tuple[float, np.ndarray, int]] = {}   # queued or running: start, nodes, GPUs/node
        self.starts: list[tuple[float, int, int]] = []             # (start, sequence, job), stale entries skipped
        self.sequence = itertools.count()
        self.reserved: dict[int, float] = {}
        self.backfilled: set[int] = set()
        self.compress = False

    def submit(self, job: int, now: float) -> None:
        self.profile.advance(now)
        self._book(job, now)
        self.reserved[job] = self.plan[job][0]
        self.queue[job] = None

    def finish(self, job: int, now: float, early: bool) -> None:
        start, nodes, per_node = self.plan.pop(job)
        if early:
            self.profile.advance(now)
            self.profile.add(now, start + self.jobs.estimate[job], nodes, per_node)
            self.compress = True

    def schedule(self, now: float, finished: bool, early: bool) -> list[int]:
        self.profile.advance(now)
        if self.compress:
            self.compress = False
            self._compress(now)
        return self._start_due(now)

    def _compress(self, now: float) -> None:
        """Move each queued reservation, in order, to its earliest slot (never later than it was)."""
        profile, plan, demand, estimate = self.profile, self.plan, self.jobs.demand, self.jobs.estimate
        times, reach = profile.reach()
        for job in self.queue:
            start, nodes, per_node = plan[job]
            if start <= now:
                continue
            step = bisect.bisect_left(times, start) - 1   # the last step that begins before the reservation
            if step < 0 or reach[step] < demand[job]:
                continue                                  # fits nowhere earlier, even for an instant
            end = start + estimate[job]
            profile.add(start, end, nodes, per_node)
            self._book(job, now, until=end)
            moved, placed, _ = plan[job]
            assert moved <= start, "compression never delays a reservation"
            if moved < start or not np.array_equal(placed, nodes):
                times, reach = profile.reach()
        profile.compact()

    def wakeup(self) -> float:
        return self.starts[0][0] if self.starts else math.inf

    def _book(self, job: int, now: float, until: float = math.inf) -> None:
        duration = self.jobs.estimate[job]
        start, nodes, per_node = self.profile.earliest(self.jobs.demand[job], duration, now, until)
        self.profile.add(start, start + duration, nodes, per_node, sign=-1)
        self.plan[job] = (start, nodes, per_node)
        heapq.heappush(self.starts, (start, next(self.sequence), job))

    def _start_due(self, now: float) -> list[int]:
        starts, queue, plan, machine = self.starts, self.queue, self.plan, self.machine
        started = []
        while starts and starts[0][0] <= now:
            start, _, job = heapq.heappop(starts)
            if job not in queue or plan[job][0] != start:
                continue  # stale: the job started, or its reservation moved
            _, nodes, per_node = plan[job]
            machine.start(job, nodes, per_node, now + self.jobs.estimate[job])
            del queue[job]
            started.append(job)
        if started and queue:
            first = next(iter(queue))
            self.backfilled.update(job for job in started if job > first)
        return started


def _fairshare(jobs, machine, **options):
    from clusterplan.sched.priority import FairShare

    return FairShare(jobs, machine, **options)


POLICIES = {"fifo": Fifo, "easy": Easy, "conservative": Conservative, "fairshare": _fairshare}
