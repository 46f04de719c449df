"""Expert all-to-all overlap (Megatron-Core's overlap_moe_expert_parallel_comm): what shows, what it costs."""

from dataclasses import replace

import pytest

from clusterplan.perf.compute import Compute
from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Layout
from clusterplan.perf.presets import PRESETS
from clusterplan.perf.step import OVERLAP_COST, evaluate, expert_all_to_all_exposed

WORK = Compute(layer_gemm_s=0.001, forward_s=0.1, backward_s=0.2, recompute_s=0.0)


def test_without_overlap_every_all_to_all_shows():
    """Off (Megatron's default): 0.5 s of all-to-all shows whole, none hidden."""
    assert expert_all_to_all_exposed(Options(seq_len=4096, global_batch=64), WORK, 0.5) == (0.5, 0.0)


def test_overlap_hides_up_to_a_forward_and_a_backward():
    """On: 0.5 s beside 0.1 + 0.2 s of compute shows 0.2 s and hides 0.3; 0.25 s hides whole."""
    options = Options(seq_len=4096, global_batch=64, moe_overlap=True)
    assert expert_all_to_all_exposed(options, WORK, 0.5) == pytest.approx((0.2, 0.3))
    assert expert_all_to_all_exposed(options, WORK, 0.25) == pytest.approx((0.0, 0.25))


def test_overlap_speeds_an_expert_parallel_layout_and_charges_contention(hw):
    """Qwen3-30B-A3B at ep 8 on the reference, token dropping (no router sync): with overlap the step sheds its
    exposed all-to-all less the 0.2 s of compute lost per second hidden; a dense model is unchanged."""
    off = Options(seq_len=4096, global_batch=256, precision="bf16", overlap_grad_reduce=False,  # no dp overlap term
                  moe_dropless=False)
    layout = Layout(tp=1, pp=1, dp=16, cp=1, mbs=1, virtual_stages=1, recompute="none", zero=1, ep=8)
    model = PRESETS["qwen3-30b-a3b"]
    before = evaluate(model, hw, off, layout)
    after = evaluate(model, hw, replace(off, moe_overlap=True), layout)
    assert after.step.total < before.step.total
    assert after.step.ep_comm < before.step.ep_comm
    assert after.step.overlap - before.step.overlap == pytest.approx(
        OVERLAP_COST * (before.step.ep_comm - after.step.ep_comm), rel=1e-6)
    dense = Layout(tp=1, pp=1, dp=16, cp=1, mbs=1, virtual_stages=1, recompute="none", zero=1)
    llama = PRESETS["llama3-8b"]
    assert (evaluate(llama, hw, replace(off, moe_overlap=True), dense).step.total
            == evaluate(llama, hw, off, dense).step.total)


def test_imbalance_below_one_is_refused():
    """expert_imbalance < 1 names itself."""
    with pytest.raises(ValueError, match="expert_imbalance"):
        Options(seq_len=4096, global_batch=64, expert_imbalance=0.9)


def test_deepep_sends_deepseek_v3_tokens_once_per_node_of_its_four_groups():
    """DeepSeek-V3 over 8 nodes (one routing group each, 4 groups a token): 4 node copies for its 8 experts, half
    the plain all-to-all's; uniform top-8 over 8 nodes without groups reaches 8 (1 - (7/8)^8) = 5.25; one node: 1."""
    from clusterplan.perf.communication import network_copies
    model = PRESETS["deepseek-v3"]
    assert network_copies(model, 8) == pytest.approx(4 / 8)
    ungrouped = replace(model, expert_groups=0, expert_groups_per_token=0)
    assert network_copies(ungrouped, 8) == pytest.approx(8 * (1 - (7 / 8) ** 8) / 8)
    assert network_copies(model, 1) == 1.0


def test_deepep_shortens_a_cross_node_expert_exchange(hw):
    """DeepSeek-V3-shaped experts at ep 32 across 4 nodes of the reference: deepep's all-to-all takes less time."""
    model = PRESETS["deepseek-v3"]
    layout = Layout(tp=1, pp=16, dp=8, cp=1, mbs=1, virtual_stages=1, recompute="full", zero=1, ep=8)
    base = Options(seq_len=4096, global_batch=256)
    plain = evaluate(model, hw, base, layout).step.ep_comm
    deduplicated = evaluate(model, hw, replace(base, moe_dispatcher="deepep"), layout).step.ep_comm
    assert 0 < deduplicated <= plain


def test_token_dropping_removes_the_dropless_routers_wait_and_nothing_else(hw):
    """Token dropping at capacity (static shapes) has no router sync: the GPU no longer waits for the forward's
    routed launches, so the host part shrinks by that wait (or to the launch bound) and the GPU's work is
    unchanged; a dense model is the same either way."""
    on = Options(seq_len=4096, global_batch=256, precision="bf16")
    layout = Layout(tp=1, pp=1, dp=16, cp=1, mbs=2, virtual_stages=1, recompute="none", zero=1, ep=8)
    model = PRESETS["qwen3-30b-a3b"]
    dropless = evaluate(model, hw, on, layout)
    dropping = evaluate(model, hw, replace(on, moe_dropless=False), layout)
    assert dropping.step.host < dropless.step.host
    assert dropping.step.compute == pytest.approx(dropless.step.compute)
    assert dropping.step.ep_comm == pytest.approx(dropless.step.ep_comm)
    dense = Layout(tp=1, pp=1, dp=16, cp=1, mbs=1, virtual_stages=1, recompute="none", zero=1)
    assert evaluate(PRESETS["llama3-8b"], hw, replace(on, moe_dropless=False), dense).step.total == pytest.approx(
        evaluate(PRESETS["llama3-8b"], hw, on, dense).step.total)


def test_a_dropless_router_in_the_merged_schedule_waits_for_both_routed_blocks(hw):
    """Regression (Qwen3-30B-A3B on 16 H100: 5,113 tokens/s per GPU with moe_a2a_overlap, 9,058 without, NeMo
    26.02 / 26.02.01): with a dropless router the merged schedule's sync makes the GPU wait for every launch of
    both routed blocks, so on this launch-bound layout (16 local experts) the host's wait outgrows the hidden
    all-to-all and the step is longer; the wait is exactly the routed blocks' launches, fwd and bwd."""
    off = Options(seq_len=4096, global_batch=256, precision="bf16", overlap_grad_reduce=False)
    layout = Layout(tp=1, pp=1, dp=16, cp=1, mbs=1, virtual_stages=1, recompute="none", zero=1, ep=8)
    model = PRESETS["qwen3-30b-a3b"]
    plain = evaluate(model, hw, off, layout)
    merged = evaluate(model, hw, replace(off, moe_overlap=True), layout)
    assert merged.step.ep_comm < plain.step.ep_comm and merged.step.host > plain.step.host
    assert merged.step.total > plain.step.total
