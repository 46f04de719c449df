"""The plan document as plain tables for finance: CSV and Markdown (XLSX: the live model of report/xlsx.py).

Every table has a header row whose labels carry the unit, and cells that are
numbers stay numbers. One CSV holds the tables one after another: a row with
the table's title alone, its header row, its rows, then one blank line
(docs/report.md, "Exports").
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from typing import Any, TextIO

from clusterplan.report.figures import TABLES, shown
from clusterplan.schema import FROZEN
from clusterplan.units import plural

Cell = str | int | float | bool | None


@dataclass(**FROZEN)
class Table:
    name: str                      # short: an XLSX sheet name
    title: str
    columns: tuple[str, ...]       # "Total (USD)": the unit in the label
    rows: tuple[tuple[Cell, ...], ...]


def plan_heading(doc: dict[str, Any]) -> str:
    """One line naming the cluster, as the terminal view starts."""
    design, fabric = doc["design"], doc["design"]["fabric"]
    domains = (f", {design['num_nvlink_domains']:,} NVLink domains of {design['nvlink_domain_gpus']}"
               if "nvlink_domain_gpus" in design else "")
    return (f"{design['num_gpus']:,} x {design['gpu']} ({design['num_nodes']:,} {plural(design['num_nodes'], 'nodes')} x {design['gpus_per_node']}"
            f"{domains}), {fabric['id']} {fabric['topology']}, {doc['cost']['years']} years")


def _never(month: int | None) -> Cell:
    return "never" if month is None else month


def plan_tables(doc: dict[str, Any]) -> tuple[Table, ...]:
    """Summary (the headline figures, report/figures.py), bill of materials, one-off costs, cash flow by year and
    the cloud offers."""
    cost = doc["cost"]
    opex = {name: value for name, value in cost["opex_usd_per_year"].items() if name != "total"}
    years = cost["years"]
    summary = tuple((headline.title(TABLES, doc), headline.value(doc), headline.unit) for headline in shown(TABLES)
                    if headline.value(doc) is not None)
    bom = tuple((line["category"], line["item"], line["id"], line["quantity"], line["per"], line["unit_price_usd"],
                 line["total_usd"], line["assumption"], line["source"]) for line in cost["bom"])
    one_off = tuple((line["item"], line["id"], line["quantity"], line["per"], line["unit_price_usd"],
                     line["total_usd"], line["source"]) for line in cost["one_off"])
    cumulative = cost["cumulative_usd_by_year"]
    flow = [(0, cost["capex_usd"], cost["one_off_usd"], *(0.0 for _ in opex), 0.0, cumulative[0], 0.0,
             cumulative[0])]
    flow += [(year, 0.0, 0.0, *opex.values(), cost["opex_usd_per_year"]["total"], cumulative[year],
              residual := (cost["residual_usd"] if year == years else 0.0), cumulative[year] - residual)
             for year in range(1, years + 1)]
    cloud = tuple((c["offer"], c["name"], c["provider"], c["gpu"], c["pricing"], c["usd_per_gpu_hour"],
                   c["billed_gpu_hours_per_year"], c["usd_per_year"], c["total_usd"], c["vs_own"],
                   _never(c["breakeven_months"]), c["source"], c["date"]) for c in doc["cloud"])
    return (
        Table(name="Summary", title="Summary", columns=("Figure", "Value", "Unit"), rows=summary),
        Table(name="BoM", title="Bill of materials (capex)",
              columns=("Category", "Item", "Catalog id", "Quantity", "Per", "Unit price (USD)", "Total (USD)",
                       "Assumption", "Source"), rows=bom),
        Table(name="One-off", title="One-off costs", columns=("Item", "Catalog id", "Quantity", "Per",
                                                               "Unit price (USD)", "Total (USD)", "Source"),
              rows=one_off),
        Table(name="Cash flow", title="Cash flow by year (year 0 = purchase)",
              columns=("Year", "Capex (USD)", "One-off (USD)", *(f"{name.capitalize()} (USD)" for name in opex),
                       "Opex total (USD)", "Cumulative (USD)", "Residual value credited (USD)",
                       "Cumulative net of residual (USD)"), rows=tuple(flow)),
        Table(name="Cloud", title=f"Renting the same GPU-hours ({years} years)",
              columns=("Offer", "Name", "Provider", "GPU", "Pricing", "Price (USD/GPU-hour)",
                       "Billed GPU-hours per year", "Per year (USD)", f"Total over {years} years (USD)",
                       "vs own (ratio)", "Break-even (month)", "Source", "Date"), rows=cloud),
    )


def _csv_cell(value: Cell) -> Cell:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return repr(value)
    return "" if value is None else value


def write_csv(tables: tuple[Table, ...], stream: TextIO) -> None:
    """Tables one after another: title row, header row, rows, blank line."""
    writer = csv.writer(stream, lineterminator="\r\n")
    for index, table in enumerate(tables):
        if index:
            writer.writerow([])
        writer.writerow([table.title])
        writer.writerow(table.columns)
        writer.writerows([_csv_cell(cell) for cell in row] for row in table.rows)


def read_csv(text: str) -> dict[str, tuple[tuple[str, ...], list[list[str]]]]:
    """The tables of ``write_csv`` back, by title: (header, rows of strings)."""
    tables: dict[str, tuple[tuple[str, ...], list[list[str]]]] = {}
    block: list[list[str]] = []
    for row in [*csv.reader(text.splitlines()), []]:
        if row:
            block.append(row)
        elif block:
            tables[block[0][0]] = (tuple(block[1]), block[2:])
            block = []
    return tables


def _md_cell(value: Cell) -> str:
    if isinstance(value, bool):
        return "yes" if value else ""
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:,.2f}" if abs(value) < 1000 and value != int(value) else f"{value:,.0f}"
    return "" if value is None else str(value).replace("|", "\\|").replace("\n", " ")


def write_markdown(tables: tuple[Table, ...], stream: TextIO, *, heading: str = "") -> None:
    """One pipe table per table under a ``###`` title; numbers right-aligned."""
    if heading:
        stream.write(f"## {heading}\n\n")
    for table in tables:
        numeric = [all(isinstance(row[i], (int, float)) and not isinstance(row[i], bool)
                       for row in table.rows if row[i] is not None) and any(row[i] is not None for row in table.rows)
                   for i in range(len(table.columns))]
        stream.write(f"### {table.title}\n\n")
        stream.write("| " + " | ".join(_md_cell(c) for c in table.columns) + " |\n")
        stream.write("|" + "|".join("---:" if n else "---" for n in numeric) + "|\n")
        for row in table.rows:
            stream.write("| " + " | ".join(_md_cell(cell) for cell in row) + " |\n")
        stream.write("\n")
