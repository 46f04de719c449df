import dataclasses

import numpy as np
import pytest

from clusterplan.catalog import load_catalog
from clusterplan.design.design import design
from clusterplan.perf import training as T
from clusterplan.perf.model import preset
from clusterplan.spec import load_spec


@pytest.fixture(scope="module")
def hw():
    return T.hardware(design(load_spec(), load_catalog()))


def one(**layout):
    base = dict(tp=1, pp=1, dp=1, cp=1, mbs=1, vpp=1, recompute=0, zero=0)
    base.update(layout)
    return {k: np.array([v]) for k, v in base.items()}


def test_states_are_megatrons_18_bytes_per_parameter(hw):
    model = preset("llama2-7b")
    r = T.evaluate(model, hw, T.Options(seq_len=4096, global_batch=1), one())
    mem = r["memory"]
    assert float(mem["weights"][0] + mem["gradients"][0] + mem["optimizer"][0]) == pytest.approx(18 * model.params)


def test_distributed_optimizer_is_6_plus_12_over_dp(hw):
    model = preset("llama2-7b")
    r = T.evaluate(model, hw, T.Options(seq_len=4096, global_batch=8), one(dp=8, zero=1))
    mem = r["memory"]
    assert float(mem["weights"][0] + mem["gradients"][0] + mem["optimizer"][0]) == pytest.approx(
        (6 + 12 / 8) * model.params)


@pytest.mark.parametrize("recompute, sp, per_layer", [
    # Korthikanti et al. 2022 Table 2, bytes per layer with s b h factored out
    (0, False, lambda s, h, a, t: 10 + 24 / t + 5 * a * s / (h * t)),
    (0, True, lambda s, h, a, t: (34 + 5 * a * s / h) / t),
    (1, True, lambda s, h, a, t: 34 / t),
    (1, False, lambda s, h, a, t: 10 + 24 / t),
    (2, False, lambda s, h, a, t: 2),
])
def test_activation_memory_is_korthikanti(hw, recompute, sp, per_layer):
    model = preset("gpt-18b")
    s, tp, b = 2048, 8, 2
    opts = T.Options(seq_len=s, global_batch=b, attention="unfused", sequence_parallel=sp)
    r = T.evaluate(model, hw, opts, one(tp=tp, mbs=b, recompute=recompute))
    expected = per_layer(s, model.hidden, model.heads, tp) * s * b * model.hidden * model.layers
    logits = 4 * s * b * model.vocab / tp
    assert float(r["memory"]["activations"][0]) == pytest.approx(expected + logits)


def test_pipeline_bubble_is_pp_minus_one_over_micro_batches(hw):
    model = preset("gpt-39b")
    opts = T.Options(seq_len=2048, global_batch=64)
    r = T.evaluate(model, hw, opts, one(tp=8, pp=4, mbs=1))
    per_mb = r["breakdown"]["compute"][0] / 64
    assert r["breakdown"]["pp_bubble"][0] == pytest.approx(3 * per_mb, rel=1e-9)
    interleaved = T.evaluate(model, hw, opts, one(tp=8, pp=4, mbs=1, vpp=4))
    assert interleaved["breakdown"]["pp_bubble"][0] == pytest.approx(r["breakdown"]["pp_bubble"][0] / 4)


def test_full_recompute_adds_one_forward(hw):
    model = preset("llama2-13b")
    opts = T.Options(seq_len=4096, global_batch=8)
    base, full = (T.evaluate(model, hw, opts, one(tp=8, mbs=1, recompute=r)) for r in (0, 2))
    assert full["breakdown"]["recompute"][0] == pytest.approx(base["breakdown"]["compute"][0] / 3, rel=0.1)
    assert full["hardware_tflops_per_gpu"][0] > full["tflops_per_gpu"][0]


def test_search_holds_fixed_keys_and_ranks_by_step_time(hw):
    model = preset("llama2-7b")
    found = T.search(model, hw, T.Options(seq_len=4096, global_batch=256), 128, {"tp": 2})
    assert found.best and all(row["layout"]["tp"] == 2 for row in found.best)
    steps = [row["step_time_s"] for row in found.best]
    assert steps == sorted(steps)
    assert found.num_evaluated > 100 and found.rejected


def test_more_nvlink_shortens_tp_communication(hw):
    model = preset("llama2-70b")
    opts = T.Options(seq_len=4096, global_batch=16, tp_overlap=False)
    fast = dataclasses.replace(hw, system=dataclasses.replace(hw.system, intra_bw_Bps=hw.system.intra_bw_Bps * 2))
    slow_tp = T.evaluate(model, hw, opts, one(tp=8, dp=16, zero=1))["breakdown"]["tp_comm"][0]
    fast_tp = T.evaluate(model, fast, opts, one(tp=8, dp=16, zero=1))["breakdown"]["tp_comm"][0]
    assert 0 < fast_tp < slow_tp


def test_a_small_model_waits_for_the_host(hw):
    """A micro-batch takes at least the host's launch time: HOST_PASS_S per layer and pass."""
    model = preset("gpt-1.7b")
    r = T.evaluate(model, hw, T.Options(seq_len=128, global_batch=8), one(dp=8))
    assert r["breakdown"]["host"][0] > 0
    assert r["step_time_s"][0] >= model.layers * 2 * T.HOST_PASS_S


def test_attention_kernels_rank_by_generation(hw):
    model = preset("llama2-7b")
    steps = [T.evaluate(model, hw, T.Options(seq_len=16384, global_batch=8, attention=kernel),
                        one(dp=8, recompute=2, zero=3))["step_time_s"][0] for kernel in ("flash", "flash2", "flash1")]
    assert steps[0] < steps[1] < steps[2]


def test_tp_overlap_hides_tp_communication(hw):
    model = preset("llama2-70b")
    layout = one(tp=8, dp=16, zero=1)
    exposed = T.evaluate(model, hw, T.Options(seq_len=4096, global_batch=16, tp_overlap=False), layout)
    hidden = T.evaluate(model, hw, T.Options(seq_len=4096, global_batch=16), layout)
    assert hidden["breakdown"]["tp_comm"][0] < exposed["breakdown"]["tp_comm"][0]
    assert hidden["step_time_s"][0] < exposed["step_time_s"][0]


def test_uneven_stages_put_the_extra_layers_on_the_busiest_stage(hw):
    """BLOOM: 70 layers on 12 stages; the busiest holds 6, as if the model had 72."""
    from clusterplan.perf.model import Transformer

    def bloom(layers):
        return Transformer(name="b", layers=layers, hidden=14336, heads=112, ffn_hidden=4 * 14336, vocab=250880,
                           seq_len=2048)

    opts = T.Options(seq_len=2048, global_batch=2048)
    grid, _ = T.layouts(bloom(70), 384, 8, opts, {"tp": 4, "pp": 12, "cp": 1, "mbs": 2, "vpp": 1, "recompute": 2,
                                                   "zero": 1})
    assert len(grid["tp"]) == 1
    uneven, even = (T.evaluate(bloom(n), hw, opts, grid)["step_time_s"][0] for n in (70, 72))
    assert uneven == pytest.approx(even, rel=0.01)


def test_interleaving_multiplies_pipeline_sends(hw):
    model = preset("llama2-70b")
    opts = T.Options(seq_len=4096, global_batch=64)
    p2p = [T.evaluate(model, hw, opts, one(tp=8, pp=4, dp=4, vpp=v, zero=1))["breakdown"]["pp_p2p"][0] for v in (1, 4)]
    slots = [64 / 4 + 3 / v for v in (1, 4)]
    assert p2p[1] / slots[1] == pytest.approx(4 * p2p[0] / slots[0])
