"""The busiest pipeline stage of a layout, per GPU: what memory, compute and communication all start from.

Every field is a float for one layout (``Layout``) and a numpy array for a grid (``Layouts``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import expert_tp
from clusterplan.perf.model import Transformer
from clusterplan.perf.numeric import as_float, ceil, is_array, maximum, where
from clusterplan.schema import FROZEN


@dataclass(**FROZEN, eq=False)
class Stage:
    """The busiest pipeline stage of a layout, per GPU (floats, or arrays over layouts)."""

    tp: object                  # tp as a float: the divisor of every tensor-parallel shard
    sequence_parallel: object   # Megatron sequence parallelism in effect (asked for, and tp > 1)
    micro_batches: object       # per step and pipeline
    tokens: object              # tokens of one micro-batch on one GPU (its context-parallel share)
    micro_batch: object         # sequences of one micro-batch
    layers: object              # layers on the busiest stage (pp x v chunks need not divide the model)
    params: object              # parameters on the busiest stage, per GPU (its tensor- and expert-parallel shard;
                                # DualPipe's two chunks a rank: both)
    replicas: object            # ranks holding the same weights, dp x cp: Megatron reduces the gradients and
                                # shards ZeRO's states over data- and context-parallel ranks together
    dp_local: object            # ... of them inside one node
    shard: object               # ranks that ZeRO / FSDP shard the states over
    ep: object                  # expert-parallel size
    ep_local: object            # expert-parallel ranks inside one node
    expert_tp: object           # the routed experts' tensor-parallel size (tp, or 1: whole experts)
    expert_params: object       # the part of params in routed experts sharded by expert parallelism (0: ep = 1)
    expert_shard: object        # ranks that ZeRO shards the expert states over (the expert-data-parallel ranks:
                                # tp x cp x dp / (ep x etp), within the shard)


def stage(model: Transformer, options: Options, gpus_per_node: int, layout, global_batch=None) -> Stage:
    """``layout`` (a Layout, or Layouts) of ``model``: its busiest stage; ``global_batch`` (an array over a grid's
    layouts) in place of the options' where a search prices several batches at once."""
    tp, pp, dp, cp, mbs = layout.tp, layout.pp, layout.dp, layout.cp, layout.mbs
    virtual_stages = layout.virtual_stages
    ftp = as_float(tp)
    layers = virtual_stages * ceil(model.layers / as_float(pp * virtual_stages))
    ends = where(pp > 1, max(model.embedding_params, model.output_params + model.norm_params),
                 model.embedding_params + model.output_params)
    replicas = dp * cp     # context-parallel ranks hold the same weights (their own part of each sequence)
    dp_local = ranks_per_domain(gpus_per_node // tp, replicas)
    shard = where(options.sharding == "hybrid", dp_local, replicas)
    # routed experts of one layer (averaged over the layers), held 1 / ep by each GPU, split etp ways (tp by
    # default, as Megatron; or whole, etp 1, the expert-parallel group then folded over the tp x cp x dp ranks)
    ep, routed = layout.ep, model.moe_layers * model.experts * model.expert_params / model.layers
    etp = expert_tp(layout)
    experts = layers * routed / (as_float(ep) * etp)
    folded = (ep > 1) | (etp != tp)
    # DualPipe: each rank holds two chunks (stage i and stage pp - 1 - i), twice the parameters of 1F1B's one
    copies = 2 if options.pipeline_schedule == "dualpipe" else 1
    return Stage(tp=ftp, sequence_parallel=options.sequence_parallel & (tp > 1),
                 micro_batches=(options.global_batch if global_batch is None else global_batch)
                 / (as_float(dp) * mbs),
                 tokens=as_float(mbs) * options.seq_len / cp, micro_batch=as_float(mbs), layers=layers,
                 params=copies * (layers * (model.layer_params - routed) / ftp + experts + ends / ftp),
                 replicas=replicas,
                 dp_local=dp_local,
                 shard=shard, ep=as_float(ep), ep_local=ranks_per_domain(gpus_per_node // (etp * cp), ep),
                 expert_tp=as_float(etp), expert_params=where(folded, copies * experts, 0.0),
                 expert_shard=maximum(shard * tp // (ep * etp), 1))


def ranks_per_domain(places, group):
    """Ranks of one ``group`` (data-, expert- or context-parallel) that share an NVLink domain holding ``places``
    of its ranks, placed uniformly: the greatest common divisor of the two (places that tile the group, or a group
    that fits in them, give all of them; a 72-GPU domain at tp 8 has 9 places, and a data-parallel group of 16 then
    meets its peers one per domain; 72 places and a group of 64 share 8, since consecutive groups of 64 straddle
    domains). On 8-GPU servers with power-of-two groups this is min(places, group)."""
    if is_array(places, group):
        return np.gcd(np.maximum(places, 1).astype(np.int64), np.asarray(group).astype(np.int64))
    return math.gcd(max(int(places), 1), int(group))
