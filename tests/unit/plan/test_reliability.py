"""plan/reliability.py: the reliability command's result, and the scenario joined for the reliability model."""

import dataclasses
import re

import pytest

from clusterplan.catalog import Catalog
from clusterplan.errors import ConfigError
from clusterplan.plan import plan
from clusterplan.plan.reliability import DEFAULT_MODEL, reliability, reliability_settings
from clusterplan.spec import load_spec


def test_default_model_and_the_whole_cluster(catalog):
    """No [workload] model: llama2-13b on every GPU, and the sweep from one node to the whole cluster."""
    result = reliability(load_spec(), catalog)
    assert result.job.model == DEFAULT_MODEL == "llama2-13b" and result.job.job.num_gpus == 128
    assert [size.job.num_gpus for size in result.sizes] == [8, 16, 32, 64, 128]
    assert result.sizes[-1] == result.job
    assert result.spec == load_spec()


def test_the_scenario_s_job_and_its_checks(catalog):
    """The scenario's model on its whole cluster, with the job's storage checks; a job of part of a node is an
    error naming workload.gpus."""
    spec = load_spec(None, ['workload.model="llama3.1-405b"', "cluster.num_nodes=32", 'storage.tier="qlc-flash"',
                            "storage.usable_tb=4000", "reliability.async_checkpoint=false"])
    result = reliability(spec, catalog)
    assert result.job.model == "llama3.1-405b" and result.job.job.num_gpus == 256
    assert any("burst buffer" in warning for warning in result.warnings)
    with pytest.raises(ConfigError, match="not whole nodes of 8"):
        reliability(dataclasses.replace(spec, workload=dataclasses.replace(spec.workload, gpus=12)), catalog)


def test_failure_rates_come_from_the_catalog_given(catalog):
    """The command's rates are the given catalog's, not the shipped one's."""
    fragile_gpu = dataclasses.replace(catalog.get("failures", "gpu"), per_1000_unit_days=50.0,
                                      low_per_1000_unit_days=None, high_per_1000_unit_days=None)
    fragile = Catalog({**catalog.families, "failures": {**catalog.families["failures"], "gpu": fragile_gpu}})
    assert reliability(load_spec(), fragile).job.goodput < reliability(load_spec(), catalog).job.goodput


def test_settings_in_seconds():
    """Minutes and hours of [reliability] become seconds; the per-GPU read profile comes from [storage]."""
    spec = load_spec(None, ["reliability.checkpoint_interval_min=30", "reliability.repair_hours=2",
                            'storage.read_Bps_per_gpu="1GB/s"'])
    chosen = reliability_settings(spec)
    assert (chosen.interval_s, chosen.repair_s, chosen.read_Bps_per_gpu) == (1800, 7200, 1e9)
    assert chosen.detect_s == spec.reliability.detect_min * 60 and chosen.days == spec.reliability.days


@pytest.mark.parametrize(("override", "key"), [
    ('reliability.failures=["meteor"]', "reliability.failures[0]"),
    ("reliability.failure_rates={meteor=1}", "reliability.failure_rates.meteor"),
])
def test_an_unknown_failure_cause_fails_every_command(override, key):
    """`plan` rejects an unknown cause as `reliability` does, naming the key (regression, issue 19 item 3)."""
    with pytest.raises(ConfigError, match=re.escape(key)):
        plan(load_spec(None, [override]))


def test_the_checkpoint_counts_the_position_table_of_the_trained_context(catalog):
    """workload.seq_len past a learned-position model's context grows its table: the checkpoint counts it."""
    base = reliability(load_spec(None, ['workload.model="gpt-1.7b"']), catalog).job
    longer = reliability(load_spec(None, ['workload.model="gpt-1.7b"', "workload.seq_len=8192"]), catalog).job
    assert longer.params - base.params == (8192 - 2048) * 2304
    assert longer.checkpoint.size_bytes > base.checkpoint.size_bytes
