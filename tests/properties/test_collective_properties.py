"""Invariants of the collective model over random systems, groups and sizes."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterplan.perf.collectives import OPS, System, predict, predict_time_s

systems = st.builds(
    System,
    gpus_per_node=st.sampled_from([2, 4, 8]),
    intra_node=st.sampled_from(["nvswitch", "mesh", "pcie"]),
    intra_bw_Bps=st.floats(16e9, 900e9),
    intra_efficiency=st.floats(0.5, 1.0),
    nvls=st.booleans(),
    nvls_efficiency=st.floats(0.3, 0.9),
    nics_per_node=st.sampled_from([1, 2, 4, 8]),
    link_rate_Bps=st.sampled_from([12.5e9, 25e9, 50e9]),
    net_efficiency=st.floats(0.5, 1.0),
    net_latency_s=st.floats(0, 100e-6),
    hop_latency_s=st.floats(100e-9, 1e-6),
    nodes_per_leaf=st.integers(1, 64),
    tiers=st.sampled_from([1, 2, 3]),
    bisection_fraction=st.sampled_from([1.0, 0.5, 1 / 3]),
).map(lambda s: dataclasses.replace(s, nvls=s.nvls and s.intra_node == "nvswitch"))
groups = st.tuples(systems, st.integers(1, 64), st.sampled_from(OPS)).map(
    lambda t: (t[0], t[1] if t[1] <= t[0].gpus_per_node else t[1] * t[0].gpus_per_node, t[2]))
SIZES = np.unique(np.round(np.logspace(0, 35, 300, base=2)))


@settings(deadline=None, max_examples=150)
@given(groups)
def test_time_never_decreases_with_size(group):
    """Bigger messages never finish sooner."""
    system, ranks, op = group
    times = predict(op, SIZES, system, ranks).time_s
    assert np.all(np.diff(times) >= -1e-15)


@settings(deadline=None, max_examples=150)
@given(groups, st.sampled_from(["intra_bw_Bps", "link_rate_Bps", "intra_efficiency", "net_efficiency",
                                "nvls_efficiency", "bisection_fraction"]), st.floats(1.0, 3.0))
def test_time_never_increases_with_more_bandwidth(group, field, scale):
    """Raising any bandwidth or efficiency never slows a collective."""
    system, ranks, op = group
    value = getattr(system, field) * scale
    if field.endswith(("efficiency", "fraction")):
        value = min(value, 1.0)
    faster = dataclasses.replace(system, **{field: value})
    before = predict(op, SIZES, system, ranks).time_s
    after = predict(op, SIZES, faster, ranks).time_s
    assert np.all(after <= before * (1 + 1e-12))


@settings(deadline=None, max_examples=150)
@given(groups)
def test_ring_busbw_never_exceeds_the_bottleneck_link(group):
    """Where the ring is chosen, busbw stays under the slowest of NVLink/PCIe and the node's NICs.

    (NVLS reduces in the switch and a two-node tree moves half the ring's traffic: both exceed it.)
    """
    system, ranks, op = group
    p = predict(op, SIZES, system, ranks)
    bottleneck = system.intra_bw_Bps
    if p.num_nodes > 1:
        bottleneck = min(bottleneck, system.node_net_bw_Bps)
    ring = np.array([a == "ring" for a in p.algorithm])
    assert np.all(p.busbw_GBps[ring] * 1e9 <= bottleneck * (1 + 1e-9))
    assert np.all(p.busbw_GBps * 1e9 <= 2 * max(system.intra_bw_Bps, system.node_net_bw_Bps) * (1 + 1e-9))


@settings(deadline=None, max_examples=50)
@given(systems, st.sampled_from(OPS))
def test_one_rank_costs_nothing(system, op):
    """A group of one GPU takes no time."""
    assert np.all(predict(op, SIZES, system, 1).time_s == 0)


@settings(deadline=None, max_examples=100)
@given(groups)
def test_one_size_at_a_time_is_the_same_time(group):
    """predict_time_s (one float) gives, to the bit, predict's time for that size (arrays)."""
    system, ranks, op = group
    sizes = SIZES[::7]
    times = predict(op, sizes, system, ranks).time_s
    assert [predict_time_s(op, float(size), system, ranks) for size in sizes] == times.tolist()
