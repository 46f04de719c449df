"""The self-contained HTML report: one file, styles inline, charts as inline SVG, no script, no URL.

The report is a list of section renderers over the report document
(``clusterplan.report/1``, report/documents.py). Each takes the document and
returns a ``Part`` (anchor, heading, HTML), or None when the document has
nothing for it: a new part of the report is one more function in ``SECTIONS``.
Numbers are read through JSON Pointers and user text is escaped (report/page.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, TextIO

from clusterplan.report import svg
from clusterplan.report.diagram import layered_diagram
from clusterplan.report.figures import HTML, money, months, pointer, present, resolve, shown
from clusterplan.report.html_analysis import collectives, sensitivity
from clusterplan.report.html_offers import cheapest_per_mode, offer_style, others_entry
from clusterplan.report.html_size import sizing
from clusterplan.report.html_training import training
from clusterplan.report.page import Part, mark, page, section, table, td
from clusterplan.report.svg import Mark, esc
from clusterplan.report.tables import plan_heading
from clusterplan.units import format_quantity, plural

Section = Callable[[dict[str, Any]], "Part | None"]


# -- sections over the plan ------------------------------------------------------------------------------------


def summary(doc: dict) -> Part:
    """The headline figures (report/figures.py) as cards under the line naming the cluster."""
    plan = doc["plan"]
    cards = []
    for headline in shown(HTML):
        path = "/plan" + headline.pointer
        if not present(doc, path):   # the cheapest offer's break-even of a plan without offers
            continue
        cards.append(f'<div class="card"><div class="k">{esc(headline.title(HTML, plan))}</div><div class="v" '
                     f'data-pointer="{esc(path)}" data-value="{resolve(doc, path)!r}">'
                     f'{esc(headline.text(HTML, plan))}</div></div>')
    return section("summary", "Summary", f'<p>{esc(plan_heading(plan))}</p><div class="cards">{"".join(cards)}</div>')


def capex(doc: dict) -> Part:
    cost = doc["plan"]["cost"]
    rows = []
    for category in cost["capex_by_category_usd"]:
        for i, line in enumerate(cost["bom"]):
            if line["category"] != category:
                continue
            base = f"/plan/cost/bom/{i}"
            star = " *" if line["assumption"] else ""
            rows.append(f'<tr><td>{esc(category)}</td><td title="{esc(line["source"])}">{esc(line["item"])}{star}</td>'
                        f'{td(doc, base + "/quantity", format_quantity)}<td>{esc(line["per"])}</td>'
                        f'{td(doc, base + "/unit_price_usd")}{td(doc, base + "/total_usd")}</tr>')
        rows.append(f'<tr class="sub"><td></td><td>{esc(category)} subtotal</td><td></td><td></td><td></td>'
                    f'{td(doc, pointer("plan", "cost", "capex_by_category_usd", category))}</tr>')
    rows.append(f'<tr class="total"><td></td><td>Capex</td><td></td><td></td><td></td>'
                f'{td(doc, "/plan/cost/capex_usd")}</tr>')
    bars = [(category, mark(doc, pointer("plan", "cost", "capex_by_category_usd", category), category))
            for category in cost["capex_by_category_usd"]]
    chart = svg.horizontal_bars("Capex by category (USD)", bars,
                                svg.linear_axis([m.value for _, m in bars], "USD", svg.usd), chart="capex", label=money)
    body = (chart + table(("Category", "Item", "Qty", "Per", "Unit price (USD)", "Total (USD)"), rows,
                          numeric=(2, 4, 5))
            + '<p class="muted">* ASSUMPTION price (no public source); hover an item for its source. '
              '<code>clusterplan catalog ID</code> shows each entry.</p>')
    return section("capex", "Bill of materials and capex", body)


def opex(doc: dict) -> Part:
    cost = doc["plan"]["cost"]
    names = [name for name in cost["opex_usd_per_year"] if name != "total"]
    years = [f"Year {y}" for y in range(1, cost["years"] + 1)]
    series = [(name, [mark(doc, pointer("plan", "cost", "opex_usd_per_year", name), f"{name}, {year}")
                      for year in years]) for name in names]
    axis = svg.linear_axis([cost["opex_usd_per_year"]["total"]], "USD per year", svg.usd)
    chart = svg.bar_chart("Opex by year, stacked by category (USD)", years, series, axis, x_label="year of operation",
                          chart="opex")
    rules = cost.get("opex_rules", {})
    rows = [f'<tr><td>{esc(name + (": " + rules[name] if name in rules else ""))}</td>'
            f'{td(doc, pointer("plan", "cost", "opex_usd_per_year", name))}</tr>' for name in names]
    rows.append(f'<tr class="total"><td>total per year</td>{td(doc, "/plan/cost/opex_usd_per_year/total")}</tr>')
    for i, line in enumerate(cost["one_off"]):
        rows.append(f'<tr><td>one-off: {esc(line["item"])}</td>{td(doc, f"/plan/cost/one_off/{i}/total_usd")}</tr>')
    rows.append(f'<tr><td>residual value at {cost["years"]} years ({cost["resale_fraction"]:.0%} of straight-line book '
                f'value), credited in TCO</td>{td(doc, "/plan/cost/residual_usd")}</tr>')
    lives = ", ".join(f'{a["category"]} {a["life_years"]:g} y, warranty {a["warranty_years"]:g} y'
                      for a in cost["assets"])
    economic = [f'<tr><td>{esc(name.replace("_", " "))}</td>'
                f'{td(doc, pointer("plan", "cost", "economic_usd_per_year", name))}</tr>'
                for name in cost["economic_usd_per_year"]]
    economic.append(f'<tr class="total"><td>per delivered GPU-hour</td>'
                    f'{td(doc, "/plan/cost/economic_cost_per_gpu_hour_usd")}</tr>')
    return section("opex", "Opex by year, and one-off costs", chart + table(("Item", "USD"), rows, numeric=(1,))
                   + f"<p>Economic cost a year over each asset class's life ({esc(lives)}):</p>"
                   + table(("Line", "USD per year"), economic, numeric=(1,)))


def ownership(doc: dict) -> Part:
    plan = doc["plan"]
    cost, cloud = plan["cost"], plan["cloud"]
    horizon = cost["horizon_months"]
    own = svg.Series(name="own (capex + one-off + opex)", colour=svg.INK, width=3.0, points=tuple(
        (m, mark(doc, f"/plan/cost/cumulative_usd_by_month/{m}", f"own, month {m}"))
        for m in range(horizon + 1)), label="own")
    cheapest = cheapest_per_mode(cloud)
    rented = [svg.Series(name=c["offer"], dashed=True, legend=False, **offer_style(i, cheapest, c["offer"]), points=(
        (0, Mark(value=0.0)), (horizon, mark(doc, f"/plan/cloud/{i}/total_usd", f"{c['offer']}, month {horizon}"))))
        for i, c in enumerate(cloud)]
    markers = []
    for i, c in enumerate(cloud):
        month = c["breakeven_months"]
        if month is not None:
            markers.append((month, Mark(value=resolve(doc, f"/plan/cost/cumulative_usd_by_month/{month}"),
                                        pointer=f"/plan/cloud/{i}/breakeven_months",
                                        tip=f"{c['offer']} overtakes owning in month {month}"), f"m{month}"))
    values = [own.points[-1][1].value] + [s.points[-1][1].value for s in rented]
    x = svg.Axis(low=0, high=horizon, ticks=tuple(range(0, horizon + 1, 6 if horizon <= 60 else 12)),
                 label="months from purchase", format=lambda v: f"{v:g}")
    chart = svg.line_chart("Cumulative cost: owning vs each cloud offer (USD), break-even marked", [own, *rented],
                           x, svg.linear_axis(values, "cumulative USD", svg.usd), markers=markers, chart="ownership",
                           more=others_entry(cloud, cheapest))
    rows = [f'<tr><td title="{esc(c["source"])}">{esc(c["offer"])}</td><td>{esc(c["pricing"])}</td>'
            f'{td(doc, f"/plan/cloud/{i}/usd_per_gpu_hour")}{td(doc, f"/plan/cloud/{i}/usd_per_year")}'
            f'{td(doc, f"/plan/cloud/{i}/total_usd")}{td(doc, f"/plan/cloud/{i}/breakeven_months", months)}</tr>'
            for i, c in enumerate(cloud)]
    body = chart + (table(("Offer", "Pricing", "USD/GPU-hour", "Per year (USD)", f"Total over {horizon} months (USD)",
                           "Break-even"), rows, numeric=(2, 3, 4, 5)) if rows
                    else "<p>The scenario names no cloud offers (<code>cloud.offers</code>).</p>")
    hybrid = plan["hybrid"]
    if hybrid:
        body += (f'<p>Hybrid: own {hybrid["owned_nodes"]} of {hybrid["num_nodes"]} {plural(hybrid["num_nodes"], "nodes")} and burst '
                 f'{hybrid["burst_gpu_hours_per_year"]:,.0f} GPU-hours a year to {esc(hybrid["burst_offer"])}: '
                 f'<span data-pointer="/plan/hybrid/total_usd" data-value="{hybrid["total_usd"]!r}">'
                 f'{money(hybrid["total_usd"])}</span> over {hybrid["years"]} years.</p>')
    return section("cloud", "Owning vs renting", body)


MOST_RACKS = 24   # drawn one bar per rack up to this many; past it, one bar per run of like racks


def rack_groups(names: Sequence[str], powers_kw: Sequence[float]) -> list[tuple[int, int]]:
    """(first, last) index of each run of neighbouring racks of one kind (C or N) and power to 0.1 kW."""
    groups: list[tuple[int, int]] = []
    for i, (name, power_kw) in enumerate(zip(names, powers_kw)):
        if groups and name[0] == names[groups[-1][0]][0] and round(power_kw, 1) == round(powers_kw[i - 1], 1):
            groups[-1] = (groups[-1][0], i)
        else:
            groups.append((i, i))
    return groups


def power(doc: dict) -> Part:
    racks = doc["plan"]["design"]["racks"]
    powers = racks["power_kw"]
    names = [f"C{i + 1}" if i < racks["compute"] else f"N{i + 1 - racks['compute']}" for i in range(len(powers))]
    groups = ([(i, i) for i in range(len(names))] if len(names) <= MOST_RACKS else rack_groups(names, powers))
    heaviest = [max(range(first, last + 1), key=lambda i: powers[i]) for first, last in groups]
    labels = [names[first] if first == last else f"{names[first]}-{names[last]}" for first, last in groups]
    marks = [mark(doc, f"/plan/design/racks/power_kw/{i}",
                  f"rack {names[i]}" if first == last else f"racks {label} ({last - first + 1}), heaviest {names[i]}",
                  lambda v: f"{v:,.1f} kW") for i, label, (first, last) in zip(heaviest, labels, groups)]
    budget = racks["rack_budget_kw"]
    axis = svg.linear_axis([*powers, budget * 1.05], "kW per rack (nameplate)", lambda v: f"{v:g}")
    grouped = len(groups) < len(names)
    chart = svg.bar_chart("Power per rack vs the rack budget (kW)" + (", like racks in one bar" if grouped else ""),
                          labels, [("power", marks)], axis,
                          x_label="rack (C = compute, N = network and storage)"
                                  + ("; a bar is the heaviest of its run, x N racks" if grouped else ""),
                          limit=(budget, f"budget {budget:g} kW"), chart="power",
                          notes=[f"x {last - first + 1:,}" if grouped else "" for first, last in groups])
    note = (f'<p>{len(names):,} racks, {racks["servers_per_rack"]} servers per compute rack; heaviest rack '
            f'<span data-pointer="/plan/design/racks/max_rack_power_kw" data-value="{racks["max_rack_power_kw"]!r}">'
            f'{racks["max_rack_power_kw"]:.1f} kW</span> of {budget:.1f} kW.</p>')
    return section("power", "Power per rack", chart + note)


def fabric(doc: dict) -> Part:
    design = doc["plan"]["design"]
    f = design["fabric"]
    gbps = f"{f['link_rate_Bps'] * 8 / 1e9:g} Gb/s"
    layers = [(f"{design['num_nodes']:,} {plural(design['num_nodes'], 'nodes')}", mark(doc, "/plan/design/num_nodes", "nodes", format_quantity))]
    for tier in f["switches"]:
        layers.append((f"{f['switches'][tier]:,} x {tier}",
                       mark(doc, pointer("plan", "design", "fabric", "switches", tier), f"{tier} switches",
                            format_quantity)))
    gaps = [f"{count:,} x {gbps}" for count in f["links"].values()]
    title = (f"Fabric: {f['tiers']}-tier {f['topology']} of {f['radix']}-port {f['technology']} switches "
             f"({f['id']})")
    chart = layered_diagram(title, layers, gaps, chart="fabric") + (
        '<p class="muted">Counts and speeds are the design\'s; the lines show which tiers meet, not every cable, '
        'and a tier of more than eight switches or nodes is drawn as its first ones, "…" and its last.</p>')
    rows = [f'<tr><td>{esc(between)} links</td>'
            f'{td(doc, pointer("plan", "design", "fabric", "links", between), lambda v: f"{v:,}")}'
            f'<td>{esc(gbps)}</td></tr>' for between in f["links"]]
    bisection = td(doc, "/plan/design/fabric/bisection_bw_Bps_per_gpu", lambda v: f"{v / 1e9:.1f} GB/s")
    rows.append(f"<tr><td>bisection bandwidth per GPU</td>{bisection}<td></td></tr>")
    return section("fabric", "Fabric", chart + table(("Links", "Count", "Speed"), rows, numeric=(1,)))


def warnings(doc: dict) -> Part:
    items = doc["plan"]["warnings"]
    if not items:
        return section("warnings", "Design checks", "<p>No warnings.</p>")
    return section("warnings", "Design checks", '<ul class="warnings">'
                   + "".join(f"<li>{esc(w)}</li>" for w in items) + "</ul>")


SECTIONS: tuple[Section, ...] = (summary, capex, opex, ownership, power, fabric, warnings, collectives, training,
                                 sizing, sensitivity)


def render_report(doc: dict[str, Any], stream: TextIO, sections: Sequence[Section] = SECTIONS) -> None:
    """The whole report for ``doc`` (``clusterplan.report/1``)."""
    parts = [part for render in sections if (part := render(doc)) is not None]
    about = doc["plan"]["scenario"].get("about", {})
    stream.write(page(f"clusterplan report: {doc['title']}", f"{doc['source']} · clusterplan {doc['version']}",
                      parts, notes=about.get("notes", "")))
