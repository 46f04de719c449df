"""The tree's pipeline fill: the ramp of a multi-node all-reduce from a few MiB to its plateau."""

import dataclasses

import pytest

from clusterplan.perf.collectives import (TREE_CHUNK_BYTES, System, _candidates, _time_s, predict)

MiB, GiB = 2**20, 2**30


def two_nodes(**changes) -> System:
    """8 x A100-like GPUs per node (NVSwitch 300 GB/s, NVLS off) on 4 x 100 Gb/s NICs: p4de's shape."""
    base = System(gpus_per_node=8, intra_node="nvswitch", intra_bw_Bps=300e9, intra_efficiency=0.8,
                  nvls=False, nvls_efficiency=0.0, nics_per_node=4, link_rate_Bps=12.5e9, net_efficiency=0.9,
                  net_latency_s=0.0, hop_latency_s=130e-9, nodes_per_leaf=64, tiers=2, bisection_fraction=1.0)
    return dataclasses.replace(base, **changes)


def tree(system: System, protocol: str = "Simple", ranks: int = 16):
    return next(c for c in _candidates("all_reduce", system, ranks, ranks // 8, 8)
                if c[0] == "tree" and c[1] == protocol)


def test_channels_follow_the_node_network_bandwidth():
    """2 channels per 12.5 GB/s of NIC bandwidth, duplicated, at most 32: 8 on 4 x 100G, 32 on 8 x 400G."""
    assert two_nodes().channels == 8
    assert two_nodes(nics_per_node=8, link_rate_Bps=50e9).channels == 32
    assert two_nodes(nics_per_node=1, link_rate_Bps=1.25e9).channels == 2


def test_tree_fill_by_hand():
    """A chunk per channel crosses 14 NVLink hops and one of the two network hops before the pipeline runs
    full: fill = chunk x channels x (14 / 240 GB/s + 1 / 45 GB/s); S smaller than a chunk per channel fills less."""
    system = two_nodes()
    candidate = tree(system)
    chunk = TREE_CHUNK_BYTES["Simple"]
    per_byte = 14 / 240e9 + 1 / 45e9
    plain = candidate[:5] + ((0.0, 0.0),)
    for size in (GiB, 64 * MiB, MiB):
        expected = min(size, chunk * system.channels) * per_byte
        assert _time_s(candidate, size) - _time_s(plain, size) == pytest.approx(expected)


def test_the_ramp_is_gentler_than_latency_alone():
    """With the fill, bus bandwidth at 64 MiB is well under the plateau, yet the plateau itself is unchanged
    (the fill is a constant a few hundred microseconds long)."""
    system = two_nodes()
    sizes = [64 * MiB, 16 * GiB]
    with_fill = predict("all_reduce", sizes, system, 16)
    assert with_fill.busbw_GBps[0] < 0.8 * with_fill.busbw_GBps[1]
    candidate = tree(system)
    fill_s = _time_s(candidate, 16 * GiB) - _time_s(candidate[:5] + ((0.0, 0.0),), 16 * GiB)
    assert 1e-4 < fill_s < 1e-3
    assert fill_s / with_fill.time_s[1] < 0.01


def test_one_node_and_rings_have_no_fill():
    """The fill is a tree's: no candidate on one node, and no ring anywhere, carries one."""
    system = two_nodes()
    for ranks, nodes in ((8, 1), (16, 2), (64, 8)):
        for candidate in _candidates("all_reduce", system, ranks, nodes, 8):
            assert (candidate[-1][1] > 0) == (candidate[0] in ("tree", "nvls_tree"))


def test_ll_on_a_tree_is_rated_as_nccl_does():
    """NCCL rates LL on a tree at 1 / 3.8 of the link (against 1 / 2 on a ring)."""
    system = two_nodes()
    assert tree(system, "LL")[3] == pytest.approx(tree(system, "Simple")[3] / 3.8)
