"""The whole run by cause (reliability/whole_run.py): hand-computed cases and the lines' sum."""

import pytest

from clusterplan.errors import InfeasiblePlan
from clusterplan.reliability.whole_run import Recipe, linear_ramp_batch_fraction, ramp_ratio, whole_run


def test_ramp_ratio_is_the_fixed_part_over_the_batch():
    """C = 9 s scales with the batch, F = 1 s does not: at half the batch a token takes (9 + 2) / 10 = 1.1."""
    assert ramp_ratio(batch_scaled_s=9.0, fixed_s=1.0, batch_fraction=0.5) == pytest.approx(1.1)
    assert ramp_ratio(batch_scaled_s=9.0, fixed_s=1.0, batch_fraction=1.0) == pytest.approx(1.0)
    with pytest.raises(ValueError, match="batch fraction"):
        ramp_ratio(batch_scaled_s=9.0, fixed_s=1.0, batch_fraction=0.0)


def test_each_cause_is_its_own_line():
    """100 s steady; 20 % of tokens at ratio 1.1 (+2 s); 10 % at FLOP ratio 1.5 (+5 s); evaluation 100 steps per
    1000 at a third (107 x 0.1 / 3 = 3.567 s); failures 4 %, checkpoints 1 %, stalls 5 %: wall = 110.567 / 0.9."""
    recipe = Recipe(ramp_tokens_fraction=0.2, ramp_batch_fraction=0.5, long_context_tokens_fraction=0.1,
                    long_context_seq_len=65536, eval_interval_steps=1000, eval_steps=100, pause_fraction=0.05,
                    held_fraction=0.8)
    run = whole_run(recipe, steady_s=100.0, ramp_ratio_=1.1, long_context_ratio=1.5, failure_waste=0.04,
                    checkpoint_waste=0.01)
    assert run.ramp_s == pytest.approx(2.0)
    assert run.long_context_s == pytest.approx(5.0)
    assert run.evaluation_s == pytest.approx(107 / 30)
    wall = (107 + 107 / 30) / 0.9
    assert run.wall_clock_s == pytest.approx(wall)
    assert run.failures_s == pytest.approx(0.04 * wall)
    assert run.checkpoint_s == pytest.approx(0.01 * wall)
    assert run.data_pause_s == pytest.approx(0.05 * wall)
    assert run.billed_s == pytest.approx(wall / 0.8)
    assert sum(run.breakdown().values()) == pytest.approx(run.billed_s)


def test_no_cause_is_the_steady_state():
    """The default recipe and no failures: the whole run is the steady state."""
    run = whole_run(Recipe(), steady_s=50.0, ramp_ratio_=1.3, long_context_ratio=2.0, failure_waste=0.0,
                    checkpoint_waste=0.0)
    assert run.wall_clock_s == run.billed_s == 50.0


def test_losses_of_the_whole_wall_clock_are_refused():
    """Losses of the whole wall clock: the run never ends, an infeasible plan (exit 3), not an internal error."""
    with pytest.raises(InfeasiblePlan, match="never finishes"):
        whole_run(Recipe(pause_fraction=0.5), steady_s=1.0, ramp_ratio_=1.0, long_context_ratio=1.0,
                  failure_waste=0.3, checkpoint_waste=0.2)


def test_a_linear_ramp_costs_its_harmonic_batch_not_its_mean():
    # from 1/4 of the batch: mean(1/b) over [0.25, 1] = ln 4 / 0.75 = 1.8484, so the equivalent fraction 0.5410,
    # below the mean batch 0.625
    assert linear_ramp_batch_fraction(0.25) == pytest.approx(0.75 / 1.3862944, rel=1e-6)
    assert linear_ramp_batch_fraction(0.25) < 0.625
    assert linear_ramp_batch_fraction(1.0) == 1.0
    with pytest.raises(ValueError):
        linear_ramp_batch_fraction(0.0)
