import dataclasses

import numpy as np
import pytest

from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Constraints, Layout, layouts
from clusterplan.perf.model import Transformer
from clusterplan.perf.compute import SOFTMAX_FALLBACK_BYTES, SOFTMAX_FALLBACK_KERNELS, compute
from clusterplan.perf.experts import HOST_PASS_S, LAUNCH_S
from clusterplan.perf.presets import preset
from clusterplan.perf.stage import stage
from clusterplan.perf.step import evaluate


def test_pipeline_bubble_is_pp_minus_one_over_micro_batches(hw):
    """The bubble is (pp - 1) micro-batches of compute, and v times smaller with v virtual stages."""
    model = preset("gpt-39b")
    opts = Options(seq_len=2048, global_batch=64)
    plain = evaluate(model, hw, opts, Layout(tp=8, pp=4)).step
    assert plain.pp_bubble == pytest.approx(3 * plain.compute / 64, rel=1e-9)
    interleaved = evaluate(model, hw, opts, Layout(tp=8, pp=4, virtual_stages=4)).step
    assert interleaved.pp_bubble == pytest.approx(plain.pp_bubble / 4)


def test_full_recompute_adds_one_forward(hw):
    """Full recomputation costs about a third of the compute, and counts in hardware FLOPs only."""
    model = preset("llama2-13b")
    opts = Options(seq_len=4096, global_batch=8)
    base, full = (evaluate(model, hw, opts, Layout(tp=8, recompute=r)) for r in ("none", "full"))
    assert full.step.recompute == pytest.approx(base.step.compute / 3, rel=0.1)
    assert full.hardware_tflops_per_gpu > full.tflops_per_gpu


def test_more_nvlink_shortens_tp_communication(hw):
    """Doubling NVLink bandwidth shortens the exposed tensor-parallel traffic."""
    model = preset("llama2-70b")
    opts = Options(seq_len=4096, global_batch=16, tp_overlap=False)
    fast = dataclasses.replace(hw, system=dataclasses.replace(hw.system, intra_bw_Bps=hw.system.intra_bw_Bps * 2))
    layout = Layout(tp=8, dp=16, zero=1)
    slow_tp = evaluate(model, hw, opts, layout).step.tp_comm
    fast_tp = evaluate(model, fast, opts, layout).step.tp_comm
    assert 0 < fast_tp < slow_tp


def test_a_small_model_waits_for_the_host(hw):
    """A micro-batch takes at least the host's launch time: HOST_PASS_S per layer and pass."""
    model = preset("gpt-1.7b")
    step = evaluate(model, hw, Options(seq_len=128, global_batch=8), Layout(dp=8)).step
    assert step.host > 0
    assert step.total >= model.layers * 2 * HOST_PASS_S


def test_attention_kernels_rank_by_generation(hw):
    """The GPU's best fused kernel beats FlashAttention-2, which beats FlashAttention 1."""
    model = preset("llama2-7b")
    steps = [evaluate(model, hw, Options(seq_len=16384, global_batch=8, attention=kernel),
                      Layout(dp=8, recompute="full", zero=3)).step.total for kernel in ("flash", "flash2", "flash1")]
    assert steps[0] < steps[1] < steps[2]


def test_tp_overlap_hides_tp_communication(hw):
    """Overlapping TP collectives with their GEMMs shortens both the TP part and the step."""
    model = preset("llama2-70b")
    layout = Layout(tp=8, dp=16, zero=1)
    exposed = evaluate(model, hw, Options(seq_len=4096, global_batch=16, tp_overlap=False), layout).step
    hidden = evaluate(model, hw, Options(seq_len=4096, global_batch=16), layout).step
    assert hidden.tp_comm < exposed.tp_comm
    assert hidden.total < exposed.total


def test_uneven_stages_put_the_extra_layers_on_the_busiest_stage(hw):
    """BLOOM: 70 layers on 12 stages; the busiest holds 6, as if the model had 72."""
    def bloom(layers):
        return Transformer(name="b", layers=layers, hidden=14336, heads=112, ffn_hidden=4 * 14336, vocab=250880,
                           seq_len=2048)

    opts = Options(seq_len=2048, global_batch=2048)
    fixed = Constraints(tp=4, pp=12, cp=1, mbs=2, virtual_stages=1, recompute="full", zero=1)
    grid, _ = layouts(bloom(70), 384, 8, opts, fixed)
    assert len(grid) == 1
    uneven, even = (evaluate(bloom(n), hw, opts, grid).step.total[0] for n in (70, 72))
    assert uneven == pytest.approx(even, rel=0.01)


def test_interleaving_multiplies_pipeline_sends(hw):
    """Each of v model chunks sends its activations on: v times the sends per micro-batch slot."""
    model = preset("llama2-70b")
    opts = Options(seq_len=4096, global_batch=64)
    p2p = [evaluate(model, hw, opts, Layout(tp=8, pp=4, dp=4, virtual_stages=v, zero=1)).step.pp_p2p for v in (1, 4)]
    slots = [64 / 4 + 3 / v for v in (1, 4)]
    assert p2p[1] / slots[1] == pytest.approx(4 * p2p[0] / slots[0])


def test_parts_add_up_to_the_step(hw):
    """The named parts of a step add up to its total."""
    model = preset("llama2-70b")
    step = evaluate(model, hw, Options(seq_len=4096, global_batch=256), Layout(tp=8, pp=4, dp=4, zero=1)).step
    assert sum(step.parts().values()) == pytest.approx(step.total, rel=1e-12)
    assert "total" not in step.parts()


@pytest.mark.parametrize("name, options, gpus", [
    ("llama2-70b", Options(seq_len=4096, global_batch=1024), 1024),
    ("llama2-13b", Options(seq_len=4096, global_batch=512, precision="fp8", sharding="hybrid"), 128),
    ("gpt-18b", Options(seq_len=2048, global_batch=256, attention="unfused", sequence_parallel=False,
                        overlap_grad_reduce=False, tp_overlap=False), 128),
])
def test_one_layout_prices_as_the_grid_does(hw, name, options, gpus):
    """Evaluating one Layout (floats) gives, to the bit, its row of the grid's evaluation (arrays)."""
    model = preset(name)
    grid, _ = layouts(model, gpus, 8, options)
    many = evaluate(model, hw, options, grid)
    for index in np.linspace(0, len(grid) - 1, 40).astype(int):
        one = evaluate(model, hw, options, grid.row(int(index)))
        assert _fields(one) == _fields(many.row(int(index)))
        assert isinstance(one.step.total, float) and isinstance(one.fits, bool)


def _fields(prediction):
    return (dataclasses.asdict(prediction.step), dataclasses.asdict(prediction.memory), prediction.tokens_per_s,
            prediction.tokens_per_s_per_gpu, prediction.tflops_per_gpu, prediction.hardware_tflops_per_gpu,
            prediction.mfu, prediction.fits, prediction.micro_batches, prediction.layout)


def test_unfused_softmax_falls_back_to_pytorch_when_micro_batch_times_heads_per_gpu_is_not_a_multiple_of_4(
        hw, monkeypatch):
    """Megatron's fused softmax needs mbs x heads / tp divisible by 4: 16 heads at tp 8 with mbs 1 fall back to
    FP32 PyTorch ops (37 bytes a score more forward, 34 backward, 4 more kernels each pass); mbs 2 does not."""
    model = Transformer(name="h1024", layers=4, hidden=1024, heads=16, ffn_hidden=4096, vocab=50257, seq_len=1024)
    opts = Options(seq_len=1024, global_batch=8, attention="unfused", sequence_parallel=False, tp_overlap=False)

    def work(mbs, options=opts):
        layout = Layout(tp=8, mbs=mbs, recompute="none")
        return compute(model, hw, options, stage(model, options, hw.system.gpus_per_node, layout), "none", 0.0)

    one = work(1)
    assert one.launch_s == pytest.approx(4 * SOFTMAX_FALLBACK_KERNELS * LAUNCH_S * 2)
    assert work(2).launch_s == 0.0 and work(1, dataclasses.replace(opts, attention="flash")).launch_s == 0.0
    scores = 16 / 8 * 1024 * 1024                       # heads per GPU x keys x tokens of one sequence
    extra = sum(SOFTMAX_FALLBACK_BYTES) * scores / (hw.hbm_bw_Bps * 0.8)
    monkeypatch.setattr("clusterplan.perf.compute.SOFTMAX_FALLBACK_BYTES", (0, 0))
    fused_rate = work(1)
    assert (one.forward_s + one.backward_s) - (fused_rate.forward_s + fused_rate.backward_s) == pytest.approx(
        4 * extra)
