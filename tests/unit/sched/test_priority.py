"""Fair-share priority: the classic factor, decayed usage, options."""

import math

import numpy as np
import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched import Cluster, Multifactor, make_trace, parse_multifactor, simulate
from clusterplan.sched.engine import Jobs
from clusterplan.sched.machine import Machine
from clusterplan.sched.priority import FairShare
from sched_cases import jobs


def policy(trace, **options):
    cluster = Cluster(num_nodes=4, gpus_per_node=1)
    return FairShare(Jobs(trace, cluster), Machine(cluster), priority=Multifactor(**options))


def test_fairshare_factor_is_two_to_minus_usage_over_shares():
    """Users with 3/4 and 1/4 of the usage and equal shares: F = 2^-(0.75/0.5), 2^-(0.25/0.5)."""
    scheduler = policy(jobs((0, 3, 10, 10, 0), (0, 1, 10, 10, 1)), half_life_s=1e12)
    scheduler.started(0, 0.0)
    scheduler.started(1, 0.0)
    factor = scheduler._fairshare_factor(100.0)
    assert factor.tolist() == pytest.approx([2 ** -1.5, 2 ** -0.5])


def test_usage_decays_with_the_half_life():
    """4 GPUs for 100 s, then nothing: after one half-life the usage has halved."""
    scheduler = policy(jobs((0, 4, 100, 100, 0)), half_life_s=1000.0)
    scheduler.started(0, 0.0)
    scheduler.finish(0, 100.0, False)
    charged = scheduler.usage[0]
    assert charged == pytest.approx(4 * 1000 / math.log(2) * (1 - 2 ** -0.1))
    scheduler._charge(0, 1100.0, 0)
    assert scheduler.usage[0] == pytest.approx(charged / 2)


def test_shares_change_the_factor():
    """A user with 3 of 4 shares who used 3/4 of the machine gets F = 2^-1, as does the other."""
    scheduler = policy(jobs((0, 3, 10, 10, 0), (0, 1, 10, 10, 1)), half_life_s=1e12, shares={"0": 3.0})
    scheduler.started(0, 0.0)
    scheduler.started(1, 0.0)
    assert scheduler._fairshare_factor(50.0).tolist() == pytest.approx([0.5, 0.5])


def test_parse_multifactor_options():
    """Weights, durations with units, maps by name; unknown keys and bad factors are config errors."""
    config = parse_multifactor(["age=5", "half_life=2d", "calc_period=60", "partition:gpu=0.5", "share:alice=2",
                                "favor_small=yes"])
    assert (config.weight_age, config.half_life_s, config.calc_period_s, config.favor_small) == (5, 172800, 60, True)
    assert dict(config.partition_factor) == {"gpu": 0.5} and dict(config.shares) == {"alice": 2.0}
    with pytest.raises(ConfigError, match="unknown key"):
        parse_multifactor(["speed=1"])
    with pytest.raises(ConfigError, match=r"partition_factor: factors must be in \[0, 1\]"):
        parse_multifactor(["partition:gpu=2"])


def test_partition_factor_orders_the_queue():
    """Two waiting jobs of one user: the one in the partition with factor 1 goes first."""
    trace = make_trace(name="p", format="test", job_id=[0, 1, 2], submit_s=[0, 1, 2], run_s=[10, 10, 10],
                       estimate_s=[10, 10, 10], gpus=[1, 1, 1], partition=[0, 0, 1], partitions=("cpu", "gpu"))
    schedule = simulate(trace, Cluster(num_nodes=1, gpus_per_node=1), "fairshare",
                        priority=Multifactor(partition_factor={"gpu": 1.0}))
    assert np.array_equal(schedule.start_s, [0, 20, 10])
