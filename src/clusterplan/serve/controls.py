"""The page's controls: one row per input, each naming the scenario key it overrides (``section.key``).

A control's value is sent as the TOML text of a ``--set`` value (strings quoted, lists as arrays), so the page,
the URL and the CLI read it the same way. Choices come from the catalog and the model presets, never a list here.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from clusterplan.catalog import Catalog
from clusterplan.perf.presets import PRESETS
from clusterplan.report.figures import resolve
from clusterplan.report.svg import esc
from clusterplan.schema import AUTO, FROZEN
from clusterplan.spec import parse_override


@dataclass(**FROZEN)
class Control:
    """One input: its key, its label, and how it is entered ("number", "text", "select", "offers")."""

    key: str
    label: str
    kind: str = "number"
    family: str = ""          # catalog family of a select's choices; "models" for the presets
    step: str = "any"
    hint: str = ""


CONTROLS = (
    Control(key="cluster.gpu", label="GPU", kind="select", family="gpus"),
    Control(key="cluster.num_nodes", label="Nodes", step="1"),
    Control(key="cluster.gpus_per_node", label="GPUs per node", step="1"),
    Control(key="network.fabric", label="Fabric", kind="select", family="fabrics"),
    Control(key="network.nics_per_node", label="NICs per node", step="1"),
    Control(key="network.tiers", label="Switch tiers", step="1", hint="0 = as few as needed"),
    Control(key="network.oversubscription", label="Oversubscription", hint="1 = non-blocking"),
    Control(key="storage.usable_tb", label="Storage (TB usable)", kind="text", hint='TB, or "auto" (per GPU)'),
    Control(key="facility.electricity_usd_per_kwh", label="Electricity ($/kWh)"),
    Control(key="facility.pue", label="PUE"),
    Control(key="facility.colocation_usd_per_kw_month", label="Colocation ($/kW-month)"),
    Control(key="finance.utilization", label="Utilization", hint="0..1"),
    Control(key="finance.years", label="Years", step="1"),
    Control(key="finance.discount_rate", label="Discount rate"),
    Control(key="cloud.burst_offer", label="Burst offer", kind="select", family="cloud"),
    Control(key="workload.model", label="Workload model", kind="select", family="models"),
    Control(key="workload.tokens", label="Tokens", kind="text", hint='e.g. 2T; 0 = no budget'),
    Control(key="cloud.offers", label="Cloud offers", kind="offers", family="cloud"),
)


def _choices(control: Control, catalog: Catalog) -> list[tuple[str, str]]:
    if control.family == "models":
        return [("", "none (no workload)")] + [(name, name) for name in PRESETS]
    entries = catalog.families[control.family]
    head = [("", "none")] if control.key == "cloud.burst_offer" else []
    return head + [(entry_id, entry_id) for entry_id in entries]


def _toml(value: Any) -> str:
    """A ``--set`` value's TOML text."""
    return json.dumps(value) if isinstance(value, (str, list)) else repr(value)


def _offers(value: list[str], gpu: str, catalog: Catalog) -> str:
    """A checkbox per cloud offer of the cluster's GPU, and any other offer the scenario names."""
    ids = [i for i, entry in catalog.families["cloud"].items() if entry.gpu == gpu or i in value]
    boxes = "".join(f'<label class="offer"><input type="checkbox" value="{esc(i)}"{" checked" if i in value else ""}>'
                    f'{esc(i)}</label>' for i in ids)
    return f'<div class="offers" data-key="cloud.offers" data-value="{esc(_toml(value))}">{boxes}</div>'


def offers_html(scenario: dict[str, Any], catalog: Catalog) -> str:
    """The cloud-offer checkboxes for the scenario (``as_table(spec)``): they follow the GPU."""
    return _offers(list(scenario["cloud"]["offers"]), scenario["cluster"]["gpu"], catalog)


def _input(control: Control, value: Any, catalog: Catalog) -> str:
    value = AUTO if value is None else value   # a value left to the design
    name = esc(control.key)
    common = f'id="c-{name}" name="{name}" data-key="{name}" data-value="{esc(_toml(value))}"'
    if control.kind == "select":
        options = "".join(f'<option value="{esc(choice)}"{" selected" if choice == value else ""}>{esc(text)}</option>'
                          for choice, text in _choices(control, catalog))
        return f"<select {common}>{options}</select>"
    if control.kind == "text":
        return f'<input type="text" {common} value="{esc(value)}" placeholder="{esc(control.hint)}">'
    return f'<input type="number" {common} value="{esc(value)}" step="{control.step}">'


def _typed(overrides: Sequence[str]) -> dict[str, Any]:
    """The value each override gives its key, read by the one reader of ``--set`` (spec.py ``parse_override``:
    bounded TOML, else the plain text); the overrides have already loaded the scenario shown."""
    return dict(parse_override(override) for override in overrides)


def controls_html(scenario: dict[str, Any], catalog: Catalog, overrides: Sequence[str] = ()) -> str:
    """Every control, set to the scenario's value (``as_table(spec)``), with a place for its error; a text
    control shows its override as typed ("2T", not 2000000000000.0)."""
    typed = _typed(overrides)
    rows = []
    for control in CONTROLS:
        value = resolve(scenario, "/" + control.key.replace(".", "/"))
        if control.kind == "text" and control.key in typed:
            value = typed[control.key]
        if control.kind == "offers":
            widget = f'<div id="offers">{_offers(list(value), scenario["cluster"]["gpu"], catalog)}</div>'
        else:
            widget = _input(control, value, catalog)
        hint = f'<span class="hint">{esc(control.hint)}</span>' if control.hint and control.kind != "text" else ""
        rows.append(f'<div class="control" data-control="{esc(control.key)}"><label for="c-{esc(control.key)}">'
                    f'{esc(control.label)}</label>{widget}{hint}<div class="error" role="alert"></div></div>')
    return "".join(rows)
