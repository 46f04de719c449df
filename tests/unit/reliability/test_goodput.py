"""goodput() (reliability/model.py): the job's reliability on its design, its storage needs and burst buffer."""

import json

import pytest

from clusterplan.checks import reliability_checks
from clusterplan.cost.bom import bill_of_materials
from clusterplan.design import design
from clusterplan.errors import ConfigError
from clusterplan.perf.model import preset
from clusterplan.plan import plan
from clusterplan.reliability import DEFAULT_MODEL, goodput, job_gpus, workload_model
from clusterplan.reliability.checkpoint import daly_interval_s
from clusterplan.spec import load_spec

LLAMA2_13B = 13_015_864_320   # meta-llama/Llama-2-13b-hf parameter count


def job(catalog, *overrides, gpus=None, **kwargs):
    spec = load_spec(None, list(overrides))
    built = design(spec, catalog)
    return spec, built, goodput(spec, built, workload_model(spec.workload), gpus or job_gpus(spec.workload, built),
                                catalog=catalog, **kwargs)


def test_reference_job_by_hand(catalog):
    """Reference, llama2-13b: 14 B/param, written at the one nvme-pfs block's 65 GB/s, copied at 64 GB/s per GPU."""
    _, _, result = job(catalog)
    assert result.model == DEFAULT_MODEL == "llama2-13b" and result.params == LLAMA2_13B
    assert result.checkpoint_bytes == LLAMA2_13B * 14
    assert result.checkpoint_write_s == pytest.approx(LLAMA2_13B * 14 / 65e9)
    assert result.checkpoint.copy_s == pytest.approx(LLAMA2_13B * 14 / 128 / 64e9)
    per_day = (0.361 * 128 + 0.412 * 16 + 0.0187 * 128 + 0.0168 * 3 + 1.57 * 16) / 1000
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


SLOW = ("workload.model=llama3.1-405b", "cluster.num_nodes=32", "storage.tier=qlc-flash", "storage.usable_tb=4000",
        "reliability.async_checkpoint=false")


def test_burst_buffer_recommended_when_the_main_tier_is_too_slow(catalog):
    """405B on 256 GPUs written synchronously to one QLC block (20 GB/s) costs over 2 % of goodput: one nvme-pfs block
    fixes it."""
    _, _, result = job(catalog, *SLOW)
    storage = result.storage
    assert storage.storage_cost > 0.02 and storage.recommended is not None
    assert storage.recommended.tier == "nvme-pfs" and storage.recommended.units == 1
    assert storage.ideal_goodput - storage.recommended.goodput <= 0.02
    assert storage.recommended.usd == 250 * 700
    assert any("burst buffer of 1 x nvme-pfs" in w for w in reliability_checks(result))


def test_configured_burst_buffer_takes_the_checkpoints_and_is_bought(catalog):
    """storage.burst_buffer_tb = 250: checkpoints go to it at 65 GB/s, and the BoM has its line."""
    spec, built, result = job(catalog, *SLOW, "storage.burst_buffer_tb=250")
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
    _, _, result = job(catalog, *SLOW, "reliability.target_overhead=0.0001", gpus=8)
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


def test_plan_warns_about_checkpoints_when_a_workload_is_named(catalog):
    """clusterplan plan runs the checkpoint checks for a named workload and stays silent without one."""
    slow = plan(load_spec(None, list(SLOW)), catalog)
    assert any("burst buffer" in w for w in slow.warnings)
    quiet = plan(load_spec(None, [s for s in SLOW if not s.startswith("workload")]), catalog)
    assert not any("burst buffer" in w for w in quiet.warnings)


def test_bad_jobs_are_config_errors(catalog):
    """A job that is not whole nodes, or a cluster with no storage, is a one-line ConfigError."""
    spec = load_spec()
    built = design(spec, catalog)
    with pytest.raises(ConfigError, match="whole nodes of 8"):
        goodput(spec, built, preset("llama2-7b"), 12)
    empty = load_spec(None, ["storage.usable_tb=0"])
    with pytest.raises(ConfigError, match="no storage to checkpoint to"):
        goodput(empty, design(empty, catalog), preset("llama2-7b"), 128)


def test_workload_model_from_preset_or_config(tmp_path):
    """A preset by name, a config.json by path, and an unreadable path named in the error."""
    from clusterplan.spec import Workload

    assert workload_model(Workload(model="llama3-8b")).name == "llama3-8b"
    config = tmp_path / "config.json"
    config.write_text(json.dumps({"num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
                                  "intermediate_size": 512, "vocab_size": 1000, "max_position_embeddings": 128}))
    assert workload_model(Workload(model_config=str(config))).layers == 2
    with pytest.raises(ConfigError, match="workload.model_config: cannot read"):
        workload_model(Workload(model_config=str(tmp_path / "missing.json")))
    with pytest.raises(ConfigError, match="workload.model: unknown model"):
        workload_model(Workload(model="llama9"))
