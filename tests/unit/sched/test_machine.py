"""Allocation: best fit on one node, whole nodes beyond, leaf-aware placement, reservations by estimate."""

import numpy as np
import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched import Cluster
from clusterplan.sched.machine import Machine, choose_nodes


def test_demand_rounds_multi_node_jobs_up_to_whole_nodes():
    """On 8-GPU nodes 1..8 GPUs stay as asked, 12 holds 16, 16 holds 16."""
    cluster = Cluster(num_nodes=4, gpus_per_node=8)
    assert cluster.demand(np.array([1, 8, 9, 12, 16])).tolist() == [1, 8, 16, 16, 16]


def test_best_fit_keeps_whole_nodes_free():
    """A 2-GPU job goes to the node with 2 free, not to the empty one."""
    machine = Machine(Cluster(num_nodes=2, gpus_per_node=4))
    machine.start(0, np.array([0]), 2, 10.0)
    nodes, per_node = machine.place(2)
    assert nodes.tolist() == [0] and per_node == 2 and machine.capacity() == 4


def test_release_gives_back_the_slots():
    """Start then release leaves the machine as it was."""
    machine = Machine(Cluster(num_nodes=2, gpus_per_node=4))
    machine.start(0, np.array([0, 1]), 4, 10.0)
    assert machine.capacity() == 0
    machine.release(0)
    assert machine.capacity() == 8 and machine.free.tolist() == [4, 4]


def test_leaf_aware_choice_prefers_one_leaf():
    """Nodes 1, 2, 3 free under leaves {0,1} and {2,3}: two nodes come from leaf 1, first fit spans both."""
    free = np.array([1, 2, 3])
    assert choose_nodes(free, 2, 0).tolist() == [1, 2]
    assert choose_nodes(free, 2, 2).tolist() == [2, 3]


def test_leaf_aware_choice_uses_fewest_leaves_when_none_holds_the_job():
    """Three nodes over leaves of two: the full leaf first, then one more node."""
    assert choose_nodes(np.array([0, 2, 3, 5]), 3, 2).tolist() == [0, 2, 3]


def test_earliest_start_follows_estimated_ends():
    """A 3-GPU job on a node where GPUs free at 5 and 9: the third free GPU comes at 9."""
    machine = Machine(Cluster(num_nodes=1, gpus_per_node=4, nodes_per_leaf=1, topology_aware=True))
    machine.start(0, np.array([0]), 1, 5.0)
    machine.start(1, np.array([0]), 2, 9.0)
    time, nodes, per_node = machine.earliest(3, now=1.0)
    assert (time, nodes.tolist(), per_node) == (9.0, [0], 3)
    assert machine.free_at(5.0).tolist() == [2]


def test_topology_aware_needs_a_leaf_size():
    """topology_aware without nodes_per_leaf is a config error naming the key."""
    with pytest.raises(ConfigError, match="nodes_per_leaf"):
        Cluster(num_nodes=4, gpus_per_node=8, topology_aware=True)
