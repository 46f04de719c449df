"""Invariants of the scheduler on random small traces and clusters: capacity is never exceeded, no job
starts before it arrives, every job finishes, runs are reproducible, FIFO never backfills, and the
backfilling policies keep the reservations they promise."""

from __future__ import annotations

from unittest.mock import patch

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterplan.sched import Cluster, make_trace, simulate
from clusterplan.sched import waiting
from clusterplan.sched.easy import Backfill
from clusterplan.sched.metrics import busy_steps
from clusterplan.sched.synthetic import Workload, synthetic

POLICIES = ("fifo", "easy", "conservative", "fairshare")
SETTINGS = settings(deadline=None, max_examples=100)


@st.composite
def clusters(draw):
    if draw(st.booleans()):
        return Cluster(num_nodes=draw(st.integers(1, 8)), gpus_per_node=1)
    aware = draw(st.booleans())
    return Cluster(num_nodes=draw(st.integers(1, 4)), gpus_per_node=draw(st.sampled_from((2, 4))),
                   nodes_per_leaf=2 if aware else 0, topology_aware=aware)


@st.composite
def cases(draw):
    cluster = draw(clusters())
    n = draw(st.integers(1, 25))
    gpus = draw(st.lists(st.integers(1, cluster.num_gpus), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(1, 50), min_size=n, max_size=n))
    pad = draw(st.lists(st.sampled_from((1.0, 1.0, 1.5, 3.0)), min_size=n, max_size=n))
    trace = make_trace(name="random", format="test", job_id=range(n),
                       submit_s=draw(st.lists(st.integers(0, 120), min_size=n, max_size=n)),
                       run_s=run, estimate_s=[r * p for r, p in zip(run, pad)], gpus=gpus,
                       user=draw(st.lists(st.integers(0, 3), min_size=n, max_size=n)))
    return trace, cluster


@SETTINGS
@given(cases(), st.sampled_from(POLICIES))
def test_never_more_gpus_in_use_than_exist(case, policy):
    """The GPUs held (whole nodes for multi-node jobs) never exceed the cluster at any instant."""
    trace, cluster = case
    schedule = simulate(trace, cluster, policy)
    _, held = busy_steps(schedule, allocated=True)
    assert held.max() <= cluster.num_gpus and held.min() >= 0


@SETTINGS
@given(cases(), st.sampled_from(POLICIES))
def test_no_job_starts_before_it_arrives_and_every_job_finishes(case, policy):
    """start >= submit for all jobs; all start; end = start + run."""
    trace, cluster = case
    schedule = simulate(trace, cluster, policy)
    assert np.isfinite(schedule.start_s).all() and (schedule.start_s >= trace.submit_s).all()
    assert np.array_equal(schedule.end_s, schedule.start_s + trace.run_s)


@SETTINGS
@given(cases())
def test_fifo_never_backfills(case):
    """FIFO starts jobs in submission order and marks none backfilled."""
    trace, cluster = case
    schedule = simulate(trace, cluster, "fifo")
    assert (np.diff(schedule.start_s) >= 0).all() and not schedule.backfilled.any()


@SETTINGS
@given(cases(), st.sampled_from(("easy", "conservative")))
def test_reservations_are_kept(case, policy):
    """EASY's head job and every conservative job start no later than the reservation first promised.
    (Not fair-share: a job that a higher-priority one overtakes loses its reservation, as in SLURM.)"""
    trace, cluster = case
    schedule = simulate(trace, cluster, policy)
    promised = ~np.isnan(schedule.reserved_s)
    assert (schedule.start_s[promised] <= schedule.reserved_s[promised]).all()


@settings(deadline=None, max_examples=15)
@given(st.integers(0, 2**32 - 1), st.sampled_from(POLICIES))
def test_same_seed_same_schedule(seed, policy):
    """A synthetic trace from one seed, simulated twice, gives identical schedules."""
    cluster = Cluster(num_nodes=4, gpus_per_node=8, nodes_per_leaf=2, topology_aware=True)
    runs = [simulate(synthetic(Workload(num_jobs=150, load=0.9, seed=seed), num_gpus=32), cluster, policy)
            for _ in range(2)]
    assert np.array_equal(runs[0].start_s, runs[1].start_s)
    assert np.array_equal(runs[0].backfilled, runs[1].backfilled)


@SETTINGS
@given(cases())
def test_easy_index_equals_the_scan(case):
    """EASY's grouped queue (waiting.py) starts the same jobs at the same times on the same nodes as reading the
    queue one by one (``easy.Backfill``, within its depth)."""
    trace, cluster = case
    scanned = simulate(trace, cluster, Backfill)
    with patch.object(waiting, "SCAN_BELOW", 0):   # the groups even for a short queue
        grouped = simulate(trace, cluster, "easy")
    for schedule in (grouped, simulate(trace, cluster, "easy")):
        for name in ("start_s", "backfilled", "reserved_s", "leaves"):
            assert np.array_equal(getattr(schedule, name), getattr(scanned, name), equal_nan=True), name
