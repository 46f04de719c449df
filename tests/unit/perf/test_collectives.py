import dataclasses

import numpy as np
import pytest

from clusterplan.perf.collectives import (System, _candidates, bus_factor, element_count, predict, predict_time_s,
                                          size_sweep, system_from_design)

GiB = 2**30


def nvswitch_node(**changes) -> System:
    """One 8 x H100-like NVSwitch node with NVLS off, on 8 x 400 Gb/s NICs."""
    base = System(gpus_per_node=8, intra_node="nvswitch", intra_bw_Bps=450e9, intra_efficiency=0.8,
                  nvls=False, nvls_efficiency=0.6, nics_per_node=8, link_rate_Bps=50e9, net_efficiency=0.9,
                  net_latency_s=0.0, hop_latency_s=130e-9, nodes_per_leaf=4, tiers=2, bisection_fraction=1.0)
    return dataclasses.replace(base, **changes)


def test_bus_factors_are_nccl_tests():
    """all_reduce 2(n-1)/n; AG, RS, alltoall (n-1)/n; broadcast, reduce, sendrecv 1."""
    assert bus_factor("all_reduce", 8) == 1.75
    for op in ("all_gather", "reduce_scatter", "alltoall"):
        assert bus_factor(op, 8) == 0.875
    for op in ("broadcast", "reduce", "sendrecv"):
        assert bus_factor(op, 8) == 1.0
    with pytest.raises(ValueError, match="unknown collective"):
        bus_factor("allreduce", 8)


def test_one_nvswitch_node_ring_by_hand():
    """8 GPUs, 1 GiB all_reduce, ring Simple: 8.4 + 14 x 3.4 us latency, busbw = 0.8 x 450 GB/s."""
    p = predict("all_reduce", [GiB], nvswitch_node(), 8)
    expected = (8.4 + 14 * 3.4) * 1e-6 + GiB * 1.75 / 360e9
    assert p.algorithm == ("ring",) and p.protocol == ("Simple",)
    assert p.time_s[0] == pytest.approx(expected)
    assert p.busbw_GBps[0] == pytest.approx(GiB * 1.75 / expected / 1e9)


def test_nvls_wins_large_all_reduce_on_one_node():
    """With NVLink SHARP the algbw is 0.6 x 450 GB/s: busbw 472.5 GB/s at 8 ranks, above the link rate."""
    p = predict("all_reduce", [16 * GiB], nvswitch_node(nvls=True), 8)
    assert p.algorithm == ("nvls",)
    assert p.busbw_GBps[0] == pytest.approx(270 * 1.75, rel=1e-3)


def test_two_node_ring_by_hand():
    """2 nodes x 8 GPUs, all_gather ring: busbw = node NICs 8 x 50 x 0.9 = 360 GB/s, NVLink not the bound."""
    system = nvswitch_node(intra_efficiency=1.0)
    p = predict("all_gather", [4 * GiB], system, 16)
    assert p.algorithm == ("ring",) and p.num_nodes == 2
    base, intra, inter = 8.4, max(3.4, 3.0), 14.0
    latency = (base + (15 - 1) * intra + 1 * inter) * 1e-6
    assert p.time_s[0] == pytest.approx(latency + 4 * GiB * 15 / 16 / 360e9)


def test_two_node_tree_halves_network_traffic():
    """On two nodes the tree's algbw reaches the node's NIC bandwidth, so busbw exceeds it (as p4de shows, on
    4 x 100 Gb/s: 45 GB/s of NICs at 0.9, busbw ~78); on 8 x 400 Gb/s its channels bound it first
    (test_collective_tree.py)."""
    p = predict("all_reduce", [8 * GiB], nvswitch_node(nics_per_node=4, link_rate_Bps=12.5e9), 16)
    assert p.algorithm[0] == "tree"
    assert p.busbw_GBps[0] > 1.5 * 45


def test_oversubscribed_fabric_slows_cross_leaf_groups():
    """Past one leaf, a 2:1 fabric halves the ring's network bandwidth; inside a leaf it does not."""
    fast, slow = nvswitch_node(), nvswitch_node(bisection_fraction=0.5)
    inside = predict("all_gather", [4 * GiB], slow, 32)       # 4 nodes: one leaf
    assert inside.busbw_GBps[0] == pytest.approx(predict("all_gather", [4 * GiB], fast, 32).busbw_GBps[0])
    across = predict("all_gather", [4 * GiB], slow, 64)       # 8 nodes: two leaves
    assert across.busbw_GBps[0] == pytest.approx(
        predict("all_gather", [4 * GiB], fast, 64).busbw_GBps[0] / 2, rel=0.03)  # latency does not halve


def test_small_messages_pick_a_low_latency_protocol():
    """At 8 bytes LL wins; at 1 GiB Simple or LL128."""
    p = predict("all_reduce", [8, GiB], nvswitch_node(), 8)
    assert p.protocol[0] == "LL" and p.protocol[1] in ("Simple", "LL128")


def test_one_rank_costs_nothing():
    """A single rank moves no data."""
    p = predict("all_reduce", [8, GiB], nvswitch_node(), 1)
    assert np.all(p.time_s == 0) and np.all(p.busbw_GBps == 0)


def test_mesh_tree_is_bound_by_one_peer_link():
    """On a full mesh (MI300X) one peer gets 1/7 of the aggregate, so the ring beats the tree."""
    mesh = nvswitch_node(intra_node="mesh", intra_bw_Bps=448e9)
    assert predict("all_reduce", [8 * GiB], mesh, 16).algorithm[0] == "ring"


def test_reference_design_view(reference_plan):
    """The reference: 8 NDR200 NICs = 200 GB/s per node, 2 tiers (auto), 8 nodes under each of its 2 leaves."""
    system = system_from_design(reference_plan.design)
    assert system.node_net_bw_Bps == 200e9 and system.tiers == 2
    assert system.nodes_per_leaf == 8 and system.nvls and system.intra_node == "nvswitch"


def test_sweeps_and_counts_follow_nccl_tests():
    """-b 8 -e 128 -f 2 gives 8..128; AG counts are per rank; sizes round down to whole elements."""
    assert size_sweep(8, 128) == [8, 16, 32, 64, 128]
    assert size_sweep(100, 400, increment=100) == [100, 200, 300, 400]
    assert element_count("all_reduce", 1024, "float", 8) == (1024, 256)
    assert element_count("all_gather", 1024, "float", 8) == (1024, 32)
    assert element_count("all_gather", 1000, "half", 8) == (992, 62)
    with pytest.raises(ValueError):
        size_sweep(0, 8)


def test_rail_optimized_keeps_same_rail_traffic_under_one_leaf(catalog):
    """Rail-optimised: a rail leaf holds one NIC of up to 64 nodes (radix 128 at 1:1), a fat-tree leaf 8."""
    from clusterplan.design import design
    from clusterplan.spec import load_spec

    rail = system_from_design(design(load_spec(overrides=["network.topology=rail-optimized"]), catalog))
    plain = system_from_design(design(load_spec(overrides=["network.tiers=2"]), catalog))
    assert rail.nodes_per_leaf == 16 and plain.nodes_per_leaf == 8
    oversubscribed = ["network.oversubscription=2", "network.tiers=0", "cluster.num_nodes=64"]
    rail2 = system_from_design(design(load_spec(overrides=[*oversubscribed, "network.topology=rail-optimized"]),
                                      catalog))
    plain2 = system_from_design(design(load_spec(overrides=oversubscribed), catalog))
    size = [4 * GiB]
    assert predict("all_gather", size, rail2, 256).busbw_GBps[0] > predict("all_gather", size, plain2, 256).busbw_GBps[0]


def test_pcie_node_by_hand():
    """8 PCIe GPUs at 64 GB/s: ring busbw 0.8 x 64 GB/s, PCIe latencies (8.4 + 7 x 5.7 us for all_gather)."""
    pcie = nvswitch_node(intra_node="pcie", intra_bw_Bps=64e9)
    p = predict("all_gather", [GiB], pcie, 8)
    assert p.algorithm == ("ring",) and p.protocol == ("Simple",)
    assert p.time_s[0] == pytest.approx((8.4 + 7 * 5.7) * 1e-6 + GiB * 7 / 8 / (0.8 * 64e9))


def test_one_size_prices_as_predict_does():
    """The scalar time of a two-node tree-capable all_reduce is predict's, for small and large sizes."""
    system = nvswitch_node(nvls=True)
    for size in (8.0, 1e5, 3.3e7, float(GiB), 7e10):
        assert predict_time_s("all_reduce", size, system, 16) == predict("all_reduce", [size], system, 16).time_s[0]
    assert predict_time_s("all_gather", float(GiB), system, 1) == 0.0


def test_a_forced_ring_is_held_to_the_ring_and_its_nic_bound():
    """NCCL_ALGO=RING on 2 x 8 GPUs, 8 x 50 GB/s NICs at 0.9: every size runs the ring, and a 16 GiB all-reduce's
    busbw approaches the NICs' 8 x 50 x 0.9 = 360 GB/s from below (a 2-node tree may pass the NIC bound)."""
    sizes = np.array([64 * 2**20, 16 * GiB])
    ring = predict("all_reduce", sizes, nvswitch_node(), 16, algorithms=("ring",))
    assert set(ring.algorithm) == {"ring"}
    assert 0.95 * 360 < ring.busbw_GBps[1] <= 360
    free = predict("all_reduce", sizes, nvswitch_node(), 16)
    assert np.all(free.time_s <= ring.time_s)          # the tuner's pick is never slower than one algorithm
    with pytest.raises(ValueError, match="unknown algorithm"):
        predict("all_reduce", sizes, nvswitch_node(), 16, algorithms=("rings",))


def test_ring_ll_runs_at_nccl_ll_ratio():
    """NCCL rates LL on a ring at 1/4 of the link across nodes or in an all-reduce, 1/3 for one node's other
    collectives (tuning.cc LLRatio): 2 nodes of 8 x 50 GB/s at 0.9 = 360 GB/s -> 90 GB/s; one node's NVLink ring,
    450 x 0.8 = 360 GB/s -> 90 GB/s for an all-reduce, 120 GB/s for an all-gather."""
    def ring_ll(op, ranks, nodes):
        return next(c for c in _candidates(op, nvswitch_node(), ranks, nodes, 8)
                    if c.algorithm == "ring" and c.protocol == "LL").bandwidth_Bps
    assert ring_ll("all_reduce", 16, 2) == pytest.approx(90e9)
    assert ring_ll("all_gather", 16, 2) == pytest.approx(90e9)
    assert ring_ll("all_reduce", 8, 1) == pytest.approx(90e9)
    assert ring_ll("all_gather", 8, 1) == pytest.approx(120e9)
