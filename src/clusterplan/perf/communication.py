"""Communication of a layout: tensor-, context- and pipeline-parallel traffic per micro-batch, and data parallelism.

Every collective is priced by the collective model on the cluster's own design
(``perf.collectives``): one call per distinct group for a grid of layouts, the
scalar ``predict_time_s`` for one layout. Floats for one layout, arrays over layouts.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clusterplan.perf.collectives import System, predict_time_s, predict_times_s
from clusterplan.perf.compute import Compute
from clusterplan.perf.hardware import Options
from clusterplan.perf.memory import BF16, GRAD_BYTES
from clusterplan.perf.model import Transformer
from clusterplan.perf.numeric import as_float, ceil, choose, is_array, maximum, minimum, where
from clusterplan.perf.stage import Stage, ranks_per_domain
from clusterplan.schema import FROZEN


@dataclass(**FROZEN, eq=False)
class Communication:
    """Seconds of communication (floats, or arrays over layouts)."""

    tp_s: object                # tensor-parallel collectives of one micro-batch that no GEMM hides
    tp_hidden_s: object         # ... and those that run beside the GEMMs they feed (TP overlap)
    cp_s: object                # context-parallel K and V exchanges of one micro-batch
    p2p_s: object               # pipeline sends and receives of one micro-batch
    dp_s: object                # the gradient reduction (and sharded optimizer's gather) of one step
    fsdp_s: object              # ZeRO-3: weight gathers and gradient reduce-scatters of one micro-batch
    ep_s: object                # expert-parallel all-to-alls (token dispatch and combine) of one micro-batch


def collective_s(system: System, op: str, size_bytes, ranks, ranks_per_node):
    """Seconds of ``op`` of ``size_bytes`` on groups of ``ranks`` GPUs, ``ranks_per_node`` of them per node."""
    if not is_array(size_bytes, ranks, ranks_per_node):
        ranks_per_node = minimum(ranks_per_node, ranks)
        return predict_time_s(op, size_bytes, system, int(ranks), int(ranks_per_node)) if ranks > 1 else 0.0
    size, ranks, local = np.broadcast_arrays(np.asarray(size_bytes, float), np.asarray(ranks),
                                             np.asarray(ranks_per_node))
    out = np.zeros(size.size)
    local = np.minimum(local, ranks)
    # the layouts grouped by (ranks, ranks per node) in one sort, not one mask of the grid per group
    span = int(local.max()) + 1
    keys, group = np.unique(ranks.ravel().astype(np.int64) * span + local.ravel(), return_inverse=True)
    order = np.argsort(group.ravel(), kind="stable")
    flat = size.ravel()
    pairs = zip((keys // span).tolist(), (keys % span).tolist())
    for (n, k), members in zip(pairs, np.split(order, np.cumsum(np.bincount(group.ravel()))[:-1])):
        if n > 1:
            out[members] = predict_times_s(op, flat[members], system, int(n), int(k))
    return out.reshape(size.shape)


def communication(model: Transformer, system: System, options: Options, stage: Stage, layout, compute: Compute,
                  redo) -> Communication:
    """Every collective of ``layout``; ``redo``, the recomputed share of layers, repeats the forward's TP traffic."""
    tp, tp_hidden = _tensor_parallel(model, system, options, stage, layout.tp, compute, redo)
    dp, fsdp = _data_parallel(system, options, stage, layout)
    return Communication(tp_s=tp, tp_hidden_s=tp_hidden, cp_s=_context_parallel(model, system, options, stage, layout),
                         p2p_s=_pipeline(model, system, stage, layout), dp_s=dp, fsdp_s=fsdp,
                         ep_s=_expert_parallel(model, system, options, stage, layout, redo))


def network_copies(model: Transformer, nodes):
    """Expected copies of a token that cross the network with a node-deduplicating dispatcher (DeepEP, HybridEP),
    over the copies a plain all-to-all sends there: a token goes once to each remote node holding one of its k
    experts, N (1 - (1 - 1/N)^k) nodes of the ep group's N for uniform routing, at most the nodes its routing
    groups cover (DeepSeek-V3's group-limited routing: 4 of 8 groups); the plain all-to-all sends all k x (N - 1)
    / N remote copies. 1 inside a node."""
    nodes = maximum(as_float(nodes), 1.0)
    k = model.experts_per_token
    reached = nodes * (1 - (1 - 1 / nodes) ** k)
    if model.expert_groups_per_token:
        reached = minimum(reached, minimum(model.expert_groups_per_token * maximum(nodes / model.expert_groups, 1.0),
                                           nodes))
    return where(nodes > 1, reached / k, 1.0)


def _expert_parallel(model: Transformer, system: System, options: Options, stage: Stage, layout, redo):
    """Seconds of one micro-batch's all-to-alls over the ep group: each MoE layer dispatches its tokens to their
    experts and combines them back, forward and backward (4; recomputed forwards 2 more). Each GPU sends its
    tokens (its sequence-parallel share) x experts per token x hidden x BF16, dropless (capacity factor 1); the
    busiest GPU receives ``expert_imbalance`` times the mean, and the exchange waits for it. With the deepep
    dispatcher a token crosses the network once per remote node (``network_copies``) and NVLink carries it on:
    the exchange is priced as an all-to-all of the deduplicated bytes (the network part sets its time; the NVLink
    forwarding is not priced)."""
    a2a_bytes = stage.tokens * model.hidden * model.experts_per_token * BF16 / stage.tp * options.expert_imbalance
    if options.moe_dispatcher == "deepep":
        a2a_bytes = a2a_bytes * network_copies(model, layout.ep / maximum(stage.ep_local, 1))
    moe_share = model.moe_layers / model.layers
    one = collective_s(system, "alltoall", a2a_bytes, layout.ep, stage.ep_local)
    return stage.layers * moe_share * (4 + 2 * redo) * one


def _tensor_parallel(model: Transformer, system: System, options: Options, stage: Stage, tp, compute: Compute,
                     redo) -> tuple:
    """(exposed, hidden) seconds of the TP collectives of one micro-batch: fwd 2, bwd 2, recomputed fwd 2 a layer."""
    act_bytes = stage.tokens * model.hidden * BF16              # one layer's activations, all TP ranks
    local = minimum(tp, system.gpus_per_node)
    one = choose(stage.sequence_parallel,
                 lambda: (collective_s(system, "reduce_scatter", act_bytes, tp, local)
                          + collective_s(system, "all_gather", act_bytes, tp, local)),
                 lambda: collective_s(system, "all_reduce", act_bytes, tp, local))
    # a layer's two TP collectives a pass (attention's, the MLP's); whole experts (etp 1) take their tokens
    # straight from the sequence-parallel shard, and a MoE layer's MLP has none unless a shared expert (tensor-
    # parallel like the dense MLP) needs it
    whole_experts = (stage.expert_tp < tp) * (model.shared_ffn_hidden == 0) * model.moe_layers / model.layers
    t_tp = stage.layers * (4 + 2 * redo) * one * (1 - whole_experts / 2)
    # with overlap (Transformer Engine's userbuffers), each TP collective runs beside the GEMM it feeds
    t_tp_gemm = stage.layers * compute.layer_gemm_s * (3 + redo)
    hidden = minimum(t_tp, t_tp_gemm) if options.tp_overlap else 0.0
    return t_tp - hidden, hidden


def _context_parallel(model: Transformer, system: System, options: Options, stage: Stage, layout):
    """Seconds of one micro-batch's K and V all-gathers (forward) and reduce-scatters (backward)."""
    cp = layout.cp
    cp_local = ranks_per_domain(system.gpus_per_node // layout.tp, cp)
    cp_bytes = as_float(layout.mbs) * options.seq_len * 2 * model.kv_dim / stage.tp * BF16   # K and V, whole sequence
    return stage.layers * (collective_s(system, "all_gather", cp_bytes, cp, cp_local)
                           + collective_s(system, "reduce_scatter", cp_bytes, cp, cp_local))


def _pipeline(model: Transformer, system: System, stage: Stage, layout):
    """Seconds of one micro-batch's pipeline sends: each of the v model chunks of a stage sends its activations on
    (and their gradients back); each TP rank sends its slice (Megatron's scatter-gather, SC21 section 4.1)."""
    pp = layout.pp
    inner = layout.tp * layout.cp * layout.dp                   # ranks inside one pipeline stage
    local = where(inner >= system.gpus_per_node, 1, 2)
    p2p_bytes = stage.tokens * model.hidden * BF16 / stage.tp
    pair = np.full_like(pp, 2) if is_array(pp) else 2
    return choose(pp > 1, lambda: 2 * layout.virtual_stages * collective_s(system, "sendrecv", p2p_bytes, pair, local),
                  lambda: 0.0)


# Megatron-LM's gradient buckets (core/distributed/distributed_data_parallel.py): with the reduction overlapped,
# max(40M, 1M x dp) parameters a bucket, each reduced (and, sharded, gathered) by its own collective
BUCKET_PARAMS = 40_000_000
BUCKET_PARAMS_PER_DP_RANK = 1_000_000


def _buckets(options: Options, params, dp):
    """Collectives the step's gradient reduction is issued as: one per bucket when it overlaps the backward
    (each pays the collective's latency, which grows with the ranks), one for everything otherwise."""
    if not options.overlap_grad_reduce:
        return 1
    return maximum(ceil(params / maximum(BUCKET_PARAMS, BUCKET_PARAMS_PER_DP_RANK * dp)), 1)


def _data_parallel(system: System, options: Options, stage: Stage, layout) -> tuple:
    """(seconds of the step's gradient reduction, seconds of ZeRO-3's per-micro-batch gathers and reductions)."""
    dp, zero, local = stage.replicas, layout.zero, stage.dp_local      # data- and context-parallel ranks
    grad_bytes = (stage.params - stage.expert_params) * GRAD_BYTES
    weight_bytes = stage.params * BF16
    # expert-parallel experts reduce over the expert-data-parallel ranks only (tp x cp x dp / (ep x etp): cp x dp /
    # ep with tensor-parallel experts; none for a dense model)
    folding = layout.tp // stage.expert_tp
    expert_dp = where(stage.expert_params > 0, dp * folding // layout.ep, 1)
    expert_local = ranks_per_domain(maximum(local * folding // layout.ep, 1), expert_dp)
    expert_grad_bytes, expert_weight_bytes = stage.expert_params * GRAD_BYTES, stage.expert_params * BF16
    dense = _buckets(options, stage.params - stage.expert_params, dp)
    experts = _buckets(options, stage.expert_params, expert_dp)

    def bucketed(op: str, size_bytes, buckets, ranks, ranks_per_node):
        return buckets * collective_s(system, op, size_bytes / buckets, ranks, ranks_per_node)

    def all_reduce():
        return (bucketed("all_reduce", grad_bytes, dense, dp, local)
                + bucketed("all_reduce", expert_grad_bytes, experts, expert_dp, expert_local))

    def sharded():   # reduce-scatter the gradients, all-gather the updated weights
        return (bucketed("reduce_scatter", grad_bytes, dense, dp, local)
                + bucketed("all_gather", weight_bytes - expert_weight_bytes, dense, dp, local)
                + bucketed("reduce_scatter", expert_grad_bytes, experts, expert_dp, expert_local)
                + bucketed("all_gather", expert_weight_bytes, experts, expert_dp, expert_local))

    def fsdp():      # ZeRO-3 / FSDP: gather the weights forward and backward, reduce-scatter the gradients
        return (2 * collective_s(system, "all_gather", weight_bytes, stage.shard, local)
                + collective_s(system, "reduce_scatter", weight_bytes, stage.shard, local))

    # ZeRO-3 does all of it every micro-batch, and has no reduction left at the step's end
    step = choose(zero == 3, lambda: 0.0, lambda: choose(zero == 0, all_reduce, sharded))
    return step, choose(zero == 3, fsdp, lambda: 0.0)
