"""Memory as NVIDIA's published recipes run it: a recipe's layout that runs without recomputation must fit
without it (benchmarks/data/validation/dense_training_throughput.csv; Megatron-Bridge performance summary 25.11)."""

import sys
from pathlib import Path

import pytest

from clusterplan.perf.layout import Constraints
from clusterplan.perf.presets import preset

sys.path.insert(0, str(Path(__file__).parents[2] / "benchmarks"))
validate_training = pytest.importorskip("validate_training")


def test_llama_405b_at_nvidias_h100_recipe_layout_needs_no_recomputation():
    """Llama 3.1 405B on 1,024 H100 at the recipe's layout (tp 8, pp 8, cp 2, vp 8, mbs 1, global batch 512,
    distributed optimizer), in BF16 with the recipes' BF16 gradient reduction (grad_reduce_in_fp32 = False): fits
    without recomputation, where FP32 gradients forced some."""
    model = preset("llama3.1-405b")
    fixed = Constraints(tp=8, pp=8, cp=2, virtual_stages=8, mbs=1, zero=1)
    hw = validate_training.cluster("h100-sxm", 1024, "ib-ndr400", 8)
    recipe = validate_training.predict(model, hw, 1024, 8192, 512, fixed, grad_reduce="bf16")
    assert recipe.layout.recompute == "none" and recipe.step.recompute == 0
    assert validate_training.predict(model, hw, 1024, 8192, 512, fixed, grad_reduce="fp32").step.recompute > 0


@pytest.mark.parametrize("model, gpus, tp, pp, cp, vp, batch", [
    ("llama3-8b", 8, 1, 1, 1, 1, 128),
    ("llama3.1-405b", 1024, 8, 8, 2, 8, 512),
])
def test_fp8_recipes_fit_without_recomputation(model, gpus, tp, pp, cp, vp, batch):
    """The H100 FP8 recipes' layouts (the same rows) fit without recomputation."""
    fixed = Constraints(tp=tp, pp=pp, cp=cp, virtual_stages=vp, mbs=1, zero=3 if model == "llama3-8b" else 1)
    hw = validate_training.cluster("h100-sxm", gpus, "ib-ndr400", 8)
    best = validate_training.predict(preset(model), hw, gpus, 8192, batch, fixed, precision="fp8", grad_reduce="bf16")
    assert best.layout.recompute == "none"
