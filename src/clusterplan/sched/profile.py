"""Availability profile for conservative backfilling: free GPUs per node, as a step function of time.

``times[i]`` starts a step that lasts until ``times[i + 1]`` (the last step lasts
for ever); ``free[i, n]`` is what node ``n`` has free during it, counting every
running job until its requested end and every reservation. This is SLURM's
backfill "node space map" with GPU counts instead of node bitmaps. Steps are
split where a reservation begins or ends and dropped once they are past.

The earliest slot for a job of ``duration`` is found for every step at once:
mark the steps where a node could hold the job, take for each (step, node)
the first step after it where it could not (a reversed running minimum), and
keep the (step, node) pairs whose run of good steps lasts ``duration``.
"""

from __future__ import annotations

import numpy as np

from clusterplan.sched.machine import choose_nodes


class Profile:
    def __init__(self, num_nodes: int, size: int, nodes_per_leaf: int = 0):
        self.size, self.leaf = size, nodes_per_leaf
        self.times = np.array([-np.inf])
        self.free = np.full((1, num_nodes), size, dtype=np.int64)

    def advance(self, now: float) -> None:
        """Forget the steps that ended by ``now``."""
        times = self.times
        if times.size > 1 and times[1] <= now:
            first = int(np.searchsorted(times, now, side="right")) - 1
            self.times, self.free = times[first:], self.free[first:]

    def reach(self) -> tuple[list[float], list[int]]:
        """Step start times and, for each step, the largest demand that fits in some step up to it:
        a job that fits in no step before its reservation cannot move earlier (a cheap test)."""
        free, size = self.free, self.size
        whole = np.count_nonzero(free == size, axis=1)
        capacity = np.where(whole > 0, whole * size, free.max(axis=1))
        return self.times.tolist(), np.maximum.accumulate(capacity).tolist()

    def compact(self) -> None:
        """Merge steps equal to the one before (left behind where reservations were given back)."""
        free = self.free
        if free.shape[0] > 1:
            keep = np.ones(free.shape[0], dtype=bool)
            keep[1:] = (free[1:] != free[:-1]).any(axis=1)
            if not keep.all():
                self.times, self.free = self.times[keep], free[keep]

    def _split(self, time: float) -> int:
        index = int(np.searchsorted(self.times, time))
        if index < self.times.size and self.times[index] == time:
            return index
        self.times = np.insert(self.times, index, time)
        self.free = np.insert(self.free, index, self.free[index - 1], axis=0)
        return index

    def add(self, start: float, end: float, nodes: np.ndarray, per_node: int, sign: int = 1) -> None:
        """Give back (``sign`` 1) or take (``sign`` -1) ``per_node`` GPUs on ``nodes`` over [start, end)."""
        start = max(start, float(self.times[0]))
        if end <= start:
            return
        first = self._split(start)
        last = self._split(end)
        self.free[first:last, nodes] += sign * per_node
        if sign < 0:
            assert self.free[first:last, nodes].min() >= 0, "a reservation over-books a node"

    def earliest_without(self, demand: int, duration: float, now: float, start: float, nodes: np.ndarray,
                         per_node: int) -> tuple[float, np.ndarray, int]:
        """``earliest(demand, duration, now, until=start + duration)`` as if the reservation of ``per_node`` GPUs
        on ``nodes`` over [start, start + duration) were given back, without changing the profile: the steps
        before its end are copied (split at its start where that is no step boundary) and its GPUs added."""
        end = start + duration
        cut = int(np.searchsorted(self.times, end))          # the steps that begin before its end
        times, free = self.times[:cut], self.free[:cut]
        first = int(np.searchsorted(times, start))
        if first < times.size and times[first] == start:
            free = free.copy()
        else:
            times = np.concatenate((times[:first], [start], times[first:]))
            free = np.concatenate((free[:first], free[first - 1:]))   # the row before, repeated from ``start``
        free[first:, nodes] += per_node
        return self._search(times, free, end, demand, duration, now)

    def earliest(self, demand: int, duration: float, now: float,
                 until: float = np.inf) -> tuple[float, np.ndarray, int]:
        """First start >= ``now`` (and the nodes, GPUs per node) where ``demand`` fits for ``duration``.

        ``until``: the caller knows the job fits ending by then (its old slot), so later steps are not read.
        """
        times, free = self.times, self.free
        horizon = np.inf
        cut = int(np.searchsorted(times, until)) if until < np.inf else times.size
        if cut < times.size:
            horizon = float(times[cut])
            times, free = times[:cut], free[:cut]
        return self._search(times, free, horizon, demand, duration, now)

    def _search(self, times: np.ndarray, free: np.ndarray, horizon: float, demand: int, duration: float,
                now: float) -> tuple[float, np.ndarray, int]:
        """``earliest`` over the steps ``times`` (free GPUs ``free``), the last of which lasts until ``horizon``."""
        size = self.size
        steps = times.size
        whole = demand > size
        good = free == size if whole else free >= demand
        index = np.arange(steps)[:, None]
        blocked = np.where(good, steps, index)
        run_end = np.minimum.accumulate(blocked[::-1], axis=0)[::-1]
        ends = np.append(times, horizon)[run_end]
        starts = np.maximum(times, now)
        fits = ends >= (starts + duration)[:, None]
        if whole:
            count = demand // size
            step = int(np.argmax(np.count_nonzero(fits, axis=1) >= count))
            nodes = choose_nodes(np.flatnonzero(fits[step]), count, self.leaf)
            return float(starts[step]), nodes, size
        step = int(np.argmax(fits.any(axis=1)))
        candidates = np.flatnonzero(fits[step])
        node = candidates[np.argmin(free[step, candidates])]
        return float(starts[step]), node.reshape(1), demand
