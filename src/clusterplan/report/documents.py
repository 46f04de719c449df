"""JSON-ready documents of sensitivity, compare and report (schemas in docs/json.md).

Like ``export.plan_document``, each is the one result its renderers draw:
terminal, JSON, HTML, CSV and XLSX cannot disagree.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath
from typing import Any

from clusterplan import __version__
from clusterplan.plan.report import Report
from clusterplan.report.export import collectives_document, layout_table, memory_table, plan_document
from clusterplan.report.size import size_document
from clusterplan.schema import as_table

SENSITIVITY_SCHEMA = "clusterplan.sensitivity/1"
COMPARE_SCHEMA = "clusterplan.compare/1"
REPORT_SCHEMA = "clusterplan.report/1"


def _outcome(outcome: Any) -> dict[str, Any]:
    return {"tco_usd": outcome.tco_usd, "cost_per_gpu_hour_usd": outcome.cost_per_gpu_hour_usd,
            "breakeven_months": outcome.breakeven_month}


def _distribution(distribution: Any) -> dict[str, Any] | None:
    return None if distribution is None else as_table(distribution)


def _breakeven_swing(swing: Any, horizon_months: int) -> int:
    """Months between the break-even at the input's low and high end, never counted as the month past the
    horizon."""
    never = horizon_months + 1
    low, high = (never if month is None else month for month in (swing.low.breakeven_month,
                                                                 swing.high.breakeven_month))
    return abs(high - low)


def sensitivity_document(result: Any, *, spec: Any) -> dict[str, Any]:
    """A ``sensitivity.Sensitivity`` as a document."""
    model, mc = result.model, result.monte_carlo
    edges, counts = mc.tco_histogram
    return {
        "schema": SENSITIVITY_SCHEMA, "version": __version__,
        "offer": model.offer, "years": model.years, "horizon_months": model.horizon_months,
        "num_gpus": model.num_gpus,
        "distribution": "triangular(low, nominal, high)", "quantiles": "inverted CDF (each a sampled value)",
        "inputs": [{**as_table(item), "varies": item.varies} for item in model.inputs],
        "nominal": _outcome(result.nominal),
        "tornado": [{"key": swing.input.key, "name": swing.input.name, "unit": swing.input.unit,
                     "low_value": swing.input.low, "high_value": swing.input.high,
                     "low": _outcome(swing.low), "high": _outcome(swing.high),
                     "tco_swing_usd": swing.tco_swing_usd,
                     "breakeven_swing_months": _breakeven_swing(swing, model.horizon_months)}
                    for swing in result.tornado],
        "monte_carlo": {
            "samples": mc.samples, "seed": mc.seed,
            "tco_usd": _distribution(mc.tco_usd), "cost_per_gpu_hour_usd": _distribution(mc.cost_per_gpu_hour_usd),
            "breakeven_months": _distribution(mc.breakeven_month),
            "breakeven_probability": mc.breakeven_probability,
            "drivers": {metric: [{"key": key, "rank_correlation": rho} for key, rho in pairs]
                        for metric, pairs in mc.drivers.items()},
            "tco_histogram": {"edges_usd": list(edges), "counts": list(counts)},
        },
        "scenario": as_table(spec),
    }


def compare_document(comparison: Any, *, sources: list[str], scenarios: list[Any],
                     varied: Sequence[Any] = ()) -> dict[str, Any]:
    """A ``compare.Comparison`` as a document; unchanged rows are kept, flagged and counted. ``varied`` are the
    ``compare.Vary`` of a ``--vary`` grid (its keys and the values each takes, as given), empty for files."""
    headlines = [{"key": f.key, "name": f.name, "unit": f.unit, "values": list(f.values),
                  "deltas": list(f.deltas), "changed": f.changed, **({"notes": list(f.notes)} if f.notes else {})}
                 for f in comparison.headlines]
    bom = [{"category": line.category, "id": line.catalog_id, "item": line.item, "per": line.per,
            "quantities": list(line.quantities), "unit_prices_usd": list(line.unit_prices_usd),
            "totals_usd": list(line.totals_usd), "deltas_usd": list(line.deltas_usd), "changed": line.changed}
           for line in comparison.bom]
    return {
        "schema": COMPARE_SCHEMA, "version": __version__,
        "labels": list(comparison.labels), "baseline": comparison.labels[0],
        "sources": sources,
        "varied": [{"key": vary.key, "values": list(vary.values)} for vary in varied],
        "headlines": headlines, "bom": bom,
        "unchanged": {"headlines": sum(not h["changed"] for h in headlines),
                      "bom": sum(not line["changed"] for line in bom)},
        "scenarios": [as_table(spec) for spec in scenarios],
    }


SWEEP_FIGURES = ("layout", "step_time_s", "tokens_per_s", "mfu", "memory_bytes_per_gpu", "time_to_train_s")


def sweep_row(*, gpus: int, gpus_per_node: int, job: Any = None, reason: str = "") -> dict[str, Any]:
    """One job size of the training sweep (a ``plan.training.Training``): its best layout's figures.

    Where nothing fits, or ``reason`` says why the size cannot be asked for, the figures are null and
    ``reason`` names the rule that removed the last candidates: the search applies its rules in turn and
    counts them in that order, so the last one counted is the one that left none.
    """
    row = {"gpus": gpus, "num_nodes": gpus // gpus_per_node}
    best = job.best if job is not None else None
    if best is None:
        if job is not None:
            reason = list(job.search.rejected)[-1] if job.search.rejected else "no layout to search"
        return {**row, "feasible": False, "reason": reason, **dict.fromkeys(SWEEP_FIGURES), "cost_to_train_usd": {}}
    band = job.band                  # the evidence behind the size's figures (docs/evidence.md)
    step_low, step_high = band.time_range(best.step.total)
    tokens_low, tokens_high = band.rate_range(best.tokens_per_s)
    time_low, time_high = band.time_range(job.time_to_train_s) if job.time_to_train_s else (None, None)
    return {**row, "feasible": True, "reason": None, "layout": layout_table(best.layout),
            "step_time_s": best.step.total, "step_time_s_low": step_low, "step_time_s_high": step_high,
            "tokens_per_s": best.tokens_per_s, "tokens_per_s_low": tokens_low, "tokens_per_s_high": tokens_high,
            "mfu": best.mfu, "memory_bytes_per_gpu": memory_table(best.memory),
            "time_to_train_s": job.time_to_train_s, "time_to_train_s_low": time_low,
            "time_to_train_s_high": time_high, "cost_to_train_usd": dict(job.costs_usd),
            "regime": band.regime, "regime_n": band.n, "out_of_domain": list(band.out_of_domain)}


def scenario_title(name: str, path: str | None, overrides: Sequence[str]) -> str:
    """The scenario's ``about.name``, else its file's name, else "reference scenario"; with the overrides named."""
    base = name or (PurePath(path).stem if path else "reference scenario")
    return f"{base} with {', '.join(overrides)}" if overrides else base


def scenario_source(path: str | None, overrides: Sequence[str]) -> str:
    """The scenario as a command line gives it: the file (or "reference scenario") and each --set."""
    return " ".join([path or "reference scenario", *(f"--set {override}" for override in overrides)])


def report_document(report: Report, *, title: str, source: str) -> dict[str, Any]:
    """What the HTML report shows (a ``plan.report.Report``): the plan, predicted (and measured) collectives,
    the sensitivity and, with a workload, the training sweep (``{hbm_bytes_per_gpu, sweep: [sweep_row ...]}``).

    A later part is one more key here and one more section renderer in report/html.py.
    """
    whole = report.plan
    training = None
    if report.sweep is not None:
        per_node = whole.design.gpus_per_node
        training = {"hbm_bytes_per_gpu": whole.design.parts.gpu.hbm_bytes,
                    "sweep": [sweep_row(gpus=point.gpus, gpus_per_node=per_node, job=point.job, reason=point.reason)
                              for point in report.sweep]}
    return {"schema": REPORT_SCHEMA, "version": __version__, "title": title, "source": source,
            "plan": plan_document(whole), "collectives": [collectives_document(c) for c in report.collectives],
            "sensitivity": sensitivity_document(report.sensitivity, spec=whole.spec), "training": training,
            "size": size_document(report.sizing) if report.sizing is not None else None}


def live_document(whole: Any, *, title: str, source: str) -> dict[str, Any]:
    """The report document of one plan alone (a ``plan.Plan``), for the live page (serve/): the sections that
    follow the controls (no collectives, sensitivity or per-job-size sweep, which take seconds, not milliseconds).
    """
    training = None
    if whole.training is not None:
        training = {"hbm_bytes_per_gpu": whole.design.parts.gpu.hbm_bytes, "sweep": []}
    return {"schema": REPORT_SCHEMA, "version": __version__, "title": title, "source": source,
            "plan": plan_document(whole), "collectives": [], "sensitivity": None, "training": training}
