"""The schedule result as one JSON-ready document (schema ``clusterplan.schedule/1``) and its terminal view."""

from __future__ import annotations

import math
from dataclasses import asdict
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.plan.schedule import Schedule
from clusterplan.report.console import escape, new_console, new_table
from clusterplan.schema import as_table
from clusterplan.units import plural

SCHEDULE_SCHEMA = "clusterplan.schedule/1"
SUMMARY_FIELDS = ("policy", "num_jobs", "utilization", "mean_wait_s", "median_wait_s", "p95_wait_s",
                  "mean_bounded_slowdown", "makespan_s")


def schedule_document(result: Schedule, *, bounded_slowdown_bound_s: float = 10.0) -> dict[str, Any]:
    """One envelope (a ``plan.schedule.Schedule``); a single-policy run also carries that policy's summary
    fields at the top level."""
    trace, cluster, outcomes = result.trace, result.cluster, result.outcomes
    results = [{**asdict(o.metrics), "cost_per_gpu_hour_usd": price, "timeline": asdict(o.timeline),
                "users": [asdict(u) for u in o.users]} for o, price in zip(outcomes, result.cost_per_gpu_hour_usd)]
    for entry in results:
        entry["timeline"]["utilization"] = list(entry["timeline"]["utilization"])
        entry["timeline"]["queue_length"] = list(entry["timeline"]["queue_length"])
    document: dict[str, Any] = {
        "schema": SCHEDULE_SCHEMA, "version": __version__,
        "trace": {"name": trace.name, "format": trace.format, "num_jobs": trace.num_jobs,
                  "dropped": dict(trace.dropped), "num_bad_lines_skipped": trace.num_bad_lines,
                  "num_truncated_at_request": trace.num_truncated, "num_exact_estimates": trace.exact_estimates,
                  "offered_load": result.offered_load,
                  "recorded_mean_wait_s": result.recorded_mean_wait_s},
        "cluster": {"num_nodes": cluster.num_nodes, "gpus_per_node": cluster.gpus_per_node,
                    "num_gpus": cluster.num_gpus, "nodes_per_leaf": cluster.nodes_per_leaf,
                    "topology_aware": cluster.topology_aware},
        "bounded_slowdown_bound_s": bounded_slowdown_bound_s,
        "policies": [o.metrics.policy for o in outcomes],
    }
    if len(results) == 1:
        document.update({key: results[0][key] for key in SUMMARY_FIELDS})
    document["results"] = results
    document["scenario"] = as_table(result.spec)
    return document


def format_duration(seconds: float | None) -> str:
    """Seconds in the unit a reader takes in at a glance: 8.08 s, 12.5 min, 5.6 h, 27.6 d."""
    if seconds is None or not math.isfinite(seconds):
        return "-"
    for limit, unit, scale in ((120, "s", 1), (7200, "min", 60), (172800, "h", 3600)):
        if abs(seconds) < limit:
            return f"{seconds / scale:.3g} {unit}"
    days = seconds / 86400
    return f"{days:.3g} d" if days < 1000 else f"{days:,.0f} d"


SPARK = " ▁▂▃▄▅▆▇█"


def sparkline(values: list[float], top: float) -> str:
    """One block character per value, scaled to ``top`` (blank where it is 0)."""
    if top <= 0:
        return " " * len(values)
    return "".join(SPARK[min(8, max(0, round(8 * v / top)))] for v in values)


def render_schedule(doc: dict[str, Any], stream: TextIO) -> None:
    console = new_console(stream)
    trace, cluster = doc["trace"], doc["cluster"]
    leaf = f", {cluster['nodes_per_leaf']} nodes per leaf switch" if cluster["nodes_per_leaf"] else ""
    leaf += " (topology-aware placement)" if cluster["topology_aware"] else ""
    console.print(f"[bold]clusterplan schedule[/bold]: {escape(trace['name'])}, {trace['num_jobs']:,} jobs "
                  f"({trace['format']}), offered load {trace['offered_load']:.2f}")
    console.print(f"Cluster: {cluster['num_nodes']:,} {plural(cluster['num_nodes'], 'nodes')} x {cluster['gpus_per_node']} "
                  f"{plural(cluster['gpus_per_node'], 'GPUs')} = "
                  f"{cluster['num_gpus']:,} {plural(cluster['num_gpus'], 'GPUs')}{leaf}")
    notes = [f"{count:,} {reason}" for reason, count in trace["dropped"].items()]
    if trace["num_bad_lines_skipped"]:
        notes.append(f"{trace['num_bad_lines_skipped']:,} bad lines skipped")
    if trace["num_truncated_at_request"]:
        notes.append(f"{trace['num_truncated_at_request']:,} cut at their requested time")
    if trace["num_exact_estimates"]:
        notes.append(f"{trace['num_exact_estimates']:,} without a request (estimate = run time)")
    if notes:
        console.print("Jobs: " + "; ".join(notes))
    table = new_table("Policies", "Policy", "Utilization", "Mean wait", "Median wait", "P95 wait", "Mean bsld",
                       "Makespan", "Backfilled", "GPU-hours", right=tuple(range(1, 9)))
    for result in doc["results"]:
        table.add_row(result["policy"], f"{result['utilization']:.1%}", format_duration(result["mean_wait_s"]),
                      format_duration(result["median_wait_s"]), format_duration(result["p95_wait_s"]),
                      f"{result['mean_bounded_slowdown']:,.2f}", format_duration(result["makespan_s"]),
                      f"{result['num_backfilled']:,}", f"{result['delivered_gpu_hours']:,.0f}")
    console.print(table)
    if trace["recorded_mean_wait_s"] is not None:
        console.print(f"As recorded in the trace (its own scheduler and machine): mean wait "
                      f"{format_duration(trace['recorded_mean_wait_s'])}")
    console.print(f"bsld = bounded slowdown, max(1, (wait + run) / max(run, {doc['bounded_slowdown_bound_s']:g} s))")
    prices = [f"{result['policy']} {_price(result['cost_per_gpu_hour_usd'])}" for result in doc["results"]]
    console.print(f"Cost per delivered GPU-hour at each policy's utilization (TCO of this cluster): "
                  f"{', '.join(prices)}")
    bins = len(doc["results"][0]["timeline"]["utilization"]) if doc["results"] else 0
    timeline = new_table(f"Over time ({bins} equal bins of each makespan)", "Policy", "Utilization (0-100%)",
                          "Queue length", "Max queue", right=(3,))
    for result in doc["results"]:
        line = result["timeline"]
        timeline.add_row(result["policy"], sparkline(line["utilization"], 1.0),
                         sparkline(line["queue_length"], max(line["queue_length"], default=0)),
                         f"{result['max_queue_length']:,}")
    console.print(timeline)
    if len(doc["results"]) == 1 and doc["results"][0]["users"]:
        _users(console, doc["results"][0]["users"])


def _price(usd: float | None) -> str:
    return "not priced" if usd is None else f"${usd:,.2f}"


def _users(console, users: list[dict], top: int = 10) -> None:
    table = new_table(f"Fair-share outcome: top {min(top, len(users))} of {len(users)} users by GPU-hours", "User",
                       "Jobs", "GPU-hours", "Share", "Mean wait", "Mean bsld", right=(1, 2, 3, 4, 5))
    for user in users[:top]:
        table.add_row(escape(user["user"]), f"{user['num_jobs']:,}", f"{user['gpu_hours']:,.0f}",
                      f"{user['share_of_gpu_hours']:.1%}", format_duration(user["mean_wait_s"]),
                      f"{user['mean_bounded_slowdown']:,.2f}")
    console.print(table)
