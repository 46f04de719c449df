"""The renting side of the live workbook: Cloud, Cash flow (monthly), Break-even and Workload sheets.

The formulas are cost/cloud.py's: billed GPU-hours (every hour for a reserved term, the delivered ones
otherwise), rent per year, cumulative spend month by month, and the break-even month, "the first whole
month m in 0 .. 12 x years with rent_per_year x m / 12 >= upfront + opex_per_year x m / 12", read off the
two cumulative columns. ``model`` is report/xlsx.py's ``Model``.
"""

from __future__ import annotations

from typing import Any

from clusterplan.report.bands import band_phrase
from clusterplan.report.xlsx_book import add_sheet, cell, column_letters, price_name, write_cell

MIN_MONTHS = 120   # the cash flow runs at least ten years, so a longer horizon typed in still has its months


def _months(doc: dict[str, Any]) -> int:
    return max(MIN_MONTHS, doc["cost"]["horizon_months"])


def write_cloud(model: Any, doc: dict[str, Any]) -> None:
    """Each offer renting the same capacity: billed GPU-hours, rent per year, total, ratio to TCO, break-even."""
    sheet = add_sheet(model.book, "Cloud")
    model.header(sheet, "Renting the same GPUs",
                 ("Offer", "Name", "Pricing", "Rate (USD/GPU-h)", "Reserved (1 = bills every hour)",
                  "Billed GPU-hours per year", "Rent per year (USD)", "Total over the horizon (USD)", "Over own TCO",
                  "Break-even (month)", "Source"), (28, 60, 14, 14, 14, 18, 18, 20, 12, 12, 90))
    for row, offer in enumerate(doc["cloud"], start=2):
        for column, key in ((0, "offer"), (1, "name"), (2, "pricing"), (10, "source")):
            write_cell(sheet, row, column, offer[key])
        model.formula(sheet, row, 3, f"={price_name(offer['offer'], 'rate')}", offer["usd_per_gpu_hour"], "rate")
        write_cell(sheet, row, 4, int(offer["pricing"].startswith("reserved")))
        model.formula(sheet, row, 5, f"=num_gpus*hours_per_year*IF({cell(row, 4)}=1,1,utilization)",
                      offer["billed_gpu_hours_per_year"], "number")
        model.formula(sheet, row, 6, f"={cell(row, 5)}*{cell(row, 3)}", offer["usd_per_year"])
        model.formula(sheet, row, 7, _horizon_rent_formula(cell(row, 6), offer), offer["total_usd"])
        model.formula(sheet, row, 8, f"={cell(row, 7)}/tco_usd", offer["vs_own"], "ratio")
        month = offer["breakeven_months"]
        model.formula(sheet, row, 9, f"='Break-even'!{cell(row, 2)}", "never" if month is None else month, "number")


def _horizon_rent_formula(rent_per_year: str, offer: dict[str, Any]) -> str:
    """The horizon's rent (cost/cloud.py ``CloudCost.total_usd``): pay-per-use bills the horizon's years; a
    reservation whole terms, MAX(1, CEILING(horizon / term)) x term years, less the idle remainder resold."""
    term = offer["term_years"]
    if not term:
        return f"={rent_per_year}*horizon_years"
    return f"={rent_per_year}*{_committed(f'MAX(1,CEILING(horizon_years/{term},1))*{term}', 'horizon_years')}"


def _committed(billed: str, used: str) -> str:
    """What a reservation costs in units of ``billed`` (whole terms) of which ``used`` are used: cost/cloud.py
    ``rented``'s rule, the idle remainder resold at the Inputs sheet's cloud resale fraction."""
    return f"({billed}-cloud_resale_fraction*({billed}-{used}))"


def write_cash_flow(model: Any, doc: dict[str, Any]) -> None:
    """Cumulative spend month by month: owning (upfront at month 0, opex spread) and each offer's rent."""
    cost, offers = doc["cost"], doc["cloud"]
    sheet = add_sheet(model.book, "Cash flow")
    model.header(sheet, "Cumulative spend by month (month 0 = purchase)",
                 ("Month", "Own (USD)", *(f"{offer['offer']} (USD)" for offer in offers)),
                 (8, 18, *(18 for _ in offers)))
    upfront, opex = cost["capex_usd"] + cost["one_off_usd"], cost["opex_usd_per_year"]["total"]
    for month in range(_months(doc) + 1):
        row = 2 + month
        sheet.write_number(row, 0, month)
        model.formula(sheet, row, 1, f"=upfront_usd+opex_usd_per_year*{cell(row, 0)}/12", upfront + opex * month / 12)
        for k, offer in enumerate(offers):
            model.formula(sheet, row, 2 + k, f"=Cloud!{cell(2 + k, 6, absolute=True)}*{cell(row, 0)}/12",
                          offer["usd_per_year"] * month / 12)
    last = 2 + cost["horizon_months"]
    chart = model.book.add_chart({"type": "line"})
    for column, label in enumerate(("Own", *(offer["offer"] for offer in offers)), start=1):
        chart.add_series({"name": label, "categories": ["Cash flow", 2, 0, last, 0],
                          "values": ["Cash flow", 2, column, last, column]})
    chart.set_title({"name": "Own vs rent: cumulative spend"})
    chart.set_x_axis({"name": "month"})
    chart.set_y_axis({"name": "USD"})
    chart.set_size({"width": 900, "height": 480})
    sheet.insert_chart(1, 3 + len(offers), chart)


def write_breakeven(model: Any, doc: dict[str, Any]) -> None:
    """The first month in the horizon at which each offer's cumulative rent reaches owning's cumulative spend."""
    sheet = add_sheet(model.book, "Break-even")
    model.header(sheet, "Break-even: first whole month m in 0 .. 12 x years with rent x m / 12 >= upfront + "
                        "opex x m / 12 (\"never\" if none)",
                 ("Offer", "Rent per year (USD)", "Break-even (month)"), (28, 18, 18))
    last = 2 + _months(doc)
    months = f"'Cash flow'!$A$3:$A${last + 1}"
    own = f"'Cash flow'!$B$3:$B${last + 1}"
    for k, offer in enumerate(doc["cloud"]):
        row = 2 + k
        column = column_letters(2 + k)
        rent = f"'Cash flow'!${column}$3:${column}${last + 1}"
        first = f"MIN(IF(({months}<=12*horizon_years)*({rent}>={own}),{months},1E+9))"
        write_cell(sheet, row, 0, offer["offer"])
        model.formula(sheet, row, 1, f"=Cloud!{cell(row, 6)}", offer["usd_per_year"])
        month = offer["breakeven_months"]
        sheet.write_array_formula(row, 2, row, 2, f'{{=IF({first}>12*horizon_years,"never",{first})}}',
                                  model.formats["number"], "never" if month is None else month)


def write_cash_sheets(model: Any, doc: dict[str, Any]) -> None:
    write_cloud(model, doc)
    write_cash_flow(model, doc)
    write_breakeven(model, doc)


def _workload_inputs(training: dict[str, Any]) -> list[tuple[str, str, Any, str]]:
    layout = training["layout"]
    shape = ", ".join(f"{key} {layout[key]}" for key in ("tp", "pp", "dp", "cp", "ep", "mbs") if key in layout)
    rows = [("GPUs of the job", "train_gpus", training["num_gpus"], "GPUs (from [workload])"),
            ("Tokens to train", "train_tokens", training.get("tokens", 0.0), "tokens (workload.tokens)"),
            ("Predicted throughput", "tokens_per_s", training["tokens_per_s"],
             f"tokens/s, the performance model's best layout ({shape}){_band(training)}; edit for what-if, "
             "`clusterplan train` recomputes it")]
    if training.get("goodput") is not None:
        rows.append(("Goodput", "goodput", training["goodput"], "fraction of wall-clock time doing useful work "
                                                                "(`clusterplan reliability` recomputes it)"))
    return rows


def _band(training: dict[str, Any]) -> str:
    """"; published runs of this kind measured ...: LOW to HIGH" of the throughput (report/bands.py), or ""."""
    if "tokens_per_s_low" not in training:
        return ""
    return "; " + band_phrase(training["tokens_per_s"], training["tokens_per_s_low"], training["tokens_per_s_high"],
                              lambda v: f"{v:,.0f}", kind="rate",
                              out_of_domain=bool(training["evidence"]["out_of_domain"]))


def _workload_costs(training: dict[str, Any], rates: set[str]) -> list[tuple[str, str, str, float, str]]:
    """(label, name, formula, cached value, format) of time and cost to train, raw then effective."""
    rows = [("Time to train", "time_to_train_s", "=train_tokens/tokens_per_s", training["time_to_train_s"], "usd0"),
            ("Time to train (days)", "", "=time_to_train_s/86400", training["time_to_train_s"] / 86400, "number"),
            ("GPU-hours", "train_gpu_hours", "=time_to_train_s/3600*train_gpus",
             training["time_to_train_s"] / 3600 * training["num_gpus"], "usd0"),
            ("Cost to train, own (USD)", "cost_to_train_usd", "=train_gpu_hours*cost_per_gpu_hour_usd",
             training["cost_to_train_usd"], "usd")]
    terms = training.get("cloud_terms", {})
    rows += [(f"Cost to train, {offer} (USD)", "", _rent_formula(offer, terms.get(offer)), usd, "usd")
             for offer, usd in training["cloud_cost_to_train_usd"].items() if price_name(offer, "rate") in rates]
    if "effective_time_to_train_s" in training:
        rows += [("Wall-clock time to train (s)", "", "=time_to_train_s/goodput",
                  training["effective_time_to_train_s"], "usd0"),
                 ("Wall-clock cost to train, own (USD)", "", "=cost_to_train_usd/goodput",
                  training["effective_cost_to_train_usd"], "usd")]
    return rows


def _rent_formula(offer: str, terms: dict[str, Any] | None) -> str:
    """The run's GPU-hours at the offer's rate; a reservation bills whole terms from its start (cost/cloud.py
    ``rented``): train_gpus x CEILING(run / term) x term hours, less the idle remainder resold."""
    rate = price_name(offer, "rate")
    if not terms:
        return f"=train_gpu_hours*{rate}"
    term_h = terms["term_years"] * 8760
    billed = f"train_gpus*MAX(1,CEILING(time_to_train_s/3600/{term_h},1))*{term_h}"
    return f"={_committed(billed, 'train_gpu_hours')}*{rate}"


def write_workload(model: Any, doc: dict[str, Any]) -> None:
    """Workload: the predicted tokens/s as an input, time and cost to train over it."""
    training = doc["training"]
    sheet = add_sheet(model.book, "Workload")
    model.header(sheet, f"Training {training['model']['name']}", ("Figure", "Value", "Unit / note"), (34, 20, 100))
    row = 2
    for row, (label, name, value, unit) in enumerate(_workload_inputs(training), start=2):
        write_cell(sheet, row, 0, label)
        write_cell(sheet, row, 1, value, model.formats["input"])
        write_cell(sheet, row, 2, unit)
        model.name(name, "Workload", row)
    if not training.get("time_to_train_s"):
        write_cell(sheet, row + 1, 0, "no token budget: set workload.tokens for time and cost to train",
                   model.formats["note"])
        return
    for row, (label, name, formula, value, fmt) in enumerate(_workload_costs(training, model.names), start=row + 1):
        write_cell(sheet, row, 0, label)
        model.formula(sheet, row, 1, formula, value, fmt)
        write_cell(sheet, row, 2, formula[1:], model.formats["note"])
        if name:
            model.name(name, "Workload", row)
