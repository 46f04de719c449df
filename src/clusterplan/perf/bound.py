"""What a layout grid can be told before its communication is priced: which layouts fit in memory, and the most
tokens/s each could reach (docs/training.md, "The search").

The communication of a grid (perf/communication.py) is most of a search's time. Memory needs none of it, and
the step without it is a lower bound of the step with it: every term ``step.step_time`` adds to a slot's compute
(tensor-parallel and pipeline traffic, exposed context-parallel and FSDP traffic, the compute lost to overlap,
the expert all-to-alls, the host's wait beyond ``launch_wait_s``) and to the step (the exposed data-parallel
reduction, its overlap cost) is a non-negative number of seconds, and rounding is monotone, so adding them in the
same order never gives a smaller float. ``tokens_per_s_bound`` is therefore at least the tokens/s ``evaluate``
prices, and a layout whose bound is below the tokens/s of layouts already priced cannot rank above them: the
search prices only the layouts that can (perf/search.py).

Neither reads the network: what they give for one GPU serves every fabric (``node_key``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from clusterplan.perf.compute import compute, memory_bandwidth_Bps
from clusterplan.perf.hardware import Hardware, Options
from clusterplan.perf.layout import Layouts
from clusterplan.perf.memory import memory, optimizer_params
from clusterplan.perf.model import Transformer
from clusterplan.perf.stage import stage
from clusterplan.perf.step import ADAM_TRAFFIC, COMPUTE_JITTER_CV, _largest, pipeline_bubble_slots
from clusterplan.perf.stragglers import expected_max
from clusterplan.schema import FROZEN


@dataclass(**FROZEN, eq=False)
class Held:
    """Memory of a grid: bytes per GPU of each layout and whether it fits (``evaluate``'s ``fits``)."""

    total_bytes: np.ndarray
    fits: np.ndarray


def held(model: Transformer, hw: Hardware, options: Options, grid: Layouts) -> Held:
    """The memory per GPU of every layout of ``grid``, as ``evaluate`` computes it, without the step."""
    busiest = stage(model, options, hw.system.gpus_per_node, grid)
    used, _ = memory(model, options, hw.usable_bytes, busiest, grid)
    total = np.asarray(used.total, dtype=float)
    return Held(total_bytes=total, fits=total <= hw.usable_bytes)


def tokens_per_s_bound(model: Transformer, hw: Hardware, options: Options, grid: Layouts) -> np.ndarray:
    """The most tokens/s each layout of ``grid`` can reach: its step with every communication term at zero."""
    busiest = stage(model, options, hw.system.gpus_per_node, grid)
    _, redo = memory(model, options, hw.usable_bytes, busiest, grid)
    work = compute(model, hw, options, busiest, grid.recompute, redo)
    t_opt = optimizer_params(busiest, grid.zero) * ADAM_TRAFFIC / memory_bandwidth_Bps(hw)
    slots = busiest.micro_batches + pipeline_bubble_slots(options, grid, work)   # the schedule's, as step_time
    gpu = work.forward_s + work.backward_s            # step_time's slot: + traffic, exposed, overlap (all >= 0)
    host = work.launch_wait_s                         # ... + the launches the GPU does not cover (>= 0)
    raw = slots * (gpu + host) + t_opt                # ... + the exposed data-parallel reduction and its overlap
    straggle = COMPUTE_JITTER_CV * expected_max(_largest(grid.num_gpus))
    return options.global_batch * options.seq_len / (raw * (1 + straggle))


def node_key(hw: Hardware) -> tuple:
    """What ``held`` and ``tokens_per_s_bound`` read of ``hw``: every field but the network (its GPUs per node
    only), so that what they give for one GPU serves every fabric."""
    return (hw.peak_flops, hw.fp8_flops, hw.hbm_bytes, hw.hbm_bw_Bps, hw.gemm_efficiency, hw.gemm_k0,
            hw.attention_efficiency, hw.flash2_efficiency, hw.memory_margin, hw.system.gpus_per_node)
