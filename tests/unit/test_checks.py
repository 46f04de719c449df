"""checks.py in plan(): the reliability checks reuse the training prediction's job."""

import pytest

import clusterplan.reliability
from clusterplan.plan import plan
from clusterplan.spec import load_spec


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
    ['workload.model="gpt-1t"', "workload.gpus=8"],   # no layout fits: the checks compute the job themselves
])
def test_plan_computes_goodput_once(catalog, monkeypatch, overrides):
    """plan() computes the job's reliability once, whether or not a layout fits."""
    calls = []
    original = clusterplan.reliability.goodput

    def counted(*args, **kwargs):
        calls.append(kwargs.get("tokens_per_s"))
        return original(*args, **kwargs)

    monkeypatch.setattr(clusterplan.reliability, "goodput", counted)
    planned = plan(load_spec(None, overrides), catalog)
    assert len(calls) == 1
    if planned.training.best:
        assert calls == [planned.training.best.tokens_per_s]
    else:
        assert calls == [None]


def test_plan_without_a_workload_computes_no_goodput(catalog, monkeypatch):
    """No [workload] model: no training, no reliability model (plan start-up stays as it was)."""
    monkeypatch.setattr(clusterplan.reliability, "goodput", lambda *a, **k: pytest.fail("goodput computed"))
    assert plan(load_spec(), catalog).training is None
