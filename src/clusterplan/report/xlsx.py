"""A minimal XLSX (Office Open XML SpreadsheetML) writer on the standard library.

One sheet per table: a bold, frozen header row, numbers as numbers (with a
thousands format), text as inline strings, booleans as booleans. The zip is
deterministic (fixed timestamps, fixed order), so the same tables give the
same bytes.
"""

from __future__ import annotations

import io
import re
import zipfile
from xml.sax.saxutils import escape, quoteattr

from clusterplan.report.tables import Cell, Table

_MAIN = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
_REL = "http://schemas.openxmlformats.org/officeDocument/2006/relationships"
_PACKAGE_REL = "http://schemas.openxmlformats.org/package/2006/relationships"
_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml"
_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")
# cellXfs: 0 default, 1 bold header, 2 "#,##0.00" (built-in 4), 3 "#,##0" (built-in 3)
_STYLES = (f'{_HEAD}<styleSheet xmlns="{_MAIN}">'
           '<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font>'
           '<font><b/><sz val="11"/><name val="Calibri"/></font></fonts>'
           '<fills count="2"><fill><patternFill patternType="none"/></fill>'
           '<fill><patternFill patternType="gray125"/></fill></fills>'
           '<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>'
           '<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>'
           '<cellXfs count="4"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/>'
           '<xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/>'
           '<xf numFmtId="4" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/>'
           '<xf numFmtId="3" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/></cellXfs>'
           '<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>'
           '</styleSheet>')


def _column(index: int) -> str:
    """0 -> A, 25 -> Z, 26 -> AA."""
    name = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        name = chr(65 + rest) + name
    return name


def _text(value: str) -> str:
    return escape(_CONTROL.sub("", value))


def _cell(ref: str, value: Cell, *, header: bool = False) -> str:
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return f'<c r="{ref}" t="b"><v>{int(value)}</v></c>'
    if isinstance(value, int):
        return f'<c r="{ref}" s="3"><v>{value}</v></c>'
    if isinstance(value, float):
        return f'<c r="{ref}" s="2"><v>{value!r}</v></c>'
    style = ' s="1"' if header else ""
    return f'<c r="{ref}" t="inlineStr"{style}><is><t xml:space="preserve">{_text(str(value))}</t></is></c>'


def _width(table: Table, index: int) -> float:
    cells = [table.columns[index], *(row[index] for row in table.rows)]
    longest = max(len(f"{c:,.2f}" if isinstance(c, float) else str(c)) for c in cells if c is not None)
    return min(max(longest + 2, 8), 60)


def _sheet(table: Table) -> str:
    rows = [table.columns, *table.rows]
    body = "".join(
        f'<row r="{r + 1}">' + "".join(_cell(f"{_column(c)}{r + 1}", value, header=r == 0)
                                       for c, value in enumerate(row)) + "</row>"
        for r, row in enumerate(rows))
    cols = "".join(f'<col min="{i + 1}" max="{i + 1}" width="{_width(table, i):g}" customWidth="1"/>'
                   for i in range(len(table.columns)))
    return (f'{_HEAD}<worksheet xmlns="{_MAIN}" xmlns:r="{_REL}">'
            '<sheetViews><sheetView workbookViewId="0">'
            '<pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews>'
            f'<cols>{cols}</cols><sheetData>{body}</sheetData></worksheet>')


def _sheet_name(name: str) -> str:
    return re.sub(r"[\[\]:*?/\\]", " ", name)[:31]


def xlsx_bytes(tables: tuple[Table, ...]) -> bytes:
    """The workbook as bytes: one sheet per table, in order."""
    n = len(tables)
    content_types = (f'{_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
                     '<Default Extension="rels" '
                     'ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
                     '<Default Extension="xml" ContentType="application/xml"/>'
                     f'<Override PartName="/xl/workbook.xml" ContentType="{_TYPE}.sheet.main+xml"/>'
                     f'<Override PartName="/xl/styles.xml" ContentType="{_TYPE}.styles+xml"/>'
                     + "".join(f'<Override PartName="/xl/worksheets/sheet{i + 1}.xml" '
                               f'ContentType="{_TYPE}.worksheet+xml"/>' for i in range(n))
                     + "</Types>")
    root_rels = (f'{_HEAD}<Relationships xmlns="{_PACKAGE_REL}"><Relationship Id="rId1" '
                 f'Type="{_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>')
    sheets = "".join(f'<sheet name={quoteattr(_sheet_name(t.name))} sheetId="{i + 1}" r:id="rId{i + 1}"/>'
                     for i, t in enumerate(tables))
    workbook = f'{_HEAD}<workbook xmlns="{_MAIN}" xmlns:r="{_REL}"><sheets>{sheets}</sheets></workbook>'
    workbook_rels = (f'{_HEAD}<Relationships xmlns="{_PACKAGE_REL}">'
                     + "".join(f'<Relationship Id="rId{i + 1}" Type="{_REL}/worksheet" '
                               f'Target="worksheets/sheet{i + 1}.xml"/>' for i in range(n))
                     + f'<Relationship Id="rId{n + 1}" Type="{_REL}/styles" Target="styles.xml"/>'
                     + "</Relationships>")
    parts = [("[Content_Types].xml", content_types), ("_rels/.rels", root_rels), ("xl/workbook.xml", workbook),
             ("xl/_rels/workbook.xml.rels", workbook_rels), ("xl/styles.xml", _STYLES),
             *((f"xl/worksheets/sheet{i + 1}.xml", _sheet(t)) for i, t in enumerate(tables))]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, text in parts:
            info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text.encode("utf-8"))
    return buffer.getvalue()
