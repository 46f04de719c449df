"""Scale-out traffic: ECMP collisions on fabrics without adaptive routing, and the gradient buckets."""

import dataclasses

import pytest

from clusterplan.perf.collectives import System, _candidates, predict
from clusterplan.perf.ecmp import REPORTED_MAX_SLOWDOWN, collisions, expected_max_poisson, slowdown
from clusterplan.perf.communication import BUCKET_PARAMS, _buckets, communication
from clusterplan.perf.compute import compute
from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Layout
from clusterplan.perf.presets import preset
from clusterplan.perf.stage import stage

GiB = 2**30


def roce(**changes) -> System:
    """8 x A100-like GPUs per node on 8 x 200 Gb/s RoCE, rail-optimized leaves of 16 nodes, ECMP."""
    base = System(gpus_per_node=8, intra_node="nvswitch", intra_bw_Bps=300e9, intra_efficiency=0.8, nvls=False,
                  nvls_efficiency=0.0, nics_per_node=8, link_rate_Bps=25e9, net_efficiency=0.75,
                  net_latency_s=10e-6, hop_latency_s=600e-9, nodes_per_leaf=16, tiers=2, bisection_fraction=1.0,
                  adaptive_routing=False, rail_optimized=True)
    return dataclasses.replace(base, **changes)


def test_expected_max_of_poisson_loads():
    """One bin: its mean; more bins: the max grows (slowly) with their count; never below the mean."""
    assert expected_max_poisson(4.0, 1) == pytest.approx(4.0, abs=1e-6)
    assert expected_max_poisson(4.0, 10) > expected_max_poisson(4.0, 1)
    assert 9 < expected_max_poisson(4.0, 384) < 13
    assert expected_max_poisson(0.001, 2) == pytest.approx(0.002, rel=0.01)


def test_adaptive_routing_has_no_collisions():
    assert slowdown(roce(adaptive_routing=True), 192, True) == 1.0
    assert slowdown(roce(), 16, True) == 1.0                            # one leaf: no uplink hashed


def test_trees_collide_on_the_leaves_of_every_rail():
    """A tree's flows all leave the leaf. 8 x 200 Gb/s, 32 channels: 4 flows a NIC; a rail's leaf has 16 node
    ports and 16 uplinks, so 4 x 16 / 16 = 4 flows an uplink on average. 32 nodes = 2 leaves a rail, 8 rails,
    16 uplinks up and 16 down each: 512 links (not one rail's 64), and the collective waits for the most
    loaded: E[max of 512 Poisson(4)] / 4."""
    system = roce()
    assert collisions(system, 32, True) == pytest.approx(expected_max_poisson(4.0, 512) / 4)
    assert collisions(system, 32, True) > expected_max_poisson(4.0, 64) / 4
    assert 2.5 < collisions(system, 32, True) < collisions(system, 1536, True) < 4


def test_rings_cross_a_leaf_through_every_nic_of_a_node():
    """A ring leaves a leaf from one node, through each of its NICs: every channel of a full-node ring, or the
    rings of eight one-GPU groups, one NIC each: the same 8 NICs x 4 flows. On a full fat-tree leaf of 4 nodes
    (32 ports, 32 uplinks) that is 32 / 32 = 1 flow an uplink; 192 nodes = 48 leaves x 32 uplinks x 2 = 3072
    links: E[max of 3072 Poisson(1)] / 4 = 1.52, for the full-node ring as for the one-GPU rings. On a rail's
    leaf one NIC's 4 flows spread over 16 uplinks: nearly no loss."""
    full = roce(rail_optimized=False, nodes_per_leaf=4)
    assert collisions(full, 192, False) == pytest.approx(expected_max_poisson(1.0, 3072) / 4)
    assert 1.5 < collisions(full, 192, False) < 1.55
    assert collisions(full, 32, False) < collisions(full, 192, False) < collisions(full, 1536, False)
    assert collisions(roce(), 192, False) < 1.05
    rings = [next(c for c in _candidates("all_reduce", full, 192 * local, 192, local) if c.algorithm == "ring")
             for local in (8, 1)]
    adaptive = roce(rail_optimized=False, nodes_per_leaf=4, adaptive_routing=True)
    plain = [next(c for c in _candidates("all_reduce", adaptive, 192 * local, 192, local) if c.algorithm == "ring")
             for local in (8, 1)]
    assert [ring.bandwidth_Bps / free.bandwidth_Bps for ring, free in zip(rings, plain)] == pytest.approx(
        [1 / REPORTED_MAX_SLOWDOWN] * 2)


def test_the_slowdown_stays_within_what_sources_report():
    """Meta reports up to 40 % gained over baseline ECMP: the model's slowdown is bounded there, even where the
    collision estimate (a tree over 96 leaves a rail: above 3x) is larger."""
    assert collisions(roce(), 1536, True) > 3
    assert slowdown(roce(), 1536, True) == REPORTED_MAX_SLOWDOWN == 1.4
    full = roce(rail_optimized=False, nodes_per_leaf=4)
    assert slowdown(full, 32, False) == collisions(full, 32, False) < 1.4


def test_ecmp_slows_only_groups_that_span_leaves():
    """Within one leaf nothing is hashed onto uplinks; across leaves of a full fat-tree the one-GPU-per-node
    rings of a data-parallel group on ECMP are slower than on adaptive routing."""
    ecmp, adaptive = roce(rail_optimized=False, nodes_per_leaf=4), roce(rail_optimized=False, nodes_per_leaf=4,
                                                                       adaptive_routing=True)
    inside = [predict("all_reduce", [GiB], s, 4, ranks_per_node=1).time_s[0] for s in (ecmp, adaptive)]
    assert inside[0] == inside[1]
    across = [predict("all_reduce", [GiB], s, 64, ranks_per_node=1).time_s[0] for s in (ecmp, adaptive)]
    assert across[0] > 1.2 * across[1]


def test_gradient_buckets_follow_megatron():
    """max(40M, 1M x dp) parameters a bucket with the reduction overlapped; one collective without."""
    overlapped, plain = Options(seq_len=2048, global_batch=512), Options(seq_len=2048, global_batch=512,
                                                                          overlap_grad_reduce=False)
    assert _buckets(overlapped, 2.7e9, 4) == 68                        # 40M a bucket
    assert _buckets(overlapped, 2.7e9, 192) == 15                      # 192M a bucket
    assert _buckets(plain, 2.7e9, 192) == 1
    assert _buckets(overlapped, BUCKET_PARAMS / 2, 8) == 1


def test_buckets_pay_the_latency_once_each(hw):
    """The gradient reduction of an overlapped step is its buckets' collectives: one per bucket, each with its
    latency, so it costs more than one collective of all the bytes (the reduction of a step without overlap)."""
    model, layout = preset("llama2-70b"), Layout(tp=8, pp=2, dp=8, zero=0)
    overlapped = Options(seq_len=4096, global_batch=64, overlap_grad_reduce=True)
    plain = dataclasses.replace(overlapped, overlap_grad_reduce=False)
    traffic = [communication_of(model, hw, options, layout).dp_s for options in (overlapped, plain)]
    assert traffic[0] > traffic[1] > 0


def communication_of(model, hw, options, layout):
    busiest = stage(model, options, hw.system.gpus_per_node, layout)
    work = compute(model, hw, options, busiest, layout.recompute, 0.0)
    return communication(model, hw.system, options, busiest, layout, work, 0.0)


def test_pat_serves_one_gpu_per_node_gathers_in_log_steps():
    """NCCL's PAT for all_gather / reduce_scatter with one GPU per node: latency 8 us + log2(nodes) x the tree's
    network latency / 3.5 + 2.8 us a rank, at 0.75 of the ring's bandwidth; it beats the ring's 127 network
    steps on small messages of 128 nodes and loses to the ring on large ones."""
    system = roce(adaptive_routing=True)
    small = predict("all_gather", [128 * 1024], system, 128, ranks_per_node=1)
    assert small.algorithm == ("pat",)
    inter = 14.0 + 2 * (10.0 + 2 * 0.6)                     # Simple: NCCL's tree net latency + 2 x the fabric's
    latency = (8.0 + 7 * inter / 3.5 + 128 * 2.8) * 1e-6
    bandwidth = 8 * 25e9 * 0.75 / 8 * 0.75                   # one GPU's NIC share, x 0.75
    assert small.time_s[0] == pytest.approx(latency + 128 * 1024 * 127 / 128 / bandwidth)
    assert predict("all_gather", [4 * GiB], system, 128, ranks_per_node=1).algorithm == ("ring",)
    assert "pat" not in predict("all_gather", [128 * 1024], system, 16 * 8).algorithm
