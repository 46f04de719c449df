"""The plan as finance tables: CSV sections, Markdown and XLSX read back with openpyxl."""

import io

import pytest

from clusterplan.report.export import plan_document
from clusterplan.report.tables import plan_tables, read_csv, write_csv, write_markdown
from clusterplan.report.xlsx import _column, xlsx_bytes


@pytest.fixture(scope="module")
def doc(reference_plan):
    return plan_document(reference_plan)


def test_tables_hold_the_document_numbers(doc):
    """BoM totals sum to capex, the cash flow ends at TCO, the cloud rows are the document's offers."""
    tables = {t.name: t for t in plan_tables(doc)}
    bom = tables["BoM"]
    assert sum(row[bom.columns.index("Total (USD)")] for row in bom.rows) == pytest.approx(doc["cost"]["capex_usd"])
    flow = tables["Cash flow"]
    assert flow.rows[-1][-1] == pytest.approx(doc["cost"]["tco_usd"]) and len(flow.rows) == doc["cost"]["years"] + 1
    cloud = tables["Cloud"]
    assert [row[0] for row in cloud.rows] == [c["offer"] for c in doc["cloud"]]
    assert all("(" in column for column in flow.columns[1:])   # units in the headers


def test_csv_sections_read_back(doc):
    """One CSV: title row, header, rows, blank line; numbers are written in full and read back equal."""
    stream = io.StringIO()
    tables = plan_tables(doc)
    write_csv(tables, stream)
    back = read_csv(stream.getvalue())
    assert list(back) == [t.title for t in tables]
    header, rows = back["Bill of materials (capex)"]
    totals = [float(row[header.index("Total (USD)")]) for row in rows]
    assert totals == [line["total_usd"] for line in doc["cost"]["bom"]]
    assert "\r\n\r\n" in stream.getvalue()


def test_markdown_is_pipe_tables(doc):
    """Markdown: a ### title and a pipe table per table, numbers right-aligned, pipes in text escaped."""
    stream = io.StringIO()
    write_markdown(plan_tables(doc), stream, heading="x")
    text = stream.getvalue()
    assert text.startswith("## x") and text.count("### ") == 5 and "---:" in text
    assert "| TCO over 3 years | 12,290,073 | USD |" in text


def test_xlsx_opens_in_openpyxl(doc):
    """Every table is a sheet with its header and numbers as numbers; the bytes are deterministic."""
    openpyxl = pytest.importorskip("openpyxl")
    tables = plan_tables(doc)
    data = xlsx_bytes(tables)
    assert data == xlsx_bytes(tables)
    book = openpyxl.load_workbook(io.BytesIO(data))
    assert book.sheetnames == [t.name for t in tables]
    sheet = book["BoM"]
    header = [cell.value for cell in sheet[1]]
    assert tuple(header) == tables[1].columns
    totals = [row[header.index("Total (USD)")] for row in sheet.iter_rows(min_row=2, values_only=True)]
    assert totals == [line["total_usd"] for line in doc["cost"]["bom"]]
    assert sheet.freeze_panes == "A2"


def test_xlsx_text_is_escaped_and_control_characters_dropped():
    """Markup and control characters in text survive as text."""
    openpyxl = pytest.importorskip("openpyxl")
    from clusterplan.report.tables import Table

    table = Table(name="a/b:c", title="t", columns=("x",), rows=(("<b>&\x01</b>",), (True,), (None,)))
    sheet = openpyxl.load_workbook(io.BytesIO(xlsx_bytes((table,)))).active
    assert sheet.title == "a b c" and sheet["A2"].value == "<b>&</b>" and sheet["A3"].value is True


def test_column_names():
    """0 -> A, 25 -> Z, 26 -> AA, 701 -> ZZ."""
    assert [_column(i) for i in (0, 25, 26, 701)] == ["A", "Z", "AA", "ZZ"]


def test_tables_read_the_derived_figures_from_the_document(doc):
    """The summary is the figures table's export rows; vs own and the year-end cash are read, not worked out."""
    from clusterplan.report.figures import TABLES, shown

    summary = {t.name: t for t in plan_tables(doc)}["Summary"]
    assert [row[0] for row in summary.rows] == [h.title(TABLES, doc) for h in shown(TABLES)]
    assert [row[2] for row in summary.rows] == [h.unit for h in shown(TABLES)]
    cost = {**doc["cost"], "cumulative_usd_by_year": [float(y) for y in range(doc["cost"]["years"] + 1)]}
    changed = {**doc, "cost": cost, "cloud": [{**offer, "vs_own": 9.87} for offer in doc["cloud"]]}
    tables = {t.name: t for t in plan_tables(changed)}
    assert [row[-1] for row in tables["Cash flow"].rows] == cost["cumulative_usd_by_year"]
    assert {row[tables["Cloud"].columns.index("vs own (ratio)")] for row in tables["Cloud"].rows} == {9.87}
