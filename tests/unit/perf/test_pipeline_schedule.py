"""Pipeline schedules: 1F1B (interleaved with virtual stages) and DeepSeek-V3's DualPipe, by hand."""

from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clusterplan.errors import ConfigError
from clusterplan.jobs import Workload
from clusterplan.perf.compute import Compute, compute
from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Layout, violations
from clusterplan.perf.memory import activations, memory
from clusterplan.perf.presets import PRESETS
from clusterplan.perf.stage import stage
from clusterplan.perf.step import evaluate, pipeline_bubble_slots

# F = 1, B = 2 (of which W = 1, the weight gradients)
WORK = Compute(layer_gemm_s=0.01, forward_s=1.0, backward_s=2.0, recompute_s=0.0, weight_grad_s=1.0)
ONE_F_ONE_B = Options(seq_len=4096, global_batch=256)
DUALPIPE = replace(ONE_F_ONE_B, pipeline_schedule="dualpipe")


def _layout(pp: int, virtual_stages: int = 1, dp: int = 8, mbs: int = 1) -> Layout:
    return Layout(tp=1, pp=pp, dp=dp, cp=1, mbs=mbs, virtual_stages=virtual_stages, recompute="none", zero=1)


def test_one_f_one_b_bubble_is_pp_less_one_over_v_slots():
    """1F1B: pp 16 idles 15 slots of F + B; two virtual stages halve it to 7.5."""
    assert pipeline_bubble_slots(ONE_F_ONE_B, _layout(16), WORK) == 15
    assert pipeline_bubble_slots(ONE_F_ONE_B, _layout(16, 2), WORK) == 7.5


def test_dualpipe_bubble_is_deepseek_table_2():
    """DualPipe, F 1, B 2, W 1, pp 16: (16/2 - 1)(F&B + B - 3W) = 7 x (3 + 2 - 3) = 14 s, 14 / 3 slots of
    F + B; pp 2 has none (2/2 - 1 = 0)."""
    slots = pipeline_bubble_slots(DUALPIPE, _layout(16), WORK)
    assert slots == pytest.approx(14 / 3)
    assert slots * (WORK.forward_s + WORK.backward_s) == pytest.approx(14.0)
    assert pipeline_bubble_slots(DUALPIPE, _layout(2), WORK) == 0


def test_dualpipe_rules_need_even_pp_even_micro_batches_and_no_virtual_stages():
    """pp 3, virtual stages 2 and 256 / (8 x 32) = 1 micro-batch each break a DualPipe rule; 1F1B keeps them."""
    model = PRESETS["llama3-8b"]
    assert any("DualPipe needs an even pp" in v for v in violations(_layout(3, dp=8), model, DUALPIPE, 24))
    assert any("DualPipe runs no virtual stages" in v for v in violations(_layout(4, 2), model, DUALPIPE, 32))
    odd = violations(_layout(4, mbs=32), model, DUALPIPE, 32)
    assert any("DualPipe needs an even number of micro-batches" in v for v in odd)
    assert not any("DualPipe" in v for v in violations(_layout(4, 2), model, ONE_F_ONE_B, 32))
    assert not violations(_layout(4), model, DUALPIPE, 32)


def test_dualpipe_needs_two_micro_batches_per_stage():
    """pp 8 at 32 / (16 x 1) = 2 micro-batches: too few for DualPipe's steady phase (the reference code asserts
    2 x pp = 16); 16 micro-batches (dp 2) are enough. Regression: a pp 8, two-micro-batch step was priced at 0.78 s
    where each micro-batch alone crosses 8 stages both ways."""
    model = PRESETS["llama3-8b"]
    assert any("at least 2 x pp" in v for v in violations(_layout(8, dp=16), model, replace(DUALPIPE, global_batch=32),
                                                          128))
    assert not any("DualPipe" in v for v in violations(_layout(8, dp=2), model, replace(DUALPIPE, global_batch=32),
                                                       16))


def test_dualpipe_hides_sends_only_in_the_compute_the_all_to_alls_left(hw):
    """F + B = 3 s of compute hides 3 s of all-to-alls under the merged schedule; 30 s of pipeline sends beside them
    find no compute left and all show (regression: DualPipe hid any amount of send traffic)."""
    from clusterplan.perf.communication import Communication
    from clusterplan.perf.step import _slot
    model = PRESETS["llama3-8b"]
    layout = _layout(4)
    busiest = stage(model, DUALPIPE, 8, layout)
    traffic = Communication(tp_s=0.0, tp_hidden_s=0.0, p2p_s=30.0, dp_s=0.0, cp_s=0.0, fsdp_s=0.0, ep_s=3.0)
    slot = _slot(DUALPIPE, busiest, WORK, traffic, 0.0)
    assert slot.p2p_exposed_s == pytest.approx(30.0) and slot.ep_exposed_s == 0
    half = _slot(DUALPIPE, busiest, WORK, replace(traffic, ep_s=1.0, p2p_s=5.0), 0.0)
    assert half.p2p_exposed_s == pytest.approx(3.0)    # 2 s of compute left after 1 s of all-to-alls


def test_dualpipe_holds_the_logits_on_its_first_rank(hw):
    """Rank 0 holds stage 0 and stage pp - 1: the output layer's FP32 logits count there (4096 x 128,256 x 4 bytes
    a micro-batch); 1F1B's busiest (first) stage holds none."""
    model = PRESETS["llama3-8b"]
    layout = _layout(4)
    one = activations(model, ONE_F_ONE_B, stage(model, ONE_F_ONE_B, 8, layout), layout)
    two = activations(model, DUALPIPE, stage(model, DUALPIPE, 8, layout), layout)
    assert one.logits == 0 and two.logits == pytest.approx(4096 * model.vocab * 4)


def test_dualpipe_holds_two_chunks_of_parameters():
    """Each rank holds stage i and stage pp - 1 - i: twice 1F1B's parameters, and twice the expert ones."""
    model = PRESETS["qwen3-30b-a3b"]
    layout = replace(_layout(4), ep=8)
    one, two = stage(model, ONE_F_ONE_B, 8, layout), stage(model, DUALPIPE, 8, layout)
    assert two.params == pytest.approx(2 * one.params)
    assert two.expert_params == pytest.approx(2 * one.expert_params)
    assert two.layers == one.layers


def test_dualpipe_keeps_pp_plus_one_micro_batches_of_activations():
    """pp 4 with 32 micro-batches: 1F1B's first stage holds 4 micro-batches, DualPipe 5 (Table 2's PP + 1)."""
    model = PRESETS["llama3-8b"]
    layout = _layout(4)
    one = activations(model, ONE_F_ONE_B, stage(model, ONE_F_ONE_B, 8, layout), layout)
    two = activations(model, DUALPIPE, stage(model, DUALPIPE, 8, layout), layout)
    assert one.tokens_held == 4 * 4096
    assert two.tokens_held == 5 * 4096


def test_weight_gradients_are_half_the_backward_gemms_and_the_output_layers(hw):
    """BF16: a linear layer's backward is two GEMMs the size of its forward, one of them the weight gradient, so
    W is the layers' forward GEMMs plus the output layer's, a third of the logits' three GEMMs."""
    model = PRESETS["llama3-8b"]
    layout = _layout(4)
    busiest = stage(model, ONE_F_ONE_B, 8, layout)
    work = compute(model, hw, ONE_F_ONE_B, busiest, "none", 0.0)
    no_logits = compute(replace(model, vocab=1), hw, ONE_F_ONE_B, busiest, "none", 0.0)
    assert no_logits.weight_grad_s == pytest.approx(busiest.layers * no_logits.layer_gemm_s, rel=1e-3)
    assert 0 < work.weight_grad_s < work.backward_s / 2


def test_dualpipe_hides_pipeline_sends_and_default_is_unchanged(hw):
    """Llama 3 8B at pp 4: DualPipe shows no pp_p2p and a shorter bubble; "1f1b" is the default, to the bit."""
    model = PRESETS["llama3-8b"]
    layout = _layout(4, dp=32)
    default = evaluate(model, hw, ONE_F_ONE_B, layout)
    explicit = evaluate(model, hw, replace(ONE_F_ONE_B, pipeline_schedule="1f1b"), layout)
    dual = evaluate(model, hw, DUALPIPE, layout)
    assert explicit.step.total == default.step.total
    assert default.step.pp_p2p > 0 and dual.step.pp_p2p == 0
    assert dual.step.pp_bubble < default.step.pp_bubble
    held, _ = memory(model, DUALPIPE, hw.usable_bytes, stage(model, DUALPIPE, 8, layout), layout)
    assert held.weights == pytest.approx(2 * default.memory.weights)


def test_workload_refuses_odd_pp_and_virtual_stages_naming_the_key():
    """workload.pipeline_schedule = dualpipe with pp 3 names pp; with virtual stages 2 names virtual_stages."""
    with pytest.raises(ConfigError) as odd:
        Workload(model="llama3-8b", pipeline_schedule="dualpipe", pp=3)
    assert odd.value.key == "pp"
    with pytest.raises(ConfigError) as chunks:
        Workload(model="llama3-8b", pipeline_schedule="dualpipe", pp=4, virtual_stages=2)
    assert chunks.value.key == "virtual_stages"
    with pytest.raises(ConfigError, match="pipeline_schedule"):
        Workload(model="llama3-8b", pipeline_schedule="zero-bubble")


@given(half_pp=st.integers(1, 64), forward=st.floats(1e-4, 10.0), backward=st.floats(1e-4, 20.0),
       weight_share=st.floats(0.0, 1.0))
def test_dualpipe_never_idles_longer_than_one_f_one_b(half_pp, forward, backward, weight_share):
    """For any even pp and W at most half of B (one of two gradient GEMMs): (pp/2 - 1)(F + 2B - 3W) <= (pp - 1)(F + B),
    and never negative."""
    work = Compute(layer_gemm_s=0.0, forward_s=forward, backward_s=backward, recompute_s=0.0,
                   weight_grad_s=weight_share * backward / 2)
    dual = pipeline_bubble_slots(DUALPIPE, _layout(2 * half_pp), work)
    assert -1e-9 <= dual <= pipeline_bubble_slots(ONE_F_ONE_B, _layout(2 * half_pp), work) + 1e-9
