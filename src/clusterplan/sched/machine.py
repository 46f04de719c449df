"""The cluster as the scheduler sees it: nodes of GPUs, optionally grouped under leaf switches.

Jobs ask for GPUs. A job of up to one node's GPUs runs on one node (the
fullest node that fits: best fit, to keep whole nodes free); a larger job gets
``ceil(gpus / gpus_per_node)`` whole nodes. With ``nodes_per_leaf`` set,
multi-node jobs prefer nodes under one leaf switch (the leaf with the fewest
free nodes that still holds the job), else the fewest leaves.

Each GPU slot holds the *estimated* end of the job on it (-inf when free), so
"when will g GPUs be free on one node" is the g-th smallest slot of a row and
"when will a node be whole" is the row's maximum: EASY's reservation is two
numpy reductions. A cluster of one-GPU nodes (an SWF processor trace) is
folded into one node of N slots: identical schedules, far less work.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clusterplan.schema import FROZEN, check

FREE = -np.inf


@dataclass(**FROZEN)
class Cluster:
    """What the scheduler allocates: ``num_nodes`` x ``gpus_per_node``.

    ``nodes_per_leaf`` (0 = unknown) counts the leaf switches each multi-node job spans;
    with ``topology_aware`` placement also prefers one leaf.
    """

    num_nodes: int
    gpus_per_node: int
    nodes_per_leaf: int = 0
    topology_aware: bool = False

    def __post_init__(self) -> None:
        check(self.num_nodes >= 1, "num_nodes", f"must be >= 1, got {self.num_nodes}")
        check(self.gpus_per_node >= 1, "gpus_per_node", f"must be >= 1, got {self.gpus_per_node}")
        check(self.nodes_per_leaf >= 0, "nodes_per_leaf", f"must be >= 0, got {self.nodes_per_leaf}")
        check(self.nodes_per_leaf > 0 or not self.topology_aware, "nodes_per_leaf",
              "topology-aware placement needs the leaf size (nodes_per_leaf > 0)")

    @property
    def num_gpus(self) -> int:
        return self.num_nodes * self.gpus_per_node

    def demand(self, gpus: np.ndarray) -> np.ndarray:
        """GPUs a job holds: what it asks for on one node, or whole nodes beyond that."""
        g = self.gpus_per_node
        return np.where(gpus <= g, gpus, -(-gpus // g) * g).astype(np.int64)


class Machine:
    """Mutable allocation state of one simulation run (never shared between runs)."""

    def __init__(self, cluster: Cluster):
        fold = cluster.gpus_per_node == 1 and not cluster.topology_aware
        self.num_nodes = 1 if fold else cluster.num_nodes
        self.size = cluster.num_nodes if fold else cluster.gpus_per_node  # GPU slots per (internal) node
        self.leaf = 0 if fold else cluster.nodes_per_leaf                 # for counting leaves spanned
        self.placement_leaf = cluster.nodes_per_leaf if cluster.topology_aware else 0
        self.free = np.full(self.num_nodes, self.size, dtype=np.int64)
        self.slot_end = np.full((self.num_nodes, self.size), FREE)
        self.num_whole = self.num_nodes      # nodes with every slot free
        self.held: dict[int, tuple[np.ndarray, int, np.ndarray | None]] = {}
        self.leaves_used: dict[int, int] = {}

    # what fits ---------------------------------------------------------------------------------------------
    def capacity(self) -> int:
        """Largest demand that fits now: whole free nodes if any, else the freest node."""
        if self.num_whole:
            return self.size * self.num_whole
        return int(self.free.max()) if self.num_nodes > 1 else int(self.free[0])

    @staticmethod
    def capacity_of(avail: np.ndarray, size: int) -> int:
        whole = int(np.count_nonzero(avail == size))
        return size * whole if whole else int(avail.max())

    # placement ---------------------------------------------------------------------------------------------
    def place(self, demand: int, avail: np.ndarray | None = None) -> tuple[np.ndarray, int]:
        """Nodes and GPUs per node for ``demand`` within ``avail`` (default: what is free now)."""
        avail = self.free if avail is None else avail
        size = self.size
        if demand <= size:
            if self.num_nodes == 1:
                return np.zeros(1, dtype=np.int64), demand
            fits = np.flatnonzero(avail >= demand)
            return fits[np.argmin(avail[fits])].reshape(1), demand
        whole = np.flatnonzero(avail == size)
        return self.choose_nodes(whole, demand // size), size

    def choose_nodes(self, candidates: np.ndarray, count: int) -> np.ndarray:
        return choose_nodes(candidates, count, self.placement_leaf)

    # changes -----------------------------------------------------------------------------------------------
    def start(self, job: int, nodes: np.ndarray, per_node: int, estimated_end: float) -> None:
        size = self.size
        if per_node == size:
            assert (self.free[nodes] == size).all(), "whole nodes must be free"
            self.slot_end[nodes] = estimated_end
            self.free[nodes] = 0
            self.num_whole -= nodes.size
            self.held[job] = (nodes, size, None)
        else:
            node = int(nodes[0])
            row = self.slot_end[node]
            slots = np.flatnonzero(row == FREE)[:per_node]
            assert slots.size == per_node, "not enough free GPUs on the node"
            if self.free[node] == size:
                self.num_whole -= 1
            row[slots] = estimated_end
            self.free[node] -= per_node
            self.held[job] = (nodes, per_node, slots)
        if self.leaf and nodes.size > 1:
            self.leaves_used[job] = int(np.unique(nodes // self.leaf).size)

    def release(self, job: int) -> None:
        nodes, per_node, slots = self.held.pop(job)
        if slots is None:
            self.slot_end[nodes] = FREE
            self.free[nodes] = self.size
            self.num_whole += nodes.size
        else:
            node = int(nodes[0])
            self.slot_end[node, slots] = FREE
            self.free[node] += per_node
            if self.free[node] == self.size:
                self.num_whole += 1

    # the future, by estimates ------------------------------------------------------------------------------
    def earliest(self, demand: int, now: float) -> tuple[float, np.ndarray, int]:
        """When ``demand`` fits if running jobs end at their estimates, and the nodes it would take."""
        size = self.size
        if demand <= size:
            if demand == size:
                ready = self.slot_end.max(axis=1)
            else:
                ready = np.partition(self.slot_end, demand - 1, axis=1)[:, demand - 1]
            node = int(np.argmin(ready))
            return max(now, float(ready[node])), np.array([node]), demand
        count = demand // size
        ready = self.slot_end.max(axis=1)
        at = float(np.partition(ready, count - 1)[count - 1])
        return max(now, at), self.choose_nodes(np.flatnonzero(ready <= at), count), size

    def free_at(self, time: float) -> np.ndarray:
        """GPUs free on each node at ``time`` if running jobs end at their estimates."""
        return np.count_nonzero(self.slot_end <= time, axis=1)


def choose_nodes(candidates: np.ndarray, count: int, nodes_per_leaf: int) -> np.ndarray:
    """``count`` of ``candidates`` (ascending node ids): first fit, or leaf-aware when ``nodes_per_leaf``."""
    if not nodes_per_leaf or count >= candidates.size:
        return candidates[:count]
    leaves = candidates // nodes_per_leaf
    ids, sizes = np.unique(leaves, return_counts=True)
    enough = np.flatnonzero(sizes >= count)
    if enough.size:  # best fit among the leaves that hold the whole job
        best = ids[enough[np.argmin(sizes[enough])]]
        return candidates[leaves == best][:count]
    order = np.argsort(-sizes, kind="stable")  # else the fewest leaves, the freest first
    picked = np.concatenate([candidates[leaves == ids[i]] for i in order[:count]])[:count]
    return np.sort(picked)
