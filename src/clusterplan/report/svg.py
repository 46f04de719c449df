"""Inline SVG charts, drawn here: no plotting library, no script, deterministic output.

Every chart has a title, labelled axes with units and a legend where it has
several series. Every mark that shows a number from the report document
carries ``data-pointer`` (a JSON Pointer into the document) and
``data-value`` (the number, as Python's repr), so a test can check that the
picture and the JSON agree; a ``<title>`` child gives the hover tooltip.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from html import escape

from clusterplan.report.labels import grid, lifts, rows, spread, text_width
from clusterplan.schema import FROZEN

PALETTE = ("#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
           "#9c755f", "#bab0ac", "#1f77b4", "#8c564b")
INK, GRID, MUTED = "#222", "#e3e3e3", "#666"
WIDTH, HEIGHT = 760, 380
Format = Callable[[float], str]


def esc(text: object) -> str:
    """User or catalog text, safe inside an element or a quoted attribute."""
    return escape(str(text), quote=True)


@dataclass(**FROZEN)
class Mark:
    """One number drawn: its value, where it lives in the document, and its tooltip."""

    value: float
    pointer: str = ""
    tip: str = ""


@dataclass(**FROZEN)
class Series:
    name: str
    points: tuple[tuple[float, Mark], ...]        # (x, y mark)
    kind: str = "line"                             # "line", "points" or "step"
    colour: str = ""
    dashed: bool = False
    width: float = 2.0
    label: str = ""                                # drawn at the line's right end (direct labelling)
    legend: bool = True                            # listed in the legend


@dataclass(**FROZEN)
class Axis:
    low: float
    high: float
    ticks: tuple[float, ...]
    label: str
    format: Format
    log: bool = False

    def at(self, value: float, start: float, end: float) -> float:
        """Pixel of ``value`` between ``start`` (low) and ``end`` (high)."""
        if self.log:
            low, high, value = math.log2(self.low), math.log2(self.high), math.log2(max(value, self.low))
        else:
            low, high = self.low, self.high
        span = (high - low) or 1.0
        return start + (value - low) / span * (end - start)


def mark_attrs(mark: Mark) -> str:
    if not mark.pointer:
        return ""
    return f' data-pointer="{esc(mark.pointer)}" data-value="{mark.value!r}"'


def mark_tip(mark: Mark) -> str:
    return f"<title>{esc(mark.tip)}</title>" if mark.tip else ""


def nice_step(span: float, count: int = 5) -> float:
    raw = span / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw)) if raw > 0 else 1.0
    for factor in (1, 2, 2.5, 5, 10):
        if factor * magnitude >= raw:
            return factor * magnitude
    return 10 * magnitude


def linear_axis(values: Sequence[float], label: str, fmt: Format, *, zero: bool = True, count: int = 5,
                unit: float = 1.0) -> Axis:
    """An axis over ``values`` with round ticks (from zero unless ``zero`` is False).

    The ticks are round in ``unit`` (2**30 for bytes shown in GiB, 86400 for seconds shown in days);
    the axis, its ticks and ``fmt`` stay in the values' own unit.
    """
    finite = [v / unit for v in values if v is not None and math.isfinite(v)] or [0.0]
    low, high = min(finite), max(finite)
    if zero:
        low, high = min(low, 0.0), max(high, 0.0)
    if high == low:
        high = low + (abs(low) or 1.0)
    step = nice_step(high - low, count)
    start, stop = math.floor(low / step) * step, math.ceil(high / step) * step
    ticks = tuple((start + i * step) * unit for i in range(int(round((stop - start) / step)) + 1))
    return Axis(low=start * unit, high=stop * unit, ticks=ticks, label=label, format=fmt)


def log2_axis(values: Sequence[float], label: str, fmt: Format, *, count: int = 8) -> Axis:
    """A base-2 logarithmic axis with ticks at powers of two."""
    positive = [v for v in values if v and v > 0] or [1.0]
    low, high = math.floor(math.log2(min(positive))), math.ceil(math.log2(max(positive)))
    high = max(high, low + 1)
    step = max(1, math.ceil((high - low) / count))
    return Axis(low=2.0 ** low, high=2.0 ** high, ticks=tuple(2.0 ** e for e in range(low, high + 1, step)),
                label=label, format=fmt, log=True)


def usd(value: float) -> str:
    """"$1.2M", "$350K", "$4.57" for axes and labels."""
    sign, value = ("-" if value < 0 else ""), abs(value)
    for limit, suffix in ((1e9, "B"), (1e6, "M"), (1e3, "K")):
        if value >= limit:
            return f"{sign}${value / limit:,.4g}{suffix}"
    return f"{sign}${value:,.2f}" if value < 100 and value != int(value) else f"{sign}${value:,.0f}"


def number(value: float) -> str:
    return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"


def binary_size(value: float) -> str:
    for suffix, scale in (("G", 2**30), ("M", 2**20), ("K", 2**10)):
        if value >= scale:
            return f"{value / scale:g}{suffix}"
    return f"{value:g}"


def figure(title: str, body: str, *, width: int = WIDTH, height: int = HEIGHT, chart: str = "") -> str:
    """An SVG chart in a <figure>, titled inside the picture (for screenshots) and for screen readers."""
    return (f'<figure class="chart" data-chart="{esc(chart)}"><svg viewBox="0 0 {width} {height}" '
            f'width="{width}" height="{height}" role="img" aria-label="{esc(title)}">'
            f'<title>{esc(title)}</title>'
            f'<text x="12" y="22" class="chart-title">{esc(title)}</text>{body}</svg></figure>')


def _frame(x: Axis, y: Axis, box: tuple[float, float, float, float], *, x_categories: Sequence[str] = ()) -> str:
    left, top, right, bottom = box
    out = []
    for tick in y.ticks:
        py = y.at(tick, bottom, top)
        out.append(f'<line x1="{left:.1f}" y1="{py:.1f}" x2="{right:.1f}" y2="{py:.1f}" stroke="{GRID}"/>'
                   f'<text x="{left - 6:.1f}" y="{py + 4:.1f}" text-anchor="end" class="tick">'
                   f'{esc(y.format(tick))}</text>')
    if not x_categories:
        for tick in x.ticks:
            px = x.at(tick, left, right)
            out.append(f'<line x1="{px:.1f}" y1="{bottom:.1f}" x2="{px:.1f}" y2="{bottom + 4:.1f}" stroke="{MUTED}"/>'
                       f'<text x="{px:.1f}" y="{bottom + 17:.1f}" text-anchor="middle" class="tick">'
                       f'{esc(x.format(tick))}</text>')
    out.append(f'<line x1="{left:.1f}" y1="{bottom:.1f}" x2="{right:.1f}" y2="{bottom:.1f}" stroke="{MUTED}"/>'
               f'<line x1="{left:.1f}" y1="{top:.1f}" x2="{left:.1f}" y2="{bottom:.1f}" stroke="{MUTED}"/>')
    out.append(f'<text x="{(left + right) / 2:.1f}" y="{bottom + 38:.1f}" text-anchor="middle" class="axis">'
               f'{esc(x.label)}</text>')
    out.append(f'<text transform="translate({left - 62:.1f},{(top + bottom) / 2:.1f}) rotate(-90)" '
               f'text-anchor="middle" class="axis">{esc(y.label)}</text>')
    return "".join(out)


LEGEND_ROW = 17


def _legend(entries: Sequence[tuple[str, str, bool]], x: float, y: float, width: float) -> tuple[str, float]:
    """(name, colour, dashed) entries in as many columns as fit ``width`` from (x, y); the svg and its height.

    A name is shortened (whole in its tooltip) only where it is wider than the whole width.
    """
    if not entries:
        return "", 0.0
    columns, column = grid([name for name, _, _ in entries], width)
    out = []
    room = int((min(column, width) - 30) / text_width("x"))
    for i, (name, colour, dashed) in enumerate(entries):
        px, py = x + (i % columns) * column, y + (i // columns) * LEGEND_ROW
        dash = ' stroke-dasharray="5 3"' if dashed else ""
        short = name if len(name) <= room else name[:room - 1] + "…"
        out.append(f'<g class="legend"><line x1="{px:.1f}" y1="{py:.1f}" x2="{px + 18:.1f}" y2="{py:.1f}" '
                   f'stroke="{colour}" stroke-width="3"{dash}/><text x="{px + 24:.1f}" y="{py + 4:.1f}" '
                   f'class="tick">{esc(short)}<title>{esc(name)}</title></text></g>')
    return "".join(out), LEGEND_ROW * math.ceil(len(entries) / columns)


def _end_labels(ends: Sequence[tuple[float, float, str, str]], right: float, top: float, bottom: float) -> str:
    """Each (x, y, text, colour) written right of ``right``, spread so no two overlap, tied to its line's end."""
    ordered = sorted(ends, key=lambda end: end[1])
    placed = spread([y for _, y, _, _ in ordered], 13.0, top, bottom)
    out = []
    for (px, py, text, colour), ly in zip(ordered, placed):
        out.append(f'<g class="end-label"><line x1="{px + 3:.1f}" y1="{py:.1f}" x2="{right + 8:.1f}" y2="{ly:.1f}" '
                   f'stroke="{colour}" stroke-width="1"/><text x="{right + 11:.1f}" y="{ly + 4:.1f}" class="note" '
                   f'fill="{colour}">{esc(text)}</text></g>')
    return "".join(out)


def _markers(markers, x: Axis, y: Axis, box: tuple[float, float, float, float]) -> str:
    """Labelled circles (x, y mark, label); a label that would overlap an earlier one moves up a row, and
    markers at one point with one label (two offers breaking even in one month) share it."""
    left, top, right, bottom = box
    out, spans, seen = [], [], set()
    for px, mark, label in markers:
        cx, cy = x.at(px, left, right), y.at(mark.value, bottom, top)
        # the label reads leftwards from a marker in the right quarter, so it stays inside the picture
        leftwards = cx > right - (right - left) / 4
        start = cx - 7 - text_width(label) if leftwards else cx + 7
        shown = (round(cx, 1), round(cy, 1), label) not in seen
        seen.add((round(cx, 1), round(cy, 1), label))
        spans.append((start, start + text_width(label), cx, cy, leftwards, shown, label,
                      Mark(value=px, pointer=mark.pointer, tip=mark.tip)))   # the circle carries the x (a month)
    lifted = iter(lifts([(s[0], s[1], s[3]) for s in spans if s[5]]))
    for _, _, cx, cy, leftwards, shown, label, mark in spans:
        side = f'x="{cx - 7:.1f}" text-anchor="end"' if leftwards else f'x="{cx + 7:.1f}"'
        text = f'<text {side} y="{cy - 7 - next(lifted):.1f}" class="note">{esc(label)}</text>' if shown else ""
        out.append(f'<g class="marker"><circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="none" stroke="{INK}" '
                   f'stroke-width="1.5"{mark_attrs(mark)}>{mark_tip(mark)}</circle>{text}</g>')
    return "".join(out)


def line_chart(title: str, series: Sequence[Series], x: Axis, y: Axis, *, chart: str = "",
               markers: Sequence[tuple[float, Mark, str]] = (), legend: bool = True,
               more: Sequence[tuple[str, str, bool]] = ()) -> str:
    """Lines (or points) over two axes; ``markers`` are labelled dots (x, y mark, label).

    A series with a ``label`` is named at its right end; the legend below the plot lists the others
    (with ``legend``), then ``more`` entries (name, colour, dashed). A point whose value is None is
    not drawn and breaks its line: the gap shows it.
    """
    labelled = any(line.label for line in series)
    room = max((text_width(line.label) for line in series if line.label), default=0.0)
    box = (84.0, 40.0, WIDTH - (room + 24.0 if labelled else 20.0), HEIGHT - 52.0)
    left, top, right, bottom = box
    out, ends = [_frame(x, y, box)], []
    for index, line in enumerate(series):
        colour = line.colour or PALETTE[index % len(PALETTE)]
        coords = [(x.at(px, left, right), y.at(mark.value, bottom, top), mark) if mark.value is not None else None
                  for px, mark in line.points]
        if line.kind in ("line", "step"):
            dash = ' stroke-dasharray="6 4"' if line.dashed else ""
            path = " ".join(f"{'M' if i == 0 or coords[i - 1] is None else 'L'}{c[0]:.1f},{c[1]:.1f}"
                            for i, c in enumerate(coords) if c is not None)
            if "L" in path:
                out.append(f'<path d="{path}" fill="none" stroke="{colour}" stroke-width="{line.width}"{dash}>'
                           f'<title>{esc(line.name)}</title></path>')
        coords = [c for c in coords if c is not None]
        radius = 3.5 if line.kind == "points" else 2.0
        for cx, cy, mark in coords:
            if mark.pointer or line.kind == "points":
                fill = "white" if line.kind == "points" else colour
                out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{radius}" fill="{fill}" stroke="{colour}" '
                           f'stroke-width="1.5"{mark_attrs(mark)}>{mark_tip(mark)}</circle>')
        if line.label and coords:
            ends.append((coords[-1][0], coords[-1][1], line.label, colour))
    out.append(_markers(markers, x, y, box))
    out.append(_end_labels(ends, right, top, bottom))
    entries = [(s.name, s.colour or PALETTE[i % len(PALETTE)], s.dashed) for i, s in enumerate(series)
               if s.legend and not s.label] if legend else []
    drawn, height = _legend([*entries, *more], left, HEIGHT - 2, WIDTH - left - 20)
    out.append(drawn)
    return figure(title, "".join(out), height=int(HEIGHT + height + (8 if height else 0)), chart=chart)


def bar_chart(title: str, categories: Sequence[str], series: Sequence[tuple[str, Sequence[Mark]]], y: Axis, *,
              x_label: str, chart: str = "", limit: tuple[float, str] | None = None,
              notes: Sequence[str] = ()) -> str:
    """Vertical bars, stacked when there are several series; ``limit`` draws a labelled line (a budget).

    ``notes`` are written above each bar; where the category names are wider than their slots, only
    every k-th is written (each bar keeps its name in its tooltip).
    """
    box = (84.0, 40.0, WIDTH - 20.0, HEIGHT - 52.0)
    left, top, right, bottom = box
    axis = Axis(low=0, high=max(len(categories), 1), ticks=(), label=x_label, format=str)
    out = [_frame(axis, y, box, x_categories=categories)]
    slot = (right - left) / max(len(categories), 1)
    bar = min(slot * 0.7, 60)
    every = math.ceil((max((text_width(name) for name in categories), default=0.0) + 6) / slot)
    for c, name in enumerate(categories):
        cx = left + slot * (c + 0.5)
        base = 0.0
        for s, (series_name, marks) in enumerate(series):
            mark = marks[c]
            y0, y1 = y.at(base, bottom, top), y.at(base + mark.value, bottom, top)
            out.append(f'<rect x="{cx - bar / 2:.1f}" y="{min(y0, y1):.1f}" width="{bar:.1f}" '
                       f'height="{max(abs(y0 - y1), 0.5):.1f}" fill="{PALETTE[s % len(PALETTE)]}"{mark_attrs(mark)}>'
                       f'{mark_tip(mark)}</rect>')
            base += mark.value
        if c % every == 0:
            out.append(f'<text x="{cx:.1f}" y="{bottom + 17:.1f}" text-anchor="middle" class="tick">'
                       f'{esc(name)}</text>')
        if c < len(notes) and notes[c]:   # inside the bar's top where it is tall enough, else above it
            inside = bottom - y.at(base, bottom, top) > 24 and text_width(notes[c]) < bar - 4
            out.append(f'<text x="{cx:.1f}" y="{y.at(base, bottom, top) + (15 if inside else -5):.1f}" '
                       f'text-anchor="middle" class="{"inside" if inside else "note"}">{esc(notes[c])}</text>')
    if limit is not None:
        py = y.at(limit[0], bottom, top)
        out.append(f'<line x1="{left:.1f}" y1="{py:.1f}" x2="{right:.1f}" y2="{py:.1f}" stroke="{PALETTE[2]}" '
                   f'stroke-width="2" stroke-dasharray="6 4"/><text x="{right - 4:.1f}" y="{py - 6:.1f}" '
                   f'text-anchor="end" class="note">{esc(limit[1])}</text>')
    entries = [(name, PALETTE[i % len(PALETTE)], False) for i, (name, _) in enumerate(series)] if len(series) > 1 else []
    drawn, height = _legend(entries, left, HEIGHT - 2, WIDTH - left - 20)
    out.append(drawn)
    return figure(title, "".join(out), height=int(HEIGHT + height + (8 if height else 0)), chart=chart)


def horizontal_bars(title: str, rows: Sequence[tuple[str, Mark]], x: Axis, *, chart: str = "",
                    label: Format | None = None) -> str:
    """One labelled horizontal bar per row, its value printed at its end (with ``label``, else the axis format)."""
    label = label or x.format
    height = max(140, 70 + 30 * len(rows))
    left, top, right, bottom = 210.0, 40.0, WIDTH - 90.0, height - 44.0
    out = [_frame(x, Axis(low=0, high=1, ticks=(), label="", format=str), (left, top, right, bottom))]
    slot = (bottom - top) / max(len(rows), 1)
    for i, (name, mark) in enumerate(rows):
        cy = top + slot * (i + 0.5)
        x1 = x.at(mark.value, left, right)
        out.append(f'<text x="{left - 8:.1f}" y="{cy + 4:.1f}" text-anchor="end" class="tick">{esc(name)}</text>'
                   f'<rect x="{left:.1f}" y="{cy - slot * 0.35:.1f}" width="{max(x1 - left, 0.5):.1f}" '
                   f'height="{slot * 0.7:.1f}" fill="{PALETTE[i % len(PALETTE)]}"{mark_attrs(mark)}>{mark_tip(mark)}</rect>'
                   f'<text x="{x1 + 6:.1f}" y="{cy + 4:.1f}" class="note">{esc(label(mark.value))}</text>')
    return figure(title, "".join(out), height=int(height), chart=chart)


def tornado(title: str, rows: Sequence[tuple[str, Mark, Mark]], x: Axis, center: float, *,
            chart: str = "") -> str:
    """Bars from ``center`` (the nominal outcome) to each row's outcome with its input low and high."""
    height = max(160, 100 + 26 * len(rows))
    left, top, right, bottom = 250.0, 58.0, WIDTH - 30.0, height - 44.0
    out = [_frame(x, Axis(low=0, high=1, ticks=(), label="", format=str), (left, top, right, bottom))]
    slot = (bottom - top) / max(len(rows), 1)
    cx = x.at(center, left, right)
    for i, (label, low, high) in enumerate(rows):
        cy = top + slot * (i + 0.5)
        out.append(f'<text x="{left - 8:.1f}" y="{cy + 4:.1f}" text-anchor="end" class="tick">{esc(label)}'
                   f'<title>{esc(label)}</title></text>')
        for mark, colour in ((low, PALETTE[0]), (high, PALETTE[1])):
            px = x.at(mark.value, left, right)
            out.append(f'<rect x="{min(px, cx):.1f}" y="{cy - slot * 0.36:.1f}" width="{max(abs(px - cx), 0.5):.1f}" '
                       f'height="{slot * 0.72:.1f}" fill="{colour}" fill-opacity="0.85"{mark_attrs(mark)}>'
                       f'{mark_tip(mark)}</rect>')
    out.append(f'<line x1="{cx:.1f}" y1="{top - 4:.1f}" x2="{cx:.1f}" y2="{bottom:.1f}" stroke="{INK}" '
               f'stroke-width="1.5"/>')
    out.append(_legend([("input at its low end", PALETTE[0], False), ("input at its high end", PALETTE[1], False)],
                       left, 40, right - left)[0])
    return figure(title, "".join(out), height=int(height), chart=chart)


def histogram(title: str, edges: Sequence[float], counts: Sequence[Mark], x: Axis, y: Axis, *, chart: str = "",
              lines: Sequence[tuple[Mark, str]] = ()) -> str:
    """Bars between ``edges``; ``lines`` are labelled verticals (percentiles), labelled above the bars.

    The labels sit in a band between the title and the plot, in as many rows as keep them apart.
    """
    left, right = 84.0, WIDTH - 20.0
    spans = []
    for mark, label in lines:
        px = x.at(mark.value, left, right)
        start = min(max(px - text_width(label) / 2, left - 40), WIDTH - 4 - text_width(label))
        spans.append((start, start + text_width(label)))
    placed = rows(spans)
    band = 14.0 * (max(placed, default=-1) + 1)
    top, bottom = 40.0 + band, HEIGHT - 52.0 + band
    out = [_frame(x, y, (left, top, right, bottom))]
    for i, mark in enumerate(counts):
        x0, x1 = x.at(edges[i], left, right), x.at(edges[i + 1], left, right)
        y1 = y.at(mark.value, bottom, top)
        out.append(f'<rect x="{x0:.1f}" y="{y1:.1f}" width="{max(x1 - x0 - 0.5, 0.5):.1f}" '
                   f'height="{max(bottom - y1, 0.5):.1f}" fill="{PALETTE[0]}"{mark_attrs(mark)}>{mark_tip(mark)}</rect>')
    for (mark, label), (start, _), row in zip(lines, spans, placed):
        px, ly = x.at(mark.value, left, right), top - 4 - 14.0 * (max(placed) - row)
        out.append(f'<line x1="{px:.1f}" y1="{ly + 2:.1f}" x2="{px:.1f}" y2="{bottom:.1f}" stroke="{PALETTE[2]}" '
                   f'stroke-width="2"{mark_attrs(mark)}>{mark_tip(mark)}</line>'
                   f'<text x="{start:.1f}" y="{ly:.1f}" class="note hist-label">{esc(label)}</text>')
    return figure(title, "".join(out), height=int(HEIGHT + band), chart=chart)
