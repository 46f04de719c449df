"""Mixture-of-experts training throughput: predicted against published Megatron runs with expert parallelism.

Each row of benchmarks/data/validation/moe_training_throughput.csv is a published pre-training run (its
source and date beside it) with its layout: tp, pp, cp, virtual stages, ep, micro-batch and global batch
are held, and so is whether the recipe overlaps the expert all-to-alls with compute (``a2a_overlap``, the
recipe's moe_a2a_overlap: Megatron-Core's overlap_moe_expert_parallel_comm); the search picks the recomputation, the ZeRO stage and the experts' tensor-parallel size (etp: tp, or
1 with the expert-parallel group folded over tp x dp) that fit. The model is the preset read from the
model's Hugging Face config.json; the cluster is its GPU in 8-GPU nodes on 400G InfiniBand, one NIC per GPU.
Nothing is fitted to these rows. The table prints each run twice: before (every all-to-all exposed and
priced as a plain all-to-all, FP32 gradients: the model before issue 32) and after (the recipe's overlap,
dispatcher and BF16 gradient reduction). Then Qwen3-30B-A3B's two layouts in each release of the source
(moe_same_layout_versions.csv: 25.09 with token dropping, priced without the dropless router's sync; 25.11 and
26.02 dropless), and the summary with the 16-H100 run at its 25.11 figure and at its 25.09 one.

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


def cluster(gpu: str, gpus: int):
    spec = load_spec(overrides=[f'cluster.gpu="{gpu}"', f"cluster.num_nodes={max(1, gpus // 8)}",
                                'network.fabric="ib-ndr400"', "network.nics_per_node=8", "network.tiers=0"])
    return hardware(design(spec, load_catalog()))


def rows(overlap: bool = True, path: Path = DATA) -> list[dict]:
    """One row per published run: its figures and the prediction (None where no layout fits); ``overlap`` False
    prices every run with its all-to-alls exposed (the model before ``moe_overlap``); a row whose ``routing`` is
    tokendrop is priced without the dropless router's sync (``moe_dropless``)."""
    out = []
    for run in csv.DictReader(path.open(encoding="utf-8")):
        number = {key: int(run[key]) for key in ("num_gpus", "global_batch", "micro_batch", "seq_len", "tp", "pp",
                                                  "cp", "vp", "ep")}
        model = PRESETS[run["model"]]
        options = Options(seq_len=number["seq_len"], global_batch=number["global_batch"], precision=run["precision"],
                          moe_overlap=overlap and run["a2a_overlap"] == "1",
                          grad_reduce="bf16" if overlap else "fp32",   # the recipes' grad_reduce_in_fp32 = False
                          moe_dispatcher=run["dispatcher"] if overlap else "alltoall",
                          moe_dropless=run.get("routing", "dropless") == "dropless")
        fixed = Constraints(tp=number["tp"], pp=number["pp"], cp=number["cp"], ep=number["ep"],
                            virtual_stages=number["vp"], mbs=number["micro_batch"])
        found = search(model, cluster(run["gpu"], number["num_gpus"]), options, number["num_gpus"], fixed, top=1)
        out.append({**run, **number, "published": float(run["tokens_per_s_per_gpu"]),
                    "prediction": found.best[0] if found.best else None, "rejected": found.rejected,
                    "overlap": options.moe_overlap})
    return out


def main() -> None:
    for title, overlap in (("before (all-to-alls exposed, plain all-to-all, FP32 gradients)", False),
                           ("after (the recipe's overlap, dispatcher and gradient precision)", True)):
        print(f"{title}:")
        report(rows(overlap))
    versions()


def versions() -> None:
    """Qwen3-30B-A3B's two layouts in each release of the source that lists them, and the summary either way."""
    table = rows(True, VERSIONS)
    print("the same layouts in the source's releases (25.09 token dropping, 25.11 and 26.02 dropless):")
    report(table, tag=True)
    main_rows = rows(True)
    tokendrop = next(row for row in table if row["system"] == "DGX-H100" and row["routing"] == "tokendrop")
    swapped = [tokendrop if (row["model"], row["system"]) == ("qwen3-30b-a3b", "DGX-H100") else row
               for row in main_rows]
    for title, chosen in (("with Qwen3-30B-A3B on 16 H100 at its 25.11 figure (dropless)", main_rows),
                          ("with Qwen3-30B-A3B on 16 H100 at its 25.09 figure (token dropping)", swapped)):
        print(f"{title}: {summary(chosen)}")


def summary(table: list[dict]) -> str:
    """Median (upper) and max |error|, as the table's summary line."""
    ordered = sorted(abs(row["prediction"].tokens_per_s_per_gpu / row["published"] - 1) for row in table
                     if row["prediction"] is not None)
    return f"median |error| {ordered[len(ordered) // 2]:.1%}, max {ordered[-1]:.1%}"


def report(table: list[dict], tag: bool = False) -> None:
    """The runs' table and its summary line."""
    lead = f"{'from':5s} {'routing':9s} {'mbs':5s} " if tag else ""
    print(f"{lead}{'model':16s} {'system':9s} {'GPUs':>4s} {'tp.pp.dp.cp.ep':>15s} {'vp':>3s} {'published':>9s} "
          f"{'predicted':>9s} {'error':>7s}  (tokens/s per GPU)")
    errors = []
    for row in table:
        best = row["prediction"]
        dp = row["num_gpus"] // (row["tp"] * row["pp"] * row["cp"])
        shape = f"{row['tp']}.{row['pp']}.{dp}.{row['cp']}.{row['ep']}"
        head = (f"{row['model']:16s} {row['system']:9s} {row['num_gpus']:4d} {shape:>15s} {row['vp']:3d} "
                f"{row['published']:9,.0f}")
        if tag:
            head = f"{row['source'].split(' NeMo')[0].split(', ')[-1]:5s} {row['routing']:9s} {row['micro_batch']:<5d} {head}"
        if best is None:
            print(f"{head} {'no fit':>9s}  ({'; '.join(row['rejected'])})")
            continue
        error = best.tokens_per_s_per_gpu / row["published"] - 1
        errors.append(error)
        share = best.step.ep_comm / best.step.total
        overlap = " (overlapped)" if row["overlap"] else ""
        print(f"{head} {best.tokens_per_s_per_gpu:9,.0f} {error:+7.1%}  all-to-all {share:.1%} of the step{overlap}, "
              f"recompute {best.layout.recompute}, ZeRO {best.layout.zero}, etp {best.layout.etp or best.layout.tp}")
    if errors:
        ordered = sorted(abs(error) for error in errors)
        print(f"{len(errors)} of {len(table)} runs predicted; median |error| {ordered[len(ordered) // 2]:.1%}, "
              f"max {ordered[-1]:.1%}, mean signed {sum(errors) / len(errors):+.1%}")


if __name__ == "__main__":
    main()
