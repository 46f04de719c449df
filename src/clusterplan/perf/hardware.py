"""What the step model needs of the GPU and the cluster (``Hardware``), and of the software (``Options``)."""

from __future__ import annotations

from dataclasses import dataclass

from clusterplan.errors import ConfigError
from clusterplan.names import (ATTENTION, CUDA_GRAPHS, GRAD_REDUCE, MOE_DISPATCHERS, PIPELINE_SCHEDULES, PRECISIONS,
                               SHARDING)
from clusterplan.perf.collectives import System, system_from_design
from clusterplan.schema import FROZEN


# ASSUMPTION: the share of HBM a layout leaves free for the caching allocator's fragmentation and transient
# peaks the memory model does not count (ZeRO-R, Rajbhandari et al. SC20 §3.2, saw fragmentation strand large
# shares of memory); docs/training.md
MEMORY_MARGIN = 0.05


@dataclass(**FROZEN)
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
    memory_margin: float = MEMORY_MARGIN   # share of HBM a layout keeps free

    @property
    def usable_bytes(self) -> float:
        """The HBM a layout may fill: all of it less the stated margin."""
        return self.hbm_bytes * (1 - self.memory_margin)


@dataclass(**FROZEN)
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
    fp8_weight_cache: bool = True   # FP8 weights cast on a step's first micro-batch only (Megatron-LM); False: each
                                    # micro-batch recasts them (Transformer Engine used without that hint)
    grad_reduce: str = "bf16"       # the gradient buffer's precision: bf16 (NeMo / Megatron-Bridge recipes'
                                    # grad_reduce_in_fp32 = False) or fp32 (Megatron-LM's rule for BF16 runs)
    moe_overlap: bool = False       # expert all-to-alls run beside the other micro-batch's compute (Megatron-Core's
                                    # overlap_moe_expert_parallel_comm, DualPipe-class schedules); off by default
    moe_dispatcher: str = "alltoall"  # alltoall (Megatron's default) or deepep (DeepEP / HybridEP: a token crosses the
                                      # network once per node it goes to, then NVLink to its experts' GPUs)
    expert_imbalance: float = 1.0   # tokens of the busiest expert over the mean (1 = balanced)
    moe_dropless: bool = True       # the router keeps every token: the host waits for the experts' token counts
                                    # (a device-to-host sync, experts.py); False: token dropping at capacity
                                    # factor 1, padded to capacity (static shapes, no sync: Megatron's
                                    # moe_pad_expert_input_to_capacity, NeMo's 25.09 MoE recipes)
    cuda_graphs: str = "none"       # what CUDA graphs capture (names.CUDA_GRAPHS): none (Megatron-Core's default),
                                    # router, attention+router (Transformer Engine's per-layer graphs) or full (the
                                    # whole iteration, one launch); captured kernels cost the host one graph launch
    pipeline_schedule: str = "1f1b"  # 1f1b (Megatron's; interleaved with virtual stages) or dualpipe (DeepSeek-V3's
                                     # bidirectional schedule: step.pipeline_bubble_slots, stage.py, memory.py)

    def __post_init__(self) -> None:
        problems = [f"{name}({getattr(self, name)}) must be >= 1" for name in ("seq_len", "global_batch")
                    if getattr(self, name) < 1]
        for name, choices in (("precision", PRECISIONS), ("attention", ATTENTION), ("sharding", SHARDING),
                              ("cuda_graphs", CUDA_GRAPHS), ("pipeline_schedule", PIPELINE_SCHEDULES)):
            if getattr(self, name) not in choices:
                problems.append(f"{name}({getattr(self, name)!r}) must be one of {', '.join(choices)}")
        if self.grad_reduce not in GRAD_REDUCE:
            problems.append(f"grad_reduce({self.grad_reduce!r}) must be one of fp32, bf16")
        if self.moe_dispatcher not in MOE_DISPATCHERS:
            problems.append(f"moe_dispatcher({self.moe_dispatcher!r}) must be one of {', '.join(MOE_DISPATCHERS)}")
        if self.expert_imbalance < 1:
            problems.append(f"expert_imbalance({self.expert_imbalance}) must be >= 1")
        if self.sparsity_speedup < 1:
            problems.append(f"sparsity_speedup({self.sparsity_speedup}) must be >= 1")
        if problems:
            raise ConfigError("; ".join(problems), key="options")

    @property
    def merged_schedule(self) -> bool:
        """Whether one micro-batch's forward runs beside another's backward, their all-to-alls hidden by each
        other's compute: Megatron-Core's merged 1F1B (``moe_overlap``) or DualPipe's overlapped chunk pairs."""
        return self.moe_overlap or self.pipeline_schedule == "dualpipe"


def precision_peak_flops(hw: Hardware, options: Options) -> float:
    """The peak of the precision a run computes in: BF16 or FP8 dense, doubled with 2:4 sparsity (the datasheets'
    "with sparsity" figures are twice the dense ones). MFU's convention divides by the BF16 dense peak instead."""
    dense = hw.fp8_flops if options.precision == "fp8" else hw.peak_flops
    return dense * (2 if options.sparsity_speedup > 1 else 1)


def hardware(design, gemm_efficiency: float = 0.0, domain_gpus: int = 0) -> Hardware:
    """The step model's view of a planned cluster; ``gemm_efficiency`` (measured) replaces the catalog's when set;
    ``domain_gpus``: the GPUs of each NVLink domain the job uses (default all; ``system_from_design``)."""
    gpu = design.parts.gpu
    return Hardware(peak_flops=gpu.bf16_flops, fp8_flops=gpu.fp8_flops or gpu.bf16_flops, hbm_bytes=gpu.hbm_bytes,
                    hbm_bw_Bps=gpu.hbm_bw_Bps, gemm_efficiency=gemm_efficiency or gpu.gemm_efficiency,
                    gemm_k0=gpu.gemm_k0,
                    attention_efficiency=gpu.attention_efficiency, flash2_efficiency=gpu.flash2_efficiency,
                    system=system_from_design(design, domain_gpus))
