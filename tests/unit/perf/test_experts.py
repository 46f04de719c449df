"""Routed experts: rows per expert, grouped GEMMs by local expert, and their kernel launches."""

import pytest

from clusterplan.names import CUDA_GRAPHS
from clusterplan.perf.experts import (
    GRAPH_SCOPES,
    LAUNCH_S,
    ROUTED_BLOCK_KERNELS,
    Host,
    captures,
    layer_pass_s,
    routed_experts,
)
from clusterplan.perf.presets import PRESETS


def shapes():
    """A gemm stand-in that records every (rows, inner, cols) it prices, at 1 s each."""
    calls = []

    def gemm(rows, inner, cols):
        calls.append((rows, inner, cols))
        return 1.0

    return calls, gemm


def test_deepseek_v3_experts_are_1024_rows_of_a_4096_token_micro_batch_at_ep_8():
    """256 experts, top-8, ep 8: 32 local experts of 4,096 x 8 / 32 = 1,024 rows, hidden 7168, FFN 2048."""
    model = PRESETS["deepseek-v3"]
    calls, gemm = shapes()
    routed = routed_experts(model, "bf16", 4096, 1.0, 1.0, 8, 4, 0.0, gemm)
    assert calls == [(1024.0, 7168, 4096.0), (1024.0, 2048.0, 7168)]
    share = model.moe_layers / model.layers
    assert routed.layer_gemm_s == pytest.approx(share * 32 * 2)
    # forward: the block's kernels and 2 GEMMs per local expert; backward: twice the block and 4 per expert
    assert routed.layer_kernels == pytest.approx(share * (ROUTED_BLOCK_KERNELS + 64))
    launches = 4 * share * LAUNCH_S
    assert routed.wait_s == pytest.approx(launches * (ROUTED_BLOCK_KERNELS + 64))
    assert routed.launch_s == pytest.approx(launches * (ROUTED_BLOCK_KERNELS + 64 + 2 * ROUTED_BLOCK_KERNELS + 128))


def test_fp8_casts_each_experts_inputs_and_recomputation_launches_the_forward_again():
    """FP8 doubles the kernels per expert; a recomputed forward launches (and waits for) the routed block again."""
    model = PRESETS["qwen3-30b-a3b"]
    _, gemm = shapes()
    bf16 = routed_experts(model, "bf16", 8192, 1.0, 1.0, 8, 24, 0.0, gemm)
    fp8 = routed_experts(model, "fp8", 8192, 1.0, 1.0, 8, 24, 0.0, gemm)
    full = routed_experts(model, "fp8", 8192, 1.0, 1.0, 8, 24, 1.0, gemm)
    assert fp8.layer_kernels - ROUTED_BLOCK_KERNELS == 2 * (bf16.layer_kernels - ROUTED_BLOCK_KERNELS)
    assert full.wait_s == pytest.approx(2 * fp8.wait_s)
    assert full.launch_s - fp8.launch_s == pytest.approx(fp8.wait_s)


def test_more_expert_parallelism_means_fewer_larger_expert_gemms():
    """Doubling ep halves the local experts and doubles each one's rows: the same FLOPs, fewer launches."""
    model = PRESETS["qwen3-30b-a3b"]
    calls, gemm = shapes()
    four = routed_experts(model, "bf16", 4096, 1.0, 1.0, 4, 48, 0.0, gemm)
    eight = routed_experts(model, "bf16", 4096, 1.0, 1.0, 8, 48, 0.0, gemm)
    assert calls[0][0] * 2 == calls[2][0] == 4096 * 8 * 8 / 128
    assert eight.launch_s < four.launch_s and eight.layer_gemm_s == pytest.approx(four.layer_gemm_s / 2)


def test_a_dense_model_has_no_routed_experts():
    """A dense model's routed block is empty: no GEMMs, kernels or launches."""
    calls, gemm = shapes()
    routed = routed_experts(PRESETS["llama3-8b"], "fp8", 8192, 1.0, 1.0, 1, 32, 0.0, gemm)
    assert calls == [] and routed.launch_s == routed.wait_s == routed.layer_gemm_s == 0.0


def test_whole_experts_take_the_tensor_parallel_ranks_tokens_apart_at_full_width():
    """etp 1 at tp 2: each GPU routes its half of the group's tokens into whole experts (full FFN width), where
    etp = tp routes all of them into half-width experts: the same FLOPs, twice the rows at half the rows' width."""
    model = PRESETS["deepseek-v3"]
    calls, gemm = shapes()
    routed_experts(model, "bf16", 4096, 2.0, 2.0, 8, 4, 0.0, gemm)
    routed_experts(model, "bf16", 4096, 2.0, 1.0, 8, 4, 0.0, gemm)
    assert calls == [(1024.0, 7168, 2048.0), (1024.0, 1024.0, 7168), (512.0, 7168, 4096.0), (512.0, 2048.0, 7168)]


def test_an_expert_with_few_tokens_pays_for_whole_row_tiles():
    """1,000 tokens x top-8 over 32 local experts of 256 (ep 8) is 250 rows an expert: priced as 2 tiles of 128."""
    calls, gemm = shapes()
    routed_experts(PRESETS["deepseek-v3"], "bf16", 1000, 1.0, 1.0, 8, 4, 0.0, gemm)
    assert calls[0][0] == 256.0


def test_router_imbalance_scales_the_busiest_gpus_rows():
    """An imbalance of 1.5 gives the busiest GPU's experts 1.5 x the balanced 1,024 rows (1,536, whole tiles)."""
    calls, gemm = shapes()
    routed_experts(PRESETS["deepseek-v3"], "bf16", 4096, 1.0, 1.0, 8, 4, 0.0, gemm, 1.5)
    assert calls[0][0] == 1536.0


def test_token_shuffling_bytes_add_the_dispatchers_sort_by_local_expert():
    """Qwen3-30B-A3B (hidden 2048, top-8, 128 experts, every layer MoE): permute and unpermute move
    2 x 2 B x 2048 x (1 + 8) = 73,728 B a token; at ep 8 (16 local experts) the sort by local expert and back adds
    2 x 2 x 2 B x 8 x 2048 = 131,072 B; at ep 128 (one local expert) there is no sort; a dense model moves none."""
    from clusterplan.perf.compute import routing_bytes

    model = PRESETS["qwen3-30b-a3b"]
    assert routing_bytes(model, 8) == pytest.approx(73_728 + 131_072)
    assert routing_bytes(model, 128) == pytest.approx(73_728)
    assert routing_bytes(PRESETS["llama3-8b"], 1) == 0.0


def test_a_router_graph_replays_the_routers_kernels_in_one_launch_each_way():
    """DeepSeek-V3, BF16, ep 8 (32 local experts): eager, 16 + 32 x 2 = 80 launches forward and 32 + 32 x 4 = 160
    backward; a graph over the router and its preprocessing replaces its 8 forward and 16 backward kernels by one
    launch each: 73 and 145; the GPU still runs every kernel (layer_kernels unchanged)."""
    model = PRESETS["deepseek-v3"]
    _, gemm = shapes()
    share = model.moe_layers / model.layers
    eager = routed_experts(model, "bf16", 4096, 1.0, 1.0, 8, 4, 0.0, gemm)
    graphed = routed_experts(model, "bf16", 4096, 1.0, 1.0, 8, 4, 0.0, gemm, host=Host(graphs="router"))
    assert eager.launch_s == pytest.approx(4 * share * LAUNCH_S * (80 + 160))
    assert graphed.launch_s == pytest.approx(4 * share * LAUNCH_S * (73 + 145))
    assert graphed.wait_s == pytest.approx(4 * share * LAUNCH_S * 73)
    assert graphed.layer_kernels == eager.layer_kernels == pytest.approx(share * 80)


def test_the_merged_schedule_waits_for_both_routed_blocks_and_token_dropping_for_none():
    """Dropless in the merged forward-backward schedule: the wait is every routed launch, 80 + 160; token
    dropping (no sync): no wait, the same launches; a whole-iteration graph: no launches at all."""
    model = PRESETS["deepseek-v3"]
    _, gemm = shapes()
    launches = 4 * model.moe_layers / model.layers * LAUNCH_S
    merged = routed_experts(model, "bf16", 4096, 1.0, 1.0, 8, 4, 0.0, gemm, host=Host(merged=True))
    assert merged.wait_s == merged.launch_s == pytest.approx(launches * 240)
    dropping = routed_experts(model, "bf16", 4096, 1.0, 1.0, 8, 4, 0.0, gemm, host=Host(dropless=False, merged=True))
    assert dropping.wait_s == 0.0 and dropping.launch_s == pytest.approx(launches * 240)
    full = routed_experts(model, "bf16", 4096, 1.0, 1.0, 8, 4, 0.0, gemm, host=Host(dropless=False, graphs="full"))
    assert full.launch_s == full.wait_s == 0.0


def test_a_layer_pass_costs_the_host_less_with_attention_graphed_and_nothing_in_a_full_graph():
    """Eager 1.25 ms a pass; attention+router: half of it replayed in one 31.25 us launch, 0.625 + 0.03125 ms;
    router alone: attention still eager, 1.25 ms; full: 0."""
    assert layer_pass_s("none") == layer_pass_s("router") == pytest.approx(1.25e-3)
    assert layer_pass_s("attention+router") == pytest.approx(0.625e-3 + 31.25e-6)
    assert layer_pass_s("full") == 0.0


def test_each_cuda_graph_setting_names_what_it_captures():
    """One table of scopes for every setting: attention only with attention+router or full, the iteration only
    with full, the router with every setting but none."""
    assert tuple(GRAPH_SCOPES) == CUDA_GRAPHS
    assert [graphs for graphs in CUDA_GRAPHS if captures(graphs, "attention")] == ["attention+router", "full"]
    assert [graphs for graphs in CUDA_GRAPHS if captures(graphs, "router")] == ["router", "attention+router", "full"]
    assert [graphs for graphs in CUDA_GRAPHS if captures(graphs, "iteration")] == ["full"]


def test_a_whole_iteration_graph_with_a_dropless_router_is_refused_not_priced_at_zero_launches():
    """Regression: Host(graphs="full") with the dropless router (static shapes impossible) priced no launches at
    all; it is a ValueError naming cuda_graphs, as plan.resolve refuses it for the CLI."""
    _, gemm = shapes()
    with pytest.raises(ValueError, match="cuda_graphs"):
        routed_experts(PRESETS["qwen3-30b-a3b"], "fp8", 4096, 1.0, 1.0, 8, 48, 0.0, gemm,
                       host=Host(dropless=True, graphs="full"))
    dense = routed_experts(PRESETS["llama3-8b"], "fp8", 4096, 1.0, 1.0, 1, 32, 0.0, gemm,
                           host=Host(dropless=True, graphs="full"))
    assert dense.launch_s == 0.0    # a dense model has no router to sync on
