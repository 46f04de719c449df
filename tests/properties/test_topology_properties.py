"""Properties of the fabric and rack design: every NIC is wired, no switch or rack is over
its ports or its power, and the oversubscription bound on bisection holds."""

from __future__ import annotations

import math
from dataclasses import replace

from hypothesis import assume, event, given, settings
from hypothesis import strategies as st

from clusterplan.catalog import load_catalog
from clusterplan.design import design, fat_tree
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.spec import load_spec

CATALOG = load_catalog()
GPUS = sorted(CATALOG.families["gpus"])
FABRICS = sorted(CATALOG.families["fabrics"])
TIER_LINKS = {1: ("node-switch",), 2: ("node-leaf", "leaf-spine"),
              3: ("node-leaf", "leaf-aggregation", "aggregation-core")}

fabrics = dict(num_nodes=st.integers(1, 2000), nics_per_node=st.integers(1, 8),
               radix=st.sampled_from([32, 40, 64, 128]), oversubscription=st.sampled_from([1, 1.5, 2, 3]),
               rail_optimized=st.booleans())


def _fat_tree_or_skip(**arguments):
    try:
        return fat_tree(**arguments)
    except ConfigError:
        assume(False)  # needs more than three tiers of this radix


@settings(deadline=None, max_examples=100)
@given(**fabrics)
def test_every_nic_is_wired_within_the_switch_ports(num_nodes, nics_per_node, radix, oversubscription,
                                                    rail_optimized):
    """Each NIC gets one node link, and each tier's links fit in that tier's switch ports."""
    topology = _fat_tree_or_skip(num_nodes=num_nodes, nics_per_node=nics_per_node, radix=radix,
                                 oversubscription=oversubscription, rail_optimized=rail_optimized)
    event(f"{topology.tiers} tiers")
    endpoints = num_nodes * nics_per_node
    assert topology.num_endpoints == endpoints
    assert topology.tiers in (1, 2, 3)
    assert tuple(name for name, _ in topology.links) == TIER_LINKS[topology.tiers]
    assert len(topology.switches) == topology.tiers
    links, switches = dict(topology.links), dict(topology.switches)
    node_links = [count for name, count in topology.links if name.startswith("node-")]
    assert node_links == [endpoints]
    assert topology.ports_used <= topology.ports_available
    assert topology.ports_used == endpoints + 2 * topology.num_switch_links
    assert topology.ports_available == radix * topology.num_switches
    if topology.tiers == 1:
        assert endpoints <= radix and (not rail_optimized or nics_per_node == 1)  # one switch, one rail
        return
    uplinks = topology.links[1][1]
    assert uplinks >= endpoints / oversubscription          # the ratio holds: enough uplinks
    assert endpoints + uplinks <= radix * switches["leaf"]  # leaves: down and up ports
    if topology.tiers == 2:
        assert switches["leaf"] <= radix                    # every spine has a port for every leaf
        assert uplinks <= radix * switches["spine"]
    else:
        assert links["aggregation-core"] == uplinks                  # aggregation is non-blocking
        assert math.ceil(switches["leaf"] / (radix // 2)) <= radix   # every core has a port for every pod
        assert 2 * uplinks <= radix * switches["aggregation"]
        assert uplinks <= radix * switches["core"]


@settings(deadline=None, max_examples=100)
@given(**fabrics)
def test_bisection_fraction_is_at_least_one_over_oversubscription(num_nodes, nics_per_node, radix,
                                                                  oversubscription, rail_optimized):
    """bisection_fraction lies in [1/o, 1] (a leaf of e NICs has ceil(e/o) uplinks), and is 1 at 1:1."""
    topology = _fat_tree_or_skip(num_nodes=num_nodes, nics_per_node=nics_per_node, radix=radix,
                                 oversubscription=oversubscription, rail_optimized=rail_optimized)
    assert 0 < topology.bisection_fraction <= 1
    assert topology.bisection_fraction >= 1 / oversubscription
    if oversubscription == 1 or topology.tiers == 1:
        assert topology.bisection_fraction == 1


@settings(deadline=None, max_examples=100)
@given(**fabrics)
def test_automatic_tiers_are_the_fewest_that_work(num_nodes, nics_per_node, radix, oversubscription,
                                                  rail_optimized):
    """tiers = 0 picks the fewest tiers: asking for one fewer is a ConfigError (or, from two tiers, a single switch
    filled past one leaf's down-ports, which automatic tiers leave for growth); asking for the same is identical."""
    arguments = dict(num_nodes=num_nodes, nics_per_node=nics_per_node, radix=radix,
                     oversubscription=oversubscription, rail_optimized=rail_optimized)
    automatic = _fat_tree_or_skip(**arguments)
    assert fat_tree(**arguments, tiers=automatic.tiers) == automatic
    if automatic.tiers > 1:
        try:
            fewer = fat_tree(**arguments, tiers=automatic.tiers - 1)
        except ConfigError:
            fewer = None
        down = math.floor(radix * oversubscription / (1 + oversubscription))
        assert fewer is None or (fewer.tiers == 1 and fewer.num_endpoints > down)


def test_tier_limits_follow_the_counting_rules():
    """Two tiers take up to radix x down NICs, three up to radix x radix/2 x down; one more needs the next tier."""
    for radix in (32, 40, 64, 128):
        for oversubscription in (1, 1.5, 2, 3):
            down = math.floor(radix * oversubscription / (1 + oversubscription))
            arguments = dict(nics_per_node=1, radix=radix, oversubscription=oversubscription)
            two_tier_max, three_tier_max = radix * down, radix * (radix // 2) * down
            assert fat_tree(num_nodes=two_tier_max, **arguments).tiers == 2
            assert fat_tree(num_nodes=two_tier_max + 1, **arguments).tiers == 3
            assert fat_tree(num_nodes=three_tier_max, **arguments).tiers == 3
            try:
                fat_tree(num_nodes=three_tier_max + 1, **arguments)
            except ConfigError:
                continue
            raise AssertionError(f"{three_tier_max + 1} NICs on {radix}-port switches fit in three tiers")


@st.composite
def rack_scenarios(draw):
    """A spec with any GPU, node count, rack power budget and cooling; a rack-scale server (GB200 NVL72) in whole
    NVLink domains, with a facility budget that takes a fabric switch or storage block (its own rack's draw is the
    system's, bounded by the cooling)."""
    gpu = draw(st.sampled_from(GPUS))
    server = CATALOG.get("servers", CATALOG.get("gpus", gpu).default_server)
    per = server.servers_per_domain
    spec = load_spec(overrides=[
        f'cluster.gpu="{gpu}"', f"cluster.gpus_per_node={server.num_gpus}",
        f"network.nics_per_node={draw(st.integers(1, server.max_nics))}",
        f'network.fabric="{draw(st.sampled_from(FABRICS))}"',
        f'facility.cooling="{draw(st.sampled_from(["liquid", "air"]))}"',
        f'facility.rack="{draw(st.sampled_from(["rack-48u", "rack-42u"]))}"', "network.tiers=0"])
    facility = replace(spec.facility, rack_power_kw=draw(st.floats(2.0 if per == 1 else 20.0, 200.0)))
    return replace(spec, facility=facility).with_nodes(draw(st.integers(1, 2000 // per)) * per)


@settings(deadline=None, max_examples=100)
@given(spec=rack_scenarios())
def test_racks_stay_within_power_and_hold_every_server(spec):
    """No rack draws over its budget (kW and cooling limit), compute racks hold every node, no spare rack."""
    parts = CATALOG.get("servers", CATALOG.get("gpus", spec.cluster.gpu).default_server)
    nic_optics = CATALOG.get("transceivers", CATALOG.get("fabrics", spec.network.fabric).nic_transceiver)
    cooling = CATALOG.get("cooling", spec.facility.cooling)
    budget_w = min(spec.facility.rack_power_kw * 1e3, cooling.max_rack_power_w)
    server_w = parts.max_power_w + spec.network.nics_per_node * nic_optics.power_w
    rack_w = server_w   # the least a compute rack holds: one server, or one rack-scale domain with its switch trays
    if parts.servers_per_domain > 1:
        budget_w = cooling.max_rack_power_w   # a domain rack's draw is the system's; the cooling must take it
        rack_w = (parts.servers_per_domain * server_w
                  + parts.domain_switches * CATALOG.get("switches", parts.domain_switch).power_w)
    try:
        built = design(spec, CATALOG)
    except InfeasiblePlan:
        event("infeasible")
        assert budget_w < rack_w  # infeasible only when one server (or domain) is over a rack's budget
        return
    racks, nodes = built.racks, spec.cluster.num_nodes
    assert racks.budget_w == budget_w
    assert racks.max_rack_power_w <= racks.budget_w
    assert racks.servers_per_rack >= 1
    assert racks.servers_per_rack * server_w <= racks.budget_w
    assert racks.servers_per_rack * parts.rack_units <= racks.rack_units
    assert racks.compute_racks * racks.servers_per_rack >= nodes
    assert (racks.compute_racks - 1) * racks.servers_per_rack < nodes
    assert racks.compute_racks == math.ceil(nodes / racks.servers_per_rack)
    assert racks.infrastructure_racks >= 1  # switches and storage always need a home


@st.composite
def cluster_sizes(draw):
    """The reference at any size from 8 to 32,768 GPUs, on any fabric, topology and oversubscription."""
    gpus = draw(st.one_of(st.integers(1, 4096), st.sampled_from([1, 16, 128, 1024, 2048, 4096]))) * 8
    return load_spec(overrides=[
        f"cluster.num_nodes={gpus // 8}", f'network.fabric="{draw(st.sampled_from(FABRICS))}"',
        f'network.topology="{draw(st.sampled_from(["fat-tree", "rail-optimized"]))}"',
        f"network.oversubscription={draw(st.sampled_from([1, 2, 3]))}"])


@settings(deadline=None, max_examples=60)
@given(spec=cluster_sizes())
def test_every_size_designs_with_automatic_tiers_cables_staff_and_storage(spec):
    """8..32,768 GPUs: the reference's automatic tiers connect the cluster; each tier's links get the cheapest
    medium that reaches (copper only inside a rack); staff and storage follow their per-GPU rules."""
    built = design(spec, CATALOG)
    gpus, media = spec.cluster.num_gpus, built.parts.media
    event(f"{built.topology.tiers} tiers")
    assert built.topology.num_endpoints == spec.cluster.num_nodes * spec.network.nics_per_node
    assert [run.link for run in built.cabling] == [link for link, _ in built.topology.links]
    assert [run.count for run in built.cabling] == [count for _, count in built.topology.links]
    lengths = [run.length_m for run in built.cabling]
    assert lengths[0] == min(lengths), "node links are the shortest"
    for index, run in enumerate(built.cabling):
        event(f"{run.link}: {run.medium}")
        assert run.length_m <= run.cable.reach_m, f"{run.link} {run.length_m:.0f} m over {run.cable.id}"
        assert run.cables * run.cable.links >= run.count
        if run.medium == "copper":
            assert index == 0 and run.nic_modules == run.switch_modules == 0
        else:
            assert run.switch_modules * run.switch_transceiver.ports >= run.count * (1 if index == 0 else 2)
        if run.medium == "singlemode" and media.cable.medium == "multimode":
            assert run.length_m > media.cable.reach_m, "single-mode only past multimode's reach"
        if media.copper is not None and index == 0 and run.length_m <= media.copper.reach_m:
            assert run.medium == "copper", "a node link inside a rack is copper"
    assert built.nic_transceivers == sum(run.nic_modules for run in built.cabling)
    assert built.staff.ops_engineers == max(2, math.ceil(gpus / 256)) == built.staff.setup_engineers
    assert built.storage_tb >= 1.5625 * gpus
    assert built.storage_read_Bps >= 0.5e9 * gpus
