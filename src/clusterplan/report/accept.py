"""The ``clusterplan.accept/1`` document, its terminal summary and its HTML report (docs/accept.md, docs/json.md).

The document holds every check (measured, predicted, ratio, verdict, likely cause), every node's
verdict (failing nodes first), the run's settings and its raw measurements (what ``calibrate``
reads). The terminal summary and the HTML page draw the document, nothing else.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TextIO

from clusterplan import __version__
from clusterplan.plan.accept import Acceptance, Check
from clusterplan.report.page import Part, page, section, table
from clusterplan.report.svg import Axis, Mark, esc, figure
from clusterplan.schema import as_table
from clusterplan.verdicts import ACCEPT_SCHEMA

EXIT_CODES = {"pass": 0, "warn": 0, "skip": 0, "fail": 4}
ORDER = {"fail": 0, "warn": 1, "pass": 2, "skip": 3}
COLOURS = {"fail": "#e15759", "warn": "#edc948", "pass": "#59a14f", "skip": "#bab0ac"}


def accept_document(result: Acceptance) -> dict[str, Any]:
    built, run = result.design, result.run
    checks = [_check(c) for c in result.checks]
    counts = {name: sum(1 for c in result.checks if c.verdict == name) for name in ORDER}
    return {
        "schema": ACCEPT_SCHEMA, "version": __version__, "verdict": result.verdict,
        "exit_code": EXIT_CODES[result.verdict], "counts": counts, "expectations": result.expectations,
        "thresholds": {"fail_ratio": result.thresholds.fail_ratio, "warn_ratio": result.thresholds.warn_ratio,
                       "small_fail_ratio": result.thresholds.small_fail_ratio,
                       "small_warn_ratio": result.thresholds.small_warn_ratio,
                       "large_bytes": result.thresholds.large_bytes},
        "design": {"gpu": built.parts.gpu.id, "num_nodes": built.num_nodes, "gpus_per_node": built.gpus_per_node,
                   "nics_per_node": built.nics_per_node, "fabric": built.parts.fabric.id,
                   "link_rate_Gbps": built.parts.fabric.link_rate_Bps * 8 / 1e9, "topology": built.topology.kind},
        "run": _run(result) if run is not None else None,
        "nodes": _nodes(result),
        "checks": checks,
        "measurements": _measurements(result) if run is not None else None,
        "scenario": as_table(result.spec),
    }


def _check(c: Check) -> dict[str, Any]:
    return {"phase": c.phase, "nodes": list(c.nodes), "subject": c.subject, "check": c.check,
            "size_bytes": c.size_bytes, "unit": c.unit, "measured": c.measured, "predicted": c.predicted,
            "ratio": c.ratio, "verdict": c.verdict, "cause": c.cause}


def _run(result: Acceptance) -> dict[str, Any]:
    run, s = result.run, result.run.settings
    return {"launcher": run.launcher, "backend": s.backend, "device": s.device_kind, "world_size": run.world_size,
            "num_nodes": len(run.nodes), "ranks_per_node": s.ranks_per_node, "sizes_bytes": list(s.sizes),
            "iterations": s.iterations, "warmup": s.warmup, "gemm": {"dtype": s.gemm_dtype, "size": s.gemm_size},
            "memcpy_bytes": s.memcpy_bytes, "pairing": s.pairing, "elapsed_s": run.elapsed_s,
            "phases": [{"phase": name, "seconds": seconds} for name, seconds in run.phases],
            "failure": dict(run.failure) if run.failure is not None else None}


def _nodes(result: Acceptance) -> list[dict[str, Any]]:
    ranks = {node.name: list(node.ranks) for node in result.run.nodes} if result.run is not None else {}
    rows = []
    for name, judged in result.node_verdicts().items():
        mine = [c for c in result.checks if name in c.nodes]
        ratios = [c.ratio for c in mine if c.ratio is not None]
        rows.append({"name": name, "ranks": ranks.get(name, []), "verdict": judged,
                     "fail": sum(c.verdict == "fail" for c in mine), "warn": sum(c.verdict == "warn" for c in mine),
                     "worst_ratio": min(ratios) if ratios else None})
    return sorted(rows, key=lambda row: (ORDER[row["verdict"]], -row["fail"], row["worst_ratio"] or 0, row["name"]))


def _measurements(result: Acceptance) -> dict[str, Any]:
    run = result.run
    node_of = {rank: node.name for node in run.nodes for rank in node.ranks}
    return {"devices": [{"rank": rank, "node": node_of.get(rank), **dict(values)}
                        for rank, values in sorted(run.devices.items())],
            "collectives": [{"phase": c.phase, "group": c.group, "op": c.op, "ranks": list(c.ranks),
                             "num_nodes": c.num_nodes,
                             "rows": [{"size_bytes": size, "time_s": time_s, "wrong": wrong}
                                      for size, time_s, wrong in c.rows]} for c in run.collectives]}


def _value(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def _label(check: Mapping[str, Any]) -> str:
    size = check.get("size_bytes")
    return f"{check['check']} {_size(size)}" if size else check["check"]


def _size(size: float) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if size >= scale:
            return f"{size / scale:g} {unit}"
    return f"{size:g} B"


def render_accept(doc: Mapping[str, Any], stream: TextIO) -> None:
    """The terminal summary: the verdict, the nodes failing first, each failing or warning check and its cause."""
    counts = doc["counts"]
    stream.write(f"clusterplan accept: {doc['verdict'].upper()} (exit {doc['exit_code']}): {counts['fail']} fail, "
                 f"{counts['warn']} warn, {counts['pass']} pass, {counts['skip']} skip; judged against the "
                 f"{doc['expectations']}\n")
    run = doc["run"]
    if run:
        stream.write(f"# {run['world_size']} ranks on {run['num_nodes']} nodes, {run['backend']} on "
                     f"{run['device']}; phases: " + ", ".join(f"{p['phase']} {p['seconds']:.1f} s"
                                                                for p in run["phases"]) + "\n")
    stream.write(f"\n{'node':<24} {'verdict':<8} {'fail':>5} {'warn':>5} {'worst ratio':>12}\n")
    for node in doc["nodes"]:
        ratio = f"{node['worst_ratio']:.2f}" if node["worst_ratio"] is not None else "-"
        stream.write(f"{node['name']:<24} {node['verdict'].upper():<8} {node['fail']:>5} {node['warn']:>5} "
                     f"{ratio:>12}\n")
    order = {node["name"]: index for index, node in enumerate(doc["nodes"])}
    shown = sorted((c for c in doc["checks"] if c["verdict"] in ("fail", "warn")),
                   key=lambda c: (ORDER[c["verdict"]], min(order.get(n, 0) for n in c["nodes"] or [""])))
    if shown:
        stream.write("\n")
    for c in shown:
        unit = f" {c['unit']}" if c["unit"] else ""
        ratio = f" ({c['ratio']:.2f})" if c["ratio"] is not None else ""
        stream.write(f"{c['verdict'].upper():<5} {', '.join(c['nodes']) or '-'}: {c['phase']}, {c['subject']}, "
                     f"{_label(c)}: {_value(c['measured'])}{unit} vs {_value(c['predicted'])}{unit}{ratio}\n"
                     f"      {c['cause']}\n")
    skipped = sorted({c["cause"] for c in doc["checks"] if c["verdict"] == "skip" and c["cause"]})
    for cause in skipped:
        stream.write(f"skip: {cause}\n")


def accept_part(doc: Mapping[str, Any], prefix: str = "") -> Part:
    """The acceptance section: verdict cards, the per-node chart (failing nodes in red) and the checks table.

    ``prefix`` is the JSON Pointer of ``doc`` inside the page's document ("/acceptance" in the report).
    """
    counts = doc["counts"]
    cards = "".join(f'<div class="card"><div class="k">{esc(name)}</div>'
                    f'<div class="v" data-pointer="{prefix}/counts/{name}" data-value="{counts[name]!r}">{counts[name]}'
                    f'</div></div>' for name in ORDER)
    head = (f'<p class="sub">Verdict <strong data-pointer="{prefix}/verdict">{esc(doc["verdict"].upper())}</strong> '
            f'(exit {doc["exit_code"]}), judged against the {esc(doc["expectations"])}.</p>'
            f'<div class="cards">{cards}</div>')
    rows = []
    for index, c in enumerate(doc["checks"]):
        if c["verdict"] == "pass" and c["phase"] == "audit":
            continue
        colour = COLOURS[c["verdict"]]
        ratio = f"{c['ratio']:.2f}" if c["ratio"] is not None else "-"
        rows.append(f'<tr style="background:{colour}22"><td>{esc(", ".join(c["nodes"]))}</td><td>{esc(c["phase"])}'
                    f'</td><td>{esc(c["subject"])}</td><td>{esc(_label(c))}</td>'
                    f'<td class="num" data-pointer="{prefix}/checks/{index}/measured">{esc(_value(c["measured"]))}</td>'
                    f'<td class="num" data-pointer="{prefix}/checks/{index}/predicted">{esc(_value(c["predicted"]))}</td>'
                    f'<td class="num">{esc(c["unit"])}</td><td class="num" data-pointer="{prefix}/checks/{index}/ratio">'
                    f'{ratio}</td><td><strong>{esc(c["verdict"])}</strong></td><td>{esc(c["cause"])}</td></tr>')
    checks = table(("node", "phase", "subject", "check", "measured", "predicted", "unit", "ratio", "verdict",
                    "likely cause"), rows, numeric=(4, 5, 6, 7))
    return section("acceptance", "Acceptance", head + node_chart(doc, prefix) + "<h3>Checks (audit passes left out)</h3>"
                   + checks)


def node_chart(doc: Mapping[str, Any], prefix: str = "") -> str:
    """Per node and phase, the worst measured / predicted ratio; failing nodes' labels and bars in red."""
    phases = ("device", "intra-node", "node pairs", "cluster")
    nodes = [node for node in doc["nodes"] if node["name"] != "cluster"]
    rows: list[tuple[str, str, str, Mark]] = []
    for node in nodes:
        for phase in phases:
            mine = [(i, c) for i, c in enumerate(doc["checks"])
                    if c["phase"] == phase and node["name"] in c["nodes"] and c["ratio"] is not None]
            if mine:
                index, c = min(mine, key=lambda item: item[1]["ratio"])
                rows.append((node["name"], phase, node["verdict"],
                             Mark(value=c["ratio"], pointer=f"{prefix}/checks/{index}/ratio",
                                  tip=f"{node['name']} {phase} {_label(c)}: {_value(c['measured'])} vs "
                                      f"{_value(c['predicted'])} {c['unit']} ({c['ratio']:.2f})")))
    if not rows:
        return '<p class="muted">No measurement was judged against a prediction.</p>'
    high = max(1.2, max(mark.value for *_, mark in rows) * 1.05)
    axis = Axis(low=0.0, high=high, ticks=tuple(t / 4 for t in range(int(high * 4) + 1)),
                label="measured / predicted (worst check of the phase)", format=lambda v: f"{v:.2f}")
    width, left, right, top = 760, 250.0, 700.0, 36.0
    slot = 20.0
    height = top + slot * len(rows) + 50
    out = []
    for tick in axis.ticks:
        x = axis.at(tick, left, right)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - 44:.1f}" stroke="#e3e3e3"/>'
                   f'<text x="{x:.1f}" y="{height - 30:.1f}" text-anchor="middle" class="tick">{tick:.2f}</text>')
    for ratio, name in ((doc["thresholds"]["fail_ratio"], "fail"), (doc["thresholds"]["warn_ratio"], "warn")):
        x = axis.at(ratio, left, right)
        out.append(f'<line x1="{x:.1f}" y1="{top}" x2="{x:.1f}" y2="{height - 44:.1f}" stroke="{COLOURS[name]}" '
                   f'stroke-dasharray="4 3"/>')
    for i, (node, phase, judged, mark) in enumerate(rows):
        y = top + slot * i
        failing = judged == "fail"
        colour = COLOURS["fail"] if failing else "#4e79a7"
        weight = ' font-weight="700" fill="#e15759"' if failing else ""
        x1 = axis.at(min(mark.value, high), left, right)
        out.append(f'<text x="{left - 8:.1f}" y="{y + 14:.1f}" text-anchor="end" class="tick"{weight}>'
                   f'{esc(node)} · {esc(phase)}</text><rect x="{left:.1f}" y="{y + 3:.1f}" '
                   f'width="{max(x1 - left, 0.5):.1f}" height="{slot - 6:.1f}" fill="{colour}" '
                   f'data-pointer="{esc(mark.pointer)}" data-value="{mark.value!r}" data-node="{esc(node)}" '
                   f'data-failing="{str(failing).lower()}"><title>{esc(mark.tip)}</title></rect>')
    out.append(f'<text x="{(left + right) / 2:.1f}" y="{height - 10:.1f}" text-anchor="middle" class="axis">'
               f'{esc(axis.label)}</text>')
    return figure("Measured vs predicted per node", "".join(out), width=width, height=int(height), chart="accept")


def render_accept_html(doc: Mapping[str, Any], stream: TextIO) -> None:
    """The acceptance report as one self-contained page."""
    stream.write(page("clusterplan acceptance report", f"{ACCEPT_SCHEMA} · clusterplan {doc['version']}",
                      [accept_part(doc)]))

