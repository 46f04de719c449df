"""Terminal tables (rich) drawn from the plan document: summary first, then detail."""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Console

from clusterplan.report.console import escape, new_console, new_table
from clusterplan.report.figures import TERMINAL, money, months, shown
from clusterplan.report.tables import plan_heading
from clusterplan.report.training import training_rows
from clusterplan.units import format_quantity, format_si, format_usd, plural


def render_plan(doc: dict[str, Any], stream: TextIO) -> None:
    """The headline figures (report/figures.py), the workload, the design, BoM, opex, cloud and warnings."""
    console = new_console(stream)
    console.print(f"[bold]clusterplan plan[/bold]: {plan_heading(doc)}")
    summary = new_table("Summary", "", "", right=(1,), header=False)
    for headline in shown(TERMINAL):
        if headline.value(doc) is not None:
            summary.add_row(headline.title(TERMINAL, doc), headline.text(TERMINAL, doc))
    console.print(summary)
    if doc.get("training"):
        workload = new_table("Workload", "", "", right=(1,), header=False)
        for row in training_rows(doc["training"]):
            workload.add_row(*row)
        console.print(workload)
    _design(console, doc["design"])
    _bom(console, doc["cost"])
    _opex(console, doc["cost"])
    _cloud(console, doc)
    if doc["warnings"]:
        console.print("[bold]Warnings[/bold]")
        for warning in doc["warnings"]:
            console.print(f"  ! {escape(warning)}", soft_wrap=True)


def _design(console: Console, design: dict[str, Any]) -> None:
    """The fabric, the racks and the storage, a line each."""
    fabric, racks = design["fabric"], design["racks"]
    switches = ", ".join(f"{count:,} {tier}" for tier, count in fabric["switches"].items())
    links = ", ".join(f"{count:,} {tier}" for tier, count in fabric["links"].items())
    console.print(f"[bold]Fabric[/bold]: {fabric['tiers']}-tier {fabric['topology']} of {fabric['radix']}-port "
                  f"switches at {fabric['link_rate_Bps'] * 8 / 1e9:g} Gb/s: {switches}; links {links}; "
                  f"bisection {fabric['bisection_bw_Bps_per_gpu'] / 1e9:.1f} GB/s per GPU")
    domain = ""
    if "nvlink_domain_gpus" in design:
        spans = design["nvlink_domain_racks"]
        trays = design["nvlink_switch_trays"] // (design["num_nvlink_domains"] * spans)
        domain = (f" ({'one' if spans == 1 else f'1 of the {spans} racks of a'} {design['nvlink_domain_gpus']}-GPU "
                  f"NVLink domain, with {trays} switch trays; the budget is the cooling's)")
    console.print(f"[bold]Racks[/bold]: {racks['servers_per_rack']} servers per rack{domain}; heaviest rack "
                  f"{racks['max_rack_power_kw']:.1f} kW of {racks['rack_budget_kw']:.1f} kW")
    burst = design["burst_buffer"]
    console.print(f"[bold]Storage[/bold]: {_tier(design['storage'])}"
                  + (f"; burst buffer: {_tier(burst)}" if burst else "") + "\n")


def _bom(console: Console, cost: dict[str, Any]) -> None:
    """Every capex line by category, with subtotals and the capex."""
    bom = new_table("Bill of materials", "Category", "Item", "Qty", "Unit price", "Total", right=(2, 3, 4))
    for category, subtotal in cost["capex_by_category_usd"].items():
        for line in (x for x in cost["bom"] if x["category"] == category):
            mark = " *" if line["assumption"] else ""
            bom.add_row(category, escape(line["item"]) + mark, format_quantity(line['quantity']),
                        format_usd(line["unit_price_usd"]), format_usd(line["total_usd"]))
        bom.add_row("", f"[bold]{category} subtotal[/bold]", "", "", f"[bold]{format_usd(subtotal)}[/bold]",
                    end_section=True)
    bom.add_row("", "[bold]Capex[/bold]", "", "", f"[bold]{format_usd(cost['capex_usd'])}[/bold]")
    console.print(bom)
    console.print("  * ASSUMPTION price (no public source); `clusterplan catalog ID` shows each source\n")


def _opex(console: Console, cost: dict[str, Any]) -> None:
    """Opex per year by category, the one-off lines, and the TCO as their sum."""
    opex = new_table("Opex per year, and one-off", "Item", "USD", right=(1,))
    rules = cost.get("opex_rules", {})
    for name, value in cost["opex_usd_per_year"].items():
        label = f"{name}: {escape(rules[name])}" if name in rules else name
        opex.add_row(f"[bold]{name}[/bold]" if name == "total" else label, format_usd(value))
    for line in cost["one_off"]:
        opex.add_row(f"one-off: {line['item']}", format_usd(line["total_usd"]))
    console.print(opex)
    console.print(f"TCO = capex {format_usd(cost['capex_usd'])} + one-off {format_usd(cost['one_off_usd'])} "
                  f"+ {cost['years']} x opex {format_usd(cost['opex_usd_per_year']['total'])} - residual "
                  f"{format_usd(cost['residual_usd'])} = [bold]{format_usd(cost['tco_usd'])}[/bold]; "
                  f"{cost['delivered_gpu_hours_per_year']:,.0f} delivered GPU-hours a year")
    lives = ", ".join(f"{a['category']} {a['life_years']:g} y (warranty {a['warranty_years']:g} y)"
                      for a in cost["assets"])
    economic = cost["economic_usd_per_year"]
    console.print(f"Residual at {cost['years']} years: {cost['resale_fraction']:.0%} of straight-line book value "
                  f"over the economic lives: {lives}")
    console.print("Economic cost a year over those lives: " + ", ".join(
        f"{name.replace('_', ' ')} {format_usd(value)}" for name, value in economic.items())
        + f" = {format_usd(sum(economic.values()))}; [bold]${cost['economic_cost_per_gpu_hour_usd']:.2f}[/bold] "
        f"per delivered GPU-hour (cash over {cost['years']} years: ${cost['cost_per_gpu_hour_usd']:.2f})\n")


def _cloud(console: Console, doc: dict[str, Any]) -> None:
    """Each cloud offer against owning, and the hybrid option."""
    years = doc["cost"]["years"]
    if doc["cloud"]:
        cloud = new_table(f"Renting the same GPU-hours ({years} years)", "Offer", "Pricing", "$/GPU-h",
                          "Per year", "Total", "vs own", "Cash break-even", right=(2, 3, 4, 5))
        for offer in doc["cloud"]:
            cloud.add_row(offer["offer"], offer["pricing"], f"{offer['usd_per_gpu_hour']:.2f}",
                          format_usd(offer["usd_per_year"]), format_usd(offer["total_usd"]),
                          f"{offer['vs_own']:.2f}x", months(offer["breakeven_months"]))
        console.print(cloud)
        console.print("vs own: the offer's total over owning's TCO (residual value credited); cash break-even: the "
                      "first month owning has spent less than renting, nothing resold\n")
    if doc["hybrid"]:
        h = doc["hybrid"]
        console.print(f"[bold]Hybrid[/bold]: own {h['owned_nodes']:,} of {h['num_nodes']:,} {plural(h['num_nodes'], 'nodes')} "
                      f"({format_usd(h['own_usd'])}) and burst {h['burst_gpu_hours_per_year']:,.0f} GPU-hours a "
                      f"year to {h['burst_offer']} ({format_usd(h['burst_usd'])}): {format_usd(h['total_usd'])} "
                      f"over {h['years']} years\n")


def _tier(tier: dict[str, Any]) -> str:
    """A storage tier of the design: capacity, blocks and bandwidth."""
    return (f"{tier['usable_tb']:,.0f} TB on {tier['units']} x {tier['tier']}, read "
            f"{tier['read_Bps'] / 1e9:,.0f} GB/s, write {tier['write_Bps'] / 1e9:,.0f} GB/s")


def render_catalog(doc: dict[str, Any], stream: TextIO) -> None:
    """One line per entry; all fields when there is only one."""
    console = new_console(stream)
    entries = doc["entries"]
    if len(entries) == 1:
        entry = entries[0]
        table = new_table(f"{entry['id']} ({entry['family']})", "Field", "Value")
        for key, value in entry.items():
            if key not in ("id", "family") and value not in (None, ""):
                table.add_row(key, escape(_format_field(key, value)))
        console.print(table)
        return
    table = new_table("Catalog", "Id", "Family", "Name", "Price", "Date", right=(3,))
    table.columns[0].min_width = max(len(entry["id"]) for entry in entries)   # an id is typed: never cut
    table.columns[0].no_wrap = True
    for entry in entries:
        price = entry.get("price_usd")
        text = "" if price is None else money(price)
        if entry.get("assumption"):
            text += " *"
        table.add_row(entry["id"], entry["family"], escape(entry["name"]), text, entry.get("date", ""))
    console.print(table)
    console.print("  * ASSUMPTION price (no public source). `clusterplan catalog ID` shows an entry and its source.")


def _format_field(key: str, value: Any) -> str:
    if isinstance(value, float) and key.endswith("_usd"):
        return f"${value:,.2f}"
    for suffix, symbol in (("_Bps", "B/s"), ("_flops", "FLOP/s"), ("_bytes", "B"), ("_w", "W"), ("_s", "s")):
        if isinstance(value, float) and key.endswith(suffix):
            text = format_si(value, symbol)
            return f"{text} ({value / 2**30:.4g} GiB)" if symbol == "B" else text
    return str(value)
