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
