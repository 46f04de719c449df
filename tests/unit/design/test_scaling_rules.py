"""Staff and storage scale with the cluster by default; an explicit number binds (issue 18 item 3)."""

import math

import pytest

from clusterplan.design import design
from clusterplan.errors import ConfigError
from clusterplan.plan import plan
from clusterplan.spec import load_spec


@pytest.mark.parametrize(("nodes", "engineers"), [(1, 2), (16, 2), (128, 4), (2048, 64), (4096, 128)])
def test_engineers_are_one_per_256_gpus_and_at_least_two(catalog, nodes, engineers):
    """8 and 128 GPUs: 2 (the floor); 1,024: 4; 16,384: 64; 32,768: 128 ops engineers, and as many for setup."""
    built = design(load_spec(overrides=[f"cluster.num_nodes={nodes}"]), catalog)
    assert built.staff.ops_engineers == engineers == built.staff.setup_engineers
    assert "1 per 256 GPUs, at least 2" in built.staff.ops_rule


def test_staff_cost_and_its_rule_reach_the_opex_and_one_off_lines(catalog):
    """At 16,384 GPUs the staff opex is 64 x $252K a year and the setup line says 64 for 3 months and why."""
    result = plan(load_spec(overrides=["cluster.num_nodes=2048"]), catalog)
    assert result.costs.opex_usd_per_year["staff"] == pytest.approx(64 * 252_000)
    setup = [line for line in result.costs.one_off if line.item.startswith("Setup engineers")]
    assert len(setup) == 1 and setup[0].quantity == pytest.approx(64 * 3 / 12)
    assert "64 for 3 months, 1 per 256 GPUs" in setup[0].item


def test_an_explicit_staff_number_binds(catalog):
    """staff.ops_engineers = 3 at 16,384 GPUs is 3, named as the scenario's; "auto" is the rule again."""
    fixed = design(load_spec(overrides=["cluster.num_nodes=2048", "staff.ops_engineers=3"]), catalog)
    assert fixed.staff.ops_engineers == 3 and fixed.staff.ops_rule == "staff.ops_engineers"
    assert fixed.staff.setup_engineers == 64
    auto = design(load_spec(overrides=["cluster.num_nodes=2048", "staff.ops_engineers=auto"]), catalog)
    assert auto.staff.ops_engineers == 64


@pytest.mark.parametrize("nodes", [1, 16, 128, 2048, 4096])
def test_auto_storage_is_capacity_per_gpu_in_blocks_that_also_read_fast_enough(catalog, nodes):
    """tb_per_gpu x GPUs (200 TB at 128 GPUs), and never fewer blocks than 500 MB/s per GPU needs."""
    built = design(load_spec(overrides=[f"cluster.num_nodes={nodes}"]), catalog)
    tier, gpus = built.parts.storage, nodes * 8
    assert built.storage_tb >= 1.5625 * gpus
    assert built.storage_units == math.ceil(built.storage_tb / tier.unit_capacity_tb)
    assert built.storage_read_Bps >= 0.5e9 * gpus
    if nodes == 16:
        assert built.storage_tb == 200 and built.storage_units == 1


def test_read_bandwidth_can_set_the_block_count(catalog):
    """At 4 GB/s per GPU, 16,384 GPUs need 729 blocks of 90 GB/s: bought for bandwidth, their capacity counted."""
    built = design(load_spec(overrides=["cluster.num_nodes=2048", "storage.read_Bps_per_gpu=4GB/s"]), catalog)
    assert built.storage_units == math.ceil(4e9 * 16384 / 90e9) == 729
    assert built.storage_tb == 729 * 250 and "blocks to read 4,000 MB/s per GPU" in built.storage_rule


def test_an_explicit_capacity_binds(catalog):
    """storage.usable_tb = 200 at 16,384 GPUs stays one block; the checks then flag the slow tier."""
    result = plan(load_spec(overrides=["cluster.num_nodes=2048", "storage.usable_tb=200"]), catalog)
    assert result.design.storage_units == 1 and result.design.storage_rule == "storage.usable_tb"
    assert any("the 16,384 GPUs need 8,192 GB/s" in warning for warning in result.warnings)


def test_auto_storage_at_the_limit_is_answered_and_past_it_is_bad_input(catalog):
    """125 TB per GPU on 8,000 GPUs is the 1,000,000 TB an explicit storage.usable_tb may have: 4,000 blocks of
    250 TB. A thousandth of a TB per GPU more is refused, naming storage.tb_per_gpu (issue 31)."""
    built = design(load_spec(overrides=["cluster.num_nodes=1000", "storage.tb_per_gpu=125"]), catalog)
    assert built.storage_tb == 1_000_000 and built.storage_units == 4_000
    with pytest.raises(ConfigError, match="more than the 1,000,000 TB") as error:
        design(load_spec(overrides=["cluster.num_nodes=1000", "storage.tb_per_gpu=125.001"]), catalog)
    assert error.value.key == "storage.tb_per_gpu"
