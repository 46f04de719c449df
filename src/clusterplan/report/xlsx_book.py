"""XLSX workbooks on XlsxWriter: the shared formats, a row-by-row sheet writer, and plain tables as sheets.

XlsxWriter is imported inside ``new_workbook`` so that ``clusterplan plan`` starts without it
(docs/report.md, "XLSX"). A workbook is written in memory with a fixed creation date, so the same
document gives the same bytes.
"""

from __future__ import annotations

import datetime
import io
import re
from typing import Any

from clusterplan.report.tables import Cell, Table

_FIXED_DATE = datetime.datetime(2000, 1, 1)
_SHEET_NAME = re.compile(r"[\[\]:*?/\\]")
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")

FORMATS = {
    "header": {"bold": True, "bottom": 1},
    "title": {"bold": True, "font_size": 13},
    "usd": {"num_format": "#,##0.00"},
    "usd0": {"num_format": "#,##0"},
    "number": {"num_format": "#,##0.###"},
    "ratio": {"num_format": "0.00%"},
    "rate": {"num_format": "0.0000"},
    "input": {"bg_color": "#FFF2CC", "num_format": "#,##0.#####"},
    "note": {"italic": True, "font_color": "#595959"},
}


def new_workbook() -> tuple[Any, io.BytesIO, dict[str, Any]]:
    """An in-memory XlsxWriter workbook, its buffer and the named formats."""
    import xlsxwriter

    buffer = io.BytesIO()
    book = xlsxwriter.Workbook(buffer, {"in_memory": True, "strings_to_numbers": False,
                                        "strings_to_formulas": False, "strings_to_urls": False})
    book.set_properties({"created": _FIXED_DATE, "title": "clusterplan"})
    return book, buffer, {name: book.add_format(spec) for name, spec in FORMATS.items()}


def _exact_worksheet_class() -> type:
    """XlsxWriter's worksheet writing each number as its shortest round-trip repr.

    XlsxWriter writes numbers with 16 significant digits (Excel's display precision); a double can need 17,
    and a price of 5.5040000000000004 would come back 5.504. The override is of one small private method
    (``XMLwriter._xml_number_element``, unchanged since XlsxWriter 1.x); tests/unit/report/test_xlsx.py pins
    the round trip.
    """
    from xlsxwriter.worksheet import Worksheet

    class ExactWorksheet(Worksheet):
        def _xml_number_element(self, number, attributes=()) -> None:
            attr = "".join(f' {key}="{self._escape_attributes(value)}"' for key, value in attributes)
            self.fh.write(f"<c{attr}><v>{float(number)!r}</v></c>")

    return ExactWorksheet


def add_sheet(book: Any, name: str) -> Any:
    """A new worksheet of ``book`` that keeps every number to the last bit."""
    return book.add_worksheet(sheet_name(name), worksheet_class=_exact_worksheet_class())


def finish(book: Any, buffer: io.BytesIO) -> bytes:
    book.close()
    return buffer.getvalue()


def sheet_name(name: str) -> str:
    """``name`` as a valid sheet name: no []:*?/\\, at most 31 characters."""
    return _SHEET_NAME.sub(" ", name)[:31] or "Sheet"


def text(value: str) -> str:
    return _CONTROL.sub("", value)


def write_cell(sheet: Any, row: int, column: int, value: Cell, fmt: Any = None) -> None:
    """A value as its type: numbers stay numbers, None an empty cell, text without control characters."""
    if value is None:
        sheet.write_blank(row, column, None, fmt)
    elif isinstance(value, bool):
        sheet.write_boolean(row, column, value, fmt)
    elif isinstance(value, (int, float)):
        sheet.write_number(row, column, value, fmt)
    else:
        sheet.write_string(row, column, text(str(value)), fmt)


def write_table(book: Any, formats: dict[str, Any], table: Table) -> Any:
    """``table`` as one sheet: a bold frozen header row, then its rows as values."""
    sheet = add_sheet(book, table.name)
    for column, label in enumerate(table.columns):
        sheet.write_string(0, column, text(label), formats["header"])
        sheet.set_column(column, column, max(12, min(48, len(label) + 2)))
    for row, cells in enumerate(table.rows, start=1):
        for column, value in enumerate(cells):
            numeric = isinstance(value, float) and not isinstance(value, bool)
            write_cell(sheet, row, column, value, formats["number"] if numeric else None)
    sheet.freeze_panes(1, 0)
    return sheet


def tables_xlsx_bytes(tables: tuple[Table, ...]) -> bytes:
    """Plain tables (compare, sensitivity), one sheet each, values only."""
    book, buffer, formats = new_workbook()
    for table in tables:
        write_table(book, formats, table)
    return finish(book, buffer)


def column_letters(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA."""
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


def cell(row: int, column: int, *, absolute: bool = False) -> str:
    """A1 reference of the 0-based (``row``, ``column``)."""
    dollar = "$" if absolute else ""
    return f"{dollar}{column_letters(column)}{dollar}{row + 1}"


def price_name(catalog_id: str, prefix: str = "price") -> str:
    return f"{prefix}_{re.sub(r'[^A-Za-z0-9_]', '_', catalog_id)}"
