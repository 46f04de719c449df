"""The size result as one JSON-ready document (schema ``clusterplan.size/1``, docs/json.md), its tables
(CSV/Markdown/XLSX) and its terminal view. Nothing is computed here but dates from day offsets."""

from __future__ import annotations

import datetime
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.plan.size import Sizing, verdict
from clusterplan.plan.size_modes import Candidate
from clusterplan.plan.size_platform import Platform
from clusterplan.report.console import escape, new_console, new_table
from clusterplan.report.export import layout_table
from clusterplan.report.tables import Table
from clusterplan.schema import as_table
from clusterplan.units import format_usd, plural

SIZE_SCHEMA = "clusterplan.size/1"
OWN_COST_RULE = ("owned cost = the job's share of the TCO (its wall-clock GPU-hours x the cluster's cost per "
                 "delivered GPU-hour, the figure `train` prints): the default, since the cluster keeps serving "
                 "other work for the rest of its horizon; own_tco_usd is the whole TCO when it is bought for this "
                 "job alone, residual_usd what it is worth at the end of the horizon (straight-line book value)")


def _date(start: datetime.date, days: float) -> str:
    return (start + datetime.timedelta(days=days)).isoformat()


def candidate_table(candidate: Candidate, result: Sizing, frontier: set[int]) -> dict[str, Any]:
    """One candidate under the document's keys; a candidate that was not modelled carries only its reason."""
    out: dict[str, Any] = {"gpu": candidate.gpu, "num_gpus": candidate.num_gpus, "fabric": candidate.fabric,
                           "mode": candidate.mode, "excluded_by": verdict(candidate, result.question) or None}
    if candidate.reason:
        return out
    start, window = result.question.start, candidate.capacity
    out.update({
        "offer": candidate.offer or None, "provider": candidate.provider or None, "layout": layout_table(candidate.layout), "mfu": candidate.mfu,
        "tokens_per_s": candidate.tokens_per_s, "goodput": candidate.goodput, "train_days": candidate.train_days,
        "capacity_days": window.days, "capacity_low_days": window.low_days, "capacity_high_days": window.high_days,
        "capacity_assumption": window.assumption, "done_days": candidate.done_days,
        "first_gpu_hour": _date(start, window.days), "trained": _date(start, candidate.done_days),
        "trained_latest": _date(start, candidate.done_high_days), "cost_usd": candidate.cost_usd,
        "rented_usd": candidate.rented_usd, "own_share_usd": candidate.own_share_usd,
        "own_tco_usd": candidate.own_tco_usd, "residual_usd": candidate.residual_usd,
        "on_frontier": id(candidate) in frontier, "note": candidate.note or None})
    return out


def size_document(result: Sizing) -> dict[str, Any]:
    """One envelope: the question, the recommendations, the frontier, every candidate, the scenario."""
    asked, frontier = result.question, {id(c) for c in result.frontier}
    deadline = asked.deadline_days

    def table(candidate: Candidate | None) -> dict[str, Any] | None:
        return None if candidate is None else candidate_table(candidate, result, frontier)

    return {
        "schema": SIZE_SCHEMA, "version": __version__,
        "question": {"model": asked.model, "tokens": asked.tokens, "gpus": list(asked.gpus),
                     "fabrics": list(asked.fabrics), "modes": list(asked.modes), "counts": list(asked.counts),
                     "platforms": {built.gpu: _platform(built) for built in asked.platforms},
                     "start": asked.start.isoformat(), "deadline_days": deadline,
                     "deadline": None if deadline is None else _date(asked.start, deadline),
                     "budget_usd": asked.budget_usd},
        "num_candidates": len(result.candidates),
        "num_modelled": sum(1 for c in result.candidates if not c.reason),
        "excluded": dict(result.excluded),
        "cheapest": table(result.cheapest), "fastest": table(result.fastest),
        "nearest": [table(c) for c in result.nearest] if result.cheapest is None else [],
        "frontier": [table(c) for c in result.frontier],
        "own_cost_rule": OWN_COST_RULE,
        "candidates": [table(c) for c in result.candidates],
        "scenario": as_table(result.spec),
    }


def _platform(built: Platform) -> dict[str, Any]:
    """How one GPU is built: what a candidate's scenario sets (cluster.server, ..., facility.cooling)."""
    return {"server": built.server, "gpus_per_node": built.gpus_per_node, "nics_per_node": built.nics_per_node,
            "cooling": built.cooling, "nvlink_domain_gpus": built.domain_gpus, "counts": list(built.counts)}


def _layout(layout: dict[str, Any]) -> str:
    """tp.pp.dp.cp, as the tables' column header says (.ep after it for an expert-parallel layout)."""
    expert = f".ep{layout['ep']}" if "ep" in layout else ""
    return f"{layout['tp']}.{layout['pp']}.{layout['dp']}.{layout['cp']}{expert}"


def _name(row: dict[str, Any]) -> str:
    offer = f" ({row['offer']})" if row.get("offer") else ""
    return f"{row['num_gpus']:,} x {row['gpu']}, {row['fabric']}, {row['mode']}{offer}"


ROW_COLUMNS = ("GPUs", "GPU", "Fabric", "Mode", "Offer", "tp.pp.dp.cp", "MFU", "Goodput", "First GPU-hour",
               "Trained", "Days", "Cost (USD)")


def _cells(row: dict[str, Any]) -> tuple:
    return (row["num_gpus"], row["gpu"], row["fabric"], row["mode"], row.get("offer") or "", _layout(row["layout"]),
            row["mfu"], row["goodput"], row["first_gpu_hour"], row["trained"], row["done_days"], row["cost_usd"])


def size_tables(doc: dict[str, Any]) -> tuple[Table, ...]:
    """The frontier, the recommendations and every modelled candidate as plain tables (CSV/MD/XLSX)."""
    picks = [(label, doc[key]) for label, key in (("cheapest meeting the deadline", "cheapest"),
                                                  ("fastest within the budget", "fastest")) if doc[key]]
    modelled = [row for row in doc["candidates"] if "cost_usd" in row]
    columns = (*ROW_COLUMNS[:6], "MFU", "Goodput", "First GPU-hour", "Trained", "Days to trained", "Cost (USD)")
    return (
        Table(name="Recommendation", title="Recommendation", columns=("Pick", *columns),
              rows=tuple((label, *_cells(row)) for label, row in picks)),
        Table(name="Frontier", title="Pareto frontier (days to the trained model, cost)", columns=columns,
              rows=tuple(_cells(row) for row in doc["frontier"])),
        Table(name="Candidates", title="Every modelled candidate",
              columns=(*columns, "Owned share (USD)", "Whole TCO (USD)", "Residual (USD)", "Excluded by"),
              rows=tuple((*_cells(row), row["own_share_usd"], row["own_tco_usd"], row["residual_usd"],
                          row["excluded_by"] or "") for row in modelled)),
        Table(name="Excluded", title="Candidates excluded, by reason", columns=("Reason", "Candidates"),
              rows=tuple(doc["excluded"].items())),
    )


def render_size(doc: dict[str, Any], stream: TextIO) -> None:
    """The terminal view: the question, the recommendation, the frontier and the best of each mode."""
    console, asked = new_console(stream), doc["question"]
    deadline = f"deadline {asked['deadline']} ({asked['deadline_days']:,.0f} days)" if asked["deadline"] else "no deadline"
    budget = f"budget {format_usd(asked['budget_usd'])}" if asked["budget_usd"] else "no budget"
    console.print(f"[bold]{escape(asked['model'])} on {asked['tokens'] / 1e9:,.0f}B tokens[/bold], start "
                  f"{asked['start']}, {deadline}, {budget}")
    excluded = ", ".join(f"{reason} {count:,}" for reason, count in doc["excluded"].items()) or "none"
    lengths = {gpu: len(built["counts"]) for gpu, built in asked["platforms"].items()}
    same = next(iter(lengths.values()))
    counts = (f"{len(lengths)} {plural(len(lengths), 'GPUs')} x {same} {plural(same, 'counts')}"
              if len(set(lengths.values())) == 1
              else f"{sum(lengths.values())} counts ({', '.join(f'{gpu} {n}' for gpu, n in lengths.items())})")
    console.print(f"{doc['num_candidates']:,} candidates ({escape(counts)}"
                  f" x {len(asked['fabrics'])} {plural(len(asked['fabrics']), 'fabrics')} x {len(asked['modes'])} "
                  f"{plural(len(asked['modes']), 'modes')}), "
                  f"{doc['num_modelled']:,} modelled; excluded: {excluded}")
    for gpu, built in asked["platforms"].items():
        if built["nvlink_domain_gpus"] > built["gpus_per_node"]:
            console.print(f"{escape(gpu)} in whole {built['nvlink_domain_gpus']}-GPU NVLink domains of "
                          f"{escape(built['server'])} ({built['gpus_per_node']} GPUs and {built['nics_per_node']} NICs "
                          f"a tray, {escape(built['cooling'])} cooling): "
                          f"{', '.join(f'{count:,}' for count in built['counts'])} GPUs")
    console.print()
    for label, key in (("Cheapest meeting the deadline", "cheapest"), ("Fastest within the budget", "fastest")):
        row = doc[key]
        if row is None:
            console.print(f"{label}: none")
            continue
        console.print(f"[bold]{label}:[/bold] {escape(_name(row))}: {format_usd(row['cost_usd'])}, trained "
                      f"{row['trained']} ({row['done_days']:,.1f} days; first GPU-hour {row['first_gpu_hour']})")
        console.print(f"  layout tp.pp.dp.cp {_layout(row['layout'])}, MFU {row['mfu']:.1%}, goodput {row['goodput']:.1%}, "
                      f"{row['train_days']:,.1f} days of training"
                      + (f"; {escape(row['note'])}" if row["note"] else ""))
    if doc["nearest"]:
        console.print("Nothing meets the deadline; the nearest:")
        for row in doc["nearest"]:
            console.print(f"  {escape(_name(row))}: trained {row['trained']} ({row['done_days']:,.1f} days), "
                          f"{format_usd(row['cost_usd'])}")
    console.print()
    console.print(_rows_table("Pareto frontier (days to the trained model, cost)", doc["frontier"]))
    console.print(_rows_table("Cheapest of each mode that meets the deadline and budget (else the fastest)",
                              _best_per_mode(doc)))
    console.print(f"[dim]{escape(doc['own_cost_rule'])}[/dim]")


def _best_per_mode(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for mode in doc["question"]["modes"]:
        rows = [row for row in doc["candidates"] if row["mode"] == mode and "cost_usd" in row]
        meeting = [row for row in rows if not row["excluded_by"]]
        if meeting:
            out.append(min(meeting, key=lambda row: (row["cost_usd"], row["done_days"])))
        elif rows:
            out.append(min(rows, key=lambda row: (row["done_days"], row["cost_usd"])))
    return out


def _rows_table(title: str, rows: list[dict[str, Any]]):
    """GPUs, part, fabric, mode and provider (the offer ids are in the JSON and CSV), layout, MFU, the days to
    the first GPU-hour, the date trained, the days to it and the cost: one line each at 110 columns."""
    table = new_table(title, "GPUs", "GPU", "Fabric", "Mode", "Provider", "tp.pp.dp.cp", "MFU", "Ready (d)",
                      "Trained", "Days", "Cost", right=(0, 6, 7, 9, 10))
    table.collapse_padding = True   # one space between columns: eleven columns in 110 characters
    provider = table.columns[4]
    provider.no_wrap, provider.max_width, provider.overflow = True, 10, "ellipsis"
    for row in rows:
        table.add_row(f"{row['num_gpus']:,}", row["gpu"], row["fabric"], row["mode"], escape(row["provider"] or "-"),
                      _layout(row["layout"]), f"{row['mfu']:.1%}", f"{row['capacity_days']:,.0f}", row["trained"],
                      f"{row['done_days']:,.1f}", format_usd(row["cost_usd"]))
    return table
