"""A mixture-of-experts layer's routed experts on one GPU: their grouped GEMMs by expert, and their kernel launches.

Expert parallelism leaves E / ep routed experts on each GPU, split etp ways (tp, Megatron's default, or whole).
With the tokens spread evenly over the experts (Megatron's force-balanced benchmarks; ``Options.expert_imbalance``
for the busiest GPU's share otherwise), one expert of one micro-batch multiplies

    rows = T x etp / tp x k x ep / E x imbalance, in whole tiles of 128
           (T the tensor-parallel group's tokens of the micro-batch, k experts per token)

through its gate/up and down matrices: E / ep GEMMs of rows x hidden x ffn / etp each, so fine-grained experts
(DeepSeek-V3: hidden 7168, expert FFN 2048, 256 experts, top-8, ep 8: 1,024 rows of a 4,096-token micro-batch)
run many small GEMMs rather than one large one, and FP8 casts every local expert's weights.

Every local expert is its own kernels (Transformer Engine's grouped linear: a GEMM per expert and matrix, and an
FP8 cast of its input), launched by the host one by one. A dropless router learns how many tokens each expert
gets only on the GPU: the host waits for those counts (a device-to-host copy; DeepEP's and HybridEP's dispatch
wait for them too) before it can size the all-to-alls and the expert GEMMs, so the GPU's queue runs dry there
and, in the forward pass, the GPU waits for each launch of the routed block (docs/training.md, Mixture of
experts). The backward reuses the counts: there the host runs ahead as in a dense layer, and only the total
launch time bounds the micro-batch.

With the expert all-to-alls overlapped (Megatron-Core's merged forward-backward schedule, ``moe_overlap``) one
micro-batch's forward and another's backward are launched layer by layer, sub-module by sub-module, in one
order (combined_1f1b: combine backward, attention forward, experts' backward, dispatch forward, the delayed
weight gradients and dispatch backward, experts' forward, combine forward, attention backward): the forward's
sync sits inside each layer's merged step, so the launches of both routed blocks, the backward's as well as the
forward's, find the GPU's queue drained and the GPU waits for each of them.

CUDA graphs (``Options.cuda_graphs``) replay captured kernels with one launch: "router" captures the router and
its token-count preprocessing (Transformer Engine's moe_router and moe_preprocess scopes; the dropless dispatch
and expert GEMMs cannot be captured, their shapes change with the counts), "full" the whole iteration (static
shapes: token dropping padded to capacity only), which leaves no host launches at all.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.perf.model import Transformer
from clusterplan.perf.numeric import as_float, ceil
from clusterplan.schema import FROZEN

# Host time to launch one layer's kernels once (forward, backward or recomputation): calibrated on vTrain's
# single-node runs (docs/training.md); one launch takes HOST_PASS_S / LAYER_KERNELS, about 31 us (PyTorch eager and
# Transformer Engine's Python around it)
HOST_PASS_S = 1.25e-3
LAYER_KERNELS = 40   # ASSUMPTION: kernels a dense layer pass launches, as compute.py's KERNEL_S note; not fitted
# (compute.py times 16 of them a forward pass apart from its GEMMs: the rest run inside fused modules)
LAUNCH_S = HOST_PASS_S / LAYER_KERNELS
# ASSUMPTION: the attention block's share of a layer pass's launches (Megatron's _forward_attention: input norm,
# QKV projection, RoPE, core attention, output projection, bias-dropout-add; the rest is the MLP side's norm,
# projections or MoE wrapper and bias-dropout-add): what an "attention+router" CUDA graph replays in one launch
ATTENTION_LAUNCH_SHARE = 0.5
# Kernels per local expert and pass: its two GEMMs (gate/up, down) forward, four backward (data and weight
# gradients); FP8 adds a cast of each GEMM's input (Transformer Engine's grouped linear quantises per expert)
EXPERT_KERNELS = {"bf16": (2, 4), "fp8": (4, 8)}
# ASSUMPTION: the routed block's other kernels per pass, whatever the experts: the router GEMM, its fused
# top-k/softmax and auxiliary loss, the permute and unpermute, the two all-to-alls and their split bookkeeping
ROUTED_BLOCK_KERNELS = 16
# ASSUMPTION: of those, the router's and its preprocessing's (the router GEMM, the fused top-k/softmax, the
# auxiliary loss and its scaling, the token counts, their all-gather over the expert-parallel group and the split
# sizes): half of the forward's, what a "router" CUDA graph captures; the backward has twice as many, as the block
ROUTER_KERNELS = 8
# a GEMM's rows run in whole tiles of this many (cuBLAS/CUTLASS Hopper and Blackwell tiles are 64-256 rows; 128
# the common one): an expert with few tokens pays for its last tile's empty rows
ROW_TILE = 128
# What each CUDA graph setting (names.CUDA_GRAPHS) captures: "attention" a layer's attention block, "router" the
# MoE router and its token-count preprocessing, "iteration" every kernel of the step (static shapes only)
GRAPH_SCOPES = {"none": (), "router": ("router",), "attention+router": ("attention", "router"),
                "full": ("attention", "router", "iteration")}


@dataclass(**FROZEN, eq=False)
class RoutedExperts:
    """One micro-batch's routed experts on the busiest stage (floats, or arrays over layouts)."""

    layer_gemm_s: object     # one layer's expert GEMMs forward (averaged over the layers)
    layer_kernels: object    # kernels of one layer's routed block, forward (averaged over the layers)
    launch_s: object         # host time to launch the stage's routed blocks: forward, recomputation, backward
    wait_s: object           # the part the GPU waits for: the forward (and recomputed) routed blocks after a
                             # dropless router's sync; in the merged schedule all of launch_s; token dropping 0


@dataclass(**FROZEN)
class Host:
    """How the host launches a MoE layer's routed block: what the step's software makes it wait for."""

    dropless: bool = True      # the router syncs the host on the experts' token counts (``Options.moe_dropless``)
    merged: bool = False       # the merged forward-backward schedule (``Options.moe_overlap``)
    graphs: str = "none"       # what CUDA graphs capture (``Options.cuda_graphs``)


def routed_experts(model: Transformer, precision: str, tokens, tp, etp, ep, layers, redo, gemm,
                   imbalance: float = 1.0, host: Host = Host()) -> RoutedExperts:
    """The routed experts of ``layers`` layers of the busiest stage for ``tokens`` tokens of a tensor-parallel
    group, split ``etp`` ways; ``gemm`` is the roofline (rows, inner, cols) -> seconds; ``redo`` the recomputed
    share of layers; ``host``: the sync, schedule and CUDA graphs that decide what the GPU waits for."""
    if not model.moe_layers:
        return RoutedExperts(layer_gemm_s=0.0, layer_kernels=0.0, launch_s=0.0, wait_s=0.0)
    if host.dropless and captures(host.graphs, "iteration"):
        raise ValueError(f"cuda_graphs({host.graphs!r}) needs static shapes: a dropless router's token counts "
                         "change every step (token dropping, moe_dropless False, or a graph over the router)")
    share = model.moe_layers / model.layers                  # MoE layers among the layers, on average
    local = model.experts / as_float(ep)
    forward, backward = EXPERT_KERNELS[precision]
    kernels_f = ROUTED_BLOCK_KERNELS + local * forward
    kernels_b = 2 * ROUTED_BLOCK_KERNELS + local * backward
    launched_f, launched_b = routed_launches(kernels_f, kernels_b, host.graphs)
    launches = layers * share * LAUNCH_S
    launch_s = launches * (launched_f * (1 + redo) + launched_b)
    wait_s = launches * launched_f * (1 + redo) if host.dropless else 0.0
    return RoutedExperts(layer_gemm_s=expert_gemms_s(model, tokens, tp, etp, ep, gemm, imbalance),
                         layer_kernels=share * kernels_f, launch_s=launch_s,
                         wait_s=launch_s if host.dropless and host.merged else wait_s)


def captures(graphs: str, scope: str) -> bool:
    """Whether the CUDA graph setting ``graphs`` captures ``scope`` ("attention", "router" or "iteration")."""
    return scope in GRAPH_SCOPES[graphs]


def layer_pass_s(graphs: str) -> float:
    """Host seconds to launch one layer pass outside the routed experts (``HOST_PASS_S`` eager): an attention
    graph replays its share in one launch; a whole-iteration graph leaves nothing to launch."""
    if captures(graphs, "iteration"):
        return 0.0
    if captures(graphs, "attention"):
        return HOST_PASS_S * (1 - ATTENTION_LAUNCH_SHARE) + LAUNCH_S
    return HOST_PASS_S


def routed_launches(kernels_f, kernels_b, graphs: str) -> tuple:
    """(forward, backward) host launches of one routed block of ``kernels_f`` and ``kernels_b`` kernels: a graph
    over the router replaces its kernels by one launch each way; a whole-iteration graph leaves none."""
    if captures(graphs, "iteration"):
        return 0.0, 0.0
    if captures(graphs, "router"):
        return kernels_f - ROUTER_KERNELS + 1, kernels_b - 2 * ROUTER_KERNELS + 1
    return kernels_f, kernels_b


def expert_gemms_s(model: Transformer, tokens, tp, etp, ep, gemm, imbalance: float = 1.0):
    """One layer's routed-expert GEMMs (averaged over the layers) priced by ``gemm``: the forward roofline, or its
    backward (0 for a dense model). ``imbalance``: the busiest GPU's tokens over the mean (the step waits for it);
    each expert's rows are rounded up to whole row tiles."""
    if not model.moe_layers:
        return 0.0
    local = model.experts / as_float(ep)
    rows = ceil(tokens * etp / tp * model.experts_per_token / local * imbalance / ROW_TILE) * ROW_TILE
    h, f, up = model.hidden, model.ffn_hidden / etp, 2 if model.gated else 1
    return model.moe_layers / model.layers * local * (gemm(rows, h, up * f) + gemm(rows, f, h))
