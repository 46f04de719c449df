import pytest

from clusterplan.design.racks import Gear, lay_out
from clusterplan.errors import InfeasiblePlan

SERVER = Gear(name="server", count=16, power_w=10_200, rack_units=8)


def test_power_limits_servers_per_rack():
    """50 kW / 10.2 kW = 4 servers per rack (space allows 6): 4 compute racks."""
    layout = lay_out(SERVER, [], budget_w=50_000, rack_units=48)
    assert (layout.servers_per_rack, layout.compute_racks, layout.infrastructure_racks) == (4, 4, 0)
    assert layout.max_rack_power_w == 40_800


def test_space_limits_servers_per_rack():
    """At 100 kW the 48U rack holds 6 x 8U servers: 3 racks."""
    layout = lay_out(SERVER, [], budget_w=100_000, rack_units=48)
    assert (layout.servers_per_rack, layout.compute_racks) == (6, 3)


def test_infrastructure_packs_first_fit_under_budget():
    """30 switches of 1.8 kW under 20 kW: 11 per rack, 3 racks, heaviest 19.8 kW."""
    layout = lay_out(SERVER, [Gear(name="switch", count=30, power_w=1_800, rack_units=1)],
                     budget_w=20_000, rack_units=48)
    assert layout.infrastructure_racks == 3
    assert layout.max_rack_power_w == pytest.approx(19_800)


def test_server_over_budget_is_infeasible():
    """A 10.2 kW server cannot go in a 5 kW rack."""
    with pytest.raises(InfeasiblePlan, match="needs 10.2 kW"):
        lay_out(SERVER, [], budget_w=5_000, rack_units=48)


def test_every_rack_has_its_power():
    """18 servers at 4 per rack: four full racks and one with 2; switches after; the heaviest is the max."""
    layout = lay_out(Gear(name="server", count=18, power_w=10_000, rack_units=8),
                     [Gear(name="switch", count=3, power_w=2_000, rack_units=1)], budget_w=45_000, rack_units=48)
    assert layout.rack_power_w == (40_000, 40_000, 40_000, 40_000, 20_000, 6_000)
    assert layout.max_rack_power_w == max(layout.rack_power_w)
    assert len(layout.rack_power_w) == layout.num_racks
