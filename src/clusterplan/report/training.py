"""Terminal rendering of a training prediction (a ``clusterplan.train/1`` document or its plan section)."""

from __future__ import annotations

from typing import Any, TextIO

from clusterplan.report.bands import band_phrase
from clusterplan.report.console import escape, new_console, new_table
from clusterplan.units import format_usd, plural


def _experts(layout: dict) -> str:
    """The expert-parallel size, " (ep N)", for an expert-parallel layout, and ", etp 1" for whole experts at
    tp > 1; nothing for the rest."""
    if "ep" not in layout:
        return ""
    whole = f", etp {layout['etp']}" if layout.get("etp", layout["tp"]) != layout["tp"] else ""
    return f" (ep {layout['ep']}{whole})"


def _duration(seconds: float) -> str:
    days = seconds / 86400
    return f"{days:.1f} days" if days >= 1 else f"{seconds / 3600:.1f} h"


def _schedule(doc: dict[str, Any]) -> str:
    """The pipeline schedule: 1F1B's virtual stages, or DualPipe by name (docs/training.md, Pipeline schedule)."""
    if doc.get("pipeline_schedule") == "dualpipe":
        return "DualPipe (two chunks a GPU)"
    return f"virtual stages {doc['layout']['vpp']}"


def training_rows(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """Headline lines: layout, step time, throughput, MFU, memory, goodput, time- and cost-to-train (raw and
    effective: divided by goodput)."""
    if not doc["feasible"]:
        return [("Training", f"{doc['model']['name']}: no layout fits ({reasons(doc['rejected'])})")]
    lay = doc["layout"]
    memory = doc["memory_bytes_per_gpu"]
    rows = [
        ("Model", f"{doc['model']['name']} ({_parameters(doc['model'])}, sequence {doc['model']['seq_len']}), "
                  f"{doc['num_gpus']:,} {plural(doc['num_gpus'], 'GPUs')}, {doc['precision']}"),
        ("Shapes", _shapes(doc["model"])),
        ("Training context", f"{doc['model']['seq_len']:,} tokens: {doc['model']['seq_len_source']}"),
        ("Layout", f"tp {lay['tp']} x pp {lay['pp']} x dp {lay['dp']} x cp {lay['cp']}{_experts(lay)}, "
                   f"micro-batch {lay['mbs']}, "
                   f"global batch {lay['global_batch']}, {_schedule(doc)}, recompute {lay['recompute']}, "
                   f"ZeRO {lay['zero']}"),
        ("Step time", f"{doc['step_time_s']:.3f} s" + _range(doc, "step_time_s", lambda v: f"{v:.3f} s")),
        ("Tokens/s (cluster / per GPU)", f"{doc['tokens_per_s']:,.0f} / {doc['tokens_per_s_per_gpu']:,.0f}"
                                         + _range(doc, "tokens_per_s", lambda v: f"{v:,.0f}", kind="rate")),
        ("Evidence", evidence_text(doc["evidence"])),
        ("Model TFLOP/s per GPU, MFU", _mfu(doc)),
        *((("MFU as papers count it", f"{doc['mfu_causal']:.1%} (6N + causal attention, docs/training.md)"),)
          if "mfu_causal" in doc else ()),
        ("Memory per GPU", f"{memory['total'] / 2**30:.1f} GiB"),
        ("Goodput", f"{doc['goodput']:.1%} ({doc['interruptions_per_day']:.2f} interruptions/day, "
                    f"checkpoint every {doc['checkpoint_interval_s'] / 60:,.1f} min)" if doc["goodput"] is not None
         else "not modelled: the cluster has no storage to checkpoint to"),
    ]
    if "time_to_train_s" in doc:
        effective = doc.get("effective_cloud_cost_to_train_usd", {})
        rows.append((f"Time to train {doc['tokens'] / 1e9:,.0f}B tokens",
                     _raw_effective(doc["time_to_train_s"], doc.get("effective_time_to_train_s"), _duration)
                     + _range(doc, "time_to_train_s", _duration, raw=True)))
        rows.append(("Cost to train (own cluster)", _raw_effective(doc["cost_to_train_usd"],
                                                                   doc.get("effective_cost_to_train_usd"), format_usd)
                     + _range(doc, "cost_to_train_usd", format_usd, kind="cost", raw=True)))
        if "whole_run_time_to_train_s" in doc:
            rows += whole_run_rows(doc)
        offer = doc["cheapest_cloud_to_train"]
        if offer is not None:
            rows.append(("Cost to train (cheapest cloud)",
                         f"{offer}: " + _raw_effective(doc["cloud_cost_to_train_usd"][offer], effective.get(offer),
                                                       format_usd) + _terms(doc.get("cloud_terms", {}).get(offer))))
        rows += cloud_notes(doc)
    return rows


def _terms(terms: dict[str, Any] | None) -> str:
    """"; 1 whole 3-year term, 950 days idle ($5.6M)" for a reservation (in days, as size says it); "" for
    pay-per-use."""
    if not terms:
        return ""
    resale = f", {terms['resale_fraction']:.0%} resold" if terms["resale_fraction"] else ""
    return (f"; {terms['terms']} whole {terms['term_years']}-year {plural(terms['terms'], 'terms')}, "
            f"{terms['idle_days']:,.0f} days idle ({format_usd(terms['idle_usd'])}{resale})")


def rental_notes(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The report's cloud lines under its cost table: the headline offer, each reservation's whole terms and
    idle remainder, the spot line and the offers short of capacity (the terminal's rows, in words)."""
    rows = []
    offer = doc.get("cheapest_cloud_to_train")
    if offer is not None:
        effective = doc.get("effective_cloud_cost_to_train_usd", {}).get(offer, doc["cloud_cost_to_train_usd"][offer])
        rows.append(("Cheapest cloud (never spot for a multi-node job, nor past an offer's capacity)",
                     f"{offer}, {format_usd(effective)}"))
    for key, terms in doc.get("cloud_terms", {}).items():
        rows.append((f"Reservation {key}", f"whole terms from its start{_terms(terms)}"))
    return rows + cloud_notes(doc)


def cloud_notes(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The spot offer on its own line (reclaims, goodput, effective cost) and the offers short of capacity."""
    rows = []
    spot = doc.get("spot")
    if spot is not None:
        why = "" if spot["headline"] else "; never the headline of a multi-node job"
        rows.append(("Spot (interruptible)",
                     f"{spot['offer']}: {spot['reclaim_per_1000_instance_days']:.3g} reclaims per 1000 instance-days, "
                     f"goodput {spot['goodput']:.1%} (restarts, work lost since the last checkpoint), "
                     f"{format_usd(spot['cost_to_train_usd'])} raw, "
                     f"{format_usd(spot['effective_cost_to_train_usd'])} effective{why}"))
    short = doc.get("cloud_excluded") or {}
    if short:
        rows.append(("Short of capacity", "; ".join(f"{key} ({why})" for key, why in short.items())))
    return rows


def whole_run_rows(doc: dict[str, Any]) -> list[tuple[str, str]]:
    """The whole run (docs/reliability.md#whole-run): its wall clock and cost with every modelled cause, the band
    of published whole runs around them, and the causes' lines."""
    band = doc["whole_run_evidence"]
    steady = doc["whole_run_breakdown_s"]["steady state"]
    causes = ", ".join(f"{name} +{seconds / steady:.1%}" for name, seconds in doc["whole_run_breakdown_s"].items()
                       if name != "steady state" and seconds > 0)
    return [("Time to train, whole run", _duration(doc["whole_run_time_to_train_s"])
             + _range(doc, "whole_run_time_to_train_s", _duration, evidence="whole_run_evidence")),
            ("Cost to train, whole run (own)", format_usd(doc["whole_run_cost_to_train_usd"])
             + f", {doc['whole_run_gpu_hours']:,.0f} GPU-hours"
             + _range(doc, "whole_run_cost_to_train_usd", format_usd, kind="cost", evidence="whole_run_evidence")),
            ("Whole run over steady state", causes or "no cause modelled"),
            ("Whole-run evidence", f"{band['regime']}: n={band['n']}, median error {band['median_error']:+.1%}, band "
                                   f"{band['low_error']:+.1%} to {band['high_error']:+.1%} (docs/evidence.md)"
             if not band["out_of_domain"] else "; ".join(band["out_of_domain"]))]


def _range(doc: dict[str, Any], name: str, fmt, *, kind: str = "time", raw: bool = False,
           evidence: str = "evidence") -> str:
    """" predicted; published runs of this kind measured ...: LOW to HIGH" (report/bands.py) where the document
    has a band for the figure; ``raw``: the band is of the raw figure, which the line shows beside the effective;
    ``evidence``: the document's key of the regime the band comes from (the whole run has its own)."""
    if f"{name}_low" not in doc:
        return ""
    phrase = band_phrase(doc[name], doc[f"{name}_low"], doc[f"{name}_high"], fmt, kind=kind,
                         out_of_domain=bool(doc[evidence]["out_of_domain"]))
    return f"; raw: {phrase}" if raw else f" predicted; {phrase}"


def evidence_text(evidence: dict[str, Any]) -> str:
    """The regime a prediction rests on, its n and band; or why no validated regime covers it."""
    if evidence["out_of_domain"]:
        return f"OUT OF DOMAIN: {'; '.join(evidence['out_of_domain'])}; widest band " \
               f"{evidence['low_error']:+.0%} to {evidence['high_error']:+.0%} (docs/evidence.md)"
    return (f"{evidence['regime']}: n={evidence['n']}, median error {evidence['median_error']:+.1%}, band "
            f"{evidence['low_error']:+.1%} to {evidence['high_error']:+.1%} (docs/evidence.md)")


def _mfu(doc: dict[str, Any]) -> str:
    """Model TFLOP/s and MFU (of the BF16 dense peak); of the run's own peak too where that differs (FP8, 2:4
    sparsity); the FLOP/s the GPUs run where recomputation adds to them."""
    text = f"{doc['tflops_per_gpu']:.0f}, {doc['mfu']:.1%}"
    own = precision_peak(doc)
    if own != "BF16 dense peak":
        text += f" of BF16 dense peak, {doc['precision_peak_fraction']:.1%} of {own}"
    if doc["hardware_tflops_per_gpu"] > doc["tflops_per_gpu"] * (1 + 1e-9):
        text += f" (hardware {doc['hardware_tflops_per_gpu']:.0f} with recomputation)"
    return text


def precision_peak(doc: dict[str, Any]) -> str:
    """The peak a run's ``precision_peak_fraction`` is of: "FP8 dense peak", "BF16 2:4-sparse peak"."""
    return f"{doc['precision'].upper()} {'2:4-sparse' if doc.get('sparsity_speedup', 1) > 1 else 'dense'} peak"


def _parameters(model: dict[str, Any]) -> str:
    active = model.get("active_params", model["params"])
    return f"{model['params'] / 1e9:.1f}B parameters" + (f", {active / 1e9:.1f}B active" if active != model["params"]
                                                           else "")


def _shapes(model: dict[str, Any]) -> str:
    """Layers, width, heads, experts of the model read."""
    experts = (f", {model['experts']} experts ({model['experts_per_token']} per token)" if model["experts"] > 1
               else "")
    return (f"{model['layers']} layers, hidden {model['hidden']:,}, {model['heads']} heads / {model['kv_heads']} "
            f"KV heads x head_dim {model['head_dim']}, MLP {model['ffn_hidden']:,}{experts}")


def _raw_effective(raw: float, effective: float | None, fmt) -> str:
    """A figure without and with failures, checkpoints and restarts (effective = raw / goodput), or raw alone."""
    return f"{fmt(raw)} raw" + (f", {fmt(effective)} effective" if effective is not None else "")


def reasons(rejected: dict[str, int]) -> str:
    """Rejected layouts by reason, the most common first: "reason: count; ..."."""
    return "; ".join(f"{reason}: {count:,}" for reason, count in sorted(rejected.items(), key=lambda kv: -kv[1]))


def render_training(doc: dict[str, Any], stream: TextIO) -> None:
    console = new_console(stream)
    console.print(f"[bold]clusterplan train[/bold]: {doc['model']['name']} on {doc['num_gpus']:,} {plural(doc['num_gpus'], 'GPUs')}")
    summary = new_table("Prediction", "", "", right=(1,), header=False)
    for row in training_rows(doc):
        summary.add_row(*row)
    console.print(summary)
    for warning in doc.get("warnings", ()):
        console.print(f"  ! {escape(warning)}", soft_wrap=True)
    if not doc["feasible"]:
        return
    breakdown = new_table("Step time breakdown", "Part", "Seconds", "Share", right=(1, 2))
    for part, seconds in doc["step_breakdown_s"].items():
        if seconds > 0:
            breakdown.add_row(part, f"{seconds:.3f}", f"{doc['step_breakdown_share'][part]:.1%}")
    console.print(breakdown)
    memory = new_table("Memory per GPU", "Part", "GiB", right=(1,))
    for part, size in doc["memory_bytes_per_gpu"].items():
        memory.add_row(part, f"{size / 2**30:.2f}")
    console.print(memory)
    if len(doc["layouts"]) > 1:
        # an ep column where a layout is expert-parallel (a dense model's table is as it was)
        rows = [row["layout"] for row in doc["layouts"]]
        experts = (("ep",) if any("ep" in lay for lay in rows) else ()) + (
            ("etp",) if any(lay.get("etp", lay["tp"]) != lay["tp"] for lay in rows) else ())
        keys = ("tp", "pp", "dp", "cp", *experts, "mbs", "vpp", "recompute", "zero")
        headers = tuple({"vpp": "v", "zero": "ZeRO"}.get(key, key) for key in keys)
        top = new_table(f"Top layouts of {doc['num_evaluated']:,} evaluated", *headers,
                        "batch", "step s", "tokens/s", "MFU", "GiB", right=tuple(range(len(keys) + 5)))
        for row in doc["layouts"]:
            lay = row["layout"]
            top.add_row(*(str(lay.get(k, lay["tp"] if k == "etp" else 1)) for k in keys),
                        f"{lay['global_batch']:,}", f"{row['step_time_s']:.3f}", f"{row['tokens_per_s']:,.0f}",
                        f"{row['mfu']:.1%}",
                        f"{row['memory_bytes_per_gpu']['total'] / 2**30:.1f}")
        console.print(top)
        console.print(f"Global batches searched: {', '.join(f'{b:,}' for b in doc['global_batches_searched'])} "
                      f"sequences; memory kept free: {doc['memory_margin']:.0%} of HBM")
        console.print(f"Rejected: {reasons(doc['rejected'])}")
