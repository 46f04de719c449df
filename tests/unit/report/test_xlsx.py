"""The live workbook written from the plan document: sheets, defined names, formulas and their cached values."""

import io

import pytest

from clusterplan.report.export import plan_document
from clusterplan.report.tables import Table
from clusterplan.report.xlsx import xlsx_bytes
from clusterplan.report.xlsx_book import column_letters, tables_xlsx_bytes

openpyxl = pytest.importorskip("openpyxl")
pytest.importorskip("xlsxwriter")


@pytest.fixture(scope="module")
def doc(reference_plan):
    return plan_document(reference_plan)


@pytest.fixture(scope="module")
def data(doc):
    return xlsx_bytes(doc)


def _named(book, name):
    sheet, ref = next(iter(book.defined_names[name].destinations))
    return book[sheet][ref.replace("$", "")]


def test_sheets_and_determinism(doc, data):
    """The sheets in order, no Workload without a workload; the same document gives the same bytes."""
    book = openpyxl.load_workbook(io.BytesIO(data))
    assert book.sheetnames == ["Inputs", "BoM", "Opex", "TCO", "Cloud", "Cash flow", "Break-even"]
    assert data == xlsx_bytes(doc)


def test_costs_are_formulas_over_named_inputs(data):
    """TCO, opex lines and BoM totals are formulas; the inputs are plain numbers behind defined names."""
    book = openpyxl.load_workbook(io.BytesIO(data))
    assert _named(book, "tco_usd").value == "=upfront_usd+horizon_years*opex_usd_per_year-residual_usd"
    # the residual: resale x straight-line book value of each class over its life; support starts at the warranty
    assert _named(book, "residual_usd").value == (
        "=resale_fraction*(capex_compute_usd*MAX(0,1-horizon_years/life_compute_years)"
        "+capex_network_usd*MAX(0,1-horizon_years/life_network_years)"
        "+capex_storage_usd*MAX(0,1-horizon_years/life_storage_years)"
        "+capex_facility_usd*MAX(0,1-horizon_years/life_facility_years))")
    assert _named(book, "support_start_compute_years").value == "=warranty_compute_years"
    assert "support_start_network_years" in _named(book, "opex_support_usd_per_year").value
    assert _named(book, "opex_electricity_usd_per_year").value.startswith("=it_typical_power_kw*pue")
    assert _named(book, "electricity_usd_per_kwh").value == 0.12
    assert book["BoM"]["G3"].value == "=D3*F3" and book["BoM"]["F3"].value == "=price_h100_sxm"
    assert "recomputes" in book["BoM"]["H6"].value   # a fat-tree switch count: a value, and why


def test_cached_values_are_the_documents(doc, data):
    """A viewer that does not recalculate shows the plan's figures."""
    book = openpyxl.load_workbook(io.BytesIO(data), data_only=True)
    cost = doc["cost"]
    assert _named(book, "tco_usd").value == cost["tco_usd"]
    assert _named(book, "npv_usd").value == cost["npv_usd"]
    assert _named(book, "capex_usd").value == cost["capex_usd"]
    months = [row[1] for row in book["Cash flow"].iter_rows(min_row=3, max_row=3 + cost["horizon_months"],
                                                            values_only=True)]
    assert months == pytest.approx(cost["cumulative_usd_by_month"], rel=1e-12)
    breakeven = [row[2] for row in book["Break-even"].iter_rows(min_row=3, values_only=True)]
    assert breakeven == [("never" if c["breakeven_months"] is None else c["breakeven_months"]) for c in doc["cloud"]]


def test_plain_tables_escape_text():
    """Sheet names lose []:*?/\\, text its control characters; numbers and booleans keep their types."""
    table = Table(name="a/b:c", title="t", columns=("x",), rows=(("<b>&\x01</b>",), (True,), (None,), (1.5,)))
    sheet = openpyxl.load_workbook(io.BytesIO(tables_xlsx_bytes((table,)))).active
    assert sheet.title == "a b c" and sheet["A2"].value == "<b>&</b>" and sheet["A3"].value is True
    assert sheet["A5"].value == 1.5 and sheet.freeze_panes == "A2"


def test_column_letters():
    """0 -> A, 25 -> Z, 26 -> AA, 701 -> ZZ."""
    assert [column_letters(i) for i in (0, 25, 26, 701)] == ["A", "Z", "AA", "ZZ"]


def test_numbers_keep_every_bit():
    """A double that needs 17 significant digits (XlsxWriter writes 16) reads back equal."""
    values = (5.5040000000000004, 0.1 + 0.2, 1e-300, 2.0**53 + 2, 18)
    table = Table(name="n", title="t", columns=("x",), rows=tuple((v,) for v in values))
    sheet = openpyxl.load_workbook(io.BytesIO(tables_xlsx_bytes((table,)))).active
    assert tuple(row[0] for row in sheet.iter_rows(min_row=2, values_only=True)) == values
