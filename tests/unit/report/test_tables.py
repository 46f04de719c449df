"""The plan as finance tables: CSV sections, Markdown and XLSX read back with openpyxl."""

import io

import pytest

from clusterplan.report.export import plan_document
from clusterplan.report.tables import plan_tables, read_csv, write_csv, write_markdown


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
    assert f"| TCO over 3 years | {doc['cost']['tco_usd']:,.0f} | USD |" in text
