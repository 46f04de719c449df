"""Design checks: what an experienced cluster builder would flag, one line each."""

from __future__ import annotations

from collections.abc import Sequence

from clusterplan.cost import CloudCost, Costs
from clusterplan.design import Design
from clusterplan.reliability import Reliability
from clusterplan.units import format_usd

STRANDED_RACK_POWER = 0.20   # flag racks that leave more than this share of their budget unused
STORAGE_SHARE_OF_GPU = 0.20  # builders budget storage at 20 % of GPU spend or more
HIGH_UTILIZATION = 0.90      # above what shared clusters sustain (60-85 % in the public case)


def design_checks(design: Design, own: Costs, rent: Sequence[CloudCost], *, rack_power_kw: float,
                  oversubscription: float, read_Bps_per_gpu: float, utilization: float, years: int,
                  workload: bool = False, reliability: Reliability | None = None,
                  predicted_reading: bool = True) -> tuple[str, ...]:
    """Warnings about the design, its costs and the cloud comparison.

    ``rack_power_kw``, ``oversubscription``, ``read_Bps_per_gpu``, ``utilization`` and ``years`` are the
    scenario's. ``workload``: the scenario names a training job; ``reliability`` is that job's (None when the
    cluster has no storage to checkpoint to), and ``predicted_reading`` says whether its data loading is the
    training prediction's tokens/s x bytes per token, checked here, or the per-GPU profile, which the storage
    bandwidth check already holds against the whole cluster.
    """
    warnings = [*_rack_checks(design, rack_power_kw), *_fabric_checks(design, oversubscription),
                *_storage_checks(design, own, read_Bps_per_gpu),
                *_workload_checks(design, workload, reliability, predicted_reading),
                *_finance_checks(design, own, rent, utilization, years)]
    return tuple(warnings)


def _workload_checks(design: Design, workload: bool, job: Reliability | None, read: bool) -> list[str]:
    """Checkpoint, capacity and data-loading checks of the scenario's training job, when it names one."""
    if not workload:
        return []
    if job is None:
        return ([] if design.storage_units else
                ["the cluster has no storage (storage.usable_tb = 0): the workload's checkpoints, restarts and "
                 "goodput are not modelled, and time- and cost-to-train are raw only"])
    return reliability_checks(job, read=read)


def reliability_checks(job: Reliability, *, read: bool = True) -> list[str]:
    """Warnings when storage cannot hold the data and checkpoints, feed the GPUs, or absorb checkpoints."""
    out = []
    storage, checkpoint = job.storage, job.checkpoint
    if storage.capacity_tb > storage.usable_tb:
        out.append(f"storage: the data set ({storage.dataset_tb:,.1f} TB) and {job.storage.checkpoints_tb:,.2f} TB "
                   f"of checkpoints need {storage.capacity_tb:,.1f} TB, the tier holds {storage.usable_tb:,.0f} TB")
    if read and storage.read_Bps > storage.read_available_Bps:
        out.append(f"storage: data loading needs {storage.read_Bps / 1e9:,.1f} GB/s ({storage.read_basis}), "
                   f"the tier gives the job's {job.job.num_nodes:,} nodes {storage.read_available_Bps / 1e9:,.1f} GB/s")
    if storage.storage_cost > storage.target_overhead:
        writes = (f"a {checkpoint.size_bytes / 1e12:,.2f} TB checkpoint takes {checkpoint.write_s:,.0f} s to "
                  f"write at {checkpoint.write_Bps / 1e9:,.0f} GB/s; that costs {storage.storage_cost:.1%} of "
                  f"goodput, over the {storage.target_overhead:.0%} target")
        if storage.recommended:
            bb = storage.recommended
            out.append(f"storage: {writes}: a burst buffer of {bb.units} x {bb.tier} ({bb.tb:,.0f} TB, "
                       f"{bb.write_Bps / 1e9:,.0f} GB/s, {format_usd(bb.usd)}) brings goodput to {bb.goodput:.1%} "
                       f"(storage.burst_buffer_tb = {bb.tb:g})")
        elif storage.client_limited:
            out.append(f"storage: {writes}; the nodes' storage clients are the limit, so no burst buffer "
                       f"helps: checkpoint asynchronously, to node-local NVMe, or less state")
        else:
            out.append(f"storage: {writes}: a larger burst buffer or a faster tier would recover it")
    if storage.burst_buffer_tb:
        if storage.burst_buffer_tb < 2 * checkpoint.size_bytes / 1e12:
            out.append(f"storage: the {storage.burst_buffer_tb:g} TB burst buffer holds fewer than two "
                       f"{checkpoint.size_bytes / 1e12:,.2f} TB checkpoints (one being written, one complete)")
        if storage.drain_Bps > storage.main_write_Bps:
            out.append(f"storage: draining one checkpoint per {job.interval_s / 60:,.1f}-min interval needs "
                       f"{storage.drain_Bps / 1e9:,.1f} GB/s into the main tier, which takes "
                       f"{storage.main_write_Bps / 1e9:,.1f} GB/s")
    return out


def _rack_checks(design: Design, rack_power_kw: float) -> list[str]:
    out = []
    racks, parts = design.racks, design.parts
    budget_kw = racks.budget_w / 1e3
    if racks.budget_w < rack_power_kw * 1e3:
        out.append(f"racks: {parts.cooling.id} cooling handles at most {budget_kw:.0f} kW per rack; "
                   f"racks are filled to that, not to the {rack_power_kw:g} kW budget")
    server_kw = (parts.server.max_power_w + design.nics_per_node * parts.nic_transceiver.power_w) / 1e3
    per_rack_kw = racks.servers_per_rack * server_kw
    stranded = budget_kw - per_rack_kw
    if design.num_nodes > racks.servers_per_rack and stranded > STRANDED_RACK_POWER * budget_kw:
        space_bound = (racks.servers_per_rack + 1) * parts.server.rack_units > racks.rack_units
        out.append(f"racks: {racks.servers_per_rack} servers draw {per_rack_kw:.1f} kW of a {budget_kw:.1f} kW "
                   f"budget ({'rack units' if space_bound else 'power'} is the limit); "
                   f"{stranded:.1f} kW per rack stranded")
    return out


def _fabric_checks(design: Design, oversubscription: float) -> list[str]:
    out = []
    topology, fabric = design.topology, design.parts.fabric
    full = fabric.link_rate_Bps * design.nics_per_node / design.gpus_per_node
    if topology.bisection_fraction < 1:
        out.append(f"fabric: {oversubscription:g}:1 oversubscribed, "
                   f"{design.bisection_bw_Bps_per_gpu / 1e9:.1f} GB/s per GPU across leaves instead of "
                   f"{full / 1e9:.1f}; data-parallel and FSDP collectives of LLM training cross leaves")
    if design.nics_per_node < design.gpus_per_node:
        out.append(f"fabric: {design.nics_per_node} NICs for {design.gpus_per_node} GPUs per node, "
                   f"{full / 1e9:.1f} GB/s off-node per GPU; GPUDirect RDMA training clusters use one NIC per GPU")
    if topology.tiers == 1:
        out.append(f"fabric: one {design.parts.switch.id} switch carries every link; no redundancy, no room to grow")
    elif dict(topology.switches).get("spine") == 1:
        out.append(f"fabric: a single spine switch; losing it cuts the {dict(topology.switches)['leaf']} leaves "
                   f"apart (a second spine costs one more {design.parts.switch.id})")
    return out


def _storage_checks(design: Design, own: Costs, read_Bps_per_gpu: float) -> list[str]:
    out = []
    need = read_Bps_per_gpu * design.num_gpus
    if design.storage_read_Bps < need:
        out.append(f"storage: {design.storage_units} x {design.parts.storage.id} read "
                   f"{design.storage_read_Bps / 1e9:,.0f} GB/s, the {design.num_gpus:,} GPUs need {need / 1e9:,.0f} GB/s "
                   f"({read_Bps_per_gpu / 1e9:g} GB/s each); add blocks or a faster tier")
    gpu_usd = sum(line.total_usd for line in own.bom if line.catalog_id == design.parts.gpu.id)
    storage_usd = sum(line.total_usd for line in own.bom if line.category == "storage")
    if gpu_usd and storage_usd < STORAGE_SHARE_OF_GPU * gpu_usd:
        out.append(f"storage: ${storage_usd / 1e3:,.0f}K is {100 * storage_usd / gpu_usd:.1f} % of the "
                   f"${gpu_usd / 1e6:,.2f}M GPU spend; builders budget {100 * STORAGE_SHARE_OF_GPU:.0f} % or more")
    return out


def _finance_checks(design: Design, own: Costs, rent: Sequence[CloudCost], utilization: float,
                    years: int) -> list[str]:
    out = []
    if utilization > HIGH_UTILIZATION:
        out.append(f"finance: utilization {utilization:.0%} is above what shared clusters "
                   f"sustain (60-85 % in practice); cost per GPU-hour may be optimistic")
    assumed = [line for line in own.bom if line.assumption]
    if assumed:
        share = sum(line.total_usd for line in assumed) / own.capex_usd
        ids = ", ".join(sorted({line.catalog_id for line in assumed}))
        out.append(f"prices: {share:.1%} of capex rests on ASSUMPTION prices ({ids}); "
                   f"override them under [prices] with quotes")
    for cost in rent:
        offer = cost.offer
        if offer.gpu != design.parts.gpu.id:
            out.append(f"cloud: {offer.id} rents {offer.gpu}, the cluster has {design.parts.gpu.id}; "
                       f"GPU-hours compared one for one")
        if offer.pricing == "spot":
            out.append(f"cloud: {offer.id} is spot capacity, reclaimable at any time; a synchronous "
                       f"{design.num_gpus:,}-GPU job restarts from its last checkpoint on every preemption")
        if offer.term_years and years % offer.term_years:
            out.append(f"cloud: {offer.id} commits {offer.term_years * 12} months at a time; the "
                       f"{years * 12}-month horizon is billed whole terms, "
                       f"{offer.term_years * -(-years // offer.term_years) * 12} months")
    return out
