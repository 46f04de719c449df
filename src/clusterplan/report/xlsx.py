"""The plan as a live spreadsheet model (docs/report.md, "XLSX"): inputs as named cells, costs as formulas.

Sheets: Inputs (every scenario input that enters cost, each a defined name with its unit and source), BoM,
Opex, TCO, Cloud, Cash flow, Break-even and, with a workload, Workload. Each formula is the one of
cost/tco.py and cost/cloud.py, written in the same order of operations, and carries the plan's value as
its cached result, so a viewer that does not recalculate shows the tool's numbers and one that does
recomputes them from the edited inputs. Quantities the design derives (fat-tree switch counts, racks,
cables, power) are values: the sheet says so and names the command that recomputes them.
"""

from __future__ import annotations

from typing import Any

from clusterplan.report.xlsx_book import add_sheet, cell, column_letters, finish, new_workbook, price_name, write_cell
from clusterplan.report.xlsx_cash import write_cash_sheets, write_workload

_RECOMPUTE = "design figure, not a formula: `clusterplan plan` recomputes it"


class Model:
    """The workbook being written, its formats, and the defined names given so far."""

    def __init__(self) -> None:
        self.book, self.buffer, self.formats = new_workbook()
        self.names: set[str] = set()

    def name(self, name: str, sheet: str, row: int, column: int = 1) -> None:
        """Define ``name`` for the cell (``row``, ``column``) of ``sheet`` (0-based)."""
        assert name not in self.names, name
        self.names.add(name)
        self.book.define_name(name, f"='{sheet}'!${column_letters(column)}${row + 1}")

    def formula(self, sheet: Any, row: int, column: int, formula: str, value: Any, fmt: str = "usd") -> None:
        sheet.write_formula(row, column, formula, self.formats[fmt], value)

    def header(self, sheet: Any, title: str, columns: tuple[str, ...], widths: tuple[int, ...]) -> None:
        sheet.write_string(0, 0, title, self.formats["title"])
        for column, (label, width) in enumerate(zip(columns, widths)):
            sheet.write_string(1, column, label, self.formats["header"])
            sheet.set_column(column, column, width)
        sheet.freeze_panes(2, 0)


def scenario_inputs(doc: dict[str, Any]) -> list[tuple[str, str, float, str, str]]:
    """(label, name, value, unit, source) of each rate and figure the cost formulas read."""
    s, design, cost = doc["scenario"], doc["design"], doc["cost"]
    facility, staff, finance = s["facility"], s["staff"], s["finance"]
    return [
        ("Electricity price", "electricity_usd_per_kwh", facility["electricity_usd_per_kwh"], "USD/kWh",
         "scenario facility.electricity_usd_per_kwh"),
        ("PUE", "pue", facility["pue"], "ratio", "scenario facility.pue"),
        ("Colocation", "colocation_usd_per_kw_month", facility["colocation_usd_per_kw_month"], "USD per kW-month",
         "scenario facility.colocation_usd_per_kw_month"),
        ("Support rate", "support_fraction_per_year", cost["support_fraction_per_year"],
         "fraction of a class's capex per year, after its warranty", "scenario finance.support_fraction_per_year"),
        ("Flat maintenance (replaces support when > 0)", "maintenance_fraction_per_year",
         cost["maintenance_fraction_per_year"], "fraction of capex per year",
         "scenario finance.maintenance_fraction_per_year"),
        ("Resale fraction", "resale_fraction", cost["resale_fraction"], "of the straight-line book value",
         "scenario finance.resale_fraction"),
        ("Cloud resale fraction", "cloud_resale_fraction", s["cloud"]["resale_fraction"],
         "of a reservation's idle remainder", "scenario cloud.resale_fraction"),
        ("Sales tax", "sales_tax", cost["sales_tax"], "fraction of the hardware", "scenario finance.sales_tax"),
        ("Loan rate", "loan_rate", cost["loan"]["rate"], "per year (0 = paid in cash)", "scenario finance.loan_rate"),
        ("Loan term", "loan_years", cost["loan"]["years"], "years", "scenario finance.loan_years"),
        *_asset_inputs(cost, finance),
        *_licence_inputs(cost),
        ("Ops engineers", "ops_engineers", design["staff"]["ops_engineers"], "engineers",
         f"scenario [staff]: {design['staff']['ops_rule']}"),
        ("Loaded cost per engineer", "loaded_cost_usd_per_year", staff["loaded_cost_usd_per_year"],
         "USD per engineer-year", "scenario staff.loaded_cost_usd_per_year"),
        ("Setup engineers", "setup_engineers", design["staff"]["setup_engineers"], "engineers",
         f"scenario [staff]: {design['staff']['setup_rule']}"),
        ("Setup time", "setup_months", staff["setup_months"], "months", "scenario staff.setup_months"),
        ("Utilization", "utilization", finance["utilization"], "fraction of GPU-hours delivered",
         "scenario finance.utilization (or its trace replay)"),
        ("Horizon", "horizon_years", cost["years"], "years", "scenario finance.years"),
        ("Discount rate", "discount_rate", cost["discount_rate"], "per year", "scenario finance.discount_rate"),
        ("Hours per year", "hours_per_year", 8760, "h", "365 days (docs/cost.md)"),
        ("GPUs", "num_gpus", design["num_gpus"], "GPUs", _RECOMPUTE),
        ("Nodes", "num_nodes", design["num_nodes"], "nodes", _RECOMPUTE),
        ("IT power, nameplate", "it_power_kw", design["it_power_kw"], "kW", _RECOMPUTE),
        ("IT power, typical", "it_typical_power_kw", design["it_typical_power_kw"], "kW", _RECOMPUTE),
    ]


def _asset_inputs(cost: dict[str, Any], finance: dict[str, Any]) -> list[tuple[str, str, Any, str, str]]:
    """Each asset class's warranty, support start (the warranty's end unless the scenario sets it) and life."""
    rows: list[tuple[str, str, Any, str, str]] = []
    for asset in cost["assets"]:
        category = asset["category"]
        start: Any = asset["support_start_years"]
        if finance["support_start_year"] is None:
            start = (f"=warranty_{category}_years", start)
        rows += [(f"Warranty: {category}", f"warranty_{category}_years", asset["warranty_years"], "years",
                  f"catalog {asset['asset']}: {asset['source']}"),
                 (f"Support starts: {category}", f"support_start_{category}_years", start, "years after purchase",
                  "the warranty's end (scenario finance.support_start_year = \"auto\")"
                  if finance["support_start_year"] is None else "scenario finance.support_start_year"),
                 (f"Economic life: {category}", f"life_{category}_years", asset["life_years"], "years",
                  f"catalog {asset['asset']} (or scenario finance.life_years)")]
    return rows


def _licence_inputs(cost: dict[str, Any]) -> list[tuple[str, str, Any, str, str]]:
    """Each licence charged: its units (GPUs or nodes) and the years a purchase bundles it."""
    rows: list[tuple[str, str, Any, str, str]] = []
    for licence in cost["licences"]:
        units = ("=num_gpus" if licence["unit"] == "GPU" else "=num_nodes", licence["units"])
        rows += [(f"Licence units: {licence['id']}", price_name(licence["id"], "units"), units,
                  f"{licence['unit']}s", "the cluster's count"),
                 (f"Licence bundled years: {licence['id']}", price_name(licence["id"], "bundled"),
                  licence["bundled_years"], "years", "catalog bundled_with / bundled_years")]
    return rows


def _priced_ids(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each catalog entry priced in the BoM or one-off lines, once, in order of first use."""
    out: dict[str, dict[str, Any]] = {}
    for line in (*doc["cost"]["bom"], *doc["cost"]["one_off"]):
        if line["id"]:
            out.setdefault(line["id"], line)
    for licence in doc["cost"]["licences"]:
        out.setdefault(licence["id"], {"item": licence["name"], "unit_price_usd": licence["unit_price_usd"],
                                       "per": f"{licence['unit']}-year", "source": licence["source"]})
    return out


def write_inputs(model: Model, doc: dict[str, Any]) -> None:
    """Inputs: scenario rates and design figures, unit prices, cloud rates; yellow cells are meant to be edited."""
    sheet = add_sheet(model.book, "Inputs")
    model.header(sheet, "Inputs (edit the yellow cells; every other sheet follows)",
                 ("Input", "Value", "Unit", "Name", "Source"), (34, 16, 30, 34, 90))
    rows = [*scenario_inputs(doc)]
    rows += [(f"Unit price: {line['item']}", price_name(catalog_id), line["unit_price_usd"], f"USD per {line['per']}",
              line["source"]) for catalog_id, line in _priced_ids(doc).items()]
    rows += [(f"Cloud rate: {offer['name']}", price_name(offer["offer"], "rate"), offer["usd_per_gpu_hour"],
              "USD per GPU-hour", f"{offer['source']} ({offer['date']})") for offer in doc["cloud"]]
    for row, (label, name, value, unit, source) in enumerate(rows, start=2):
        write_cell(sheet, row, 0, label)
        if isinstance(value, tuple):   # a formula over other inputs, with its cached value
            model.formula(sheet, row, 1, value[0], value[1], "number")
        else:
            write_cell(sheet, row, 1, value, model.formats["input"])
        for column, text in ((2, unit), (3, name), (4, source)):
            write_cell(sheet, row, column, text)
        model.name(name, "Inputs", row)


def _quantity(model: Model, sheet: Any, row: int, line: dict[str, Any], doc: dict[str, Any]) -> None:
    """A BoM quantity: a formula where it is an input (GPUs, servers, cooling kW), else the design's value."""
    design = doc["design"]
    formula = {design["gpu"]: "=num_gpus", design["server"]: "=num_nodes"}.get(line["id"])
    if formula and line["quantity"] != design[formula[1:]]:   # the spare nodes' GPUs and servers: a design figure
        formula = None
    if line["category"] == "facility" and line["per"].startswith("kW"):
        formula = "=it_power_kw"
    if formula:
        model.formula(sheet, row, 3, formula, line["quantity"], "number")
        write_cell(sheet, row, 7, "formula over Inputs")
    else:
        write_cell(sheet, row, 3, line["quantity"], model.formats["number"])
        write_cell(sheet, row, 7, _RECOMPUTE, model.formats["note"])


def _lines(model: Model, sheet: Any, start: int, lines: list[dict[str, Any]], doc: dict[str, Any]) -> int:
    """BoM-style lines from row ``start``: quantity x unit price = total; returns the next free row."""
    for row, line in enumerate(lines, start=start):
        for column, key in ((0, "category"), (1, "item"), (2, "id"), (4, "per"), (8, "source")):
            write_cell(sheet, row, column, line[key])
        if line["id"]:
            _quantity(model, sheet, row, line, doc)
            price = f"={price_name(line['id'])}"
        elif line["category"] == "tax":   # sales tax on every hardware line above it
            model.formula(sheet, row, 3, "=" + "+".join(cell(r, 6) for r in range(start, row)), line["quantity"])
            write_cell(sheet, row, 7, "formula: the hardware lines above")
            price = "=sales_tax"
        else:   # the setup engineers: engineer-years from the staff inputs
            model.formula(sheet, row, 3, "=setup_engineers*setup_months/12", line["quantity"], "number")
            write_cell(sheet, row, 7, "formula over Inputs")
            price = "=loaded_cost_usd_per_year"
        model.formula(sheet, row, 5, price, line["unit_price_usd"])
        model.formula(sheet, row, 6, f"={cell(row, 3)}*{cell(row, 5)}", line["total_usd"])
    return start + len(lines)


def _total(model: Model, sheet: Any, row: int, label: str, name: str, first: int, last: int, value: float) -> None:
    """``label`` and the left-to-right sum of column G over rows ``first``..``last`` (as Python's ``sum``)."""
    write_cell(sheet, row, 1, label, model.formats["header"])
    chain = "+".join(cell(r, 6) for r in range(first, last)) or "0"
    model.formula(sheet, row, 6, f"={chain}", value)
    model.name(name, "BoM", row, 6)


def write_bom(model: Model, doc: dict[str, Any]) -> tuple[int, int]:
    """BoM and one-off lines, capex, one-off and upfront; returns the rows of the capex-by-category table."""
    cost = doc["cost"]
    sheet = add_sheet(model.book, "BoM")
    model.header(sheet, "Bill of materials (capex) and one-off costs",
                 ("Category", "Item", "Id", "Quantity", "Per", "Unit price (USD)", "Total (USD)", "Quantity from",
                  "Source"), (12, 48, 24, 12, 24, 16, 18, 60, 90))
    end = _lines(model, sheet, 2, cost["bom"], doc)
    _total(model, sheet, end, "Capex", "capex_usd", 2, end, cost["capex_usd"])
    start = end + 2
    end = _lines(model, sheet, start, cost["one_off"], doc)
    _total(model, sheet, end, "One-off", "one_off_usd", start, end, cost["one_off_usd"])
    write_cell(sheet, end + 1, 1, "Upfront (capex + one-off, month 0)", model.formats["header"])
    model.formula(sheet, end + 1, 6, "=capex_usd+one_off_usd", cost["capex_usd"] + cost["one_off_usd"])
    model.name("upfront_usd", "BoM", end + 1, 6)
    first = end + 3
    write_cell(sheet, first, 0, "Capex by category", model.formats["header"])
    bom_rows = f"{cell(2, 0, absolute=True)}:{cell(1 + len(cost['bom']), 0, absolute=True)}"
    totals = bom_rows.replace("A", "G")
    categories = [asset["category"] for asset in cost["assets"]]
    for row, category in enumerate(categories, start=first + 1):
        write_cell(sheet, row, 0, category)
        model.formula(sheet, row, 6, f'=SUMIF({bom_rows},"{category}",{totals})*(1+sales_tax)',
                      cost["capex_by_category_usd"].get(category, 0.0))
        model.name(f"capex_{category}_usd", "BoM", row, 6)
    return first + 1, first + len(categories)


def _support(categories: list[str], span: str, start: str = "support_start_{c}_years") -> str:
    """Each class's support contract averaged over ``span`` years (cost/tco.py support_usd_per_year)."""
    return "+".join(f"capex_{c}_usd*support_fraction_per_year*MAX(0,{span.format(c=c)}-{start.format(c=c)})"
                    f"/{span.format(c=c)}" for c in categories)


def _software(cost: dict[str, Any], span: str) -> str:
    """Each licence averaged over ``span`` years, nothing in its bundled years."""
    return "+".join(f"{price_name(c['id'], 'units')}*{price_name(c['id'])}"
                    f"*MAX(0,{span}-{price_name(c['id'], 'bundled')})/{span}" for c in cost["licences"]) or "0"


def opex_formulas(cost: dict[str, Any]) -> dict[str, str]:
    """The yearly opex lines of cost/tco.py over the horizon, as formulas over the Inputs."""
    categories = [asset["category"] for asset in cost["assets"]]
    return {
        "electricity": "=it_typical_power_kw*pue*hours_per_year*electricity_usd_per_kwh",
        "colocation": "=it_power_kw*colocation_usd_per_kw_month*12",
        "support": f"=IF(maintenance_fraction_per_year>0,capex_usd*maintenance_fraction_per_year,"
                   f"{_support(categories, 'horizon_years')})",
        "staff": "=ops_engineers*loaded_cost_usd_per_year",
        "software": f"={_software(cost, 'horizon_years')}",
        "financing": "=IF(OR(loan_rate=0,loan_years=0),0,-CUMIPMT(loan_rate,loan_years,capex_usd,1,"
                     "MIN(horizon_years,loan_years),0)/horizon_years)",
    }


def write_opex(model: Model, doc: dict[str, Any]) -> None:
    """Opex: the yearly lines of cost/tco.py and their total."""
    opex = doc["cost"]["opex_usd_per_year"]
    formulas = opex_formulas(doc["cost"])
    sheet = add_sheet(model.book, "Opex")
    model.header(sheet, "Yearly opex", ("Line", "USD per year", "Formula"), (16, 18, 80))
    row = 2
    for row, (line, formula) in enumerate(formulas.items(), start=2):
        write_cell(sheet, row, 0, line)
        model.formula(sheet, row, 1, formula, opex[line])
        model.name(f"opex_{line}_usd_per_year", "Opex", row)
        write_cell(sheet, row, 2, formula[1:], model.formats["note"])
    write_cell(sheet, row + 1, 0, "total", model.formats["header"])
    model.formula(sheet, row + 1, 1, "=" + "+".join(cell(r, 1) for r in range(2, row + 1)), opex["total"])
    model.name("opex_usd_per_year", "Opex", row + 1)


def _capital(category: str) -> str:
    """The capital recovery factor over a class's life (cost/tco.py capital_recovery_factor)."""
    life = f"life_{category}_years"
    return f"IF(discount_rate=0,1/{life},discount_rate/(1-(1+discount_rate)^(-{life})))"


def _economic_rows(cost: dict[str, Any]) -> list[tuple[str, str, str, float, str]]:
    """A year over the economic lives: depreciation, cost of capital, support and licences over the life."""
    categories = [asset["category"] for asset in cost["assets"]]
    economic = cost["economic_usd_per_year"]
    depreciation = "=one_off_usd/life_compute_years+" + "+".join(f"capex_{c}_usd/life_{c}_years" for c in categories)
    capital = (f"=one_off_usd*{_capital('compute')}+" + "+".join(f"capex_{c}_usd*{_capital(c)}" for c in categories)
               + "-economic_depreciation_usd")
    support = (f"=IF(maintenance_fraction_per_year>0,capex_usd*maintenance_fraction_per_year,"
               f"{_support(categories, 'life_{c}_years')})")
    total = ("=economic_depreciation_usd+economic_capital_usd+opex_electricity_usd_per_year+"
             "opex_colocation_usd_per_year+economic_support_usd+opex_staff_usd_per_year+economic_software_usd")
    return [
        ("Economic: depreciation a year", "economic_depreciation_usd", depreciation, economic["depreciation"], "usd"),
        ("Economic: cost of capital a year", "economic_capital_usd", capital, economic["cost_of_capital"], "usd"),
        ("Economic: support a year over the life", "economic_support_usd", support, economic["support"], "usd"),
        ("Economic: licences a year over the life", "economic_software_usd",
         f"={_software(cost, 'life_compute_years')}", economic["software"], "usd"),
        ("Economic cost a year", "economic_usd_per_year", total, sum(economic.values()), "usd"),
        ("Cost per delivered GPU-hour (economic)", "economic_cost_per_gpu_hour_usd",
         "=economic_usd_per_year/delivered_gpu_hours_per_year", cost["economic_cost_per_gpu_hour_usd"], "rate"),
    ]


def _tco_rows(cost: dict[str, Any]) -> list[tuple[str, str, str, float, str]]:
    npv = ("=upfront_usd+IF(discount_rate=0,opex_usd_per_year*horizon_years,"
           "opex_usd_per_year*(1-(1+discount_rate)^(-horizon_years))/discount_rate)"
           "-residual_usd/(1+discount_rate)^horizon_years")
    residual = "=resale_fraction*(" + "+".join(
        f"capex_{a['category']}_usd*MAX(0,1-horizon_years/life_{a['category']}_years)" for a in cost["assets"]) + ")"
    return [
        ("Capex", "", "=capex_usd", cost["capex_usd"], "usd"),
        ("One-off", "", "=one_off_usd", cost["one_off_usd"], "usd"),
        ("Upfront", "", "=upfront_usd", cost["capex_usd"] + cost["one_off_usd"], "usd"),
        ("Opex per year", "", "=opex_usd_per_year", cost["opex_usd_per_year"]["total"], "usd"),
        ("Residual value at the horizon", "residual_usd", residual, cost["residual_usd"], "usd"),
        ("TCO", "tco_usd", "=upfront_usd+horizon_years*opex_usd_per_year-residual_usd", cost["tco_usd"], "usd"),
        ("NPV of the cost", "npv_usd", npv, cost["npv_usd"], "usd"),
        ("Delivered GPU-hours per year", "delivered_gpu_hours_per_year", "=num_gpus*hours_per_year*utilization",
         cost["delivered_gpu_hours_per_year"], "number"),
        ("Cost per delivered GPU-hour", "cost_per_gpu_hour_usd",
         "=tco_usd/(delivered_gpu_hours_per_year*horizon_years)", cost["cost_per_gpu_hour_usd"], "rate"),
        ("Capex per GPU (fully loaded)", "", "=upfront_usd/num_gpus", cost["capex_per_gpu_usd"], "usd"),
        ("TCO per GPU", "", "=tco_usd/num_gpus", cost["tco_per_gpu_usd"], "usd"),
        *_economic_rows(cost),
    ]


def write_tco(model: Model, doc: dict[str, Any]) -> None:
    """TCO and NPV over the horizon, cost per delivered GPU-hour, per-GPU figures."""
    sheet = add_sheet(model.book, "TCO")
    model.header(sheet, "TCO and NPV over the horizon", ("Figure", "Value", "Formula"), (32, 20, 100))
    for row, (label, name, formula, value, fmt) in enumerate(_tco_rows(doc["cost"]), start=2):
        write_cell(sheet, row, 0, label)
        model.formula(sheet, row, 1, formula, value, fmt)
        write_cell(sheet, row, 2, formula[1:], model.formats["note"])
        if name:
            model.name(name, "TCO", row)


def _capex_chart(model: Model, rows: tuple[int, int]) -> None:
    chart = model.book.add_chart({"type": "column"})
    chart.add_series({"name": "Capex (USD)", "categories": ["BoM", rows[0], 0, rows[1], 0],
                      "values": ["BoM", rows[0], 6, rows[1], 6]})
    chart.set_title({"name": "Capex by category"})
    chart.set_legend({"none": True})
    model.book.get_worksheet_by_name("TCO").insert_chart("E3", chart)


def xlsx_bytes(doc: dict[str, Any]) -> bytes:
    """The plan document (report/export.py) as the live workbook."""
    model = Model()
    write_inputs(model, doc)
    category_rows = write_bom(model, doc)
    write_opex(model, doc)
    write_tco(model, doc)
    write_cash_sheets(model, doc)
    if doc.get("training") and doc["training"].get("feasible"):
        write_workload(model, doc)
    _capex_chart(model, category_rows)
    return finish(model.book, model.buffer)
