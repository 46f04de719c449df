"""The search's screen (perf/bound.py) and its pruning: a layout's bound is never below the tokens/s evaluate
prices, and the pruned search ranks exactly as pricing every layout does (issue 29: size in seconds)."""

from dataclasses import replace

import numpy as np
import pytest

from clusterplan.design.design import design
from clusterplan.perf.bound import held, node_key, tokens_per_s_bound
from clusterplan.perf.hardware import Options, hardware
from clusterplan.perf.layout import Constraints, layouts
from clusterplan.perf.presets import preset
from clusterplan.perf.search import forget, search
from clusterplan.perf.step import evaluate

CASES = [   # (model, GPUs, options, constraints)
    ("llama2-7b", 128, Options(seq_len=4096, global_batch=1024), Constraints()),
    ("llama3-70b", 128, Options(seq_len=8192, global_batch=512), Constraints()),
    ("llama3-70b", 64, Options(seq_len=8192, global_batch=256, precision="fp8"), Constraints(zero=1)),
    ("mixtral-8x7b", 128, Options(seq_len=4096, global_batch=512), Constraints()),
    # regression: the bound took 1F1B's bubble, (pp - 1) slots, under DualPipe's shorter one
    ("mixtral-8x7b", 128, Options(seq_len=4096, global_batch=512, pipeline_schedule="dualpipe"), Constraints()),
]


@pytest.fixture(scope="module")
def roce(reference, catalog):
    """The reference cluster on 400G RoCE: the same GPUs and servers, another network."""
    return hardware(design(replace(reference, network=replace(reference.network, fabric="roce-400g")), catalog))


@pytest.mark.parametrize("name, gpus, options, constraints", CASES)
def test_the_bound_is_never_below_the_priced_tokens_per_s(hw, name, gpus, options, constraints):
    """Every layout that fits: bound >= evaluate's tokens/s exactly (no slack), and held = evaluate's memory."""
    model = preset(name)
    grid, _ = layouts(model, gpus, hw.system.gpus_per_node, options, constraints)
    priced = evaluate(model, hw, options, grid)
    memory = held(model, hw, options, grid)
    assert np.array_equal(memory.total_bytes, priced.memory.total) and np.array_equal(memory.fits, priced.fits)
    fits = grid.select(memory.fits)
    bound = tokens_per_s_bound(model, hw, options, fits)
    assert len(bound) > 50 and np.all(bound >= np.asarray(priced.tokens_per_s)[memory.fits])


def test_a_grid_priced_at_several_batches_prices_each_row_as_its_own_batch(hw):
    """evaluate(global_batch=array) gives, row by row, the figures of evaluate at that row's batch."""
    model, options = preset("llama2-7b"), Options(seq_len=4096, global_batch=1024)
    grid, _ = layouts(model, 128, hw.system.gpus_per_node, options, Constraints())
    batches = np.where(np.arange(len(grid)) % 2 == 0, 1024, 2048)
    mixed = evaluate(model, hw, options, grid, global_batch=batches)
    for batch in (1024, 2048):
        alone = evaluate(model, hw, replace(options, global_batch=batch), grid)
        rows = batches == batch
        assert np.array_equal(np.asarray(mixed.tokens_per_s)[rows], np.asarray(alone.tokens_per_s)[rows])
        assert np.array_equal(np.asarray(mixed.step.total)[rows], np.asarray(alone.step.total)[rows])
    assert mixed.row(1).global_batch == 2048 and type(mixed.row(1).global_batch) is int


def _exhaustive(model, hw, options, gpus, constraints, top, batches):
    """The search as it was: every layout priced, sorted by (-tokens/s, batch), each distinct layout once."""
    rows = []
    for index, batch in enumerate(batches):
        batch_options = replace(options, global_batch=batch)
        grid, _ = layouts(model, gpus, hw.system.gpus_per_node, batch_options, constraints)
        result = evaluate(model, hw, batch_options, grid)
        rows += [(float(result.tokens_per_s[i]), index, result, int(i)) for i in np.flatnonzero(result.fits)]
    rows.sort(key=lambda row: (-row[0], row[1]))
    kept, seen = [], set()
    for _, _, result, i in rows:
        p = result.row(i)
        lay = p.layout
        key = (lay.tp, lay.pp, lay.dp, lay.cp, lay.ep, lay.mbs, lay.virtual_stages, lay.zero, p.global_batch,
               p.hardware_tflops_per_gpu > p.tflops_per_gpu, round(p.step.total, 9), round(p.memory.total))
        if key not in seen:
            seen.add(key)
            kept.append(p)
        if len(kept) == top:
            break
    return kept


def _same(found, expected):
    assert [(p.layout, p.global_batch, p.step.total, p.tokens_per_s, p.memory.total) for p in found] == \
        [(p.layout, p.global_batch, p.step.total, p.tokens_per_s, p.memory.total) for p in expected]


@pytest.mark.parametrize("top", [1, 10, 300])
@pytest.mark.parametrize("name, gpus, options, constraints", CASES)
def test_the_pruned_search_ranks_as_pricing_every_layout(hw, roce, name, gpus, options, constraints, top):
    """The best `top` of the search are the exhaustive ranking's, figure for figure, at one and at two batches,
    on InfiniBand and then on RoCE (the second search reusing the first's screen, not its prices)."""
    model = preset(name)
    forget()
    for system in (hw, roce):
        for batches in ((options.global_batch,), (options.global_batch, options.global_batch * 2)):
            found = search(model, system, options, gpus, constraints, top=top, global_batches=batches)
            _same(found.best, _exhaustive(model, system, options, gpus, constraints, top, batches))
    assert node_key(hw) == node_key(roce) and hw.system != roce.system


def test_nothing_fitting_and_a_fixed_layout_still_search(hw):
    """No layout fits: no best and the memory reason; one layout held fixed: that one."""
    forget()
    assert search(preset("gpt-1t"), hw, Options(seq_len=2048, global_batch=64), 8).best == ()
    fixed = Constraints(tp=8, pp=2, cp=1, mbs=1, virtual_stages=1, recompute="none", zero=1)
    found = search(preset("llama2-13b"), hw, Options(seq_len=4096, global_batch=1024), 128, fixed, top=5)
    _same(found.best, _exhaustive(preset("llama2-13b"), hw, Options(seq_len=4096, global_batch=1024), 128, fixed, 5,
                                  (1024,)))
