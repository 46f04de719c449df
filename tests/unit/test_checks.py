"""checks.py: the design checks from the values they need, and in plan() the reliability checks reuse the
training prediction's job."""

import pytest

import clusterplan.plan.reliability
from clusterplan.checks import design_checks
from clusterplan.plan import own, plan
from clusterplan.spec import load_spec

SLOW = ("workload.model=llama3.1-405b", "cluster.num_nodes=32", "storage.tier=qlc-flash", "storage.usable_tb=4000",
        "reliability.async_checkpoint=false")


def test_plan_data_loading_check_uses_the_predicted_tokens_per_s(catalog):
    """With a training prediction, data loading is its tokens/s x bytes per token, not the per-GPU profile."""
    spec = load_spec(None, ['workload.model="llama2-13b"', "reliability.bytes_per_token=1e6"])
    planned = plan(spec, catalog)
    need_GBps = planned.training.best.tokens_per_s * 1e6 / 1e9
    assert planned.training.reliability.storage.read_Bps == pytest.approx(need_GBps * 1e9)
    loading = [w for w in planned.warnings if "data loading" in w]
    assert loading == [f"storage: data loading needs {need_GBps:,.1f} GB/s (tokens_per_s x "
                       f"reliability.bytes_per_token), the tier gives the job's 16 nodes 90.0 GB/s"]


@pytest.mark.parametrize("overrides", [
    ['workload.model="llama2-13b"', 'workload.tokens="2T"'],
    ['workload.model="gpt-1t"', "workload.gpus=8"],   # no layout fits: the plan computes the job at the read profile
])
def test_plan_computes_goodput_once(catalog, monkeypatch, overrides):
    """plan() computes the job's reliability once, whether or not a layout fits."""
    calls = []
    original = clusterplan.plan.reliability.goodput

    def counted(*args, **kwargs):
        calls.append(kwargs.get("tokens_per_s"))
        return original(*args, **kwargs)

    monkeypatch.setattr(clusterplan.plan.reliability, "goodput", counted)
    planned = plan(load_spec(None, overrides), catalog)
    assert len(calls) == 1
    if planned.training.best:
        assert calls == [planned.training.best.tokens_per_s]
    else:
        assert calls == [None]


def test_plan_without_a_workload_computes_no_goodput(catalog, monkeypatch):
    """No [workload] model: no training, no reliability model (plan start-up stays as it was)."""
    monkeypatch.setattr(clusterplan.plan.reliability, "goodput", lambda *a, **k: pytest.fail("goodput computed"))
    assert plan(load_spec(), catalog).training is None


def test_plan_warns_about_checkpoints_when_a_workload_is_named(catalog):
    """clusterplan plan runs the checkpoint checks for a named workload and stays silent without one."""
    slow = plan(load_spec(None, list(SLOW)), catalog)
    assert any("burst buffer" in w for w in slow.warnings)
    quiet = plan(load_spec(None, [s for s in SLOW if not s.startswith("workload")]), catalog)
    assert not any("burst buffer" in w for w in quiet.warnings)


def test_design_checks_take_only_the_values_they_need(reference, reference_plan):
    """The scenario's five figures are all the checks read of it: with the reference's they give the plan's
    warnings, and a rack budget, read profile or utilization changed changes its own line."""
    built, owned = reference_plan.design, reference_plan.costs
    rent = [rental.cost for rental in reference_plan.rentals]
    values = dict(rack_power_kw=reference.facility.rack_power_kw, oversubscription=reference.network.oversubscription,
                  read_Bps_per_gpu=reference.storage.read_Bps_per_gpu, utilization=reference.finance.utilization,
                  years=reference.finance.years)
    assert design_checks(built, owned, rent, **values) == reference_plan.warnings
    assert any("utilization 95%" in w for w in design_checks(built, owned, rent, **{**values, "utilization": 0.95}))
    assert any("the 128 GPUs need 1,280 GB/s (10 GB/s each)" in w
               for w in design_checks(built, owned, rent, **{**values, "read_Bps_per_gpu": 10e9}))
    assert any("not to the 200 kW budget" in w
               for w in design_checks(built, owned, rent, **{**values, "rack_power_kw": 200.0}))


def test_workload_without_storage_is_flagged(reference, catalog):
    """A named workload on a cluster without storage: one line saying goodput is not modelled."""
    spec = load_spec(None, ["storage.usable_tb=0"])
    built, owned = own(spec, catalog)
    values = dict(rack_power_kw=spec.facility.rack_power_kw, oversubscription=1.0, read_Bps_per_gpu=0.0,
                  utilization=0.7, years=5)
    named = design_checks(built, owned, (), **values, workload=True)
    assert sum("the cluster has no storage" in w for w in named) == 1
    assert not any("the cluster has no storage" in w for w in design_checks(built, owned, (), **values))
