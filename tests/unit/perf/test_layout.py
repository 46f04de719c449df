import numpy as np
import pytest

from clusterplan.errors import ConfigError
from clusterplan.perf.hardware import Options
from clusterplan.perf.layout import Constraints, Layout, layouts, violations
from clusterplan.perf.presets import preset


def test_a_layout_names_every_offending_value():
    """One error lists each bad value with the value itself."""
    with pytest.raises(ConfigError) as error:
        Layout(tp=0, dp=2.5, recompute="most", zero=4)
    message = str(error.value)
    for phrase in ("tp(0)", "dp(2.5)", "recompute('most')", "zero(4)"):
        assert phrase in message


@pytest.mark.parametrize("values, phrase", [
    (dict(virtual_stages=2), "virtual stages need pipeline parallelism: virtual_stages(2), pp(1)"),
    (dict(pp=2, dp=4, zero=3), "ZeRO-3 with pipeline parallelism: zero(3), pp(2)"),
    (dict(zero=1), "ZeRO needs data or context parallelism: zero(1), dp(1), cp(1)"),
])
def test_a_layout_rejects_choices_that_cannot_go_together(values, phrase):
    """Rules that need nothing but the layout are checked when it is made."""
    with pytest.raises(ConfigError, match=phrase.replace("(", r"\(").replace(")", r"\)")):
        Layout(**values)


def test_constraints_leave_none_free_and_check_the_rest():
    """None is free; a given value must be valid, and ZeRO 0 is a value."""
    assert Constraints().tp is None and Constraints(zero=0).zero == 0
    with pytest.raises(ConfigError, match=r"mbs\(0\).*zero\(5\)"):
        Constraints(mbs=0, zero=5)


def test_violations_name_the_values_a_model_cannot_take():
    """Llama 2 7B's 32 heads and 4,096 GPUs: tp 3 and a wrong GPU count are both named."""
    model = preset("llama2-7b")
    found = violations(Layout(tp=3, dp=2), model, Options(seq_len=4096, global_batch=8), 8)
    assert found[0] == "tp x pp x cp x dp does not equal the GPU count: tp(3), pp(1), cp(1), dp(2)"
    assert "attention heads not divisible by tp: tp(3)" in found
    assert violations(Layout(tp=4, dp=2), model, Options(seq_len=4096, global_batch=8), 8) == ()


def test_layouts_hold_constraints_and_count_rejections():
    """Every layout of the grid uses every GPU and keeps the fixed choices; the rest are counted by reason."""
    model = preset("llama2-13b")
    grid, rejected = layouts(model, 64, 8, Options(seq_len=4096, global_batch=512),
                             Constraints(tp=4, recompute="selective"))
    assert len(grid) > 0 and np.all(grid.tp == 4) and np.all(grid.recompute == "selective")
    assert np.all(grid.num_gpus == 64)
    assert rejected and all(count > 0 for count in rejected.values())
    assert violations(grid.row(0), model, Options(seq_len=4096, global_batch=512), 64) == ()


def test_a_grid_row_is_a_layout_in_plain_numbers():
    """Layouts.row gives a validated Layout of Python ints and a recompute name."""
    grid, _ = layouts(preset("llama2-7b"), 16, 8, Options(seq_len=4096, global_batch=64))
    row = grid.row(len(grid) - 1)
    assert isinstance(row, Layout) and type(row.tp) is int and type(row.recompute) is str
    assert len(grid.select(grid.tp == row.tp)) == int(np.count_nonzero(grid.tp == row.tp))
