"""Racks from the power and space budget of each rack.

Servers fill compute racks, as many per rack as both the power budget and
the rack units allow. Switches and storage blocks share infrastructure
racks, packed first-fit by decreasing power under the same two limits.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.errors import InfeasiblePlan
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class Gear:
    """``count`` identical boxes of one kind."""

    name: str
    count: int
    power_w: float
    rack_units: int


@dataclass(**FROZEN)
class RackLayout:
    """How many racks of each kind, and the heaviest rack's draw."""

    compute_racks: int
    servers_per_rack: int
    infrastructure_racks: int
    max_rack_power_w: float
    budget_w: float
    rack_units: int
    rack_power_w: tuple[float, ...] = ()   # every rack's draw: compute racks first, then infrastructure

    @property
    def num_racks(self) -> int:
        return self.compute_racks + self.infrastructure_racks


def lay_out(servers: Gear, infrastructure: list[Gear], *, budget_w: float, rack_units: int) -> RackLayout:
    """Racks for ``servers`` and the ``infrastructure`` gear, each rack within budget."""
    per_rack = min(math.floor(budget_w / servers.power_w), rack_units // servers.rack_units)
    if per_rack < 1:
        raise InfeasiblePlan(
            f"one {servers.name} needs {servers.power_w / 1e3:.1f} kW and {servers.rack_units}U, "
            f"a rack gives {budget_w / 1e3:.1f} kW and {rack_units}U (facility.rack_power_kw, facility.cooling)")
    racks = _pack(infrastructure, budget_w=budget_w, rack_units=rack_units)
    compute = math.ceil(servers.count / per_rack)
    filled = [min(per_rack, servers.count - i * per_rack) * servers.power_w for i in range(compute)]
    powers = (*filled, *racks)
    return RackLayout(compute_racks=compute, servers_per_rack=per_rack, infrastructure_racks=len(racks),
                      max_rack_power_w=max(powers), budget_w=budget_w, rack_units=rack_units,
                      rack_power_w=powers)


def lay_out_domains(domain: Gear, servers_per_domain: int, infrastructure: list[Gear], *, budget_w: float,
                    cooling_w: float, rack_units: int) -> RackLayout:
    """One rack per rack-scale NVLink ``domain`` (its compute trays and NVLink switch trays, the vendor's rack),
    and the ``infrastructure`` gear packed as ``lay_out`` packs it. The domain rack's draw is the system's own; the
    facility's cooling must take it (``cooling_w``: the layout's budget), the per-rack ``budget_w`` binds the
    infrastructure racks only."""
    if domain.power_w > cooling_w or domain.rack_units > rack_units:
        raise InfeasiblePlan(
            f"one {domain.name} needs {domain.power_w / 1e3:.1f} kW and {domain.rack_units}U, the cooling takes "
            f"{cooling_w / 1e3:.1f} kW per rack and a rack has {rack_units}U (facility.cooling, facility.rack)")
    racks = _pack(infrastructure, budget_w=budget_w, rack_units=rack_units)
    powers = (*[domain.power_w] * domain.count, *racks)
    return RackLayout(compute_racks=domain.count, servers_per_rack=servers_per_domain,
                      infrastructure_racks=len(racks), max_rack_power_w=max(powers), budget_w=cooling_w,
                      rack_units=rack_units, rack_power_w=powers)


def _pack(infrastructure: list[Gear], *, budget_w: float, rack_units: int) -> list[float]:
    """Infrastructure racks, first-fit by decreasing power within the budget and the units: each rack's draw."""
    racks: list[list[float]] = []  # [power_w, units] per infrastructure rack
    boxes = [(g.power_w, g.rack_units, g.name) for g in infrastructure for _ in range(g.count)]
    for power_w, units, name in sorted(boxes, reverse=True):
        if power_w > budget_w or units > rack_units:
            raise InfeasiblePlan(f"one {name} needs {power_w / 1e3:.1f} kW and {units}U, "
                                 f"a rack gives {budget_w / 1e3:.1f} kW and {rack_units}U")
        for rack in racks:
            if rack[0] + power_w <= budget_w and rack[1] + units <= rack_units:
                rack[0] += power_w
                rack[1] += units
                break
        else:
            racks.append([power_w, units])
    return [rack[0] for rack in racks]
