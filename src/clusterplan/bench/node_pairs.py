"""Which ranks make a node, and which node pairs ``bench nodes`` measures together (docs/health.md).

Ranks are grouped into nodes by host name, or, with ``ranks_per_node``, in
runs of consecutive ranks (several "nodes" on one host, for testing). Node
pairs are measured in rounds of disjoint pairs: ``"all"`` covers every pair in
k - 1 rounds (k even; k rounds when odd, the circle method); ``"ring"`` the k
neighbour pairs (i, i + 1 mod k) in 2 rounds (3 when k is odd); ``"auto"`` is
"all" up to ``RING_ABOVE`` nodes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.schema import FROZEN

PAIRINGS = ("auto", "all", "ring")
RING_ABOVE = 16                 # "auto": every pair up to 16 nodes (15 rounds, 120 links), neighbours above


@dataclass(**FROZEN)
class Node:
    """A node: its name and its ranks (the first runs the node checks)."""

    name: str
    ranks: tuple[int, ...]


def group_nodes(hosts: Sequence[str], ranks_per_node: int | None = None) -> tuple[Node, ...]:
    """Ranks by host name (in order of first rank), or runs of ``ranks_per_node`` named ``host/i``."""
    if ranks_per_node is None:
        by_host: dict[str, list[int]] = {}
        for rank, host in enumerate(hosts):
            by_host.setdefault(host, []).append(rank)
        return tuple(Node(name=host, ranks=tuple(ranks)) for host, ranks in by_host.items())
    if len(hosts) % ranks_per_node:
        raise ConfigError(f"{len(hosts)} ranks do not split into nodes of {ranks_per_node}", key="--ranks-per-node")
    return tuple(Node(name=f"{hosts[first]}/{first // ranks_per_node}",
                      ranks=tuple(range(first, first + ranks_per_node)))
                 for first in range(0, len(hosts), ranks_per_node))


def all_pair_rounds(num_nodes: int) -> list[list[tuple[int, int]]]:
    """Every pair once, in rounds of disjoint pairs (the circle method of round-robin tournaments)."""
    players: list[int | None] = list(range(num_nodes)) + ([None] if num_nodes % 2 else [])
    size = len(players)
    rounds = []
    for _ in range(size - 1):
        pairs = [(players[i], players[size - 1 - i]) for i in range(size // 2)]
        rounds.append(sorted((min(a, b), max(a, b)) for a, b in pairs if a is not None and b is not None))
        players = [players[0], players[-1], *players[1:-1]]
    return [r for r in rounds if r]


def ring_rounds(num_nodes: int) -> list[list[tuple[int, int]]]:
    """Neighbour pairs (i, i + 1 mod k) coloured into 2 rounds (k even) or 3 (k odd) of disjoint pairs."""
    if num_nodes < 2:
        return []
    if num_nodes == 2:
        return [[(0, 1)]]
    edges = [(i, (i + 1) % num_nodes) for i in range(num_nodes)]
    last = edges.pop() if num_nodes % 2 else None
    rounds = [[(min(e), max(e)) for e in edges[start::2]] for start in (0, 1)]
    if last:
        rounds.append([(min(last), max(last))])
    return [sorted(r) for r in rounds if r]


def pair_rounds(num_nodes: int, pairing: str) -> tuple[str, list[list[tuple[int, int]]]]:
    """The pairing actually used ("all" or "ring") and its rounds."""
    if pairing == "auto":
        pairing = "all" if num_nodes <= RING_ABOVE else "ring"
    return pairing, all_pair_rounds(num_nodes) if pairing == "all" else ring_rounds(num_nodes)
