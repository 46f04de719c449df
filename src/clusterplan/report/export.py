"""The plan as one JSON-ready document (schema ``clusterplan.plan/1``, docs/json.md).

Every renderer draws this document, so the terminal, JSON and HTML views
cannot disagree.
"""

from __future__ import annotations

from typing import Any

from clusterplan import __version__
from clusterplan.cost import Costs
from clusterplan.design import Design
from clusterplan.plan import Plan
from clusterplan.perf.collectives import bus_factor
from clusterplan.perf.hardware import MEMORY_MARGIN
from clusterplan.perf.stragglers import straggler_slowdown
from clusterplan.plan.collectives import Collectives
from clusterplan.plan.scenario import utilization_source
from clusterplan.report.rentals import spot_line, terms_table
from clusterplan.schema import as_table
from clusterplan.units import plural

PLAN_SCHEMA = "clusterplan.plan/1"
TRAIN_SCHEMA = "clusterplan.train/1"


def plan_document(plan: Plan) -> dict[str, Any]:
    """The plan: its design, its costs, each cloud offer against owning, the hybrid option, warnings, training."""
    cloud = _cloud(plan)
    cheapest = next((row for row in cloud if row["offer"] == plan.cloud.headline), None)   # 24/7: never spot
    return {
        "schema": PLAN_SCHEMA,
        "version": __version__,
        "scenario": as_table(plan.spec),
        "design": _design(plan.design),
        "cost": {**_cost(plan.costs, plan.design), "utilization": plan.spec.finance.utilization,
                 "utilization_source": utilization_source(plan.spec)},
        "cloud": cloud,
        "cheapest_cloud": None if cheapest is None else {
            key: cheapest[key] for key in ("offer", "total_usd", "vs_own", "breakeven_months")},
        "hybrid": None if plan.hybrid is None else {
            "burst_offer": plan.hybrid.offer.id, "owned_nodes": plan.hybrid.owned_nodes,
            "num_nodes": plan.hybrid.num_nodes, "own_usd": plan.hybrid.own_usd,
            "burst_gpu_hours_per_year": plan.hybrid.burst_gpu_hours_per_year,
            "burst_usd": plan.hybrid.burst_usd, "total_usd": plan.hybrid.total_usd,
            "years": plan.hybrid.years,
        },
        "warnings": list(plan.warnings),
        "training": None if plan.training is None else training_section(plan.training),
    }


def _domain(design: Design) -> dict[str, Any]:
    """A rack-scale NVLink domain's keys (none where the domain is one server, as on HGX): docs/nvl72.md."""
    if design.domain_gpus == design.gpus_per_node:
        return {}
    return {"nvlink_domain_gpus": design.domain_gpus, "num_nvlink_domains": design.num_domains,
            "nvlink_domain_racks": design.parts.server.domain_racks, "nvlink_switch_trays": design.domain_switches}


def _design(design: Design) -> dict[str, Any]:
    """Nodes, racks, power, fabric and storage of the design."""
    topology, parts, racks = design.topology, design.parts, design.racks
    return {
        "gpu": parts.gpu.id, "server": parts.server.id,
        "num_gpus": design.num_gpus, "num_nodes": design.num_nodes,
        "gpus_per_node": design.gpus_per_node,
        **_domain(design),
        "num_racks": racks.num_racks,
        "racks": {"compute": racks.compute_racks, "infrastructure": racks.infrastructure_racks,
                  "servers_per_rack": racks.servers_per_rack,
                  "max_rack_power_kw": racks.max_rack_power_w / 1e3,
                  "rack_budget_kw": racks.budget_w / 1e3,
                  "power_kw": [power / 1e3 for power in racks.rack_power_w]},
        "it_power_kw": design.it_power_w / 1e3,
        "it_typical_power_kw": design.it_typical_power_w / 1e3,
        "facility_power_kw": design.facility_power_w / 1e3,
        "fabric": {
            "id": parts.fabric.id, "technology": parts.fabric.technology, "topology": topology.kind,
            "tiers": topology.tiers, "radix": topology.radix,
            "link_rate_Bps": parts.fabric.link_rate_Bps,
            "num_endpoints": topology.num_endpoints,
            "num_switches": topology.num_switches, "num_links": topology.num_links,
            "switches": dict(topology.switches), "links": dict(topology.links),
            "ports_used": topology.ports_used, "ports_available": topology.ports_available,
            "nic_transceivers": design.nic_transceivers, "switch_transceivers": design.switch_transceivers,
            "cabling": [{"link": run.link, "links": run.count, "length_m": run.length_m, "medium": run.medium,
                         "cable": run.cable.id, "cables": run.cables,
                         "nic_transceiver": run.nic_transceiver.id if run.nic_transceiver else None,
                         "nic_transceivers": run.nic_modules,
                         "switch_transceiver": run.switch_transceiver.id if run.switch_transceiver else None,
                         "switch_transceivers": run.switch_modules} for run in design.cabling],
            "bisection_bw_Bps_per_gpu": design.bisection_bw_Bps_per_gpu,
        },
        "staff": {"ops_engineers": design.staff.ops_engineers, "setup_engineers": design.staff.setup_engineers,
                  "ops_rule": design.staff.ops_rule, "setup_rule": design.staff.setup_rule},
        "storage": {"tier": parts.storage.id, "usable_tb": design.storage_tb, "rule": design.storage_rule,
                    "units": design.storage_units,
                    "read_Bps": design.storage_read_Bps, "write_Bps": design.storage_write_Bps},
        "burst_buffer": None if not design.burst_buffer_units else {
            "tier": parts.burst_buffer.id, "usable_tb": design.burst_buffer_tb, "rule": "storage.burst_buffer_tb",
            "units": design.burst_buffer_units, "read_Bps": design.burst_buffer_read_Bps,
            "write_Bps": design.burst_buffer_write_Bps},
    }


def _cost(costs: Costs, design: Design) -> dict[str, Any]:
    """Capex, one-off, opex, TCO and NPV, the per-GPU figures, the BoM and the cash over the horizon."""
    horizon_months, num_gpus, staff = 12 * costs.years, design.num_gpus, design.staff
    return {
        "capex_usd": costs.capex_usd,
        "capex_by_category_usd": costs.capex_by_category(),
        "one_off_usd": costs.one_off_usd,
        "opex_usd_per_year": {**costs.opex_usd_per_year, "total": costs.opex_total_usd_per_year},
        "opex_rules": {"staff": f"{staff.ops_engineers:,g} {plural(staff.ops_engineers, 'engineers')}, "
                                f"{staff.ops_rule}", **costs.opex_rules},
        "years": costs.years,
        "horizon_months": horizon_months,
        "tco_usd": costs.tco_usd,
        "npv_usd": costs.npv_usd,
        "residual_usd": costs.residual_usd,
        "residual_by_category_usd": costs.residual_by_category(),
        "assets": [{"asset": t.asset, "category": t.category, "warranty_years": t.warranty_years,
                    "support_start_years": t.support_start_years, "life_years": t.life_years, "source": t.source}
                   for t in costs.ownership.assets],
        "support_fraction_per_year": costs.ownership.support_fraction_per_year,
        "resale_fraction": costs.ownership.resale_fraction,
        "spare_nodes": costs.ownership.extras.spare_nodes,
        "maintenance_fraction_per_year": costs.ownership.maintenance_fraction_per_year,
        "sales_tax": sum(line.unit_price_usd for line in costs.bom if line.category == "tax"),
        "loan": {"rate": costs.ownership.loan_rate, "years": costs.ownership.loan_years},
        "licences": [{"id": c.licence, "name": c.name, "unit": c.unit, "units": c.units,
                      "unit_price_usd": c.unit_price_usd, "bundled_years": c.bundled_years, "source": c.source}
                     for c in costs.ownership.licences],
        "economic_usd_per_year": costs.economic_usd_per_year(),
        "economic_cost_per_gpu_hour_usd": costs.economic_cost_per_gpu_hour_usd,
        "discount_rate": costs.discount_rate,
        "delivered_gpu_hours_per_year": costs.delivered_gpu_hours_per_year,
        "cost_per_gpu_hour_usd": costs.cost_per_gpu_hour_usd,
        "capex_per_gpu_usd": costs.capex_per_gpu_usd,
        "tco_per_gpu_usd": costs.tco_usd / num_gpus,
        "bom": [_line(line) for line in costs.bom],
        "one_off": [_line(line) for line in costs.one_off],
        "cumulative_usd_by_month": [costs.cumulative_usd(m) for m in range(horizon_months + 1)],
        "cumulative_usd_by_year": [costs.cumulative_usd(12 * year) for year in range(costs.years + 1)],
    }


def _cloud(plan: Plan) -> list[dict[str, Any]]:
    """Each cloud offer renting the same GPU-hours: its cost, that cost over owning's TCO, its break-even."""
    return [{
        "offer": r.cost.offer.id, "name": r.cost.offer.name, "provider": r.cost.offer.provider,
        "gpu": r.cost.offer.gpu, "pricing": r.cost.offer.pricing,
        "usd_per_gpu_hour": r.cost.offer.price_usd, "term_years": r.cost.offer.term_years,
        "resale_fraction": r.cost.resale_fraction,
        "billed_gpu_hours_per_year": r.cost.billed_gpu_hours_per_year,
        "usd_per_year": r.cost.usd_per_year, "total_usd": r.cost.total_usd,
        "vs_own": r.cost.total_usd / plan.costs.tco_usd,
        "breakeven_months": r.breakeven_month,
        "source": r.cost.offer.source, "date": r.cost.offer.date,
    } for r in plan.rentals]


def _line(line: Any) -> dict[str, Any]:
    return {"category": line.category, "item": line.item, "id": line.catalog_id, "quantity": line.quantity,
            "per": line.per, "unit_price_usd": line.unit_price_usd, "total_usd": line.total_usd,
            "source": line.source, "assumption": line.assumption}


CATALOG_SCHEMA = "clusterplan.catalog/1"


def _context_source(model: Any) -> str:
    """Where the training context came from: the config's note, or a preset's publication."""
    return model.seq_len_note or f"the published training context ({model.source.split(';')[0]})"


def training_section(job: Any) -> dict[str, Any]:
    """The prediction of a workload (``plan.training.Training``): best layout first, then the others."""
    best = job.best
    model = job.model
    out: dict[str, Any] = {
        "model": {"name": model.name, "params": model.params, "active_params": model.active_params,
                  "layers": model.layers, "hidden": model.hidden, "heads": model.heads,
                  "kv_heads": model.query_groups, "head_dim": model.attention_head_dim,
                  "ffn_hidden": model.ffn_hidden, "experts": model.experts,
                  "experts_per_token": model.experts_per_token, "vocab": model.vocab, "seq_len": job.options.seq_len,
                  "seq_len_source": _context_source(model),
                  "max_context": model.max_context_length,
                  "model_flops_per_token": model.model_flops_per_token(job.options.seq_len)},
        "mfu_convention": "model FLOPs = 3 x forward matmul FLOPs (6N + 12 L h s, non-causal attention, logits; "
                          "no recomputation) / (GPUs x dense BF16 peak); mfu_causal: the same with causal attention "
                          "(6N + 6 L h s), the convention published runs use",
        "num_gpus": job.num_gpus, "global_batch": best.global_batch if best else job.options.global_batch,
        "global_batches_searched": list(job.search.global_batches), "precision": job.options.precision,
        "sparsity_speedup": job.options.sparsity_speedup, "memory_margin": MEMORY_MARGIN,
        "feasible": best is not None, "num_evaluated": job.search.num_evaluated,
        "rejected": dict(job.search.rejected),
    }
    if job.options.pipeline_schedule != "1f1b":     # only where it is not the default, as "ep" for experts
        out["pipeline_schedule"] = job.options.pipeline_schedule
    band = job.band
    out["evidence"] = evidence_table(band)
    if best is not None:
        out.update(_layout_fields(best, band))
        out["step_breakdown_share"] = {part: seconds / best.step.total
                                       for part, seconds in out["step_breakdown_s"].items()}
        reliability = job.reliability          # None when the cluster has no storage to checkpoint to
        out["goodput"] = job.goodput
        if reliability is not None:
            out["interruptions_per_day"] = reliability.interruptions_per_day
            out["checkpoint_interval_s"] = reliability.interval_s
        if job.tokens:
            out["tokens"] = job.tokens
            out["time_to_train_s"] = job.time_to_train_s
            out["cost_to_train_usd"] = job.costs_usd["own"]
            out["cloud_cost_to_train_usd"] = {k: v for k, v in job.costs_usd.items() if k != "own"}
            out["cheapest_cloud_to_train"] = job.cloud.headline
            out["cloud_excluded"] = dict(job.cloud.short)
            out["cloud_terms"] = terms_table(job.rentals)
            out["spot"] = spot_line(job)
            out.update(_ranged(band, time_to_train_s=job.time_to_train_s, cost_to_train_usd=job.costs_usd["own"]))
            out["cloud_cost_to_train_usd_low"], out["cloud_cost_to_train_usd_high"] = \
                job.cloud_cost_ranges(effective=False)
        if job.tokens and reliability is not None:
            effective = job.effective_costs_usd
            out["effective_time_to_train_s"] = job.effective_time_to_train_s
            out["expected_interruptions"] = reliability.expected_interruptions
            out["effective_cost_to_train_usd"] = effective["own"]
            out["effective_cloud_cost_to_train_usd"] = {k: v for k, v in effective.items() if k != "own"}
            out.update(_ranged(band, effective_time_to_train_s=job.effective_time_to_train_s,
                               effective_cost_to_train_usd=effective["own"]))
            out["effective_cloud_cost_to_train_usd_low"], out["effective_cloud_cost_to_train_usd_high"] = \
                job.cloud_cost_ranges(effective=True)
            out["spot_goodput"] = dict(job.offer_goodputs)   # a spot offer's goodput counts its reclaims
        if job.tokens and job.whole_run is not None:
            out.update(whole_run_fields(job))
    out["layouts"] = [_layout_fields(row, band) for row in job.search.best]
    out["warnings"] = list(job.warnings)
    return out


def whole_run_fields(job: Any) -> dict[str, Any]:
    """The whole run (docs/reliability.md#whole-run): its wall clock, billed GPU-hours and cost by cause, and the
    "whole run" band of published runs around them."""
    run, band = job.whole_run, job.whole_run_band
    cost = job.whole_run_cost_usd
    out = {"whole_run_time_to_train_s": run.wall_clock_s,
           "whole_run_gpu_hours": run.billed_s / 3600 * job.num_gpus,
           "whole_run_cost_to_train_usd": cost,
           "whole_run_breakdown_s": run.breakdown(),
           "whole_run_evidence": evidence_table(band)}
    out.update(_ranged(band, whole_run_time_to_train_s=run.wall_clock_s, whole_run_cost_to_train_usd=cost))
    return out


def evidence_table(band: Any) -> dict[str, Any]:
    """A ``perf.evidence.Band``: the regime, its n, median signed error and band; why out of domain."""
    return {"regime": band.regime, "n": band.n, "median_error": band.median, "low_error": band.low,
            "high_error": band.high, "out_of_domain": list(band.out_of_domain), "warning": band.warning or None}


def _ranged(band: Any, **times: float) -> dict[str, float]:
    """``name_low`` and ``name_high`` of each time (or cost in proportion to one) under ``band``."""
    out = {}
    for name, value in times.items():
        out[f"{name}_low"], out[f"{name}_high"] = band.time_range(value)
    return out


def layout_table(layout: Any) -> dict[str, Any]:
    """A ``perf.layout.Layout`` under the document's keys ("ep" and "etp", the experts' tensor-parallel size,
    only for an expert-parallel layout or one with whole experts)."""
    expert = {"ep": layout.ep, "etp": layout.etp or layout.tp} if layout.ep > 1 or layout.etp else {}
    return {"tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "cp": layout.cp, **expert, "mbs": layout.mbs,
            "vpp": layout.virtual_stages, "recompute": layout.recompute, "zero": layout.zero}


def memory_table(memory: Any) -> dict[str, float]:
    """A ``perf.memory.Memory``: bytes per GPU by part, and the total."""
    return {"weights": memory.weights, "gradients": memory.gradients, "optimizer": memory.optimizer,
            "gathered_weights": memory.gathered_weights, "activations": memory.activations,
            "reserved": memory.reserved, "total": memory.total}


def _layout_fields(row: Any, band: Any) -> dict[str, Any]:
    """One layout's prediction (a ``perf.step.Prediction``) as the document's fields, with the band's range of
    its step time and tokens/s (docs/evidence.md)."""
    step_low, step_high = band.time_range(row.step.total)
    tokens_low, tokens_high = band.rate_range(row.tokens_per_s)
    per_gpu_low, per_gpu_high = band.rate_range(row.tokens_per_s_per_gpu)
    return {"layout": {**layout_table(row.layout), "global_batch": row.global_batch}, "step_time_s": row.step.total,
            "step_time_s_low": step_low, "step_time_s_high": step_high,
            "step_breakdown_s": row.step.parts(), "tokens_per_s": row.tokens_per_s,
            "tokens_per_s_low": tokens_low, "tokens_per_s_high": tokens_high,
            "tokens_per_s_per_gpu": row.tokens_per_s_per_gpu,
            "tokens_per_s_per_gpu_low": per_gpu_low, "tokens_per_s_per_gpu_high": per_gpu_high,
            "tflops_per_gpu": row.tflops_per_gpu,
            "hardware_tflops_per_gpu": row.hardware_tflops_per_gpu, "mfu": row.mfu, "mfu_causal": row.mfu_causal,
            "precision_peak_fraction": row.precision_peak_fraction,
            "memory_bytes_per_gpu": memory_table(row.memory), "feasible": row.fits}


def train_document(plan: Plan) -> dict[str, Any]:
    return {"schema": TRAIN_SCHEMA, "version": __version__, "scenario": as_table(plan.spec),
            **training_section(plan.training)}


def catalog_document(entries: list[tuple[str, Any]]) -> dict[str, Any]:
    """(family, entry) pairs as a JSON-ready document."""
    return {"schema": CATALOG_SCHEMA, "version": __version__,
            "entries": [{"family": family, **as_table(entry)} for family, entry in entries]}


COLLECTIVES_SCHEMA = "clusterplan.collectives/1"


def collectives_document(result: Collectives) -> dict[str, Any]:
    """Predicted rows (and measured ones matched by size) of a ``plan.collectives.Collectives`` as a document."""
    prediction, design, dtype, counts = result.prediction, result.design, result.dtype, result.counts
    measured = dict(result.measured.rows) if result.measured else None
    measured_source = result.measured.source if result.measured else ""
    rows = []
    for i, size in enumerate(prediction.size_bytes):
        row = {"size_bytes": int(size), "count": counts[i], "dtype": dtype,
               "time_s": float(prediction.time_s[i]), "algbw_GBps": float(prediction.algbw_GBps[i]),
               "busbw_GBps": float(prediction.busbw_GBps[i]), "algorithm": prediction.algorithm[i],
               "protocol": prediction.protocol[i]}
        if result.bands:
            band = result.bands[i]
            row["time_s_low"], row["time_s_high"] = band.time_range(row["time_s"])
            row["busbw_GBps_low"], row["busbw_GBps_high"] = band.rate_range(row["busbw_GBps"])
            row["regime"], row["regime_n"] = band.regime, band.n
        if measured and int(size) in measured:
            m = measured[int(size)]
            row["measured"] = m
            row["error"] = (row["busbw_GBps"] - m["busbw_GBps"]) / m["busbw_GBps"] if m["busbw_GBps"] else None
        rows.append(row)
    errors = [abs(r["error"]) for r in rows if r.get("error") is not None]
    op = prediction.op
    reduces = op in ("all_reduce", "reduce_scatter", "reduce")
    return {
        "schema": COLLECTIVES_SCHEMA, "version": __version__, "op": op, "dtype": dtype,
        "redop": "sum" if reduces else "none", "root": 0 if op in ("broadcast", "reduce") else -1,
        "bus_factor": bus_factor(op, prediction.num_ranks),
        "group": {"num_gpus": prediction.num_ranks,
                  "num_nodes": prediction.num_ranks // min(prediction.num_ranks, design.gpus_per_node),
                  "gpus_per_node": min(prediction.num_ranks, design.gpus_per_node),
                  **({"num_nvlink_domains": prediction.num_nodes, "nvlink_domain_gpus": design.domain_gpus}
                     if design.domain_gpus > design.gpus_per_node else {}),
                  "gpu": design.parts.gpu.id,
                  "fabric": design.parts.fabric.id, "topology": design.topology.kind,
                  "jitter_cv": design.parts.fabric.jitter_cv,
                  "straggler_slowdown": straggler_slowdown(prediction.num_ranks, design.parts.fabric.jitter_cv)},
        "rows": rows,
        "warning": next((band.warning for band in result.bands if band.warning), None),
        "avg_busbw_GBps": sum(r["busbw_GBps"] for r in rows) / len(rows) if rows else 0.0,
        "measured": None if not measured else {"source": measured_source, "rows": len(errors),
                                               "mean_abs_error": sum(errors) / len(errors) if errors else 0.0},
        "scenario": as_table(result.spec),
    }
