"""compare and sensitivity documents as plain tables, for their XLSX exports (docs/report.md, "XLSX").

These are values, not a live model: each scenario was planned (its design searched) by the tool, and the
tornado and Monte Carlo re-price the model hundreds of times; `clusterplan compare` and `clusterplan
sensitivity` recompute them.
"""

from __future__ import annotations

from typing import Any

from clusterplan.report.tables import Cell, Table

_OUTCOMES = (("tco_usd", "TCO (USD)"), ("cost_per_gpu_hour_usd", "Cost per GPU-hour (USD)"),
             ("breakeven_months", "Break-even (month)"))


def _never(month: Any) -> Cell:
    return "never" if month is None else month


def _flat(table: dict[str, Any], prefix: str = "") -> dict[str, Cell]:
    """A nested scenario table as ``section.key`` -> value; lists joined with commas."""
    out: dict[str, Cell] = {}
    for key, value in table.items():
        if isinstance(value, dict):
            out.update(_flat(value, f"{prefix}{key}."))
        else:
            out[f"{prefix}{key}"] = ", ".join(map(str, value)) if isinstance(value, list) else value
    return out


def compare_tables(doc: dict[str, Any]) -> tuple[Table, ...]:
    """Headline figures and BoM lines side by side with deltas against the first scenario; the scenarios."""
    labels = doc["labels"]
    headlines = tuple((h["name"], h["unit"], *h["values"], *h["deltas"][1:], h["changed"]) for h in doc["headlines"])
    bom = tuple((line["category"], line["item"], line["id"], line["per"], *line["quantities"],
                 *line["unit_prices_usd"], *line["totals_usd"], *line["deltas_usd"][1:], line["changed"])
                for line in doc["bom"])
    deltas = tuple(f"{label} - {labels[0]}" for label in labels[1:])
    scenarios = [_flat(table) for table in doc["scenarios"]]
    keys = list(dict.fromkeys(key for table in scenarios for key in table))
    return (
        Table(name="Headlines", title="Headline figures", rows=headlines,
              columns=("Figure", "Unit", *labels, *(f"{d}" for d in deltas), "Changed")),
        Table(name="BoM", title="Bill of materials", rows=bom,
              columns=("Category", "Item", "Id", "Per", *(f"Quantity, {label}" for label in labels),
                       *(f"Unit price, {label} (USD)" for label in labels),
                       *(f"Total, {label} (USD)" for label in labels), *(f"{d} (USD)" for d in deltas), "Changed")),
        Table(name="Scenarios", title="Scenarios", columns=("Key", *labels),
              rows=tuple((key, *(table.get(key) for table in scenarios)) for key in keys)),
        Table(name="Sources", title="Scenario files", columns=("Label", "File"),
              rows=tuple(zip(labels, doc["sources"]))),
    )


def sensitivity_tables(doc: dict[str, Any]) -> tuple[Table, ...]:
    """The uncertain inputs, the tornado (each input at its low and high), the Monte Carlo quantiles."""
    inputs = tuple((i["key"], i["name"], i["unit"], i["low"], i["nominal"], i["high"], i["range_source"], i["varies"])
                   for i in doc["inputs"])
    tornado = tuple((t["key"], t["name"], t["unit"], t["low_value"], t["high_value"],
                     *(_never(t[end][key]) for end in ("low", "high") for key, _ in _OUTCOMES),
                     t["tco_swing_usd"], t["breakeven_swing_months"]) for t in doc["tornado"])
    mc = doc["monte_carlo"]
    quantiles = tuple((label, _never(doc["nominal"][key]), *(mc[key][q] for q in ("p10", "p50", "p90", "mean")))
                      for key, label in _OUTCOMES)
    return (
        Table(name="Inputs", title="Uncertain inputs (triangular low, nominal, high)", rows=inputs,
              columns=("Key", "Input", "Unit", "Low", "Nominal", "High", "Range from", "Varies")),
        Table(name="Tornado", title=f"Tornado (break-even against {doc['offer']})", rows=tornado,
              columns=("Key", "Input", "Unit", "Low value", "High value",
                       *(f"{label} at low" for _, label in _OUTCOMES), *(f"{label} at high" for _, label in _OUTCOMES),
                       "TCO swing (USD)", "Break-even swing (months)")),
        Table(name="Monte Carlo", title=f"Monte Carlo ({mc['samples']} samples, seed {mc['seed']})", rows=quantiles,
              columns=("Figure", "Nominal", "P10", "P50", "P90", "Mean")),
    )
