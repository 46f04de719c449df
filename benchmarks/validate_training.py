"""Predicted vs measured training throughput on the published runs in ../shared/data/validation/.

Each row runs with its own hardware as the scenario (GPU, nodes, fabric), its
published layout held fixed and the software its source names (attention kernel,
overlap of DP and TP traffic); what the source does not state (micro-batch size,
recomputation, interleaving, and the ZeRO stage where a run used none) is chosen
by the layout search. Measured figures are
turned into step times with the source's own FLOP convention
(../shared/data/README.md), so like is compared with like. Sources: Megatron SC21
Tables 1 and 2, Megatron-Core on H100, llm-foundry (MPT), vTrain's single-node
runs, BLOOM-176B and OPT-175B, and (in the project's validation data) the dense FP8
runs of NVIDIA's Megatron-Bridge performance summary on H100, B200 and GB200;
docs/training.md#validation explains the misses.

    python benchmarks/validate_training.py [--rows]
"""

from __future__ import annotations

import argparse
import csv
import sys

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.evidence import training_regime
from clusterplan.perf.layout import Constraints
from clusterplan.perf.software import ERAS
from clusterplan.perf.model import Transformer, with_seq_len
from clusterplan.perf.presets import preset
from clusterplan.perf.search import search
from clusterplan.plan.size_platform import platform
from clusterplan.plan.workload import job_domain_gpus
from clusterplan.perf.step import Prediction
from clusterplan.spec import load_spec
import baseline
from bands import print_regimes, print_summary
from validation_data import PROJECT, shared

DATA = shared()


def cluster(gpu: str, gpus: int, fabric: str, nics: int):
    nodes = max(1, gpus // 8)
    spec = load_spec(overrides=[f"cluster.gpu={gpu!r}".replace("'", '"'), f"cluster.num_nodes={nodes}",
                                f'network.fabric="{fabric}"', f"network.nics_per_node={nics}", "network.tiers=0"])
    return hardware(design(spec, load_catalog()))


def gpt(name, layers, hidden, heads, vocab, seq, **kw) -> Transformer:
    return Transformer(name=name, layers=layers, hidden=hidden, heads=heads, ffn_hidden=4 * hidden, vocab=vocab,
                       seq_len=seq, **kw)


def facts(model, gpu: str, gpus: int, fabric: str, seq: int, precision: str = "bf16", attention: str = "flash",
          domain_gpus: int = 8):
    """What the band table needs of a run: its regime's inputs and its envelope (fabric technology, sequence, the
    cluster's NVLink domain, and the settings every run here is predicted with: no CUDA graphs, 1F1B)."""
    technology = load_catalog().get("fabrics", fabric).technology
    return {"gpu": gpu, "precision": precision, "num_gpus": gpus, "params": model.params, "attention": attention,
            "technology": technology, "seq_len": seq, "experts": model.experts, "domain_gpus": domain_gpus,
            "cuda_graphs": "none", "schedule": "1f1b"}


def predict(model, hw, gpus, seq, batch, fixed: Constraints, **options) -> Prediction | None:
    # the Megatron-LM, Megatron-DeepSpeed, FSDP and Meta runs accumulate and reduce gradients in FP32 (Megatron-LM
    # forces it for BF16; DeepSpeed's BF16 optimizer and llm-foundry's FSDP mixed precision reduce in FP32; the Llama 3
    # paper, section 3.3.2, Numerical stability); the Megatron-Bridge rows pass their recipes' bf16
    options.setdefault("grad_reduce", "fp32")
    found = search(model, hw, Options(seq_len=seq, global_batch=batch, **options), gpus, fixed, top=1)
    return found.best[0] if found.best else None


def sc21_table1(era: str = "megatron-2021"):
    for r in csv.DictReader(open(DATA / "megatron_sc21_table1.csv")):
        h, L, s, V, B = (int(r[k]) for k in ("hidden_size", "num_layers", "seq_len", "vocab_size", "global_batch_size"))
        gpus = int(r["num_gpus"])
        model = gpt(f"gpt-{r['params_billion']}b", L, h, int(r["attention_heads"]), V, s)
        measured = sc21_flops(model, B, s) / (float(r["achieved_tflops_per_gpu"]) * 1e12 * gpus)
        hw = cluster("a100-80gb-sxm", gpus, "ib-ndr200", 8)
        fixed = Constraints(tp=int(r["tp_size"]), pp=int(r["pp_size"]), cp=1, recompute="full")
        best = predict(model, hw, gpus, s, B, fixed, **ERAS[era])
        yield ("megatron-sc21-t1", f"{model.name} {gpus} GPUs", measured, best,
               facts(model, "a100-80gb-sxm", gpus, "ib-ndr200", s, attention="unfused"))


GPT3_175B = dict(layers=96, hidden=12288, heads=96)
MT_NLG_530B = dict(layers=105, hidden=20480, heads=128)


def sc21_table2(era: str = "megatron-2021"):
    """ZeRO-3 without model parallelism against PTD-P, 175B and 530B on Selene (A100 80GB, 8 x HDR 200 Gb/s)."""
    for r in csv.DictReader(open(DATA / "megatron_sc21_table2_zero3_vs_ptd.csv")):
        big = float(r["params_billion"]) > 200
        shape = MT_NLG_530B if big else GPT3_175B
        h, L, s, V, B = shape["hidden"], shape["layers"], 2048, 51200, int(r["global_batch_size"])
        gpus, mp = int(r["num_gpus"]), int(r["model_parallel_size"])
        model = gpt(f"gpt-{r['params_billion']}b", L, h, shape["heads"], V, s)
        measured = sc21_flops(model, B, s) / (float(r["achieved_tflops_per_gpu"]) * 1e12 * gpus)
        hw = cluster("a100-80gb-sxm", gpus, "ib-ndr200", 8)
        zero3 = r["scheme"].startswith("ZeRO")
        fixed = Constraints(tp=1 if zero3 else 8, pp=1 if zero3 else mp // 8, zero=3 if zero3 else None, cp=1,
                            mbs=int(r["microbatch_size"]), recompute="full")
        best = predict(model, hw, gpus, s, B, fixed, **ERAS[era])
        yield ("megatron-sc21-t2", f"{'zero3' if zero3 else 'ptd-p'} {r['params_billion']}b {gpus}", measured, best,
               facts(model, "a100-80gb-sxm", gpus, "ib-ndr200", s, attention="unfused"))


def megatron_core():
    for r in csv.DictReader(open(DATA / "megatron_core_h100_weak_scaling.csv")):
        h, L, s, V, B = (int(r[k]) for k in ("hidden_size", "num_layers", "seq_len", "vocab_size", "global_batch_size"))
        gpus = int(r["num_gpus"])
        model = gpt(r["model_size"], L, h, int(r["attention_heads"]), V, s, bias=False, tied_embeddings=False,
                    learned_positions=False, norm="rmsnorm")
        measured = model.model_flops_per_token(s) * B * s / (float(r["tflops_per_gpu"]) * 1e12 * gpus)
        hw = cluster("h100-sxm", gpus, "ib-ndr400", 8)
        best = predict(model, hw, gpus, s, B, Constraints(tp=int(r["tp_size"]), pp=int(r["pp_size"]), cp=1,
                                                          zero=1 if int(r["dp_size"]) > 1 else None))
        yield ("megatron-core-h100", f"{r['model_size']} {gpus} GPUs", measured, best,
               facts(model, "h100-sxm", gpus, "ib-ndr400", s))


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
        fixed = Constraints(tp=1, pp=1, cp=1, mbs=mbs, zero=3 if r["sharding_strategy"] == "FULL_SHARD" else 2,
                            recompute="full" if r["activation_checkpointing"] == "True" else None)
        precision = "fp8" if "fp8" in r["precision"] else "bf16"
        # Composer drives Transformer Engine without Megatron's first-micro-batch hint: FP8 weights recast each time
        best = predict(model, hw, gpus, s, batch, fixed, precision=precision, attention="flash1",
                       fp8_weight_cache=False)
        yield ("llm-foundry", f"{r['model']} {r['gpu']} {gpus} s{s}", measured, best,
               facts(model, gpu, gpus, fabric, s, precision, "flash1"))


def vtrain():
    """vTrain's single-node ground truth: Megatron-DeepSpeed GPT runs on 2 to 8 A100 with activation
    checkpointing, no gradient bucketing (so no overlap of the gradient all-reduce), 1F1B (config/validation/single/
    in VIA-Research/vTrain: use_checkpoint true, use_gradient_bucket false). GPT-2 vocabulary (50,257)."""
    for r in csv.DictReader(open(DATA / "vtrain_ground_truth_single.csv", encoding="utf-8-sig")):
        get = lambda k: int(r[k])  # noqa: E731
        h, L, s, gpus = get("hidden size"), get("# layers"), get("sequence length"), get("# GPUs")
        model = gpt(f"gpt-h{h}-l{L}", L, h, get("attention heads"), 50257, s)
        hw = cluster("a100-80gb-sxm", gpus, "ib-ndr200", 8)
        fixed = Constraints(tp=get("tensor parallelism"), pp=get("pipeline parallelism"),
                            dp=get("data parallelism"), cp=1, mbs=get("micro batch"), virtual_stages=1,
                            recompute="full")
        best = predict(model, hw, gpus, s, get("global batch"), fixed, **ERAS["megatron-2021"])
        yield ("vtrain-single", f"h{h} l{L} {gpus}g t{fixed.tp}p{fixed.pp}d{fixed.dp} b{get('global batch')}",
               float(r["iteration time (ms)"]) / 1e3, best,
               facts(model, "a100-80gb-sxm", gpus, "ib-ndr200", s, attention="unfused"))


def other_published(era: str = "megatron-2021"):
    """BLOOM-176B (Megatron-DeepSpeed, 384 A100 80GB on Omni-Path) and OPT-175B (992 A100 80GB) from
    other_published_throughput.csv. BLOOM: ALiBi, tied embeddings, TP 4 PP 12 DP 8, ZeRO-1, full recompute,
    DeepSpeed's plain 1F1B pipeline (no interleaving); rows that print seconds per iteration are compared
    directly, the rest through BLOOM's hardware-FLOP formula (the SC21 one). Jean Zay's nodes have 4 x 100 Gb/s Omni-Path links, modelled as 4 x 100 Gb/s RoCE (the catalog has
    no Omni-Path). OPT-175B: TP 8 over FSDP, 992 sequences of 2,048 (its "2M tokens"), fp16 (same peak as BF16),
    activation checkpointing; its "147 TFLOP/s per GPU" is read as hardware FLOPs (recompute included)."""
    import re

    bloom = gpt("bloom-176b", 70, 14336, 112, 250680, 2048, learned_positions=False)
    for r in csv.DictReader(open(DATA / "other_published_throughput.csv")):
        if r["model"] != "BLOOM-176B" or "degraded" in r["metric"]:
            continue
        B = int(r["global_batch"])
        mbs = int(m.group(1)) if (m := re.search(r"MBS=(\d+)", r["parallelism"])) else 2
        per_iter = re.search(r"([\d.]+) s/iter", r["notes"])
        if per_iter:
            measured = float(per_iter.group(1))
        else:
            measured = sc21_flops(bloom, B, 2048) / (float(r["value"].split("-")[0]) * 1e12 * 384)
        hw = cluster("a100-80gb-sxm", 384, "roce-100g", 4)
        fixed = Constraints(tp=4, pp=12, cp=1, mbs=mbs, virtual_stages=1, recompute="full", zero=1)
        best = predict(bloom, hw, 384, 2048, B, fixed, **ERAS[era])
        basis = "s/iter" if per_iter else "TFLOP/s"
        yield ("bloom-176b", f"b{B} mbs{mbs} ({basis}, line {r['source'].split()[-1]})", measured, best,
               facts(bloom, "a100-80gb-sxm", 384, "roce-100g", 2048, attention="unfused"))
    # MT-NLG 530B (Smith et al. 2022, arXiv 2201.11990): TP 8 PP 35 DP 8 on Selene, batch 1,920 of 2,048,
    # Megatron-DeepSpeed with full recompute; 65.43K tokens/s as the PaLM paper cites its step times
    mtnlg = gpt("mt-nlg-530b", **MT_NLG_530B, vocab=51200, seq=2048)
    for r in csv.DictReader(open(DATA / "other_published_throughput.csv")):
        if r["model"].startswith("Megatron-Turing") and r["metric"] == "training throughput":
            measured = 1920 * 2048 / (float(r["value"]) * 1e3)
            best = predict(mtnlg, cluster("a100-80gb-sxm", 2240, "ib-ndr200", 8), 2240, 2048, 1920,
                           Constraints(tp=8, pp=35, dp=8, cp=1, virtual_stages=1, recompute="full", zero=1),
                           **ERAS[era])
            yield ("mt-nlg-530b", "2240 GPUs (65.43K tokens/s)", measured, best,
                   facts(mtnlg, "a100-80gb-sxm", 2240, "ib-ndr200", 2048, attention="unfused"))
    opt = gpt("opt-175b", 96, 12288, 96, 50272, 2048)
    measured = sc21_flops(opt, 992, 2048) / (147e12 * 992)
    hw = cluster("a100-80gb-sxm", 992, "ib-ndr200", 8)
    best = predict(opt, hw, 992, 2048, 992, Constraints(tp=8, pp=1, cp=1, recompute="full", zero=3),
                   attention="unfused", sequence_parallel=False, tp_overlap=False)
    yield ("opt-175b", "992 GPUs (147 TFLOP/s)", measured, best,
           facts(opt, "a100-80gb-sxm", 992, "ib-ndr200", 2048, attention="unfused"))


def rack_scale(gpu: str, gpus: int):
    """(hardware, NVLink domain) of ``gpus`` GPUs of a rack-scale system (GB200 NVL72), built as ``size`` builds it
    (its server, one 400G NIC a GPU, a cooling that takes the rack), in as many racks as they need; the job takes
    GPUs of each rack as ``plan`` would (``job_domain_gpus``: 256 GPUs as 4 racks of 64, an ASSUMPTION: NVIDIA does
    not say)."""
    catalog = load_catalog()
    base = load_spec(overrides=['network.fabric="ib-ndr400"', "network.tiers=0"])
    built = platform(base, catalog, gpu, 10**9, key=gpu)   # the counts it would search are not used here
    racks = -(-gpus // built.domain_gpus)
    spec = load_spec(overrides=[f'cluster.gpu="{gpu}"', f'cluster.server="{built.server}"',
                                f"cluster.num_nodes={racks * built.domain_gpus // built.gpus_per_node}",
                                f"cluster.gpus_per_node={built.gpus_per_node}", 'network.fabric="ib-ndr400"',
                                f"network.nics_per_node={built.nics_per_node}", "network.tiers=0",
                                f'facility.cooling="{built.cooling}"'])
    built_design = design(spec, catalog)
    return hardware(built_design, domain_gpus=job_domain_gpus(gpus, built_design)), built_design.domain_gpus


def megatron_bridge():
    """Dense FP8 pre-training runs of NVIDIA's Megatron-Bridge performance summary (Llama 3 8B to 405B on DGX H100,
    B200 and GB200, each with its published layout, dense_training_throughput.csv in the project's validation
    data): tp, pp, cp, virtual stages and micro-batch held, FSDP as ZeRO-3, the recomputation searched. Current
    Megatron software (fused attention, sequence parallelism, overlapped TP and DP communication); 8 x 400G
    InfiniBand a node (GB200: one NIC a GPU, the rack its NVLink domain). Nothing is fitted to these rows."""
    for r in csv.DictReader((PROJECT / "dense_training_throughput.csv").read_text(encoding="utf-8").splitlines()):
        number = {key: int(r[key]) for key in ("num_gpus", "global_batch", "micro_batch", "seq_len", "fsdp", "tp",
                                                "pp", "cp", "vp")}
        gpus, s, batch = number["num_gpus"], number["seq_len"], number["global_batch"]
        model = with_seq_len(preset(r["model"]), s)
        measured = batch * s / (float(r["tokens_per_s_per_gpu"]) * gpus)
        fixed = Constraints(tp=number["tp"], pp=number["pp"], cp=number["cp"], virtual_stages=number["vp"],
                            mbs=number["micro_batch"], zero=3 if number["fsdp"] else 1)   # else the distributed optimizer
        hw, domain = (rack_scale(r["gpu"], gpus) if r["system"] == "DGX-GB200"
                      else (cluster(r["gpu"], gpus, "ib-ndr400", 8), 8))
        # the recipes reduce gradients in BF16 (Megatron-Bridge's performance configs: grad_reduce_in_fp32 = False)
        best = predict(model, hw, gpus, s, batch, fixed, precision=r["precision"], grad_reduce="bf16")
        yield ("megatron-bridge", f"{r['model']} {r['system']} {gpus}", measured, best,
               facts(model, r["gpu"], gpus, "ib-ndr400", s, r["precision"], domain_gpus=domain))


def sc21_flops(model, batch, s):
    """Megatron's hardware FLOPs per step (SC21 eq. 3, recomputation included)."""
    h, L, V = model.hidden, model.layers, model.vocab
    return 96 * batch * s * L * h * h * (1 + s / (6 * h) + V / (16 * L * h))


SOURCES = (sc21_table1, sc21_table2, megatron_core, llm_foundry, vtrain, other_published, megatron_bridge)


def residuals():
    """(source, run, measured s, the best Prediction or None, the run's facts) of every validated run."""
    for source in SOURCES:
        yield from source()


ERA_RUNS = ("megatron-sc21-t1", "megatron-sc21-t2", "bloom-176b", "mt-nlg-530b")


def print_eras() -> None:
    """The A100 runs whose software is the 2021-22 Megatron stack (SC21's tables, BLOOM-176B on Megatron-DeepSpeed,
    MT-NLG 530B), predicted with workload.software "megatron-2021" and with the default ("current")."""
    found: dict[str, dict[str, list[float]]] = {}
    for era in ("megatron-2021", "current"):
        for source in (sc21_table1, sc21_table2, other_published):
            for name, _, measured, best, _ in source(era):
                if name in ERA_RUNS and best is not None:
                    found.setdefault(name, {}).setdefault(era, []).append(best.step.total / measured - 1)
    for era in ("megatron-2021", "current"):
        print_summary(f"Software era {era!r}: signed step-time error of the 2021-22 A100 runs, per source",
                      {name: found[name][era] for name in ERA_RUNS}, 20)


def regime_of(run_facts: dict) -> tuple[str, ...]:
    return training_regime(**{key: run_facts[key] for key in ("gpu", "precision", "num_gpus", "params", "attention")})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", action="store_true", help="print every run (the default prints the summaries)")
    parser.add_argument("--eras", action="store_true",
                        help="the runs of 2021-22 software predicted with their era's switches and at today's")
    parser.add_argument("--write-baseline", metavar="MODEL",
                        help="save these residuals as the 'before' of later runs (MODEL: the commit they come from)")
    args = parser.parse_args(argv)
    if args.eras:
        print_eras()
        return 0
    changes: list[tuple[str, str, str, float]] = []
    if not DATA.is_dir():
        print(f"no validation data at {DATA}", file=sys.stderr)
        return 1
    errors: dict[str, list[float]] = {}
    by_regime: list[tuple[tuple[str, ...], float]] = []
    if args.rows:
        print(f"{'source':20s} {'run':24s} {'measured s':>11s} {'predicted s':>12s} {'error':>8s}  layout")
    for name, run, measured, best, run_facts in residuals():
        if best is None:
            print(f"{name:20s} {run:24s} {measured:11.3f} {'infeasible':>12s}")
            continue
        error = best.step.total / measured - 1
        errors.setdefault(name, []).append(error)
        by_regime.append((regime_of(run_facts), error))
        key = f"#{len(errors[name])} {run}"
        changes += [(baseline.SOURCE, name, key, error),
                    (baseline.REGIME, ", ".join(regime_of(run_facts)), f"{name} {key}", error)]
        lay = best.layout
        if args.rows:
            print(f"{name:20s} {run:24s} {measured:11.3f} {best.step.total:12.3f} {error:+8.1%}  "
                  f"tp{lay.tp} pp{lay.pp} dp{lay.dp} mbs{lay.mbs} v{lay.virtual_stages} {lay.recompute}")
    if args.rows:
        print()
    print_summary("Signed error of the predicted step time (predicted / measured - 1), per source", errors, 20)
    print_regimes("... per regime (GPU, precision, GPUs, model size, software era)", by_regime)
    if args.write_baseline:
        print(f"baseline written: {baseline.write('training', changes, args.write_baseline)}")
        return 0
    before, title = baseline.read("training"), baseline.header("training") or "no baseline saved"
    baseline.print_change({baseline.SOURCE: f"Before ({title}) and after: signed step-time error, per source",
                           baseline.REGIME: "... per regime"}, changes, before, {baseline.SOURCE: 20})
    return 0


if __name__ == "__main__":
    sys.exit(main())
