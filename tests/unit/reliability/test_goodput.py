"""goodput() (reliability/model.py): the job's reliability on its design, its storage needs and burst buffer."""

import ast
from pathlib import Path

import pytest

import clusterplan.reliability
from clusterplan.checks import reliability_checks
from clusterplan.cost.bom import bill_of_materials
from clusterplan.design import design
from clusterplan.errors import ConfigError
from clusterplan.perf.presets import preset
from clusterplan.plan.reliability import reliability_settings, scenario_rates
from clusterplan.reliability import Settings, goodput
from clusterplan.reliability.checkpoint import daly_interval_s
from clusterplan.spec import load_spec

LLAMA2_13B = 13_015_864_320   # meta-llama/Llama-2-13b-hf parameter count


def job(catalog, *overrides, gpus=None, model="llama2-13b", **kwargs):
    """The scenario's job (the reference's 128 GPUs unless ``gpus``) with the scenario's settings and rates."""
    spec = load_spec(None, list(overrides))
    built = design(spec, catalog)
    model = preset(model)
    return spec, built, goodput(reliability_settings(spec), built, scenario_rates(spec, catalog), model=model.name,
                                params=model.params, num_gpus=gpus or built.num_gpus, tokens=spec.workload.tokens,
                                **kwargs)


def test_reference_job_by_hand(catalog):
    """Reference, llama2-13b: 14 B/param, written at the one nvme-pfs block's 65 GB/s, copied at 64 GB/s per GPU."""
    _, _, result = job(catalog)
    assert result.model == "llama2-13b" and result.params == LLAMA2_13B
    assert result.checkpoint_bytes == LLAMA2_13B * 14
    assert result.checkpoint_write_s == pytest.approx(LLAMA2_13B * 14 / 65e9)
    assert result.checkpoint.copy_s == pytest.approx(LLAMA2_13B * 14 / 128 / 64e9)
    # GPUs, hosts, NIC links, the 128 leaf-spine links, the 3 switches, software per node
    per_day = (0.361 * 128 + 0.412 * 16 + 0.0187 * 128 + 0.0187 * 128 + 0.0168 * 3 + 0.712 * 16) / 1000
    assert result.interruptions_per_day == pytest.approx(per_day)
    assert result.expected_interruptions == pytest.approx(per_day * 21)
    blocking = 6 + result.checkpoint.copy_s   # asynchronous: metadata and copy
    assert result.outcome.blocking_s == pytest.approx(blocking)
    assert result.interval_s == pytest.approx(daly_interval_s(blocking, result.mtti_s))
    assert result.outcome.restart.total_s == pytest.approx(300 + 600 + LLAMA2_13B * 14 / 90e9
                                                           + result.checkpoint_write_s)
    assert 0.99 < result.goodput < 1
    assert sum(result.waste_by_cause().values()) == pytest.approx(1 - result.goodput)
    assert result.spares.spare_nodes == 1   # 0.11 nodes in repair: P(X <= 1) = 0.994


def test_async_checkpoints_raise_goodput(catalog):
    """On the reference, synchronous checkpoints block for the write as well and lose more."""
    _, _, sync = job(catalog, "reliability.async_checkpoint=false")
    _, _, asynchronous = job(catalog)
    assert sync.outcome.blocking_s == pytest.approx(6 + sync.checkpoint_write_s)
    assert asynchronous.goodput > sync.goodput


def test_tokens_per_s_sets_the_read_need(catalog):
    """With the training model's tokens/s, data loading needs tokens/s x 4 B; without, 0.5 GB/s x 128 GPUs."""
    _, _, fed = job(catalog, tokens_per_s=1e6)
    _, _, profile = job(catalog)
    assert fed.storage.read_Bps == 4e6 and "tokens_per_s" in fed.storage.read_basis
    assert profile.storage.read_Bps == 0.5e9 * 128


def test_dataset_from_the_token_budget(catalog):
    """dataset_tb = 0 takes workload.tokens x bytes_per_token: 2T tokens x 4 B = 8 TB."""
    _, _, result = job(catalog, "workload.tokens=2T")
    assert result.storage.dataset_tb == pytest.approx(8.0)
    assert result.storage.checkpoints_tb == pytest.approx(3 * LLAMA2_13B * 14 / 1e12)


SLOW = ("cluster.num_nodes=32", "storage.tier=qlc-flash", "storage.usable_tb=4000",
        "reliability.async_checkpoint=false")


def test_burst_buffer_recommended_when_the_main_tier_is_too_slow(catalog):
    """405B on 256 GPUs written synchronously to one QLC block (20 GB/s) costs over 2 % of goodput: one nvme-pfs block
    fixes it."""
    _, _, result = job(catalog, *SLOW, model="llama3.1-405b")
    storage = result.storage
    assert storage.storage_cost > 0.02 and storage.recommended is not None
    assert storage.recommended.tier == "nvme-pfs" and storage.recommended.units == 1
    assert storage.ideal_goodput - storage.recommended.goodput <= 0.02
    assert storage.recommended.usd == 250 * 700
    assert any("burst buffer of 1 x nvme-pfs" in w for w in reliability_checks(result))


def test_configured_burst_buffer_takes_the_checkpoints_and_is_bought(catalog):
    """storage.burst_buffer_tb = 250: checkpoints go to it at 65 GB/s, and the BoM has its line."""
    spec, built, result = job(catalog, *SLOW, "storage.burst_buffer_tb=250", model="llama3.1-405b")
    assert result.checkpoint.write_Bps == 65e9 and result.storage.checkpoint_tier == "nvme-pfs (burst buffer)"
    assert result.storage.recommended is None and result.storage.storage_cost <= 0.02
    assert result.storage.drain_Bps == pytest.approx(result.checkpoint_bytes / result.interval_s)
    lines = [line for line in bill_of_materials(built) if "burst buffer" in line.item]
    assert len(lines) == 1 and lines[0].quantity == 250 and lines[0].catalog_id == "nvme-pfs"
    without = design(load_spec(None, list(SLOW)), catalog)
    assert built.burst_buffer_units == 1 and without.burst_buffer_units == 0
    assert built.it_power_w - without.it_power_w == pytest.approx(2500)   # one 2.5 kW nvme-pfs block
    assert not any("burst buffer" in line.item for line in bill_of_materials(without))


def test_client_limited_jobs_get_no_burst_buffer(catalog):
    """One node cannot write faster than its client: no burst buffer meets a 0.01 % target."""
    _, _, result = job(catalog, *SLOW, "reliability.target_overhead=0.0001", gpus=8, model="llama3.1-405b")
    assert result.storage.recommended is None and result.storage.client_limited
    assert any("clients are the limit" in w for w in reliability_checks(result))


def test_capacity_and_read_warnings(catalog):
    """20T tokens (80 TB) on 50 TB, and a 1 GB/s-per-GPU read profile on 90 GB/s, are both flagged."""
    _, _, result = job(catalog, "workload.tokens=20T", "storage.usable_tb=50",
                       "storage.read_Bps_per_gpu=1GB/s")
    warnings = reliability_checks(result)
    assert any("need 80.5 TB, the tier holds 50 TB" in w for w in warnings)
    assert any("data loading needs 128.0 GB/s" in w for w in warnings)
    assert not any("data loading" in w for w in reliability_checks(result, read=False))


def test_bad_jobs_are_config_errors(catalog):
    """A job that is not whole nodes, or a cluster with no storage, is a one-line ConfigError."""
    with pytest.raises(ConfigError, match="whole nodes of 8"):
        job(catalog, gpus=12, model="llama2-7b")
    with pytest.raises(ConfigError, match="no storage to checkpoint to"):
        job(catalog, "storage.usable_tb=0", model="llama2-7b")


def test_a_useful_time_sets_the_run_length_not_the_goodput(catalog):
    """With ``useful_s`` the run lasts useful_s / goodput (days); without, settings.days; goodput is the same."""
    _, _, open_ended = job(catalog)
    _, _, budgeted = job(catalog, useful_s=30 * 86400.0)
    assert open_ended.days == 21 and budgeted.goodput == open_ended.goodput
    assert budgeted.days == pytest.approx(30 / budgeted.goodput)
    assert budgeted.expected_interruptions == pytest.approx(budgeted.interruptions_per_day * budgeted.days)


def test_settings_are_the_models_whole_view_of_the_scenario(catalog):
    """Settings built by hand (seconds, not minutes) give the figures the scenario's do."""
    spec, built, result = job(catalog)
    chosen = spec.reliability
    by_hand = Settings(days=21.0, interval_s=0.0, async_checkpoint=True, checkpoint_metadata_s=6.0,
                       checkpoint_bytes_per_param=14.0, checkpoints_kept=chosen.checkpoints_kept, dataset_tb=0.0,
                       bytes_per_token=4.0, read_Bps_per_gpu=0.5e9, detect_s=300.0, restart_overhead_s=600.0,
                       repair_s=chosen.repair_hours * 3600, spare_confidence=chosen.spare_confidence,
                       target_overhead=0.02)
    assert by_hand == reliability_settings(spec)
    again = goodput(by_hand, built, scenario_rates(spec, catalog), model="llama2-13b", params=LLAMA2_13B, num_gpus=128)
    assert again == result


FORBIDDEN = ("clusterplan.perf", "clusterplan.spec", "clusterplan.plan", "clusterplan.report", "clusterplan.cli")


def test_reliability_is_a_leaf():
    """The package imports neither perf nor spec (nor anything above it) and never loads the catalog itself."""
    for path in Path(clusterplan.reliability.__file__).parent.glob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                assert not (node.module or "").startswith(FORBIDDEN), f"{path.name} imports {node.module}"
            elif isinstance(node, ast.Import):
                assert not any(alias.name.startswith(FORBIDDEN) for alias in node.names), path.name
            elif isinstance(node, ast.Name | ast.Attribute):
                assert getattr(node, "id", getattr(node, "attr", "")) != "load_catalog", path.name
