"""Mixture-of-experts training throughput: predicted against published Megatron runs with expert parallelism.

Each row of benchmarks/data/validation/moe_training_throughput.csv is a published pre-training run (its
release, source and date beside it) with its layout and the recipe that ran it (Megatron-Bridge's
scripts/performance at the release's tag): tp, pp, cp, virtual stages, ep, micro-batch and global batch are held,
and so are the recipe's software settings: whether it overlaps the expert all-to-alls with compute
(``a2a_overlap``, moe_a2a_overlap: Megatron-Core's merged forward-backward schedule), whether its tensor-parallel
collectives overlap the GEMMs (``tp_overlap``, tp_comm_overlap; "-" at tp 1), its token dispatcher
(alltoall, or DeepEP / HybridEP, both priced as ``deepep``: a token crosses the network once per node), its routing
(dropless with the tokens force-balanced, or token dropping padded to capacity) and what CUDA graphs capture
(``cuda_graphs``). The search picks the recomputation, the ZeRO stage and the experts' tensor-parallel size (etp:
tp, or 1 with the expert-parallel group folded over tp x dp) that fit. The model is the preset read from the
model's Hugging Face config.json; the cluster is its GPU in 8-GPU nodes on 400G InfiniBand, one NIC per GPU.
Nothing is fitted to these rows. The table prints each run twice: before (every all-to-all exposed and
priced as a plain all-to-all, FP32 gradients, no CUDA graphs: the model before issue 32) and after (the recipe's
overlap, dispatcher, CUDA graphs and BF16 gradient reduction). ``layout_basis`` says where a row's layout comes
from: "table", the layout the published table prints; "recipe", the release tag's recipe where it differs from the
table (NeMo 25.11's Qwen3-30B-A3B on 16 H100 and Qwen3-235B-A22B on 64 B200: the table prints the recipe of before
2025-11-21). Such a run has a "table" row too; the tables use the recipe's layout, and the after summary is printed
again with the table's layouts as printed (``rows(layouts="table")``). Then Qwen3-30B-A3B's two layouts in each
release of the source (moe_same_layout_versions.csv: 25.09 with token dropping, 25.11 and 26.02 dropless).

    python benchmarks/validate_moe.py
"""

from __future__ import annotations

import csv
from pathlib import Path

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.layout import Constraints
from clusterplan.perf.presets import PRESETS
from clusterplan.perf.search import search
from clusterplan.spec import load_spec

DATA = Path(__file__).parent / "data" / "validation" / "moe_training_throughput.csv"
# the same layouts in the source's other releases (25.09: token dropping; 25.11 and 26.02: dropless)
VERSIONS = Path(__file__).parent / "data" / "validation" / "moe_same_layout_versions.csv"
# the recipes' token dispatchers as the model prices them: HybridEP (NVIDIA's, in DeepEP's hybrid-ep branch) sends a
# token over the network once per node as DeepEP does, then NVLink within it
DISPATCHERS = {"alltoall": "alltoall", "deepep": "deepep", "hybridep": "deepep"}


# the fabric every run is priced on (the published runs: DGX H100 and B200 nodes, 8 x 400G InfiniBand NDR)
FABRIC = "ib-ndr400"
TECHNOLOGY = load_catalog().get("fabrics", FABRIC).technology


def cluster(gpu: str, gpus: int):
    spec = load_spec(overrides=[f'cluster.gpu="{gpu}"', f"cluster.num_nodes={max(1, gpus // 8)}",
                                f'network.fabric="{FABRIC}"', "network.nics_per_node=8", "network.tiers=0"])
    return hardware(design(spec, load_catalog()))


LAYOUT_BASES = ("recipe", "table")


def rows(after: bool = True, path: Path = DATA, layouts: str = "recipe") -> list[dict]:
    """One row per published run: its figures and the prediction (None where no layout fits); ``after`` False
    prices every run as the model before issue 32 did (all-to-alls exposed and plain, FP32 gradients, no graphs);
    ``layouts``: the release tag's recipe where a row gives it, or the published table's layout as printed."""
    out = []
    for run in chosen(list(csv.DictReader(path.open(encoding="utf-8"))), layouts):
        number = {key: int(run[key]) for key in ("num_gpus", "global_batch", "micro_batch", "seq_len", "tp", "pp",
                                                  "cp", "vp", "ep")}
        model = PRESETS[run["model"]]
        options = Options(seq_len=number["seq_len"], global_batch=number["global_batch"], precision=run["precision"],
                          moe_overlap=after and run["a2a_overlap"] == "1",
                          grad_reduce="bf16" if after else "fp32",   # the recipes' grad_reduce_in_fp32 = False
                          moe_dispatcher=DISPATCHERS[run["dispatcher"]] if after else "alltoall",
                          moe_dropless=run["routing"] == "dropless",
                          cuda_graphs=run["cuda_graphs"] if after else "none",
                          tp_overlap=run["tp_overlap"] != "0")   # "-": tp 1, no tensor-parallel collective
        fixed = Constraints(tp=number["tp"], pp=number["pp"], cp=number["cp"], ep=number["ep"],
                            virtual_stages=number["vp"], mbs=number["micro_batch"])
        found = search(model, cluster(run["gpu"], number["num_gpus"]), options, number["num_gpus"], fixed, top=1)
        out.append({**run, **number, "published": float(run["tokens_per_s_per_gpu"]),
                    "prediction": found.best[0] if found.best else None, "rejected": found.rejected,
                    "overlap": options.moe_overlap, "pipeline_schedule": options.pipeline_schedule})
    return out


def chosen(runs: list[dict], layouts: str) -> list[dict]:
    """One row per run: the "recipe" row where a run has one and ``layouts`` is "recipe", else its "table" row."""
    if layouts not in LAYOUT_BASES:
        raise ValueError(f"layouts({layouts!r}) must be one of {', '.join(LAYOUT_BASES)}")
    recipe = {run_key(run) for run in runs if run["layout_basis"] == "recipe"}
    if layouts == "table":
        return [run for run in runs if run["layout_basis"] == "table"]
    return [run for run in runs if run["layout_basis"] == "recipe" or run_key(run) not in recipe]


def run_key(run: dict) -> tuple:
    """What names one published run, whatever layout a row gives it."""
    return tuple(run[key] for key in ("model", "system", "num_gpus", "precision", "release", "tokens_per_s_per_gpu"))


def main() -> None:
    for title, after in (("before (all-to-alls exposed, plain all-to-all, FP32 gradients, no CUDA graphs)", False),
                         ("after (the recipe's overlap, dispatcher, CUDA graphs and gradient precision)", True)):
        print(f"{title}:")
        report(rows(after))
    recipe, table = rows(True), rows(True, layouts="table")
    print("after, with the published table's layouts as printed where the release tag's recipe differs:")
    report([row for row in table if run_key(row) in {run_key(other) for other in recipe
                                                     if other["layout_basis"] == "recipe"}])
    for title, chosen_rows in (("the recipe's layouts", recipe), ("the table's layouts", table)):
        verdict = "within" if within_bar(chosen_rows) else "OUTSIDE"
        print(f"after with {title}: {summary(chosen_rows)}: {verdict} the evidence domain's bar "
              f"(median <= {BAR_MEDIAN:.0%}, max <= {BAR_MAX:.0%})")
    print("the same layouts in the source's releases (25.09 token dropping, 25.11 and 26.02 dropless):")
    report(rows(True, VERSIONS), tag=True)


# the evidence domain's bar for the MoE runs (issue 32): median |error| and max |error|
BAR_MEDIAN, BAR_MAX = 0.15, 0.35


def absolute_errors(table: list[dict]) -> list[float]:
    """|predicted / published - 1| of tokens/s per GPU over the predicted runs, smallest first."""
    return sorted(abs(row["prediction"].tokens_per_s_per_gpu / row["published"] - 1) for row in table
                  if row["prediction"] is not None)


def within_bar(table: list[dict]) -> bool:
    """Whether the runs meet the evidence domain's bar (median |error| <= 15 %, max <= 35 %)."""
    ordered = absolute_errors(table)
    return ordered[len(ordered) // 2] <= BAR_MEDIAN and ordered[-1] <= BAR_MAX


def summary(table: list[dict]) -> str:
    """Median (upper) and max |error|, as the table's summary line."""
    ordered = absolute_errors(table)
    return f"median |error| {ordered[len(ordered) // 2]:.1%}, max {ordered[-1]:.1%}"


def report(table: list[dict], tag: bool = False) -> None:
    """The runs' table and its summary line."""
    lead = f"{'from':8s} {'routing':9s} " if tag else f"{'from':8s} "
    print(f"{lead}{'model':16s} {'system':9s} {'GPUs':>4s} {'tp.pp.dp.cp.ep':>15s} {'vp':>3s} {'mbs':>3s} "
          f"{'published':>9s} {'predicted':>9s} {'error':>7s}  (tokens/s per GPU)")
    errors = []
    for row in table:
        best = row["prediction"]
        dp = row["num_gpus"] // (row["tp"] * row["pp"] * row["cp"])
        shape = f"{row['tp']}.{row['pp']}.{dp}.{row['cp']}.{row['ep']}"
        head = (f"{row['release']:8s} {row['routing']:9s} " if tag else f"{row['release']:8s} ") + (
            f"{row['model']:16s} {row['system']:9s} {row['num_gpus']:4d} {shape:>15s} {row['vp']:3d} "
            f"{row['micro_batch']:3d} {row['published']:9,.0f}")
        if best is None:
            print(f"{head} {'no fit':>9s}  ({'; '.join(row['rejected'])})")
            continue
        error = best.tokens_per_s_per_gpu / row["published"] - 1
        errors.append(error)
        share = best.step.ep_comm / best.step.total
        host = best.step.host / best.step.total
        overlap = " (overlapped)" if row["overlap"] else ""
        print(f"{head} {best.tokens_per_s_per_gpu:9,.0f} {error:+7.1%}  all-to-all {share:.1%}{overlap}, "
              f"host {host:.1%}, recompute {best.layout.recompute}, etp {best.layout.etp or best.layout.tp}")
    if errors:
        print(f"{len(errors)} of {len(table)} runs predicted; {summary(table)}, "
              f"mean signed {sum(errors) / len(errors):+.1%}")


if __name__ == "__main__":
    main()
