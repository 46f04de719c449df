"""Spec -> Design: resolve catalog ids, wire the fabric, lay out racks, add up power."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from clusterplan.catalog import (Cable, Catalog, Cooling, Fabric, Gpu, Nic, Pdu, Rack, Server, Service,
                                 StorageTier, Switch, Transceiver)
from clusterplan.design.cabling import CableRun, Media, cable_runs
from clusterplan.design.racks import Gear, RackLayout, lay_out, lay_out_domains
from clusterplan.design.topology import Topology, fat_tree
from clusterplan.errors import ConfigError
from clusterplan.limits import LIMITS
from clusterplan.schema import FROZEN, check
from clusterplan.spec import Spec, Staff, Storage


@dataclass(**FROZEN)
class Parts:
    """The catalog entries a design is built from."""

    gpu: Gpu
    server: Server
    fabric: Fabric
    nic: Nic
    switch: Switch
    nic_transceiver: Transceiver
    switch_transceiver: Transceiver
    cable: Cable
    storage: StorageTier
    burst_buffer: StorageTier
    rack: Rack
    pdu: Pdu
    cooling: Cooling
    integration: Service
    media: Media                # the fabric's parts for each medium (design/cabling.py)
    domain_switch: Switch | None = None   # a rack-scale server's NVLink switch tray (None: the domain is the server)


@dataclass(**FROZEN)
class Design:
    """A buildable cluster: counts of everything, its power and its racks."""

    parts: Parts
    num_nodes: int
    gpus_per_node: int
    nics_per_node: int
    topology: Topology
    nic_transceivers: int       # all the runs' modules, of whatever medium
    switch_transceivers: int
    cabling: tuple[CableRun, ...]   # each tier's links: medium, length, parts
    storage_tb: float
    storage_rule: str           # how storage_tb and storage_units were found
    storage_units: int
    storage_read_Bps: float
    storage_write_Bps: float
    burst_buffer_tb: float      # 0 = none
    burst_buffer_units: int
    racks: RackLayout
    pdus: int
    it_power_w: float           # nameplate maximum: sizes racks, feeds and colocation
    it_typical_power_w: float   # average draw under training load: sizes the electricity bill
    pue: float
    staff: Staffing

    @property
    def num_gpus(self) -> int:
        return self.num_nodes * self.gpus_per_node

    @property
    def domain_gpus(self) -> int:
        """GPUs of one NVLink (scale-up) domain: the server's own, or a rack-scale system's (docs/nvl72.md)."""
        return self.parts.server.nvlink_domain_gpus

    @property
    def num_domains(self) -> int:
        return self.num_gpus // self.domain_gpus

    @property
    def domain_switches(self) -> int:
        """NVLink switch trays of every rack-scale domain (0 where the domain is one server)."""
        return self.num_domains * self.parts.server.domain_switches if self.parts.domain_switch else 0

    @property
    def facility_power_w(self) -> float:
        return self.it_power_w * self.pue

    @property
    def burst_buffer_write_Bps(self) -> float:
        return self.burst_buffer_units * self.parts.burst_buffer.unit_write_Bps

    @property
    def burst_buffer_read_Bps(self) -> float:
        return self.burst_buffer_units * self.parts.burst_buffer.unit_read_Bps

    @property
    def bisection_bw_Bps_per_gpu(self) -> float:
        rate = self.parts.fabric.link_rate_Bps * self.nics_per_node / self.gpus_per_node
        return rate * self.topology.bisection_fraction


@dataclass(**FROZEN)
class Staffing:
    """The engineers who set up and run the cluster, and the rule that gave each number."""

    ops_engineers: float
    setup_engineers: float
    ops_rule: str
    setup_rule: str


def staffing(staff: Staff, num_gpus: int) -> Staffing:
    """``staff`` with "auto" numbers derived: ceil(GPUs / gpus_per_engineer), at least ``min_engineers``."""
    derived = max(staff.min_engineers, math.ceil(num_gpus / staff.gpus_per_engineer))
    rule = (f"1 per {staff.gpus_per_engineer:,g} GPUs, at least {staff.min_engineers:g} "
            "(staff.gpus_per_engineer)")

    def pick(value: float | None, key: str) -> tuple[float, str]:
        return (derived, rule) if value is None else (value, f"staff.{key}")

    ops, ops_rule = pick(staff.ops_engineers, "ops_engineers")
    setup, setup_rule = pick(staff.setup_engineers, "setup_engineers")
    return Staffing(ops_engineers=ops, setup_engineers=setup, ops_rule=ops_rule, setup_rule=setup_rule)


def storage_blocks(storage: Storage, tier: StorageTier, num_gpus: int) -> tuple[float, int, str]:
    """Usable TB, building blocks and their rule. An explicit ``usable_tb`` binds (the checks flag a tier too slow
    for data loading); "auto" buys ``tb_per_gpu`` x GPUs, in blocks enough to read ``read_Bps_per_gpu`` x GPUs too
    (whole blocks bought for bandwidth bring their capacity)."""
    if storage.usable_tb is not None:
        return storage.usable_tb, math.ceil(storage.usable_tb / tier.unit_capacity_tb), "storage.usable_tb"
    tb, rule = storage.tb_per_gpu * num_gpus, f"{storage.tb_per_gpu:,g} TB per GPU (storage.tb_per_gpu)"
    for_read = math.ceil(storage.read_Bps_per_gpu * num_gpus / tier.unit_read_Bps) if tb else 0
    by_read = for_read > math.ceil(tb / tier.unit_capacity_tb)
    if by_read:
        tb = for_read * tier.unit_capacity_tb
        rule = (f"{for_read:,} blocks to read {storage.read_Bps_per_gpu / 1e6:,g} MB/s per GPU "
                "(storage.read_Bps_per_gpu), more than storage.tb_per_gpu needs")
        _within_storage_limit(tb, "storage.read_Bps_per_gpu", f"{for_read:,} blocks of {tier.id} to read "
                              f"{storage.read_Bps_per_gpu / 1e6:,g} MB/s per GPU x {num_gpus:,} GPUs hold")
    _within_storage_limit(tb, "storage.tb_per_gpu", f"{storage.tb_per_gpu:,g} TB per GPU x {num_gpus:,} GPUs is")
    return tb, math.ceil(tb / tier.unit_capacity_tb), rule


def _within_storage_limit(tb: float, key: str, what: str) -> None:
    """The "auto" capacity stays within the limit an explicit ``storage.usable_tb`` has (docs/scenario.md): the
    racks, the bill of materials and the exported rack list grow with it."""
    most_tb = LIMITS["storage.usable_tb"][1]
    check(tb <= most_tb, key, f"{what} {tb:,.0f} TB, more than the {most_tb:,.0f} TB of storage a scenario may "
                              "have (the storage.usable_tb limit)")


def resolve(spec: Spec, catalog: Catalog) -> Parts:
    """Look up every id the scenario names; errors name the scenario key."""
    gpu = catalog.get("gpus", spec.cluster.gpu, key="cluster.gpu")
    server_id = spec.cluster.server or gpu.default_server
    server = catalog.get("servers", server_id, key="cluster.server")
    fabric = catalog.get("fabrics", spec.network.fabric, key="network.fabric")
    parts = Parts(
        gpu=gpu, server=server, fabric=fabric,
        nic=catalog.get("nics", fabric.nic, key="network.fabric"),
        switch=catalog.get("switches", fabric.switch, key="network.fabric"),
        nic_transceiver=catalog.get("transceivers", fabric.nic_transceiver, key="network.fabric"),
        switch_transceiver=catalog.get("transceivers", fabric.switch_transceiver, key="network.fabric"),
        cable=catalog.get("cables", fabric.cable, key="network.fabric"),
        media=_media(catalog, fabric),
        storage=catalog.get("storage", spec.storage.tier, key="storage.tier"),
        burst_buffer=catalog.get("storage", spec.storage.burst_buffer, key="storage.burst_buffer"),
        rack=catalog.get("racks", spec.facility.rack, key="facility.rack"),
        pdu=catalog.get("pdus", spec.facility.pdu, key="facility.pdu"),
        cooling=catalog.get("cooling", spec.facility.cooling, key="facility.cooling"),
        integration=catalog.get("services", spec.facility.integration, key="facility.integration"),
        domain_switch=catalog.get("switches", server.domain_switch, key="cluster.server") if server.domain_switch
        else None,
    )
    _check_fit(spec, parts)
    return parts


def _media(catalog: Catalog, fabric: Fabric) -> Media:
    def get(family: str, entry_id: str) -> Any:
        return catalog.get(family, entry_id, key="network.fabric") if entry_id else None

    return Media(nic_transceiver=get("transceivers", fabric.nic_transceiver),
                 switch_transceiver=get("transceivers", fabric.switch_transceiver),
                 cable=get("cables", fabric.cable), copper=get("cables", fabric.copper_cable),
                 singlemode_nic_transceiver=get("transceivers", fabric.singlemode_nic_transceiver),
                 singlemode_switch_transceiver=get("transceivers", fabric.singlemode_switch_transceiver),
                 singlemode_cable=get("cables", fabric.singlemode_cable))


def _check_fit(spec: Spec, parts: Parts) -> None:
    server, cluster, network = parts.server, spec.cluster, spec.network
    if server.gpu != cluster.gpu:
        raise ConfigError(f"server {server.id!r} takes {server.gpu}, not {cluster.gpu}", key="cluster.server")
    if cluster.gpus_per_node != server.num_gpus:
        raise ConfigError(f"server {server.id!r} holds {server.num_gpus} GPUs, got {cluster.gpus_per_node}",
                          key="cluster.gpus_per_node")
    if network.nics_per_node > server.max_nics:
        raise ConfigError(f"server {server.id!r} holds at most {server.max_nics} fabric NICs, "
                          f"got {network.nics_per_node}", key="network.nics_per_node")
    if cluster.num_nodes % server.servers_per_domain:
        raise ConfigError(f"server {server.id!r} comes in NVLink domains of {server.servers_per_domain} servers "
                          f"({server.nvlink_domain_gpus} GPUs), got {cluster.num_nodes} servers", key="cluster.num_nodes")


def design(spec: Spec, catalog: Catalog) -> Design:
    """The cluster the scenario describes, wired and racked."""
    parts = resolve(spec, catalog)
    nodes, network = spec.cluster.num_nodes, spec.network
    topology = fat_tree(num_nodes=nodes, nics_per_node=network.nics_per_node, radix=parts.switch.radix,
                        oversubscription=network.oversubscription,
                        rail_optimized=network.topology == "rail-optimized", tiers=network.tiers)
    switch_ports = topology.num_endpoints + 2 * topology.num_switch_links   # for the racks: the standard optics
    standard_switch_modules = math.ceil(switch_ports / parts.switch_transceiver.ports)
    storage = parts.storage
    storage_tb, storage_units, storage_rule = storage_blocks(spec.storage, storage, spec.cluster.num_gpus)
    burst = parts.burst_buffer
    burst_units = math.ceil(spec.storage.burst_buffer_tb / burst.unit_capacity_tb)

    switch_power = parts.switch.power_w + parts.switch_transceiver.power_w * (
        standard_switch_modules / max(topology.num_switches, 1))
    server_power = parts.server.max_power_w + parts.nic_transceiver.power_w * network.nics_per_node
    budget_w = min(spec.facility.rack_power_kw * 1e3, parts.cooling.max_rack_power_w)
    infrastructure = [
        Gear(name=parts.switch.name, count=topology.num_switches, power_w=switch_power,
             rack_units=parts.switch.rack_units),
        Gear(name=storage.name, count=storage_units, power_w=storage.unit_power_w, rack_units=storage.unit_rack_units),
        Gear(name=burst.name, count=burst_units, power_w=burst.unit_power_w, rack_units=burst.unit_rack_units)]
    servers = Gear(name=parts.server.name, count=nodes, power_w=server_power, rack_units=parts.server.rack_units)
    racks = (lay_out_domains(_domain_rack(parts, servers), parts.server.servers_per_domain // parts.server.domain_racks,
                             infrastructure,
                             budget_w=budget_w, cooling_w=parts.cooling.max_rack_power_w,
                             rack_units=parts.rack.rack_units)
             if parts.domain_switch else lay_out(servers, infrastructure, budget_w=budget_w,
                                                 rack_units=parts.rack.rack_units))
    # racks are laid out with the standard optics' power; the total below counts each run's own modules
    runs = cable_runs(topology, racks, parts.media, num_nodes=nodes, nics_per_node=network.nics_per_node)
    nic_modules = sum(run.nic_modules for run in runs)
    switch_modules = sum(run.switch_modules for run in runs)
    optics_w = sum(run.nic_modules * run.nic_transceiver.power_w for run in runs if run.nic_transceiver) + sum(
        run.switch_modules * run.switch_transceiver.power_w for run in runs if run.switch_transceiver)
    shared_w = (parts.switch.power_w * topology.num_switches + storage.unit_power_w * storage_units
                + burst.unit_power_w * burst_units)
    if parts.domain_switch:   # the NVLink switch trays of every rack-scale domain
        shared_w += parts.domain_switch.power_w * parts.server.domain_switches * (nodes // parts.server.servers_per_domain)
    return Design(
        parts=parts, num_nodes=nodes, gpus_per_node=spec.cluster.gpus_per_node,
        nics_per_node=network.nics_per_node, topology=topology,
        nic_transceivers=nic_modules, switch_transceivers=switch_modules, cabling=runs,
        storage_tb=storage_tb, storage_rule=storage_rule, storage_units=storage_units,
        storage_read_Bps=storage_units * storage.unit_read_Bps,
        storage_write_Bps=storage_units * storage.unit_write_Bps,
        burst_buffer_tb=spec.storage.burst_buffer_tb, burst_buffer_units=burst_units,
        racks=racks, pdus=racks.num_racks * spec.facility.pdus_per_rack,
        it_power_w=nodes * parts.server.max_power_w + optics_w + shared_w,
        it_typical_power_w=nodes * parts.server.typical_power_w + optics_w + shared_w,
        pue=spec.facility.pue, staff=staffing(spec.staff, spec.cluster.num_gpus),
    )


def _domain_rack(parts: Parts, servers: Gear) -> Gear:
    """One rack of a rack-scale NVLink domain as gear: its share of the servers (compute trays) and NVLink switch
    trays (all of them for NVL72; half for each of NVL36x2's two racks)."""
    server, switch = parts.server, parts.domain_switch
    racks = server.domain_racks
    per, trays = server.servers_per_domain // racks, server.domain_switches // racks
    return Gear(name=f"{server.nvlink_domain_gpus}-GPU NVLink {'rack' if racks == 1 else f'domain rack (1 of {racks})'} "
                     f"({per} x {server.id}, {trays} x {switch.id})",
                count=servers.count // per, power_w=per * servers.power_w + trays * switch.power_w,
                rack_units=per * servers.rack_units + trays * switch.rack_units)
