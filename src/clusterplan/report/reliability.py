"""The reliability result as one JSON-ready document (schema ``clusterplan.reliability/1``) and its terminal view."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.report.schedule import format_duration
from clusterplan.report.console import escape, new_console, new_table
from clusterplan.schema import as_table
from clusterplan.units import format_quantity, format_si, format_usd, plural

RELIABILITY_SCHEMA = "clusterplan.reliability/1"


def reliability_document(*, spec: Any, job: Any, sizes: Sequence[Any] = (),
                         warnings: Sequence[str] = ()) -> dict[str, Any]:
    """``job`` (a reliability.Reliability) with its causes, checkpoint, goodput, storage and job-size table."""
    checkpoint, result = job.checkpoint, job.outcome
    waste_by_cause = job.waste_by_cause()
    causes = _causes_part(job, waste_by_cause)
    return {
        "schema": RELIABILITY_SCHEMA, "version": __version__,
        "model": {"name": job.model, "params": job.params},
        "job": {"num_gpus": job.job.num_gpus, "num_nodes": job.job.num_nodes, "num_links": job.job.num_links,
                "num_switches": job.job.num_switches, "days": job.days},
        "interruptions_per_day": job.interruptions_per_day,
        "expected_interruptions": job.expected_interruptions,
        "mtti_hours": job.mtti_s / 3600,
        "interruptions_by_cause": {c["id"]: c["per_day"] for c in causes},
        "causes": causes,
        "spares": {"spare_nodes": job.spares.spare_nodes, "nodes_in_repair": job.spares.nodes_in_repair,
                   "confidence": job.spares.confidence, "repair_hours": job.spares.repair_s / 3600},
        "checkpoint_bytes": job.checkpoint_bytes,
        "checkpoint_write_s": job.checkpoint_write_s,
        "checkpoint": {"size_bytes": checkpoint.size_bytes,
                       "bytes_per_param": checkpoint.size_bytes / job.params,
                       "asynchronous": checkpoint.asynchronous, "copy_s": checkpoint.copy_s,
                       "write_s": checkpoint.write_s, "write_Bps": checkpoint.write_Bps,
                       "reload_s": checkpoint.reload_s, "blocking_s": result.blocking_s,
                       "tier": job.storage.checkpoint_tier},
        "optimal_interval_s": {"young": result.interval.young_s, "daly": result.interval.daly_s},
        "interval_s": result.interval.used_s,
        "interval_chosen_by": result.interval.chosen_by,
        "restart_s": {"detect": result.restart.detect_s, "overhead": result.restart.overhead_s,
                      "reload": result.restart.reload_s, "unsaved": result.restart.unsaved_s,
                      "total": result.restart.total_s},
        "goodput": job.goodput,
        "waste": {"checkpoint": result.waste.checkpoint, "lost_work": result.waste.lost_work,
                  "restart": result.waste.restart, "total": 1 - job.goodput},
        "waste_by_cause": waste_by_cause,
        "storage": _storage_part(job.storage),
        "by_job_size": [{"num_gpus": size.job.num_gpus, "num_nodes": size.job.num_nodes,
                         "interruptions_per_day": size.interruptions_per_day, "mtti_hours": size.mtti_s / 3600,
                         "interval_s": size.interval_s, "goodput": size.goodput} for size in sizes],
        "warnings": list(warnings),
        "scenario": as_table(spec),
    }


def _causes_part(job: Any, waste_by_cause: dict[str, float]) -> list[dict[str, Any]]:
    """Each cause of interruption: its rate and source, how often it strikes this job, its share and waste."""
    shares = job.interruptions.share()
    return [{
        "id": cause.rate.id, "name": cause.rate.name, "scope": cause.rate.scope,
        "per_1000_unit_days": cause.rate.per_1000_unit_days,
        "low_per_1000_unit_days": cause.rate.low_per_1000_unit_days,
        "high_per_1000_unit_days": cause.rate.high_per_1000_unit_days,
        "count": cause.count, "per_day": cause.per_day, "expected": cause.per_day * job.days,
        "share": shares[cause.rate.id], "waste": waste_by_cause[cause.rate.id], "repair": cause.rate.repair,
        "source": cause.rate.source, "date": cause.rate.date,
    } for cause in job.interruptions.causes]


def _storage_part(storage: Any) -> dict[str, Any]:
    """What the job asks of storage (capacity, data loading, checkpoint writes) and the burst buffer advice."""
    recommended = storage.recommended
    return {
        "dataset_tb": storage.dataset_tb, "checkpoints_tb": storage.checkpoints_tb,
        "capacity_tb": storage.capacity_tb, "usable_tb": storage.usable_tb,
        "read_Bps": storage.read_Bps, "read_basis": storage.read_basis,
        "read_available_Bps": storage.read_available_Bps,
        "main_write_Bps": storage.main_write_Bps, "ideal_goodput": storage.ideal_goodput,
        "storage_cost": storage.storage_cost, "target_overhead": storage.target_overhead,
        "burst_buffer_tb": storage.burst_buffer_tb, "drain_Bps": storage.drain_Bps,
        "recommended_burst_buffer": None if recommended is None else {
            "tier": recommended.tier, "units": recommended.units, "tb": recommended.tb,
            "write_Bps": recommended.write_Bps, "usd": recommended.usd, "goodput": recommended.goodput},
        "client_limited": storage.client_limited,
    }


def render_reliability(doc: dict[str, Any], stream: TextIO) -> None:
    console = new_console(stream)
    job, checkpoint, restart = doc["job"], doc["checkpoint"], doc["restart_s"]
    gpu = doc["scenario"]["cluster"]["gpu"]
    console.print(f"[bold]clusterplan reliability[/bold]: {escape(doc['model']['name'])} "
                  f"({doc['model']['params'] / 1e9:.1f}B parameters) on {job['num_gpus']:,} x {gpu} "
                  f"({job['num_nodes']:,} {plural(job['num_nodes'], 'nodes')}), {job['days']:g} days")
    summary = new_table("Summary", "", "", header=False)
    interval = doc["optimal_interval_s"]
    mode = "asynchronous" if checkpoint["asynchronous"] else "synchronous"
    spares = doc["spares"]
    for row in (
        ("Interruptions per day", f"{doc['interruptions_per_day']:.3g} ({doc['expected_interruptions']:,.1f} "
                                  f"expected in {job['days']:g} days)"),
        ("Job mean time to interruption", format_duration(doc["mtti_hours"] * 3600)),
        ("Checkpoint", f"{format_si(checkpoint['size_bytes'], 'B')} ({checkpoint['bytes_per_param']:g} B/param) to "
                       f"{escape(checkpoint['tier'])}, {mode}"),
        ("Copy / write / reload", f"{format_duration(checkpoint['copy_s'])} / {format_duration(checkpoint['write_s'])} "
                                  f"at {format_si(checkpoint['write_Bps'], 'B/s')} / "
                                  f"{format_duration(checkpoint['reload_s'])}"),
        ("Blocked per checkpoint", format_duration(checkpoint["blocking_s"])),
        ("Interval: Young / Daly / used", f"{format_duration(interval['young'])} / "
                                          f"{format_duration(interval['daly'])} / "
                                          f"{format_duration(doc['interval_s'])} ({doc['interval_chosen_by']})"),
        ("Restart", f"{format_duration(restart['total'])} (detect {format_duration(restart['detect'])}, "
                    f"restart {format_duration(restart['overhead'])}, reload {format_duration(restart['reload'])}, "
                    f"unsaved work {format_duration(restart['unsaved'])})"),
        ("Goodput", f"[bold]{doc['goodput']:.2%}[/bold]"),
        ("Spare nodes", f"{spares['spare_nodes']} ({spares['nodes_in_repair']:.2f} in repair on average; "
                        f"{spares['confidence']:.0%} confidence, {spares['repair_hours']:g} h repair)"),
    ):
        summary.add_row(*row)
    console.print(summary)
    console.print()
    _causes(console, doc)
    _storage(console, doc["storage"])
    if doc["by_job_size"]:
        table = new_table("By job size", "GPUs", "Nodes", "Interruptions/day", "MTTI", "Interval", "Goodput",
                           right=(0, 1, 2, 3, 4, 5))
        for row in doc["by_job_size"]:
            table.add_row(f"{row['num_gpus']:,}", f"{row['num_nodes']:,}", f"{row['interruptions_per_day']:.3g}",
                          format_duration(row["mtti_hours"] * 3600), format_duration(row["interval_s"]),
                          f"{row['goodput']:.2%}")
        console.print(table)
    if doc["warnings"]:
        console.print("[bold]Warnings[/bold]")
        for warning in doc["warnings"]:
            console.print(f"  ! {escape(warning)}", soft_wrap=True)


def _causes(console, doc: dict[str, Any]) -> None:
    days = doc["job"]["days"]
    table = new_table("Interruptions by cause", "Cause", "Scope", "Rate", "Count", "Per day",
                       f"In {days:g} d", "Share", "Waste", right=(2, 3, 4, 5, 6, 7))
    for cause in doc["causes"]:
        table.add_row(cause["id"], cause["scope"], f"{cause['per_1000_unit_days']:.3g}", format_quantity(cause['count']),
                      f"{cause['per_day']:.3g}", f"{cause['expected']:,.2f}", f"{cause['share']:.1%}",
                      f"{cause['waste']:.3%}")
    table.add_row("checkpoint", "", "", "", "", "", "", f"{doc['waste_by_cause']['checkpoint']:.3%}",
                  end_section=True)
    table.add_row("[bold]total[/bold]", "", "", "", f"{doc['interruptions_per_day']:.3g}",
                  f"{doc['expected_interruptions']:,.2f}", "100.0%", f"{doc['waste']['total']:.3%}")
    console.print(table)
    waste = doc["waste"]
    console.print(f"Waste = checkpoints {waste['checkpoint']:.3%} + lost work {waste['lost_work']:.3%} + restarts "
                  f"{waste['restart']:.3%} of wall time. Rate: per 1000 component-days of its scope "
                  f"(`clusterplan catalog ID` shows each source)\n")


def _storage(console, storage: dict[str, Any]) -> None:
    table = new_table("Storage", "", "", header=False)
    table.add_row("Capacity", f"data set {storage['dataset_tb']:,.2f} TB + checkpoints "
                              f"{storage['checkpoints_tb']:,.2f} TB = {storage['capacity_tb']:,.2f} TB of "
                              f"{storage['usable_tb']:,.0f} TB")
    table.add_row("Data loading", f"{format_si(storage['read_Bps'], 'B/s')} needed ({storage['read_basis']}), "
                                  f"{format_si(storage['read_available_Bps'], 'B/s')} available")
    table.add_row("Checkpoint writes", f"cost {storage['storage_cost']:.3%} of goodput (instant writes: "
                                       f"{storage['ideal_goodput']:.2%}); target {storage['target_overhead']:.0%}")
    bb = storage["recommended_burst_buffer"]
    if storage["burst_buffer_tb"]:
        table.add_row("Burst buffer", f"{storage['burst_buffer_tb']:,.0f} TB configured; drains "
                                      f"{format_si(storage['drain_Bps'], 'B/s')} into the main tier "
                                      f"({format_si(storage['main_write_Bps'], 'B/s')} available)")
    elif bb:
        table.add_row("Burst buffer", f"recommended: {bb['units']} x {bb['tier']}, {bb['tb']:,.0f} TB, "
                                      f"{format_si(bb['write_Bps'], 'B/s')}, {format_usd(bb['usd'])}: goodput "
                                      f"{bb['goodput']:.2%}")
    else:
        table.add_row("Burst buffer", "not needed" if not storage["client_limited"] else
                      "would not help: the nodes' storage clients are the limit")
    console.print(table)
    console.print()
