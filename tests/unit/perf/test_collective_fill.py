"""The tree's pipeline fill: the ramp of a multi-node all-reduce from a few MiB to its plateau."""

import dataclasses

import numpy as np
import pytest

from clusterplan.perf.collectives import System, _candidates, _time_s, predict
from clusterplan.perf.pipeline import chunk_bytes, thresholds

MiB, GiB = 2**20, 2**30


def two_nodes(**changes) -> System:
    """8 x A100-like GPUs per node (NVSwitch 300 GB/s, NVLS off) on 4 x 100 Gb/s NICs: p4de's shape."""
    base = System(gpus_per_node=8, intra_node="nvswitch", intra_bw_Bps=300e9, intra_efficiency=0.8,
                  nvls=False, nvls_efficiency=0.0, nics_per_node=4, link_rate_Bps=12.5e9, net_efficiency=0.9,
                  net_latency_s=0.0, hop_latency_s=130e-9, nodes_per_leaf=64, tiers=2, bisection_fraction=1.0)
    return dataclasses.replace(base, **changes)


def tree(system: System, protocol: str = "Simple", ranks: int = 16):
    return next(c for c in _candidates("all_reduce", system, ranks, ranks // 8, 8)
                if c.algorithm == "tree" and c.protocol == protocol)


def test_channels_follow_the_nics_not_their_rate():
    """4 channels per NIC (two rings or trees, duplicated), at most 32: 16 on 4 NICs, 32 on 8 whatever their rate,
    4 on one NIC of 10G or of 400G."""
    assert two_nodes().channels == 16
    assert two_nodes(nics_per_node=8, link_rate_Bps=50e9).channels == two_nodes(nics_per_node=8).channels == 32
    assert two_nodes(nics_per_node=1, link_rate_Bps=1.25e9).channels == two_nodes(nics_per_node=1).channels == 4


def test_simple_chunk_is_whole_at_every_size():
    """NCCL 2.20+ keeps a Simple tree's 512 KiB chunk whatever the message (2.4-2.19 halved it)."""
    assert thresholds("Simple", 2, 8) == thresholds("Simple", 128, 8) == ()
    assert [chunk_bytes(size, 8, 524288, ()) for size in (GiB, 64 * MiB, 2 * MiB)] == [524288] * 3


def test_ll128_chunk_halves_as_nccl_does():
    """NCCL 2.30: steps = 1 + log2(nodes) + 0.1 ppn = 2.8 on 2 nodes of 8; halve 576,000 B while size /
    (channels x chunk) < 2.8 x 64 / 8 = 22.4 above 128 KiB, then < 5.6 above 32 KiB. 64 MiB on 8 channels:
    14 -> 29 at 288,000 B; 29 >= 22.4 and >= 5.6: 288,000 B."""
    rules = thresholds("LL128", 2, 8)
    assert [below for below, _ in rules] == pytest.approx([22.4, 5.6])
    assert [floor for _, floor in rules] == [131072, 32768]
    assert chunk_bytes(64 * MiB, 8, 576000, rules) == 288000
    assert thresholds("LL", 2, 8) == ()


def test_tree_fill_by_hand():
    """A chunk per channel crosses 14 NVLink hops and one of the two network hops before the pipeline runs
    full: fill = min(S, chunk x channels) x (14 / 240 GB/s + 1 / 45 GB/s) with Simple's whole 512 KiB chunk;
    S smaller than a chunk per channel fills less (1 MiB on 8 channels)."""
    system = two_nodes()
    candidate = tree(system)
    per_byte = 14 / 240e9 + 1 / 45e9
    plain = candidate.without_fill()
    for size in (GiB, 64 * MiB, MiB):
        expected = min(size, 524288 * system.channels) * per_byte
        assert _time_s(candidate, size) - _time_s(plain, size) == pytest.approx(expected)


def test_the_ll128_fill_shrinks_with_the_message():
    """128 nodes of 8, 32 channels: steps = 1 + 7 + 0.8 = 8.8, halve 576,000 B while S / (32 x chunk) < 70.4
    128 KiB: 64 MiB runs 72,000 B chunks (3 -> 7 -> 14 at 144,000 B, still above 128 KiB -> 29 at 72,000 B),
    1 GiB 288,000 B (58 -> 116 >= 70.4), so the LL128 fill at 64 MiB is a quarter of that at 1 GiB; Simple's is
    the same at both."""
    system = two_nodes(nics_per_node=8, link_rate_Bps=50e9, nodes_per_leaf=256)
    candidates = {c.protocol: c for c in _candidates("all_reduce", system, 1024, 128, 8) if c.algorithm == "tree"}

    def fills(candidate):
        return [_time_s(candidate, size) - _time_s(candidate.without_fill(), size) for size in (64 * MiB, GiB)]

    ll128, simple = fills(candidates["LL128"]), fills(candidates["Simple"])
    assert ll128[0] == pytest.approx(ll128[1] / 4)
    assert ll128[1] == pytest.approx(32 * 288000 * candidates["LL128"].fill_s_per_byte)
    assert simple[0] == pytest.approx(simple[1]) == pytest.approx(32 * 524288 * candidates["Simple"].fill_s_per_byte)


def test_the_ramp_is_gentler_than_latency_alone():
    """With the fill, bus bandwidth at 64 MiB is well under the plateau, yet the plateau itself is unchanged
    (the fill is a constant a few hundred microseconds long)."""
    system = two_nodes()
    sizes = [64 * MiB, 16 * GiB]
    with_fill = predict("all_reduce", sizes, system, 16)
    assert with_fill.busbw_GBps[0] < 0.8 * with_fill.busbw_GBps[1]
    candidate = tree(system)
    fill_s = _time_s(candidate, 16 * GiB) - _time_s(candidate.without_fill(), 16 * GiB)
    assert 1e-4 < fill_s < 1e-3
    assert fill_s / with_fill.time_s[1] < 0.01


def test_one_node_and_rings_have_no_fill():
    """The fill is a tree's: no candidate on one node, and no ring anywhere, carries one."""
    system = two_nodes()
    for ranks, nodes in ((8, 1), (16, 2), (64, 8)):
        for candidate in _candidates("all_reduce", system, ranks, nodes, 8):
            assert (candidate.fill_s_per_byte > 0) == (candidate.algorithm in ("tree", "nvls_tree"))


def test_ll_on_a_tree_is_rated_as_nccl_does():
    """NCCL rates LL on a tree at 1 / 3.8 of the link (against 1 / 2 on a ring)."""
    system = two_nodes()
    assert tree(system, "LL").bandwidth_Bps == pytest.approx(tree(system, "Simple").bandwidth_Bps / 3.8)


def test_whole_chunks_from_the_first_rules_threshold():
    """The scalar shortcut: from channels x chunk x ceil(first threshold) on no rule halves, just below it one
    does (LL128 on 2 nodes of 8: 8 x 576,000 x 23); a chunk no rule halves is whole from 0 B."""
    from clusterplan.perf.pipeline import unhalved_from_bytes
    rules = thresholds("LL128", 2, 8)
    edge = unhalved_from_bytes(8, 576000, rules)
    assert edge == 8 * 576000 * 23
    assert chunk_bytes(edge, 8, 576000, rules) == 576000 > chunk_bytes(edge - 1, 8, 576000, rules)
    assert unhalved_from_bytes(8, 16384, ()) == 0
