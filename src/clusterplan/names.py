"""The named choices that the scenario schema and the models share, defined once.

Below spec and the models in the import order: spec validates a scenario's value against
these, and perf encodes a layout's recompute choice as an index into ``RECOMPUTE``.
"""

RECOMPUTE = ("none", "selective", "full", "block")   # block: the fewest whole layers that fit
PRECISIONS = ("bf16", "fp8")
ATTENTION = ("flash", "flash2", "flash1", "unfused")
SHARDING = ("full", "hybrid")
# the training software a run models (docs/training.md, Software era): current Megatron-Core / Transformer Engine,
# or an older stack whose documented defaults it applies
SOFTWARE = ("current", "megatron-2021", "megatron-2022", "deepspeed-2023")
GRAD_REDUCE = ("fp32", "bf16")
MOE_DISPATCHERS = ("alltoall", "deepep")
# the pipeline schedule: 1f1b (Megatron's, interleaved with virtual stages) or dualpipe (DeepSeek-V3's bidirectional
# pipeline: two chunks a rank, forward and backward chunks overlapped with their communication)
PIPELINE_SCHEDULES = ("1f1b", "dualpipe")
# a MoE router's routing: dropless (every token kept; the host syncs on the experts' counts) or tokendrop (capacity
# factor 1, padded to capacity: static shapes, no sync)
MOE_ROUTING = ("dropless", "tokendrop")
# CUDA graph capture (docs/training.md, CUDA graphs): none (Megatron-Core's default, eager launches), the MoE router
# and its token-count preprocessing, those and each layer's attention, or the whole iteration (static shapes only:
# token dropping padded to capacity, never a dropless router)
CUDA_GRAPHS = ("none", "router", "attention+router", "full")

# clusterplan size: the ways to get the GPUs (docs/size.md)
SIZE_MODES = ("own", "reserved", "on-demand", "spot", "hybrid")

# Element types by their short names (as `bench gemm` and `train --precision` spell them) -> nccl-tests' names
DTYPE_ALIASES = {"bf16": "bfloat16", "fp16": "half", "fp32": "float", "fp64": "double"}


def dtype_name(name: str) -> str:
    """nccl-tests' name of an element type given either way: "bf16" -> "bfloat16", "float" -> "float"."""
    return DTYPE_ALIASES.get(name.strip().lower(), name.strip().lower())
