"""The queue of an FCFS backfilling pass, grouped so the first job that fits is found without reading the rest.

A backfill pass asks, again and again, for the first queued job (in submission order, the head excepted) that
fits now and either ends by the head's reservation or needs no more than the GPUs the head leaves spare. Read
one by one, a queue of 650,000 jobs (a 3x overload) makes every pass as long as the queue. Here the waiting jobs
are grouped by demand (GPUs held) and, within a demand, by estimate: a class whose demand fits the spare GPUs
answers with its first job; a class that fits only now answers with the first job among its estimates short
enough, read in ascending order up to the first that is too long. A pass costs O(demands x short estimates)
per job it starts, whatever the queue's depth. Jobs leave lazily: a started job stays in its lists until it
reaches their front. A queue of up to ``SCAN_BELOW`` jobs is read one by one instead (the
same answer, cheaper while short: a trace with exact estimates has a group per job).
"""

from __future__ import annotations

import bisect
from collections import deque

WAITING, HEAD, STARTED = 0, 1, 2
SCAN_BELOW = 2_000   # queued jobs up to which a pass reads the queue one by one (as fast there, and stops early)


class _Demand:
    """The waiting jobs of one demand: in submission order, and by estimate."""

    __slots__ = ("members", "buckets", "estimates")

    def __init__(self) -> None:
        self.members: deque[int] = deque()
        self.buckets: dict[float, deque[int]] = {}
        self.estimates: list[float] = []   # the keys of ``buckets``, ascending

    def add(self, job: int, estimate: float) -> None:
        self.members.append(job)
        bucket = self.buckets.get(estimate)
        if bucket is None:
            self.buckets[estimate] = bucket = deque()
            bisect.insort(self.estimates, estimate)
        bucket.append(job)

    def first(self, state: bytearray) -> int:
        members = self.members
        while members and state[members[0]]:
            members.popleft()
        return members[0] if members else -1

    def first_ending_by(self, state: bytearray, now: float, shadow: float) -> int:
        """The first waiting job whose estimate ends by ``shadow`` if it starts at ``now``, or -1."""
        best = -1
        emptied = False
        for estimate in self.estimates:
            if now + estimate > shadow:
                break
            bucket = self.buckets[estimate]
            while bucket and state[bucket[0]]:
                bucket.popleft()
            if not bucket:
                emptied = True
            elif best < 0 or bucket[0] < best:
                best = bucket[0]
        if emptied:
            for estimate in [e for e in self.estimates if not self.buckets[e]]:
                del self.buckets[estimate]
            self.estimates = [e for e in self.estimates if e in self.buckets]
        return best


class WaitingJobs:
    """Jobs queued in submission order (job index order); ``head`` is the first, -1 when none waits."""

    def __init__(self, demand: list[int], estimate: list[float]):
        self.demand, self.estimate = demand, estimate
        self.state = bytearray(len(demand))   # WAITING, HEAD (held apart from the classes) or STARTED
        self.order: deque[int] = deque()      # every queued job; started ones leave when they reach the front
        self.classes: dict[int, _Demand] = {}
        self.demands: list[int] = []          # the keys of ``classes``, ascending
        self.head = -1
        self.size = 0

    def __len__(self) -> int:
        return self.size

    def add(self, job: int) -> None:
        self.size += 1
        self.order.append(job)
        if self.head < 0:
            self.head = job
            self.state[job] = HEAD
            return
        need = self.demand[job]
        group = self.classes.get(need)
        if group is None:
            self.classes[need] = group = _Demand()
            bisect.insort(self.demands, need)
        group.add(job, self.estimate[job])

    def take(self, job: int) -> None:
        """``job`` starts: it leaves the queue (the next waiting job becomes the head if it was the head)."""
        self.size -= 1
        state = self.state
        state[job] = STARTED
        if job != self.head:
            return
        order = self.order
        while order and state[order[0]] == STARTED:
            order.popleft()
        self.head = order[0] if order else -1
        if self.head >= 0:
            state[self.head] = HEAD

    def first_fit(self, capacity: int, capacity_long: int, now: float, shadow: float) -> int:
        """The first job after the head that needs <= ``capacity`` GPUs and either <= ``capacity_long`` or
        ends by ``shadow`` if started ``now``; -1 if none."""
        if self.size <= SCAN_BELOW:
            return self._scan(capacity, capacity_long, now, shadow)
        best = -1
        state, classes, demands = self.state, self.classes, self.demands
        for index in range(bisect.bisect_right(demands, capacity)):
            need = demands[index]
            group = classes[need]
            job = group.first(state) if need <= capacity_long else group.first_ending_by(state, now, shadow)
            if job >= 0 and (best < 0 or job < best):
                best = job
        return best

    def _scan(self, capacity: int, capacity_long: int, now: float, shadow: float) -> int:
        """``first_fit`` by reading the queue one by one: cheaper than the groups while it is short."""
        order, state, demand, estimate = self.order, self.state, self.demand, self.estimate
        if len(order) > self.size + self.size // 4 + 16:   # drop the started jobs the head has not reached yet
            self.order = order = deque(job for job in order if state[job] != STARTED)
        for job in order:
            if state[job]:
                continue
            need = demand[job]
            if need <= capacity and (need <= capacity_long or now + estimate[job] <= shadow):
                return job
        return -1
