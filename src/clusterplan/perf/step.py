"""Training step time, throughput and MFU of a transformer layout (docs/training.md).

``evaluate`` prices one ``Layout`` (floats) or a ``Layouts`` grid (numpy arrays,
one entry per layout) through the same formulas. Per layout:

    step = (m + bubble) x max(t_fwd + t_bwd + t_tp + t_p2p + t_exposed + t_contention, t_host)
           + t_dp_exposed + t_dp_contention + t_optimizer

with m micro-batches per step, bubble the pipeline's idle slots ((pp - 1) / v with 1F1B and v virtual
pipeline stages; DualPipe's in ``pipeline_bubble_slots``), and each term per
micro-batch on the busiest pipeline stage (compute.py, communication.py); a
synchronous step then waits for its slowest GPU (stragglers.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

from clusterplan.perf.communication import Communication, communication
from clusterplan.perf.compute import Compute, compute, memory_bandwidth_Bps
from clusterplan.perf.experts import layer_pass_s
from clusterplan.perf.hardware import Hardware, Options, precision_peak_flops
from clusterplan.perf.layout import Layout, Layouts
from clusterplan.perf.memory import Memory, memory, optimizer_params
from clusterplan.perf.model import Transformer
from clusterplan.perf.numeric import as_float, divide_or_zero, full_like, is_array, maximum, minimum, where
from clusterplan.perf.stage import Stage, stage
from clusterplan.perf.stragglers import expected_max
from clusterplan.schema import FROZEN

OVERLAP_COST = 0.2         # calibrated: compute lost per second of communication hidden beside it (SMs, HBM)
ADAM_TRAFFIC = 30          # bytes moved per parameter by the Adam step: read 16, write 14
COMPUTE_JITTER_CV = 0.005  # ASSUMPTION: per-GPU step-time spread; a synchronous step waits for the slowest


@dataclass(**FROZEN, eq=False)
class StepTime:
    """Seconds of one training step by part; the parts add up to ``total`` (floats, or arrays over layouts)."""

    compute: object
    recompute: object
    tp_comm: object
    cp_comm: object
    pp_p2p: object
    ep_comm: object             # expert-parallel all-to-alls (in parts() only where there are any)
    pp_bubble: object
    dp_comm: object
    optimizer: object
    overlap: object             # compute slowed by communication running beside it
    host: object                # the GPU waiting for the host to launch kernels
    straggler: object           # waiting for the slowest GPU
    total: object

    def parts(self) -> dict:
        """Every part by name, in order, without the total (nor ep_comm for one layout that has none)."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name != "total" and not (f.name == "ep_comm" and not is_array(self.ep_comm) and not self.ep_comm)}


@dataclass(**FROZEN, eq=False)
class Prediction:
    """One layout's (or, with a Layouts grid, every layout's) step, memory and throughput."""

    layout: Layout | Layouts
    step: StepTime
    memory: Memory
    tokens_per_s: object
    tokens_per_s_per_gpu: object
    tflops_per_gpu: object             # model FLOPs (no recomputation: MFU's convention)
    hardware_tflops_per_gpu: object    # FLOPs the GPUs run, recomputation included
    mfu: object                        # model FLOP/s / BF16 dense peak (the convention)
    mfu_causal: object                 # the same with causal attention (6N + 6 L h s): published runs' convention
    precision_peak_fraction: object    # model FLOP/s / the peak of the run's precision (FP8, 2:4 sparse)
    fits: object                       # the total memory fits in the GPU's, less its margin (Hardware.usable_bytes)
    micro_batches: object              # per step and pipeline
    global_batch: object = 0           # sequences per step (the batch the layout was priced at; an array
                                       # over a grid priced at several, ``evaluate``'s ``global_batch``)

    def row(self, index: int) -> Prediction:
        """Layout ``index`` of a grid's prediction, in plain Python numbers."""
        def pick(value):
            return value[index].item() if is_array(value) else value

        def each(value):
            return type(value)(**{f.name: float(pick(getattr(value, f.name))) for f in fields(value)})

        return Prediction(layout=self.layout.row(index), step=each(self.step), memory=each(self.memory),
                          **{name: float(pick(getattr(self, name))) for name in _RATES}, fits=bool(pick(self.fits)),
                          micro_batches=float(pick(self.micro_batches)), global_batch=int(pick(self.global_batch)))


_RATES = ("tokens_per_s", "tokens_per_s_per_gpu", "tflops_per_gpu", "hardware_tflops_per_gpu", "mfu", "mfu_causal",
          "precision_peak_fraction")


def evaluate(model: Transformer, hw: Hardware, options: Options, layout: Layout | Layouts,
             global_batch=None) -> Prediction:
    """Step time, its breakdown, memory and feasibility of ``layout`` (one, or a grid of them); ``global_batch``,
    an array over a grid's layouts, prices each at its own batch instead of the options' (the same formulas: the
    batch sets the micro-batches a step takes and the tokens it trains)."""
    batch = options.global_batch if global_batch is None else global_batch
    busiest = stage(model, options, hw.system.gpus_per_node, layout, global_batch)
    held, redo = memory(model, options, hw.usable_bytes, busiest, layout)
    work = compute(model, hw, options, busiest, layout.recompute, redo)
    traffic = communication(model, hw.system, options, busiest, layout, work, redo)
    step = step_time(hw, options, busiest, layout, work, traffic, redo)
    tokens_per_s = batch * options.seq_len / step.total
    gpus = as_float(layout.num_gpus)
    per_token = model.model_flops_per_token(options.seq_len)
    model_flops = per_token * tokens_per_s
    hardware_flops = (per_token + redo / 3 * per_token) * tokens_per_s
    return Prediction(layout=layout, step=step, memory=held, tokens_per_s=tokens_per_s,
                      tokens_per_s_per_gpu=tokens_per_s / gpus, tflops_per_gpu=model_flops / gpus / 1e12,
                      hardware_tflops_per_gpu=hardware_flops / gpus / 1e12, mfu=model_flops / gpus / hw.peak_flops,
                      mfu_causal=model.causal_flops_per_token(options.seq_len) * tokens_per_s / gpus / hw.peak_flops,
                      precision_peak_fraction=model_flops / gpus / precision_peak_flops(hw, options),
                      fits=held.total <= hw.usable_bytes, micro_batches=busiest.micro_batches,
                      global_batch=batch)


def step_time(hw: Hardware, options: Options, busiest: Stage, layout, work: Compute, traffic: Communication,
              redo) -> StepTime:
    """The step: every micro-batch slot on the busiest stage, then what of data parallelism shows, the optimizer
    step, and the wait for the slowest GPU."""
    slot = _slot(options, busiest, work, traffic, redo)
    dp_exposed, overlap_dp = _data_parallel_exposed(options, busiest, layout, traffic, slot)
    t_opt = optimizer_params(busiest, layout.zero) * ADAM_TRAFFIC / memory_bandwidth_Bps(hw)
    m = busiest.micro_batches
    bubble = pipeline_bubble_slots(options, layout, work)
    slots = m + bubble
    raw = slots * (slot.gpu_s + slot.host_s) + dp_exposed + overlap_dp + t_opt
    straggle = COMPUTE_JITTER_CV * expected_max(_largest(layout.num_gpus))
    return StepTime(compute=m * (work.forward_s + work.backward_s - work.recompute_s),
                    recompute=m * work.recompute_s, tp_comm=slots * traffic.tp_s,
                    cp_comm=slots * slot.exposed_s * slot.share_cp, pp_p2p=slots * slot.p2p_exposed_s,
                    ep_comm=slots * slot.ep_exposed_s, pp_bubble=bubble * (work.forward_s + work.backward_s),
                    dp_comm=dp_exposed + slots * slot.exposed_s * (1 - slot.share_cp), optimizer=t_opt,
                    overlap=slots * slot.overlap_s + overlap_dp, host=slots * slot.host_s,
                    straggler=raw * straggle, total=raw * (1 + straggle))


def pipeline_bubble_slots(options: Options, layout, work: Compute):
    """Micro-batch slots the busiest stage idles in a step's pipeline fill and drain.

    1F1B (Narayanan et al. 2021): (pp - 1) / v slots, a slot being a forward and a backward (F + B), v the
    interleaved chunks a stage. DualPipe (DeepSeek-V3, arXiv 2412.19437, Section 3.2.1, Table 2): (pp / 2 - 1)
    x (F&B + B - 3W), with F&B a forward and a backward chunk run overlapped (their compute, F + B, their
    communication hidden beside it) and W the backward's weight-gradient part, deferred into the bubble
    (``Compute.weight_grad_s``); in slots, (pp / 2 - 1)(F + 2B - 3W) / (F + B)."""
    pp = layout.pp
    if options.pipeline_schedule == "dualpipe":
        f, b, w = work.forward_s, work.backward_s, work.weight_grad_s
        return (pp / 2 - 1) * (f + 2 * b - 3 * w) / (f + b)
    return (pp - 1) / as_float(layout.virtual_stages)


@dataclass(**FROZEN, eq=False)
class Slot:
    """One micro-batch slot on the busiest stage (floats, or arrays over layouts)."""

    beside_s: object            # context-parallel and FSDP traffic that runs beside the compute
    exposed_s: object           # ... the part of it that shows
    share_cp: object            # ... the context-parallel share of it
    overlap_s: object           # compute lost to communication running beside it
    gpu_s: object               # the GPU's time
    host_s: object              # the GPU's wait for the host to launch the kernels
    ep_exposed_s: object = 0.0  # expert-parallel all-to-alls that show (all of them unless overlapped)
    p2p_exposed_s: object = 0.0  # pipeline sends and receives that show (all of them but with DualPipe)


def expert_all_to_all_exposed(options: Options, work: Compute, ep_s):
    """(seconds of a micro-batch's expert all-to-alls that show, seconds hidden beside compute).

    Without ``moe_overlap`` every dispatch and combine waits for its tokens (Megatron's alltoall dispatcher).
    With it (Megatron-Core's overlap_moe_expert_parallel_comm, the combined 1F1B schedule; DeepSeek-V3's DualPipe)
    one micro-batch's forward is co-scheduled with another's backward: each all-to-all of the one runs beside the
    other's attention and expert compute, so only what exceeds the compute of a forward and a backward shows.
    DualPipe (``pipeline_schedule``) runs every forward chunk beside a backward chunk the same way."""
    if not options.merged_schedule:
        return ep_s, 0.0
    exposed = maximum(ep_s - (work.forward_s + work.backward_s), 0.0)
    return exposed, ep_s - exposed


def _slot(options: Options, busiest: Stage, work: Compute, traffic: Communication, redo) -> Slot:
    """One micro-batch slot: the communication beside its compute, what of it shows, the compute lost to it,
    the GPU's time and the host's wait."""
    ep_exposed, ep_hidden = expert_all_to_all_exposed(options, work, traffic.ep_s)
    # DualPipe sends and receives each chunk's activations beside the overlapped chunk pair's compute (DeepSeek-V3
    # Section 3.2.1: "both all-to-all and PP communication can be fully hidden"): they hide in what the all-to-alls
    # left of that compute (a forward and a backward), costing only the SMs they take, and show beyond it
    room = maximum(work.forward_s + work.backward_s - ep_hidden, 0.0)
    p2p_hidden = minimum(traffic.p2p_s, room) if options.pipeline_schedule == "dualpipe" else 0.0
    p2p = traffic.p2p_s - p2p_hidden
    # Context-parallel exchanges and FSDP gathers run beside the micro-batch's compute: only the
    # excess over it shows, and at least FSDP's first gather, which nothing precedes.
    beside = traffic.cp_s + traffic.fsdp_s
    busy = work.forward_s + work.backward_s + traffic.tp_s + p2p + ep_exposed
    exposed = maximum(beside - busy, traffic.fsdp_s / maximum(busiest.layers, 1))
    # Communication that runs beside compute takes SMs and HBM bandwidth from it
    overlap = OVERLAP_COST * (maximum(beside - exposed, 0.0) + traffic.tp_hidden_s + ep_hidden + p2p_hidden)
    gpu = work.forward_s + work.backward_s + traffic.tp_s + p2p + exposed + overlap + ep_exposed
    # the host issues every kernel: a micro-batch takes at least the time to launch its layers' passes (less what
    # CUDA graphs replay in one launch); after a dropless MoE router's sync the GPU also waits for each launch of
    # the forward's routed block, or of both routed blocks in the merged schedule (experts.py)
    launches = busiest.layers * layer_pass_s(options.cuda_graphs) * (2 + redo) + work.launch_s
    host = work.launch_wait_s + maximum(launches - work.launch_wait_s - gpu, 0.0)
    return Slot(beside_s=beside, exposed_s=exposed, share_cp=divide_or_zero(traffic.cp_s, beside),
                overlap_s=overlap, gpu_s=gpu, host_s=host, ep_exposed_s=ep_exposed,
                p2p_exposed_s=p2p)


def _data_parallel_exposed(options: Options, busiest: Stage, layout, traffic: Communication, slot: Slot) -> tuple:
    """(seconds of the gradient reduction that show, seconds of compute it slows where hidden).

    The last micro-batch's backward hides the gradient reduction, and with a sharded optimizer the next
    step's first forward hides the parameter all-gather, where other traffic leaves room. With an interleaved
    pipeline (v model chunks a stage) each chunk's share is reduced as soon as its last backward ends, and the
    cool-down runs the chunks' last backwards one after another, pp micro-batch passes of a chunk apart: only
    the last chunk's share, or what the cool-down cannot absorb, is left for the last micro-batch to hide
    (``_pipelined_reduction``).
    """
    t_dp = traffic.dp_s
    if not options.overlap_grad_reduce:
        return t_dp, full_like(t_dp, 0.0)
    share = where(layout.zero >= 1, 1.0, 2 / 3)            # the backward is two of the three passes
    # ... of the last chunk only (1 / v of the slot): what is left after the cool-down waits for its passes
    room = (share * (slot.gpu_s + slot.host_s) - slot.beside_s) / as_float(layout.virtual_stages)
    left = _pipelined_reduction(t_dp, layout, busiest.micro_batches, slot)
    exposed = maximum(left - maximum(room, 0.0), t_dp / maximum(busiest.layers, 1))
    return exposed, OVERLAP_COST * (t_dp - exposed)


def _pipelined_reduction(t_dp, layout, micro_batches, slot: Slot):
    """Seconds of the data-parallel traffic still running when the stage's last backward ends.

    With v chunks a stage and at least pp micro-batches, chunk c's gradients are final c x pp x t / v before the
    end (the cool-down runs each chunk's last pp backwards in turn); t is a third of a micro-batch slot (a
    forward, the shorter pass, so that the parameter all-gather staggered over the next warm-up is counted as
    well, at the pace the slot really keeps, the host's launches included). Its 1 / v of the traffic starts then
    and the pieces queue on the network: max over c of ((c + 1) t_dp / v - c pp t / v), which is t_dp / v when a
    piece fits in a chunk's turn and t_dp - (v - 1) pp t / v when it does not. v = 1, or fewer micro-batches
    than stages (no cool-down of whole groups): all of it.
    """
    v = as_float(layout.virtual_stages)
    turn = where(micro_batches >= layout.pp, layout.pp * (slot.gpu_s + slot.host_s) / (3 * v), 0.0)
    return maximum(t_dp / v, t_dp - (v - 1) * turn)


def _largest(num_gpus) -> int:
    """The most GPUs of any layout (one step waits for the slowest of its GPUs)."""
    if is_array(num_gpus):
        return max(int(num_gpus.max()), 1) if num_gpus.size else 1
    return max(int(num_gpus), 1)
