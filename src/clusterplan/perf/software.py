"""Software era: the training stack a run models, as the switches its documented defaults set (docs/training.md).

"current" is today's Megatron-Core with Transformer Engine (the Options defaults). An older stack lacks mechanisms
the step model credits by default; choosing it turns them off:

- "megatron-2021": Megatron-LM as SC21 ran it (Narayanan et al. 2021): unfused attention with its fused softmax
  kernel, no sequence parallelism, TP all-reduces not overlapped with GEMMs, gradients all-reduced after the
  backward (``--overlap-grad-reduce`` came in 2023).
- "megatron-2022": Megatron-LM after Korthikanti et al. 2022 (arXiv 2205.05198): sequence parallelism added, the
  rest as 2021.
- "deepspeed-2023": Megatron-DeepSpeed / DeepSpeed ZeRO of 2023 (after FlashAttention's release): FlashAttention
  1 kernels, no sequence parallelism, no TP overlap, and ZeRO's ``overlap_comm`` at its documented default (false):
  the gradient reduction follows the backward. (BLOOM-176B, trained from March 2022 on Megatron-DeepSpeed, predates
  FlashAttention and ran Megatron's fused softmax: its switches are "megatron-2021"'s.)

Every older era also runs 1F1B without the merged MoE schedule or CUDA graphs (DualPipe, Megatron-Core's EP overlap
and its graph capture came in 2024-25). Each era sets only these switches; hardware efficiencies stay the GPU's
calibrated ones. The A100 runs of 2021-22
software (SC21's tables, BLOOM-176B, MT-NLG 530B) are predicted with "megatron-2021" by name
(``python benchmarks/validate_training.py --eras`` prints them with it and at "current"; docs/training.md).
"""

from __future__ import annotations

from dataclasses import replace

from clusterplan.perf.hardware import Options

_LATER = {"pipeline_schedule": "1f1b", "moe_overlap": False, "cuda_graphs": "none"}   # no older stack had them
ERAS: dict[str, dict[str, object]] = {
    "current": {},
    "megatron-2021": {"attention": "unfused", "sequence_parallel": False, "tp_overlap": False,
                      "overlap_grad_reduce": False, **_LATER},
    "megatron-2022": {"attention": "unfused", "sequence_parallel": True, "tp_overlap": False,
                      "overlap_grad_reduce": False, **_LATER},
    "deepspeed-2023": {"attention": "flash1", "sequence_parallel": False, "tp_overlap": False,
                       "overlap_grad_reduce": False, **_LATER},
}


def with_software(options: Options, era: str) -> Options:
    """``options`` as the software ``era`` runs them (``ERAS``); "current" leaves them as they are."""
    if era not in ERAS:
        raise ValueError(f"software({era!r}) must be one of {', '.join(ERAS)}")
    return replace(options, **ERAS[era])
