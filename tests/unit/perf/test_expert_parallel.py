"""Expert parallelism: the ep rule, the experts' memory, the token all-to-alls and the expert gradient reduction."""

import dataclasses

import numpy as np
import pytest

from clusterplan.errors import ConfigError
from clusterplan.perf.communication import collective_s
from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Constraints, Layout, layouts, violations
from clusterplan.perf.memory import BF16, GRAD_BYTES, OPTIMIZER_BYTES
from clusterplan.perf.presets import preset
from clusterplan.perf.search import search
from clusterplan.perf.stage import stage
from clusterplan.perf.step import evaluate

OPTIONS = Options(seq_len=4096, global_batch=256, grad_reduce="fp32")  # the states pinned below: FP32 gradients


def test_ep_is_a_whole_number_that_divides_dp():
    with pytest.raises(ConfigError, match=r"ep\(0\)"):
        Layout(dp=8, ep=0)
    with pytest.raises(ConfigError, match=r"dp \(tp x dp with whole experts\) not divisible by ep: dp\(4\), "
                                          r"ep\(8\), etp\(0\)"):
        Layout(dp=4, ep=8)
    with pytest.raises(ConfigError, match="ZeRO-3 with expert parallelism"):
        Layout(dp=8, ep=8, zero=3)
    assert Layout(dp=16, ep=8).num_gpus == 16          # ep ranks are data-parallel ranks, not more GPUs


def test_ep_needs_experts_it_divides():
    dense, mixtral = preset("llama2-7b"), preset("mixtral-8x7b")
    assert violations(Layout(dp=8, ep=2), dense, OPTIONS, 8)[0] == (
        "expert parallelism needs a mixture-of-experts model: ep(2)")
    assert violations(Layout(dp=16, ep=16), mixtral, OPTIONS, 16) == ("experts not divisible by ep: ep(16)",)
    assert violations(Layout(dp=16, ep=8), mixtral, OPTIONS, 16) == ()


def test_the_search_tries_ep_for_moe_models_only():
    dense, _ = layouts(preset("llama2-7b"), 64, 8, OPTIONS)
    assert set(dense.ep.tolist()) == {1}
    moe, _ = layouts(preset("mixtral-8x7b"), 64, 8, OPTIONS)
    assert set(moe.ep.tolist()) == {1, 2, 4, 8}
    split = moe.etp == 0                               # experts tensor-parallel like the rest: ep divides dp
    assert np.all(moe.dp[split] % moe.ep[split] == 0) and np.all(8 % moe.ep == 0)
    # whole experts (etp 1, tp > 1): the expert-parallel group folds over tp x dp
    whole = ~split
    assert whole.any() and np.all(moe.tp[whole] > 1)
    assert np.all((moe.tp[whole] * moe.dp[whole]) % moe.ep[whole] == 0)
    assert set(dense.etp.tolist()) == {0}


def test_whole_experts_fold_expert_parallelism_over_the_tensor_parallel_ranks(hw):
    """etp 1 at tp 2, ep 16, dp 8 (Megatron's parallel folding): every GPU holds 1/16 of the routed experts whole;
    with etp 0 (experts split tp ways) the same ep needs dp 16."""
    model = preset("qwen3-30b-a3b")
    with pytest.raises(ConfigError, match=r"dp \(tp x dp with whole experts\) not divisible by ep: dp\(8\), "
                                          r"ep\(16\), etp\(0\)"):
        Layout(tp=2, dp=8, ep=16)
    assert violations(Layout(tp=2, dp=8, ep=16, etp=1), model, OPTIONS, 16) == ()
    with pytest.raises(ConfigError, match=r"etp is 0 \(tp\) or 1, and 1 only with tp > 1"):
        Layout(tp=1, dp=8, ep=8, etp=1)
    folded = evaluate(model, hw, OPTIONS, Layout(tp=2, dp=8, ep=16, etp=1, zero=1))
    split = evaluate(model, hw, OPTIONS, Layout(tp=2, dp=8, ep=8, zero=1))
    # the same share of the routed experts per GPU (1/16: whole experts over 16, or halves over 8)
    assert folded.memory.weights == pytest.approx(split.memory.weights, rel=1e-9)
    # whole experts drop the MoE layers' MLP tensor-parallel collectives: half of them
    exposed = dataclasses.replace(OPTIONS, tp_overlap=False)
    folded, split = (evaluate(model, hw, exposed, lay).step.tp_comm for lay in (
        Layout(tp=2, dp=8, ep=16, etp=1, zero=1), Layout(tp=2, dp=8, ep=8, zero=1)))
    assert folded == pytest.approx(split / 2)


def test_experts_states_divide_by_ep_and_the_expert_data_parallel_ranks(hw):
    model = preset("mixtral-8x7b")
    whole = evaluate(model, hw, OPTIONS, Layout(tp=2, pp=1, dp=8, zero=1)).memory
    split = evaluate(model, hw, OPTIONS, Layout(tp=2, pp=1, dp=8, ep=4, zero=1)).memory
    experts = model.moe_layers * model.experts * model.expert_params / 2          # per GPU without ep (tp 2)
    assert whole.weights - split.weights == pytest.approx(experts * (1 - 1 / 4) * BF16, rel=1e-9)
    assert whole.gradients - split.gradients == pytest.approx(experts * (1 - 1 / 4) * GRAD_BYTES, rel=1e-9)
    # ZeRO-1: dense states over the 8 dp ranks, the experts' over the 8 / 4 = 2 expert-data-parallel ranks
    dense = stage(model, OPTIONS, 8, Layout(tp=2, dp=8)).params - experts
    assert split.optimizer == pytest.approx((dense / 8 + experts / 4 / 2) * OPTIMIZER_BYTES, rel=1e-9)


def test_four_all_to_alls_per_moe_layer_and_micro_batch(hw):
    model = preset("mixtral-8x7b")
    layout = Layout(tp=2, pp=1, dp=8, ep=4, zero=1)
    step = evaluate(model, hw, OPTIONS, layout).step
    busiest = stage(model, OPTIONS, 8, layout)
    message = busiest.tokens * model.hidden * model.experts_per_token * BF16 / 2
    one = collective_s(hw.system, "alltoall", message, 4, 4)
    assert step.ep_comm == pytest.approx(busiest.micro_batches * model.layers * 4 * one, rel=1e-9)
    assert "ep_comm" in step.parts()
    plain = evaluate(model, hw, OPTIONS, Layout(tp=2, pp=1, dp=8, zero=1)).step
    assert plain.ep_comm == 0.0 and "ep_comm" not in plain.parts()


def test_an_ep_group_past_the_node_pays_the_fabric(hw):
    """Eight ranks in a node exchange over NVLink; sixteen spread over two nodes cross the fabric."""
    inside = collective_s(hw.system, "alltoall", 2**28, 8, 8)
    across = collective_s(hw.system, "alltoall", 2**28, 16, 8)
    assert across > 2 * inside


def test_expert_gradients_reduce_over_the_expert_data_parallel_ranks(hw):
    """With ep = dp each GPU holds its experts alone: only the dense gradients are reduced."""
    model = preset("mixtral-8x7b")
    options = dataclasses.replace(OPTIONS, overlap_grad_reduce=False)
    whole = evaluate(model, hw, options, Layout(tp=1, pp=4, dp=8, zero=0)).step.dp_comm
    split = evaluate(model, hw, options, Layout(tp=1, pp=4, dp=8, ep=8, zero=0)).step.dp_comm
    assert 0 < split < whole / 3


def test_one_moe_layout_prices_as_the_grid_does(hw):
    model = preset("mixtral-8x7b")
    grid, _ = layouts(model, 128, 8, OPTIONS, Constraints(mbs=1))
    many = evaluate(model, hw, OPTIONS, grid)
    for index in np.flatnonzero(grid.ep > 1)[::97]:
        one = evaluate(model, hw, OPTIONS, grid.row(int(index)))
        assert dataclasses.asdict(one.step) == dataclasses.asdict(many.row(int(index)).step)
        assert dataclasses.asdict(one.memory) == dataclasses.asdict(many.row(int(index)).memory)


def test_deepseek_v3_on_1024_h100_is_fastest_with_expert_parallelism(hw):
    model = preset("deepseek-v3")
    found = search(model, hw, Options(seq_len=4096, global_batch=4096), 1024,
                   Constraints(mbs=1, cp=1, recompute="none"), top=1)
    assert found.best and found.best[0].layout.ep > 1
