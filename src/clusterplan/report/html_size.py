"""The report's sizing section, shown when the scenario has a ``[size]`` section (docs/size.md): every modelled
candidate as a point of (days to the trained model, cost), one colour per mode, the Pareto frontier joined,
the deadline and the budget drawn, then the recommendation and the frontier as a table."""

from __future__ import annotations

from typing import Any

from clusterplan.report import svg
from clusterplan.report.figures import resolve
from clusterplan.report.page import Part, section, table, td
from clusterplan.report.svg import Mark, Series, esc

MODE_COLOURS = {"own": svg.PALETTE[0], "reserved": svg.PALETTE[1], "on-demand": svg.PALETTE[2],
                "spot": svg.PALETTE[4], "hybrid": svg.PALETTE[6]}


def _days(value: float) -> str:
    return f"{value:,.0f} d" if value >= 10 else f"{value:,.2g} d"


def _name(row: dict[str, Any]) -> str:
    offer = f" ({row['offer']})" if row.get("offer") else ""
    return f"{row['num_gpus']:,} x {row['gpu']}, {row['fabric']}, {row['mode']}{offer}"


def frontier_chart(doc: dict[str, Any]) -> str:
    """The candidates, the frontier, the deadline and the budget on log-log axes."""
    size = doc["size"]
    rows = [(index, row) for index, row in enumerate(size["candidates"]) if "cost_usd" in row]
    days = [row["done_days"] for _, row in rows]
    costs = [row["cost_usd"] for _, row in rows]
    deadline, budget = size["question"]["deadline_days"], size["question"]["budget_usd"]
    x = svg.log2_axis([*days, *([deadline] if deadline else [])], "days from the start to the trained model", _days)
    y = svg.log2_axis([*costs, *([budget] if budget else [])], "cost of the job (USD)", svg.usd)

    def point(index: int, row: dict[str, Any]) -> tuple[float, Mark]:
        return row["done_days"], Mark(value=row["cost_usd"], pointer=f"/size/candidates/{index}/cost_usd",
                                      tip=f"{_name(row)}: {_days(row['done_days'])}, {svg.usd(row['cost_usd'])}")

    series = [Series(name=mode, kind="points", colour=colour,
                     points=tuple(point(i, row) for i, row in rows if row["mode"] == mode))
              for mode, colour in MODE_COLOURS.items() if any(row["mode"] == mode for _, row in rows)]
    on_frontier = sorted((i for i, row in rows if row["on_frontier"]), key=lambda i: size["candidates"][i]["done_days"])
    series.append(Series(name="Pareto frontier", colour=svg.INK, width=1.5,
                         points=tuple(point(i, size["candidates"][i]) for i in on_frontier)))
    if deadline:
        series.append(Series(name=f"deadline ({_days(deadline)})", colour=svg.MUTED, dashed=True, width=1.5,
                             points=((deadline, Mark(value=y.low)), (deadline, Mark(value=y.high)))))
    if budget:
        series.append(Series(name=f"budget ({svg.usd(budget)})", colour=svg.PALETTE[3], dashed=True, width=1.5,
                             points=((x.low, Mark(value=budget)), (x.high, Mark(value=budget)))))
    return svg.line_chart(f"{size['question']['model']}: {len(rows):,} candidates, cost against days to trained",
                          series, x, y, chart="size-frontier")


def _row(doc: dict[str, Any], label: str, path: str) -> str:
    row = resolve(doc, path)
    return (f"<tr><td>{esc(label)}</td><td>{esc(_name(row))}</td>"
            f"<td class=\"num\">{esc(row['first_gpu_hour'])}</td><td class=\"num\">{esc(row['trained'])}</td>"
            f"{td(doc, f'{path}/done_days', lambda v: f'{v:,.1f}')}"
            f"{td(doc, f'{path}/mfu', lambda v: f'{v:.1%}')}{td(doc, f'{path}/cost_usd')}</tr>")


def sizing(doc: dict[str, Any]) -> Part | None:
    """The frontier chart, the recommendation and the frontier rows; None without a ``[size]`` section."""
    size = doc.get("size")
    if not size:
        return None
    asked = size["question"]
    picks = [(label, f"/size/{key}") for label, key in (("cheapest meeting the deadline", "cheapest"),
                                                       ("fastest within the budget", "fastest")) if size[key]]
    rows = [_row(doc, label, path) for label, path in picks]
    rows += [_row(doc, "frontier", f"/size/frontier/{i}") for i in range(len(size["frontier"]))]
    excluded = ", ".join(f"{reason} {count:,}" for reason, count in size["excluded"].items()) or "none"
    intro = (f"<p>{esc(asked['model'])} on {asked['tokens'] / 1e9:,.0f}B tokens from {esc(asked['start'])}: "
             f"{size['num_candidates']:,} candidates, {size['num_modelled']:,} modelled; excluded: {esc(excluded)}.</p>")
    if not size["cheapest"] and asked["deadline"]:
        intro += f"<p><strong>Nothing meets the deadline {esc(asked['deadline'])}.</strong></p>"
    body = (intro + frontier_chart(doc)
            + table(("", "Candidate", "First GPU-hour", "Trained", "Days", "MFU", "Cost"), rows, numeric=(2, 3, 4, 5, 6))
            + f'<p class="muted">{esc(size["own_cost_rule"])}; docs/size.md.</p>')
    return section("size", "Sizing: own, rent or both", body)
