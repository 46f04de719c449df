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
    """Infrastructure racks, first-fit by decreasing power within the budget and the units: each rack's draw.

    First-fit puts the boxes of one kind into the earliest racks with room, one rack after the other, so racks
    left in the same state stay alike: they are kept as runs of identical racks, and the work grows with the
    kinds of gear, not the boxes (200,000 storage blocks cost what 20 do)."""
    runs: list[tuple[float, int, int]] = []  # (power_w, units, racks) per run of identical infrastructure racks
    kinds = sorted({(g.power_w, g.rack_units, g.name): 0 for g in infrastructure if g.count > 0}, reverse=True)
    counts = {kind: sum(g.count for g in infrastructure if (g.power_w, g.rack_units, g.name) == kind)
              for kind in kinds}
    for power_w, units, name in kinds:
        if power_w > budget_w or units > rack_units:
            raise InfeasiblePlan(f"one {name} needs {power_w / 1e3:.1f} kW and {units}U, "
                                 f"a rack gives {budget_w / 1e3:.1f} kW and {rack_units}U")
        box = _Box(power_w=power_w, units=units, budget_w=budget_w, rack_units=rack_units)
        runs, left = _fill_runs(runs, box, counts[power_w, units, name])
        while left:
            placed, rack_w, rack_u = box.fill(0.0, 0, left)
            full = left // placed
            runs.append((rack_w, rack_u, full))
            left -= full * placed
    return [rack_w for rack_w, _, racks in runs for _ in range(racks)]


@dataclass(**FROZEN)
class _Box:
    """One kind of box and the rack it must fit."""

    power_w: float
    units: int
    budget_w: float
    rack_units: int

    def fill(self, rack_w: float, rack_u: int, most: int) -> tuple[int, float, int]:
        """How many of these boxes (at most ``most``) a rack drawing ``rack_w`` over ``rack_u`` units still
        takes, one at a time as first-fit adds them (the same sums, so the same rounding), and the rack after."""
        if self.power_w == 0 and self.units == 0:
            return most, rack_w, rack_u
        placed = 0
        while placed < most and rack_w + self.power_w <= self.budget_w and rack_u + self.units <= self.rack_units:
            rack_w, rack_u, placed = rack_w + self.power_w, rack_u + self.units, placed + 1
        return placed, rack_w, rack_u


def _fill_runs(runs: list[tuple[float, int, int]], box: _Box, count: int) -> tuple[list[tuple[float, int, int]], int]:
    """``count`` boxes into the existing runs of racks, earliest first; the runs after and the boxes left over."""
    after: list[tuple[float, int, int]] = []
    for rack_w, rack_u, racks in runs:
        placed, full_w, full_u = box.fill(rack_w, rack_u, count)
        if not placed:
            after.append((rack_w, rack_u, racks))
            continue
        filled = min(racks, count // placed)
        after.append((full_w, full_u, filled))
        count -= filled * placed
        if filled < racks and count:
            _, part_w, part_u = box.fill(rack_w, rack_u, count)
            after.append((part_w, part_u, 1))
            filled, count = filled + 1, 0
        if filled < racks:
            after.append((rack_w, rack_u, racks - filled))
    return [run for run in after if run[2]], count
