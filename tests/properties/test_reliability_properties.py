"""Properties of the reliability model: more GPUs never mean fewer interruptions; goodput stays in (0, 1]
and never rises with the failure rate; Daly's interval never exceeds the mean time to interruption."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from clusterplan.catalog import load_catalog
from clusterplan.design import design
from clusterplan.perf.presets import PRESETS
from clusterplan.plan.reliability import reliability_settings, scenario_rates
from clusterplan.reliability import goodput
from clusterplan.reliability.checkpoint import daly_interval_s, goodput_fraction
from clusterplan.spec import load_spec

CATALOG = load_catalog()
CAUSES = sorted(CATALOG.families["failures"])
SETTINGS = settings(deadline=None, max_examples=60)
MODELS = sorted(PRESETS)
ROUNDING = 1e-12   # rates a hair apart give goodputs equal but for floating-point rounding


def _spec(*overrides):
    return load_spec(None, list(overrides))


def _job(spec, built, model, num_gpus):
    """``model`` on ``num_gpus`` of ``built`` with the scenario's settings and the catalog's rates."""
    return goodput(reliability_settings(spec), built, scenario_rates(spec, CATALOG), model=model.name,
                   params=model.params, num_gpus=num_gpus)


@SETTINGS
@given(nodes=st.integers(1, 512), fabric=st.sampled_from(["ib-ndr200", "ib-ndr400", "roce-400g"]),
       small=st.integers(1, 512), large=st.integers(1, 512), model=st.sampled_from(MODELS))
def test_more_gpus_never_fewer_interruptions(nodes, fabric, small, large, model):
    """A larger job on the same cluster has at least as many interruptions a day, per cause and in total."""
    small, large = sorted((min(small, nodes), min(large, nodes)))
    spec = _spec(f"cluster.num_nodes={nodes}", f'network.fabric="{fabric}"', "network.tiers=0")
    built = design(spec, CATALOG)
    jobs = [_job(spec, built, PRESETS[model], n * 8) for n in (small, large)]
    assert jobs[1].interruptions_per_day >= jobs[0].interruptions_per_day
    for a, b in zip(jobs[0].interruptions.causes, jobs[1].interruptions.causes):
        assert b.per_day >= a.per_day


@SETTINGS
@given(nodes=st.integers(1, 300), extra=st.integers(1, 300))
def test_a_bigger_cluster_running_the_whole_cluster_is_interrupted_more(nodes, extra):
    """Whole-cluster jobs: more nodes (and so more GPUs, links and switches) never lower the rate."""
    per_day = []
    for n in (nodes, nodes + extra):
        spec = _spec(f"cluster.num_nodes={n}", "network.tiers=0")
        built = design(spec, CATALOG)
        per_day.append(_job(spec, built, PRESETS["llama2-7b"], built.num_gpus).interruptions_per_day)
    assert per_day[1] >= per_day[0]


@SETTINGS
@given(cause=st.sampled_from(CAUSES), low=st.floats(1e-3, 50.0), factor=st.floats(1.0, 100.0),
       asynchronous=st.booleans(), interval_min=st.sampled_from([0.0, 5.0, 60.0]),
       nodes=st.integers(1, 64), model=st.sampled_from(["llama2-7b", "llama2-70b", "llama3.1-405b"]))
def test_goodput_in_unit_interval_and_never_rises_with_the_failure_rate(cause, low, factor, asynchronous,
                                                                      interval_min, nodes, model):
    """Raising any one cause's rate never raises goodput, which stays in (0, 1]."""
    results = []
    for rate in (low, low * factor):
        spec = _spec(f"cluster.num_nodes={nodes}", f"reliability.failure_rates={{ {cause} = {rate!r} }}",
                     f"reliability.async_checkpoint={'true' if asynchronous else 'false'}",
                     f"reliability.checkpoint_interval_min={interval_min}")
        built = design(spec, CATALOG)
        results.append(_job(spec, built, PRESETS[model], built.num_gpus).goodput)
    assert all(0 < g <= 1 for g in results)
    assert results[1] <= results[0] + ROUNDING


@settings(deadline=None, max_examples=500)
@example(delta=1.2601664404182884, mtti=81556147.4375, restart=0.0, factor=1.0000000000000002)  # rounding only
@given(delta=st.floats(1e-3, 1e5), mtti=st.floats(1.0, 1e8), restart=st.floats(0.0, 1e5),
       factor=st.floats(1.0, 1e3))
def test_daly_interval_within_mtti_and_goodput_monotone(delta, mtti, restart, factor):
    """Daly's tau <= M for every delta and M; at Daly's tau, a shorter M never raises goodput (0 where R/M is
    so large that e^(-R/M) underflows)."""
    assert 0 < daly_interval_s(delta, mtti) <= mtti
    shorter = mtti / factor
    high = goodput_fraction(daly_interval_s(delta, mtti), delta, restart, mtti)
    low = goodput_fraction(daly_interval_s(delta, shorter), delta, restart, shorter)
    assert 0 <= low <= high + ROUNDING and high <= 1
