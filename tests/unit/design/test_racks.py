import random

import pytest

from clusterplan.design.racks import Gear, lay_out
from clusterplan.errors import InfeasiblePlan

SERVER = Gear(name="server", count=16, power_w=10_200, rack_units=8)
TINY = Gear(name="server", count=1, power_w=1, rack_units=1)   # one compute rack, whatever the budget


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


def test_infrastructure_kinds_fill_the_room_earlier_kinds_left():
    """10 kW racks: 5 blocks of 2.5 kW make a full rack and one at 2.5 kW; 10 switches of 1 kW then skip the
    full rack, put 7 in the second (9.5 kW) and 3 in a new one."""
    layout = lay_out(TINY, [Gear(name="switch", count=10, power_w=1_000, rack_units=1),
                              Gear(name="block", count=5, power_w=2_500, rack_units=2)], budget_w=10_000, rack_units=48)
    assert layout.rack_power_w[layout.compute_racks:] == (10_000, 9_500, 3_000)


def test_the_issue_s_storage_packs_by_racks_not_blocks():
    """Issue 31: 327,680 blocks of 2.5 kW and 2U in 40 kW, 48U racks are 16 to a rack, 20,480 full racks (the
    box-by-box packing took over ten minutes over this; the runs of identical racks take a moment)."""
    layout = lay_out(SERVER, [Gear(name="block", count=327_680, power_w=2_500, rack_units=2)],
                     budget_w=40_000, rack_units=48)
    assert layout.infrastructure_racks == 20_480 and set(layout.rack_power_w[layout.compute_racks:]) == {40_000}


def _first_fit(gear, *, budget_w, rack_units):
    """The packing as it was: every box in turn into the first rack it fits, by decreasing power."""
    racks = []
    for power_w, units, _ in sorted((g.power_w, g.rack_units, g.name) for g in gear for _ in range(g.count))[::-1]:
        rack = next((r for r in racks if r[0] + power_w <= budget_w and r[1] + units <= rack_units), None)
        if rack is None:
            racks.append([power_w, units])
        else:
            rack[0], rack[1] = rack[0] + power_w, rack[1] + units
    return tuple(rack[0] for rack in racks)


def test_runs_of_identical_racks_pack_as_box_by_box_first_fit():
    """2,000 random mixes of gear (repeated kinds, zero-power and zero-unit boxes, odd budgets): the same racks, to
    the last bit of each rack's draw, as first-fit one box at a time."""
    draw = random.Random(31)
    for _ in range(2_000):
        gear = [Gear(name=draw.choice("abc"), count=draw.randint(0, 40), rack_units=draw.randint(0, 6),
                     power_w=draw.choice([0, 0.1, 0.3, 1_700.7, 2_500, draw.uniform(0, 9_000)]))
                for _ in range(draw.randint(0, 5))]
        budget_w, rack_units = draw.choice([9_000, 10_000.3, 40_000]), draw.randint(6, 48)
        layout = lay_out(TINY, gear, budget_w=budget_w, rack_units=rack_units)
        assert layout.rack_power_w[1:] == _first_fit(gear, budget_w=budget_w, rack_units=rack_units)
