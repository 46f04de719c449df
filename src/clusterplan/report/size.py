"""The size result as one JSON-ready document (schema ``clusterplan.size/1``, docs/json.md), its tables
(CSV/Markdown/XLSX) and its terminal view. Nothing is computed here but dates from day offsets."""

from __future__ import annotations

import datetime
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.plan.size import Sizing, verdict
from clusterplan.plan.size_modes import Candidate
from clusterplan.plan.size_platform import Platform
from clusterplan.report.bands import band_phrase
from clusterplan.report.console import escape, new_console, new_table
from clusterplan.report.export import layout_table
from clusterplan.report.tables import Table
from clusterplan.schema import as_table
from clusterplan.units import format_usd, plural

SIZE_SCHEMA = "clusterplan.size/1"
OWN_COST_RULE = ("cost = the money committed, which the budget is checked against: owned, capex + setup + opex "
                 "over the days held for the run (committed_usd); rented, what `train` prints for the offer (a "
                 "reservation's whole terms from its start). Beside it, never instead: own_share_usd, the job's "
                 "share of the TCO (its GPU-hours x the cost per delivered GPU-hour); own_tco_usd, the whole TCO; "
                 "residual_usd, the cluster's book value at the end of the horizon. No offer supplies more than "
                 "its max_gpus at once (else \"capacity\"); spot is interruptible and never a headline of a "
                 "multi-node job")


def _date(start: datetime.date, days: float) -> str:
    """The day ``days`` after ``start``; past the calendar's last day (1e16 tokens on a few GPUs), "after" it."""
    if not days < (datetime.date.max - start).days:
        return f"after {datetime.date.max.isoformat()}"
    return (start + datetime.timedelta(days=days)).isoformat()


def _whole_run(row: dict[str, Any]) -> str:
    """", whole run N days predicted; published whole runs ...": the run with every modelled cause and the band
    of published whole runs (report/bands.py, docs/reliability.md#whole-run)."""
    if not row.get("whole_run_days"):
        return ""
    days = row["whole_run_days"]
    phrase = band_phrase(days, row["whole_run_low_days"], row["whole_run_high_days"], lambda v: f"{v:,.1f} days")
    return f", whole run {days:,.1f} days predicted; {phrase.replace('published runs', 'published whole runs', 1)}"


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
        "rented_usd": candidate.rented_usd, "committed_usd": candidate.committed_usd or candidate.cost_usd,
        "own_share_usd": candidate.own_share_usd, "interruptible": candidate.interruptible,
        "own_tco_usd": candidate.own_tco_usd, "residual_usd": candidate.residual_usd,
        "on_frontier": id(candidate) in frontier, "note": candidate.note or None,
        "whole_run_days": candidate.whole_run_days or None,
        "whole_run_low_days": candidate.whole_run_band_days[0] or None,
        "whole_run_high_days": candidate.whole_run_band_days[1] or None})
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
        "cheapest": table(result.cheapest), "fastest": table(result.fastest), "spot": table(result.spot),
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
              columns=(*columns, "Committed (USD)", "Owned share (USD)", "Whole TCO (USD)", "Residual (USD)",
                       "Excluded by"),
              rows=tuple((*_cells(row), row["committed_usd"], row["own_share_usd"], row["own_tco_usd"], row["residual_usd"],
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
    for label, key in (("Cheapest meeting the deadline" if asked["deadline"] else "Cheapest", "cheapest"),
                       ("Fastest within the budget" if asked["budget_usd"] else "Fastest", "fastest")):
        row = doc[key]
        if row is None:
            console.print(f"{label}: none")
            continue
        console.print(f"[bold]{label}:[/bold] {escape(_name(row))}: {format_usd(row['cost_usd'])}, trained "
                      f"{row['trained']} ({row['done_days']:,.1f} days; first GPU-hour {row['first_gpu_hour']})")
        console.print(f"  layout tp.pp.dp.cp {_layout(row['layout'])}, MFU {row['mfu']:.1%}, goodput {row['goodput']:.1%}, "
                      f"{row['train_days']:,.1f} days of training" + _whole_run(row)
                      + (f"; {escape(row['note'])}" if row["note"] else ""))
    spot = doc.get("spot")
    if spot is not None:
        console.print(f"[bold]Spot (interruptible, not a headline):[/bold] {escape(_name(spot))}: "
                      f"{format_usd(spot['cost_usd'])} effective, goodput {spot['goodput']:.1%} with reclaims "
                      f"(restarts and work lost since the last checkpoint), trained {spot['trained']}"
                      + (f", misses the {spot['excluded_by']}" if spot["excluded_by"] else "")
                      + f"; {escape(spot['note'] or '')}")
    if doc["nearest"]:
        console.print("Nothing meets the deadline; the nearest:")
        for row in doc["nearest"]:
            console.print(f"  {escape(_name(row))}: trained {row['trained']} ({row['done_days']:,.1f} days), "
                          f"{format_usd(row['cost_usd'])}")
    console.print()
    console.print(_rows_table("Pareto frontier (days to the trained model, cost)", doc["frontier"]))
    limits = " and ".join(word for word, given in (("deadline", asked["deadline"]), ("budget", asked["budget_usd"]))
                          if given)
    console.print(_rows_table(f"Cheapest of each mode{f' that meets the {limits} (else the fastest)' if limits else ''}",
                              _best_per_mode(doc)))
    console.print(f"[dim]{escape(doc['own_cost_rule'])}[/dim]")


def infeasible_line(doc: dict[str, Any]) -> str:
    """Why nothing qualifies, in one line: each nearest candidate once, with its fabric and its reason."""
    question = doc["question"]
    nearest = "; ".join(f"{row['num_gpus']:,} x {row['gpu']} on {row['fabric']}, {row['mode']}: trained "
                        f"{row['trained']} ({row['excluded_by'] or 'qualifies'})" for row in doc["nearest"])
    return (f"infeasible: nothing meets the deadline {question['deadline']}"
            f"{' within the budget' if question['budget_usd'] else ''}; nearest: {nearest or 'none modelled'}")


def _best_per_mode(doc: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for mode in doc["question"]["modes"]:
        rows = [row for row in doc["candidates"] if row["mode"] == mode and "cost_usd" in row
                and not row["interruptible"]]
        meeting = [row for row in rows if not row["excluded_by"]]
        if meeting:
            out.append(min(meeting, key=lambda row: (row["cost_usd"], row["done_days"])))
        elif rows:
            out.append(min(rows, key=lambda row: (row["done_days"], row["cost_usd"])))
    return out


def _rows_table(title: str, rows: list[dict[str, Any]]):
    """GPUs, part, fabric, mode and provider (the offer ids, MFU and goodput are in the JSON and CSV), layout,
    the days to the first GPU-hour, the date trained, the days to it and the cost: one line each within 100
    columns (at most 92 with the longest ids: a100-40gb-sxm, Voltage Park), nothing cut or wrapped."""
    table = new_table(title, "GPUs", "GPU", "Fabric", "Mode", "Provider", "tp.pp.dp.cp", "Ready",
                      "Trained", "Days", "Cost", right=(0, 6, 8, 9))
    table.padding = (0, 0)           # the box's one space between columns: at most 92 wide with the longest ids
    for column in table.columns:
        column.no_wrap = True
    for row in rows:
        table.add_row(f"{row['num_gpus']:,}", row["gpu"], row["fabric"], row["mode"], escape(row["provider"] or "-"),
                      _layout(row["layout"]), f"{row['capacity_days']:,.0f}", row["trained"],
                      f"{row['done_days']:,.1f}", format_usd(row["cost_usd"]))
    return table
