"""EASY backfilling (Lifka 1995; Mu'alem & Feitelson 2001), the policy fair-share extends.

When the head of the queue does not fit, reserve for it the earliest time it
would, if running jobs end at their requested times (the "shadow time"), and
on the nodes it would take then; a later job may start now if it fits now and
either ends by the shadow time by its own request or uses only GPUs the head
will not need then. So the head starts no later than its reservation; other
queued jobs have no guarantee. The queue is in submission order here; the
order hooks let ``priority.FairShare`` keep it in priority order instead.

``Easy`` (first come, first served) keeps its queue in ``waiting.WaitingJobs``, grouped by
demand and estimate, so a pass finds each job it starts without reading the others: unbounded
EASY at any queue depth. ``Backfill``, the base fair-share extends with a priority order, reads
its queue list one by one and looks at the first ``BACKFILL_DEPTH`` queued jobs only, as
production schedulers bound it (Slurm's ``bf_max_job_test``). No trace in shared/data queues
that many jobs, so fair-share's results there are those of unbounded EASY.
"""

from __future__ import annotations

import math
from itertools import islice

import numpy as np

from clusterplan.sched.machine import Machine
from clusterplan.sched.waiting import WaitingJobs

BACKFILL_DEPTH = 2_000   # queued jobs a backfill pass considers; the deepest queue of the traces shipped is 1,767


class Backfill:
    """EASY backfilling over a queue list in any order (fair-share keeps it in priority order): one reservation,
    for the head; a pass reads the first ``BACKFILL_DEPTH`` queued jobs one by one."""

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
        if self.queue and not finished and self.head == self.queue[0] and len(self.queue) <= BACKFILL_DEPTH:
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
        if self.capacity <= 0:   # nothing can start: every pass stops here before reading the rest
            return
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
        for index, job in enumerate(islice(queue, begin, BACKFILL_DEPTH), begin):
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


class Easy(Backfill):
    """EASY backfilling in submission order, at any queue depth: the queue is a ``WaitingJobs``."""

    def __init__(self, jobs, machine: Machine):
        super().__init__(jobs, machine)
        self.waiting = WaitingJobs(jobs.demand, jobs.estimate)

    def submit(self, job: int, now: float) -> None:
        self.waiting.add(job)
        self.fresh.append(job)

    def schedule(self, now: float, finished: bool, early: bool) -> list[int]:
        started: list[int] = []
        fresh, self.fresh = self.fresh, []
        if not finished and self.head >= 0 and self.head == self.waiting.head:
            # nothing ended and the head is the same: the capacities stand, and every job queued before the last
            # pass failed against this reservation then (now only later), so only the new jobs can fit
            for job in fresh:
                if self.capacity > 0 and self._fits(job, now):
                    self._backfill(job, now, started)
            return started
        self._start_heads(now, started)
        if self.waiting.head < 0:
            self.head = -1
            return started
        if self.head != self.waiting.head:
            self._reserve(self.waiting.head, now)
        self._refresh()
        while self.capacity > 0:
            job = self.waiting.first_fit(self.capacity, self.capacity_long, now, self.shadow)
            if job < 0:
                break
            self._backfill(job, now, started)
        return started

    def _start_heads(self, now: float, started: list[int]) -> None:
        waiting, demand, machine = self.waiting, self.jobs.demand, self.machine
        capacity = machine.capacity()
        while waiting.head >= 0 and demand[waiting.head] <= capacity:
            job = waiting.head
            self._start(job, now)
            waiting.take(job)
            started.append(job)
            capacity = machine.capacity()

    def _fits(self, job: int, now: float) -> bool:
        need = self.jobs.demand[job]
        return (job != self.head and need <= self.capacity
                and (need <= self.capacity_long or now + self.jobs.estimate[job] <= self.shadow))

    def _backfill(self, job: int, now: float, started: list[int]) -> None:
        if now + self.jobs.estimate[job] <= self.shadow:   # ends by the head's reservation
            self._start(job, now)
        else:                                               # uses only GPUs the head leaves spare
            self._start(job, now, self.usable)
        self.waiting.take(job)
        started.append(job)
        self.backfilled.add(job)
        self._refresh()
