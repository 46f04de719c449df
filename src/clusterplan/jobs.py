"""The scenario's job sections: [workload] (the training job), [reliability] (its failures and checkpoints) and
[size] (`clusterplan size`'s question). Every key is documented in ``docs/scenario.md``."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from clusterplan.names import (ATTENTION, CUDA_GRAPHS, GRAD_REDUCE, MOE_DISPATCHERS, MOE_ROUTING, PIPELINE_SCHEDULES,
                               PRECISIONS, RECOMPUTE, SHARDING, SIZE_MODES, SOFTWARE)
from clusterplan.schema import FROZEN, check, file_path, non_negative, positive, unit


@dataclass(**FROZEN)
class Workload:
    """A training job for the performance model (docs/training.md); no model = no workload.

    Layout keys left at 0 (or "") are chosen by the layout search; the ones set are held fixed.
    """

    model: str = ""                  # a preset name (``clusterplan train --list-models``)
    model_config: str = file_path()  # or a Hugging Face config.json (or a snapshot folder holding one)
    tokens: float = unit("count", default=0.0)   # token budget for time- and cost-to-train (0 = none)
    gpus: int = 0                    # GPUs the job uses, whole nodes (0 = the whole cluster)
    seq_len: int = 0                 # 0 = the model's published context length
    global_batch: int = 0            # sequences per step (0 = about 4M tokens, rounded to the layout)
    tp: int = 0
    pp: int = 0
    dp: int = 0
    cp: int = 0
    mbs: int = 0                     # micro-batch size, sequences
    virtual_stages: int = 0          # interleaved pipeline stages per GPU (1 = plain 1F1B)
    ep: int = 0                      # expert-parallel size of a mixture-of-experts model (0 = searched)
    etp: int = -1                    # its experts' tensor-parallel size: 0 = tp, 1 = whole experts; -1 = search
    recompute: str = ""              # none | selective | full | block (the fewest layers that fit)
    zero: int = -1                   # 0..3 (3 = FSDP full sharding); -1 = search
    sharding: str = "full"           # ZeRO/FSDP across all data-parallel ranks, or "hybrid" (within a node)
    sequence_parallel: bool = True   # Megatron sequence parallelism with TP
    tp_overlap: bool = True          # TP collectives overlap the GEMMs they feed (Transformer Engine userbuffers)
    overlap_grad_reduce: bool = True  # the gradient reduction overlaps the backward (Megatron --overlap-grad-reduce)
    precision: str = "bf16"          # bf16 | fp8 (GEMMs in FP8, the rest in BF16)
    sparsity_speedup: float = 1.0    # 2:4 sparsity what-if: GEMM throughput multiplier (1 = dense)
    gemm_efficiency: float = 0.0     # measured BF16 GEMM throughput / peak (train --calibration); 0 = the catalog's
    attention: str = "flash"         # the GPU's best fused kernel, flash2, flash1 (2022-23 kernels) or unfused (2021)
    software: str = "current"        # current | megatron-2021 | megatron-2022 | deepspeed-2023 (their defaults)
    grad_reduce: str = "bf16"        # gradient buffer: bf16 (NeMo/Megatron-Bridge recipes) or fp32 (Megatron-LM)
    moe_overlap: bool = False        # expert all-to-alls overlap the other micro-batch's compute (Megatron-Core's
                                     # overlap_moe_expert_parallel_comm; off, its default)
    moe_dispatcher: str = "alltoall"  # alltoall (Megatron's default) | deepep (a token crosses the network once a node)
    expert_imbalance: float = 1.0    # tokens of the busiest expert over the mean (1 = balanced routing)
    moe_routing: str = "dropless"    # dropless (every token kept: a host sync on the experts' counts) | tokendrop
                                     # (capacity factor 1, padded to capacity: static shapes, no sync)
    cuda_graphs: str = "none"        # none | router | attention+router | full (what CUDA graphs capture; full
                                     # needs static shapes: a dense model, or token dropping)
    pipeline_schedule: str = "1f1b"  # 1f1b (interleaved with virtual_stages > 1) | dualpipe (DeepSeek-V3's two-way
                                     # pipeline: even pp, an even number of micro-batches, no virtual stages)

    def __post_init__(self) -> None:
        non_negative(self.tokens, "tokens")
        for name in ("gpus", "seq_len", "global_batch", "tp", "pp", "dp", "cp", "mbs", "virtual_stages", "ep"):
            non_negative(getattr(self, name), name)
        check(not (self.model and self.model_config), "model_config", "give model or model_config, not both")
        check(self.recompute in ("", *RECOMPUTE), "recompute",
              f"must be none, selective, full or block, got {self.recompute!r}")
        check(-1 <= self.zero <= 3, "zero", f"must be 0, 1, 2 or 3, got {self.zero}")
        check(-1 <= self.etp <= 1, "etp", f"must be 0 (tp) or 1 (whole experts), got {self.etp}")
        check(self.sharding in SHARDING, "sharding", f"must be 'full' or 'hybrid', got {self.sharding!r}")
        check(self.precision in PRECISIONS, "precision", f"must be 'bf16' or 'fp8', got {self.precision!r}")
        check(self.attention in ATTENTION, "attention",
              f"must be one of {', '.join(ATTENTION)}, got {self.attention!r}")
        check(self.sparsity_speedup >= 1, "sparsity_speedup", f"must be >= 1, got {self.sparsity_speedup}")
        check(self.grad_reduce in GRAD_REDUCE, "grad_reduce", f"must be 'fp32' or 'bf16', got {self.grad_reduce!r}")
        check(self.software in SOFTWARE, "software", f"must be one of {', '.join(SOFTWARE)}, got {self.software!r}")
        check(self.moe_dispatcher in MOE_DISPATCHERS, "moe_dispatcher",
              f"must be one of {', '.join(MOE_DISPATCHERS)}, got {self.moe_dispatcher!r}")
        check(self.expert_imbalance >= 1, "expert_imbalance", f"must be >= 1, got {self.expert_imbalance}")
        check(self.moe_routing in MOE_ROUTING, "moe_routing",
              f"must be one of {', '.join(MOE_ROUTING)}, got {self.moe_routing!r}")
        check(self.cuda_graphs in CUDA_GRAPHS, "cuda_graphs",
              f"must be one of {', '.join(CUDA_GRAPHS)}, got {self.cuda_graphs!r}")
        check(self.pipeline_schedule in PIPELINE_SCHEDULES, "pipeline_schedule",
              f"must be one of {', '.join(PIPELINE_SCHEDULES)}, got {self.pipeline_schedule!r}")
        check(self.pipeline_schedule != "dualpipe" or self.pp % 2 == 0, "pp",
              f"DualPipe needs an even pp (two chunks a rank, one per direction), got {self.pp}")
        check(self.pipeline_schedule != "dualpipe" or self.virtual_stages <= 1, "virtual_stages",
              f"DualPipe runs its own two chunks a rank: leave virtual_stages at 0 or 1, got {self.virtual_stages}")
        check(0 <= self.gemm_efficiency <= 1, "gemm_efficiency", f"must be in [0, 1], got {self.gemm_efficiency}")

    @property
    def defined(self) -> bool:
        return bool(self.model or self.model_config)


@dataclass(**FROZEN)
class ReliabilitySettings:
    """Failures, checkpoints and restarts of the training job (docs/reliability.md)."""

    failures: tuple[str, ...]         # catalog ids of the failure causes (``clusterplan catalog --family failures``)
    failure_rates: Mapping[str, float] = field(default_factory=dict)  # overrides, per 1000 component-days
    days: float                       # wall-clock length of the run, for the expected interruptions
    checkpoint_interval_min: float    # 0 = Daly's optimum
    async_checkpoint: bool            # only the GPU-to-host copy (and the metadata) blocks training
    checkpoint_metadata_s: float      # blocking per checkpoint whatever its size: planning, metadata, commit
    checkpoint_bytes_per_param: float
    checkpoints_kept: int
    dataset_tb: float = unit("TB")    # 0 = workload.tokens x bytes_per_token
    bytes_per_token: float
    detect_min: float                 # failure to detection
    restart_overhead_min: float       # detection to training again, less the checkpoint reload
    repair_hours: float               # a failed node out of service
    spare_confidence: float           # probability that the spares cover the nodes in repair
    target_overhead: float            # most goodput the checkpoint tier's finite write bandwidth may cost
    # the whole run beyond its steady state (docs/reliability.md#whole-run)
    ramp_tokens_fraction: float = 0.0     # share of the tokens trained while the batch ramps up
    ramp_batch_fraction: float = 0.5      # ... at this share of the full batch
    long_context_tokens_fraction: float = 0.0   # share of the tokens in context-extension stages
    long_context_seq_len: int = 0         # ... at this sequence length (0 = no such stage)
    eval_interval_steps: int = 0          # training steps between evaluations (0 = none)
    eval_steps: int = 0                   # forward-only steps per evaluation
    pause_fraction: float = 0.0           # share of the wall clock lost to data-pipeline stalls
    held_fraction: float = 1.0            # share of the reserved GPUs the job ran on

    def __post_init__(self) -> None:
        check(len(self.failures) > 0, "failures", "must name at least one failure cause")
        check(len(set(self.failures)) == len(self.failures), "failures", "names a cause twice")
        for cause, rate in self.failure_rates.items():
            check(rate > 0, f"failure_rates.{cause}",
                  f"must be > 0 per 1000 component-days, got {rate} (leave a cause out of reliability.failures "
                  f"to ignore it)")
        for name in ("days", "checkpoint_bytes_per_param", "bytes_per_token", "repair_hours"):
            positive(getattr(self, name), name)
        for name in ("checkpoint_interval_min", "checkpoint_metadata_s", "dataset_tb", "detect_min",
                     "restart_overhead_min"):
            non_negative(getattr(self, name), name)
        check(self.checkpoints_kept >= 1, "checkpoints_kept", f"must be >= 1, got {self.checkpoints_kept}")
        check(0 < self.spare_confidence < 1, "spare_confidence", f"must be in (0, 1), got {self.spare_confidence}")
        check(0 < self.target_overhead < 1, "target_overhead", f"must be in (0, 1), got {self.target_overhead}")
        for name in ("ramp_tokens_fraction", "long_context_tokens_fraction"):
            check(0 <= getattr(self, name) <= 1, name, f"must be in [0, 1], got {getattr(self, name)}")
        check(0 <= self.pause_fraction < 0.5, "pause_fraction", f"must be in [0, 0.5), got {self.pause_fraction}")
        for name in ("ramp_batch_fraction", "held_fraction"):
            check(0 < getattr(self, name) <= 1, name, f"must be in (0, 1], got {getattr(self, name)}")
        for name in ("long_context_seq_len", "eval_interval_steps", "eval_steps"):
            non_negative(getattr(self, name), name)


@dataclass(**FROZEN)
class Size:
    """``clusterplan size``: the cheapest and the fastest way to a trained model (docs/size.md).
    Empty lists, "" and 0 mean the defaults docs/size.md gives."""

    model: str = ""                  # "" = workload.model
    tokens: float = unit("count", default=0.0)   # 0 = workload.tokens
    deadline_days: float = 0.0       # days from start; 0 = no deadline
    deadline_date: str = ""          # or a date, YYYY-MM-DD
    budget_usd: float = unit("USD", default=0.0)  # 0 = no budget
    gpus: tuple[str, ...] = ()       # catalog GPU ids
    fabrics: tuple[str, ...] = ()    # catalog fabric ids
    modes: tuple[str, ...] = ()      # own, reserved, on-demand, spot, hybrid
    start: str = ""                  # YYYY-MM-DD; "" = today
    max_gpus: int = 16384            # the largest count searched

    def __post_init__(self) -> None:
        for name in ("tokens", "deadline_days", "budget_usd", "max_gpus"):
            non_negative(getattr(self, name), name)
        check(not (self.deadline_days and self.deadline_date), "deadline_date", "give days or a date, not both")
        for mode in self.modes:
            check(mode in SIZE_MODES, "modes", f"must be among {', '.join(SIZE_MODES)}, got {mode!r}")

    @property
    def defined(self) -> bool:
        return self != Size()
