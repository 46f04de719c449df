"""Predicted vs measured training throughput on the published runs in ../shared/data/validation/.

Each row runs with its own hardware as the scenario (GPU, nodes, fabric) and its
published layout held fixed; what the source does not state (micro-batch size,
recomputation, interleaving) is chosen by the layout search. Measured figures are
turned into step times with the source's own FLOP convention
(../shared/data/README.md), so like is compared with like.

    python benchmarks/validate_training.py
"""

from __future__ import annotations

import csv
import statistics
import sys
from pathlib import Path

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.perf import training
from clusterplan.perf.model import Transformer
from clusterplan.spec import load_spec

DATA = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "validation"


def cluster(gpu: str, gpus: int, fabric: str, nics: int):
    nodes = max(1, gpus // 8)
    spec = load_spec(overrides=[f"cluster.gpu={gpu!r}".replace("'", '"'), f"cluster.num_nodes={nodes}",
                                f'network.fabric="{fabric}"', f"network.nics_per_node={nics}", "network.tiers=0"])
    return training.hardware(design(spec, load_catalog()))


def gpt(name, layers, hidden, heads, vocab, seq, **kw) -> Transformer:
    return Transformer(name=name, layers=layers, hidden=hidden, heads=heads, ffn_hidden=4 * hidden, vocab=vocab,
                       seq_len=seq, **kw)


def predict(model, hw, gpus, seq, batch, fixed, **options):
    opts = training.Options(seq_len=seq, global_batch=batch, **options)
    found = training.search(model, hw, opts, gpus, fixed, top=1)
    return found.best[0] if found.best else None


def sc21_table1():
    for r in csv.DictReader(open(DATA / "megatron_sc21_table1.csv")):
        h, L, s, V, B = (int(r[k]) for k in ("hidden_size", "num_layers", "seq_len", "vocab_size", "global_batch_size"))
        gpus = int(r["num_gpus"])
        model = gpt(f"gpt-{r['params_billion']}b", L, h, int(r["attention_heads"]), V, s)
        flops = 96 * B * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))
        measured = flops / (float(r["achieved_tflops_per_gpu"]) * 1e12 * gpus)
        hw = cluster("a100-80gb-sxm", gpus, "ib-ndr200", 8)
        best = predict(model, hw, gpus, s, B, {"tp": int(r["tp_size"]), "pp": int(r["pp_size"]), "cp": 1,
                                               "recompute": 2, "zero": 0}, attention="unfused",
                       sequence_parallel=False, overlap_grad_reduce=False)
        yield "megatron-sc21-t1", f"{model.name} {gpus} GPUs", measured, best


def megatron_core():
    for r in csv.DictReader(open(DATA / "megatron_core_h100_weak_scaling.csv")):
        h, L, s, V, B = (int(r[k]) for k in ("hidden_size", "num_layers", "seq_len", "vocab_size", "global_batch_size"))
        gpus = int(r["num_gpus"])
        model = gpt(r["model_size"], L, h, int(r["attention_heads"]), V, s, bias=False, tied_embeddings=False,
                    learned_positions=False, norm="rmsnorm")
        measured = model.model_flops_per_token(s) * B * s / (float(r["tflops_per_gpu"]) * 1e12 * gpus)
        hw = cluster("h100-sxm", gpus, "ib-ndr400", 8)
        best = predict(model, hw, gpus, s, B, {"tp": int(r["tp_size"]), "pp": int(r["pp_size"]), "cp": 1,
                                               "zero": 1 if int(r["dp_size"]) > 1 else 0})
        yield "megatron-core-h100", f"{r['model_size']} {gpus} GPUs", measured, best


# MPT shapes (mosaicml/llm-foundry scripts/train/yamls/pretrain/mpt-*.yaml): d_model, heads, layers;
# expansion 4, vocab 50368, ALiBi (no position table), no biases, tied embeddings.
MPT = {"125m": (768, 12, 12), "350m": (1024, 16, 24), "760m": (1536, 12, 24), "1b": (2048, 16, 24),
       "3b": (2560, 20, 32), "7b": (4096, 32, 32), "13b": (5120, 40, 40), "30b": (7168, 56, 48),
       "70b": (8192, 64, 80)}
FOUNDRY_GPU = {"a100_40gb": ("a100-40gb-sxm", "ib-ndr200"), "a100_80gb": ("a100-80gb-sxm", "ib-ndr200"),
               "h100_80gb": ("h100-sxm", "ib-ndr400")}


def llm_foundry():
    for r in csv.DictReader(open(DATA / "llmfoundry_mpt_benchmarks.csv")):
        h, a, L = MPT[r["model"]]
        s, gpus, mbs = int(r["seq_len"]), int(r["num_gpus"]), int(r["micro_batch_size"])
        model = gpt(f"mpt-{r['model']}", L, h, a, 50368, s, bias=False, learned_positions=False)
        gpu, fabric = FOUNDRY_GPU[r["gpu"]]
        hw = cluster(gpu, gpus, fabric, 8)
        batch = int(r["global_batch_size_seqs"])
        measured = batch * s / float(r["throughput_tokens_per_s"])
        fixed = {"tp": 1, "pp": 1, "cp": 1, "mbs": mbs, "zero": 3 if r["sharding_strategy"] == "FULL_SHARD" else 2,
                 "recompute": 2 if r["activation_checkpointing"] == "True" else 0}
        best = predict(model, hw, gpus, s, batch, fixed, precision="fp8" if "fp8" in r["precision"] else "bf16")
        yield "llm-foundry", f"{r['model']} {r['gpu']} {gpus} s{s}", measured, best


def main() -> int:
    if not DATA.is_dir():
        print(f"no validation data at {DATA}", file=sys.stderr)
        return 1
    errors: dict[str, list[float]] = {}
    print(f"{'source':20s} {'run':24s} {'measured s':>11s} {'predicted s':>12s} {'error':>8s}  layout")
    for source in (sc21_table1, megatron_core, llm_foundry):
        for name, run, measured, best in source():
            if best is None:
                print(f"{name:20s} {run:24s} {measured:11.3f} {'infeasible':>12s}")
                continue
            error = best["step_time_s"] / measured - 1
            errors.setdefault(name, []).append(abs(error))
            lay = best["layout"]
            print(f"{name:20s} {run:24s} {measured:11.3f} {best['step_time_s']:12.3f} {error:+8.1%}  "
                  f"tp{lay['tp']} pp{lay['pp']} dp{lay['dp']} mbs{lay['mbs']} v{lay['vpp']} {lay['recompute']}")
    print()
    for name, errs in errors.items():
        print(f"{name:20s} rows {len(errs):3d}  median |error| {statistics.median(errs):6.1%}  max {max(errs):6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
