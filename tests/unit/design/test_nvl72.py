"""Rack-scale NVLink domains in the design: GB200 NVL72 racks, their switch trays and power (docs/nvl72.md)."""

import pytest

from clusterplan.cost.bom import bill_of_materials
from clusterplan.design import design
from clusterplan.design.racks import Gear, lay_out_domains
from clusterplan.errors import ConfigError, InfeasiblePlan
from clusterplan.spec import load_spec

NVL72 = ['cluster.gpu="gb200"', 'cluster.server="gb200-nvl72"', "cluster.gpus_per_node=4",
         'network.fabric="ib-ndr400"', "network.nics_per_node=4", 'facility.cooling="liquid"']


def nvl72(catalog, gpus: int, *more: str):
    return design(load_spec(overrides=[*NVL72, f"cluster.num_nodes={gpus // 4}", *more]), catalog)


@pytest.mark.parametrize(("gpus", "racks", "trays"), [(72, 1, 9), (144, 2, 18), (1152, 16, 144)])
def test_each_rack_is_one_72_gpu_domain_with_nine_switch_trays(catalog, gpus, racks, trays):
    """72, 144 and 1,152 GPUs: 1, 2 and 16 domain racks of 18 compute trays, 9 NVLink switch trays each."""
    built = nvl72(catalog, gpus)
    assert (built.domain_gpus, built.num_domains, built.domain_switches) == (72, racks, trays)
    assert (built.racks.compute_racks, built.racks.servers_per_rack) == (racks, 18)
    lines = {line.catalog_id: line for line in bill_of_materials(built)}
    assert lines["nvlink5-switch-tray"].quantity == trays
    assert lines["nvlink5-switch-tray"].unit_price_usd == 25_000
    assert lines["gb200-nvl72"].quantity == gpus // 4 and lines["gb200"].quantity == gpus
    assert lines["cx7-ndr400"].quantity == gpus   # one scale-out NIC per GPU


def test_a_domain_rack_draws_its_trays_and_switch_trays(catalog):
    """One rack: 18 x (6.47 kW tray + 4 NIC-end modules) + 9 x 0.4 kW switch trays, ~120 kW; the switch trays' 3.6 kW
    a rack reach the IT power too."""
    built = nvl72(catalog, 144)
    module_w = built.parts.nic_transceiver.power_w
    rack_w = 18 * (6_470 + 4 * module_w) + 9 * 400
    assert built.racks.rack_power_w[:2] == (pytest.approx(rack_w), pytest.approx(rack_w))
    assert 120e3 < rack_w < 125e3
    assert built.racks.budget_w == 140e3   # the liquid cooling's densest rack, not facility.rack_power_kw
    fabric_w = built.parts.switch.power_w * built.topology.num_switches
    storage_w = built.parts.storage.unit_power_w * built.storage_units
    optics_w = built.it_power_w - 36 * 6_470 - 18 * 400 - fabric_w - storage_w
    assert 0 <= optics_w < 20e3   # what is left is the optics: the switch trays are counted once


def test_servers_that_do_not_fill_domains_name_the_key(catalog):
    """20 trays are not whole domains of 18: an error naming cluster.num_nodes."""
    with pytest.raises(ConfigError) as error:
        nvl72(catalog, 80)
    assert error.value.key == "cluster.num_nodes" and "NVLink domains of 18 servers (72 GPUs)" in str(error.value)


def test_air_cooling_cannot_take_a_domain_rack(catalog):
    """Air cooling's 40 kW per rack cannot take a ~120 kW NVL72 rack: infeasible, naming facility.cooling."""
    with pytest.raises(InfeasiblePlan) as error:
        nvl72(catalog, 72, 'facility.cooling="air"')
    assert "facility.cooling" in str(error.value) and "40.0 kW" in str(error.value)


def test_lay_out_domains_packs_infrastructure_within_the_facility_budget():
    """Domain racks take one domain each; 30 switches of 1.8 kW still pack under a 20 kW budget, 3 racks."""
    domain = Gear(name="domain", count=4, power_w=130_000, rack_units=27)
    layout = lay_out_domains(domain, 18, [Gear(name="switch", count=30, power_w=1_800, rack_units=1)],
                             budget_w=20_000, cooling_w=140_000, rack_units=48)
    assert (layout.compute_racks, layout.servers_per_rack, layout.infrastructure_racks) == (4, 18, 3)
    assert layout.max_rack_power_w == 130_000 and layout.num_racks == 7


def test_nvl36x2_spreads_each_domain_over_two_racks(catalog):
    """NVL36x2 at 144 GPUs: 2 domains of 72 over 4 racks of 9 trays and 9 of the domain's 18 switch trays, ~62 kW a
    rack; the collective model sees the same 72-GPU domains as NVL72's."""
    from clusterplan.perf.collectives import system_from_design

    built = nvl72(catalog, 144, 'cluster.server="gb200-nvl36x2"')
    assert (built.num_domains, built.domain_switches) == (2, 36)
    assert (built.racks.compute_racks, built.racks.servers_per_rack) == (4, 9)
    rack_w = 9 * (6_470 + 4 * built.parts.nic_transceiver.power_w) + 9 * 400
    assert built.racks.rack_power_w[:4] == (pytest.approx(rack_w),) * 4 and 60e3 < rack_w < 65e3
    lines = {line.catalog_id: line for line in bill_of_materials(built)}
    assert lines["nvlink5-switch-tray"].quantity == 36 and lines["gb200-nvl36x2"].quantity == 36
    assert system_from_design(built) == system_from_design(nvl72(catalog, 144))
