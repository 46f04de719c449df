"""perf/compute.py: the recipes' selective recomputation of the routed experts' activation."""

from dataclasses import replace

import pytest

from clusterplan.perf.compute import BF16, _module_recompute_s
from clusterplan.perf.presets import PRESETS


def no_gemm(rows, inner, cols):
    """No MLA up-projection to price in these models."""
    raise AssertionError("a model without latent attention has no up-projection GEMM")


@pytest.mark.parametrize("mlp, elements", [("swiglu", 3), ("gelu", 2)])
def test_the_recomputed_expert_activation_reads_f_up_and_writes_f(mlp, elements):
    """Qwen3-30B-A3B (every layer MoE, top-8 of FFN 768: 6,144 routed elements a token): gated, read gate and up
    (2 x 6,144) and write 6,144, 3 elements; plain GELU (regression: it was charged 3 too), read 6,144 and write
    6,144, 2; 2 bytes each, 4,096 tokens over tp 2 at 1 TB/s."""
    model = replace(PRESETS["qwen3-30b-a3b"], mlp=mlp)
    assert model.routed_ffn == 6144
    seconds = _module_recompute_s(model, 4096, 2, no_gemm, 1e12)
    assert seconds == pytest.approx(4096 * elements * 6144 * BF16 / 2 / 1e12)
