"""The fabric drawn as layers of boxes (switch tiers over nodes), an inline SVG like report/svg.py's charts."""

from __future__ import annotations

from collections.abc import Sequence

from clusterplan.report.svg import PALETTE, WIDTH, Mark, esc, figure, mark_attrs, mark_tip


def layered_diagram(title: str, layers: Sequence[tuple[str, Mark]], gaps: Sequence[str], *, chart: str = "",
                    most: int = 8) -> str:
    """Boxes in layers, bottom up, each layer ``(name, count mark)``, every box wired to the layer above.

    A layer of more than ``most`` boxes shows the first ones, an ellipsis and the last; ``gaps[i]``
    labels the links between layer ``i`` and ``i + 1``.
    """
    height = 100 + 92 * (len(layers) - 1)
    left, right = 210.0, WIDTH - 20.0
    rows = []
    for level, (name, mark) in enumerate(layers):
        count = int(mark.value)
        shown = list(range(count)) if count <= most else [*range(most - 2), -1, count - 1]
        y = height - 40 - level * 92
        step = (right - left) / max(len(shown), 1)
        rows.append((name, mark, y, [(left + step * (i + 0.5), box) for i, box in enumerate(shown)]))
    out = []
    for level in range(len(rows) - 1):
        _, _, y0, boxes0 = rows[level]
        _, _, y1, boxes1 = rows[level + 1]
        for x0, a in boxes0:
            for x1, b in boxes1:
                if a >= 0 and b >= 0:
                    out.append(f'<line x1="{x0:.1f}" y1="{y0 - 14:.1f}" x2="{x1:.1f}" y2="{y1 + 14:.1f}" '
                               f'stroke="{PALETTE[0]}" stroke-opacity="0.35"/>')
        out.append(f'<text x="{left - 8:.1f}" y="{(y0 + y1) / 2 + 4:.1f}" text-anchor="end" class="note">'
                   f'{esc(gaps[level])}</text>')
    for level, (name, mark, y, boxes) in enumerate(rows):
        short = name.split(" ")[-1] if " " in name else name
        out.append(f'<text x="{left - 8:.1f}" y="{y + 4:.1f}" text-anchor="end" class="axis"{mark_attrs(mark)}>'
                   f'{esc(name)}{mark_tip(mark)}</text>')
        width = min(64.0, (right - left) / max(len(boxes), 1) - 6)
        colour = PALETTE[level % len(PALETTE)]
        for x, box in boxes:
            if box < 0:
                out.append(f'<text x="{x:.1f}" y="{y + 5:.1f}" text-anchor="middle" class="axis">…</text>')
                continue
            out.append(f'<rect x="{x - width / 2:.1f}" y="{y - 14:.1f}" width="{width:.1f}" height="28" rx="4" '
                       f'fill="{colour}" fill-opacity="0.25" stroke="{colour}">'
                       f'<title>{esc(short)} {box + 1}</title></rect>'
                       f'<text x="{x:.1f}" y="{y + 4:.1f}" text-anchor="middle" class="tick">{box + 1}</text>')
    return figure(title, "".join(out), height=height, chart=chart)
