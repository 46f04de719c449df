"""Where labels go in a chart so that they neither overlap each other nor run out of the picture.

Pure geometry over estimated text widths (the page's font is the reader's system-ui, so widths are
estimated from the character count at a stated average advance, erring wide); report/svg.py draws.
The browser test checks the result with the real font (tests/browser/test_report_scale.py).
"""

from __future__ import annotations

from collections.abc import Sequence

ADVANCE = 0.62   # average advance of a system-ui character, in font sizes (digits 0.55, capitals up to 0.7)


def text_width(text: str, size: float = 11.0) -> float:
    """Estimated width in pixels of ``text`` at ``size`` px."""
    return len(text) * size * ADVANCE


def spread(wanted: Sequence[float], gap: float, low: float, high: float) -> list[float]:
    """Positions as near ``wanted`` as possible, each at least ``gap`` from the next, within [low, high].

    Keeps the input order (sort first); where they cannot all fit, they are packed from ``low``.
    """
    if not wanted:
        return []
    placed = [max(low, wanted[0])]
    for value in wanted[1:]:
        placed.append(max(value, placed[-1] + gap))
    placed[-1] = min(placed[-1], high)
    for i in range(len(placed) - 2, -1, -1):
        placed[i] = min(placed[i], placed[i + 1] - gap)
    shift = low - placed[0]
    return [value + shift for value in placed] if shift > 0 else placed


def rows(spans: Sequence[tuple[float, float]], gap: float = 6.0) -> list[int]:
    """A row for each (start, end) span, the lowest row where it clears every span already there by ``gap``."""
    ends: list[float] = []          # the right end of the last span in each row
    out = []
    for start, end in spans:
        row = next((r for r, right in enumerate(ends) if start >= right + gap), len(ends))
        if row == len(ends):
            ends.append(end)
        else:
            ends[row] = end
        out.append(row)
    return out


def grid(names: Sequence[str], width: float, *, size: float = 11.0, swatch: float = 24.0,
         gap: float = 18.0) -> tuple[int, float]:
    """Columns and column width for a legend of ``names`` laid out across ``width`` pixels."""
    column = swatch + max((text_width(name, size) for name in names), default=0.0) + gap
    columns = max(1, min(len(names), int(width // column)))
    return columns, width / columns if columns > 1 else column


def lifts(spans: Sequence[tuple[float, float, float]]) -> list[float]:
    """How far to raise each label (start, end, baseline y) so that no two label boxes overlap."""
    placed: list[tuple[float, float, float]] = []
    out = []
    for start, end, base in spans:
        lift = 0.0
        while any(start < b_end + 2 and b_start < end + 2 and abs((base - lift) - b_y) < 12
                  for b_start, b_end, b_y in placed):
            lift += 12.0
        placed.append((start, end, base - lift))
        out.append(lift)
    return out
