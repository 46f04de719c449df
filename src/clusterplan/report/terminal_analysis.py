"""Terminal views of the sensitivity and compare documents (rich tables, as report/terminal.py)."""

from __future__ import annotations

from typing import Any, TextIO

from clusterplan.report.console import escape, new_console, new_table
from clusterplan.report.figures import money, months
from clusterplan.units import format_quantity, plural


def _money(value: float | None) -> str:
    return "-" if value is None else money(value)


def render_sensitivity(doc: dict[str, Any], stream: TextIO) -> None:
    console = new_console(stream)
    cluster, mc, offer = doc["scenario"]["cluster"], doc["monte_carlo"], doc["offer"]
    console.print(f"[bold]clusterplan sensitivity[/bold]: {doc['num_gpus']:,} x {cluster['gpu']}, {doc['years']} years; "
                  f"{mc['samples']:,} samples, seed {mc['seed']}"
                  + (f"; break-even vs {offer}" if offer else ""))
    table = new_table(f"Monte Carlo ({doc['distribution']} per input)", "Output", "Nominal", "P10", "P50", "P90",
                       right=(1, 2, 3, 4))
    rows = [("TCO", "tco_usd", _money), ("Cost per delivered GPU-hour", "cost_per_gpu_hour_usd", _money)]
    if offer:
        rows.append((f"Cash break-even vs {offer}", "breakeven_months", months))
    for name, metric, fmt in rows:
        spread = mc[metric]
        table.add_row(name, fmt(doc["nominal"][metric]), *(fmt(spread[q]) for q in ("p10", "p50", "p90")))
    console.print(table)
    if offer:
        console.print(f"Breaks even against {offer} within {doc['horizon_months']} months in "
                      f"{mc['breakeven_probability']:.1%} of samples\n")

    tornado = new_table("Tornado: each input alone at its low / high end (largest TCO swing first)",
                         "Input", "Low .. high", "TCO", "Swing", "$/GPU-h", "Break-even", right=(1, 2, 3, 4, 5))
    sources = {item["key"]: item["range_source"] for item in doc["inputs"]}
    for swing in doc["tornado"]:
        low, high = swing["low"], swing["high"]
        tornado.add_row(swing["key"] + (" *" if sources[swing["key"]] == "catalog" else ""),
                        f"{swing['low_value']:,.6g} .. {swing['high_value']:,.6g}",
                        f"{_money(low['tco_usd'])} / {_money(high['tco_usd'])}", _money(swing["tco_swing_usd"]),
                        f"{low['cost_per_gpu_hour_usd']:.2f} / {high['cost_per_gpu_hour_usd']:.2f}",
                        f"{_short(low['breakeven_months'])} / {_short(high['breakeven_months'])}" if offer else "-")
    console.print(tornado)
    console.print("  * range from the catalog's low/high (sources disagree); the others are +-20 % of the nominal")
    fixed = [item["key"] for item in doc["inputs"] if not item["varies"]]
    if fixed:
        console.print(f"  fixed (zero range): {', '.join(fixed)}")
    console.print("\n[bold]What drives the spread[/bold] (Spearman rank correlation with each output)")
    for metric, pairs in mc["drivers"].items():
        top = ", ".join(f"{pair['key']} {pair['rank_correlation']:+.2f}" for pair in pairs[:4])
        console.print(f"  {metric}: {escape(top)}", soft_wrap=True)


def _short(month: int | None) -> str:
    return "never" if month is None else str(month)


def format_figure(value: float | None, unit: str) -> str:
    """A compare figure in its unit: money, months, GB/s, days, or the number and its unit."""
    if value is None:
        return "never" if unit == "month" else "-"
    if unit.startswith("USD"):
        return _money(value)
    if unit == "month":
        return f"month {value}"
    if unit == "B/s":
        return f"{value / 1e9:,.1f} GB/s"
    if unit == "s":
        for scale, name in ((86400, "days"), (3600, "h")):
            if abs(value) >= scale:
                return f"{value / scale:,.2f} {name}"
        return f"{value:,.4g} s"
    if unit == "fraction":
        return f"{value:.1%}"
    noun = plural(value, unit)
    return f"{value:,.0f} {noun}" if abs(value) >= 1e4 else f"{value:,.6g} {noun}"


def format_delta(value: float | None, unit: str) -> str:
    """A signed difference in the figure's unit ("+$150.31K", "+1 months", "+1.47 h", "-0.19 pp")."""
    if value is None:
        return "-"
    if value == 0:
        return "0"
    sign = "+" if value > 0 else "-"
    if unit == "month":
        return f"{sign}{abs(value):g} {plural(value, 'months')}"
    if unit.startswith("USD") or unit in ("B/s", "s"):
        return sign + format_figure(abs(value), unit)
    if unit == "fraction":
        return f"{sign}{abs(value) * 100:.2f} pp"
    noun = plural(value, unit)
    return f"{sign}{abs(value):,.0f} {noun}" if abs(value) >= 1e4 else f"{sign}{abs(value):,.4g} {noun}"


def render_compare(doc: dict[str, Any], stream: TextIO) -> None:
    """Up to three scenarios with a column per delta; more (a ``--vary`` grid) with each delta under its value,
    in tables of ``WIDE_COLUMNS`` scenarios so that the page keeps its width."""
    console = new_console(stream)
    labels = doc["labels"]
    if len(labels) <= 3:
        console.print(f"[bold]clusterplan compare[/bold]: {escape(' vs '.join(labels))} (deltas against "
                      f"{escape(labels[0])})")
    else:
        console.print(f"[bold]clusterplan compare[/bold]: {len(labels)} scenarios, deltas against "
                      f"{escape(labels[0])}")
    groups = [range(len(labels))] if len(labels) <= 3 else \
        [range(i, min(i + WIDE_COLUMNS, len(labels))) for i in range(0, len(labels), WIDE_COLUMNS)]
    for group in groups:
        _compare_tables(console, doc, list(group), part="" if len(groups) == 1 else
                        f" ({group[0] + 1}-{group[-1] + 1} of {len(labels)})")
    if len(labels) > 3 and doc["unchanged"]["headlines"]:
        console.print(f"  ... {doc['unchanged']['headlines']} unchanged figures folded")
    if len(labels) > 3 and doc["unchanged"]["bom"]:
        console.print(f"  ... {doc['unchanged']['bom']} unchanged BoM lines folded (--format json lists them)")


WIDE_COLUMNS = 4      # scenarios per table when each delta sits under its value


def _compare_tables(console, doc: dict[str, Any], shown: list[int], *, part: str) -> None:
    labels = doc["labels"]
    apart = len(labels) <= 3                     # deltas in columns of their own
    names = [escape(labels[i]) if apart else escape(labels[i]).replace(" ", "\n") for i in shown]
    columns = ("", *names, *(f"Δ {escape(labels[i])}" for i in shown[1:])) if apart else ("", *names)
    right = tuple(range(1, len(columns)))

    def cells(values: list[str], deltas: list[str]) -> list[str]:
        if apart:
            return [*(values[i] for i in shown), *(deltas[i] for i in shown[1:])]
        return [values[i] if i == 0 else f"{values[i]}\nΔ {deltas[i]}" for i in shown]

    headlines = new_table(f"Headline figures{part}", *columns, right=right)
    for row in doc["headlines"]:
        if row["changed"]:
            notes = row.get("notes") or [None] * len(row["values"])
            values = [format_figure(v, row["unit"]) + (f" ({escape(n)})" if n else "")
                      for v, n in zip(row["values"], notes)]
            headlines.add_row(escape(row["name"]), *cells(values, [format_delta(d, row["unit"])
                                                                   for d in row["deltas"]]))
    console.print(headlines)
    if apart and doc["unchanged"]["headlines"]:
        console.print(f"  ... {doc['unchanged']['headlines']} unchanged figures folded\n")
    bom = new_table(f"Bill of materials (quantity, total USD){part}", *columns, right=right)
    for line in doc["bom"]:
        if line["changed"]:
            values = [f"{format_quantity(q)}: {_money(t)}" if q else "-"
                      for q, t in zip(line["quantities"], line["totals_usd"])]
            bom.add_row(f"{line['category']}: {escape(line['item'])}",
                        *cells(values, [format_delta(d, "USD") for d in line["deltas_usd"]]))
    console.print(bom)
    if apart and doc["unchanged"]["bom"]:
        console.print(f"  ... {doc['unchanged']['bom']} unchanged lines folded (--format json lists them)")
