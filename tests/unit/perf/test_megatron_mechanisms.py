"""How Megatron-LM and Transformer Engine run a step, as the model prices it: the interleaved pipeline's gradient
reductions in the cool-down, FP8's casts and kept inputs, and the ZeRO shard over data- and context-parallel ranks."""

from dataclasses import replace

import pytest

from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Layout
from clusterplan.perf.presets import preset
from clusterplan.perf.step import Slot, _pipelined_reduction, evaluate

SLOT = Slot(beside_s=0.0, exposed_s=0.0, share_cp=0.0, overlap_s=0.0, gpu_s=0.3, host_s=0.0)


def test_without_interleaving_the_whole_reduction_waits_for_the_last_backward():
    """v = 1: every chunk's gradients are final only at the end, so all of t_dp is left."""
    assert _pipelined_reduction(2.0, Layout(pp=4, dp=8), 32.0, SLOT) == 2.0


@pytest.mark.parametrize("t_dp", [0.01, 0.5, 2.0, 50.0])
def test_interleaving_leaves_between_one_chunks_share_and_all_of_it(t_dp):
    """v chunks: the cool-down absorbs all but the last chunk's 1 / v where a piece fits in a chunk's turn
    (pp x a third of a slot / v), and less of it as the traffic grows."""
    layout = Layout(pp=4, dp=8, virtual_stages=4)
    left = _pipelined_reduction(t_dp, layout, 32.0, SLOT)
    assert t_dp / 4 <= left <= t_dp
    turn = 4 * SLOT.gpu_s / (3 * 4)
    assert left == pytest.approx(max(t_dp / 4, t_dp - 3 * turn))


def test_fewer_micro_batches_than_stages_have_no_cool_down_to_hide_in():
    assert _pipelined_reduction(2.0, Layout(pp=4, dp=8, virtual_stages=4), 2.0, SLOT) == 2.0


def test_interleaving_hides_more_of_a_large_models_reduction(hw):
    """Llama 3 70B on 128 GPUs at pp 4: the reduction that shows with v = 4 is less than with v = 1."""
    model = preset("llama3-70b")
    options = Options(seq_len=8192, global_batch=256)
    plain = evaluate(model, hw, options, Layout(tp=8, pp=4, dp=4, zero=1, recompute="full"))
    interleaved = evaluate(model, hw, options, Layout(tp=8, pp=4, dp=4, virtual_stages=4, zero=1, recompute="full"))
    assert interleaved.step.dp_comm < plain.step.dp_comm


def test_fp8_weights_cast_once_a_step_are_faster_than_recast_each_micro_batch(hw):
    """Megatron's first-micro-batch hint lets Transformer Engine keep the FP8 weight; without it each micro-batch
    recasts every weight."""
    model = preset("llama3-8b")
    layout = Layout(dp=8, zero=1)
    cached = evaluate(model, hw, Options(seq_len=8192, global_batch=128, precision="fp8"), layout)
    recast = evaluate(model, hw, Options(seq_len=8192, global_batch=128, precision="fp8", fp8_weight_cache=False),
                      layout)
    assert cached.step.total < recast.step.total
    one = Options(seq_len=8192, global_batch=8, precision="fp8")   # one micro-batch: nothing to amortize
    assert evaluate(model, hw, one, layout).step.total == pytest.approx(
        evaluate(model, hw, replace(one, fp8_weight_cache=False), layout).step.total)


def test_fp8_keeps_its_gemm_inputs_in_one_byte(hw):
    """The QKV, output, and both MLP GEMMs' inputs are kept as FP8 copies: FP8 activations are smaller, by
    exactly those bytes (Korthikanti's 2h + o + 2h + f per token and layer, halved), with SP on tp 8."""
    model = preset("llama3-8b")
    layout = Layout(tp=8, mbs=1)
    bf16 = evaluate(model, hw, Options(seq_len=4096, global_batch=1), layout).memory.activations
    fp8 = evaluate(model, hw, Options(seq_len=4096, global_batch=1, precision="fp8"), layout).memory.activations
    saved = (2 * model.hidden + model.o_dim + model.active_ffn) / 8 * 4096 * model.layers
    assert bf16 - fp8 == pytest.approx(saved)


def test_context_parallel_ranks_share_the_zero_shard(hw):
    """Megatron shards the distributed optimizer over dp x cp: cp 2 halves the optimizer bytes of dp 4, and ZeRO
    runs with dp 1 when cp shards it."""
    model = preset("llama3-8b")
    options = Options(seq_len=8192, global_batch=8)
    cp1 = evaluate(model, hw, options, Layout(dp=4, zero=1)).memory
    cp2 = evaluate(model, hw, options, Layout(dp=4, cp=2, zero=1)).memory
    assert cp2.optimizer == pytest.approx(cp1.optimizer / 2)
    assert evaluate(model, hw, options, Layout(cp=2, zero=1)).memory.optimizer == pytest.approx(
        12 * model.params / 2)
