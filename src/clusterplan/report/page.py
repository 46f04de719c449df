"""The page every HTML view shares: styles, the security policy, number cells read by JSON Pointer.

Every number shown is read from the document through a JSON Pointer, and the
element that shows it carries ``data-pointer`` and ``data-value`` (the
number's repr), so a test can check the page against the JSON. User text
(scenario name, notes, file names, catalog text) goes through ``esc``. The
Content-Security-Policy forbids scripts and every request the page could make.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from clusterplan.report.figures import money, resolve
from clusterplan.report.svg import Mark, esc
from clusterplan.schema import FROZEN


@dataclass(**FROZEN)
class Part:
    """One section of a page: its anchor, its heading and its HTML body."""

    anchor: str
    title: str
    body: str


CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'"
CSS = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#222;
margin:0 auto;max-width:1040px;padding:24px}
h1{font-size:24px;margin:0 0 4px}h2{font-size:19px;margin:32px 0 8px;border-bottom:1px solid #ddd;padding-bottom:4px}
h3{font-size:15px;margin:18px 0 6px}.sub{color:#555;margin:0 0 12px}.notes{white-space:pre-wrap;background:#f6f6f6;
padding:8px 12px;border-radius:4px}table{border-collapse:collapse;margin:8px 0 12px;width:100%}
th,td{padding:3px 8px;border-bottom:1px solid #eee;text-align:left;vertical-align:top}th{background:#f3f3f3}
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums;white-space:nowrap}tr.total td{font-weight:600}
tr.sub td{font-style:italic;color:#444}.cards{display:grid;grid-template-columns:repeat(auto-fill,minmax(220px,1fr));
gap:10px}.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px}.card .k{color:#555;font-size:12px}
.card .v{font-size:20px;font-weight:600}figure.chart{margin:10px 0}svg{max-width:100%;height:auto;
font-family:inherit}svg .chart-title{font-size:15px;font-weight:600;fill:#222}svg .tick{font-size:11px;fill:#444}
svg .axis{font-size:12px;fill:#222}svg .note{font-size:11px;fill:#222;paint-order:stroke;stroke:#fff;stroke-width:3px;
stroke-linejoin:round}svg .inside{font-size:11px;fill:#fff}svg rect:hover,svg circle:hover{opacity:.75}
ul.warnings li{margin:4px 0}.muted{color:#666}details summary{cursor:pointer;color:#444}
nav a{margin-right:10px;color:#2a5db0}.nowrap{white-space:nowrap}.wide{overflow-x:auto}th,th.num{white-space:normal;overflow-wrap:normal;word-break:keep-all;hyphens:manual}
td .delta{display:block;font-size:12px;color:#555}td .delta::before{content:"Δ "}
"""


def td(doc: dict, path: str, fmt: Callable[[Any], str] = money) -> str:
    """A number cell read from the document at ``path``."""
    value = resolve(doc, path)
    if value is None:
        return f'<td class="num" data-pointer="{esc(path)}" data-value="None">{esc(fmt(value))}</td>'
    exact = f"{value:,.6g}" if isinstance(value, float) and abs(value) < 1e4 else f"{value:,.2f}"
    return (f'<td class="num" data-pointer="{esc(path)}" data-value="{value!r}" title="{esc(exact)}">'
            f'{esc(fmt(value))}</td>')


def mark(doc: dict, path: str, tip: str, fmt: Callable[[Any], str] = money) -> Mark:
    value = resolve(doc, path)
    return Mark(value=value, pointer=path, tip=f"{tip}: {fmt(value)}")


def table(headers: Sequence[str], rows: Sequence[str], *, numeric: Sequence[int] = ()) -> str:
    """Rows are ready ``<tr>`` strings; ``headers`` are escaped here."""
    head = "".join(f'<th class="{"num" if i in numeric else ""}">{esc(h)}</th>' for i, h in enumerate(headers))
    # a table wider than the page scrolls inside its own box: the page never gets wider than the window
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table></div>'


def section(anchor: str, title: str, body: str) -> Part:
    return Part(anchor=anchor, title=title, body=body)


def sections(parts: Sequence[Part]) -> str:
    """Each part as a <section> with its heading: the page's body, and the live page's fragment (serve/)."""
    return "".join(f'<section id="{esc(p.anchor)}"><h2>{esc(p.title)}</h2>{p.body}</section>' for p in parts)


def page(title: str, subtitle: str, parts: Sequence[Part], *, notes: str = "") -> str:
    """A whole HTML document: header, a contents line, then each part as a <section>."""
    links = "".join(f'<a href="#{esc(p.anchor)}">{esc(p.title)}</a>' for p in parts)
    body = sections(parts)
    notes_html = f'<div class="notes">{esc(notes)}</div>' if notes else ""
    return (f'<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
            f'<meta http-equiv="Content-Security-Policy" content="{esc(CSP)}">'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">'
            f'<title>{esc(title)}</title><style>{CSS}</style></head><body>'
            f'<header><h1>{esc(title)}</h1><p class="sub">{esc(subtitle)}</p>{notes_html}'
            f'<nav>{links}</nav></header><main>{body}</main></body></html>\n')
