import pytest

from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Layout
from clusterplan.perf.presets import preset
from clusterplan.perf.step import evaluate


def test_states_are_megatrons_18_bytes_per_parameter(hw):
    """BF16 weights, FP32 gradients, FP32 master weights and Adam moments: 18 bytes per parameter, unsharded."""
    model = preset("llama2-7b")
    mem = evaluate(model, hw, Options(seq_len=4096, global_batch=1), Layout()).memory
    assert mem.weights + mem.gradients + mem.optimizer == pytest.approx(18 * model.params)


def test_distributed_optimizer_is_6_plus_12_over_dp(hw):
    """ZeRO-1 shards the 12 optimizer bytes over the data-parallel ranks."""
    model = preset("llama2-7b")
    mem = evaluate(model, hw, Options(seq_len=4096, global_batch=8), Layout(dp=8, zero=1)).memory
    assert mem.weights + mem.gradients + mem.optimizer == pytest.approx((6 + 12 / 8) * model.params)


@pytest.mark.parametrize("recompute, sp, per_layer", [
    # Korthikanti et al. 2022 Table 2, bytes per layer with s b h factored out
    ("none", False, lambda s, h, a, t: 10 + 24 / t + 5 * a * s / (h * t)),
    ("none", True, lambda s, h, a, t: (34 + 5 * a * s / h) / t),
    ("selective", True, lambda s, h, a, t: 34 / t),
    ("selective", False, lambda s, h, a, t: 10 + 24 / t),
    ("full", False, lambda s, h, a, t: 2),
])
def test_activation_memory_is_korthikanti(hw, recompute, sp, per_layer):
    """Activation bytes per layer are Korthikanti et al.'s Table 2, plus the FP32 logits."""
    model = preset("gpt-18b")
    s, tp, b = 2048, 8, 2
    opts = Options(seq_len=s, global_batch=b, attention="unfused", sequence_parallel=sp)
    mem = evaluate(model, hw, opts, Layout(tp=tp, mbs=b, recompute=recompute)).memory
    expected = per_layer(s, model.hidden, model.heads, tp) * s * b * model.hidden * model.layers
    logits = 4 * s * b * model.vocab / tp
    assert mem.activations == pytest.approx(expected + logits)


def test_memory_parts_add_up_to_the_total(hw):
    """weights + gradients + optimizer + gathered + activations + reserved = total."""
    model = preset("llama2-13b")
    mem = evaluate(model, hw, Options(seq_len=4096, global_batch=64), Layout(tp=2, dp=8, zero=3)).memory
    parts = (mem.weights, mem.gradients, mem.optimizer, mem.gathered_weights, mem.activations, mem.reserved)
    assert mem.gathered_weights > 0 and sum(parts) == pytest.approx(mem.total)
