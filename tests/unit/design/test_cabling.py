"""Cables by distance (docs/topology.md): media and lengths from the rack layout and tier (issue 18 item 4)."""

import pytest

from clusterplan.cost import bill_of_materials
from clusterplan.design import design
from clusterplan.design.cabling import SLACK_M, span_m
from clusterplan.spec import load_spec


def built(catalog, *overrides):
    return design(load_spec(overrides=list(overrides)), catalog)


def runs(design_):
    return {run.link: run for run in design_.cabling}


def test_span_by_hand():
    """16 racks fill one row: 8 x 0.6 m to the middle; 33 racks are 3 rows: 4.8 m along and 3 m across."""
    assert span_m(1) == pytest.approx(0.3)
    assert span_m(16) == pytest.approx(4.8)
    assert span_m(33) == pytest.approx(4.8 + 3.0)


def test_one_node_cables_in_its_rack_with_copper(catalog):
    """8 GPUs and their switch share a rack: 8 links on two 1:4 copper splitters, no optics."""
    run = runs(built(catalog, "cluster.num_nodes=1"))["node-switch"]
    assert (run.medium, run.length_m, run.cables, run.nic_modules, run.switch_modules) == ("copper", 2.0, 2, 0, 0)


def test_the_reference_is_multimode_to_its_leaves(catalog):
    """128 GPUs on two leaves and a spine: each leaf's 8 nodes span 2 racks, the spine every rack (5 with the
    network rack); all within multimode's 50 m."""
    design_ = built(catalog)
    tiers = runs(design_)
    assert set(tiers) == {"node-leaf", "leaf-spine"}
    assert {run.medium for run in tiers.values()} == {"multimode"}
    assert tiers["node-leaf"].length_m == pytest.approx(span_m(2) + SLACK_M)
    assert tiers["leaf-spine"].length_m == pytest.approx(span_m(design_.racks.num_racks) + SLACK_M)
    assert (tiers["node-leaf"].nic_modules, tiers["node-leaf"].cables) == (128, 128)


def test_one_switch_when_asked_is_multimode_to_it(catalog):
    """network.tiers = 1: 128 NICs on one 128-port switch, one multimode run per NIC."""
    run = runs(built(catalog, "network.tiers=1"))["node-switch"]
    assert run.medium == "multimode" and run.length_m == pytest.approx(span_m(4) + SLACK_M)
    assert (run.nic_modules, run.switch_modules, run.cables) == (128, 32, 128)


def test_1024_gpus_stay_multimode_in_one_room(catalog):
    """1,024 GPUs: node-leaf and leaf-spine both multimode, leaf-spine across the floor's 33 racks."""
    design_ = built(catalog, "cluster.num_nodes=128")
    tiers = runs(design_)
    assert {run.medium for run in tiers.values()} == {"multimode"}
    assert tiers["leaf-spine"].length_m == pytest.approx(span_m(design_.racks.num_racks) + SLACK_M)


def test_16384_gpus_go_single_mode_between_rows(catalog):
    """16,384 GPUs: aggregation-core links cross 30+ rows (over 50 m) on single-mode optics; lower tiers stay
    multimode; the BoM prices both media and says which tier each serves."""
    design_ = built(catalog, "cluster.num_nodes=2048")
    tiers = runs(design_)
    assert tiers["node-leaf"].medium == tiers["leaf-aggregation"].medium == "multimode"
    core = tiers["aggregation-core"]
    assert core.medium == "singlemode" and core.length_m > 50
    assert core.switch_transceiver.id == "osfp-800g-twin-dr8-split4" and core.cable.id == "smf-mpo12-500m"
    assert core.switch_modules == 2 * 16384 // 4
    lines = {line.catalog_id: line for line in bill_of_materials(design_)}
    assert lines["smf-mpo12-500m"].quantity == 16384 and "aggregation-core, single-mode" in lines["smf-mpo12-500m"].item
    assert lines["mpo-fiber-30m"].quantity == 2 * 16384


def test_without_single_mode_parts_the_fabric_keeps_its_own_optics(catalog):
    """roce-100g's standard optics are already single-mode (DR, 500 m): every tier uses them, whatever its length."""
    tiers = runs(built(catalog, 'network.fabric="roce-100g"', "cluster.num_nodes=2048"))
    assert {run.cable.id for run in tiers.values() if run.medium != "copper"} == {"smf-breakout-30m"}
