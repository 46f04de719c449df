"""The headline figures of a plan: one table that every view reads.

The terminal summary, the HTML summary cards, the Summary table of the CSV,
Markdown and XLSX exports, and compare's headline rows all draw their figures
from ``HEADLINES``; no view keeps a list of its own. Each figure is a number in
the plan document (``clusterplan.plan/1``) named by a JSON Pointer, with its
label, unit and format, and the views that show it, each with the figure's row
in that view (views order their rows differently, so the row is the figure's,
per view). A view leaves out a figure the document lacks or holds as null (the
cheapest offer of a plan without offers, the training figures of a plan without
a workload).

A label may name document values: it is a format string over the plan document
("TCO over {cost[years]} years"). ``short_label`` is the label where one label
must serve several documents (compare), ``card_label`` the shorter one an HTML
card has room for. ``format`` names how a view writes the number (``FORMATS``:
the terminal compact, the HTML with thousands separators and cents below $100;
any other value is a Python format spec); the exports and compare write the bare
number and the unit. ``terminal`` is the terminal's text where its row shows more
than the one number, a format string over the plan document.

This module also holds what reading and writing those numbers needs: JSON
Pointers into a document and the money and month formats every view shares.
"""

from __future__ import annotations

import string
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from clusterplan.schema import FROZEN
from clusterplan.units import format_usd

TERMINAL, HTML, TABLES, COMPARE = "terminal", "html", "tables", "compare"
VIEWS = (TERMINAL, HTML, TABLES, COMPARE)


def pointer(*parts: object) -> str:
    """A JSON Pointer (RFC 6901) to ``parts``."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def resolve(document: Any, path: str) -> Any:
    """The value at JSON Pointer ``path`` of ``document``."""
    value = document
    for raw in path.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        value = value[int(part)] if isinstance(value, list) else value[part]
    return value


def lookup(document: Any, path: str) -> Any:
    """The value at ``path``, or None where the document has nothing there."""
    try:
        return resolve(document, path)
    except (KeyError, IndexError, TypeError, ValueError):
        return None


def present(document: Any, path: str) -> bool:
    """Whether ``path`` names a place in ``document`` (its value may be null: "never breaks even")."""
    try:
        resolve(document, path)
    except (KeyError, IndexError, TypeError, ValueError):
        return False
    return True


def money(value: float) -> str:
    """"$12.29M", "$789", "$4.57": compact, with cents below $100."""
    return format_usd(value) if abs(value) >= 100 else f"${value:,.2f}"


def months(value: int | None) -> str:
    return "never" if value is None else f"month {value}"


Format = Callable[[Any], str]
FORMATS: Mapping[str, Mapping[str, Format]] = MappingProxyType({
    TERMINAL: MappingProxyType({"usd": format_usd, "price": lambda v: f"${v:.2f}", "kw": lambda v: f"{v:,.1f} kW",
                                "months": months}),
    HTML: MappingProxyType({"usd": money, "price": money, "kw": lambda v: f"{v:,.1f} kW", "months": months}),
})


class _Formatter(string.Formatter):
    """``str.format`` with the named formats of one view ("{cost[tco_usd]:usd}")."""

    def __init__(self, formats: Mapping[str, Format]) -> None:
        super().__init__()
        self.formats = formats

    def format_field(self, value: Any, format_spec: str) -> str:
        named = self.formats.get(format_spec)
        return named(value) if named is not None else super().format_field(value, format_spec)


def rows(**by_view: int) -> Mapping[str, int]:
    """The row a figure takes in each view that shows it: ``rows(terminal=4, compare=9)``."""
    unknown = set(by_view) - set(VIEWS)
    if unknown:
        raise ValueError(f"unknown views {sorted(unknown)}; the views are {VIEWS}")
    return MappingProxyType(by_view)


@dataclass(**FROZEN)
class Headline:
    """One headline figure: where it is in the plan document, how it is named and written, where it shows."""

    pointer: str                 # JSON Pointer into the plan document
    label: str                   # a format string over the plan document
    unit: str                    # as the exports and compare write it: "USD", "USD/year", "kW"
    rows: Mapping[str, int]      # view -> the figure's row in that view (rows())
    format: str = ""             # a name in FORMATS, else a Python format spec
    short_label: str = ""        # the label without document values (compare); default: label
    card_label: str = ""         # the HTML card's label; default: label
    terminal: str = ""           # the terminal's text where it shows more than the number
    note: str = ""               # JSON Pointer to a text saying where the figure came from (compare shows it)

    @property
    def key(self) -> str:
        """The pointer as a dotted path: "cost.tco_usd" (compare's key)."""
        return self.pointer[1:].replace("/", ".")

    def value(self, plan: Mapping[str, Any]) -> Any:
        """The figure in ``plan`` (a plan document); None where it has none."""
        return lookup(plan, self.pointer)

    def note_of(self, plan: Mapping[str, Any]) -> str | None:
        """The figure's note in ``plan`` (where it came from); None without one."""
        return lookup(plan, self.note) if self.note else None

    def title(self, view: str, plan: Mapping[str, Any] | None = None) -> str:
        """The label ``view`` shows; compare's names no document value, so needs no ``plan``."""
        if view == COMPARE:
            return self.short_label or self.label
        label = self.card_label if view == HTML and self.card_label else self.label
        return label.format_map(plan)

    def text(self, view: str, plan: Mapping[str, Any]) -> str:
        """The figure as ``view`` (terminal or HTML) writes it."""
        formatter = _Formatter(FORMATS[view])
        if view == TERMINAL and self.terminal:
            return formatter.vformat(self.terminal, (), plan)
        return formatter.format_field(self.value(plan), self.format)


def shown(view: str) -> tuple[Headline, ...]:
    """The headline figures ``view`` shows, in its order."""
    return tuple(sorted((h for h in HEADLINES if view in h.rows), key=lambda h: h.rows[view]))


def _opex(name: str, row: int) -> Headline:
    return Headline(pointer=f"/cost/opex_usd_per_year/{name}", label=f"Opex: {name}", unit="USD/year",
                    format="usd", rows=rows(compare=row))


def _training(name: str, label: str, unit: str, row: int, tables: int = 0) -> Headline:
    """A figure of the plan's training prediction (a scenario with a [workload]); compare shows it, and the
    exports' summary (CSV, Markdown, XLSX) where ``tables`` gives its row."""
    return Headline(pointer=f"/training/{name}", label=label, unit=unit,
                    rows=rows(compare=row, **({"tables": tables} if tables else {})))


HEADLINES: tuple[Headline, ...] = (
    Headline(pointer="/cost/capex_usd", label="Capex (hardware)", unit="USD", format="usd",
             rows=rows(terminal=1, html=1, tables=1, compare=1)),
    Headline(pointer="/cost/one_off_usd", label="One-off (integration, setup staff)", unit="USD", format="usd",
             card_label="One-off (integration, setup)", rows=rows(terminal=2, html=2, tables=2, compare=2)),
    Headline(pointer="/cost/opex_usd_per_year/total", label="Opex per year", unit="USD/year", format="usd",
             rows=rows(terminal=3, html=3, tables=3, compare=3)),
    *(_opex(name, 4 + i) for i, name in enumerate(("electricity", "colocation", "support", "staff", "software"))),
    _opex("financing", 9),
    Headline(pointer="/cost/residual_usd", label="Residual value at {cost[years]} years", short_label="Residual value",
             unit="USD", format="usd", rows=rows(terminal=6, html=6, tables=6, compare=12)),
    Headline(pointer="/cost/tco_usd", label="TCO over {cost[years]} years", short_label="TCO", unit="USD",
             format="usd", rows=rows(terminal=4, html=4, tables=4, compare=10)),
    Headline(pointer="/cost/npv_usd", label="NPV of costs at {cost[discount_rate]:.0%}", short_label="NPV of costs",
             unit="USD", format="usd", rows=rows(terminal=5, html=5, tables=5, compare=11)),
    Headline(pointer="/cost/capex_per_gpu_usd", label="Capex per GPU, fully loaded", unit="USD/GPU", format="usd",
             rows=rows(terminal=7, html=7, tables=7, compare=15)),
    Headline(pointer="/cost/cost_per_gpu_hour_usd", label="Cost per delivered GPU-hour (cash, {cost[years]} years)",
             short_label="Cost per delivered GPU-hour (cash)", card_label="Cost per GPU-hour, cash",
             unit="USD/GPU-hour", format="price", rows=rows(terminal=8, html=8, tables=8, compare=13)),
    Headline(pointer="/cost/economic_cost_per_gpu_hour_usd", label="Cost per delivered GPU-hour (economic, over life)",
             short_label="Cost per delivered GPU-hour (economic)", card_label="Cost per GPU-hour, economic",
             unit="USD/GPU-hour", format="price", rows=rows(terminal=9, html=9, tables=9, compare=14)),
    Headline(pointer="/cost/delivered_gpu_hours_per_year", label="Delivered GPU-hours per year",
             unit="GPU-hours/year", rows=rows(tables=10)),
    Headline(pointer="/design/num_gpus", label="GPUs", unit="GPUs", rows=rows(tables=11, compare=17)),
    Headline(pointer="/design/num_nodes", label="Nodes", unit="nodes", rows=rows(tables=12)),
    Headline(pointer="/design/num_racks", label="Racks", unit="racks", rows=rows(terminal=10, html=12, tables=13,
                                                                                 compare=18),
             terminal="{design[num_racks]:,} ({design[racks][compute]:,} compute, "
                      "{design[racks][infrastructure]:,} network+storage)"),
    Headline(pointer="/design/it_power_kw", label="IT power (max)", unit="kW", format="kw",
             rows=rows(html=10, tables=14, compare=19)),
    Headline(pointer="/design/it_power_kw", label="IT power (max / typical)", unit="kW", rows=rows(terminal=11),
             terminal="{design[it_power_kw]:kw} / {design[it_typical_power_kw]:kw}"),
    Headline(pointer="/design/it_typical_power_kw", label="IT power (typical)", unit="kW", rows=rows(tables=15)),
    Headline(pointer="/design/facility_power_kw", label="Facility power (x PUE)", short_label="Facility power",
             unit="kW", format="kw", rows=rows(terminal=12, html=11, tables=16, compare=20)),
    Headline(pointer="/cost/years", label="Years", unit="years", rows=rows(tables=17, compare=16)),
    Headline(pointer="/cheapest_cloud/total_usd", label="Cheapest cloud: {cheapest_cloud[offer]}", unit="USD",
             rows=rows(terminal=13),
             terminal="{cheapest_cloud[total_usd]:usd} ({cheapest_cloud[vs_own]:.2f}x own's TCO), cash "
                      "break-even {cheapest_cloud[breakeven_months]:months}"),
    Headline(pointer="/cost/utilization", label="Utilization (paid hours)", unit="fraction", format=".0%",
             rows=rows(terminal=14, html=13, tables=18, compare=32),
             card_label="Utilization ({cost[utilization_source]})", note="/cost/utilization_source",
             terminal="{cost[utilization]:.0%} ({cost[utilization_source]})"),
    Headline(pointer="/cheapest_cloud/breakeven_months", label="Cash break-even vs {cheapest_cloud[offer]}",
             unit="months", format="months", rows=rows(html=14)),
    Headline(pointer="/design/fabric/num_switches", label="Fabric switches", unit="switches", rows=rows(compare=21)),
    Headline(pointer="/design/fabric/bisection_bw_Bps_per_gpu", label="Bisection bandwidth per GPU", unit="B/s",
             rows=rows(compare=22)),
    _training("step_time_s", "Training step time", "s", 23),
    _training("tokens_per_s", "Training tokens per second", "tokens/s", 24),
    _training("mfu", "Training MFU", "fraction", 25, tables=19),
    _training("mfu_causal", "Training MFU as papers count it (6N + causal attention)", "fraction", 26, tables=20),
    _training("time_to_train_s", "Time to train", "s", 27),
    _training("cost_to_train_usd", "Cost to train (own cluster)", "USD", 28),
    _training("goodput", "Training goodput", "fraction", 29),
    _training("effective_time_to_train_s", "Time to train, effective (/ goodput)", "s", 30),
    _training("effective_cost_to_train_usd", "Cost to train (own cluster), effective", "USD", 31),
)
