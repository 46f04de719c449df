"""Invariants of the training model over random models and layouts."""

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.layout import layouts, violations
from clusterplan.perf.model import Transformer
from clusterplan.perf.search import search
from clusterplan.perf.step import evaluate
from clusterplan.spec import load_spec

HW = hardware(design(load_spec(), load_catalog()))
OPTIONS = Options(seq_len=2048, global_batch=512)

models = st.builds(
    lambda layers, heads, head_dim, ratio, swiglu: Transformer(
        name="m", layers=layers, hidden=heads * head_dim, heads=heads, ffn_hidden=int(ratio * heads * head_dim),
        vocab=32000, seq_len=2048, mlp="swiglu" if swiglu else "gelu"),
    layers=st.sampled_from([8, 16, 24, 32]), heads=st.sampled_from([8, 16, 32]),
    head_dim=st.sampled_from([64, 128]), ratio=st.sampled_from([2.7, 4.0]), swiglu=st.booleans())


@settings(max_examples=25, deadline=None)
@given(model=models, gpus=st.sampled_from([8, 16, 32, 64, 128]))
def test_every_layout_uses_every_gpu(model, gpus):
    """dp x tp x pp x cp = GPUs in every layout found, and each breaks no rule."""
    found = search(model, HW, OPTIONS, gpus, top=50)
    for row in found.best:
        lay = row.layout
        assert lay.tp * lay.pp * lay.dp * lay.cp == gpus
        assert violations(lay, model, OPTIONS, gpus) == ()


def _grid(model, gpus):
    grid, _ = layouts(model, gpus, 8, OPTIONS)
    return grid


@settings(max_examples=20, deadline=None)
@given(model=models, scale=st.floats(1.0, 8.0))
def test_more_bandwidth_or_flops_never_slows_a_step(model, scale):
    """Faster links, more FLOP/s or more HBM bandwidth never lengthen a step."""
    grid = _grid(model, 64)
    base = evaluate(model, HW, OPTIONS, grid).step.total
    system = dataclasses.replace(HW.system, link_rate_Bps=HW.system.link_rate_Bps * scale,
                                 intra_bw_Bps=HW.system.intra_bw_Bps * scale)
    for faster in (dataclasses.replace(HW, system=system), dataclasses.replace(HW, peak_flops=HW.peak_flops * scale),
                   dataclasses.replace(HW, hbm_bw_Bps=HW.hbm_bw_Bps * scale)):
        assert np.all(evaluate(model, faster, OPTIONS, grid).step.total <= base * (1 + 1e-12))


@settings(max_examples=20, deadline=None)
@given(model=models)
def test_memory_never_rises_with_the_zero_stage(model):
    """Memory per GPU never rises from ZeRO 0 to 1, 2 and 3."""
    grid = _grid(model, 64)
    # "block" spends whatever memory is left on fewer recomputed layers
    grid = grid.select((grid.dp > 1) & (grid.recompute != "block"))
    totals = [evaluate(model, HW, OPTIONS, dataclasses.replace(grid, zero=np.full_like(grid.zero, z))).memory.total
              for z in (0, 1, 2, 3)]
    for lower, higher in zip(totals, totals[1:]):
        assert np.all(higher <= lower * (1 + 1e-12))


@settings(max_examples=20, deadline=None)
@given(model=models)
def test_tp_1_has_no_tp_communication(model):
    """Without tensor parallelism there is no TP traffic; with it, some."""
    grid = _grid(model, 32)
    tp_comm = evaluate(model, HW, OPTIONS, grid).step.tp_comm
    assert np.all(tp_comm[grid.tp == 1] == 0)
    assert np.any(tp_comm[grid.tp > 1] > 0)


@settings(max_examples=20, deadline=None)
@given(model=models, hbm_gib=st.sampled_from([16, 40, 80]))
def test_block_recomputation_lies_between_none_and_full(model, hbm_gib):
    """Block recomputation needs no more memory than none, no less than full, and is never slower than full."""
    hw = dataclasses.replace(HW, hbm_bytes=hbm_gib * 2**30)
    grid = _grid(model, 64)
    none, full, block = (evaluate(model, hw, OPTIONS, dataclasses.replace(grid, recompute=np.full(len(grid), name)))
                         for name in ("none", "full", "block"))
    assert np.all(block.memory.total <= none.memory.total * (1 + 1e-12))
    assert np.all(block.memory.total >= full.memory.total * (1 - 1e-12))
    assert np.all(block.step.total <= full.step.total * (1 + 1e-12))
    assert np.all(block.fits[full.fits])          # whatever fits recomputing all layers fits with block
    assert np.all(block.step.total[none.fits] == none.step.total[none.fits])


@settings(max_examples=15, deadline=None)
@given(model=models, gpus=st.sampled_from([8, 32, 128]), seed=st.integers(0, 2**32 - 1))
def test_one_layout_at_a_time_prices_as_the_grid(model, gpus, seed):
    """Any layout of the grid, evaluated alone (floats), matches its row of the grid (arrays) to the bit."""
    grid = _grid(model, gpus)
    if not len(grid):
        return
    many = evaluate(model, HW, OPTIONS, grid)
    for index in np.random.default_rng(seed).integers(0, len(grid), 5):
        one, row = evaluate(model, HW, OPTIONS, grid.row(int(index))), many.row(int(index))
        assert dataclasses.asdict(one.step) == dataclasses.asdict(row.step)
        assert dataclasses.asdict(one.memory) == dataclasses.asdict(row.memory)
        assert (one.mfu, one.fits, one.hardware_tflops_per_gpu) == (row.mfu, row.fits, row.hardware_tflops_per_gpu)


moe_models = st.builds(
    lambda layers, experts, top: Transformer(
        name="moe", layers=layers, hidden=2048, heads=16, ffn_hidden=1024, vocab=32000, seq_len=2048, mlp="swiglu",
        bias=False, experts=experts, experts_per_token=top),
    layers=st.sampled_from([8, 16]), experts=st.sampled_from([8, 16, 64]), top=st.sampled_from([1, 2, 4, 8]))


@settings(max_examples=20, deadline=None)
@given(model=moe_models, ep=st.sampled_from([2, 4, 8]), dp=st.sampled_from([8, 16]))
def test_overlapping_or_deduplicating_the_expert_exchange_never_slows_a_step(model, ep, dp):
    """With token dropping (no router sync) moe_overlap hides at most what it costs 0.2 of, and deepep sends no
    more bytes: neither lengthens a step. With a dropless router the merged schedule never shortens the host's
    wait (the GPU waits for both routed blocks' launches, experts.py)."""
    from clusterplan.perf.layout import Layout
    if model.experts % ep or model.experts_per_token > model.experts:
        return
    layout = Layout(tp=1, pp=1, dp=dp, cp=1, mbs=1, virtual_stages=1, recompute="none", zero=1, ep=ep)
    dropping = dataclasses.replace(OPTIONS, moe_dropless=False)
    base = evaluate(model, HW, dropping, layout).step.total
    for change in ({"moe_overlap": True}, {"moe_dispatcher": "deepep"}):
        assert evaluate(model, HW, dataclasses.replace(dropping, **change), layout).step.total <= base * (1 + 1e-12)
    plain = evaluate(model, HW, OPTIONS, layout).step.host
    assert evaluate(model, HW, dataclasses.replace(OPTIONS, moe_overlap=True), layout).step.host >= plain


@settings(max_examples=20, deadline=None)
@given(model=moe_models, ep=st.sampled_from([1, 2, 4, 8]), dp=st.sampled_from([8, 16]),
       dropless=st.booleans())
def test_cuda_graphs_never_lengthen_a_step_and_a_full_graph_leaves_no_host_time(model, ep, dp, dropless):
    """Each wider capture replays more kernels in one launch: router <= none, attention+router <= router; a
    whole-iteration graph (token dropping) leaves the host nothing to launch."""
    from clusterplan.perf.layout import Layout
    if model.experts % ep or model.experts_per_token > model.experts:
        return
    layout = Layout(tp=1, pp=1, dp=dp, cp=1, mbs=1, virtual_stages=1, recompute="none", zero=1, ep=ep)
    options = dataclasses.replace(OPTIONS, moe_dropless=dropless)
    steps = [evaluate(model, HW, dataclasses.replace(options, cuda_graphs=graphs), layout).step
             for graphs in ("none", "router", "attention+router")]
    assert steps[0].total >= steps[1].total * (1 - 1e-12) and steps[1].total >= steps[2].total * (1 - 1e-12)
    full = evaluate(model, HW, dataclasses.replace(options, moe_dropless=False, cuda_graphs="full"), layout).step
    assert full.host == 0.0


@settings(max_examples=20, deadline=None)
@given(model=models, dp=st.sampled_from([2, 4, 8, 16]), zero=st.sampled_from([1, 2]))
def test_bf16_gradients_are_megatrons_distributed_optimizer_ratios(model, dp, zero):
    """Gradient bytes with a BF16 buffer over FP32 ones: ZeRO-1 (2 + 4/d) / 4 = 0.5 + 1/d, never more than FP32 at
    d >= 2; ZeRO-2 shards the buffer too, (2 + 4) / 4 = 1.5 of FP32's 4/d."""
    from clusterplan.perf.layout import Layout
    layout = Layout(tp=1, pp=1, dp=dp, cp=1, mbs=1, virtual_stages=1, recompute="none", zero=zero)
    fp32 = evaluate(model, HW, dataclasses.replace(OPTIONS, grad_reduce="fp32"), layout).memory.gradients
    bf16 = evaluate(model, HW, dataclasses.replace(OPTIONS, grad_reduce="bf16"), layout).memory.gradients
    assert bf16 / fp32 == pytest.approx(0.5 + 1 / dp if zero == 1 else 1.5)
