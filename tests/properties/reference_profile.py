"""A deliberately simple availability profile: the bookings as a list, free GPUs summed on demand.

The reference the fast ``clusterplan.sched.profile.Profile`` (step buffers, proofs that a reservation cannot
move) is compared with. Free GPUs on a node at a time are the node's size plus the signed GPUs of every booking
covering that time; the earliest slot is tried at ``now`` and at every booking's end after it (the first
feasible start is one of these: earlier than any other time the same slot would fit an instant sooner), each
node checked at the slot's start and at every booking boundary inside it. Node choice follows the documented
rule: one node, the fullest that fits (fewest GPUs free at the start, lowest number first); whole nodes,
``choose_nodes`` among those free throughout.
"""

from __future__ import annotations

import numpy as np

from clusterplan.sched.machine import choose_nodes
from clusterplan.sched.policies import Conservative


class ReferenceProfile:
    def __init__(self, num_nodes: int, size: int, nodes_per_leaf: int = 0):
        self.num_nodes, self.size, self.leaf = num_nodes, size, nodes_per_leaf
        self.bookings: list[tuple[float, float, tuple[int, ...], int]] = []   # start, end, nodes, signed GPUs
        self.past = -np.inf

    # the interface of ``Profile`` that ``Conservative`` uses ----------------------------------------------------
    def advance(self, now: float) -> None:
        self.past = max(self.past, now)

    def add(self, start: float, end: float, nodes: np.ndarray, per_node: int, sign: int = 1) -> None:
        start = max(start, self.past)
        if end > start:
            self.bookings.append((start, end, tuple(int(n) for n in nodes), sign * per_node))
            assert min(self.free_at(node, time) for node in range(self.num_nodes)
                       for time in self._boundaries(start, end)) >= 0, "a reservation over-books a node"

    def compact(self) -> None:
        pass

    def room(self, now: float) -> "_SearchEverything":
        return _SearchEverything()

    def earliest(self, demand: int, duration: float, now: float, until: float = np.inf):
        return self._earliest(self.bookings, demand, duration, now)

    def earliest_without(self, demand, duration, now, start, nodes, per_node):
        without = self.bookings + [(start, start + duration, tuple(int(n) for n in nodes), per_node)]
        return self._earliest(without, demand, duration, now)

    # the reference itself --------------------------------------------------------------------------------------
    def free_at(self, node: int, time: float, bookings=None) -> int:
        bookings = self.bookings if bookings is None else bookings
        return self.size + sum(delta for start, end, nodes, delta in bookings
                               if start <= time < end and node in nodes)

    def _boundaries(self, start: float, end: float, bookings=None) -> list[float]:
        bookings = self.bookings if bookings is None else bookings
        inside = {t for booking in bookings for t in booking[:2] if start < t < end}
        return [start, *sorted(inside)]

    def _earliest(self, bookings, demand: int, duration: float, now: float):
        size = self.size
        candidates = sorted({now} | {end for _, end, _, _ in bookings if end > now})
        for time in candidates:
            checks = self._boundaries(time, time + duration, bookings)
            lowest = [min(self.free_at(node, t, bookings) for t in checks) for node in range(self.num_nodes)]
            if demand > size:
                whole = np.flatnonzero(np.array(lowest) == size)
                if whole.size >= demand // size:
                    return time, choose_nodes(whole, demand // size, self.leaf), size
                continue
            fits = [node for node in range(self.num_nodes) if lowest[node] >= demand]
            if fits:
                at_start = [self.free_at(node, time, bookings) for node in fits]
                return time, np.array([fits[int(np.argmin(at_start))]]), demand
        raise AssertionError("a job that fits the cluster always fits after the last booking")


class ReferenceConservative(Conservative):
    """Conservative backfilling on the reference profile: every reservation searched in full at each compression."""

    def __init__(self, jobs, machine, **options):
        super().__init__(jobs, machine, **options)
        self.profile = ReferenceProfile(machine.num_nodes, machine.size, machine.placement_leaf)


class _SearchEverything:
    """A ``Room`` that proves nothing: every reservation gets the full search."""

    reach = [np.inf]

    def step_before(self, start: float) -> int:
        return 0

    def can_move_earlier(self, step: int, demand: int, duration: float, start: float) -> bool:
        return True
