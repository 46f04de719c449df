"""Compute time of one micro-batch on the busiest stage: a roofline per GEMM, attention, element-wise passes.

A GEMM takes max(FLOPs / (peak x efficiency x k / (k + k0)), bytes / HBM bandwidth);
fused attention runs at the GPU's measured kernel rate, unfused attention as batched
GEMMs plus a memory-bound softmax; element-wise passes (norms, bias-dropout-add,
activations, a MoE layer's token permutations) are memory-bound; every kernel pays a fixed launch and tail cost
(docs/training.md). Floats for one layout, arrays over layouts.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, replace

from clusterplan.perf.experts import LAUNCH_S, Host, captures, expert_gemms_s, routed_experts
from clusterplan.perf.hardware import Hardware, Options
from clusterplan.perf.memory import recipe_modules
from clusterplan.perf.model import Transformer
from clusterplan.perf.numeric import as_float, maximum, where
from clusterplan.perf.stage import Stage
from clusterplan.schema import FROZEN

BF16 = 2
KERNEL_S = 2e-6            # ASSUMPTION: fixed cost per kernel (launch gap and tail), about 40 per layer
ATTENTION_BWD = 0.8        # fused attention backward runs at 0.8 of its forward FLOP rate (FlashAttention-2/3 papers)
# Fused attention kernels: (forward, backward) slowdown against the GPU's kernel rate. "flash" runs at the GPU's
# best (attention_efficiency), "flash2" at FlashAttention-2's (flash2_efficiency); "flash1", the first
# generation (FlashAttention 1 and its Triton port, 2022-23), is 1.4x slower forward and 2x backward than
# FlashAttention-2 (Dao 2023, arXiv 2307.08691, section 4.1).
FUSED = {"flash": (1.0, 1.0), "flash2": (1.0, 1.0), "flash1": (1.4, 2.0)}
# FP8 GEMMs reach 0.93 of the BF16 GEMM efficiency against their (doubled) peak: the mean ratio of best-shape
# ceilings on Hopper, FP8 1,453-1,523 of 1,979 TFLOP/s (MAMF on H200, tilelang on H800) over BF16 794.5 of 989
# (MAMF); the rows and their sources are in benchmarks/data/validation/fp8_matmul_ceilings.csv
FP8_EFFICIENCY = 0.93
# An FP8 GEMM's BF16 operands are cast to FP8 with their transpose and amax in one pass (Transformer Engine's fused
# cast-transpose): read 2 bytes, write 1 + 1 per element, memory-bound. Forward: the input every micro-batch, the
# weight on a step's first only (Megatron tells Transformer Engine which micro-batch is the first, and it keeps
# the FP8 weight for the others; ``Options.fp8_weight_cache`` False: every micro-batch); backward: the output's
# gradient once, for both gradient GEMMs (the input's gradient takes the weight's kept transpose, the weight's
# gradient the input's kept transpose)
FP8_CAST_BYTES = 4
HBM_EFFICIENCY = 0.8        # ASSUMPTION: share of HBM bandwidth that streaming kernels reach
# Megatron's fused scale-mask-softmax needs micro-batch x heads per GPU divisible by 4 (fused_softmax.py,
# is_kernel_available); otherwise it runs PyTorch's ops in FP32: cast up (read 2, write 4 bytes a score), scale
# (4 + 4), mask (4 + 1 + 4), softmax (two reads and a write, 12), cast back (4 + 2): 41 bytes a score forward
# where the fused kernel moves 4; backward the same chain again, 40 where it moves 6; 4 more kernels each way
SOFTMAX_FALLBACK_BYTES = (41 - 4, 40 - 6)
SOFTMAX_FALLBACK_KERNELS = 4


@dataclass(**FROZEN, eq=False)
class Compute:
    """Seconds of one micro-batch on the busiest stage (floats, or arrays over layouts)."""

    layer_gemm_s: object        # one layer's forward GEMMs: what tensor-parallel communication can hide behind
    forward_s: object           # every layer's forward and a third of the logits
    backward_s: object          # every layer's backward, the recomputation, two thirds of the logits
    recompute_s: object         # the part of backward_s that recomputes forward passes
    launch_s: object = 0.0      # host time to launch kernels beyond a dense layer's own: a MoE model's routed
                                # experts (experts.py), the unfused softmax's PyTorch fallback
    launch_wait_s: object = 0.0  # ... the part of it the GPU waits for (after the dropless router's sync; both
                                 # routed blocks in the merged forward-backward schedule: experts.py)
    weight_grad_s: object = 0.0  # the part of backward_s that computes weight gradients (W of zero-bubble and
                                 # DualPipe schedules): one of each linear layer's two gradient GEMMs


def memory_bandwidth_Bps(hw: Hardware) -> float:
    """HBM bandwidth that streaming kernels reach."""
    return hw.hbm_bw_Bps * HBM_EFFICIENCY


def compute(model: Transformer, hw: Hardware, options: Options, stage: Stage, recompute, redo) -> Compute:
    """Forward, backward and recomputation time of one micro-batch; ``redo`` is the recomputed share of layers."""
    h, V, T, ftp = model.hidden, model.vocab, stage.tokens, stage.tp
    mem_bw = memory_bandwidth_Bps(hw)
    gemm = _roofline(hw, options, stage.micro_batches)
    backward = functools.partial(gemm, backward=True)
    host = Host(dropless=options.moe_dropless, merged=options.merged_schedule, graphs=options.cuda_graphs)
    routed = routed_experts(model, options.precision, T, ftp, stage.expert_tp, stage.ep, stage.layers, redo,
                            gemm, options.expert_imbalance, host)
    routed_backward = expert_gemms_s(model, T, ftp, stage.expert_tp, stage.ep, backward, options.expert_imbalance)
    # attention's own matmuls, the MoE router and Megatron's output layer stay in BF16 in an FP8 run (Transformer
    # Engine casts only its linear layers)
    bf16 = _roofline(hw, replace(options, precision="bf16"), stage.micro_batches)
    bf16_backward = functools.partial(bf16, backward=True)
    t_gemm = (_attention_gemms(model, T, ftp, gemm) + _mlp_gemms(model, T, ftp, gemm, bf16)
              + routed.layer_gemm_s)
    t_gemm_b = (_attention_gemms(model, T, ftp, backward) + _mlp_gemms(model, T, ftp, backward, bf16_backward)
                + routed_backward)
    t_attn_f, t_attn_b, softmax_bytes, fallback = _attention(model, hw, options, stage, bf16)
    # element-wise passes: norms 8h, bias-dropout-add 14h (sharded with SP), activation 2 f_up + 2 f
    replicated = where(stage.sequence_parallel, 22 * h / ftp, 22 * h)
    ffn = model.active_ffn
    f_up = ffn * (2 if model.gated else 1)
    routing = routing_bytes(model, stage.ep)
    elementwise_bytes = T * (replicated + (2 * f_up + 2 * ffn) / ftp + routing / ftp) + softmax_bytes
    t_elem_f = elementwise_bytes / mem_bw
    kernels_f = (16 + routed.layer_kernels) * KERNEL_S
    t_layer_f = t_gemm + t_attn_f + t_elem_f + kernels_f
    t_layer_b = t_gemm_b + t_attn_b + 2 * t_elem_f + 2 * kernels_f
    selective = (_module_recompute_s(model, T, ftp, gemm, mem_bw) if recipe_modules(model, options)
                 else t_attn_f + softmax_bytes / mem_bw)
    t_recompute = stage.layers * (redo * t_layer_f + (recompute == "selective") * selective)
    # logits on the last stage: GEMM (Megatron's output layer is its own linear layer, outside Transformer Engine),
    # and the FP32 cross-entropy passes
    t_logits = 3 * bf16(T, h, V / ftp) + 3 * T * V / ftp * 4 * 2 / mem_bw
    # the unfused softmax's PyTorch ops are launched one by one, unless a graph over attention captures them
    eager = not captures(options.cuda_graphs, "attention")
    fallback_launch_s = stage.layers * fallback * SOFTMAX_FALLBACK_KERNELS * LAUNCH_S * (2 + redo) * eager
    return Compute(layer_gemm_s=t_gemm, forward_s=stage.layers * t_layer_f + t_logits / 3,
                   backward_s=stage.layers * t_layer_b + t_recompute + 2 * t_logits / 3, recompute_s=t_recompute,
                   launch_s=routed.launch_s + fallback_launch_s, launch_wait_s=routed.wait_s,
                   weight_grad_s=stage.layers * t_gemm_b / 2 + bf16(T, h, V / ftp))


def _module_recompute_s(model: Transformer, T, ftp, gemm, mem_bw):
    """One layer's share of the recipes' selective modules recomputed (memory.py ``recipe_modules``): MLA's
    up-projections again, and the routed experts' activation (read the first GEMM's output, gate and up when
    gated, and write the activation: f_up + f elements, 2 bytes each in BF16)."""
    up = 0.0
    if model.kv_lora_rank:
        kv_up = model.heads * (model.attention_head_dim - model.rope_head_dim + model.value_head_dim)
        up = gemm(T, model.kv_lora_rank, kv_up / ftp) + gemm(T, model.q_lora_rank or model.hidden, model.q_dim / ftp)
    routed = model.routed_ffn
    f_up = routed * (2 if model.gated else 1)
    return up + T * (f_up + routed) * BF16 / ftp / mem_bw


def routing_bytes(model: Transformer, ep):
    """HBM bytes per token of one layer's forward token shuffling (averaged over the layers; 0 for a dense model).

    A MoE layer permutes each token's k copies into expert order and back (Megatron's permute and unpermute):
    read h, write k h, then read k h, write h, in BF16. With more than one local expert the alltoall dispatcher
    also sorts the copies it receives by local expert after the dispatch, and back before the combine (Megatron's
    "permutation 2", sort_chunks_by_idxs; a transpose copy when padded to capacity): read and write k h each way."""
    h, k = model.hidden, model.experts_per_token
    sorts = where(model.experts / as_float(ep) > 1, 2 * 2 * BF16 * k * h, 0.0)
    return (2 * BF16 * h * (1 + k) + sorts) * model.moe_layers / model.layers


def _attention_gemms(model: Transformer, T, ftp, gemm):
    """One layer's attention projections: q, k and v (MLA: down to the latents, then up per head), output."""
    h = model.hidden
    out = gemm(T, model.o_dim / ftp, h)
    if not model.kv_lora_rank:
        return gemm(T, h, (model.q_dim + model.k_dim + model.v_dim) / ftp) + out
    q_rank, kv_rank, rope = model.q_lora_rank, model.kv_lora_rank, model.rope_head_dim
    q = gemm(T, h, q_rank) + gemm(T, q_rank, model.q_dim / ftp) if q_rank else gemm(T, h, model.q_dim / ftp)
    kv_up = model.heads * (model.attention_head_dim - rope + model.value_head_dim)
    return q + gemm(T, h, kv_rank + rope) + gemm(T, kv_rank, kv_up / ftp) + out


def _mlp_gemms(model: Transformer, T, ftp, gemm, router_gemm):
    """One layer's MLP, averaged over dense and MoE layers: the dense MLPs, a MoE layer's shared experts and
    router (``router_gemm``: BF16; its routed experts: experts.py)."""
    h, up = model.hidden, 2 if model.gated else 1

    def mlp(width):
        return gemm(T, h, up * width / ftp) + gemm(T, width / ftp, h) if width else 0.0

    dense = mlp(model.dense_width)
    if not model.moe_layers:
        return dense
    moe = mlp(model.shared_ffn_hidden) + router_gemm(T, h, model.experts)
    return (model.moe_layers * moe + (model.layers - model.moe_layers) * dense) / model.layers


def _roofline(hw: Hardware, options: Options, micro_batches=1.0):
    """gemm(rows, inner, cols): seconds of one GEMM forward, bound by FLOP/s or by HBM bandwidth, with its FP8
    casts; gemm(..., backward=True): its two gradient GEMMs and their cast (``FP8_CAST_BYTES``)."""
    fp8 = options.precision == "fp8"
    gemm_eff = hw.gemm_efficiency * (FP8_EFFICIENCY if fp8 else 1.0)
    gemm_peak = (hw.fp8_flops if fp8 else hw.peak_flops) * gemm_eff * options.sparsity_speedup
    mem_bw = memory_bandwidth_Bps(hw)
    k0 = hw.gemm_k0
    cast_bytes = FP8_CAST_BYTES if fp8 else 0
    weight_casts = 1.0 / micro_batches if options.fp8_weight_cache else 1.0   # a micro-batch's share

    def gemm(rows, inner, cols, backward=False):
        flops = 2 * rows * inner * cols
        traffic = BF16 * (rows * inner + inner * cols + rows * cols)
        one = maximum(flops / gemm_peak * (1 + k0 / inner), traffic / mem_bw)
        if backward:
            return 2 * one + cast_bytes * rows * cols / mem_bw
        return one + cast_bytes * (rows * inner + inner * cols * weight_casts) / mem_bw

    return gemm


def _attention(model: Transformer, hw: Hardware, options: Options, stage: Stage, gemm) -> tuple:
    """(forward s, backward s, softmax bytes, softmax fallback) of one layer's attention (sliding layers: their
    window only); the fallback is 1 where the unfused softmax runs PyTorch's ops instead of Megatron's kernel."""
    s, ftp = options.seq_len, stage.tp
    keys = model.attended(s)                                        # keys per query, averaged over layers
    attn_flops = stage.tokens * model.attention_flops_per_token(s) / ftp     # scores and values, full s x s
    if options.attention in FUSED:
        efficiency = hw.attention_efficiency if options.attention == "flash" else hw.flash2_efficiency
        slower_f, slower_b = FUSED[options.attention]
        causal = 0.5 * attn_flops / (hw.peak_flops * efficiency)     # half the s x s scores, at the kernel's rate
        # the backward recomputes the scores: 5 GEMMs
        return causal * slower_f, 2.5 * causal / ATTENTION_BWD * slower_b, 0.0, 0.0
    # batched GEMMs over the full s x s scores, and a memory-bound softmax and dropout
    per_head = (gemm(stage.tokens, model.attention_head_dim, keys)
                + gemm(stage.tokens, model.value_head_dim, keys)) * (model.heads / ftp)
    scores = model.heads * keys / ftp * stage.tokens
    softmax_bytes = 9 * scores                                     # scale-mask-softmax 4, dropout 5 bytes/score
    fallback = 1.0 * ((stage.micro_batch * model.heads / ftp) % 4 != 0)
    extra_f, extra_b = (fallback * extra * scores / memory_bandwidth_Bps(hw) for extra in SOFTMAX_FALLBACK_BYTES)
    return per_head + extra_f, 2 * per_head + extra_b, softmax_bytes, fallback
