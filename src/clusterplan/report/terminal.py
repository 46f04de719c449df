"""Terminal tables (rich) drawn from the plan document: summary first, then detail."""

from __future__ import annotations

from typing import Any, TextIO

from clusterplan.units import format_si, format_usd


def escape(text: str) -> str:
    from rich.markup import escape as rich_escape

    return rich_escape(text)


def _console(stream: TextIO):
    from rich.console import Console

    return Console(file=stream, width=None if stream.isatty() else 110, highlight=False)


def _table(title: str, *columns: str, right: tuple[int, ...] = (), header: bool = True):
    from rich import box
    from rich.table import Table

    table = Table(title=title, title_justify="left", title_style="bold", box=box.SIMPLE_HEAD,
                  pad_edge=False, show_edge=False, show_header=header)
    for index, column in enumerate(columns):
        table.add_column(column, justify="right" if index in right else "left")
    return table


def _months(value: int | None) -> str:
    return "never" if value is None else f"month {value}"


def render_plan(doc: dict[str, Any], stream: TextIO) -> None:
    console = _console(stream)
    design, cost = doc["design"], doc["cost"]
    fabric, racks = design["fabric"], design["racks"]
    years = cost["years"]
    console.print(f"[bold]clusterplan plan[/bold]: {design['num_gpus']} x {design['gpu']} "
                  f"({design['num_nodes']} nodes x {design['gpus_per_node']}), {fabric['id']} "
                  f"{fabric['topology']}, {years} years")

    summary = _table("Summary", "", "", right=(1,), header=False)
    best = min(doc["cloud"], key=lambda c: c["total_usd"], default=None)
    rows = [
        ("Capex (hardware)", format_usd(cost["capex_usd"])),
        ("One-off (integration, setup staff)", format_usd(cost["one_off_usd"])),
        ("Opex per year", format_usd(cost["opex_usd_per_year"]["total"])),
        (f"TCO over {years} years", format_usd(cost["tco_usd"])),
        (f"NPV of costs at {cost['discount_rate']:.0%}", format_usd(cost["npv_usd"])),
        ("Capex per GPU, fully loaded", format_usd(cost["capex_per_gpu_usd"])),
        ("Cost per delivered GPU-hour", f"${cost['cost_per_gpu_hour_usd']:.2f}"),
        ("Racks", f"{design['num_racks']} ({racks['compute']} compute, {racks['infrastructure']} network+storage)"),
        ("IT power (max / typical)", f"{design['it_power_kw']:.1f} kW / {design['it_typical_power_kw']:.1f} kW"),
        ("Facility power (x PUE)", f"{design['facility_power_kw']:.1f} kW"),
    ]
    if best:
        rows.append((f"Cheapest cloud: {best['offer']}",
                     f"{format_usd(best['total_usd'])}, break-even {_months(best['breakeven_months'])}"))
    for row in rows:
        summary.add_row(*row)
    console.print(summary)
    if doc.get("training"):
        from clusterplan.report.training import training_rows

        workload = _table("Workload", "", "", right=(1,), header=False)
        for row in training_rows(doc["training"]):
            workload.add_row(*row)
        console.print(workload)

    switches = ", ".join(f"{count} {tier}" for tier, count in fabric["switches"].items())
    links = ", ".join(f"{count} {tier}" for tier, count in fabric["links"].items())
    console.print(f"[bold]Fabric[/bold]: {fabric['tiers']}-tier {fabric['topology']} of {fabric['radix']}-port "
                  f"switches at {fabric['link_rate_Bps'] * 8 / 1e9:g} Gb/s: {switches}; links {links}; "
                  f"bisection {fabric['bisection_bw_Bps_per_gpu'] / 1e9:.1f} GB/s per GPU")
    console.print(f"[bold]Racks[/bold]: {racks['servers_per_rack']} servers per rack; heaviest rack "
                  f"{racks['max_rack_power_kw']:.1f} kW of {racks['rack_budget_kw']:.1f} kW")
    burst = design["burst_buffer"]
    console.print(f"[bold]Storage[/bold]: {_tier(design['storage'])}"
                  + (f"; burst buffer: {_tier(burst)}" if burst else "") + "\n")

    bom = _table("Bill of materials", "Category", "Item", "Qty", "Unit price", "Total", right=(2, 3, 4))
    for category, subtotal in cost["capex_by_category_usd"].items():
        for line in (x for x in cost["bom"] if x["category"] == category):
            mark = " *" if line["assumption"] else ""
            bom.add_row(category, escape(line["item"]) + mark, f"{line['quantity']:,.4g}",
                        format_usd(line["unit_price_usd"]), format_usd(line["total_usd"]))
        bom.add_row("", f"[bold]{category} subtotal[/bold]", "", "", f"[bold]{format_usd(subtotal)}[/bold]",
                    end_section=True)
    bom.add_row("", "[bold]Capex[/bold]", "", "", f"[bold]{format_usd(cost['capex_usd'])}[/bold]")
    console.print(bom)
    console.print("  * ASSUMPTION price (no public source); `clusterplan catalog ID` shows each source\n")

    opex = _table("Opex per year, and one-off", "Item", "USD", right=(1,))
    for name, value in cost["opex_usd_per_year"].items():
        opex.add_row(f"[bold]{name}[/bold]" if name == "total" else name, format_usd(value))
    for line in cost["one_off"]:
        opex.add_row(f"one-off: {line['item']}", format_usd(line["total_usd"]))
    console.print(opex)
    console.print(f"TCO = capex {format_usd(cost['capex_usd'])} + one-off {format_usd(cost['one_off_usd'])} "
                  f"+ {years} x opex {format_usd(cost['opex_usd_per_year']['total'])} = "
                  f"[bold]{format_usd(cost['tco_usd'])}[/bold]; {cost['delivered_gpu_hours_per_year']:,.0f} "
                  f"delivered GPU-hours a year\n")

    if doc["cloud"]:
        cloud = _table(f"Renting the same GPU-hours ({years} years)", "Offer", "Pricing", "$/GPU-h",
                       "Per year", "Total", "vs own", "Break-even", right=(2, 3, 4, 5))
        for offer in doc["cloud"]:
            cloud.add_row(offer["offer"], offer["pricing"], f"{offer['usd_per_gpu_hour']:.2f}",
                          format_usd(offer["usd_per_year"]), format_usd(offer["total_usd"]),
                          f"{offer['total_usd'] / cost['tco_usd']:.2f}x", _months(offer["breakeven_months"]))
        console.print(cloud)
    if doc["hybrid"]:
        h = doc["hybrid"]
        console.print(f"[bold]Hybrid[/bold]: own {h['owned_nodes']} of {h['num_nodes']} nodes "
                      f"({format_usd(h['own_usd'])}) and burst {h['burst_gpu_hours_per_year']:,.0f} GPU-hours a "
                      f"year to {h['burst_offer']} ({format_usd(h['burst_usd'])}): {format_usd(h['total_usd'])} "
                      f"over {h['years']} years\n")
    if doc["warnings"]:
        console.print("[bold]Warnings[/bold]")
        for warning in doc["warnings"]:
            console.print(f"  ! {escape(warning)}", soft_wrap=True)


def _tier(tier: dict[str, Any]) -> str:
    """A storage tier of the design: capacity, blocks and bandwidth."""
    return (f"{tier['usable_tb']:,.0f} TB on {tier['units']} x {tier['tier']}, read "
            f"{tier['read_Bps'] / 1e9:,.0f} GB/s, write {tier['write_Bps'] / 1e9:,.0f} GB/s")


def render_catalog(doc: dict[str, Any], stream: TextIO) -> None:
    """One line per entry; all fields when there is only one."""
    console = _console(stream)
    entries = doc["entries"]
    if len(entries) == 1:
        entry = entries[0]
        table = _table(f"{entry['id']} ({entry['family']})", "Field", "Value")
        for key, value in entry.items():
            if key not in ("id", "family") and value not in (None, ""):
                table.add_row(key, escape(_format_field(key, value)))
        console.print(table)
        return
    table = _table("Catalog", "Id", "Family", "Name", "Price", "Date", right=(3,))
    for entry in entries:
        price = entry.get("price_usd")
        text = "" if price is None else f"{format_usd(price) if price >= 100 else f'${price:.2f}'}"
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
