"""The band table: every validated run's signed error, grouped by regime (docs/evidence.md).

    python benchmarks/evidence.py            print the table and say whether the committed files are current
    python benchmarks/evidence.py --write    regenerate src/clusterplan/perf/evidence.json and docs/evidence.md

Residuals: validate_training.py (every training run: step time), validate_moe.py (the published
mixture-of-experts runs, their recipes' settings: a regime of their own), validate_collectives.py (the nccl-tests
points: the time of one collective; the PyTorch all_reduce_bench.py points time Python around NCCL and are
left out) and validate_reliability.py (Llama 3 405B interruptions by cause, shown, not used as a band).
The library reads the JSON (clusterplan.perf.evidence); tests/validation/test_evidence.py checks that both
files equal what this script produces now, so a change to the model that moves a residual regenerates them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from pathlib import Path

import validate_collectives
import validate_moe
import validate_reliability
import validate_training
import validate_whole_run
from bands import regimes, stats, widest

from clusterplan.perf.evidence import COLLECTIVE_KEYS, MOE_KEYS, TABLE, TRAINING_KEYS, moe_regime

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "evidence.md"
GPUS_PER_NODE = 8


def training() -> dict:
    """The training part of the table: regimes, the widest band and the validated envelope."""
    residuals, envelope = [], {"gpus": set(), "gpu_precisions": set(), "technologies": set(), "max_num_gpus": 0,
                               "max_seq_len": 0, "max_domain_gpus": GPUS_PER_NODE, "cuda_graphs": set(),
                               "schedules": set()}
    for _, _, measured, best, facts in validate_training.residuals():
        if best is None:
            continue
        residuals.append((validate_training.regime_of(facts), best.step.total / measured - 1))
        envelope["gpus"].add(facts["gpu"])
        envelope["gpu_precisions"].add((facts["gpu"], facts["precision"]))
        envelope["max_num_gpus"] = max(envelope["max_num_gpus"], facts["num_gpus"])
        envelope["max_seq_len"] = max(envelope["max_seq_len"], facts["seq_len"])
        envelope["max_domain_gpus"] = max(envelope["max_domain_gpus"], facts["domain_gpus"])
        envelope["cuda_graphs"].add(facts["cuda_graphs"])
        envelope["schedules"].add(facts["schedule"])
        if facts["num_gpus"] > GPUS_PER_NODE:
            envelope["technologies"].add(facts["technology"])
    return _kind(TRAINING_KEYS, residuals, envelope)


def moe() -> dict:
    """The mixture-of-experts part: the published MoE runs at their recipes' settings (validate_moe.py), the
    signed error of the step time (predicted / measured - 1 = published / predicted tokens/s - 1)."""
    residuals, envelope = [], {"gpus": set(), "gpu_precisions": set(), "technologies": set(), "max_num_gpus": 0,
                               "max_seq_len": 0, "max_domain_gpus": GPUS_PER_NODE, "routings": set(),
                               "cuda_graphs": set(), "schedules": set()}
    for row in validate_moe.rows(True):
        best = row["prediction"]
        if best is None:
            continue
        key = moe_regime(gpu=row["gpu"], precision=row["precision"], num_gpus=row["num_gpus"])
        residuals.append((key, row["published"] / best.tokens_per_s_per_gpu - 1))
        envelope["gpus"].add(row["gpu"])
        envelope["gpu_precisions"].add((row["gpu"], row["precision"]))
        envelope["max_num_gpus"] = max(envelope["max_num_gpus"], row["num_gpus"])
        envelope["max_seq_len"] = max(envelope["max_seq_len"], row["seq_len"])
        envelope["routings"].add(row["routing"])
        envelope["cuda_graphs"].add(row["cuda_graphs"])
        envelope["schedules"].add(row["pipeline_schedule"])
        if row["num_gpus"] > GPUS_PER_NODE:
            envelope["technologies"].add(validate_moe.TECHNOLOGY)
    return _kind(MOE_KEYS, residuals, envelope)


def collectives() -> dict:
    """The collectives part: nccl-tests points only."""
    residuals, envelope = [], {"gpus": set(), "technologies": set(), "max_num_nodes": 0}
    for point in validate_collectives.residuals(validate_collectives.DATA):
        if not point.label.endswith("[nccl-tests]"):
            continue
        residuals.append((validate_collectives.regime_of(point), point.error))
        envelope["gpus"].add(point.gpu)
        envelope["max_num_nodes"] = max(envelope["max_num_nodes"], point.num_nodes)
        if point.num_nodes > 1:
            envelope["technologies"].add(point.technology)
    return _kind(COLLECTIVE_KEYS, residuals, envelope)


def whole_run() -> dict:
    """The "whole run" regime: signed errors of the whole run by cause (GPU-hours) against published whole runs.
    Its band is the extremes of the runs whose inputs are all published (GPU count and hours), so it covers each of
    them; the runs with an assumed GPU count or an ambiguous disclosure are kept beside it, not fitted to
    (validate_whole_run.py, docs/evidence.md)."""
    done, _ = validate_whole_run.residuals()
    errors = {run: after / published - 1 for run, published, _, _, after, *_ in done}
    banded = {run for run, *_, in_band in done if in_band}
    row = stats([e for run, e in errors.items() if run in banded])
    alone = {run: round(predicted / published - 1, 4)
             for run, published, predicted in validate_whole_run.causes_alone()}
    return {**row, "low": row["min"], "high": row["max"],
            "runs": {run: round(e, 4) for run, e in errors.items() if run in banded},
            "not_in_band": {run: round(e, 4) for run, e in errors.items() if run not in banded},
            "causes_alone": alone}


def _kind(keys: tuple[str, ...], residuals: list, envelope: dict) -> dict:
    envelope = {name: sorted(value) if isinstance(value, set) else value for name, value in envelope.items()}
    if "gpu_precisions" in envelope:
        envelope["gpu_precisions"] = [list(pair) for pair in envelope["gpu_precisions"]]
        envelope["gpus_per_node"] = GPUS_PER_NODE
    return {"keys": list(keys), "widest": widest([e for _, e in residuals]), "envelope": envelope,
            "regimes": regimes(residuals)}


def table() -> dict:
    return {"schema": "clusterplan.evidence/1",
            "generated_by": "python benchmarks/evidence.py --write (do not edit by hand)",
            "error": "signed error of a predicted time: predicted / measured - 1 (negative: the model too fast)",
            "training": training(), "moe": moe(), "collectives": collectives(), "whole_run": whole_run()}


def table_text(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def document(data: dict) -> str:
    """docs/evidence.md: the method, both tables, the envelope and the reliability check."""
    lines = [
        "# Evidence: how far each prediction may be off",
        "",
        "<!-- generated by `python benchmarks/evidence.py --write`; do not edit by hand -->",
        "",
        "Every step time, tokens/s, time- and cost-to-train and collective time carries a band: the spread of the",
        "model's signed error on the published runs of the same regime. The error of a time is",
        "e = predicted / measured - 1 (negative: the model was too fast), so a predicted time t is read as a",
        "measured time in [t / (1 + high), t / (1 + low)] and a rate r in [r (1 + low), r (1 + high)].",
        "",
        "- **Band**: the 10th to 90th percentile of the regime's residuals where it has 10 or more; with fewer,",
        "  widened to cover its own extremes and its parent's band (the regime one key shorter; for a one-key",
        "  regime, the 10th-90th percentile of every residual of its kind).",
        "- **Lookup** (`clusterplan.perf.evidence`): the most specific regime (two keys or more) that has a point.",
        "- **Out of domain**: a GPU, a precision on a GPU or a fabric technology with no validated point, an",
        "  NVLink domain larger than one server (GB200 NVL72: docs/nvl72.md), more",
        "  GPUs or a longer sequence than any validated run, CUDA graphs or a pipeline schedule (DualPipe) no",
        "  validated run of its kind was predicted with: the prediction says",
        "  so in one line and carries the widest band, the extremes of every residual of its kind.",
        "- **Mixture of experts**: a MoE model's prediction takes its band from the published MoE runs, a kind",
        "  of its own (regime: GPU, precision, GPUs) with its own envelope (GPUs, precisions, scale, sequence,",
        "  fabric, the routing and the CUDA graphs the runs used); outside it, the MoE runs' widest band.",
        "- **Residuals**: `benchmarks/validate_training.py` (every run), `benchmarks/validate_moe.py` (the",
        "  published MoE runs at their recipes' settings), `benchmarks/validate_collectives.py`",
        "  (the nccl-tests points; the PyTorch all_reduce_bench.py points time Python around NCCL and are left",
        "  out). The data: shared/data/validation (see its README) and benchmarks/data/validation.",
        "- **How it reads**: every surface (terminal, HTML report, live page, workbook) prints a prediction and",
        "  its band as one statement from one function (`clusterplan.report.bands`), of the form \"T s predicted;",
        "  published runs of this kind measured A-B % faster: LOW s to HIGH s\". Where the band excludes",
        "  the point, the model's error on that regime has one sign, and the words say which way published",
        "  runs fell and by how much.",
        "- **The headline is the model's value, not the evidence-corrected one.** The model's value is what",
        "  the formulas give and what every other figure (cost to train, the size and search rankings, the",
        "  sensitivity sweeps) is computed from; a correction by a regime's median error rests on a handful",
        "  of runs (the n each regime names below), would change whenever a run is added, would hide the",
        "  model's own error from the validation benchmarks that measure it, and has nothing to correct with",
        "  out of domain. So the point stays the model's and the band beside it says where measurements fell;",
        "  a reader who wants the corrected figure reads it there (the band's middle).",
        "",
    ]
    for name, title, what in (("training", "Training step time", "GPU, precision, GPUs, model size, software era"),
                              ("moe", "Mixture-of-experts training step time", "GPU, precision, GPUs"),
                              ("collectives", "Collective time", "span, GPU, message size")):
        kind = data[name]
        w = kind["widest"]
        lines += [f"## {title} ({what})", "",
                  f"Widest band (out of domain): {w['low']:+.1%} to {w['high']:+.1%} over all {w['n']} points.",
                  "", "Validated envelope: " + "; ".join(f"{key} {value}" for key, value in kind["envelope"].items()),
                  "", "| regime | n | median | min | max | band |", "|---|---:|---:|---:|---:|---|"]
        for key, row in kind["regimes"].items():
            if " | " not in key:        # one-key regimes are parents for the widening only
                continue
            lines.append(f"| {key.replace(' | ', ', ')} | {row['n']} | {row['median']:+.1%} | {row['min']:+.1%} | "
                         f"{row['max']:+.1%} | {row['low']:+.1%} to {row['high']:+.1%} |")
        lines.append("")
        if name == "moe":
            lines += _moe_before_after()
    lines += _collectives_change()
    lines += _whole_run(data["whole_run"])
    lines += _reliability()
    return "\n".join(lines)


def _collectives_change() -> list[str]:
    """The multi-node InfiniBand goal per cluster and the before/after per regime, as validate_collectives.py
    prints them."""
    points = validate_collectives.residuals(validate_collectives.DATA)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        validate_collectives.print_infiniband(validate_collectives.infiniband_clusters(points))
        print()
        validate_collectives.print_change(validate_collectives.changes_of(points), kinds=("regime",))
    return ["As `benchmarks/validate_collectives.py` prints them: the multi-node InfiniBand points at >= 64 MiB per",
            "cluster, and each regime's signed error before (the saved baseline) and after:", "", "```",
            *printed.getvalue().rstrip("\n").splitlines(), "```", ""]


def _moe_before_after() -> list[str]:
    """The published MoE runs before issue 32's mechanisms and after (validate_moe.py), as the MoE kind's story."""
    lines = ["### Mixture-of-experts runs before and after", "",
             "`benchmarks/validate_moe.py` predicts every published MoE run at its recipe's settings (the release",
             "tag's Megatron-Bridge recipe, or the run script beside a Megatron-MoE-ModelZoo table: overlap,",
             "dispatcher, routing, CUDA graphs: benchmarks/data/validation/moe_training_throughput.csv). Before: the",
             "model before issue 32 (all-to-alls exposed and plain, FP32 gradients, no CUDA graphs); after: the",
             "recipe's settings, the merged schedule's wait for both routed blocks and the graphs' launches",
             "(docs/training.md, Mixture of experts). Errors of tokens/s per GPU (predicted / published - 1):", "",
             "| release | model | system | GPUs | published | before | after |", "|---|---|---|---:|---:|---:|---:|"]
    before, after = validate_moe.rows(False), validate_moe.rows(True)
    for old, new in zip(before, after, strict=True):
        errors = [f"{row['prediction'].tokens_per_s_per_gpu / row['published'] - 1:+.1%}"
                  if row["prediction"] is not None else "no fit" for row in (old, new)]
        lines.append(f"| {new['release']} | {new['model']} | {new['system']} | {new['num_gpus']:,} | "
                     f"{new['published']:,.0f} | {errors[0]} | {errors[1]} |")
    lines += ["", f"Before: {validate_moe.summary(before)}; after: {validate_moe.summary(after)} "
              "(the domain's bar: median <= 15 %, max <= 35 %).", ""]
    return lines + _moe_table_layouts(after)


def _moe_table_layouts(after: list[dict]) -> list[str]:
    """The after summary again with the published table's layouts as printed, where the rows hold the release
    tag's recipe instead (layout_basis), and whether that still meets the domain's bar."""
    table = validate_moe.rows(True, layouts="table")
    swapped = {validate_moe.run_key(row) for row in after if row["layout_basis"] == "recipe"}
    lines = ["Two runs are priced at their release tag's recipe, not the layout the published table prints",
             "(layout_basis in the CSV; the table prints the recipe of before 2025-11-21). With the table's layouts:",
             "", "| release | model | system | GPUs | published | recipe's layout | table's layout |",
             "|---|---|---|---:|---:|---:|---:|"]
    recipe = {validate_moe.run_key(row): row for row in after}
    for row in table:
        if validate_moe.run_key(row) in swapped:
            errors = [f"{one['prediction'].tokens_per_s_per_gpu / one['published'] - 1:+.1%}"
                      if one["prediction"] is not None else "no fit"
                      for one in (recipe[validate_moe.run_key(row)], row)]
            lines.append(f"| {row['release']} | {row['model']} | {row['system']} | {row['num_gpus']:,} | "
                         f"{row['published']:,.0f} | {errors[0]} ({_layout(recipe[validate_moe.run_key(row)])}) | "
                         f"{errors[1]} ({_layout(row)}) |")
    verdict = "meets" if validate_moe.within_bar(table) else "does NOT meet"
    return lines + ["", f"After with the table's layouts: {validate_moe.summary(table)}: this {verdict} the "
                    "domain's bar; the band table uses the recipes' layouts.", ""]


def _layout(row: dict) -> str:
    """What differs between a MoE run's two layouts: virtual stages, micro-batch, the merged schedule."""
    merged = ", merged schedule" if row["a2a_overlap"] == "1" else ""
    return f"vp {row['vp']}, mbs {row['micro_batch']}{merged}"


def _whole_run(row: dict) -> list[str]:
    """The "whole run" regime: what the modelled causes leave unexplained on published whole runs."""
    outside = row.get("not_in_band", {})
    inside = sum(row["low"] <= error <= row["high"] for error in outside.values())
    lines = ["## Whole run (published GPU-hours)", "",
             "Every time and cost to train carries its steady-state figure and the whole run by cause",
             "(docs/reliability.md#whole-run). What the causes leave unexplained on the published whole runs",
             "(`benchmarks/validate_whole_run.py`: model cards' and reports' GPU-hours or wall clock x GPUs) is this",
             "regime. Its band is built from the runs whose inputs are all published (the GPU count and the hours):",
             "their residuals' extremes, so it covers each of them. Runs whose GPU count is assumed (no source",
             "states it) or whose disclosure is ambiguous (a peak GPU count, sources that contradict each other) are",
             "listed below it and are not fitted to: an assumed input would widen the band by the assumption's error,",
             "not the model's.", "",
             f"n = {row['n']}, median {row['median']:+.1%}, p10 to p90 {row['p10']:+.1%} to {row['p90']:+.1%}, band "
             f"(extremes) {row['low']:+.1%} to {row['high']:+.1%}.", "",
             "| run | error of the whole run's GPU-hours |", "|---|---:|"]
    lines += [f"| {run} | {error:+.1%} |" for run, error in row["runs"].items()]
    if outside:
        lines += ["", f"Not in the band (an assumed or ambiguous input; {inside} of {len(outside)} inside it):", "",
                  "| run | error of the whole run's GPU-hours |", "|---|---:|"]
        lines += [f"| {run} | {error:+.1%} |" for run, error in outside.items()]
    lines += ["", "Most of it is the steady state's error, not the causes': where the same source also publishes its",
              "steady-state throughput, the causes applied to that published steady state leave (a check, not the",
              "band):",
              "", "| run | error of the causes alone |", "|---|---:|"]
    lines += [f"| {run} | {error:+.1%} |" for run, error in row.get("causes_alone", {}).items()]
    lines += ["", "DeepSeek-V3 (2,048 H800, DualPipe, FP8; arXiv 2412.19437) is a whole run here and not a row of the",
              "mixture-of-experts steady state (moe_training_throughput.csv): its report publishes the pre-training's",
              "GPU-hours (2.664M for 14.8T tokens, an average of 1,543 tokens/s per GPU over the batch ramp, the",
              "evaluations, the failures and the checkpoints) and no steady-state throughput or MFU. A steady state",
              "read off that average would carry the whole-run causes inside it (a steady state is at least that",
              "fast, by an amount the report does not give), so it would test the causes' model twice and the step",
              "model not at all; it joins the whole-run band instead, its inputs (GPU count, GPU-hours, layout,",
              "schedule) all published."]
    return lines + [""]


def _reliability() -> list[str]:
    """Llama 3 405B interruptions by cause: one published run, a check and no band."""
    result = validate_reliability.compare(validate_reliability.DATA)
    lines = ["## Interruptions by cause (a check, not a band)", "",
             f"Llama 3 405B, {result['num_gpus']:,} H100, {result['days']:g} days (validate_reliability.py): "
             "one run, so no band is derived from it; it is never a fit target.", "",
             "| cause | published | predicted | error |", "|---|---:|---:|---:|"]
    for row in result["rows"]:
        lines.append(f"| {row['group']} | {row['published']} | {row['predicted']:.0f} | {row['error']:+.0%} |")
    lines.append(f"| total | {result['published_total']} | {result['predicted_total']:.0f} | "
                 f"{result['total_error']:+.0%} |")
    lines.append("")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", action="store_true", help="regenerate the JSON table and docs/evidence.md")
    args = parser.parse_args(argv)
    if not validate_training.DATA.is_dir():
        print(f"no validation data at {validate_training.DATA}", file=sys.stderr)
        return 1
    data = table()
    text, doc = table_text(data), document(data)
    if args.write:
        TABLE.write_text(text, encoding="utf-8")
        DOC.write_text(doc, encoding="utf-8")
    print(doc)
    current = TABLE.exists() and TABLE.read_text(encoding="utf-8") == text and DOC.read_text(encoding="utf-8") == doc
    print("committed table and docs/evidence.md: " + ("current" if current else "STALE (run with --write)"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
