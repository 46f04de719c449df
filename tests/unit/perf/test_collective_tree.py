"""The plain tree's network throughput: a node's tree traffic at most channels x TREE_CHANNEL_Bps."""

import dataclasses

import numpy as np
import pytest

from clusterplan.perf.collectives import System, _tree_net_algbw, predict
from clusterplan.perf.ecmp import slowdown
from clusterplan.perf.tree import CHANNEL_Bps as TREE_CHANNEL_Bps

GiB = 2**30


def hgx(**changes) -> System:
    """8 Hopper-class GPUs per node (NVSwitch 450 GB/s, NVLS at 0.6) on 8 x 400 Gb/s NICs at 0.95."""
    base = System(gpus_per_node=8, intra_node="nvswitch", intra_bw_Bps=450e9, intra_efficiency=0.81,
                  nvls=True, nvls_efficiency=0.6, nics_per_node=8, link_rate_Bps=50e9, net_efficiency=0.95,
                  net_latency_s=0.0, hop_latency_s=130e-9, nodes_per_leaf=64, tiers=2, bisection_fraction=1.0)
    return dataclasses.replace(base, **changes)


def test_fast_nics_are_bounded_by_the_channels():
    """8 x 50 GB/s at 0.95 = 380 GB/s of NICs, but 32 channels x 6.2 GB/s = 198.4 GB/s of tree traffic a node:
    algbw 198.4 GB/s on two nodes (S in and out), 99.2 GB/s on more (2 S)."""
    system = hgx()
    assert system.channels * TREE_CHANNEL_Bps == pytest.approx(198.4e9)
    assert _tree_net_algbw(system, 380e9, 2) == pytest.approx(198.4e9)
    assert _tree_net_algbw(system, 380e9, 4) == _tree_net_algbw(system, 380e9, 64) == pytest.approx(99.2e9)


def test_slow_nics_keep_their_own_limit():
    """p4de's shape, 4 x 12.5 GB/s at 0.91 = 45.5 GB/s, under 16 channels' 99.2 GB/s: the NICs still bound the
    tree (45.5 GB/s on two nodes, 22.75 GB/s on more), as before the channel bound."""
    system = hgx(nics_per_node=4, link_rate_Bps=12.5e9, net_efficiency=0.91)
    assert system.channels == 16
    assert _tree_net_algbw(system, 45.5e9, 2) == pytest.approx(45.5e9)
    assert _tree_net_algbw(system, 45.5e9, 8) == pytest.approx(22.75e9)


def test_forced_tree_on_sixteen_nodes_is_about_half_the_ring():
    """NCCL_ALGO=Tree on 16 x 8 GPUs at 32 GiB: the LL128 tree, algbw 99.2 GB/s x 0.92 (LL128's share; its tree
    correction is 1 there, Simple's 0.9) = 91.3 GB/s, busbw x 2 x 127/128 = 181.1 GB/s (published B200 trees:
    190.7-195.9 GB/s), under half the ring's NIC-bound 380 GB/s less its latency."""
    tree = predict("all_reduce", np.array([32 * GiB]), hgx(), 128, algorithms=("tree",))
    ring = predict("all_reduce", np.array([32 * GiB]), hgx(), 128, algorithms=("ring",))
    assert tree.busbw_GBps[0] == pytest.approx(99.2 * 0.92 * 2 * 127 / 128, rel=0.01)
    assert tree.busbw_GBps[0] < ring.busbw_GBps[0] / 2


def test_two_node_hopper_all_reduce_takes_the_nvls_tree():
    """Regression (2-node H100 over 8 x NDR400, NVIDIA/nccl-tests #309: NCCL picks its NVLS tree, 466-469 GB/s
    busbw at 8-16 GiB): the model used to take a plain tree at 618 GB/s, 24 % too fast; with the channel bound
    the NVLS tree wins, min(NVLS 450 x 0.6 = 270, NICs 380) x 0.9 = 243 GB/s algbw, busbw 455.6 GB/s."""
    prediction = predict("all_reduce", np.array([16 * GiB]), hgx(), 16)
    assert prediction.algorithm == ("nvls_tree",)
    assert prediction.busbw_GBps[0] == pytest.approx(270 * 0.9 * 2 * 15 / 16, rel=0.01)


def test_ecmp_collisions_slow_the_network_share_only():
    """Regression (review finding 3): RoCE without adaptive routing, 64 nodes in leaves of 16, 8 x 400 Gb/s at
    0.75 = 300 GB/s a node. ECMP's slowdown there is its reported bound, 1.4, so the network carries
    300 / 1.4 = 214.3 GB/s of tree traffic a node, above the 32 channels' 198.4 GB/s: the plain tree's algbw is
    the channels' 198.4 / 2 = 99.2 GB/s, not min(300, 198.4) / 2 / 1.4 = 70.9 GB/s (the slowdown divided the
    GPU-side bound too). The NVLS tree has no channel bound: 300 / 1.4 / 2 = 107.1 GB/s."""
    system = hgx(net_efficiency=0.75, nodes_per_leaf=16, adaptive_routing=False)
    assert slowdown(system, 64, True) == pytest.approx(1.4)
    assert _tree_net_algbw(system, 300e9, 64) == pytest.approx(99.2e9)
    assert _tree_net_algbw(system, 300e9, 64, channel_bound=False) == pytest.approx(300e9 / 1.4 / 2)
    # below the channels' bound the collisions set the rate: 250 / 1.4 = 178.6 GB/s < 198.4, / 2
    assert _tree_net_algbw(system, 250e9, 64) == pytest.approx(250e9 / 1.4 / 2)
    # inside one leaf nothing is hashed onto an uplink: the channels' bound alone
    assert _tree_net_algbw(system, 300e9, 16) == pytest.approx(99.2e9)
