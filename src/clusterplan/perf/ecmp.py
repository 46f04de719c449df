"""ECMP collisions: what a fabric without adaptive routing costs a collective that crosses its leaves.

Switches that hash each flow onto one uplink (ECMP, as plain RoCE does) load some uplinks more than others,
and a synchronous collective waits for the most loaded uplink of every leaf and spine it crosses: the
expected maximum of Poisson loads over those links, against the mean load (``collisions``).

No validation run exercises this (ASSUMPTION, docs/collectives.md): the only published figure is Meta's,
"up to 40 %" gained on AllReduce by hashing on more queue pairs than baseline ECMP (2024-08-05). The model's
slowdown is bounded by it (``REPORTED_MAX_SLOWDOWN``), so it never claims more loss than a source reports;
``collisions`` keeps the unbounded estimate for the docs and the tests.
"""

from __future__ import annotations

import functools
import math

QPS_PER_CONNECTION = 1       # NCCL_IB_QPS_PER_CONNECTION's default (NCCL environment variables documentation)
REPORTED_MAX_SLOWDOWN = 1.4  # Meta, "A RoCE network for distributed AI training at scale" (2024-08-05): "up to 40 %"


def slowdown(system, nodes: int, tree: bool) -> float:
    """How much slower than its mean uplink load a group of ``nodes`` on ``system`` (a collectives.System)
    runs its cross-leaf traffic: 1 with adaptive routing or inside one leaf, else the collisions bounded by
    the largest slowdown a source reports."""
    if system.adaptive_routing or nodes <= system.nodes_per_leaf:
        return 1.0
    return min(REPORTED_MAX_SLOWDOWN, collisions(system, nodes, tree))


def collisions(system, nodes: int, tree: bool) -> float:
    """The unbounded ECMP estimate. Each NIC sends ``flows`` flows (one per channel and queue pair), each
    wanting 1 / flows of its link. A tree's (and PAT's) edges join far-apart nodes: every NIC on a leaf sends
    its flows out of it. A ring leaves a leaf once, from one node, but through every NIC of that node (every
    channel of a full-node ring, or the rings of every group of fewer GPUs a node, one NIC each): the node's
    NICs on that leaf. On a rail-optimized fabric the NICs are spread over ``planes`` leaves (one a rail), and
    a synchronous collective waits on the leaves of every rail."""
    flows = max(1.0, system.channels / system.nics_per_node) * QPS_PER_CONNECTION
    planes = system.nics_per_node if system.rail_optimized else 1        # leaves a node's NICs are spread over
    ports = system.nodes_per_leaf * system.nics_per_node / planes        # node ports (and so uplinks) a leaf has
    uplinks = max(1, round(ports * system.bisection_fraction))
    sending = ports if tree else system.nics_per_node / planes           # NICs whose flows leave a leaf
    per_uplink = flows * sending / uplinks
    leaves = math.ceil(nodes / system.nodes_per_leaf) * planes
    links = uplinks * leaves * 2 * max(1, system.tiers - 1)               # up from each leaf, down from spines
    return max(1.0, expected_max_poisson(per_uplink, links) / flows) / max(1.0, per_uplink / flows)


@functools.lru_cache(maxsize=1024)
def expected_max_poisson(mean: float, count: int) -> float:
    """E[max] of ``count`` independent Poisson(``mean``) loads (flows hashed at random onto as many links):
    the sum over k of P(max > k)."""
    total, cdf, term = 0.0, 0.0, math.exp(-mean)
    for k in range(int(mean * 20 + 50)):
        cdf += term
        total += 1.0 - cdf ** count
        term *= mean / (k + 1)
    return max(total, mean)
