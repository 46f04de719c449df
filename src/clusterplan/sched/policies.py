"""Scheduling policies as plug-ins behind one small interface.

A policy is built per run as ``factory(jobs, machine, **options)`` and is told
what happens (``submit``, ``finish``); once per instant the engine asks
``schedule(now, finished, early)`` for the jobs to start now (the policy has
already placed them on ``machine``) and ``wakeup()`` for the next time it
wants to be asked without an event (``inf``: never). It keeps ``reserved``
(job -> first start a reservation promised it) and ``backfilled`` (jobs
started ahead of a job that precedes them in its order).

* FIFO/FCFS: start jobs in submission order while the head fits; never skip.
* EASY (``easy.py``; Lifka 1995; Mu'alem & Feitelson 2001): when the head does not fit,
  reserve for it the earliest time it would, if running jobs end at their
  requested times (the "shadow time") and on the nodes it would take then;
  a later job may start now if it fits now and either ends by the shadow time
  by its own request or uses only GPUs the head will not need then. So the head
  starts no later than its reservation; other queued jobs have no guarantee.
* Conservative backfilling: every queued job gets a reservation, in
  submission order, at the earliest time and place it fits without disturbing
  earlier reservations; a job starts when its reservation comes. Only the first
  ``BACKFILL_DEPTH`` queued jobs hold one; a job past them gets its own when
  one of them starts (so every job has one before it can start). When a job
  ends before its request the reservations are compressed, in order, each to
  its earliest slot, never later than before: no job starts after the
  reservation it was given at submission.
* Fair-share (``priority.py``): SLURM-multifactor priority order with EASY
  backfilling for the top job.
"""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque
from typing import Protocol

import numpy as np

from clusterplan.sched.easy import BACKFILL_DEPTH, Easy
from clusterplan.sched.machine import Machine
from clusterplan.sched.priority import FairShare
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


class Conservative:
    """Conservative backfilling: a reservation for each of the first ``depth`` queued jobs, in submission order.

    A job submitted while ``depth`` jobs hold reservations waits, without one, until one of them starts; it then
    gets its reservation, the earliest slot in the profile as it is then (the rule of ``docs/scheduling.md``).
    """

    name = "conservative"

    def __init__(self, jobs, machine: Machine, depth: int = BACKFILL_DEPTH):
        self.jobs, self.machine, self.depth = jobs, machine, depth
        self.profile = Profile(machine.num_nodes, machine.size, machine.placement_leaf)
        self.queue: dict[int, None] = {}     # insertion-ordered: submission order; the jobs holding reservations
        self.waiting: deque[int] = deque()   # queued past the depth: no reservation yet
        self.plan: dict[int, tuple[float, np.ndarray, int]] = {}   # queued or running: start, nodes, GPUs/node
        self.starts: list[tuple[float, int, int]] = []             # (start, sequence, job), stale entries skipped
        self.sequence = itertools.count()
        self.reserved: dict[int, float] = {}
        self.backfilled: set[int] = set()
        self.compress = False

    def submit(self, job: int, now: float) -> None:
        if len(self.queue) >= self.depth or self.waiting:
            self.waiting.append(job)
            return
        self.profile.advance(now)
        self._admit(job, now)

    def _admit(self, job: int, now: float) -> None:
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
        room = None                                       # read when first needed, again after each move
        for job in self.queue:
            start, nodes, per_node = plan[job]
            if start <= now:
                continue
            room = room or profile.room(now)
            step = room.step_before(start)
            end = start + estimate[job]
            # A reservation that cannot begin earlier (no step before it has room even for an instant, or
            # Room's exact test) keeps its start but still takes the nodes the full search gives there: the
            # GPUs given back since it was placed may make other nodes the rule's choice (issue 31).
            if step >= 0 and room.reach[step] >= demand[job] and room.can_move_earlier(
                    step, demand[job], estimate[job], start):
                slot = profile.earliest_without(demand[job], estimate[job], now, start, nodes, per_node)
            else:
                slot = profile.same_start(demand[job], start, estimate[job], nodes, per_node)
            if slot[0] == start and np.array_equal(slot[1], nodes):
                continue                                  # its own slot is still its earliest: nothing to change
            profile.add(start, end, nodes, per_node)
            self._take(job, slot)
            moved, placed, _ = plan[job]
            assert moved <= start, "compression never delays a reservation"
            room = None
        profile.compact()

    def wakeup(self) -> float:
        return self.starts[0][0] if self.starts else math.inf

    def _book(self, job: int, now: float, until: float = math.inf) -> None:
        self._take(job, self.profile.earliest(self.jobs.demand[job], self.jobs.estimate[job], now, until))

    def _take(self, job: int, slot: tuple[float, np.ndarray, int]) -> None:
        start, nodes, per_node = slot
        self.profile.add(start, start + self.jobs.estimate[job], nodes, per_node, sign=-1)
        self.plan[job] = (start, nodes, per_node)
        heapq.heappush(self.starts, (start, next(self.sequence), job))

    def _start_due(self, now: float) -> list[int]:
        starts, queue, plan, machine, waiting = self.starts, self.queue, self.plan, self.machine, self.waiting
        started = []
        while starts and starts[0][0] <= now or waiting and len(queue) < self.depth:
            if not (starts and starts[0][0] <= now):   # room in the window: the oldest waiting job reserves
                self._admit(waiting.popleft(), now)
                continue
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


POLICIES = {"fifo": Fifo, "easy": Easy, "conservative": Conservative, "fairshare": FairShare}
