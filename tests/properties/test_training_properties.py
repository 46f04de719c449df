"""Invariants of the training model over random models and layouts."""

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.names import RECOMPUTE
from clusterplan.perf import training as T
from clusterplan.perf.model import Transformer
from clusterplan.spec import load_spec

HW = T.hardware(design(load_spec(), load_catalog()))

models = st.builds(
    lambda layers, heads, head_dim, ratio, swiglu: Transformer(
        name="m", layers=layers, hidden=heads * head_dim, heads=heads, ffn_hidden=int(ratio * heads * head_dim),
        vocab=32000, seq_len=2048, mlp="swiglu" if swiglu else "gelu"),
    layers=st.sampled_from([8, 16, 24, 32]), heads=st.sampled_from([8, 16, 32]),
    head_dim=st.sampled_from([64, 128]), ratio=st.sampled_from([2.7, 4.0]), swiglu=st.booleans())


@settings(max_examples=25, deadline=None)
@given(model=models, gpus=st.sampled_from([8, 16, 32, 64, 128]))
def test_every_layout_uses_every_gpu(model, gpus):
    found = T.search(model, HW, T.Options(seq_len=2048, global_batch=512), gpus, {}, top=50)
    for row in found.best:
        lay = row["layout"]
        assert lay["tp"] * lay["pp"] * lay["dp"] * lay["cp"] == gpus


def _grid(model, gpus):
    grid, _ = T.layouts(model, gpus, 8, T.Options(seq_len=2048, global_batch=512), {})
    return grid


@settings(max_examples=20, deadline=None)
@given(model=models, scale=st.floats(1.0, 8.0))
def test_more_bandwidth_or_flops_never_slows_a_step(model, scale):
    grid = _grid(model, 64)
    opts = T.Options(seq_len=2048, global_batch=512)
    base = T.evaluate(model, HW, opts, grid)["step_time_s"]
    system = dataclasses.replace(HW.system, link_rate_Bps=HW.system.link_rate_Bps * scale,
                                 intra_bw_Bps=HW.system.intra_bw_Bps * scale)
    for faster in (dataclasses.replace(HW, system=system), dataclasses.replace(HW, peak_flops=HW.peak_flops * scale),
                   dataclasses.replace(HW, hbm_bw_Bps=HW.hbm_bw_Bps * scale)):
        assert np.all(T.evaluate(model, faster, opts, grid)["step_time_s"] <= base * (1 + 1e-12))


@settings(max_examples=20, deadline=None)
@given(model=models)
def test_memory_never_rises_with_the_zero_stage(model):
    grid = _grid(model, 64)
    block = RECOMPUTE.index("block")   # spends whatever memory is left on fewer recomputed layers
    grid = {k: v[(grid["dp"] > 1) & (grid["recompute"] != block)] for k, v in grid.items()}
    opts = T.Options(seq_len=2048, global_batch=512)
    totals = [T.evaluate(model, HW, opts, {**grid, "zero": np.full_like(grid["zero"], z)})["memory"]["total"]
              for z in (0, 1, 2, 3)]
    for lower, higher in zip(totals, totals[1:]):
        assert np.all(higher <= lower * (1 + 1e-12))


@settings(max_examples=20, deadline=None)
@given(model=models)
def test_tp_1_has_no_tp_communication(model):
    grid = _grid(model, 32)
    result = T.evaluate(model, HW, T.Options(seq_len=2048, global_batch=512), grid)
    assert np.all(result["breakdown"]["tp_comm"][grid["tp"] == 1] == 0)
    assert np.any(result["breakdown"]["tp_comm"][grid["tp"] > 1] > 0)


@settings(max_examples=20, deadline=None)
@given(model=models, hbm_gib=st.sampled_from([16, 40, 80]))
def test_block_recomputation_lies_between_none_and_full(model, hbm_gib):
    hw = dataclasses.replace(HW, hbm_bytes=hbm_gib * 2**30)
    grid = _grid(model, 64)
    opts = T.Options(seq_len=2048, global_batch=512)
    none, full, block = (T.evaluate(model, hw, opts, {**grid, "recompute": np.full_like(grid["recompute"], i)})
                         for i in (RECOMPUTE.index(name) for name in ("none", "full", "block")))
    assert np.all(block["memory"]["total"] <= none["memory"]["total"] * (1 + 1e-12))
    assert np.all(block["memory"]["total"] >= full["memory"]["total"] * (1 - 1e-12))
    assert np.all(block["step_time_s"] <= full["step_time_s"] * (1 + 1e-12))
    assert np.all(block["fits"][full["fits"]])          # whatever fits recomputing all layers fits with block
    assert np.all(block["step_time_s"][none["fits"]] == none["step_time_s"][none["fits"]])
