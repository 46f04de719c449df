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

import bisect

import numpy as np

from clusterplan.sched.machine import choose_nodes


class Profile:
    """The steps live in buffers with spare rows at both ends: dropping past steps moves an offset, and a split
    shifts the later rows by one in place (no new arrays), so a change costs O(steps after it), not O(steps)."""

    def __init__(self, num_nodes: int, size: int, nodes_per_leaf: int = 0):
        self.size, self.leaf = size, nodes_per_leaf
        self._times = np.full(16, np.inf)
        self._free = np.full((16, num_nodes), size, dtype=np.int64)
        self._times[0] = -np.inf
        self._first, self._end = 0, 1      # the live steps are rows [_first, _end) of the buffers

    @property
    def times(self) -> np.ndarray:
        return self._times[self._first:self._end]

    @property
    def free(self) -> np.ndarray:
        return self._free[self._first:self._end]

    def _replace(self, times: np.ndarray, free: np.ndarray) -> None:
        """Make ``times``/``free`` the live steps (copied into the buffers, grown if needed)."""
        steps = times.size
        if steps + 1 > self._times.size or self._times.size > max(64, 8 * steps):
            capacity = max(16, 2 * (steps + 1))
            self._times = np.full(capacity, np.inf)
            self._free = np.empty((capacity, free.shape[1]), dtype=np.int64)
        self._times[:steps] = times
        self._free[:steps] = free
        self._first, self._end = 0, steps

    def advance(self, now: float) -> None:
        """Forget the steps that ended by ``now``."""
        times = self.times
        if times.size > 1 and times[1] <= now:
            self._first += int(np.searchsorted(times, now, side="right")) - 1

    def room(self, now: float) -> "Room":
        """The tests of ``Room`` on the profile as it is now (valid until it next changes)."""
        return Room(self, now)

    def same_start(self, demand: int, start: float, duration: float, nodes: np.ndarray,
                   per_node: int) -> tuple[float, np.ndarray, int]:
        """``earliest_without(...)`` for a reservation ``Room.can_move_earlier`` proved cannot begin before
        ``start``: the nodes it would take at ``start``, read from the steps over [start, start + duration) only."""
        size = self.size
        first = int(np.searchsorted(self.times, start, side="right")) - 1   # the step ``start`` lies in
        cut = int(np.searchsorted(self.times, start + duration))           # the steps that begin before its end
        lowest = self.free[first:cut].min(axis=0)
        lowest[nodes] += per_node
        if demand > size:
            return start, choose_nodes(np.flatnonzero(lowest == size), demand // size, self.leaf), size
        at_start = self.free[first].copy()
        at_start[nodes] += per_node
        candidates = np.flatnonzero(lowest >= demand)
        return start, candidates[np.argmin(at_start[candidates])].reshape(1), demand

    def compact(self) -> None:
        """Merge steps equal to the one before (left behind where reservations were given back)."""
        free = self.free
        if free.shape[0] > 1:
            keep = np.ones(free.shape[0], dtype=bool)
            keep[1:] = (free[1:] != free[:-1]).any(axis=1)
            if not keep.all():
                self._replace(self.times[keep], free[keep])

    def _split(self, time: float) -> int:
        """The index (among the live steps) of the step that begins at ``time``, made if there is none."""
        times = self.times
        index = int(np.searchsorted(times, time))
        if index < times.size and times[index] == time:
            return index
        if self._end == self._times.size:   # no spare row at the end: copy the live steps to the buffers' start
            self._replace(times.copy(), self.free.copy())
        at, end = self._first + index, self._end
        self._times[at + 1:end + 1] = self._times[at:end]
        self._free[at + 1:end + 1] = self._free[at:end]   # overlapping: numpy copies through a buffer
        self._times[at] = time
        self._free[at] = self._free[at - 1]
        self._end = end + 1
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
        """``earliest`` over the steps ``times`` (free GPUs ``free``), the last of which lasts until ``horizon``.

        Steps that ended by ``now`` are left out: one can remain when GPUs were given back from ``now`` on without
        an ``advance(now)`` since, and its row (free GPUs before ``now``) must not choose the node at ``now``."""
        first = int(np.searchsorted(times, now, side="right")) - 1
        if first > 0:
            times, free = times[first:], free[first:]
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


class Room:
    """Exact tests, read from one step per reservation, that a reservation cannot begin earlier than it does.

    A slot [t, t + duration) with t before a reservation's start either runs on into the start, so it is free for
    the job in the step just before the start (``whole``/``most`` GPUs free there), or ends by the start, so as many
    nodes as it takes each have a run of steps with room for it lasting ``duration`` that begins before the start
    (``_longest``, a prefix maximum over steps). Both read only steps before the start, where the
    reservation itself holds nothing, so giving it back changes neither.
    """

    def __init__(self, profile: Profile, now: float):
        self.profile, self.now = profile, now
        free, size = profile.free, profile.size
        self.times = profile.times.tolist()
        self.whole = np.count_nonzero(free == size, axis=1)
        self.most = free.max(axis=1)
        capacity = np.where(self.whole > 0, self.whole * size, self.most)
        self.reach = np.maximum.accumulate(capacity).tolist()
        self.longest: dict[tuple[int, int], np.ndarray] = {}

    def _longest(self, fit: int, count: int) -> np.ndarray:
        """For each step, the longest time ``count`` nodes (each with ``fit`` GPUs free) all stay free from a step
        that begins by it: the ``count``-th longest run of such steps among the nodes, a prefix maximum."""
        if (fit, count) not in self.longest:
            times, free = self.profile.times, self.profile.free
            steps = times.size
            index = np.arange(steps)[:, None]
            run_end = np.minimum.accumulate(np.where(free >= fit, steps, index)[::-1], axis=0)[::-1]
            runs = np.append(times, np.inf)[run_end] - np.maximum(times, self.now)[:, None]
            nth = -np.partition(-runs, count - 1, axis=1)[:, count - 1] if count > 1 else runs.max(axis=1)
            self.longest[fit, count] = np.maximum.accumulate(nth)
        return self.longest[fit, count]

    def step_before(self, start: float) -> int:
        """The last step that begins before ``start`` (-1: none)."""
        return bisect.bisect_left(self.times, start) - 1

    def can_move_earlier(self, step: int, demand: int, duration: float, start: float) -> bool:
        size = self.profile.size
        if demand > size:
            if self.whole[step] >= demand // size:
                return True
        elif self.most[step] >= demand:
            return True
        slack = 1e-9 * (abs(start) + duration + 1.0)   # rounding: a run read as a hair short is still searched
        return bool(self._longest(min(demand, size), max(demand // size, 1))[step] >= duration - slack)
