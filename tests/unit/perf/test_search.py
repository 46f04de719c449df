import pytest

from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Constraints
from clusterplan.perf.presets import preset
from clusterplan.perf.search import search
from clusterplan.perf.step import Prediction


def test_search_holds_fixed_choices_and_ranks_by_step_time(hw):
    """Every layout found keeps tp = 2; the best come fastest first; rejections are counted."""
    model = preset("llama2-7b")
    found = search(model, hw, Options(seq_len=4096, global_batch=256), 128, Constraints(tp=2))
    assert found.best and all(row.layout.tp == 2 for row in found.best)
    steps = [row.step.total for row in found.best]
    assert steps == sorted(steps)
    assert found.num_evaluated > 100 and found.rejected


def test_best_rows_are_typed_predictions_in_plain_numbers(hw):
    """Search.best holds Predictions of floats, ints and names, not numpy values."""
    found = search(preset("llama2-7b"), hw, Options(seq_len=4096, global_batch=256), 128, top=3)
    assert len(found.best) == 3
    for row in found.best:
        assert isinstance(row, Prediction) and row.fits is True
        assert type(row.step.total) is float and type(row.memory.total) is float and type(row.mfu) is float
        assert type(row.layout.tp) is int and row.layout.recompute in ("none", "selective", "full", "block")


def test_zero_0_and_no_recompute_can_be_held_fixed(hw):
    """Regression: ZeRO stage 0 and recompute "none" were sentinels for "search"; now they hold."""
    model = preset("llama2-7b")
    found = search(model, hw, Options(seq_len=4096, global_batch=256), 128, Constraints(zero=0, recompute="none"),
                   top=50)
    assert found.best and all(row.layout.zero == 0 and row.layout.recompute == "none" for row in found.best)


def test_nothing_fits_is_a_reason_not_an_error(hw):
    """A model too big for every layout leaves no best layout and says why."""
    found = search(preset("gpt-1t"), hw, Options(seq_len=2048, global_batch=64), 8)
    assert found.best == () and any("does not fit in GPU memory" in reason for reason in found.rejected)


def test_identical_layouts_are_listed_once(hw):
    """Regression (issue 14): "block" recomputing no layer priced like "none" and was listed twice beside it."""
    found = search(preset("llama2-7b"), hw, Options(seq_len=4096, global_batch=1024), 128, top=40)
    keys = [(r.layout.tp, r.layout.pp, r.layout.dp, r.layout.cp, r.layout.mbs, r.layout.virtual_stages,
             r.layout.zero, round(r.step.total, 9)) for r in found.best]
    assert len(keys) == len(set(keys)) == 40


def test_layouts_keep_the_memory_margin_free(hw):
    """Every layout found leaves the stated margin of HBM free (the chosen ones filled 79.7-79.95 GiB of 80)."""
    assert hw.usable_bytes == pytest.approx(hw.hbm_bytes * (1 - hw.memory_margin)) and hw.memory_margin > 0
    found = search(preset("llama3-70b"), hw, Options(seq_len=8192, global_batch=512), 128, top=30)
    assert found.best and all(row.memory.total <= hw.usable_bytes for row in found.best)
    assert max(row.memory.total for row in found.best) > 0.8 * hw.usable_bytes   # the bound binds somewhere


def test_the_global_batch_is_searched_and_ranked_by_tokens_per_second(hw):
    """With several global batches the search prices each and ranks every layout by tokens/s (issue 14)."""
    model = preset("llama2-7b")
    options = Options(seq_len=4096, global_batch=1024)
    found = search(model, hw, options, 128, top=20, global_batches=(1024, 2048))
    assert found.global_batches == (1024, 2048)
    rates = [row.tokens_per_s for row in found.best]
    assert rates == sorted(rates, reverse=True)
    single = search(model, hw, options, 128, top=1)
    assert found.best[0].tokens_per_s >= single.best[0].tokens_per_s
    assert {row.global_batch for row in found.best} <= {1024, 2048}
    assert single.best[0].global_batch == 1024


def test_precision_peak_fraction_is_of_the_runs_own_peak(hw):
    """MFU is of the BF16 dense peak; the precision's own fraction divides by FP8's, and doubles it for 2:4."""
    model = preset("llama2-7b")
    bf16 = search(model, hw, Options(seq_len=4096, global_batch=1024), 128, top=1).best[0]
    assert bf16.precision_peak_fraction == pytest.approx(bf16.mfu)
    fp8 = search(model, hw, Options(seq_len=4096, global_batch=1024, precision="fp8"), 128, top=1).best[0]
    assert fp8.precision_peak_fraction == pytest.approx(fp8.mfu * hw.peak_flops / hw.fp8_flops)
    sparse = search(model, hw, Options(seq_len=4096, global_batch=1024, sparsity_speedup=1.3), 128, top=1).best[0]
    assert sparse.precision_peak_fraction == pytest.approx(sparse.mfu / 2)
