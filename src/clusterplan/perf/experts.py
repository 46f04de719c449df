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
gets only on the GPU: the host waits for those counts (a device-to-host copy) before it can size the
all-to-alls and the expert GEMMs, so the GPU's queue runs dry there and, in the forward pass, the GPU waits for
each launch of the routed block (docs/training.md, Mixture of experts). The backward reuses the counts: there the
host runs ahead as in a dense layer, and only the total launch time bounds the micro-batch.
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
# Kernels per local expert and pass: its two GEMMs (gate/up, down) forward, four backward (data and weight
# gradients); FP8 adds a cast of each GEMM's input (Transformer Engine's grouped linear quantises per expert)
EXPERT_KERNELS = {"bf16": (2, 4), "fp8": (4, 8)}
# ASSUMPTION: the routed block's other kernels per pass, whatever the experts: the router GEMM, its fused
# top-k/softmax and auxiliary loss, the permute and unpermute, the two all-to-alls and their split bookkeeping
ROUTED_BLOCK_KERNELS = 16
# a GEMM's rows run in whole tiles of this many (cuBLAS/CUTLASS Hopper and Blackwell tiles are 64-256 rows; 128
# the common one): an expert with few tokens pays for its last tile's empty rows
ROW_TILE = 128


@dataclass(**FROZEN, eq=False)
class RoutedExperts:
    """One micro-batch's routed experts on the busiest stage (floats, or arrays over layouts)."""

    layer_gemm_s: object     # one layer's expert GEMMs forward (averaged over the layers)
    layer_kernels: object    # kernels of one layer's routed block, forward (averaged over the layers)
    launch_s: object         # host time to launch the stage's routed blocks: forward, recomputation, backward
    wait_s: object           # the part the GPU waits for: the forward (and recomputed) routed blocks


def routed_experts(model: Transformer, precision: str, tokens, tp, etp, ep, layers, redo, gemm,
                   imbalance: float = 1.0) -> RoutedExperts:
    """The routed experts of ``layers`` layers of the busiest stage for ``tokens`` tokens of a tensor-parallel
    group, split ``etp`` ways; ``gemm`` is the roofline (rows, inner, cols) -> seconds; ``redo`` the recomputed
    share of layers."""
    if not model.moe_layers:
        return RoutedExperts(layer_gemm_s=0.0, layer_kernels=0.0, launch_s=0.0, wait_s=0.0)
    share = model.moe_layers / model.layers                  # MoE layers among the layers, on average
    local = model.experts / as_float(ep)
    forward, backward = EXPERT_KERNELS[precision]
    kernels_f = ROUTED_BLOCK_KERNELS + local * forward
    kernels_b = 2 * ROUTED_BLOCK_KERNELS + local * backward
    launches = layers * share * LAUNCH_S
    return RoutedExperts(layer_gemm_s=expert_gemms_s(model, tokens, tp, etp, ep, gemm, imbalance),
                         layer_kernels=share * kernels_f,
                         launch_s=launches * (kernels_f * (1 + redo) + kernels_b),
                         wait_s=launches * kernels_f * (1 + redo))


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
