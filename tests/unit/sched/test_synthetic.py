"""The synthetic generator: seeded, on target load, modal estimates that never undercut the run."""

import numpy as np
import pytest

from clusterplan.errors import ConfigError
from clusterplan.sched.replay import offered_load
from clusterplan.sched.synthetic import LIMITS_S, Workload, parse_workload, synthetic


def test_same_seed_same_trace_other_seed_other_trace():
    """Two traces from one seed are identical; another seed differs."""
    first, again = (synthetic(Workload(num_jobs=500, seed=3), num_gpus=128) for _ in range(2))
    other = synthetic(Workload(num_jobs=500, seed=4), num_gpus=128)
    assert np.array_equal(first.submit_s, again.submit_s) and np.array_equal(first.gpus, again.gpus)
    assert not np.array_equal(first.run_s, other.run_s)


def test_offered_load_is_on_target_and_estimates_overestimate():
    """Offered load within 5 % of the target; every estimate is a standard limit (or the run) and >= run."""
    trace = synthetic(Workload(num_jobs=20_000, load=0.7, seed=1), num_gpus=128)
    assert offered_load(trace, 128) == pytest.approx(0.7, rel=0.05)
    assert (trace.estimate_s >= trace.run_s).all() and trace.num_truncated == 0
    assert np.isin(trace.estimate_s, LIMITS_S).mean() > 0.99
    assert np.median(trace.estimate_s / trace.run_s) > 2


def test_sizes_above_the_cluster_leave_the_mix():
    """On 8 GPUs no job asks for more than 8."""
    assert synthetic(Workload(num_jobs=2000), num_gpus=8).gpus.max() <= 8


def test_parse_workload_keys_and_errors():
    """synthetic:jobs=..,gpus=1:3/8:1 parses; an unknown key names the known ones."""
    workload = parse_workload("synthetic:jobs=100,load=0.5,seed=9,gpus=1:3/8:1")
    assert (workload.num_jobs, workload.load, workload.seed, dict(workload.gpu_mix)) == (100, 0.5, 9, {1: 3, 8: 1})
    with pytest.raises(ConfigError, match="unknown key; one of jobs, load"):
        parse_workload("synthetic:size=3")
    with pytest.raises(ConfigError, match="load: must be > 0"):
        parse_workload("synthetic:load=0")
