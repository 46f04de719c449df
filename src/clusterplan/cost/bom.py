"""Bill of materials and one-off costs: line items priced from the design's parts."""

from __future__ import annotations

import math
from dataclasses import dataclass

from clusterplan.catalog import Cable, Priced, Switch
from clusterplan.design import CableRun, Design
from clusterplan.schema import FROZEN
from clusterplan.units import plural


@dataclass(**FROZEN)
class LineItem:
    """One priced line: ``quantity`` x ``unit_price_usd`` = ``total_usd``."""

    category: str
    item: str
    catalog_id: str
    quantity: float
    per: str
    unit_price_usd: float
    source: str
    assumption: bool = False

    @property
    def total_usd(self) -> float:
        return self.quantity * self.unit_price_usd


def _line(category: str, entry: Priced, quantity: float, item: str = "") -> LineItem:
    return LineItem(category=category, item=item or entry.name, catalog_id=entry.id, quantity=quantity,
                    per=entry.per, unit_price_usd=entry.price_usd,
                    source=f"{entry.source} ({entry.date})" if entry.date else entry.source,
                    assumption=entry.assumption)


@dataclass(**FROZEN)
class Network:
    """An Ethernet network beside the fabric: its switch, its cable, and the ports each node takes."""

    name: str
    switch: Switch
    cable: Cable
    ports_per_node: int
    ports_per_storage_block: int = 0
    ports_per_switch: int = 0     # the management network: one port for each switch of the other networks


@dataclass(**FROZEN)
class Extras:
    """What owning buys beyond the design's parts (docs/cost.md): spare nodes, the front-end and management
    networks."""

    spare_nodes: int = 0
    spare_rule: str = ""
    frontend: Network | None = None
    management: Network | None = None


def bill_of_materials(design: Design, extras: Extras = Extras(), *, sales_tax: float = 0.0) -> tuple[LineItem, ...]:
    """Every piece of hardware the design needs, priced: the capex."""
    parts, topology = design.parts, design.topology
    switches = [_line("network", parts.switch, count, f"{parts.switch.name} ({tier})")
                for tier, count in topology.switches]
    lines = [
        _line("compute", parts.gpu, design.num_gpus),
        _line("compute", parts.server, design.num_nodes),
        *([_line("compute", parts.domain_switch, design.domain_switches,
                 f"{parts.domain_switch.name} ({design.num_domains} NVLink domains of {design.domain_gpus} GPUs)")]
          if parts.domain_switch else []),
        _line("network", parts.nic, design.num_nodes * design.nics_per_node),
        *switches,
        *cabling_lines(design.cabling),
        _line("storage", parts.storage, design.storage_tb, f"{parts.storage.name}: {design.storage_rule}"),
        _line("storage", parts.burst_buffer, design.burst_buffer_tb, f"{parts.burst_buffer.name} (burst buffer)"),
        _line("facility", parts.rack, design.racks.num_racks),
        _line("facility", parts.pdu, design.pdus),
        _line("facility", parts.cooling, design.it_power_w / 1e3),
        *spare_lines(design, extras.spare_nodes, extras.spare_rule),
        *ethernet_lines(design, extras),
    ]
    lines = [line for line in lines if line.quantity > 0]
    if sales_tax:
        base = sum(line.total_usd for line in lines)
        lines.append(LineItem(category="tax", item=f"Sales tax, {sales_tax:.2%} of the hardware (finance.sales_tax)",
                              catalog_id="", quantity=base, per="USD of hardware", unit_price_usd=sales_tax,
                              source="scenario finance.sales_tax"))
    return tuple(lines)


def spare_lines(design: Design, spare_nodes: int, rule: str) -> list[LineItem]:
    """Cold spare nodes: GPUs, server and fabric NICs of each, on the shelf (no power, no rack space); their lines
    name "spare node"."""
    if not spare_nodes:
        return []
    parts, why = design.parts, f"{spare_nodes} spare {plural(spare_nodes, 'nodes')}, {rule}"
    return [_line("compute", parts.gpu, spare_nodes * design.gpus_per_node, f"{parts.gpu.name} ({why})"),
            _line("compute", parts.server, spare_nodes, f"{parts.server.name} ({why})"),
            _line("network", parts.nic, spare_nodes * design.nics_per_node, f"{parts.nic.name} ({why})")]


def network_size(ports: int, radix: int) -> tuple[int, int]:
    """(leaf, spine) switches for ``ports`` endpoints: one switch while they fit, else leaves with half their
    ports down and half up, and the spines those uplinks need."""
    if ports <= radix:
        return (1 if ports else 0), 0
    leaves = math.ceil(ports / (radix // 2))
    return leaves, math.ceil(leaves * (radix // 2) / radix)


def ethernet_lines(design: Design, extras: Extras) -> list[LineItem]:
    """The front-end (in-band, storage) and out-of-band management networks, sized to the node count (a spare
    node takes the ports of the node it replaces)."""
    nodes = design.num_nodes
    blocks = design.storage_units + design.burst_buffer_units
    lines: list[LineItem] = []
    other_switches = design.topology.num_switches
    for network in (extras.frontend, extras.management):
        if network is None:
            continue
        ports = (nodes * network.ports_per_node + blocks * network.ports_per_storage_block
                 + other_switches * network.ports_per_switch)
        leaves, spines = network_size(ports, network.switch.radix)
        uplinks = leaves * (network.switch.radix // 2) if spines else 0
        rule = f"{network.name}: {ports:,} ports"
        lines += [_line("network", network.switch, leaves + spines,
                        f"{network.switch.name} ({rule}; {leaves} leaf, {spines} spine)"),
                  _line("network", network.cable, ports + uplinks, f"{network.cable.name} ({rule})")]
        other_switches += leaves + spines
    return lines


def cabling_lines(runs: tuple[CableRun, ...]) -> list[LineItem]:
    """NIC-end modules, switch-end modules, then cables: one line per part, naming the tiers it serves, how far
    and over what (design/cabling.py)."""
    parts: dict[str, tuple[Priced, list[tuple[float, CableRun]]]] = {}
    for attribute, count in (("nic_transceiver", "nic_modules"), ("switch_transceiver", "switch_modules"),
                             ("cable", "cables")):
        for run in runs:
            entry = getattr(run, attribute)
            if entry is not None and getattr(run, count):
                parts.setdefault(entry.id, (entry, []))[1].append((getattr(run, count), run))
    return [_line("network", entry, sum(quantity for quantity, _ in uses),
                  f"{entry.name} ({'; '.join(_where(run) for _, run in uses)})")
            for entry, uses in parts.values()]


def _where(run: CableRun) -> str:
    """"node-leaf, in the rack (2 m)", "aggregation-core, single-mode, up to 60 m"."""
    medium = {"copper": "copper", "multimode": "multimode", "singlemode": "single-mode"}[run.medium]
    return f"{run.link}, {medium}, up to {run.length_m:,.0f} m"


def one_off_items(design: Design, *, setup_engineers: float, setup_months: float,
                  loaded_cost_usd_per_year: float) -> tuple[LineItem, ...]:
    """Costs paid once at the start that are not hardware: integration and setup staff."""
    staff = LineItem(category="setup", catalog_id="",
                     item=f"Setup engineers (engineer-years): {setup_engineers:,g} for {setup_months:g} months, "
                          f"{design.staff.setup_rule}",
                     quantity=setup_engineers * setup_months / 12, per="engineer-year",
                     unit_price_usd=loaded_cost_usd_per_year, source="scenario [staff]")
    lines = (_line("setup", design.parts.integration, design.num_nodes), staff)
    return tuple(line for line in lines if line.quantity > 0)
