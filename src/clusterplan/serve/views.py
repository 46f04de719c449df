"""Every answer of the live page, a pure function of (scenario file, overrides): documents, fragments, TOML.

The overrides are ``section.key=value`` strings read exactly like ``--set``; the documents are the CLI's
(``plan_document``, ``train_document``, ``compare_document``) and the HTML is the report's section renderers.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from clusterplan.compare import compare
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.plan import plan
from clusterplan.plan.core import Plan
from clusterplan.report import html
from clusterplan.report.documents import compare_document, live_document
from clusterplan.report.export import plan_document, train_document
from clusterplan.report.html_analysis import compare_parts
from clusterplan.report.html_training import training
from clusterplan.report.page import Part, sections
from clusterplan.report.training import reasons
from clusterplan.plan.ownership import today
from clusterplan.spec import Spec, load_scenario

# The report's sections that follow the controls, in the report's order (report/html.py).
SECTIONS = (html.summary, html.capex, html.opex, html.ownership, html.power, html.fabric, html.warnings, training)
BASELINE, CURRENT = "baseline (pinned)", "current"


def planned(scenario: str | None, overrides: Sequence[str], *, top: int = 10) -> Plan:
    """``clusterplan plan SCENARIO --set ...``'s result: errors carry the file line or the ``--set`` they came from."""
    loaded = load_scenario(scenario, list(overrides))
    with loaded.located():
        return plan(loaded.spec, top=top, today=today())


def field(error: ConfigError | InfeasiblePlan) -> str:
    """The dotted key an error is about (``cluster.num_nodes``), "" where it names none."""
    if isinstance(error, InfeasiblePlan):
        return ""
    key = re.sub(r"\[\d+\]$", "", error.key)
    if not key and error.source.startswith("--set "):
        key = error.source.removeprefix("--set ").partition("=")[0].strip()
    return key


def title(spec: Spec, scenario: str | None) -> str:
    return spec.about.name or (Path(scenario).stem if scenario else "reference scenario")


def plan_json(scenario: str | None, overrides: Sequence[str]) -> dict[str, Any]:
    """``clusterplan plan --format json``."""
    return plan_document(planned(scenario, overrides))


def train_json(scenario: str | None, overrides: Sequence[str]) -> dict[str, Any]:
    """``clusterplan train --format json`` (the best layout only, as without ``--search``)."""
    result = planned(scenario, overrides, top=1)
    if not result.spec.workload.defined:
        raise ConfigError("no model: set workload.model to a preset", key="workload.model")
    document = train_document(result)
    if not document["feasible"]:
        raise InfeasiblePlan(f"no layout of {document['model']['name']} fits {document['num_gpus']:,} GPUs: "
                             f"{reasons(document['rejected'])}")
    return document


def compare_json(scenario: str | None, baseline: Sequence[str], current: Sequence[str]) -> dict[str, Any]:
    """``clusterplan compare`` of the scenario under two sets of overrides: the pinned baseline first."""
    return _compared(scenario, (baseline, current), (planned(scenario, baseline), planned(scenario, current)))


def _compared(scenario: str | None, overrides: tuple[Sequence[str], Sequence[str]],
              plans: tuple[Plan, Plan]) -> dict[str, Any]:
    comparison = compare([BASELINE, CURRENT], [plan_document(p) for p in plans])
    sources = [" ".join(f"--set {o}" for o in each) or (scenario or "reference scenario") for each in overrides]
    return compare_document(comparison, sources=sources, scenarios=[p.spec for p in plans])


def report_html(scenario: str | None, overrides: Sequence[str], baseline: Sequence[str] | None = None) -> str:
    """The report's sections for the scenario with ``overrides``; with a pinned ``baseline``, compare's first."""
    whole = planned(scenario, overrides)
    document = live_document(whole, title=title(whole.spec, scenario), source=scenario or "reference scenario")
    parts = [part for render in SECTIONS if (part := render(document)) is not None]
    if baseline is not None:
        compared = compare_parts(_compared(scenario, (baseline, overrides), (planned(scenario, baseline), whole)))
        parts[1:1] = [Part(anchor=f"compare-{p.anchor}", title=f"Pinned baseline vs current: {p.title}",
                           body=p.body) for p in compared]
    return sections(parts)
