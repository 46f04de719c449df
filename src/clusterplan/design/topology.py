"""Fat-tree fabrics (plain and rail-optimised): switches, links and bisection.

Counting rules (docs/topology.md):

- A leaf splits its ``radix`` ports into ``down = floor(radix * o / (1 + o))``
  endpoint ports and ``radix - down`` uplinks, for oversubscription ``o``.
  A leaf carrying ``e`` endpoints wires ``ceil(e / o)`` uplinks, so the
  ratio holds on partly filled leaves too.
- Plain fat-tree: all endpoints share the leaves. Rail-optimised: NIC ``i``
  of every node goes to rail ``i``, and each rail has leaves of its own.
- Two tiers: spines take every leaf uplink, ``ceil(uplinks / radix)``
  spines; possible while there are at most ``radix`` leaves.
- Three tiers: pods of ``radix // 2`` leaves share aggregation switches
  (half their ports down, half up, non-blocking); cores take every
  aggregation uplink. Possible while there are at most ``radix`` pods.
- One tier: a single switch. Chosen automatically (``tiers = 0``) only when every
  endpoint fits on one leaf's ``down`` ports, so the switch keeps its uplink half
  to grow into a leaf; asked for (``tiers = 1``), whenever every endpoint fits on
  its ``radix`` ports. Two tiers asked for where one switch would do spread the
  endpoints over two leaves.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

TIER_NAMES = {1: ("switch",), 2: ("leaf", "spine"), 3: ("leaf", "aggregation", "core")}


@dataclass(**FROZEN)
class Topology:
    """Switch and link counts of one fabric; ``switches``/``links`` are by tier, bottom up."""

    kind: str
    tiers: int
    num_endpoints: int
    radix: int
    switches: tuple[tuple[str, int], ...]   # (tier name, count)
    links: tuple[tuple[str, int], ...]      # (between, count): "node-leaf", "leaf-spine", ...
    ports_used: int
    ports_available: int
    bisection_fraction: float               # worst leaf: uplink / endpoint capacity, at most 1
    endpoints_per_leaf: int                 # most NICs on one leaf (the single switch: all)

    @property
    def num_switches(self) -> int:
        return sum(count for _, count in self.switches)

    @property
    def num_links(self) -> int:
        return sum(count for _, count in self.links)

    @property
    def num_switch_links(self) -> int:
        """Links with a switch at both ends."""
        return self.num_links - self.num_endpoints


def fat_tree(*, num_nodes: int, nics_per_node: int, radix: int, oversubscription: float = 1.0,
             rail_optimized: bool = False, tiers: int = 0) -> Topology:
    """Smallest fat-tree (or rail-optimised fat-tree) that connects every NIC."""
    endpoints = num_nodes * nics_per_node
    kind = "rail-optimized" if rail_optimized else "fat-tree"
    groups = [num_nodes] * nics_per_node if rail_optimized else [endpoints]
    single_switch = len(groups) == 1 and endpoints <= radix
    if tiers == 1 and not single_switch:
        raise ConfigError(f"one switch of {radix} ports cannot take {endpoints:,} NICs"
                          + (" on separate rails" if rail_optimized and endpoints <= radix else ""),
                          key="network.tiers")
    down = max(1, math.floor(radix * oversubscription / (1 + oversubscription)))
    if tiers == 1 or (tiers == 0 and single_switch and endpoints <= down):
        return Topology(kind=kind, tiers=1, num_endpoints=endpoints, radix=radix,
                        switches=(("switch", 1),), links=(("node-switch", endpoints),),
                        ports_used=endpoints, ports_available=radix, bisection_fraction=1.0,
                        endpoints_per_leaf=endpoints)

    leaves_per_group = [math.ceil(group / down) for group in groups]
    if sum(leaves_per_group) == 1:  # two tiers asked where one switch would do: spread over two leaves
        leaves_per_group = [min(2, groups[0])]
    leaf_endpoints = [share for group, n in zip(groups, leaves_per_group) for share in _spread(group, n)]
    leaf_uplinks = [math.ceil(e / oversubscription) for e in leaf_endpoints]
    num_leaves, uplinks = len(leaf_endpoints), sum(leaf_uplinks)
    bisection = min(1.0, min(u / e for u, e in zip(leaf_uplinks, leaf_endpoints)))

    two_tier_ok = num_leaves <= radix
    if tiers == 2 and not two_tier_ok:
        raise ConfigError(f"two tiers of {radix}-port switches connect at most {radix * down:,} NICs "
                          f"at {oversubscription:g}:1, the cluster has {endpoints:,}; use 0 (auto) or 3",
                          key="network.tiers")
    if tiers == 2 or (tiers == 0 and two_tier_ok):
        spines = math.ceil(uplinks / radix)
        return Topology(kind=kind, tiers=2, num_endpoints=endpoints, radix=radix,
                        switches=(("leaf", num_leaves), ("spine", spines)),
                        links=(("node-leaf", endpoints), ("leaf-spine", uplinks)),
                        ports_used=endpoints + 2 * uplinks, ports_available=radix * (num_leaves + spines),
                        bisection_fraction=bisection, endpoints_per_leaf=max(leaf_endpoints))

    half = radix // 2
    pods = [leaf_uplinks[i:i + half] for i in range(0, num_leaves, half)]
    if len(pods) > radix:
        raise ConfigError(f"{endpoints:,} NICs need more than three tiers of {radix}-port switches",
                          key="cluster.num_nodes")
    aggregation = sum(math.ceil(sum(pod) / half) for pod in pods)
    cores = math.ceil(uplinks / radix)
    return Topology(kind=kind, tiers=3, num_endpoints=endpoints, radix=radix,
                    switches=(("leaf", num_leaves), ("aggregation", aggregation), ("core", cores)),
                    links=(("node-leaf", endpoints), ("leaf-aggregation", uplinks),
                           ("aggregation-core", uplinks)),
                    ports_used=endpoints + 4 * uplinks,
                    ports_available=radix * (num_leaves + aggregation + cores),
                    bisection_fraction=bisection, endpoints_per_leaf=max(leaf_endpoints))


def _spread(total: int, parts: int) -> list[int]:
    """``total`` split into ``parts`` near-equal integers."""
    base, extra = divmod(total, parts)
    return [base + 1] * extra + [base] * (parts - extra)
