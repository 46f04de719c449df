"""HTML for the training part of the report: the chosen layout, its memory against HBM, and the job-size sweep.

Drawn from ``/plan/training`` (the plan's prediction of the scenario's ``[workload]``) and ``/training``
(the report's sweep over job sizes, report/documents.py ``sweep_row``); every number through its pointer.
"""

from __future__ import annotations

from clusterplan.report import svg
from clusterplan.report.bands import band_phrase, kind_of
from clusterplan.report.figures import money, pointer
from clusterplan.report.html_offers import cheapest_per_mode, offer_style, others_entry
from clusterplan.report.page import Part, mark, section, table, td
from clusterplan.report.svg import Mark, esc
from clusterplan.report.training import precision_peak, reasons, rental_notes

GIB = 2**30
DAY = 86400
LAYOUT = (("tp", "tp"), ("pp", "pp"), ("dp", "dp"), ("cp", "cp"), ("mbs", "Micro-batch"),
          ("vpp", "Virtual stages"), ("recompute", "Recompute"), ("zero", "ZeRO"), ("global_batch", "Global batch"))


def _seconds(value: float) -> str:
    return f"{value:,.3f} s"


def _count(value: float) -> str:
    return f"{value:,.0f}"


def _integer(value: int) -> str:
    return f"{value:,}"


def _share(value: float) -> str:
    return f"{value:.1%}"


def _gib(value: float) -> str:
    return f"{value / GIB:,.1f} GiB"


def _days(value: float) -> str:
    return f"{value / DAY:,.1f} days"


def _tokens(value: float) -> str:
    return f"{value / 1e12:,.4g}T" if value >= 1e12 else f"{value / 1e9:,.4g}B"


def _layout_cell(layout: dict) -> str:
    """A layout in two unbreakable lines (the parallel degrees; the micro-batch and memory choices)."""
    degrees = (f"tp {layout['tp']} · pp {layout['pp']} · dp {layout['dp']} · cp {layout['cp']}"
               + (f" · ep {layout['ep']}" if "ep" in layout else "")
               + (f" · etp {layout['etp']}" if layout.get("etp", layout["tp"]) != layout["tp"] else ""))
    rest = f"mbs {layout['mbs']} · v {layout['vpp']} · recompute {layout['recompute']} · ZeRO {layout['zero']}"
    return (f'<span class="nowrap">{esc(degrees)}</span><br>'
            f'<span class="muted nowrap">{esc(rest)}</span>')


def _chosen(doc: dict) -> str:
    """The best layout, its step time, throughput, MFU and memory, and time- and cost-to-train."""
    job = doc["plan"]["training"]
    base = "/plan/training"
    # an expert-parallel layout shows its ep after cp; a dense one's table is as it was
    columns = [*LAYOUT[:4], *((("ep", "ep"), ("etp", "etp")) if "ep" in job["layout"] else ()), *LAYOUT[4:]]
    cells = [td(doc, f"{base}/layout/{key}", _integer) if key != "recompute" else f"<td>{esc(job['layout'][key])}</td>"
             for key, _ in columns]
    out = "<h3>Chosen layout</h3>" + table([name for _, name in columns], [f"<tr>{''.join(cells)}</tr>"],
                                           numeric=[i for i, (key, _) in enumerate(columns) if key != "recompute"])
    if job.get("pipeline_schedule") == "dualpipe":   # the virtual-stages column is 1F1B's
        out += "<p>Pipeline schedule: DualPipe, two chunks a GPU (docs/training.md, Pipeline schedule)</p>"
    figures = [("Step time", "step_time_s", _seconds), ("Tokens/s, cluster", "tokens_per_s", _count),
               ("Tokens/s per GPU", "tokens_per_s_per_gpu", _count),
               ("Model TFLOP/s per GPU", "tflops_per_gpu", lambda v: f"{v:,.1f}"),
               ("Hardware TFLOP/s per GPU (with recomputation)", "hardware_tflops_per_gpu", lambda v: f"{v:,.1f}"),
               ("MFU (of BF16 dense peak)", "mfu", _share),
               ("MFU as papers count it (6N + causal attention)", "mfu_causal", _share)]
    if precision_peak(job) != "BF16 dense peak":   # FP8 or 2:4 sparse: also the fraction of its own peak
        figures.append((f"Model FLOP/s of {precision_peak(job)}", "precision_peak_fraction", _share))
    if job["hardware_tflops_per_gpu"] <= job["tflops_per_gpu"]:   # nothing recomputed: no second figure
        figures = [figure for figure in figures if figure[1] != "hardware_tflops_per_gpu"]
    figures.append(("Memory per GPU", "memory_bytes_per_gpu/total", _gib))
    rows = [f"<tr><td>{esc(name)}</td>{td(doc, f'{base}/{key}', fmt)}{_band_cells(doc, base, key, fmt)}</tr>"
            for name, key, fmt in figures]
    rows.append(f"<tr><td>HBM per GPU</td>{td(doc, '/training/hbm_bytes_per_gpu', _gib)}</tr>")
    if job.get("goodput") is not None:
        rows.append(f"<tr><td>Goodput (failures, checkpoints, restarts; docs/reliability.md)</td>"
                    f"{td(doc, f'{base}/goodput', _share)}</tr>")
    if "time_to_train_s" in job:
        rows.append(f"<tr><td>Time to train {_tokens(job['tokens'])} tokens, raw</td>"
                    f"{td(doc, f'{base}/time_to_train_s', _days)}{_band_cells(doc, base, 'time_to_train_s', _days)}"
                    f"</tr>")
        if "effective_time_to_train_s" in job:
            rows.append(f"<tr><td>Time to train {_tokens(job['tokens'])} tokens, effective (raw / goodput)</td>"
                        f"{td(doc, f'{base}/effective_time_to_train_s', _days)}</tr>")
        if "whole_run_time_to_train_s" in job:
            rows += _whole_run_rows(doc, base)
    out += table(("Figure", "Predicted", "Band low", "Band high", "Evidence band"), rows, numeric=(1, 2, 3))
    out += f'<p class="note">{esc(_evidence_note(job["evidence"]))}</p>'

    if "time_to_train_s" in job:
        effective = "effective_cost_to_train_usd" in job

        def cells(raw: str, effective_pointer: str) -> str:
            return td(doc, raw) + (td(doc, effective_pointer) if effective else "")

        costs = [f"<tr><td>own cluster</td>{td(doc, '/plan/cost/cost_per_gpu_hour_usd')}"
                 f"{cells(f'{base}/cost_to_train_usd', f'{base}/effective_cost_to_train_usd')}</tr>"]
        for i, offer in enumerate(doc["plan"]["cloud"]):
            costs.append(f'<tr><td title="{esc(offer["source"])}">{esc(offer["offer"])}</td>'
                         f'{td(doc, f"/plan/cloud/{i}/usd_per_gpu_hour")}'
                         + cells(pointer("plan", "training", "cloud_cost_to_train_usd", offer["offer"]),
                                 pointer("plan", "training", "effective_cloud_cost_to_train_usd", offer["offer"]))
                         + '</tr>')
        heads = ("Cost to train on", "USD per GPU-hour", "Raw (USD)") + (("Effective (USD)",) if effective else ())
        out += table(heads, costs, numeric=tuple(range(1, len(heads))))
        out += "".join(f'<p class="note">{esc(label)}: {esc(text)}</p>' for label, text in rental_notes(job))
    return out


def _whole_run_rows(doc: dict, base: str) -> list[str]:
    """The whole run (docs/reliability.md#whole-run): its wall clock and cost with the "whole run" band of published
    runs, and what each cause adds to the steady state."""
    job = doc["plan"]["training"]
    steady = job["whole_run_breakdown_s"]["steady state"]
    causes = "; ".join(f"{name} +{seconds / steady:.1%}" for name, seconds in job["whole_run_breakdown_s"].items()
                       if name != "steady state" and seconds > 0)
    return [f"<tr><td>Time to train {_tokens(job['tokens'])} tokens, whole run ({esc(causes)})</td>"
            f"{td(doc, f'{base}/whole_run_time_to_train_s', _days)}"
            f"{_band_cells(doc, base, 'whole_run_time_to_train_s', _days)}</tr>",
            f"<tr><td>Cost to train on the own cluster, whole run</td>"
            f"{td(doc, f'{base}/whole_run_cost_to_train_usd')}"
            f"{_band_cells(doc, base, 'whole_run_cost_to_train_usd', lambda v: f'${v:,.0f}')}</tr>"]


def _band_cells(doc: dict, base: str, key: str, fmt) -> str:
    """The low and high of a figure's evidence band and an error bar (docs/evidence.md); empty cells without."""
    job = doc["plan"]["training"]
    if f"{key}_low" not in job:
        return "<td></td><td></td><td></td>"
    evidence = job["whole_run_evidence" if key.startswith("whole_run") else "evidence"]   # the whole run's own regime
    phrase = band_phrase(job[key], job[f"{key}_low"], job[f"{key}_high"], fmt, kind=kind_of(key),
                         out_of_domain=bool(evidence["out_of_domain"]))
    return (td(doc, f"{base}/{key}_low", fmt) + td(doc, f"{base}/{key}_high", fmt)
            + f"<td>{_error_bar(job[key], job[f'{key}_low'], job[f'{key}_high'])}"
            f'<br><span class="band-phrase">{esc(phrase)}</span></td>')


def _error_bar(value: float, low: float, high: float, width: int = 120) -> str:
    """An inline error bar: the band from low to high around the value, on a scale of value x 0.5 to x 1.5."""
    def x(v: float) -> float:
        return round(min(max((v / value - 0.5) * width, 1), width - 1), 1) if value else width / 2

    return (f'<svg class="error-bar" width="{width}" height="12" role="img" '
            f'aria-label="{esc(f"band {low:,.4g} to {high:,.4g}")}">'
            f'<line x1="{x(low)}" x2="{x(high)}" y1="6" y2="6" stroke="currentColor" stroke-width="2"/>'
            f'<line x1="{x(low)}" x2="{x(low)}" y1="2" y2="10" stroke="currentColor"/>'
            f'<line x1="{x(high)}" x2="{x(high)}" y1="2" y2="10" stroke="currentColor"/>'
            f'<circle cx="{x(value)}" cy="6" r="3"/></svg>')


def _evidence_note(evidence: dict) -> str:
    if evidence["out_of_domain"]:
        return f"Out of domain: {evidence['warning']}. docs/evidence.md"
    return (f"Evidence: {evidence['regime']}, {evidence['n']} validated runs, median error "
            f"{evidence['median_error']:+.1%}, band {evidence['low_error']:+.1%} to {evidence['high_error']:+.1%} "
            f"(predicted / measured - 1 of the step time; docs/evidence.md).")


def _memory_chart(doc: dict) -> str:
    """The chosen layout's memory per GPU, stacked by part, against the GPU's HBM."""
    memory = doc["plan"]["training"]["memory_bytes_per_gpu"]
    hbm = doc["training"]["hbm_bytes_per_gpu"]
    series = [(part, [mark(doc, pointer("plan", "training", "memory_bytes_per_gpu", part), part, _gib)])
              for part in memory if part != "total"]
    axis = svg.linear_axis([memory["total"], hbm * 1.05], "GiB per GPU", lambda v: f"{v / GIB:g}", unit=GIB)
    layout = doc["plan"]["training"]["layout"]
    name = (f"tp {layout['tp']} · pp {layout['pp']} · dp {layout['dp']} · cp {layout['cp']}"
            + (f" · ep {layout['ep']}" if "ep" in layout else "")
            + (f" · etp {layout['etp']}" if layout.get("etp", layout["tp"]) != layout["tp"] else ""))
    return svg.bar_chart("Memory per GPU of the chosen layout vs HBM (GiB)", [name], series, axis,
                         x_label="chosen layout, stacked by part", limit=(hbm, f"HBM {hbm / GIB:g} GiB"),
                         chart="training-memory")


def _sweep_charts(doc: dict, tokens: float) -> str:
    """Time- and cost-to-train against the job size; sizes where nothing fits are gaps."""
    rows = doc["training"]["sweep"]
    sizes = [row["gpus"] for row in rows]
    x = svg.Axis(low=sizes[0], high=sizes[-1], ticks=tuple(sizes), label="GPUs in the job (whole nodes)",
                 format=lambda v: f"{v:g}", log=True)

    def points(key: str, tip: str, fmt) -> tuple[tuple[float, Mark], ...]:
        return tuple((row["gpus"], mark(doc, pointer("training", "sweep", i, *key.split("/")),
                                        f"{tip}, {row['gpus']} GPUs", fmt) if row["feasible"] else Mark(value=None))
                     for i, row in enumerate(rows))

    job = doc["plan"]["training"]
    time = svg.Series(name="time to train", points=points("time_to_train_s", "time to train", _days))
    markers = []
    if job.get("time_to_train_s") is not None:
        markers.append((job["num_gpus"], Mark(value=job["time_to_train_s"], pointer="/plan/training/num_gpus",
                                              tip=f"this plan's job: {job['num_gpus']:,} GPUs, "
                                                  f"{_days(job['time_to_train_s'])}"), "this plan"))
    title = f"{_tokens(tokens)} tokens"
    out = svg.line_chart(f"Time to train {title} vs job size (days, raw)", [time], x,
                         svg.linear_axis([m.value for _, m in time.points], "days", lambda v: f"{v / DAY:g}",
                                         unit=DAY), markers=markers, legend=False, chart="training-time")
    cloud = doc["plan"]["cloud"]
    cheapest = cheapest_per_mode(cloud)
    costs = [svg.Series(name="own cluster", colour=svg.INK, width=3.0, label="own cluster",
                        points=points("cost_to_train_usd/own", "own", money))]
    costs += [svg.Series(name=offer["offer"], dashed=True, legend=False, **offer_style(i, cheapest, offer["offer"]),
                         points=points(f"cost_to_train_usd/{offer['offer']}", offer["offer"], money))
              for i, offer in enumerate(cloud)]
    values = [m.value for series in costs for _, m in series.points]
    return out + svg.line_chart(f"Cost to train {title} vs job size (USD, raw): own cluster and each cloud offer",
                                costs, x, svg.linear_axis(values, "USD to train", svg.usd), chart="training-cost",
                                more=others_entry(cloud, cheapest))


def _sweep(doc: dict) -> str:
    """The sweep over job sizes: a table of every size, the charts when there is a token budget."""
    rows = doc["training"]["sweep"]
    tokens = doc["plan"]["scenario"]["workload"]["tokens"]
    cells = []
    for i, row in enumerate(rows):
        base = f"/training/sweep/{i}"
        head = f"<tr>{td(doc, f'{base}/gpus', _integer)}{td(doc, f'{base}/num_nodes', _integer)}"
        if not row["feasible"]:
            cells.append(f'{head}<td class="muted" colspan="{7 if tokens else 5}">nothing fits: '
                         f'{esc(row["reason"])}</td></tr>')
            continue
        figures = (td(doc, f"{base}/step_time_s", _seconds) + td(doc, f"{base}/tokens_per_s", _count)
                   + td(doc, f"{base}/mfu", _share) + td(doc, f"{base}/memory_bytes_per_gpu/total", _gib))
        if tokens:
            figures += td(doc, f"{base}/time_to_train_s", _days) + td(doc, f"{base}/cost_to_train_usd/own")
        cells.append(f"{head}<td>{_layout_cell(row['layout'])}</td>{figures}</tr>")
    headers = ("GPUs", "Nodes", "Best layout", "Step time", "Tokens/s", "MFU", "Memory per GPU",
               *(("Time to train (raw)", "Cost to train, own (USD, raw)") if tokens else ()))
    out = ("<h3>By job size</h3><p>The same workload and global batch on one node, doubling up to the whole "
           "cluster, each size searched afresh for its best layout.</p>"
           + table(headers, cells, numeric=(0, 1, *range(3, len(headers)))))
    charted = tokens and any(row["feasible"] for row in rows)
    if charted:
        out += _sweep_charts(doc, tokens)
    gaps = [str(row["gpus"]) for row in rows if not row["feasible"]]
    if gaps:
        out += (f'<p class="muted">Nothing fits on {esc(", ".join(gaps))} GPUs (the table says why)'
                f'{": those sizes have no point in the charts" if charted else ""}.</p>')
    return out


def training(doc: dict) -> Part | None:
    """The workload's best layout and what it costs, its memory against HBM, and the sweep over job sizes."""
    if not doc.get("training"):
        return None
    job = doc["plan"]["training"]
    model = job["model"]
    body = (f"<p>{esc(model['name'])} ({model['params'] / 1e9:,.1f}B parameters, sequence {model['seq_len']:,}) "
            f"on {job['num_gpus']:,} GPUs, {esc(job['precision'])}, global batch {job['global_batch']:,} sequences: "
            f"the fastest layout that fits of {job['num_evaluated']:,} evaluated.</p>")
    if job["feasible"]:
        body += _chosen(doc) + _memory_chart(doc)
    else:
        body += f"<p>No layout fits ({esc(reasons(job['rejected']))}).</p>"
    if doc["training"]["sweep"]:   # the live page (serve/) leaves the sweep out: one search per job size
        body += _sweep(doc)
    body += (f'<p class="muted">FLOP convention: {esc(job["mfu_convention"])}. Hardware TFLOP/s adds the '
             f"recomputed forward passes; docs/training.md.</p>")
    return section("training", "Training", body)
