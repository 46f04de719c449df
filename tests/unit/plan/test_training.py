"""training() (plan/training.py): the search, the job's reliability at the best layout, raw and effective figures."""

import dataclasses

import pytest

from clusterplan.catalog import Catalog
from clusterplan.design.design import design
from clusterplan.plan.training import Training, checked_reliability, training
from clusterplan.spec import load_spec


def _job(catalog, *overrides):
    spec = load_spec(None, ["workload.model=\"llama2-13b\"", *overrides])
    built = design(spec, catalog)
    return spec, training(spec, catalog, built, 4.0, [catalog.get("cloud", "nebius-h100-spot")])


@pytest.mark.parametrize("overrides", [
    (),
    ("reliability.async_checkpoint=false",),             # synchronous checkpoints block for the write
    ("reliability.failure_rates = { gpu = 50.0 }",),     # a GPU failure every few hours
])
def test_effective_time_and_cost_are_raw_over_goodput(catalog, overrides):
    """Effective time- and cost-to-train are the raw ones / goodput, goodput in (0, 1], for own and cloud."""
    spec, job = _job(catalog, "workload.tokens=\"2T\"", *overrides)
    assert 0 < job.goodput <= 1 and job.goodput == job.reliability.goodput
    assert job.time_to_train_s == pytest.approx(2e12 / job.best.tokens_per_s)
    assert job.effective_time_to_train_s == pytest.approx(job.time_to_train_s / job.goodput)
    assert job.effective_time_to_train_s >= job.time_to_train_s
    assert set(job.effective_costs_usd) == set(job.costs_usd) == {"own", "nebius-h100-spot"}
    assert set(job.offer_goodputs) == {"nebius-h100-spot"} and job.offer_goodputs["nebius-h100-spot"] < job.goodput
    for key, raw in job.costs_usd.items():
        goodput = job.offer_goodputs.get(key, job.goodput)   # a spot offer's goodput also counts its reclaims
        assert job.effective_costs_usd[key] == pytest.approx(raw / goodput) and job.effective_costs_usd[key] >= raw
    assert job.costs_usd["own"] == pytest.approx(job.time_to_train_s / 3600 * 128 * 4.0)


def test_more_failures_lengthen_the_effective_run(catalog):
    """A higher GPU failure rate lowers goodput and lengthens the effective run, never the raw one."""
    _, base = _job(catalog, "workload.tokens=\"2T\"")
    _, fragile = _job(catalog, "workload.tokens=\"2T\"", "reliability.failure_rates = { gpu = 50.0 }")
    assert fragile.goodput < base.goodput
    assert fragile.time_to_train_s == pytest.approx(base.time_to_train_s)
    assert fragile.effective_time_to_train_s > base.effective_time_to_train_s


def test_reliability_runs_at_the_predicted_throughput_for_the_effective_run(catalog):
    """The job's reliability reads data at the best layout's tokens/s and lasts the effective run (or
    reliability.days without a token budget)."""
    spec, job = _job(catalog, "workload.tokens=\"2T\"")
    rel = job.reliability
    assert rel.storage.read_Bps == pytest.approx(job.best.tokens_per_s * spec.reliability.bytes_per_token)
    assert rel.days == pytest.approx(job.effective_time_to_train_s / 86400)
    assert rel.expected_interruptions == pytest.approx(rel.interruptions_per_day * rel.days)
    spec, open_ended = _job(catalog)
    assert open_ended.time_to_train_s is None and open_ended.effective_time_to_train_s is None
    assert open_ended.reliability.days == spec.reliability.days and open_ended.effective_costs_usd == {}
    assert open_ended.goodput == pytest.approx(job.goodput)


def test_no_layout_no_reliability(catalog):
    """A model that fits no layout has no goodput and no effective figures."""
    _, job = _job(catalog, "workload.model=\"gpt-1t\"", "workload.gpus=8", "workload.tokens=\"1T\"")
    assert job.best is None and job.reliability is None and job.goodput is None
    assert job.effective_time_to_train_s is None and job.effective_costs_usd == {}


def test_training_is_built_once_and_frozen(catalog):
    """Every figure is set at construction: the costs are there, and no field can be filled in later."""
    _, job = _job(catalog, "workload.tokens=\"2T\"")
    assert isinstance(job, Training) and set(job.costs_usd) == {"own", "nebius-h100-spot"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.reliability = None


def test_failure_rates_come_from_the_catalog_given(catalog):
    """training() reads the failure rates of the catalog it is given, not the shipped one (a regression:
    the reliability model used to load its own)."""
    fragile_gpu = dataclasses.replace(catalog.get("failures", "gpu"), per_1000_unit_days=50.0,
                                      low_per_1000_unit_days=None, high_per_1000_unit_days=None)
    fragile = Catalog({**catalog.families, "failures": {**catalog.families["failures"], "gpu": fragile_gpu}})
    spec = load_spec(None, ["workload.model=\"llama2-13b\""])
    built = design(spec, catalog)
    shipped, given = (training(spec, source, built, 4.0).reliability for source in (catalog, fragile))
    overridden = _job(catalog, "reliability.failure_rates = { gpu = 50.0 }")[1].reliability
    assert given.goodput < shipped.goodput and given.interruptions_per_day > shipped.interruptions_per_day
    assert given.interruptions_per_day == pytest.approx(overridden.interruptions_per_day)


def test_the_checks_get_the_predictions_reliability_or_the_jobs_at_the_read_profile(catalog):
    """With a layout the checks reuse the prediction's reliability (its reading checked); without one the job's at
    the per-GPU profile (reading left to the cluster-wide check); without storage none."""
    spec, job = _job(catalog)
    assert checked_reliability(spec, catalog, design(spec, catalog), job) == (job.reliability, True)
    spec, unfit = _job(catalog, "workload.model=\"gpt-1t\"", "workload.gpus=8")
    found, predicted = checked_reliability(spec, catalog, design(spec, catalog), unfit)
    assert not predicted and found.job.num_gpus == 8 and found.storage.read_basis.startswith("storage.")
    spec, bare = _job(catalog, "storage.usable_tb=0")
    assert bare.reliability is None
    assert checked_reliability(spec, catalog, design(spec, catalog), bare) == (None, False)


def test_the_whole_run_adds_each_cause_to_the_steady_state(catalog):
    """The whole run starts at the raw time to train; with the recipe keys at 0 it adds only evaluation pauses
    and the goodput model's failures and checkpoints (their wall-time share is 1 - goodput)."""
    _, job = _job(catalog, "workload.tokens=\"2T\"", "reliability.ramp_tokens_fraction=0",
                  "reliability.long_context_tokens_fraction=0", "reliability.eval_interval_steps=0")
    run = job.whole_run
    assert run.steady_s == pytest.approx(job.time_to_train_s)
    assert run.ramp_s == run.long_context_s == run.evaluation_s == 0
    assert run.wall_clock_s == pytest.approx(job.effective_time_to_train_s)
    assert job.whole_run_band.kind == "whole run" and job.whole_run_band.low < 0 < job.whole_run_band.high


def test_a_half_batch_ramp_and_a_longer_stage_lengthen_the_whole_run(catalog):
    """18 % of the tokens at half the batch and 5 % at 64K tokens (the reference's defaults) add time; held at 80 %
    of the reservation, the billed time and cost are the wall clock / 0.8."""
    _, job = _job(catalog, "workload.tokens=\"2T\"", "reliability.held_fraction=0.8")
    run = job.whole_run
    assert run.ramp_s > 0 and run.long_context_s > 0 and run.evaluation_s > 0
    assert run.billed_s == pytest.approx(run.wall_clock_s / 0.8)
    assert job.whole_run_cost_usd == pytest.approx(job.costs_usd["own"] * run.billed_s / run.steady_s)


def test_a_sliding_window_model_gets_a_longer_context_stage_not_a_negative_one(catalog):
    """The context-extension stage costs the model's own causal FLOPs per token (perf.model): a sliding-window
    model (Mistral 7B, 4,096-token window) at 64K tokens costs no less than at its training length (a hand-written
    6N + 12 L h s less 6 L h s went negative there, and so did the stage)."""
    _, job = _job(catalog, "workload.model=\"mistral-7b\"", "workload.tokens=\"100B\"",
                  "reliability.long_context_seq_len=65536")
    assert job.whole_run.long_context_s >= 0 and job.whole_run.wall_clock_s >= job.whole_run.steady_s
