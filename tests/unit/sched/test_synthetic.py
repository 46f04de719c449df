"""The synthetic generator: seeded, on target load, modal estimates that never undercut the run."""

import re

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
    with pytest.raises(ConfigError, match="load: must be a number from 1e-06 to 100, got 0"):
        parse_workload("synthetic:load=0")


@pytest.mark.parametrize("spec, message", [
    ("synthetic:seed=-1", "seed: must be an integer from 0 to 9,223,372,036,854,775,807, got -1"),
    ("synthetic:gpus=1:inf", "gpus: needs GPU counts from 1 to 1,000,000 with finite weights from 0 to 1e+12"),
    ("synthetic:gpus=1:nan", "got 1:nan"),
    ("synthetic:jobs=999999999999", "jobs: must be an integer from 1 to 1,000,000, got 999999999999"),
    ("synthetic:jobs=2000000", "jobs: must be an integer from 1 to 1,000,000, got 2000000"),
    ("synthetic:jobs=1.5", "jobs: must be an integer, got '1.5'"),
    ("synthetic:load=inf", "load: must be a number from 1e-06 to 100, got inf"),
    ("synthetic:sigma=nan", "sigma: must be a number from 0 to 10, got nan"),
    ("synthetic:users=99999999999", "users: must be an integer from 1 to 100,000"),
    ("synthetic:jobs=" + "9" * 5000, "is too long for a number (5,000 characters)"),
])
def test_out_of_range_specs_name_the_field_and_its_range(spec, message):
    """Issue 31: each bad synthetic spec is a ConfigError naming the field and its allowed range, raised before
    anything is drawn (no MemoryError, NaN probabilities or minutes of generation)."""
    with pytest.raises(ConfigError, match=re.escape(message)) as raised:
        parse_workload(spec)
    assert len(str(raised.value)) < 200


def test_the_job_limit_itself_is_accepted():
    """1,000,000 jobs, the documented limit, is a valid spec."""
    assert parse_workload("synthetic:jobs=1000000").num_jobs == 1_000_000
