"""HTML for the analysis parts: collectives and sensitivity sections of the report, and the compare page."""

from __future__ import annotations

from typing import Any, TextIO

from clusterplan.report import svg
from clusterplan.report.figures import money, months
from clusterplan.report.page import Part, mark, page, section, table, td
from clusterplan.report.svg import Mark, esc
from clusterplan.report.terminal_analysis import format_delta, format_figure
from clusterplan.units import format_quantity, plural

TOP = 12   # inputs shown in a tornado
METRICS = {"tco_usd": "TCO", "cost_per_gpu_hour_usd": "Cost per delivered GPU-hour", "breakeven_months": "Break-even"}


def _gbps(value: float) -> str:
    return f"{value:,.1f} GB/s"


def collectives(doc: dict) -> Part | None:
    """Predicted busbw against message size per group, with the measured points when there are any."""
    groups = doc.get("collectives") or []
    if not groups:
        return None
    series, rows, sizes, values = [], [], [], []
    for k, group_doc in enumerate(groups):
        group = group_doc["group"]
        name = (f"{group_doc['op']} predicted, {group['num_gpus']:,} GPUs "
                f"({group['num_nodes']:,} {plural(group['num_nodes'], 'nodes')})")
        points = tuple((row["size_bytes"], mark(doc, f"/collectives/{k}/rows/{j}/busbw_GBps",
                                                f"{name}, {svg.binary_size(row['size_bytes'])}B", _gbps))
                       for j, row in enumerate(group_doc["rows"]))
        series.append(svg.Series(name=name, points=points))
        sizes += [p[0] for p in points]
        values += [p[1].value for p in points]
        measured = tuple((row["size_bytes"], mark(doc, f"/collectives/{k}/rows/{j}/measured/busbw_GBps",
                                                  f"measured, {svg.binary_size(row['size_bytes'])}B", _gbps))
                         for j, row in enumerate(group_doc["rows"]) if row.get("measured"))
        if measured:
            series.append(svg.Series(name=f"measured, {group['num_gpus']:,} GPUs", kind="points", points=measured))
            values += [p[1].value for p in measured]
        last = len(group_doc["rows"]) - 1
        error = (td(doc, f"/collectives/{k}/measured/mean_abs_error", lambda v: f"{v:.1%}")
                 if group_doc.get("measured") else '<td class="num">-</td>')
        rows.append(f"<tr><td>{esc(name)}</td>{td(doc, f'/collectives/{k}/avg_busbw_GBps', _gbps)}"
                    f"{td(doc, f'/collectives/{k}/rows/{last}/busbw_GBps', _gbps)}"
                    f"<td>{esc(group_doc['rows'][last]['algorithm'])}</td>{error}</tr>")
    x = svg.log2_axis(sizes, "message size S (bytes, as nccl-tests counts it)", lambda v: svg.binary_size(v) + "B")
    chart = svg.line_chart("Collective bus bandwidth vs message size (GB/s)", series, x,
                           svg.linear_axis(values, "busbw (GB/s = 1e9 B/s)", lambda v: f"{v:g}"), chart="collectives")
    body = chart + table(("Group", "Avg busbw", "Busbw at the largest size", "Algorithm there",
                          "Mean |error| vs measured"), rows, numeric=(1, 2, 4))
    sources = [g["measured"]["source"] for g in groups if g.get("measured")]
    if sources:
        body += f'<p class="muted">Measured: {esc(", ".join(sources))} (out-of-place busbw).</p>'
    return section("collectives", "Collectives", body)


def _distribution_row(doc: dict, name: str, metric: str, fmt) -> str:
    base = f"/sensitivity/monte_carlo/{metric}"
    return (f"<tr><td>{esc(name)}</td>{td(doc, f'/sensitivity/nominal/{metric}', fmt)}"
            + "".join(td(doc, f"{base}/{q}", fmt) for q in ("p10", "p50", "p90")) + "</tr>")


def _tornado_chart(doc: dict, metric: str, title: str, axis_label: str, fmt, order: list[int]) -> str:
    sens = doc["sensitivity"]
    rows, values = [], [sens["nominal"][metric]]
    horizon = sens["horizon_months"]
    for i in order[:TOP]:
        swing = sens["tornado"][i]
        ends = []
        for end in ("low", "high"):
            value = swing[end][metric]
            tip = f"{swing['key']} = {swing[f'{end}_value']:,.6g}"
            ends.append(mark(doc, f"/sensitivity/tornado/{i}/{end}/{metric}", tip, fmt) if value is not None
                        else Mark(value=horizon + 1, tip=f"{tip}: never within {horizon} months"))
            values.append(ends[-1].value)
        rows.append((swing["key"], *ends))
    center = sens["nominal"][metric]
    if center is None:
        center = horizon + 1
    axis = svg.linear_axis(values, axis_label, fmt if metric != "breakeven_months" else lambda v: f"{v:g}",
                           zero=False)
    return svg.tornado(title, rows, axis, center, chart=f"tornado-{metric}")


def sensitivity(doc: dict) -> Part | None:
    """Tornado of TCO and break-even, Monte Carlo distribution and drivers, and the inputs' ranges."""
    sens = doc.get("sensitivity")
    if not sens:
        return None
    mc = sens["monte_carlo"]
    offer = sens["offer"]
    rows = [_distribution_row(doc, "TCO", "tco_usd", money),
            _distribution_row(doc, "Cost per delivered GPU-hour", "cost_per_gpu_hour_usd", money)]
    if offer:
        rows.append(_distribution_row(doc, f"Cash break-even vs {offer}", "breakeven_months", months))
    body = (f"<p>{mc['samples']:,} samples, seed {mc['seed']}: every input drawn from "
            f"{esc(sens['distribution'])}. Quantiles are sampled values.</p>"
            + table(("Output", "Nominal", "P10", "P50", "P90"), rows, numeric=(1, 2, 3, 4)))
    if offer:
        body += (f'<p>Share of samples that break even against {esc(offer)} within {sens["horizon_months"]} months: '
                 f'<span data-pointer="/sensitivity/monte_carlo/breakeven_probability" '
                 f'data-value="{mc["breakeven_probability"]!r}">{mc["breakeven_probability"]:.1%}</span>.</p>')
    tornado = sens["tornado"]
    body += _tornado_chart(doc, "tco_usd", "Tornado: TCO with each input alone at its low and high end (USD)",
                           f"TCO over {sens['years']} years (USD); the line is the nominal", svg.usd,
                           list(range(len(tornado))))
    if offer:
        swings = [swing["breakeven_swing_months"] for swing in tornado]
        order = sorted((i for i, months_apart in enumerate(swings) if months_apart > 0), key=lambda i: -swings[i])
        if order:
            body += _tornado_chart(doc, "breakeven_months", f"Tornado: break-even month vs {offer}",
                                   f"month renting overtakes owning (past {sens['horizon_months']} = never)",
                                   months, order)
    histogram = mc["tco_histogram"]
    counts = [mark(doc, f"/sensitivity/monte_carlo/tco_histogram/counts/{i}",
                   f"{svg.usd(histogram['edges_usd'][i])}-{svg.usd(histogram['edges_usd'][i + 1])}", str)
              for i in range(len(histogram["counts"]))]
    lines = [(mark(doc, f"/sensitivity/monte_carlo/tco_usd/{q}", q.upper()), f"{q.upper()} {money(mc['tco_usd'][q])}")
             for q in ("p10", "p50", "p90")]
    body += svg.histogram("Monte Carlo: distribution of TCO (samples per bin)", histogram["edges_usd"], counts,
                          svg.linear_axis(histogram["edges_usd"], "TCO (USD)", svg.usd, zero=False),
                          svg.linear_axis(histogram["counts"], "samples", lambda v: f"{v:,.0f}"),
                          lines=lines, chart="histogram")
    driver_rows = []
    for metric, pairs in mc["drivers"].items():
        for j, pair in enumerate(pairs[:5]):
            rho = td(doc, f"/sensitivity/monte_carlo/drivers/{metric}/{j}/rank_correlation", lambda v: f"{v:+.2f}")
            driver_rows.append(f"<tr><td>{esc(METRICS.get(metric, metric))}</td><td>{esc(pair['key'])}</td>{rho}</tr>")
    body += "<h3>What drives them (Spearman rank correlation)</h3>" + table(
        ("Output", "Input (scenario key)", "Rank correlation"), driver_rows, numeric=(2,))
    input_rows = [f"<tr><td>{esc(item['key'])}</td><td>{esc(item['unit'])}</td>"
                  + "".join(td(doc, f"/sensitivity/inputs/{i}/{end}", lambda v: f"{v:,.6g}")
                            for end in ("low", "nominal", "high"))
                  + f"<td>{esc(item['range_source'])}</td></tr>" for i, item in enumerate(sens["inputs"])]
    body += "<h3>Inputs and their ranges</h3>" + table(("Input", "Unit", "Low", "Nominal", "High", "Range from"),
                                                        input_rows, numeric=(2, 3, 4))
    return section("sensitivity", "Sensitivity", body)


# -- compare ---------------------------------------------------------------------------------------------------


def _compare_rows(doc: dict, kind: str, changed: bool) -> list[str]:
    labels = doc["labels"]
    rows = []
    for i, row in enumerate(doc[kind]):
        if row["changed"] != changed:
            continue
        if kind == "headlines":
            unit, name, values, deltas = row["unit"], row["name"], "values", "deltas"
        else:
            unit, name, values, deltas = "USD", f"{row['category']}: {row['item']}", "totals_usd", "deltas_usd"
        cells = [td(doc, f"/{kind}/{i}/{values}/0", lambda v, unit=unit: format_figure(v, unit))]
        for k in range(1, len(labels)):   # the delta under the value: one column per scenario, not two
            delta = (f'<span class="delta" data-pointer="/{kind}/{i}/{deltas}/{k}" data-value="{row[deltas][k]!r}">'
                     f"{esc(format_delta(row[deltas][k], unit))}</span>" if changed else "")
            cells.append(f'<td class="num"><span data-pointer="/{kind}/{i}/{values}/{k}" '
                         f'data-value="{row[values][k]!r}">{esc(format_figure(row[values][k], unit))}</span>'
                         f"{delta}</td>")
        if kind == "bom":
            quantities = " / ".join(format_quantity(q) for q in row["quantities"])
            name = f"{name} ({quantities} {row['per']})"
        rows.append(f"<tr><td>{esc(name)}</td>{''.join(cells)}</tr>")
    return rows


def compare_parts(doc: dict[str, Any]) -> list[Part]:
    """The compare document's parts: the TCO bars, then headlines and BoM with changed rows, unchanged folded."""
    labels = doc["labels"]
    headers = ("", f"{labels[0]} (the baseline)", *(f"{label} (Δ against the baseline)" for label in labels[1:]))
    numeric = tuple(range(1, len(headers)))
    parts = []
    for kind, title in (("headlines", "Headline figures"), ("bom", "Bill of materials (USD per line)")):
        body = table(headers, _compare_rows(doc, kind, True), numeric=numeric)
        folded = doc["unchanged"][kind]
        if folded:
            body += (f"<details><summary>{folded} unchanged {'figures' if kind == 'headlines' else 'lines'} "
                     f"folded</summary>{table(headers, _compare_rows(doc, kind, False), numeric=numeric)}</details>")
        parts.append(Part(anchor=kind, title=title, body=body))
    tco = next(i for i, h in enumerate(doc["headlines"]) if h["key"] == "cost.tco_usd")
    bars = [(label, mark(doc, f"/headlines/{tco}/values/{k}", label)) for k, label in enumerate(labels)]
    axis = svg.linear_axis([m.value for _, m in bars], "USD", svg.usd)
    chart = svg.horizontal_bars("TCO by scenario (USD)", bars, axis, chart="compare-tco", label=money)
    parts.insert(0, Part(anchor="tco", title="TCO", body=chart))
    return parts


def render_compare(doc: dict[str, Any], stream: TextIO) -> None:
    """The compare document as one HTML page: changed rows, unchanged ones folded."""
    labels = doc["labels"]
    parts = compare_parts(doc)
    sources = " vs ".join(doc["sources"])
    stream.write(page(f"clusterplan compare: {' vs '.join(labels)}", f"{sources} · clusterplan {doc['version']}",
                      parts))
