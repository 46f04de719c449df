"""Cables by distance: each tier's links get a medium and a length from the rack layout (docs/topology.md).

The floor: racks 0.6 m wide stand in rows of ``RACKS_PER_ROW``, rows ``ROW_PITCH_M`` apart. A leaf sits in
the middle of the racks whose nodes it serves (in their own rack when they all fit one: top of rack), an
aggregation switch in the middle of its pod, spines and cores in the middle of the floor. A tier's length
is its longest link: along the row and across rows to the switch, plus ``SLACK_M`` up to the cable tray and
down. The medium is the cheapest that reaches: copper (DAC) inside a rack, the fabric's multimode optics to
their reach (50 m), single-mode optics beyond.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.catalog import Cable, Transceiver
from clusterplan.design.racks import RackLayout
from clusterplan.design.topology import Topology
from clusterplan.schema import FROZEN

RACK_WIDTH_M = 0.6      # the catalog's racks are 600 mm wide
RACKS_PER_ROW = 16      # ASSUMPTION: a row of about 10 m, a common hot/cold-aisle pod
ROW_PITCH_M = 3.0       # ASSUMPTION: 1.2 m rack depth, 1.2 m cold aisle, 0.6 m hot aisle
SLACK_M = 3.0           # ASSUMPTION: up to the overhead tray, down again, a service loop
IN_RACK_M = 2.0         # ASSUMPTION: a top-of-rack switch to the lowest server


@dataclass(**FROZEN)
class Media:
    """The fabric's parts for each medium: its standard optics and cable, copper, single-mode (None = none)."""

    nic_transceiver: Transceiver
    switch_transceiver: Transceiver
    cable: Cable
    copper: Cable | None = None
    singlemode_nic_transceiver: Transceiver | None = None
    singlemode_switch_transceiver: Transceiver | None = None
    singlemode_cable: Cable | None = None


@dataclass(**FROZEN)
class CableRun:
    """The links of one tier: how many, how long (the longest), over what, and the parts they take."""

    link: str                               # "node-leaf", "leaf-spine", ...
    count: int
    length_m: float
    medium: str                             # "copper", "multimode" or "singlemode"
    cable: Cable
    cables: int                             # assemblies (a copper splitter carries 2 or 4 links)
    nic_transceiver: Transceiver | None     # at the node end of a node link; None for copper or switch links
    nic_modules: int
    switch_transceiver: Transceiver | None  # None for copper
    switch_modules: int


def span_m(racks: int) -> float:
    """The farthest of ``racks`` consecutive racks from their middle, along the row and across rows."""
    rows = math.ceil(racks / RACKS_PER_ROW)
    return min(racks, RACKS_PER_ROW) / 2 * RACK_WIDTH_M + (rows - 1) / 2 * ROW_PITCH_M


def tier_lengths(topology: Topology, racks: RackLayout, *, num_nodes: int, nics_per_node: int) -> dict[str, float]:
    """The longest link of each tier, in metres (``topology.links`` order)."""
    on_leaf = topology.endpoints_per_leaf
    nodes_per_leaf = on_leaf if topology.kind == "rail-optimized" and topology.tiers > 1 else \
        math.ceil(on_leaf / nics_per_node)
    leaf_racks = math.ceil(min(nodes_per_leaf, num_nodes) / racks.servers_per_rack)
    floor = span_m(racks.num_racks) + SLACK_M
    lengths = {}
    for index, (link, _) in enumerate(topology.links):
        if index == 0:
            lengths[link] = IN_RACK_M if leaf_racks == 1 else span_m(leaf_racks) + SLACK_M
        elif link == "leaf-aggregation":
            leaves = dict(topology.switches)["leaf"]
            pods = math.ceil(leaves / (topology.radix // 2))
            lengths[link] = span_m(math.ceil(racks.compute_racks / pods)) + SLACK_M
        else:
            lengths[link] = floor
    return lengths


def cable_runs(topology: Topology, racks: RackLayout, media: Media, *, num_nodes: int,
               nics_per_node: int) -> tuple[CableRun, ...]:
    """Every tier's links with the medium that reaches: copper in a rack, multimode to its reach, then single-mode."""
    lengths = tier_lengths(topology, racks, num_nodes=num_nodes, nics_per_node=nics_per_node)
    return tuple(_run(link, count, lengths[link], media, node_link=index == 0)
                 for index, (link, count) in enumerate(topology.links))


def _run(link: str, count: int, length_m: float, media: Media, *, node_link: bool) -> CableRun:
    copper = media.copper
    if node_link and copper is not None and length_m <= copper.reach_m:
        return CableRun(link=link, count=count, length_m=length_m, medium="copper", cable=copper,
                        cables=math.ceil(count / copper.links), nic_transceiver=None, nic_modules=0,
                        switch_transceiver=None, switch_modules=0)
    nic, switch, cable = media.nic_transceiver, media.switch_transceiver, media.cable
    if length_m > cable.reach_m and media.singlemode_cable is not None \
            and media.singlemode_nic_transceiver is not None and media.singlemode_switch_transceiver is not None:
        nic, switch, cable = media.singlemode_nic_transceiver, media.singlemode_switch_transceiver, \
            media.singlemode_cable
    switch_ends = count if node_link else 2 * count
    return CableRun(link=link, count=count, length_m=length_m, medium=cable.medium, cable=cable, cables=count,
                    nic_transceiver=nic if node_link else None,
                    nic_modules=math.ceil(count / nic.ports) if node_link else 0,
                    switch_transceiver=switch, switch_modules=math.ceil(switch_ends / switch.ports))
