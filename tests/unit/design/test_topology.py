import pytest

from clusterplan.design.topology import fat_tree
from clusterplan.errors import ConfigError


def test_two_tier_non_blocking_hand_count():
    """128 NICs on 64-port switches at 1:1: 4 leaves (32 down, 32 up) and 2 spines."""
    t = fat_tree(num_nodes=16, nics_per_node=8, radix=64)
    assert t.tiers == 2
    assert dict(t.switches) == {"leaf": 4, "spine": 2}
    assert dict(t.links) == {"node-leaf": 128, "leaf-spine": 128}
    assert (t.ports_used, t.ports_available) == (384, 384)
    assert t.bisection_fraction == 1.0


def test_one_switch_only_while_one_leaf_takes_every_nic_unless_asked():
    """Automatic tiers: 64 NICs fit one leaf's 64 down-ports (one switch, its uplinks free to grow); 128 NICs take
    2 leaves and 1 spine, the reference's two-level fat-tree. tiers=1 puts all 128 on one switch."""
    assert dict(fat_tree(num_nodes=8, nics_per_node=8, radix=128).switches) == {"switch": 1}
    auto = fat_tree(num_nodes=16, nics_per_node=8, radix=128)
    assert auto == fat_tree(num_nodes=16, nics_per_node=8, radix=128, tiers=2)
    assert dict(auto.switches) == {"leaf": 2, "spine": 1}
    assert dict(auto.links) == {"node-leaf": 128, "leaf-spine": 128}
    assert dict(fat_tree(num_nodes=16, nics_per_node=8, radix=128, tiers=1).switches) == {"switch": 1}
    wide = fat_tree(num_nodes=16, nics_per_node=8, radix=256, tiers=2)
    assert dict(wide.switches) == {"leaf": 2, "spine": 1}, "two tiers never means a single leaf"


def test_two_to_one_oversubscription_hand_count():
    """At 2:1 a 64-port leaf takes 42 NICs; 4 leaves of 32 NICs wire 16 uplinks each; 1 spine."""
    t = fat_tree(num_nodes=16, nics_per_node=8, radix=64, oversubscription=2.0)
    assert dict(t.switches) == {"leaf": 4, "spine": 1}
    assert dict(t.links) == {"node-leaf": 128, "leaf-spine": 64}
    assert t.bisection_fraction == 0.5


def test_classic_k4_fat_tree_has_three_tiers():
    """The k=4 fat-tree of Al-Fares et al.: 16 hosts, 8 edge, 8 aggregation, 4 core (5k^2/4 = 20 switches)."""
    t = fat_tree(num_nodes=16, nics_per_node=1, radix=4)
    assert t.tiers == 3
    assert dict(t.switches) == {"leaf": 8, "aggregation": 8, "core": 4}
    assert dict(t.links) == {"node-leaf": 16, "leaf-aggregation": 16, "aggregation-core": 16}
    assert t.ports_used == t.ports_available == 80


def test_rail_optimized_gives_each_rail_its_own_leaves():
    """16 nodes x 8 rails on 64-port switches: 8 rail leaves of 16 NICs, 128 uplinks, 2 spines."""
    t = fat_tree(num_nodes=16, nics_per_node=8, radix=64, rail_optimized=True)
    assert t.kind == "rail-optimized"
    assert dict(t.switches) == {"leaf": 8, "spine": 2}
    assert dict(t.links) == {"node-leaf": 128, "leaf-spine": 128}


def test_uneven_leaves_keep_the_ratio():
    """100 NICs at 1:1 on 64-port switches: 4 leaves of 25, 25 uplinks each, 100 uplinks, 2 spines."""
    t = fat_tree(num_nodes=100, nics_per_node=1, radix=64)
    assert dict(t.switches) == {"leaf": 4, "spine": 2}
    assert dict(t.links)["leaf-spine"] == 100


@pytest.mark.parametrize("kwargs, key", [
    (dict(num_nodes=16, nics_per_node=8, radix=64, tiers=1), "network.tiers"),
    (dict(num_nodes=1024, nics_per_node=8, radix=64, tiers=2), "network.tiers"),
    (dict(num_nodes=100, nics_per_node=1, radix=4), "cluster.num_nodes"),
])
def test_impossible_fabrics_name_the_key(kwargs, key):
    """Too few tiers (asked or possible) is a ConfigError naming the key to change."""
    with pytest.raises(ConfigError) as error:
        fat_tree(**kwargs)
    assert error.value.key == key
