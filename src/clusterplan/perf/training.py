"""Training step time, memory and MFU of a transformer layout, vectorised over layouts (docs/training.md).

Every function takes numpy arrays of layouts (one entry per layout) so that one
code path prices a single layout and a search over thousands. Per layout:

    step = (m + (pp - 1) / v) x max(t_fwd + t_bwd + t_tp + t_p2p + t_exposed + t_contention, t_host)
           + t_dp_exposed + t_dp_contention + t_optimizer

with m micro-batches per step, v virtual pipeline stages, and each term per
micro-batch on the busiest pipeline stage. Compute is a roofline per GEMM,
max(FLOPs / (peak x efficiency), bytes / HBM bandwidth), plus memory-bound
element-wise passes; communication is priced by the collective model on the
scenario's own design (``perf.collectives.predict``).
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.names import RECOMPUTE
from clusterplan.perf.collectives import System, predict
from clusterplan.perf.model import Transformer

BF16 = 2
KERNEL_S = 2e-6            # ASSUMPTION: fixed cost per kernel (launch gap and tail), about 40 per layer
HOST_PASS_S = 1.25e-3      # calibrated: host time to issue one layer's kernels once (fwd, bwd or recompute)
OVERLAP_COST = 0.2         # calibrated: compute lost per second of communication hidden beside it (SMs, HBM)
ATTENTION_BWD = 0.8        # fused attention backward runs at 0.8 of its forward FLOP rate (FlashAttention-2/3 papers)
# Fused attention kernels: (forward, backward) slowdown against the GPU's kernel rate. "flash" runs at the GPU's
# best (attention_efficiency), "flash2" at FlashAttention-2's (flash2_efficiency); "flash1", the first
# generation (FlashAttention 1 and its Triton port, 2022-23), is 1.4x slower forward and 2x backward than
# FlashAttention-2 (Dao 2023, arXiv 2307.08691, section 4.1).
FUSED = {"flash": (1.0, 1.0), "flash2": (1.0, 1.0), "flash1": (1.4, 2.0)}
FP8_EFFICIENCY = 0.7        # ASSUMPTION: FP8 GEMMs reach 0.7 of the BF16 GEMM efficiency against their peak
HBM_EFFICIENCY = 0.8        # ASSUMPTION: share of HBM bandwidth that streaming kernels reach
RESERVED_BYTES = 2 * 2**30  # CUDA context, cuBLAS workspace and NCCL buffers (ASSUMPTION)
OPTIMIZER_BYTES = 12        # FP32 master weights and Adam's two moments, per parameter
GRAD_BYTES = 4              # FP32 gradient accumulation (Megatron's main_grad)
ADAM_TRAFFIC = 30           # bytes moved per parameter by the Adam step: read 16, write 14
COMPUTE_JITTER_CV = 0.005   # ASSUMPTION: per-GPU step-time spread; a synchronous step waits for the slowest


@dataclass(frozen=True, slots=True)
class Hardware:
    """What the step model needs of the GPU and the cluster."""

    peak_flops: float          # BF16 dense
    fp8_flops: float
    hbm_bytes: float
    hbm_bw_Bps: float
    gemm_efficiency: float
    gemm_k0: float                # a GEMM of inner size k runs at k / (k + gemm_k0) of the large-k rate
    attention_efficiency: float   # the GPU's best fused attention kernel, forward, share of BF16 peak
    flash2_efficiency: float      # FlashAttention-2, forward, share of BF16 peak
    system: System


@dataclass(frozen=True, slots=True)
class Options:
    """Software choices that are not part of the layout."""

    seq_len: int
    global_batch: int          # sequences per step
    precision: str = "bf16"
    attention: str = "flash"
    sequence_parallel: bool = True
    sharding: str = "full"
    overlap_grad_reduce: bool = True
    tp_overlap: bool = True
    sparsity_speedup: float = 1.0


def evaluate(model: Transformer, hw: Hardware, opts: Options, layouts: dict) -> dict:
    """Step time, its breakdown, memory and feasibility for every layout (dict of equal-length arrays).

    ``layouts`` holds tp, pp, dp, cp, mbs, vpp, recompute (index into RECOMPUTE) and zero.
    """
    import numpy as np

    tp, pp, dp, cp, mbs, vpp, rc, zero = (np.asarray(layouts[k], dtype=np.int64) for k in
                                          ("tp", "pp", "dp", "cp", "mbs", "vpp", "recompute", "zero"))
    f = lambda a: a.astype(float)  # noqa: E731
    h, g, ffn, a, L, V = model.hidden, model.kv_dim, model.ffn_hidden, model.heads, model.layers, model.vocab
    s = opts.seq_len
    sp = opts.sequence_parallel & (tp > 1)
    m = opts.global_batch / (f(dp) * mbs)                     # micro-batches per step per pipeline
    T = f(mbs) * s / cp                                      # tokens per micro-batch per GPU
    layers_stage = vpp * np.ceil(L / f(pp * vpp))            # the busiest stage, when pp x v does not divide L
    f_up = ffn * (2 if model.mlp == "swiglu" else 1)
    k_experts = model.experts_per_token

    # Parameters and memory per GPU (Korthikanti et al. 2022, generalised to GQA and SwiGLU) -------
    ftp = f(tp)
    gpn = hw.system.gpus_per_node
    stage_params = layers_stage * model.layer_params / ftp + np.where(
        pp > 1, max(model.embedding_params, model.output_params + model.norm_params),
        model.embedding_params + model.output_params) / ftp
    dp_local = np.clip(gpn // (tp * cp), 1, dp)
    shard = np.where(opts.sharding == "hybrid", dp_local, dp)
    opt_shard = np.where(zero >= 1, shard, 1)
    weights = stage_params * BF16 / np.where(zero == 3, shard, 1)
    grads = stage_params * GRAD_BYTES / np.where(zero >= 2, shard, 1)
    optim = stage_params * OPTIMIZER_BYTES / opt_shard
    # ZeRO-3 holds up to two whole layers at once (the one computing, the one prefetched)
    gathered = np.where(zero == 3, np.minimum(2, layers_stage) * model.layer_params / ftp * BF16 * (1 - 1 / shard),
                        0.0)
    repl = 10 * h                                               # norms and dropout inputs: TP-replicated without SP
    sharded = 4 * h + 4 * g + 2 * f_up * k_experts + 2 * ffn * k_experts
    kept = np.where(sp, (repl + sharded) / ftp, repl + sharded / ftp)
    if opts.attention == "unfused":
        kept = kept + np.where(rc != 1, 5 * a * s / ftp, 0.0)  # selective drops the s x s scores
    checkpoint = 2 * h / np.where(sp, ftp, 1.0)                 # a recomputed layer keeps only its input
    in_flight = np.minimum(f(pp), np.ceil(m)) * np.where(vpp > 1, 1 + (pp - 1) / (f(pp) * vpp), 1.0)
    per_layer = T * in_flight                                   # tokens whose activations a layer holds
    logits = T * V / ftp * 4 * (pp == 1)                        # FP32 logits, when one stage holds them all
    states = weights + grads + optim + gathered + RESERVED_BYTES
    # the share of the stage's layers whose forward is recomputed: all (full), or, for "block", the fewest
    # whole layers that bring the total within the GPU's memory (Megatron's --recompute-method block)
    need = (states + logits + layers_stage * kept * per_layer - hw.hbm_bytes) / ((kept - checkpoint) * per_layer)
    block = np.clip(np.ceil(np.maximum(need, 0.0)), 0, layers_stage) / layers_stage
    redo = np.select([rc == 2, rc == 3], [1.0, block], 0.0)
    activations = layers_stage * per_layer * (redo * checkpoint + (1 - redo) * kept) + logits
    total = states + activations
    memory = {"weights": weights, "gradients": grads, "optimizer": optim, "gathered_weights": gathered,
              "activations": activations, "reserved": np.full_like(total, RESERVED_BYTES), "total": total}

    # Compute, one layer, forward ---------------------------------------------------------------
    gemm_eff = hw.gemm_efficiency * (FP8_EFFICIENCY if opts.precision == "fp8" else 1.0)
    gemm_peak = (hw.fp8_flops if opts.precision == "fp8" else hw.peak_flops) * gemm_eff * opts.sparsity_speedup
    mem_bw = hw.hbm_bw_Bps * HBM_EFFICIENCY

    def gemm(rows, inner, cols):
        flops = 2 * rows * inner * cols
        traffic = BF16 * (rows * inner + inner * cols + rows * cols)
        return np.maximum(flops / gemm_peak * (1 + hw.gemm_k0 / inner), traffic / mem_bw)

    t_gemm = (gemm(T, h, (h + 2 * g) / ftp) + gemm(T, h / ftp, h)
              + k_experts * (gemm(T, h, f_up / ftp) + gemm(T, ffn / ftp, h)))
    attn_flops = 4 * T * s * h / ftp                           # scores and values, full s x s
    if opts.attention in FUSED:
        efficiency = hw.attention_efficiency if opts.attention == "flash" else hw.flash2_efficiency
        slower_f, slower_b = FUSED[opts.attention]
        causal = 0.5 * attn_flops / (hw.peak_flops * efficiency)     # half the s x s scores, at the kernel's rate
        t_attn_f = causal * slower_f
        t_attn_b = 2.5 * causal / ATTENTION_BWD * slower_b           # the backward recomputes the scores: 5 GEMMs
        softmax_bytes = 0.0
    else:  # batched GEMMs over the full s x s scores, and a memory-bound softmax and dropout
        per_head = gemm(f(mbs) * s / cp, model.head_dim, s) * 2 * (a / ftp)
        t_attn_f = per_head
        t_attn_b = 2 * per_head
        softmax_bytes = 9 * a * s / ftp * T                       # scale-mask-softmax 4, dropout 5 bytes/score
    # element-wise passes: norms 8h, bias-dropout-add 14h (sharded with SP), activation 2 f_up + 2 f
    replicated = np.where(sp, 22 * h / ftp, 22 * h)
    elementwise_bytes = T * (replicated + (2 * f_up + 2 * ffn) * k_experts / ftp) + softmax_bytes
    t_elem_f = elementwise_bytes / mem_bw
    kernels_f = 16 * KERNEL_S
    t_layer_f = t_gemm + t_attn_f + t_elem_f + kernels_f
    t_layer_b = 2 * t_gemm + t_attn_b + 2 * t_elem_f + 2 * kernels_f
    t_recompute = layers_stage * (redo * t_layer_f + (rc == 1) * (t_attn_f + softmax_bytes / mem_bw))
    # logits on the last stage: GEMM, and the FP32 cross-entropy passes
    t_logits = 3 * gemm(T, h, V / ftp) + 3 * T * V / ftp * 4 * 2 / mem_bw

    t_fwd = layers_stage * t_layer_f + t_logits / 3
    t_bwd = layers_stage * t_layer_b + t_recompute + 2 * t_logits / 3

    # Communication ------------------------------------------------------------------------------
    comm = _Comm(hw.system)
    act_bytes = T * h * BF16                                    # one layer's activations, all TP ranks
    tp_local = np.minimum(tp, gpn)
    tp_passes = 4 + 2 * redo                                    # fwd 2, bwd 2, recomputed fwd 2
    tp_one = np.where(sp, comm("reduce_scatter", act_bytes, tp, tp_local) + comm("all_gather", act_bytes, tp, tp_local),
                      comm("all_reduce", act_bytes, tp, tp_local))
    t_tp = layers_stage * tp_passes * tp_one
    # with overlap (Transformer Engine's userbuffers), each TP collective runs beside the GEMM it feeds
    t_tp_gemm = layers_stage * t_gemm * (3 + redo)
    t_tp_hidden = np.minimum(t_tp, t_tp_gemm) if opts.tp_overlap else 0.0
    t_tp = t_tp - t_tp_hidden
    cp_local = np.clip(gpn // tp, 1, cp)
    cp_bytes = f(mbs) * s * 2 * g / ftp * BF16                  # K and V of the whole sequence
    t_cp = layers_stage * (comm("all_gather", cp_bytes, cp, cp_local) + comm("reduce_scatter", cp_bytes, cp, cp_local))
    inner = tp * cp * dp                                        # ranks inside one pipeline stage
    p2p_local = np.where(inner >= gpn, 1, 2)
    p2p_bytes = act_bytes / ftp             # each TP rank sends its slice (Megatron's scatter-gather, SC21 section 4.1)
    # each of the v model chunks of a stage sends its activations on (and their gradients back)
    t_p2p = np.where(pp > 1, 2 * vpp * comm("sendrecv", p2p_bytes, np.full_like(pp, 2), p2p_local), 0.0)

    # Data parallelism ----------------------------------------------------------------------------
    grad_bytes = stage_params * GRAD_BYTES
    t_ar = comm("all_reduce", grad_bytes, dp, dp_local)
    t_rs_ag = comm("reduce_scatter", grad_bytes, dp, dp_local) + comm("all_gather", stage_params * BF16, dp, dp_local)
    t_dp = np.where(zero == 0, t_ar, t_rs_ag)
    # ZeRO-3 / FSDP gathers the weights again for every micro-batch, forward and backward, and
    # reduce-scatters the gradients every micro-batch.
    t_fsdp_mb = np.where(zero == 3, 2 * comm("all_gather", stage_params * BF16, shard, dp_local)
                         + comm("reduce_scatter", stage_params * BF16, shard, dp_local), 0.0)
    # Context-parallel exchanges and FSDP gathers run beside the micro-batch's compute: only the
    # excess over it shows, and at least FSDP's first gather, which nothing precedes.
    beside = t_cp + t_fsdp_mb
    exposed = np.maximum(beside - (t_fwd + t_bwd + t_tp + t_p2p), t_fsdp_mb / np.maximum(layers_stage, 1))
    share_cp = np.divide(t_cp, beside, out=np.zeros_like(beside), where=beside > 0)
    t_dp = np.where(zero == 3, 0.0, t_dp)
    # Communication that runs beside compute takes SMs and HBM bandwidth from it
    overlap_mb = OVERLAP_COST * (np.maximum(beside - exposed, 0.0) + t_tp_hidden)
    gpu_mb = t_fwd + t_bwd + t_tp + t_p2p + exposed + overlap_mb
    # the host issues every kernel: a micro-batch takes at least the time to launch its layers' passes
    host_gap = np.maximum(layers_stage * HOST_PASS_S * (2 + redo) - gpu_mb, 0.0)
    # the last micro-batch's backward hides the gradient reduction, and with a sharded optimizer the next
    # step's first forward hides the parameter all-gather, where other traffic leaves room
    share = np.where(zero >= 1, 1.0, 2 / 3)                   # the backward is two of the three passes
    room = share * (gpu_mb + host_gap) - beside
    hide = np.maximum(room, 0.0) if opts.overlap_grad_reduce else 0.0
    t_dp_exposed = np.maximum(t_dp - hide, t_dp / np.maximum(layers_stage, 1) if opts.overlap_grad_reduce else t_dp)
    overlap_dp = OVERLAP_COST * (t_dp - t_dp_exposed)
    t_opt = stage_params / opt_shard * ADAM_TRAFFIC / mem_bw
    slots = m + (pp - 1) / f(vpp)
    raw = slots * (gpu_mb + host_gap) + t_dp_exposed + overlap_dp + t_opt
    from clusterplan.perf.stragglers import expected_max

    n_gpus = int(np.max(tp * pp * dp * cp)) if tp.size else 1
    straggle = COMPUTE_JITTER_CV * expected_max(max(n_gpus, 1))
    step = raw * (1 + straggle)
    bubble = (pp - 1) / f(vpp) * (t_fwd + t_bwd)
    breakdown = {
        "compute": m * (t_fwd + t_bwd - t_recompute),
        "recompute": m * t_recompute,
        "tp_comm": slots * t_tp,
        "cp_comm": slots * exposed * share_cp,
        "pp_p2p": slots * t_p2p,
        "pp_bubble": bubble,
        "dp_comm": t_dp_exposed + slots * exposed * (1 - share_cp),
        "optimizer": t_opt,
        "overlap": slots * overlap_mb + overlap_dp,
        "host": slots * host_gap,
        "straggler": raw * straggle,
    }

    tokens = opts.global_batch * s
    gpus = f(tp * pp * dp * cp)
    tokens_per_s = tokens / step
    model_flops = model.model_flops_per_token(s) * tokens_per_s
    extra = redo / 3 * model.model_flops_per_token(s)
    hardware_flops = (model.model_flops_per_token(s) + extra) * tokens_per_s
    return {"step_time_s": step, "breakdown": breakdown, "memory": memory, "tokens_per_s": tokens_per_s,
            "tokens_per_s_per_gpu": tokens_per_s / gpus, "tflops_per_gpu": model_flops / gpus / 1e12,
            "mfu": model_flops / gpus / hw.peak_flops, "hardware_tflops_per_gpu": hardware_flops / gpus / 1e12,
            "fits": total <= hw.hbm_bytes, "micro_batches": m}


class _Comm:
    """Collective times for arrays of (size, group, ranks per node), one predict call per distinct group."""

    def __init__(self, system: System):
        self.system = system

    def __call__(self, op: str, size, ranks, local):
        import numpy as np

        size, ranks, local = np.broadcast_arrays(np.asarray(size, float), np.asarray(ranks), np.asarray(local))
        out = np.zeros(size.shape)
        local = np.minimum(local, ranks)
        for n, k in set(zip(ranks.ravel().tolist(), local.ravel().tolist())):
            if n <= 1:
                continue
            pick = (ranks == n) & (local == k)
            out[pick] = predict(op, size[pick], self.system, int(n), int(k)).time_s
        return out


LAYOUT_KEYS = ("tp", "pp", "dp", "cp", "mbs", "vpp", "recompute", "zero")


def layouts(model: Transformer, num_gpus: int, gpus_per_node: int, opts: Options, fixed: dict) -> tuple[dict, dict]:
    """Every layout of ``num_gpus`` GPUs consistent with ``fixed`` (0 / -1 = free), and counts rejected by reason."""
    import itertools

    import numpy as np

    def choices(key, free):
        value = fixed.get(key)
        return [value] if value not in (None, 0, -1, "") else free

    powers = [2 ** i for i in range(15)]
    divisors = [d for d in range(1, num_gpus + 1) if num_gpus % d == 0]
    grid = itertools.product(
        choices("tp", [t for t in powers if t <= min(gpus_per_node, model.heads)]),
        choices("pp", [p for p in divisors if p <= model.layers]),
        choices("cp", [1, 2, 4]),
        choices("mbs", [1, 2, 4, 8, 16]),
        choices("vpp", [1, 2, 3, 4, 6, 8]),
        choices("recompute", [0, 1, 2, 3]),
        choices("zero", [0, 1, 3]))
    rows = np.array(list(grid), dtype=np.int64).reshape(-1, 7)
    tp, pp, cp, mbs, vpp, rc, zero = rows.T
    dp = num_gpus // np.maximum(tp * pp * cp, 1)
    if fixed.get("dp"):
        dp = np.where(dp == fixed["dp"], dp, 0)
    rejected = {}

    def reject(bad, reason):
        count = int(np.count_nonzero(bad & keep))
        if count:
            rejected[reason] = rejected.get(reason, 0) + count
        return keep & ~bad

    keep = np.ones(len(rows), bool)
    keep = reject(tp * pp * cp * dp != num_gpus, "tp x pp x cp x dp does not equal the GPU count")
    keep = reject(model.heads % tp != 0, "attention heads not divisible by tp")
    keep = reject(model.query_groups % np.minimum(tp, model.query_groups) != 0, "kv heads not divisible by tp")
    # a stage's chunks may hold one layer fewer than the busiest stage's (Llama 3's 126 layers on 16 x 8 chunks)
    keep = reject(model.layers + pp < pp * vpp, "more pipeline chunks (pp x virtual stages) than layers")
    keep = reject((vpp > 1) & (pp == 1), "virtual stages need pipeline parallelism")
    keep = reject(((opts.seq_len % (2 * cp)) != 0) & (cp > 1), "sequence not divisible by 2 x cp")
    batch_ok = (opts.global_batch % np.maximum(dp * mbs, 1)) == 0
    keep = reject(~batch_ok, "global batch not divisible by dp x micro-batch")
    m = opts.global_batch // np.maximum(dp * mbs, 1)
    keep = reject((vpp > 1) & (m % pp != 0), "interleaving needs micro-batches divisible by pp")
    keep = reject((zero == 3) & (pp > 1), "ZeRO-3 with pipeline parallelism")
    keep = reject((zero > 0) & (dp == 1), "ZeRO needs data parallelism")
    out = {"tp": tp, "pp": pp, "dp": dp, "cp": cp, "mbs": mbs, "vpp": vpp, "recompute": rc, "zero": zero}
    return {k: v[keep] for k, v in out.items()}, rejected


def hardware(design, gemm_efficiency: float = 0.0) -> Hardware:
    """The step model's view of a planned cluster; ``gemm_efficiency`` (measured) replaces the catalog's when set."""
    from clusterplan.perf.collectives import system_from_design

    gpu = design.parts.gpu
    return Hardware(peak_flops=gpu.bf16_flops, fp8_flops=gpu.fp8_flops or gpu.bf16_flops, hbm_bytes=gpu.hbm_bytes,
                    hbm_bw_Bps=gpu.hbm_bw_Bps, gemm_efficiency=gemm_efficiency or gpu.gemm_efficiency,
                    gemm_k0=gpu.gemm_k0,
                    attention_efficiency=gpu.attention_efficiency, flash2_efficiency=gpu.flash2_efficiency,
                    system=system_from_design(design))


@dataclass(frozen=True, slots=True)
class Search:
    """The best layouts found, best first, each a dict of plain numbers; and what was rejected."""

    best: list
    num_evaluated: int
    rejected: dict


def search(model: Transformer, hw: Hardware, opts: Options, num_gpus: int, fixed: dict, *,
           top: int = 10, rank: str = "throughput") -> Search:
    """Evaluate every layout consistent with ``fixed``; rank the feasible ones by throughput."""
    import numpy as np

    grid, rejected = layouts(model, num_gpus, hw.system.gpus_per_node, opts, fixed)
    evaluated = len(grid["tp"])
    if not evaluated:
        return Search(best=[], num_evaluated=0, rejected=rejected)
    result = evaluate(model, hw, opts, grid)
    fits = result["fits"]
    if np.count_nonzero(~fits):
        need = float(np.min(result["memory"]["total"]))
        reason = (f"does not fit in GPU memory (the smallest needs {need / 2**30:,.0f} GiB per GPU, "
                  f"has {hw.hbm_bytes / 2**30:,.0f})")
        rejected[reason] = int(np.count_nonzero(~fits))
    order = [i for i in np.argsort(result["step_time_s"], kind="stable") if fits[i]][:top]
    return Search(best=[_row(grid, result, i) for i in order], num_evaluated=evaluated, rejected=rejected)


def _row(grid: dict, result: dict, i: int) -> dict:
    def pick(value):
        return float(value[i]) if hasattr(value, "__len__") else float(value)

    layout = {k: int(grid[k][i]) for k in LAYOUT_KEYS}
    layout["recompute"] = RECOMPUTE[layout["recompute"]]
    out = {"layout": layout}
    for key, value in result.items():
        out[key] = {k: pick(v) for k, v in value.items()} if isinstance(value, dict) else pick(value)
    out["fits"] = bool(result["fits"][i])
    return out
