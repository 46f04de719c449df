"""Memory per GPU of a layout: weights, gradients, optimizer states, activations (docs/training.md).

States follow Megatron (BF16 weights, BF16 gradients as NVIDIA's recipes reduce them with the FP32 gradients of
the optimizer's shard, FP32 master weights and Adam moments: 20 bytes per parameter unsharded, 4 + 16 / d with the
distributed optimizer; or FP32 gradient accumulation: 18, 6 + 12 / d), divided by the ZeRO stage's
sharding; an expert-parallel layout holds 1 / ep of the routed experts, their
states sharded over the ranks that hold the same experts (tp x cp x dp / (ep x etp)). Activations
follow Korthikanti et al. 2022 (arXiv 2205.05198), generalised to grouped-query
and latent attention, explicit head sizes, gated MLPs and experts, with sequence
parallelism and each recomputation choice; "block" recomputes the fewest whole
layers that fit.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.perf.hardware import Options
from clusterplan.perf.model import Transformer
from clusterplan.perf.numeric import as_float, ceil, clip, full_like, maximum, minimum, where
from clusterplan.perf.stage import Stage
from clusterplan.schema import FROZEN

BF16 = 2
RESERVED_BYTES = 2 * 2**30  # CUDA context, cuBLAS workspace and NCCL buffers (ASSUMPTION)
OPTIMIZER_BYTES = 12        # FP32 master weights and Adam's two moments, per parameter
GRAD_BYTES = 4              # FP32 gradient accumulation (Megatron's main_grad)


@dataclass(**FROZEN, eq=False)
class Memory:
    """Bytes per GPU, by what holds them (floats for one layout, arrays over layouts)."""

    weights: object
    gradients: object
    optimizer: object
    gathered_weights: object    # ZeRO-3: whole layers gathered for the pass computing and the one prefetched
    activations: object
    reserved: object            # CUDA context, workspaces, NCCL buffers
    total: object


@dataclass(**FROZEN, eq=False)
class Activations:
    """Activation bytes of one layer, per token of a micro-batch, and how many tokens each layer holds."""

    kept: object                # a layer that is not recomputed
    checkpoint: object          # a recomputed layer: its input alone
    tokens_held: object         # tokens whose activations a layer holds at once (micro-batches in flight)
    logits: object              # FP32 logits, when one stage holds them all


def memory(model: Transformer, options: Options, hbm_bytes: float, stage: Stage, layout) -> tuple[Memory, object]:
    """(memory per GPU, share of the stage's layers whose forward is recomputed) of ``layout``."""
    weights, gradients, optimizer, gathered = states(model, stage, layout.zero, options.grad_reduce)
    held = activations(model, options, stage, layout)
    fixed = weights + gradients + optimizer + gathered + RESERVED_BYTES
    redo = recomputed_share(fixed, held, hbm_bytes, stage.layers, layout.recompute)
    activation_bytes = (stage.layers * held.tokens_held * (redo * held.checkpoint + (1 - redo) * held.kept)
                        + held.logits)
    total = fixed + activation_bytes
    return Memory(weights=weights, gradients=gradients, optimizer=optimizer, gathered_weights=gathered,
                  activations=activation_bytes, reserved=full_like(total, RESERVED_BYTES), total=total), redo


def states(model: Transformer, stage: Stage, zero, grad_reduce: str = "bf16") -> tuple:
    """(weights, gradients, optimizer states, gathered ZeRO-3 weights) per GPU, in bytes.

    An FP8 run's weights count 2 bytes a parameter as in BF16 (ASSUMPTION): NVIDIA's recipes keep either BF16
    weights or FP8 ones with their transpose (``--fp8-param-gather``); the FP8 copy Transformer Engine may cache
    beside BF16 weights for a step's later micro-batches (up to 2 bytes a parameter more) is not counted.

    ``grad_reduce`` "fp32": the gradient buffer is FP32 (Megatron-LM's main_grad for BF16 runs), 4 bytes a
    parameter, sharded from ZeRO-2 on (Megatron's 18 B/parameter, 6 + 12/d with the distributed optimizer).
    "bf16" (grad_reduce_in_fp32 = False, as NeMo's and Megatron-Bridge's performance recipes run): the buffer is
    BF16, 2 bytes, and the optimizer keeps an FP32 copy of the gradients it steps, 4 bytes of its shard
    (Megatron's distributed-optimizer table: 4 + 16/d)."""
    # expert-parallel experts' states shard over the expert-data-parallel ranks (tp x cp x dp / (ep x etp)); ZeRO-3
    # excludes ep > 1
    dense, experts = stage.params - stage.expert_params, stage.expert_params
    weights = dense * BF16 / where(zero == 3, stage.shard, 1) + experts * BF16
    if grad_reduce == "bf16":   # a BF16 buffer, and the FP32 gradients of the optimizer's shard
        gradients = (dense * (BF16 / where(zero >= 2, stage.shard, 1) + GRAD_BYTES / where(zero >= 1, stage.shard, 1))
                     + experts * (BF16 / where(zero >= 2, stage.expert_shard, 1)
                                  + GRAD_BYTES / where(zero >= 1, stage.expert_shard, 1)))
    else:
        gradients = (dense * GRAD_BYTES / where(zero >= 2, stage.shard, 1)
                     + experts * GRAD_BYTES / where(zero >= 2, stage.expert_shard, 1))
    optimizer = (dense * OPTIMIZER_BYTES / where(zero >= 1, stage.shard, 1)
                 + experts * OPTIMIZER_BYTES / where(zero >= 1, stage.expert_shard, 1))
    # ZeRO-3 holds up to two whole layers at once (the one computing, the one prefetched)
    gathered = where(zero == 3, minimum(2, stage.layers) * model.layer_params / stage.tp * BF16
                     * (1 - 1 / stage.shard), 0.0)
    return weights, gradients, optimizer, gathered


def optimizer_params(stage: Stage, zero):
    """Parameters whose optimizer states one GPU keeps and steps: its share of the ZeRO shard from stage 1 on
    (the dense part over the shard, expert-parallel experts over the expert-data-parallel ranks)."""
    dense, experts = stage.params - stage.expert_params, stage.expert_params
    return dense / where(zero >= 1, stage.shard, 1) + experts / where(zero >= 1, stage.expert_shard, 1)


def activations(model: Transformer, options: Options, stage: Stage, layout) -> Activations:
    """Korthikanti et al.'s activation bytes per layer and token, with or without sequence parallelism."""
    h, ffn = model.hidden, model.active_ffn
    f_up = ffn * (2 if model.gated else 1)
    sp, ftp = stage.sequence_parallel, stage.tp
    # a GEMM's input is kept for its weight gradient: in FP8, Transformer Engine keeps the FP8 copy it cast for the
    # forward (one byte an element), in BF16 the input itself (two)
    linear = 1 if options.precision == "fp8" else 2
    # TP-replicated without SP: the norms' inputs (4h), the dropout masks (2h), the QKV and first MLP GEMMs' inputs
    repl = 6 * h + 2 * linear * h
    # Q and K, V kept for the backward, the attention output (the output GEMM's input); MLA adds its latents
    attention = 2 * model.q_dim + 2 * model.k_dim + 2 * model.v_dim + linear * model.o_dim
    latents = 2 * (model.q_lora_rank + model.kv_lora_rank + model.rope_head_dim) if model.kv_lora_rank else 0
    sharded = attention + 2 * f_up + linear * ffn                # the activation's input, the last GEMM's input
    kept = where(sp, (repl + sharded + latents) / ftp, repl + latents + sharded / ftp)
    if recipe_modules(model, options):
        kept = kept - where(layout.recompute == "selective", module_bytes(model, linear) / ftp, 0.0)
    if options.attention == "unfused":
        kept = kept + where(layout.recompute != "selective", 5 * model.heads * model.attended(options.seq_len) / ftp,
                            0.0)
    pp, virtual_stages = layout.pp, layout.virtual_stages
    in_flight = minimum(as_float(pp), ceil(stage.micro_batches)) * where(
        virtual_stages > 1, 1 + (pp - 1) / (as_float(pp) * virtual_stages), 1.0)
    if options.pipeline_schedule == "dualpipe":    # DeepSeek-V3 Table 2: pp + 1 micro-batches' chunks in flight
        in_flight = minimum(as_float(pp) + 1, ceil(stage.micro_batches))
    return Activations(kept=kept, checkpoint=2 * h / where(sp, ftp, 1.0), tokens_held=stage.tokens * in_flight,
                       # FP32 logits where the busiest rank holds the output layer: one stage, or DualPipe's rank
                       # 0, which holds the last stage as its second chunk
                       logits=stage.tokens * model.vocab / ftp * 4
                       * ((pp == 1) | (options.pipeline_schedule == "dualpipe")))


def recipe_modules(model: Transformer, options: Options) -> bool:
    """Whether "selective" recomputes the modules NVIDIA's MoE and MLA recipes name (Megatron-Core's
    ``recompute_modules``: ``mla_up_proj``, ``moe_act``) rather than core attention: a mixture-of-experts or
    latent-attention model on fused attention (Megatron-Bridge perf_recipes: DeepSeek-V3 ["layernorm",
    "mla_up_proj", "moe_act"], GPT-OSS and Nemotron-H ["layernorm", "moe_act"], Kimi K2 ["mla_up_proj"]).
    Fused attention keeps no scores, so recomputing core attention frees almost nothing there."""
    return options.attention != "unfused" and bool(model.kv_lora_rank or model.moe_layers)


def module_bytes(model: Transformer, linear: int):
    """Activation bytes per token and layer (averaged over the layers, before tensor parallelism) that the
    recipes' selective modules free: MLA's decompressed Q, K and V (BF16, rebuilt from the kept latents by the
    up-projections) and the routed experts' activation outputs (the last GEMM's input, ``linear`` bytes an
    element, rebuilt from the kept first-GEMM output). The norms' outputs (``layernorm``) are not counted."""
    mla = 2 * (model.q_dim + model.k_dim + model.v_dim) if model.kv_lora_rank else 0
    return mla + linear * model.routed_ffn


def recomputed_share(fixed, held: Activations, hbm_bytes: float, layers, recompute):
    """The share of the stage's layers whose forward is recomputed: none, all (full), or for "block" the
    fewest whole layers that bring the total within the GPU's memory (Megatron's --recompute-method block)."""
    need = ((fixed + held.logits + layers * held.kept * held.tokens_held - hbm_bytes)
            / ((held.kept - held.checkpoint) * held.tokens_held))
    block = clip(ceil(maximum(need, 0.0)), 0, layers) / layers
    return where(recompute == "full", 1.0, where(recompute == "block", block, 0.0))
