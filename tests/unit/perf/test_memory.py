from dataclasses import replace

import pytest

from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Layout
from clusterplan.perf.presets import preset
from clusterplan.perf.step import evaluate


def test_states_are_megatrons_18_bytes_per_parameter(hw):
    """BF16 weights, FP32 gradients, FP32 master weights and Adam moments: 18 bytes per parameter, unsharded."""
    model = preset("llama2-7b")
    mem = evaluate(model, hw, Options(seq_len=4096, global_batch=1, grad_reduce="fp32"), Layout()).memory
    assert mem.weights + mem.gradients + mem.optimizer == pytest.approx(18 * model.params)


def test_distributed_optimizer_is_6_plus_12_over_dp(hw):
    """ZeRO-1 shards the 12 optimizer bytes over the data-parallel ranks."""
    model = preset("llama2-7b")
    mem = evaluate(model, hw, Options(seq_len=4096, global_batch=8, grad_reduce="fp32"), Layout(dp=8, zero=1)).memory
    assert mem.weights + mem.gradients + mem.optimizer == pytest.approx((6 + 12 / 8) * model.params)


def test_bf16_gradient_reduction_is_4_plus_16_over_dp(hw):
    """grad_reduce bf16 (NeMo's recipes): a BF16 gradient buffer (2) beside BF16 weights (2), and the distributed
    optimizer's FP32 master weights, Adam moments and FP32 gradients of its shard (16 / dp): Megatron's table."""
    model = preset("llama2-7b")
    options = Options(seq_len=4096, global_batch=8, grad_reduce="bf16")
    mem = evaluate(model, hw, options, Layout(dp=8, zero=1)).memory
    assert mem.weights + mem.gradients + mem.optimizer == pytest.approx((4 + 16 / 8) * model.params)
    unsharded = evaluate(model, hw, replace(options, global_batch=1), Layout()).memory
    assert unsharded.weights + unsharded.gradients + unsharded.optimizer == pytest.approx(20 * model.params)


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


def test_activations_follow_the_real_attention_widths(hw):
    """Qwen3-32B's 8,192-wide queries and outputs (64 x 128 on a 5,120 model) and its 8 x 128 K and V are what
    a layer keeps: Korthikanti's 4h + 4g becomes 2q + 2k + 2v + 2o."""
    model = preset("qwen3-32b")
    s, b = 4096, 1
    opts = Options(seq_len=s, global_batch=b)
    mem = evaluate(model, hw, opts, Layout(mbs=b, recompute="selective")).memory
    f = model.ffn_hidden
    per_token = 10 * model.hidden + 2 * 8192 + 2 * 1024 + 2 * 1024 + 2 * 8192 + 2 * 2 * f + 2 * f
    assert mem.activations == pytest.approx(model.layers * s * b * per_token + 4 * s * b * model.vocab)


def test_sliding_window_bounds_unfused_score_memory(hw):
    """Unfused attention keeps 5 bytes per score: a sliding layer keeps them for its window only."""
    model = preset("mistral-7b")                       # every layer slides over 4,096 tokens
    opts = Options(seq_len=8192, global_batch=1, attention="unfused")
    windowed = evaluate(model, hw, opts, Layout()).memory.activations
    full = evaluate(replace(model, sliding_layers=0), hw, opts, Layout()).memory.activations
    assert full - windowed == pytest.approx(model.layers * 8192 * 5 * model.heads * (8192 - 4096))


def test_selective_on_a_moe_mla_model_frees_the_recipes_modules(hw):
    """DeepSeek-V3 on fused attention: "selective" frees what Megatron-Bridge's recipes recompute (mla_up_proj,
    moe_act): per token and layer 2 x (128 x 192 + 128 x 192 + 128 x 128) = 131,072 bytes of decompressed Q, K, V,
    and the FP8 copy of the routed experts' activation, 8 x 2,048 x 58 / 61 bytes averaged over the 61 layers;
    held for 4,096 tokens x 16 micro-batches in flight on the busiest stage's 4 layers (61 over pp 16). The
    recomputation costs the up-projections and the activation, far less than a layer's forward."""
    model = preset("deepseek-v3")
    options = Options(seq_len=4096, global_batch=32, precision="fp8")
    layout = dict(pp=16, dp=2, ep=2, mbs=1)
    none = evaluate(model, hw, options, Layout(**layout, recompute="none"))
    selective = evaluate(model, hw, options, Layout(**layout, recompute="selective"))
    freed = 131_072 + 8 * 2048 * 58 / 61
    assert none.memory.activations - selective.memory.activations == pytest.approx(freed * 4096 * 16 * 4, rel=1e-9)
    assert none.step.recompute == 0 and 0 < selective.step.recompute < 0.1 * selective.step.compute


def test_selective_on_a_dense_fused_model_recomputes_core_attention(hw):
    """A dense model keeps Megatron's default selective module, core attention: it frees nothing on fused
    attention and costs the attention forward again."""
    model = preset("llama2-7b")
    options = Options(seq_len=4096, global_batch=1)
    none = evaluate(model, hw, options, Layout(recompute="none"))
    selective = evaluate(model, hw, options, Layout(recompute="selective"))
    assert selective.memory.activations == pytest.approx(none.memory.activations)
    assert selective.step.recompute > 0
